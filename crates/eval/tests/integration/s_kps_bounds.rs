//! S-KPS against its own service bounds (the QFQ paper §5: B-WFI larger than
//! QFQ's by `3σ_i`, T-WFI by `3σ_i/R`), measured packet by packet against
//! the fluid GPS reference in the link simulation of the guarantees harness.
//! S-KPS is not in the spec registry, so the harness's pieces are driven
//! directly with an `SKps` instance.

use fairway_core::s_kps::{SKps, DELTA_S_FACTOR};
use fairway_core::{Capacity, Limits, SchedKind, SchedSpec, Scheduler};
use fairway_eval::controller::{ControllerConfig, Pattern};
use fairway_eval::guarantees::{bounds_for, GuaranteeOptions};
use fairway_eval::link_sim::{simulate, LinkConfig, SimPacket};
use fairway_eval::metrics::{flow_stats, sched_bounds, BoundContext, Bounds, FlowStats};
use fairway_eval::workload::{FlowSet, PacketSizes};
use proptest::prelude::*;

fn opts(flows: &str, packets: u64, seed: u64) -> GuaranteeOptions {
    let mut o = GuaranteeOptions::paper(FlowSet::parse(flows).unwrap());
    o.packets = packets;
    o.seed = seed;
    o
}

/// S-KPS's bounds: the QFQ+ paper Eqs. (2), (6) with `ΔS = 6σ_i ≤ 12 L_k/φ_k`
/// (QFQ's `3σ_i` plus `3σ_i`).
fn s_kps_bounds(ctx: BoundContext, s: &FlowStats) -> Bounds {
    let len = s.max_len as f64;
    sched_bounds(ctx, s.phi, len, DELTA_S_FACTOR as f64 * len / s.phi)
}

/// Runs `sched` on the workload of `o`, as `run_guarantees` does.
fn run(sched: &mut dyn Scheduler<SimPacket>, o: &GuaranteeOptions) -> Vec<FlowStats> {
    let flows = o.flows.flows();
    let ctl = ControllerConfig {
        switch_prob: o.switch_prob,
        ..ControllerConfig::paper(o.pattern, flows.len())
    };
    let out = simulate(
        sched,
        &o.flows,
        ctl,
        o.sizes,
        LinkConfig {
            queue_pkts: o.queue_pkts,
        },
        o.packets,
        o.seed,
    )
    .unwrap();
    assert_eq!(out.refused, 0);
    flow_stats(&out, &flows)
}

fn s_kps_for(o: &GuaranteeOptions) -> SKps<SimPacket> {
    let flows = o.flows.flows();
    let ctl = ControllerConfig::paper(o.pattern, flows.len());
    let cap = Capacity::new(
        flows.len() as u32,
        (ctl.high + 16).min(u32::MAX as u64 - 2) as u32,
    );
    SKps::with_limits(cap, Limits::DEFAULT)
}

/// The first flow exceeding `bound`, if any.
fn violation(
    stats: &[FlowStats],
    ctx: BoundContext,
    bound: impl Fn(&FlowStats) -> Bounds,
) -> Option<String> {
    stats.iter().find_map(|s| {
        let b = bound(s);
        (s.twfi > b.twfi + 1e-6 || s.bwfi > b.bwfi + 1e-6).then(|| {
            format!(
                "flow {} T-WFI {} (bound {}) B-WFI {} (bound {}) L={}",
                s.flow, s.twfi, b.twfi, s.bwfi, b.bwfi, ctx.max_len
            )
        })
    })
}

proptest! {
    // PROPTEST_CASES (the slow tier's long runs, scripts/test-slow) overrides the fast tier's default.
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(24), ..ProptestConfig::default() })]

    /// S-KPS never exceeds its T-WFI and B-WFI bounds on random flow sets
    /// (weights 1..1024, max lengths 64..9000 B), sizes, patterns and
    /// transmit-queue sizes — the workloads QFQ is checked on.
    #[test]
    fn s_kps_stays_within_its_bounds(
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
        let mut s = s_kps_for(&o);
        let stats = run(&mut s, &o);
        prop_assert_eq!(s.slot_clamps(), 0);
        prop_assert_eq!(stats.iter().map(|s| s.packets).sum::<u64>(), 3000);
        let v = violation(&stats, ctx, |st| s_kps_bounds(ctx, st));
        prop_assert!(v.is_none(), "{:?}", v);
    }
}

/// The bound is QFQ's plus `3σ_i` (B-WFI: `3φσ_i`; T-WFI: `3σ_i` byte-times)
/// at the largest `σ_i = 2L/φ`.
#[test]
fn the_bound_is_qfqs_plus_three_slots() {
    let o = opts("1k-highw", 1000, 1);
    let ctx = BoundContext::new(o.flows.max_len(), o.queue_pkts);
    let mut s = s_kps_for(&o);
    let stats = run(&mut s, &o);
    let qfq = SchedSpec::new(SchedKind::Qfq);
    for st in &stats {
        let q = bounds_for(&qfq, ctx, st).unwrap();
        let k = s_kps_bounds(ctx, st);
        let sigma = 2.0 * st.max_len as f64 / st.phi;
        assert!((k.twfi - q.twfi - 3.0 * sigma).abs() < 1e-6 * k.twfi);
        assert!((k.bwfi - q.bwfi - 3.0 * st.phi * sigma).abs() < 1e-6 * k.bwfi);
    }
}

/// On the the QFQ+ paper §8.3 `1k-highw` set S-KPS's highest-weight flows stay
/// within their bound, and within a few packet service times (QFQ's is
/// at most 2 there).
#[test]
fn s_kps_on_1k_highw() {
    let o = opts("1k-highw", 60_000, 1);
    let ctx = BoundContext::new(o.flows.max_len(), o.queue_pkts);
    let mut s = s_kps_for(&o);
    let stats = run(&mut s, &o);
    assert_eq!(violation(&stats, ctx, |st| s_kps_bounds(ctx, st)), None);
    let top = stats.iter().map(|s| s.weight).max().unwrap();
    let worst = stats
        .iter()
        .filter(|s| s.weight == top)
        .map(|s| s.twfi / s.packet_service_time())
        .fold(f64::NEG_INFINITY, f64::max);
    let packets: u64 = stats.iter().map(|s| s.packets).sum();
    eprintln!("S-KPS on 1k-highw: {packets} packets, T-WFI {worst:.3} packet service times");
    assert_eq!(packets, 60_000);
    assert!(worst <= 7.0, "S-KPS T-WFI {worst} packet service times");
}

/// The check can fail: FIFO, which ignores weights, breaks the S-KPS bound
/// on a skewed flow set.
#[test]
fn the_s_kps_bound_check_catches_an_unfair_scheduler() {
    let o = opts("333x1,1x99", 20_000, 3);
    let ctx = BoundContext::new(o.flows.max_len(), o.queue_pkts);
    let mut fifo = SchedSpec::new(SchedKind::Fifo)
        .build::<SimPacket>(Capacity::new(100, 1 << 20), Limits::DEFAULT);
    let stats = run(fifo.as_mut(), &o);
    assert!(violation(&stats, ctx, |st| s_kps_bounds(ctx, st)).is_some());
}
