//! CoDel ([`fairway_core::aqm::CodelFifo`]) against the RFC 8289
//! pseudocode transcribed in `aqm_models.rs`, on random schedules of
//! arrivals and departures: every dequeue must send the same packet and
//! drop the same packets, and the drop state (`dropping`, `count`) must
//! agree after every operation.
//!
//! The schedules are tuned so that CoDel acts: nanosecond-scale targets and
//! intervals, bursts of arrivals faster than the departures. A coverage
//! test checks that they reach every branch of the algorithm (drops,
//! several drops in one dequeue, re-entry with the previous drop rate), and
//! a mutation test checks that each deliberately wrong model is caught.

use crate::aqm_models::{RfcCodel, Variant};
use crate::common::Pkt;
use fairway_core::aqm::{AqmConfigError, CodelFifo, CodelFifoConfig, CodelParams};
use fairway_core::EnqueueErrorKind;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;

#[derive(Clone, Debug)]
pub enum Op {
    /// Advance the clock by `gap` ns, then enqueue a packet of `len` bytes.
    Enqueue { gap: u64, len: u32 },
    /// Advance the clock by `gap` ns, then dequeue.
    Dequeue { gap: u64 },
}

#[derive(Clone, Debug)]
pub struct Trace {
    pub params: CodelParams,
    pub start: u64,
    pub ops: Vec<Op>,
}

/// Phases of arrivals faster, then slower, than departures, so that queues
/// build up, stand, drain and build up again (CoDel's re-entry). Gaps are
/// whole units of `unit` ns, as are target and interval, so the clock
/// often lands exactly on a deadline (where `>=` and `>` differ).
fn ops(unit: u64) -> impl Strategy<Value = Vec<Op>> {
    let phase = (1u32..10, 5usize..80, 0u64..4, 1u32..1500).prop_flat_map(
        move |(enq_weight, n, max_gap, max_len)| {
            let gap = (0..=max_gap).prop_map(move |g| g * unit);
            let op = prop_oneof![
                enq_weight => (gap.clone(), 1..=max_len).prop_map(|(gap, len)| Op::Enqueue { gap, len }),
                10 - enq_weight => gap.prop_map(|gap| Op::Dequeue { gap }),
            ];
            prop::collection::vec(op, n)
        },
    );
    prop::collection::vec(phase, 1..8).prop_map(|phases| phases.concat())
}

pub fn trace() -> impl Strategy<Value = Trace> {
    let unit = prop_oneof![Just(1u64), Just(37), Just(100)];
    let start = prop_oneof![Just(0u64), 1u64..1 << 40];
    (unit, 1u64..30, 1u64..8, 1u32..3000, start).prop_flat_map(|(unit, t, k, mtu, start)| {
        ops(unit).prop_map(move |ops| Trace {
            params: CodelParams {
                target_ns: t * unit,
                interval_ns: t * unit * k,
                mtu,
            },
            start,
            ops,
        })
    })
}

/// What one run showed: how far the implementation and the model agreed,
/// and which branches were taken.
#[derive(Default, Debug)]
pub struct Run {
    pub mismatch: Option<String>,
    pub drops: usize,
    pub multi_drop_dequeues: usize,
    pub reentries_with_memory: usize,
}

pub fn run(trace: &Trace, variant: Variant) -> Run {
    let p = trace.params;
    let cfg = CodelFifoConfig {
        codel: p,
        limit: 100_000,
    };
    let mut q: CodelFifo<Pkt> = CodelFifo::new(cfg).expect("valid parameters");
    let mut m = RfcCodel::new(p.target_ns, p.interval_ns, p.mtu, variant);
    let mut now = trace.start;
    let mut out = Run::default();
    for (i, op) in trace.ops.iter().enumerate() {
        match *op {
            Op::Enqueue { gap, len } => {
                now += gap;
                let pkt = Pkt { id: i as u32, len };
                q.enqueue(pkt, now).expect("below the limit");
                m.enqueue(pkt, now);
            }
            Op::Dequeue { gap } => {
                now += gap;
                let was_dropping = q.codel_state().dropping();
                let mut got_drops = Vec::new();
                let got = q.dequeue_with(now, |p| got_drops.push(p));
                let mut want_drops = Vec::new();
                let want = m.dequeue(now, &mut want_drops);
                if (got, &got_drops) != (want, &want_drops) {
                    out.mismatch = Some(format!(
                        "op {i} at {now} ns: sent {got:?} dropped {got_drops:?}, \
                         the RFC sends {want:?} drops {want_drops:?}"
                    ));
                    return out;
                }
                out.drops += got_drops.len();
                out.multi_drop_dequeues += usize::from(got_drops.len() > 1);
                let s = q.codel_state();
                if !was_dropping && s.dropping() && s.count() > 1 {
                    out.reentries_with_memory += 1;
                }
            }
        }
        let s = q.codel_state();
        if (s.dropping(), s.count()) != (m.dropping, m.count) {
            out.mismatch = Some(format!(
                "op {i} at {now} ns: state (dropping, count) = {:?}, the RFC has {:?}",
                (s.dropping(), s.count()),
                (m.dropping, m.count)
            ));
            return out;
        }
    }
    if q.drops().codel_packets != out.drops as u64 || q.drops().overflow_packets != 0 {
        out.mismatch = Some(format!(
            "drop counters {:?} for {} drops",
            q.drops(),
            out.drops
        ));
    }
    out
}

/// The same traces every time: proptest's deterministic runner.
pub fn fixed_traces(n: usize) -> Vec<Trace> {
    let mut runner = TestRunner::deterministic();
    let strategy = trace();
    (0..n)
        .map(|_| strategy.new_tree(&mut runner).expect("a trace").current())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn codel_drops_exactly_as_the_rfc_pseudocode(t in trace()) {
        let r = run(&t, Variant::Rfc);
        prop_assert!(r.mismatch.is_none(), "{}", r.mismatch.unwrap_or_default());
    }
}

#[test]
fn the_traces_reach_every_branch_of_codel() {
    let runs: Vec<Run> = fixed_traces(200)
        .iter()
        .map(|t| run(t, Variant::Rfc))
        .collect();
    assert!(runs.iter().all(|r| r.mismatch.is_none()));
    let drops: usize = runs.iter().map(|r| r.drops).sum();
    let multi: usize = runs.iter().map(|r| r.multi_drop_dequeues).sum();
    let reentry: usize = runs.iter().map(|r| r.reentries_with_memory).sum();
    let dropping_runs = runs.iter().filter(|r| r.drops > 0).count();
    assert!(
        dropping_runs >= 40,
        "only {dropping_runs} of 200 traces drop"
    );
    assert!(
        multi >= 20,
        "{multi} dequeues dropped more than one packet ({drops} drops)"
    );
    assert!(
        reentry >= 5,
        "{reentry} re-entries kept the previous drop rate"
    );
}

#[test]
fn each_wrong_model_is_caught() {
    let traces = fixed_traces(200);
    for variant in [
        Variant::StrictAboveTime,
        Variant::NoReentryMemory,
        Variant::ControlLawFromNow,
    ] {
        let caught = traces
            .iter()
            .filter(|t| run(t, variant).mismatch.is_some())
            .count();
        assert!(caught > 0, "{variant:?} passes all 200 traces");
    }
}

#[test]
fn the_fifo_tail_drops_at_its_limit_and_counts_it() {
    let cfg = CodelFifoConfig {
        codel: CodelParams::RFC8289,
        limit: 2,
    };
    let mut q: CodelFifo<Pkt> = CodelFifo::new(cfg).unwrap();
    q.enqueue(Pkt { id: 0, len: 100 }, 0).unwrap();
    q.enqueue(Pkt { id: 1, len: 100 }, 0).unwrap();
    let e = q.enqueue(Pkt { id: 2, len: 300 }, 0).unwrap_err();
    assert_eq!(e.kind, EnqueueErrorKind::Full { capacity: 2 });
    assert_eq!(e.packet, Pkt { id: 2, len: 300 });
    assert_eq!(
        (q.drops().overflow_packets, q.drops().overflow_bytes),
        (1, 300)
    );
    // Bad lengths come back without counting a drop.
    assert_eq!(
        q.enqueue(Pkt { id: 3, len: 0 }, 0).unwrap_err().kind,
        EnqueueErrorKind::EmptyPacket
    );
    assert_eq!(q.drops().overflow_packets, 1);
    assert_eq!(q.backlog().packets, 2);
}

#[test]
fn fifo_parameters_are_refused_with_their_names() {
    let ok = CodelFifoConfig {
        codel: CodelParams::RFC8289,
        limit: 1,
    };
    assert!(CodelFifo::<Pkt>::new(ok).is_ok());
    let limit = |limit| CodelFifo::<Pkt>::new(CodelFifoConfig { limit, ..ok }).err();
    assert_eq!(limit(0), Some(AqmConfigError::Limit { limit: 0 }));
    assert_eq!(
        limit((1 << 24) + 1),
        Some(AqmConfigError::Limit {
            limit: (1 << 24) + 1
        })
    );
    let bad = CodelParams {
        target_ns: 0,
        ..CodelParams::RFC8289
    };
    let e = CodelFifo::<Pkt>::new(CodelFifoConfig { codel: bad, ..ok })
        .err()
        .unwrap();
    assert_eq!(
        e.to_string(),
        "codel target 0 ns out of range 1..=100000000 ns (at most the interval)"
    );
}
