//! Seed 002 (Eiffel) reproduced: §5.2, bucketed integer priority queues
//! against comparison-based ones. The paper benchmarks bucketed queues only
//! because it "find(s) that bucketed priority queues perform 6x better in
//! most cases" than binary heaps, and Fig. 12 puts cFFS above the bucketed
//! heap ("BH", a binary heap of non-empty bucket ids) at one element per
//! bucket. Run: fill-drain of 10 000 buckets, every bucket occupied, one
//! element each ([`crate::pq_bench::run_fill_drain`]), best of the batches.
//! Claims: cFFS is faster than the element binary heap (ratio reported
//! beside the paper's 6) and faster than BH.

use super::{timed, Claim, Figure, Paper, Section, Ticker};
use crate::pq_bench::{run_fill_drain, FillDrainConfig, QueueKind};

/// Progress steps of [`run`].
pub const STEPS: u64 = 3;

/// Buckets of the fill-drain run (seed 002 Fig. 12 uses 5k and 10k).
const BUCKETS: u32 = 10_000;

/// Runs the experiment.
pub fn run(quick: bool, t: &mut Ticker) -> Result<Vec<Section>, String> {
    Ok(vec![timed(|| fill_drain(quick, t))?])
}

fn fill_drain(quick: bool, t: &mut Ticker) -> Result<Section, String> {
    let (min_ops, batches) = if quick { (50_000, 3) } else { (200_000, 7) };
    let mut mpps = Vec::new();
    for q in [
        QueueKind::Cffs,
        QueueKind::BucketHeap,
        QueueKind::BinaryHeap,
    ] {
        t.step(&format!("seed 002 §5.2 fill-drain: {}", q.name()));
        let r = run_fill_drain(&FillDrainConfig {
            queue: q,
            buckets: BUCKETS,
            per_bucket: 1,
            occupancy: 100,
            alpha: 16,
            seed: 1,
            min_ops,
            batches,
        })?;
        mpps.push(r.mpps);
    }
    let (cffs, bh, heap) = (mpps[0], mpps[1], mpps[2]);
    let vs_heap = cffs / heap;
    let vs_bh = cffs / bh;
    Ok(Section {
        paper: Paper::Eiffel,
        title: format!(
            "§5.2 / Fig. 12: fill-drain, {BUCKETS} buckets, one element per bucket, best of {batches} batches of {min_ops}"
        ),
        command: format!(
            "fairway bench-pq --queues cffs,bucket-heap,binary-heap --buckets {BUCKETS} --per-bucket 1 --min-ops {min_ops} --batches {batches}"
        ),
        figures: vec![
            Figure::vs_text("cFFS", "Mpps", "machine-specific", cffs),
            Figure::vs_text("bucketed heap (BH)", "Mpps", "machine-specific", bh),
            Figure::vs_text("element binary heap", "Mpps", "machine-specific", heap),
            Figure::vs("cFFS / binary heap", "ratio", 6.0, vs_heap),
            Figure::vs_text("cFFS / BH", "ratio", "> 1 (Fig. 12)", vs_bh),
        ],
        claims: vec![
            Claim::timing(
                "002/pq/cffs-beats-binary-heap",
                format!("cFFS faster than a binary heap at one element per bucket: {cffs:.1} > {heap:.1} Mpps ({vs_heap:.2}x; paper ~6x)"),
                vs_heap > 1.0,
            ),
            Claim::timing(
                "002/pq/cffs-beats-bucket-heap",
                format!("cFFS faster than the bucketed heap at one element per bucket: {cffs:.1} > {bh:.1} Mpps ({vs_bh:.2}x)"),
                vs_bh > 1.0,
            ),
        ],
        charts: Vec::new(),
        seconds: 0.0,
    })
}
