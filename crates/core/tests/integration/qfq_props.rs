//! Property tests of QFQ, QFQ+ and WF2Q++ over random flow sets and random
//! operation sequences: weights 1..=1024 (plus a few up to 2^16), packet
//! sizes 64..=9000 bytes, flows added, removed and reconfigured while
//! backlogged, enqueues in bursts, dequeues and peeks interleaved.
//!
//! After every operation the scheduler is compared with a trivial model
//! (one FIFO per flow) and its debug invariant checker is run:
//! * conservation: every accepted packet comes out exactly once, either from
//!   `dequeue` or handed back by `remove_flow` (in FIFO order);
//! * per-flow FIFO: a dequeued packet is the model's head of its flow;
//! * work conservation: `dequeue` returns `Some` iff the model backlog is > 0;
//! * counters: total and per-flow backlog equal the model's;
//! * `peek` returns what the next `dequeue` returns;
//! * `check_invariants`: for QFQ (and QFQ+'s aggregate QFQ) the ER/EB/IR/IB
//!   properties of the QFQ paper §4.1.3 — disjoint sets equal to the backlogged
//!   groups, ER and EB sorted by F, IR ∪ IB sorted by S and F, eligibility,
//!   GBT, exact Ready/Blocked membership — plus the bucket bookkeeping; for
//!   SCHED+ also the aggregate and DRR bookkeeping.

use crate::common::*;
use fairway_core::qfq::Qfq;
use fairway_core::sched_plus::{QfqPlus, Wf2qPlusPlus};
use fairway_core::*;
use proptest::prelude::*;
use std::collections::VecDeque;

const FLOWS: u32 = 12;

#[derive(Debug, Clone)]
enum Op {
    Add(u32, u32, u32),
    Remove(u32),
    Reconfigure(u32, u32, u32),
    Enqueue(u32, u32, u32),
    Dequeue(u32),
    PeekDequeue,
}

fn weight() -> impl Strategy<Value = u32> {
    prop_oneof![
        6 => 1u32..=1024,
        1 => Just(1u32),
        1 => Just(1024u32),
        1 => 1025u32..=65536,
    ]
}

fn max_len() -> impl Strategy<Value = u32> {
    prop_oneof![
        6 => 64u32..=9000,
        1 => Just(64u32),
        1 => Just(1500u32),
        1 => Just(9000u32),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let f = 0..FLOWS;
    prop_oneof![
        3 => (f.clone(), weight(), max_len()).prop_map(|(i, w, l)| Op::Add(i, w, l)),
        1 => f.clone().prop_map(Op::Remove),
        2 => (f.clone(), weight(), max_len()).prop_map(|(i, w, l)| Op::Reconfigure(i, w, l)),
        8 => (f, any::<u32>(), 1u32..=12).prop_map(|(i, r, n)| Op::Enqueue(i, r, n)),
        6 => (1u32..=16).prop_map(Op::Dequeue),
        1 => Just(Op::PeekDequeue),
    ]
}

struct Model {
    cfg: Vec<Option<FlowConfig>>,
    q: Vec<VecDeque<Pkt>>,
    next_id: u32,
    accepted: u64,
    out: u64,
}

impl Model {
    fn new() -> Self {
        Self {
            cfg: vec![None; FLOWS as usize],
            q: vec![VecDeque::new(); FLOWS as usize],
            next_id: 0,
            accepted: 0,
            out: 0,
        }
    }
    fn total(&self) -> Backlog {
        let mut b = Backlog::default();
        for q in &self.q {
            b.packets += q.len() as u64;
            b.bytes += q.iter().map(|p| p.len as u64).sum::<u64>();
        }
        b
    }
    fn weight_sum(&self) -> u64 {
        self.cfg.iter().flatten().map(|c| c.weight as u64).sum()
    }
}

fn check_dequeue<S: Scheduler<Pkt>>(s: &mut S, m: &mut Model) -> Result<(), TestCaseError> {
    let backlogged = m.total().packets > 0;
    let d = s.dequeue();
    prop_assert_eq!(d.is_some(), backlogged, "work conservation");
    if let Some(d) = d {
        let want = m.q[d.flow.index()].pop_front();
        prop_assert_eq!(Some(d.packet), want, "per-flow FIFO");
        m.out += 1;
    }
    Ok(())
}

fn run<S: Scheduler<Pkt>>(
    s: &mut S,
    check: impl Fn(&S) -> Result<(), &'static str>,
    ops: &[Op],
) -> Result<(), TestCaseError> {
    let mut m = Model::new();
    for op in ops {
        match *op {
            Op::Add(i, w, l) => {
                let r = s.add_flow(FlowId(i), FlowConfig::new(w, l));
                let present = m.cfg[i as usize].is_some();
                prop_assert_eq!(r.is_ok(), !present, "add {:?}", r);
                if r.is_ok() {
                    m.cfg[i as usize] = Some(FlowConfig::new(w, l));
                }
            }
            Op::Remove(i) => match s.remove_flow(FlowId(i)) {
                Ok(pkts) => {
                    prop_assert!(m.cfg[i as usize].is_some());
                    let want: Vec<Pkt> = m.q[i as usize].drain(..).collect();
                    m.out += pkts.len() as u64;
                    prop_assert_eq!(pkts, want, "remove hands back the queue in order");
                    m.cfg[i as usize] = None;
                }
                Err(e) => {
                    prop_assert!(m.cfg[i as usize].is_none(), "{}", e);
                }
            },
            Op::Reconfigure(i, w, l) => {
                let r = s.reconfigure_flow(FlowId(i), FlowConfig::new(w, l));
                match (&r, m.cfg[i as usize]) {
                    (Ok(()), Some(_)) => m.cfg[i as usize] = Some(FlowConfig::new(w, l)),
                    (Err(ConfigError::QueuedPacketTooLong { .. }), Some(_)) => {
                        prop_assert!(m.q[i as usize].iter().any(|p| p.len > l));
                    }
                    (Err(ConfigError::UnknownFlow(_)), None) => {}
                    _ => prop_assert!(false, "unexpected reconfigure result {:?}", r),
                }
            }
            Op::Enqueue(i, r, n) => {
                for k in 0..n {
                    let len = match m.cfg[i as usize] {
                        Some(c) => 64 + r.wrapping_add(k * 7919) % (c.max_len - 63),
                        None => 100,
                    };
                    let p = Pkt { id: m.next_id, len };
                    m.next_id += 1;
                    match s.enqueue(FlowId(i), p) {
                        Ok(()) => {
                            prop_assert!(m.cfg[i as usize].is_some());
                            m.q[i as usize].push_back(p);
                            m.accepted += 1;
                        }
                        Err(e) => {
                            prop_assert!(m.cfg[i as usize].is_none(), "{}", e);
                            prop_assert_eq!(e.packet, p);
                        }
                    }
                }
            }
            Op::Dequeue(n) => {
                for _ in 0..n {
                    check_dequeue(s, &mut m)?;
                    if let Err(e) = check(s) {
                        prop_assert!(false, "invariant after dequeue: {}", e);
                    }
                }
            }
            Op::PeekDequeue => {
                let peeked = s.peek().map(|(f, p)| (f, *p));
                let d = s.dequeue().map(|d| (d.flow, d.packet));
                prop_assert_eq!(peeked, d, "peek predicts dequeue");
                if let Some((f, p)) = d {
                    prop_assert_eq!(m.q[f.index()].pop_front(), Some(p));
                    m.out += 1;
                }
            }
        }
        if let Err(e) = check(s) {
            prop_assert!(false, "invariant after {:?}: {}", op, e);
        }
        prop_assert_eq!(s.backlog(), m.total(), "backlog counters");
        let weight_sum: u64 = (0..FLOWS)
            .filter_map(|i| s.flow_config(FlowId(i)))
            .map(|c| u64::from(c.weight))
            .sum();
        prop_assert_eq!(weight_sum, m.weight_sum());
        for i in 0..FLOWS {
            let want = m.cfg[i as usize].map(|_| {
                let q = &m.q[i as usize];
                Backlog {
                    packets: q.len() as u64,
                    bytes: q.iter().map(|p| p.len as u64).sum(),
                }
            });
            prop_assert_eq!(s.flow_backlog(FlowId(i)), want);
        }
    }
    // Drain: everything accepted comes out exactly once.
    while m.total().packets > 0 {
        check_dequeue(s, &mut m)?;
        if let Err(e) = check(s) {
            prop_assert!(false, "invariant while draining: {}", e);
        }
    }
    prop_assert!(s.dequeue().is_none());
    prop_assert_eq!(m.accepted, m.out, "conservation");
    Ok(())
}

fn cap() -> Capacity {
    Capacity::new(FLOWS, 1 << 14)
}

proptest! {
    // PROPTEST_CASES (the long runs of scripts/long-random.sh) overrides the CI-sized default.
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(160), ..ProptestConfig::default() })]

    #[test]
    fn qfq_model_and_invariants(ops in prop::collection::vec(op(), 1..300)) {
        let mut s = Qfq::<Pkt>::new(cap());
        s.verify_fast_paths(true);
        run(&mut s, |s| s.invariants(), &ops)?;
    }

    #[test]
    fn qfq_plus_model_and_invariants(
        ops in prop::collection::vec(op(), 1..300),
        m in 1u32..=8,
    ) {
        let mut s = QfqPlus::<Pkt>::with_options(cap(), Limits::DEFAULT, AggregateSize::new(m).unwrap());
        s.verify_fast_paths(true);
        run(&mut s, |s| s.invariants(), &ops)?;
    }

    #[test]
    fn wf2q_plus_plus_model_and_invariants(
        ops in prop::collection::vec(op(), 1..300),
        m in 1u32..=8,
    ) {
        let mut s = Wf2qPlusPlus::<Pkt>::with_options(cap(), Limits::DEFAULT, AggregateSize::new(m).unwrap());
        run(&mut s, |s| s.invariants(), &ops)?;
    }
}

/// Many flows sharing few (weight, length) pairs, so that QFQ+ aggregates
/// fill up, and flows churn between aggregates while backlogged.
fn crowded_op() -> impl Strategy<Value = Op> {
    let f = 0..FLOWS;
    let w = prop_oneof![Just(1u32), Just(3), Just(333)];
    let l = prop_oneof![Just(1500u32), Just(64), Just(9000)];
    prop_oneof![
        3 => (f.clone(), w.clone(), l.clone()).prop_map(|(i, w, l)| Op::Add(i, w, l)),
        1 => f.clone().prop_map(Op::Remove),
        2 => (f.clone(), w, l).prop_map(|(i, w, l)| Op::Reconfigure(i, w, l)),
        8 => (f, any::<u32>(), 1u32..=12).prop_map(|(i, r, n)| Op::Enqueue(i, r, n)),
        6 => (1u32..=16).prop_map(Op::Dequeue),
        1 => Just(Op::PeekDequeue),
    ]
}

proptest! {
    // PROPTEST_CASES (the long runs of scripts/long-random.sh) overrides the CI-sized default.
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(96), ..ProptestConfig::default() })]

    #[test]
    fn crowded_aggregates(ops in prop::collection::vec(crowded_op(), 1..400), m in 1u32..=4) {
        let mut s = QfqPlus::<Pkt>::with_options(cap(), Limits::DEFAULT, AggregateSize::new(m).unwrap());
        s.verify_fast_paths(true);
        run(&mut s, |s| s.invariants(), &ops)?;
        let mut s = Wf2qPlusPlus::<Pkt>::with_options(cap(), Limits::DEFAULT, AggregateSize::new(m).unwrap());
        run(&mut s, |s| s.invariants(), &ops)?;
        let mut s = Qfq::<Pkt>::new(cap());
        s.verify_fast_paths(true);
        run(&mut s, |s| s.invariants(), &ops)?;
    }
}

/// The dequeue fast paths (entity re-filed in its front bucket; entity
/// alone in its group moving the group with it; entity sharing its group
/// re-filed further on) leave exactly the state the general path leaves: checked at every dequeue (debug builds) on the
/// workloads that take them most: small packets, a few flows per group.
#[test]
fn qfq_fast_paths_match_the_general_path() {
    // (flows, max_len, packet length, equal weights: all in one group)
    let cases = [
        (1, 60, 60, true),
        (1, 1500, 60, true),
        (3, 1500, 64, false),
        (3, 64, 64, false),
        (4, 60, 60, true),
        (4, 1500, 64, true),
    ];
    for (flows, max_len, pkt, equal) in cases {
        let mut s = Qfq::<Pkt>::new(cap());
        s.verify_fast_paths(true);
        for f in 0..flows {
            let w = if equal { 1 } else { 1 + f };
            s.add_flow(FlowId(f), FlowConfig::new(w, max_len)).unwrap();
        }
        let mut id = 0;
        for round in 0..200u32 {
            for f in 0..flows {
                for _ in 0..(round % 5) {
                    id += 1;
                    let len = pkt - id % 7;
                    s.enqueue(FlowId(f), Pkt { id, len }).unwrap();
                }
            }
            for _ in 0..(round % 7) {
                s.dequeue();
            }
            s.invariants().unwrap();
        }
        while s.dequeue().is_some() {}
    }
}
