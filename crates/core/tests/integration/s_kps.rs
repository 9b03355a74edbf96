//! S-KPS checked like the registry schedulers (`properties.rs`): packet
//! conservation, per-flow FIFO order, work conservation, peek predicting
//! dequeue, typed errors handing the packet back, and counters, with flows
//! added, removed and reconfigured while backlogged; plus its own
//! bookkeeping invariants after every operation; a brute-force model of
//! its policy (linear scans, grids by division: every decision, `V` and the
//! exact timestamps must agree; a wrong model is shown to fail); its
//! timestamp-error bounds (the QFQ paper §5: `S − Ŝ ≤ 4σ_i`,
//! `F̂ − F ≤ 2σ_i`, checked through the served order against exact virtual
//! times), and a flow returning after the clock wrapped. Its service bounds against the fluid reference are in
//! `crates/eval/tests/integration/s_kps_bounds.rs`.

use crate::common::Pkt;
use fairway_core::s_kps::SKps;
use fairway_core::*;
use proptest::prelude::*;
use std::collections::{BTreeMap, VecDeque};

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

type Model = BTreeMap<u32, (FlowConfig, VecDeque<Pkt>)>;

/// Runs `ops` on S-KPS and on a model of per-flow FIFO queues.
fn check_model(ops: &[Op]) -> Result<(), TestCaseError> {
    let mut s: SKps<Pkt> = SKps::new(Capacity::new(10, 64));
    let mut model: Model = BTreeMap::new();
    let mut id = 0;
    let mut peeked: Option<(FlowId, Pkt)> = None;
    for op in ops {
        match *op {
            Op::Enqueue { flow, len } => {
                id += 1;
                let p = Pkt { id, len };
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
        prop_assert_eq!(s.check_invariants(), Ok(()), "after {:?}", op);
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
    while let Some(d) = s.dequeue() {
        let q = &mut model.get_mut(&d.flow.0).expect("unknown flow").1;
        prop_assert_eq!(q.pop_front(), Some(d.packet));
    }
    prop_assert!(model.values().all(|m| m.1.is_empty()), "packets lost");
    prop_assert_eq!(s.check_invariants(), Ok(()));
    Ok(())
}

/// Serves a backlog and checks, at every decision, the approximation S-KPS
/// is allowed (the QFQ paper §5): the served flow's exact start is at most
/// `4σ_i` ahead of `V` (`S − Ŝ ≤ 4σ_i`, eligibility by `Ŝ ≤ V`), and no
/// eligible flow (exact `S ≤ V`) had a finish time more than `2σ_i + 2σ_j`
/// below the served one's (both rounded up by less than `2σ`).
/// `slack` widens the allowance; a negative slack must make it fail.
fn served_within_rounding(flows: &[(u32, u32)], lens: &[u32], slack: i64) -> Result<(), String> {
    let mut s: SKps<Pkt> = SKps::new(Capacity::new(flows.len() as u32, 4096));
    for (i, &(w, l)) in flows.iter().enumerate() {
        s.add_flow(FlowId(i as u32), FlowConfig::new(w, l)).unwrap();
    }
    let mut id = 0;
    for round in 0..20 {
        for (i, &(_, l)) in flows.iter().enumerate() {
            id += 1;
            let len = lens[(id as usize + round) % lens.len()].min(l);
            s.enqueue(FlowId(i as u32), Pkt { id, len }).unwrap();
        }
    }
    let sigmas: Vec<i64> = (0..flows.len() as u32)
        .map(|f| 1i64 << s.stratum(FlowId(f)).unwrap())
        .collect();
    let sigma = |f: u32| sigmas[f as usize];
    while !s.is_empty() {
        let (flow, _) = s.peek().map(|(f, p)| (f, *p)).unwrap();
        let v = s.virtual_time() as i64;
        let (start, finish) = s.flow_times(flow).unwrap();
        let si = sigma(flow.0);
        if start as i64 - v > 4 * si + slack {
            return Err(format!(
                "flow {flow} served {} units early",
                start as i64 - v
            ));
        }
        for j in 0..flows.len() as u32 {
            if j == flow.0 || s.flow_backlog(FlowId(j)).unwrap().packets == 0 {
                continue;
            }
            let (sj, fj) = s.flow_times(FlowId(j)).unwrap();
            if (sj as i64) <= v && (finish as i64) - (fj as i64) > 2 * si + 2 * sigma(j) + slack {
                return Err(format!(
                    "flow {flow} (F={finish}) served before eligible flow {j} (F={fj})"
                ));
            }
        }
        let d = s.dequeue().unwrap();
        assert_eq!(d.flow, flow, "peek predicts dequeue");
    }
    Ok(())
}

proptest! {
    // PROPTEST_CASES (the slow tier's long runs, scripts/test-slow) overrides the fast tier's default.
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(128), ..ProptestConfig::default() })]

    #[test]
    fn s_kps_conserves_packets_order_and_counters(ops in ops_with_initial_flows()) {
        check_model(&ops)?;
    }

    #[test]
    fn s_kps_serves_within_its_rounding(
        flows in proptest::collection::vec((1u32..1025, 64u32..9001), 1..12),
        lens in proptest::collection::vec(1u32..9001, 1..8),
    ) {
        prop_assert_eq!(served_within_rounding(&flows, &lens, 0), Ok(()));
    }
}

/// The rounding check can fail: with the allowance shrunk below the
/// rounding S-KPS actually does, a skewed flow set trips it.
#[test]
fn the_rounding_check_can_fail() {
    let flows = [(1000, 1500), (1, 1500), (7, 64), (300, 9000)];
    let lens = [1500, 64, 700];
    assert_eq!(served_within_rounding(&flows, &lens, 0), Ok(()));
    let shrunk = -(1i64 << 40);
    assert!(served_within_rounding(&flows, &lens, shrunk).is_err());
}

/// Typed errors for out-of-range configurations, nothing changed.
#[test]
fn bad_configurations_are_rejected() {
    let mut s: SKps<u32> = SKps::new(Capacity::new(2, 4));
    assert!(matches!(
        s.add_flow(FlowId(0), FlowConfig::new(0, 100)),
        Err(ConfigError::InvalidWeight { .. })
    ));
    assert!(matches!(
        s.add_flow(FlowId(0), FlowConfig::new(1, (1 << 16) + 1)),
        Err(ConfigError::InvalidMaxLen { .. })
    ));
    assert!(matches!(
        s.add_flow(FlowId(5), FlowConfig::new(1, 100)),
        Err(ConfigError::FlowIdOutOfRange { .. })
    ));
    assert_eq!(s.num_configured(), 0);
}

trait Configured {
    fn num_configured(&self) -> u32;
}
impl<P: Packet> Configured for SKps<P> {
    fn num_configured(&self) -> u32 {
        // Every id a test here uses is below 64.
        (0..64)
            .filter(|&i| self.flow_config(FlowId(i)).is_some())
            .count() as u32
    }
}

/// A flow returning after `V` wrapped around `u64` is served at once, not
/// after the other flow's backlog (its stale finish time is behind).
#[test]
fn a_flow_returning_after_the_clock_wrapped_is_served_at_once() {
    for warp in [1u64 << 62, 1 << 63, u64::MAX - (1 << 40)] {
        let mut s: SKps<Pkt> = SKps::new(Capacity::new(3, 4096));
        s.add_flow(FlowId(0), FlowConfig::new(1, 1 << 16)).unwrap();
        for id in 0..3 {
            s.enqueue(FlowId(0), Pkt { id, len: 1 << 16 }).unwrap();
        }
        while s.dequeue().is_some() {}
        assert!(s.warp_idle_clock(warp));
        s.add_flow(FlowId(1), FlowConfig::new(1, 1 << 16)).unwrap();
        for id in 0..100 {
            s.enqueue(FlowId(1), Pkt { id, len: 1 << 16 }).unwrap();
        }
        for id in 0..4 {
            s.enqueue(FlowId(0), Pkt { id, len: 1 << 16 }).unwrap();
        }
        let first: Vec<u32> = (0..8).map(|_| s.dequeue().unwrap().flow.0).collect();
        let zeros = first.iter().filter(|&&f| f == 0).count();
        assert!(zeros >= 3, "warp {warp}: flow 0 waited: {first:?}");
        assert_eq!(s.slot_clamps(), 0);
    }
}

/// Equal flows share the link equally over a long backlog, and a flow with
/// twice the weight gets twice the packets (within a few packets).
#[test]
fn shares_follow_the_weights() {
    let mut s: SKps<Pkt> = SKps::new(Capacity::new(3, 8192));
    for (f, w) in [(0u32, 1u32), (1, 1), (2, 2)] {
        s.add_flow(FlowId(f), FlowConfig::new(w, 1500)).unwrap();
        for id in 0..2000 {
            s.enqueue(FlowId(f), Pkt { id, len: 1500 }).unwrap();
        }
    }
    let mut count = [0i64; 3];
    for _ in 0..2000 {
        count[s.dequeue().unwrap().flow.index()] += 1;
    }
    assert!((count[0] - 500).abs() <= 3, "{count:?}");
    assert!((count[1] - 500).abs() <= 3, "{count:?}");
    assert!((count[2] - 1000).abs() <= 3, "{count:?}");
}

/// A brute-force model of the reconstructed policy (module doc of
/// `s_kps`), written independently of the wheels: linear scans over the
/// flows, grids by division. Each dequeue must serve a flow with
/// `Ŝ ≤ V` whose `F̂` is the smallest among such flows, and the exact
/// `S`, `F` and `V` must agree with the scheduler's.
struct PolicyModel {
    /// (weight, stratum, S, F, queued lengths) per flow.
    flows: Vec<(u64, u32, u64, u64, VecDeque<u32>)>,
    v: u64,
    weight_sum: u64,
    /// Deliberately wrong variant: order by exact `F` instead of `F̂`.
    exact_finish: bool,
}

impl PolicyModel {
    fn vlen(len: u32, w: u64) -> u64 {
        (u64::from(len) << 24) / w
    }
    fn stratum(max_len: u32, w: u64) -> u32 {
        let units = Self::vlen(max_len, w);
        let mut i = 0;
        while (1u64 << i) < units {
            i += 1;
        }
        i
    }
    /// May be negative (below the first grid point), hence `i128`.
    fn s_hat(t: u64, i: u32) -> i128 {
        let m = i128::from(t >> i);
        if m % 2 == 1 {
            m << i
        } else {
            (m - 1) << i
        }
    }
    fn f_hat(t: u64, i: u32) -> u64 {
        let m = t.div_ceil(1 << i);
        if m % 2 == 1 {
            m << i
        } else {
            (m + 1) << i
        }
    }
    fn enqueue(&mut self, f: usize, len: u32) {
        let v = self.v;
        let fl = &mut self.flows[f];
        if fl.4.is_empty() {
            fl.2 = fl.3.max(v);
            fl.3 = fl.2 + Self::vlen(len, fl.0);
        }
        fl.4.push_back(len);
    }
    /// The set of flows the next dequeue may serve.
    fn candidates(&mut self) -> Vec<usize> {
        let backlogged: Vec<usize> = (0..self.flows.len())
            .filter(|&f| !self.flows[f].4.is_empty())
            .collect();
        let eligible =
            |m: &Self, f: usize| Self::s_hat(m.flows[f].2, m.flows[f].1) <= i128::from(m.v);
        if !backlogged.iter().any(|&f| eligible(self, f)) {
            if let Some(min) = backlogged
                .iter()
                .map(|&f| Self::s_hat(self.flows[f].2, self.flows[f].1))
                .min()
            {
                self.v = self.v.max(min as u64);
            }
        }
        let el: Vec<usize> = backlogged
            .into_iter()
            .filter(|&f| eligible(self, f))
            .collect();
        let key = |f: usize| {
            if self.exact_finish {
                self.flows[f].3
            } else {
                Self::f_hat(self.flows[f].3, self.flows[f].1)
            }
        };
        let best = el.iter().map(|&f| key(f)).min();
        el.into_iter().filter(|&f| Some(key(f)) == best).collect()
    }
    fn served(&mut self, f: usize) {
        let len = self.flows[f].4.pop_front().unwrap();
        self.v += Self::vlen(len, self.weight_sum);
        let fl = &mut self.flows[f];
        if let Some(&next) = fl.4.front() {
            fl.2 = fl.3;
            fl.3 = fl.2 + Self::vlen(next, fl.0);
        }
    }
}

/// Runs `ops` (enqueue on flow, or dequeue) on S-KPS and on the model;
/// `Ok(true)` if every decision was checked, `Ok(false)` if the check
/// stopped at a window clamp (then the order is approximate by design).
fn check_policy(
    flows: &[(u32, u32)],
    ops: &[(u32, u32, u8)],
    model_uses_exact_finish: bool,
) -> Result<bool, String> {
    let mut s: SKps<Pkt> = SKps::new(Capacity::new(flows.len() as u32, 4096));
    let mut m = PolicyModel {
        flows: Vec::new(),
        v: 0,
        weight_sum: 0,
        exact_finish: model_uses_exact_finish,
    };
    for (i, &(w, l)) in flows.iter().enumerate() {
        s.add_flow(FlowId(i as u32), FlowConfig::new(w, l)).unwrap();
        let stratum = PolicyModel::stratum(l, u64::from(w));
        m.flows.push((u64::from(w), stratum, 0, 0, VecDeque::new()));
        m.weight_sum += u64::from(w);
        if s.stratum(FlowId(i as u32)) != Some(stratum) {
            return Err(format!("flow {i}: stratum differs"));
        }
    }
    let mut id = 0;
    for &(f, len, kind) in ops {
        if kind > 0 {
            let f = f as usize % flows.len();
            let len = len.min(flows[f].1);
            id += 1;
            s.enqueue(FlowId(f as u32), Pkt { id, len }).unwrap();
            m.enqueue(f, len);
            continue;
        }
        let allowed = m.candidates();
        let Some(d) = s.dequeue() else {
            if !allowed.is_empty() {
                return Err("nothing served, flows eligible".into());
            }
            continue;
        };
        if s.slot_clamps() > 0 {
            return Ok(false);
        }
        let f = d.flow.index();
        if !allowed.contains(&f) {
            return Err(format!("served {f}, allowed {allowed:?}"));
        }
        m.served(f);
        if s.virtual_time() != m.v {
            return Err(format!("V {} != model {}", s.virtual_time(), m.v));
        }
        for (g, fl) in m.flows.iter().enumerate() {
            if !fl.4.is_empty() && s.flow_times(FlowId(g as u32)) != Some((fl.2, fl.3)) {
                return Err(format!("flow {g}: timestamps differ"));
            }
        }
    }
    Ok(true)
}

proptest! {
    // PROPTEST_CASES (the slow tier's long runs, scripts/test-slow) overrides the fast tier's default.
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(128), ..ProptestConfig::default() })]

    #[test]
    fn s_kps_follows_its_policy_exactly(
        flows in proptest::collection::vec((1u32..1025, 64u32..9001), 1..10),
        ops in proptest::collection::vec((0u32..10, 1u32..9001, 0u8..3), 1..600),
    ) {
        let r = check_policy(&flows, &ops, false);
        prop_assert!(r.is_ok(), "{:?}", r);
    }
}

/// The policy check can fail: a model ordering by exact finish times
/// (WF2Q+'s choice, not S-KPS's) disagrees with S-KPS on a mixed flow set,
/// and the same workload passes the right model with every decision checked.
#[test]
fn the_policy_check_can_fail() {
    let flows = [(1, 1500), (3, 700), (40, 64), (1000, 9000), (7, 4000)];
    let ops: Vec<(u32, u32, u8)> = (0..2000u32)
        .map(|k| (k * 7 % 5, 64 + (k * 997) % 9000, (k % 3) as u8))
        .collect();
    assert_eq!(check_policy(&flows, &ops, false), Ok(true));
    assert!(check_policy(&flows, &ops, true).is_err());
}
