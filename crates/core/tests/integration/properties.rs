//! Property tests over random flow sets and operation sequences, for every
//! scheduler in the registry: packet conservation, per-flow FIFO order,
//! work conservation and counter consistency, with flows added, removed and
//! reconfigured while backlogged. Plus scheduler-specific oracles: a
//! brute-force WF2Q+ model and DRR's per-round service bound.

use fairway_core::registry::SchedKind;
use fairway_core::vtime::{vt_ge, vt_len, vt_max};
use fairway_core::*;
use proptest::prelude::*;
use std::collections::{BTreeMap, VecDeque};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pkt {
    seq: u64,
    len: u32,
}
impl Packet for Pkt {
    fn len(&self) -> u32 {
        self.len
    }
}

#[derive(Debug, Clone)]
enum Op {
    Enqueue {
        flow: u32,
        len: u32,
    },
    Dequeue,
    Peek,
    Remove {
        flow: u32,
    },
    Add {
        flow: u32,
        weight: u32,
        max_len: u32,
    },
    Reconfigure {
        flow: u32,
        weight: u32,
        max_len: u32,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0u32..10, 1u32..9001).prop_map(|(flow, len)| Op::Enqueue { flow, len }),
        6 => Just(Op::Dequeue),
        1 => Just(Op::Peek),
        1 => (0u32..10).prop_map(|flow| Op::Remove { flow }),
        1 => (0u32..10, 1u32..1025, 64u32..9001).prop_map(|(flow, weight, max_len)| Op::Add { flow, weight, max_len }),
        1 => (0u32..10, 1u32..1025, 64u32..9001).prop_map(|(flow, weight, max_len)| Op::Reconfigure { flow, weight, max_len }),
    ]
}

/// Runs `ops` on a scheduler and on a model of per-flow FIFO queues.
fn check_model(kind: SchedKind, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut s = SchedSpec::new(kind).build::<Pkt>(Capacity::new(10, 64), Limits::DEFAULT);
    let mut model: BTreeMap<u32, (FlowConfig, VecDeque<Pkt>)> = BTreeMap::new();
    let mut seq = 0;
    let mut peeked: Option<(FlowId, Pkt)> = None;
    for op in ops {
        match *op {
            Op::Enqueue { flow, len } => {
                seq += 1;
                let p = Pkt { seq, len };
                let total: usize = model.values().map(|m| m.1.len()).sum();
                match (s.enqueue(FlowId(flow), p), model.get_mut(&flow)) {
                    (Ok(()), Some((cfg, q))) => {
                        prop_assert!(len <= cfg.max_len && total < 64);
                        q.push_back(p);
                    }
                    (Err(e), m) => {
                        prop_assert_eq!(e.packet, p, "the packet must come back");
                        let expected = match m {
                            None => EnqueueErrorKind::UnknownFlow(FlowId(flow)),
                            Some((cfg, _)) if len > cfg.max_len => {
                                EnqueueErrorKind::PacketTooLong {
                                    len,
                                    max_len: cfg.max_len,
                                }
                            }
                            Some(_) => EnqueueErrorKind::Full { capacity: 64 },
                        };
                        prop_assert_eq!(e.kind, expected);
                    }
                    (Ok(()), None) => prop_assert!(false, "enqueue on unknown flow accepted"),
                }
                peeked = None;
            }
            Op::Dequeue => {
                let backlogged = model.values().any(|m| !m.1.is_empty());
                match s.dequeue() {
                    Some(d) => {
                        let q = &mut model
                            .get_mut(&d.flow.0)
                            .expect("dequeued from unknown flow")
                            .1;
                        prop_assert_eq!(q.pop_front(), Some(d.packet), "per-flow FIFO order");
                        if let Some(p) = peeked.take() {
                            prop_assert_eq!(p, (d.flow, d.packet), "peek must predict dequeue");
                        }
                    }
                    None => prop_assert!(!backlogged, "work conservation: backlog but no packet"),
                }
            }
            Op::Peek => {
                peeked = s.peek().map(|(f, p)| (f, *p));
                prop_assert_eq!(peeked.is_some(), model.values().any(|m| !m.1.is_empty()));
            }
            Op::Remove { flow } => {
                match (s.remove_flow(FlowId(flow)), model.remove(&flow)) {
                    (Ok(pkts), Some((_, q))) => prop_assert_eq!(pkts, Vec::from(q)),
                    (Err(e), None) => prop_assert_eq!(e, ConfigError::UnknownFlow(FlowId(flow))),
                    (r, m) => prop_assert!(false, "remove mismatch {:?} {:?}", r, m),
                }
                peeked = None;
            }
            Op::Add {
                flow,
                weight,
                max_len,
            } => {
                let cfg = FlowConfig::new(weight, max_len);
                match s.add_flow(FlowId(flow), cfg) {
                    Ok(()) => {
                        prop_assert!(!model.contains_key(&flow));
                        model.insert(flow, (cfg, VecDeque::new()));
                    }
                    Err(e) => prop_assert_eq!(e, ConfigError::FlowExists(FlowId(flow))),
                }
                peeked = None;
            }
            Op::Reconfigure {
                flow,
                weight,
                max_len,
            } => {
                let cfg = FlowConfig::new(weight, max_len);
                let r = s.reconfigure_flow(FlowId(flow), cfg);
                match model.get_mut(&flow) {
                    None => prop_assert_eq!(r, Err(ConfigError::UnknownFlow(FlowId(flow)))),
                    Some((old, q)) => {
                        let longest = q.iter().map(|p| p.len).max().unwrap_or(0);
                        if longest > max_len {
                            let refused = matches!(r, Err(ConfigError::QueuedPacketTooLong { .. }));
                            prop_assert!(refused, "{:?}", r);
                        } else {
                            prop_assert_eq!(r, Ok(()));
                            *old = cfg;
                        }
                    }
                }
                peeked = None;
            }
        }
        // Counters always agree with the model.
        let (pk, by) = model
            .values()
            .flat_map(|m| m.1.iter())
            .fold((0u64, 0u64), |(a, b), p| (a + 1, b + p.len as u64));
        prop_assert_eq!(
            s.backlog(),
            Backlog {
                packets: pk,
                bytes: by
            }
        );
        for (f, (cfg, q)) in &model {
            prop_assert_eq!(s.flow_config(FlowId(*f)), Some(*cfg));
            prop_assert_eq!(
                s.flow_backlog(FlowId(*f)).map(|b| b.packets),
                Some(q.len() as u64)
            );
        }
    }
    // Drain: everything left comes out exactly once, in per-flow order.
    while let Some(d) = s.dequeue() {
        let q = &mut model.get_mut(&d.flow.0).expect("unknown flow").1;
        prop_assert_eq!(q.pop_front(), Some(d.packet));
    }
    prop_assert!(model.values().all(|m| m.1.is_empty()), "packets lost");
    Ok(())
}

fn ops_with_initial_flows() -> impl Strategy<Value = Vec<Op>> {
    let adds = proptest::collection::vec((1u32..1025, 64u32..9001), 1..10).prop_map(|v| {
        v.into_iter()
            .enumerate()
            .map(|(i, (weight, max_len))| Op::Add {
                flow: i as u32,
                weight,
                max_len,
            })
            .collect::<Vec<_>>()
    });
    (adds, proptest::collection::vec(op(), 0..400)).prop_map(|(mut a, b)| {
        a.extend(b);
        a
    })
}

proptest! {
    // PROPTEST_CASES (the long runs of scripts/long-random.sh) overrides the CI-sized default.
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(128), ..ProptestConfig::default() })]

    #[test]
    fn every_scheduler_conserves_packets_and_order(ops in ops_with_initial_flows()) {
        for &kind in SchedKind::ALL {
            check_model(kind, &ops)?;
        }
    }

    /// WF2Q+ against a brute-force model of the QFQ+ paper App. A.2 (linear
    /// scans, no heaps): identical dequeue order.
    #[test]
    fn wf2q_plus_matches_a_brute_force_model(
        flows in proptest::collection::vec((1u32..1025, 64u32..9001), 1..12),
        ops in proptest::collection::vec((any::<bool>(), 0usize..12, 0.0f64..1.0), 1..600),
    ) {
        let n = flows.len();
        let cap = Capacity::new(n as u32, 10_000);
        let mut s: Wf2qPlus<Pkt> = Wf2qPlus::new(cap);
        let wsum: u64 = flows.iter().map(|f| f.0 as u64).sum();
        for (i, &(w, l)) in flows.iter().enumerate() {
            s.add_flow(FlowId(i as u32), FlowConfig::new(w, l)).unwrap();
        }
        // model state
        let mut q: Vec<VecDeque<Pkt>> = vec![VecDeque::new(); n];
        let (mut st, mut fin) = (vec![0u64; n], vec![0u64; n]);
        let mut v = 0u64;
        let mut seq = 0;
        for (enq, f, x) in ops {
            let f = f % n;
            if enq {
                seq += 1;
                let len = 1 + (x * (flows[f].1 - 1) as f64) as u32;
                let p = Pkt { seq, len };
                s.enqueue(FlowId(f as u32), p).unwrap();
                if q[f].is_empty() {
                    st[f] = vt_max(v, fin[f]);
                    fin[f] = st[f] + vt_len(len, flows[f].0 as u64);
                }
                q[f].push_back(p);
            } else {
                let backlogged: Vec<usize> = (0..n).filter(|&i| !q[i].is_empty()).collect();
                if backlogged.is_empty() {
                    prop_assert!(s.dequeue().is_none());
                    continue;
                }
                let min_s = backlogged.iter().map(|&i| st[i]).min().unwrap();
                v = v.max(min_s);
                let pick = backlogged
                    .iter()
                    .copied()
                    .filter(|&i| vt_ge(v, st[i]))
                    .min_by_key(|&i| (fin[i], i))
                    .unwrap();
                let p = q[pick].pop_front().unwrap();
                v += vt_len(p.len, wsum);
                if let Some(h) = q[pick].front() {
                    st[pick] = fin[pick];
                    fin[pick] = st[pick] + vt_len(h.len, flows[pick].0 as u64);
                }
                let d = s.dequeue().unwrap();
                prop_assert_eq!((d.flow.index(), d.packet), (pick, p));
            }
        }
    }

    /// WF2Q+ against the same brute-force model kept in 128-bit virtual
    /// time, which never wraps, while the scheduler's 64-bit clock is moved
    /// across the wrap point (and around it, several times) whenever the
    /// system is empty: identical dequeue order, so a flow's stale finish
    /// time is never misread however long it stayed idle.
    #[test]
    fn wf2q_plus_matches_a_non_wrapping_model_across_clock_wraps(
        flows in proptest::collection::vec((1u32..1025, 64u32..9001), 1..8),
        ops in proptest::collection::vec((0u8..10, 0usize..8, 0.0f64..1.0, any::<u64>()), 1..600),
    ) {
        let n = flows.len();
        let mut s: Wf2qPlus<Pkt> = Wf2qPlus::new(Capacity::new(n as u32, 10_000));
        let wsum: u64 = flows.iter().map(|f| f.0 as u64).sum();
        for (i, &(w, l)) in flows.iter().enumerate() {
            s.add_flow(FlowId(i as u32), FlowConfig::new(w, l)).unwrap();
        }
        let vlen = |len: u32, w: u64| u128::from(vt_len(len, w));
        let mut q: Vec<VecDeque<Pkt>> = vec![VecDeque::new(); n];
        let (mut st, mut fin) = (vec![0u128; n], vec![0u128; n]);
        let mut v = 0u128;
        let mut seq = 0;
        for (what, f, x, delta) in ops {
            let f = f % n;
            if what == 0 {
                // Warp, only possible (and only tried) when nothing is queued.
                let empty = q.iter().all(|q| q.is_empty());
                prop_assert_eq!(s.warp_idle_clock(delta), empty);
                if empty {
                    v += u128::from(delta);
                }
            } else if what < 5 {
                seq += 1;
                let len = 1 + (x * (flows[f].1 - 1) as f64) as u32;
                let p = Pkt { seq, len };
                s.enqueue(FlowId(f as u32), p).unwrap();
                if q[f].is_empty() {
                    st[f] = v.max(fin[f]);
                    fin[f] = st[f] + vlen(len, flows[f].0 as u64);
                }
                q[f].push_back(p);
            } else {
                let backlogged: Vec<usize> = (0..n).filter(|&i| !q[i].is_empty()).collect();
                if backlogged.is_empty() {
                    prop_assert!(s.dequeue().is_none());
                    continue;
                }
                let min_s = backlogged.iter().map(|&i| st[i]).min().unwrap();
                v = v.max(min_s);
                let pick = backlogged
                    .iter()
                    .copied()
                    .filter(|&i| v >= st[i])
                    .min_by_key(|&i| (fin[i], i))
                    .unwrap();
                let p = q[pick].pop_front().unwrap();
                v += vlen(p.len, wsum);
                if let Some(h) = q[pick].front() {
                    st[pick] = fin[pick];
                    fin[pick] = st[pick] + vlen(h.len, flows[pick].0 as u64);
                }
                let d = s.dequeue().unwrap();
                prop_assert_eq!((d.flow.index(), d.packet), (pick, p));
                prop_assert_eq!(s.virtual_time(), v as u64, "V modulo 2^64");
            }
        }
    }

    /// DRR: while a flow stays backlogged, each of its turns sends at most
    /// `quantum + max_len - 1` bytes (Shreedhar & Varghese, Lemma 1), and
    /// backlogged flows are visited round robin.
    #[test]
    fn drr_turns_respect_the_quantum_bound(
        flows in proptest::collection::vec((1u32..16, 64u32..9001), 2..8),
        lens in proptest::collection::vec(0.0f64..1.0, 200..800),
    ) {
        let n = flows.len();
        let mut s: Drr<Pkt> = Drr::new(Capacity::new(n as u32, 10_000));
        for (i, &(w, l)) in flows.iter().enumerate() {
            s.add_flow(FlowId(i as u32), FlowConfig::new(w, l)).unwrap();
        }
        for (k, x) in lens.iter().enumerate() {
            let f = k % n;
            let len = 1 + (x * (flows[f].1 - 1) as f64) as u32;
            s.enqueue(FlowId(f as u32), Pkt { seq: k as u64, len }).unwrap();
        }
        // A run of consecutive dequeues from one flow is exactly one turn when
        // other flows were backlogged as it began (nothing is enqueued here).
        let mut turn_flow = None;
        let mut turn_bytes = 0u64;
        let mut checked = false;
        while let Some(next) = s.peek().map(|(f, _)| f) {
            if turn_flow != Some(next) {
                let others = s.backlog().packets - s.flow_backlog(next).unwrap().packets;
                turn_flow = Some(next);
                turn_bytes = 0;
                checked = others > 0;
            }
            let d = s.dequeue().unwrap();
            prop_assert_eq!(d.flow, next);
            turn_bytes += d.packet.len as u64;
            let i = d.flow.index();
            let bound = s.quantum(d.flow).unwrap() + flows[i].1 as u64 - 1;
            prop_assert!(!checked || turn_bytes <= bound, "flow {} sent {} > {}", i, turn_bytes, bound);
        }
    }
}
