//! Service guarantees measured against the fluid reference and checked
//! against the papers' analytical bounds, packet by packet.

use fairway_core::{SchedKind, SchedSpec};
use fairway_eval::guarantees::{bounds_for, run_guarantees, GuaranteeOptions};
use fairway_eval::metrics::BoundContext;
use fairway_eval::traffic::Pattern;
use fairway_eval::workload::{FlowSet, PacketSizes};
use proptest::prelude::*;

fn opts(flows: &str, packets: u64, seed: u64) -> GuaranteeOptions {
    let mut o = GuaranteeOptions::paper(FlowSet::parse(flows).unwrap());
    o.packets = packets;
    o.seed = seed;
    o
}

/// The regime of seed 000 §8.3 on `1k-highw`: WF2Q+ close to one packet
/// service time, DRR in the hundreds.
#[test]
fn one_k_highw_lands_in_the_papers_regime() {
    let o = opts("1k-highw", 60_000, 1);
    let (wf2q, _) = run_guarantees(&SchedSpec::new(SchedKind::Wf2qPlus), &o).unwrap();
    let (drr, _) = run_guarantees(&SchedSpec::new(SchedKind::Drr), &o).unwrap();
    assert!(
        wf2q.twfi_max_weight_flow <= 2.0,
        "WF2Q+ T-WFI {}",
        wf2q.twfi_max_weight_flow
    );
    assert!(
        drr.twfi_max_weight_flow >= 100.0,
        "DRR T-WFI {}",
        drr.twfi_max_weight_flow
    );
    assert_eq!(wf2q.bound_violations, 0);
    assert_eq!(wf2q.packets, 60_000);
}

/// Every scheduler with an analytical bound, and a few SCHED+ aggregate sizes.
const BOUNDED: &[&str] = &[
    "wf2q+",
    "qfq",
    "s-kps",
    "qfq+",
    "qfq+:m=2",
    "wf2q++",
    "wf2q++:m=3",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// WF2Q+, QFQ, QFQ+ and WF2Q++ never exceed their T-WFI and B-WFI bounds
    /// (seed 000 Eqs. (2), (6) with ΔS = 0 for WF2Q+ and ΔS = 6L/φ for QFQ;
    /// Eqs. (3), (7) for the SCHED+ variants), checked packet by packet on
    /// random flow sets (weights 1..1024, max lengths 64..9000 B), sizes,
    /// patterns and transmit-queue sizes.
    #[test]
    fn schedulers_stay_within_their_bounds(
        groups in proptest::collection::vec((1u32..1025, 1u32..6, 64u32..9001), 1..5),
        bursty in any::<bool>(),
        uniform in any::<bool>(),
        queue in 0u32..4,
        seed in any::<u64>(),
    ) {
        let spec: Vec<String> = groups.iter().map(|(w, c, l)| format!("{w}x{c}@{l}")).collect();
        let mut o = opts(&spec.join(","), 3000, seed);
        o.pattern = if bursty { Pattern::Bursty } else { Pattern::Smooth };
        o.sizes = if uniform { PacketSizes::Uniform { min: 64 } } else { PacketSizes::Fixed };
        o.queue_pkts = queue;
        let ctx = BoundContext::new(o.flows.max_len(), queue);
        for name in BOUNDED {
            let sched = SchedSpec::parse(name).unwrap();
            let (report, stats) = run_guarantees(&sched, &o).unwrap();
            for s in &stats {
                let b = bounds_for(&sched, ctx, s).unwrap();
                prop_assert!(s.twfi <= b.twfi + 1e-6, "{} flow {} T-WFI {} > bound {}", name, s.flow, s.twfi, b.twfi);
                prop_assert!(s.bwfi <= b.bwfi + 1e-6, "{} flow {} B-WFI {} > bound {}", name, s.flow, s.bwfi, b.bwfi);
            }
            prop_assert_eq!(report.bound_violations, 0);
            prop_assert_eq!(report.packets, 3000);
        }
    }
}

/// The seed 000 §8.3 acceptance regime for the approximate schedulers:
/// QFQ <= 2, QFQ+ <= 4 packet service times on `1k-highw`, both below
/// their analytical bounds.
#[test]
fn qfq_and_qfq_plus_land_in_the_papers_regime() {
    let o = opts("1k-highw", 60_000, 1);
    for (name, limit) in [("qfq", 2.0), ("qfq+", 4.0)] {
        let (r, _) = run_guarantees(&SchedSpec::parse(name).unwrap(), &o).unwrap();
        assert!(
            r.twfi_max_weight_flow <= limit,
            "{name} T-WFI {}",
            r.twfi_max_weight_flow
        );
        assert_eq!(r.bound_violations, 0, "{name}");
    }
}

/// A deliberately unfair scheduler (FIFO) must violate the WF2Q+ bound on
/// a skewed flow set: the check can fail.
#[test]
fn the_bound_check_catches_an_unfair_scheduler() {
    let o = opts("333x1,1x99", 20_000, 3);
    let (fifo, stats) = run_guarantees(&SchedSpec::new(SchedKind::Fifo), &o).unwrap();
    let ctx = BoundContext::new(o.flows.max_len(), o.queue_pkts);
    let wf2q = SchedSpec::new(SchedKind::Wf2qPlus);
    let violated = stats
        .iter()
        .any(|s| s.twfi > bounds_for(&wf2q, ctx, s).unwrap().twfi);
    assert!(
        violated,
        "FIFO T-WFI {} should break the WF2Q+ bound",
        fifo.twfi_max_weight_flow
    );
}

/// A weight-90 flow of 193-byte packets against a weight-1 flow of
/// 2318-byte packets, with no transmit queue: the heavy flow's scheduler
/// queue empties while its last packet is still on the wire and refills at
/// that instant. It stays backlogged (seed 003 §3: it owns a packet not yet
/// completely transmitted), so the Eq. (3) jump of V to the light flow's
/// start must not happen before the next selection; a QFQ that jumped at
/// the end of the dequeue (Fig. 5, lines 39-46) gave the light flow one
/// packet per refill (5790 B of B-WFI against 5770.6 B over the intervals
/// in which the flow was continuously backlogged at the link). The metric
/// now measures the intervals Theorem 4 covers, which exclude the refill
/// instants, so the scheduler itself is checked in
/// `crates/core/tests/qfq_refill.rs`; this keeps the bounds on this set.
#[test]
fn qfq_keeps_the_bwfi_bound_when_a_flow_refills_while_its_last_packet_is_sent() {
    for flows in ["1x1@2318,90x1@193", "1x1@2318,90x1@256"] {
        let mut o = opts(flows, 3000, 1);
        o.queue_pkts = 0;
        let ctx = BoundContext::new(o.flows.max_len(), 0);
        for name in ["qfq", "qfq+", "wf2q+"] {
            let sched = SchedSpec::parse(name).unwrap();
            let (report, stats) = run_guarantees(&sched, &o).unwrap();
            for s in &stats {
                let b = bounds_for(&sched, ctx, s).unwrap();
                assert!(
                    s.bwfi <= b.bwfi + 1e-6,
                    "{name} on {flows}: flow {} B-WFI {} > bound {}",
                    s.flow,
                    s.bwfi,
                    b.bwfi
                );
            }
            assert_eq!(report.bound_violations, 0, "{name} on {flows}");
        }
    }
}

/// Two equal flows of up to 3987-byte packets, uniform sizes, a transmit
/// queue of 3 packets: a flow's scheduler queue empties while its packets
/// still wait in the transmit queue, and exact WF2Q+ restamps it
/// `S = max(V, F)` on its next packet (Eq. (A.2)). Across many such
/// instants its lag grew to 18321 B against a bound of 17941.5 B; Theorem 4
/// of seed 000 covers only intervals in which the flow stays backlogged in
/// the scheduler up to `t̂` (App. A.5, A.9), which the metric now measures:
/// 5891 B here.
#[test]
fn bwfi_is_measured_over_the_intervals_theorem_4_covers() {
    let mut o = opts("1x2@3987", 3000, 13712622430206661592);
    o.sizes = PacketSizes::Uniform { min: 64 };
    o.queue_pkts = 3;
    let ctx = BoundContext::new(o.flows.max_len(), 3);
    let sched = SchedSpec::new(SchedKind::Wf2qPlus);
    let (report, stats) = run_guarantees(&sched, &o).unwrap();
    for s in &stats {
        let b = bounds_for(&sched, ctx, s).unwrap();
        assert!(
            s.bwfi <= b.bwfi + 1e-6,
            "flow {} B-WFI {} > bound {}",
            s.flow,
            s.bwfi,
            b.bwfi
        );
    }
    assert_eq!(report.bound_violations, 0);
}
