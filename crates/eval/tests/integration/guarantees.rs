//! Service guarantees measured against the fluid reference and checked
//! against the papers' analytical bounds, packet by packet.

use fairway_core::registry::Guarantee;
use fairway_core::{SchedKind, SchedSpec};
use fairway_eval::guarantees::{bounds_for, run_guarantees, simulate_guarantees, GuaranteeOptions};
use fairway_eval::metrics::{bwfi_brute_force, flow_stats, BoundContext, BwfiIntervals};
use fairway_eval::traffic::Pattern;
use fairway_eval::workload::{FlowSet, PacketSizes};
use proptest::prelude::*;

fn opts(flows: &str, packets: u64, seed: u64) -> GuaranteeOptions {
    let mut o = GuaranteeOptions::paper(FlowSet::parse(flows).unwrap());
    o.packets = packets;
    o.seed = seed;
    o
}

/// The options of one random guarantee run: flow groups `(weight, count,
/// max_len)`, the pattern, packet sizes and transmit-queue size drawn by a
/// property test (or by [`bound_margins`]).
fn random_opts(
    groups: &[(u32, u32, u32)],
    bursty: bool,
    uniform: bool,
    queue: u32,
    packets: u64,
    seed: u64,
) -> GuaranteeOptions {
    let spec: Vec<String> = groups
        .iter()
        .map(|(w, c, l)| format!("{w}x{c}@{l}"))
        .collect();
    let mut o = opts(&spec.join(","), packets, seed);
    o.pattern = if bursty {
        Pattern::Bursty
    } else {
        Pattern::Smooth
    };
    o.sizes = if uniform {
        PacketSizes::Uniform { min: 64 }
    } else {
        PacketSizes::Fixed
    };
    o.queue_pkts = queue;
    o
}

/// `PROPTEST_CASES` when set, else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The regime of the QFQ+ paper §8.3 on `1k-highw`: WF2Q+ close to one packet
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

/// Every scheduler of the catalogue with an analytical bound (its
/// guarantee is not `None`), then a few SCHED+ aggregate sizes.
fn bounded() -> Vec<String> {
    let mut specs: Vec<String> = SchedKind::ALL
        .iter()
        .filter(|k| k.info().guarantee != Guarantee::None)
        .map(|k| k.name().to_string())
        .collect();
    specs.extend(["qfq+:m=2", "wf2q++:m=3"].map(String::from));
    specs
}

proptest! {
    // PROPTEST_CASES (long runs, docs/correctness.md) overrides the CI-sized default.
    #![proptest_config(ProptestConfig { cases: cases(24), ..ProptestConfig::default() })]

    /// Every bounded scheduler (WF2Q+, QFQ, S-KPS, QFQ+, WF2Q++, ...) never
    /// exceeds its T-WFI and B-WFI bounds (the QFQ+ paper Eqs. (2), (6) with
    /// its catalogue entry's ΔS; Eqs. (3), (7) for the SCHED+ variants),
    /// checked packet by packet on
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
        let o = random_opts(&groups, bursty, uniform, queue, 3000, seed);
        let ctx = BoundContext::new(o.flows.max_len(), queue);
        for name in bounded() {
            let sched = SchedSpec::parse(&name).unwrap();
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

/// The the QFQ+ paper §8.3 acceptance regime for the approximate schedulers:
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
/// that instant. It stays backlogged (the QFQ paper §3: it owns a packet not yet
/// completely transmitted), so the Eq. (3) jump of V to the light flow's
/// start must not happen before the next selection; a QFQ that jumped at
/// the end of the dequeue (Fig. 5, lines 39-46) gave the light flow one
/// packet per refill (5790 B of B-WFI against 5770.6 B over the intervals
/// in which the flow was continuously backlogged at the link). The metric
/// now measures the intervals Theorem 4 covers, which exclude the refill
/// instants, so the scheduler itself is checked in
/// `crates/core/tests/integration/qfq_refill.rs`; this keeps the bounds on this set.
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
/// of the QFQ+ paper covers only intervals in which the flow stays backlogged in
/// the scheduler up to `t̂` (App. A.5, A.9), which the metric measures:
/// 6765.5 B and 5891 B here.
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

/// Exact WF2Q+ on two flows of fixed-size packets (5941 B at weight 434,
/// 7425 B at weight 535) and a transmit queue of 2. Flow 0's scheduler
/// queue keeps emptying while its packets wait on the link and refilling
/// behind them; each refill restamps it `S = max(V, F)` (Eq. (A.2)) and
/// forgets its lag, so over the whole run, in which it stays backlogged at
/// the link, its lag grows to 29600 B. Theorem 4 does not bound those
/// intervals (App. A.5: the flow must stay backlogged in the scheduler up
/// to `t̂`); the metric used to measure part of them, taking `t1` from the
/// start of the link-backlogged period whenever the flow was idle in the
/// scheduler at `t̂`, and reported 28001 B against the bound of 26622.7 B.
/// Over the intervals the theorem covers the B-WFI is 7968 B, and the
/// online value equals the brute-force oracle's on every flow.
#[test]
fn wf2q_plus_keeps_the_bwfi_bound_when_a_flow_refills_behind_its_queued_packets() {
    let mut o = opts("434x1@5941,535x1@7425", 3000, 9579472465098885923);
    o.queue_pkts = 2;
    let sched = SchedSpec::new(SchedKind::Wf2qPlus);
    let ctx = BoundContext::new(o.flows.max_len(), 2);
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
    let out = simulate_guarantees(&sched, &o).unwrap();
    for s in &stats {
        let oracle = bwfi_brute_force(&out, s.flow, s.phi, BwfiIntervals::TheoremFour);
        assert!(
            (oracle.bwfi - s.bwfi).abs() <= 1e-6,
            "flow {}: online {} oracle {oracle:?}",
            s.flow,
            s.bwfi
        );
    }
    // The interval set matters: over every link-backlogged interval flow 0
    // is far beyond the bound, and the oracle tells the two apart.
    let literal = bwfi_brute_force(&out, 0, stats[0].phi, BwfiIntervals::LinkBacklogged);
    let bound = bounds_for(&sched, ctx, &stats[0]).unwrap().bwfi;
    assert!(literal.bwfi > bound, "{literal:?} against {bound}");
    assert!(literal.bwfi > stats[0].bwfi + 1000.0);
}

/// The bound check on B-WFI can fail: FIFO serves a flow of 77 % of the
/// weight like each of 99 light ones; its B-WFI (46500 B) is far beyond
/// WF2Q+'s bound (5656 B).
#[test]
fn the_bwfi_check_catches_an_unfair_scheduler() {
    let o = opts("333x1,1x99", 20_000, 3);
    let (_, stats) = run_guarantees(&SchedSpec::new(SchedKind::Fifo), &o).unwrap();
    let ctx = BoundContext::new(o.flows.max_len(), o.queue_pkts);
    let wf2q = SchedSpec::new(SchedKind::Wf2qPlus);
    let worst = stats
        .iter()
        .map(|s| s.bwfi / bounds_for(&wf2q, ctx, s).unwrap().bwfi)
        .fold(0.0, f64::max);
    assert!(worst > 1.0, "FIFO B-WFI at most {worst} x the WF2Q+ bound");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(24), ..ProptestConfig::default() })]

    /// The online B-WFI of the link simulation equals the brute-force
    /// maximum over every interval Theorem 4 covers
    /// ([`bwfi_brute_force`]), for schedulers with and without a bound, on
    /// random flow sets, sizes, patterns and transmit-queue sizes.
    #[test]
    fn online_bwfi_equals_the_brute_force_oracle(
        groups in proptest::collection::vec((1u32..1025, 1u32..4, 64u32..9001), 1..4),
        bursty in any::<bool>(),
        uniform in any::<bool>(),
        queue in 0u32..4,
        seed in any::<u64>(),
    ) {
        let o = random_opts(&groups, bursty, uniform, queue, 800, seed);
        for name in ["wf2q+", "qfq", "qfq+", "drr", "fifo"] {
            let sched = SchedSpec::parse(name).unwrap();
            let out = simulate_guarantees(&sched, &o).unwrap();
            for s in flow_stats(&out, &o.flows.flows()) {
                let oracle = bwfi_brute_force(&out, s.flow, s.phi, BwfiIntervals::TheoremFour);
                prop_assert!(
                    (oracle.bwfi - s.bwfi).abs() <= 1e-9 * oracle.bwfi.max(1.0),
                    "{} flow {}: online {} oracle {:?}", name, s.flow, s.bwfi, oracle
                );
            }
        }
    }
}

/// How close each bounded scheduler comes to its bounds: the largest
/// measured/bound ratio of T-WFI and B-WFI over `PROPTEST_CASES` (default
/// 200) random runs drawn like `schedulers_stay_within_their_bounds`'s,
/// printed as a table. A long run, so `--ignored`:
/// `PROPTEST_CASES=5000 cargo test --release -p fairway-eval --test integration guarantees::bound_margins -- --ignored --nocapture`
#[test]
#[ignore = "slow tier: 200 runs of 3000 packets on every bounded scheduler"]
fn bound_margins() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    let bounded = bounded();
    let mut worst = vec![(0.0f64, 0.0f64); bounded.len()];
    let n = cases(200);
    for _ in 0..n {
        // A fixed draw order (groups, seed, pattern, sizes, queue), so the
        // runs behind the figures in docs/guarantees.md repeat.
        let groups: Vec<(u32, u32, u32)> = (0..rng.random_range(1..5))
            .map(|_| {
                (
                    rng.random_range(1u32..1025),
                    rng.random_range(1u32..6),
                    rng.random_range(64u32..9001),
                )
            })
            .collect();
        let seed = rng.random();
        let (bursty, uniform) = (rng.random(), rng.random());
        let queue = rng.random_range(0..4);
        let o = random_opts(&groups, bursty, uniform, queue, 3000, seed);
        let ctx = BoundContext::new(o.flows.max_len(), o.queue_pkts);
        for (k, name) in bounded.iter().enumerate() {
            let sched = SchedSpec::parse(name).unwrap();
            let (_, stats) = run_guarantees(&sched, &o).unwrap();
            for s in &stats {
                let b = bounds_for(&sched, ctx, s).unwrap();
                worst[k].0 = worst[k].0.max(s.twfi / b.twfi);
                worst[k].1 = worst[k].1.max(s.bwfi / b.bwfi);
            }
        }
    }
    println!("{n} runs: largest measured / bound");
    println!("| scheduler | T-WFI | B-WFI |\n|---|---:|---:|");
    for (name, (t, b)) in bounded.iter().zip(&worst) {
        println!("| {name} | {t:.3} | {b:.3} |");
    }
    for (name, (t, b)) in bounded.iter().zip(&worst) {
        assert!(*t <= 1.0 + 1e-9 && *b <= 1.0 + 1e-9, "{name}: {t} {b}");
    }
}

/// The third kind of `t2` the online B-WFI evaluates (see
/// `fairway_eval::link_sim`): flow 2 (weight 349, up to 8550 B) is idle in
/// the scheduler while one of its packets waits in a transmit queue of 5;
/// other packets dequeued meanwhile sit behind it, and it refills before
/// they are sent. The end of such a packet admits `t1` from its dequeue on,
/// a range the flow's next own start no longer has; counting only own
/// starts and ends gave 4230.3 B where the oracle finds 4240.9 B.
#[test]
fn online_bwfi_counts_ends_of_packets_dequeued_while_the_flow_was_idle() {
    let mut o = opts("896x1@105,349x2@8550", 600, 2053371894293765541);
    o.sizes = PacketSizes::Uniform { min: 64 };
    o.queue_pkts = 5;
    let sched = SchedSpec::new(SchedKind::Wf2qPlus);
    let out = simulate_guarantees(&sched, &o).unwrap();
    for s in flow_stats(&out, &o.flows.flows()) {
        let oracle = bwfi_brute_force(&out, s.flow, s.phi, BwfiIntervals::TheoremFour);
        assert!(
            (oracle.bwfi - s.bwfi).abs() <= 1e-6,
            "flow {}: online {} oracle {oracle:?}",
            s.flow,
            s.bwfi
        );
    }
    let flow2 = bwfi_brute_force(&out, 2, 349.0 / 1594.0, BwfiIntervals::TheoremFour);
    assert!((flow2.bwfi - 4240.93).abs() < 0.01, "{flow2:?}");
}
