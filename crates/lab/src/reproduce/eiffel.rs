//! The Eiffel paper reproduced: §5.2, bucketed integer priority queues
//! against comparison-based ones. The paper benchmarks bucketed queues only
//! because it "find(s) that bucketed priority queues perform 6x better in
//! most cases" than binary heaps, and Fig. 12 puts cFFS above the bucketed
//! heap ("BH", a binary heap of non-empty bucket ids) at one element per
//! bucket. Run: fill-drain of 10 000 buckets, every bucket occupied, one
//! element each ([`fairway_eval::pq_bench::run_fill_drain`]), best of the batches.
//! Claims: cFFS is faster than the element binary heap (ratio reported
//! beside the paper's 6) and faster than BH.
//!
//! §5.2 Figs. 13–14, the approximate gradient queue against occupancy: the
//! same fill-drain, 10 000 buckets, one element per occupied bucket, at
//! 10 … 100 % of the buckets occupied. The error rate (extractions not at
//! the minimum, from an untimed drain) depends only on the seed, so its
//! claim is deterministic: zero error when every bucket is occupied, below
//! every partly empty occupancy. The paper's monotone fall of the error
//! with occupancy is listed, not checked: here it is 12 % at 10 %, about
//! 80 % from 30 % to 90 % (see `docs/priority-queues.md`). Throughput
//! rising from the emptiest to the full queue is a timing claim.

use super::error::ReproduceError;
use super::paper::Paper;
use super::progress::{timed, Ticker};
use super::report::{Claim, Figure, Section};
use fairway_eval::pq_bench::{run_fill_drain, FillDrainConfig, QueueKind};

/// Progress steps of [`run`].
pub const STEPS: u64 = 3 + OCCUPANCIES.len() as u64;

/// Buckets of the fill-drain run (the Eiffel paper's Fig. 12 uses 5k and 10k).
const BUCKETS: u32 = 10_000;

/// Occupancies (percent of buckets holding an element) of Figs. 13–14,
/// ascending; the last is the full queue.
const OCCUPANCIES: [u32; 6] = [10, 30, 50, 70, 90, 100];

/// Runs the experiment.
pub fn run(quick: bool, t: &mut Ticker) -> Result<Vec<Section>, ReproduceError> {
    Ok(vec![
        timed(|| fill_drain(quick, t))?,
        timed(|| approx_occupancy(quick, t))?,
    ])
}

fn fill_drain(quick: bool, t: &mut Ticker) -> Result<Section, ReproduceError> {
    let (min_ops, batches) = if quick { (50_000, 3) } else { (200_000, 7) };
    let mut mpps = Vec::new();
    for q in [
        QueueKind::Cffs,
        QueueKind::BucketHeap,
        QueueKind::BinaryHeap,
    ] {
        t.step(&format!("Eiffel paper §5.2 fill-drain: {}", q.name()));
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
                "eiffel/pq/cffs-beats-binary-heap",
                format!("cFFS faster than a binary heap at one element per bucket: {cffs:.1} > {heap:.1} Mpps ({vs_heap:.2}x; paper ~6x)"),
                vs_heap > 1.0,
            ),
            Claim::timing(
                "eiffel/pq/cffs-beats-bucket-heap",
                format!("cFFS faster than the bucketed heap at one element per bucket: {cffs:.1} > {bh:.1} Mpps ({vs_bh:.2}x)"),
                vs_bh > 1.0,
            ),
        ],
        charts: Vec::new(),
        seconds: 0.0,
    })
}

/// One occupancy of the approximate queue: (percent, error rate, Mpps).
type OccupancyPoint = (u32, f64, f64);

/// Deterministic check of Fig. 14: the full queue (last point) fetches
/// without error, and every partly empty occupancy errs more.
fn exact_when_full(points: &[OccupancyPoint]) -> bool {
    match points.split_last() {
        Some((full, rest)) => full.0 == 100 && full.1 == 0.0 && rest.iter().all(|p| p.1 > full.1),
        None => false,
    }
}

/// The paper's reading of Fig. 14: the error never rises with occupancy.
fn error_never_rises(points: &[OccupancyPoint]) -> bool {
    points.windows(2).all(|w| w[1].1 <= w[0].1)
}

/// Timing check of Fig. 13: the full queue is faster than the emptiest.
fn faster_when_full(points: &[OccupancyPoint]) -> bool {
    match (points.first(), points.last()) {
        (Some(low), Some(full)) if points.len() >= 2 => full.2 > low.2,
        _ => false,
    }
}

fn approx_occupancy(quick: bool, t: &mut Ticker) -> Result<Section, ReproduceError> {
    let (min_ops, batches) = if quick { (20_000, 3) } else { (200_000, 7) };
    let mut points: Vec<OccupancyPoint> = Vec::new();
    for occupancy in OCCUPANCIES {
        t.step(&format!(
            "Eiffel paper §5.2 approx queue at {occupancy} % occupancy"
        ));
        let r = run_fill_drain(&FillDrainConfig {
            queue: QueueKind::Approx,
            buckets: BUCKETS,
            per_bucket: 1,
            occupancy,
            alpha: 16,
            seed: 1,
            min_ops,
            batches,
        })?;
        let error = r.error_rate.ok_or(ReproduceError::NoApproxErrorRate)?;
        points.push((occupancy, error, r.mpps));
    }
    let list =
        |f: fn(&OccupancyPoint) -> String| points.iter().map(f).collect::<Vec<_>>().join(", ");
    let errors = list(|p| format!("{} %: {:.1} %", p.0, p.1 * 100.0));
    let mpps = list(|p| format!("{} %: {:.1}", p.0, p.2));
    let mut figures = Vec::new();
    for p in &points {
        figures.push(Figure::vs_text(
            format!("approx error at {} % occupancy", p.0),
            "%",
            if p.0 == 100 {
                "0 (exact)"
            } else {
                "falls as occupancy rises"
            },
            p.1 * 100.0,
        ));
    }
    for p in &points {
        figures.push(Figure::vs_text(
            format!("approx at {} % occupancy", p.0),
            "Mpps",
            "rises with occupancy",
            p.2,
        ));
    }
    let (low, full) = (points[0], points[points.len() - 1]);
    let occupancies = list(|p| p.0.to_string());
    Ok(Section {
        paper: Paper::Eiffel,
        title: format!(
            "§5.2 / Figs. 13–14: approximate gradient queue against occupancy, {BUCKETS} buckets, one element per occupied bucket, best of {batches} batches of {min_ops}"
        ),
        command: format!(
            "fairway bench-pq --queues approx --buckets {BUCKETS} --per-bucket 1 --occupancy {} --min-ops {min_ops} --batches {batches}",
            occupancies.replace(", ", ",")
        ),
        figures,
        claims: vec![
            Claim::new(
                "eiffel/approx/exact-when-full",
                format!("approximate queue exact at 100 % occupancy and erring more at every lower one (Fig. 14): {errors}"),
                exact_when_full(&points),
            ),
            Claim::skipped(
                "eiffel/approx/error-falls-with-occupancy",
                format!(
                    "approximate queue's error never rises with occupancy (Fig. 14), {} here: {errors}",
                    if error_never_rises(&points) { "holds" } else { "does not hold" }
                ),
                false,
                "known deviation: a hole near the minimum moves our estimate past it, so 30-90 % err more than 10 % (docs/priority-queues.md)",
            ),
            Claim::timing(
                "eiffel/pq/approx-faster-when-full",
                format!(
                    "approximate queue faster at {} % than at {} % occupancy (Fig. 13): {:.1} > {:.1} Mpps; {mpps}",
                    full.0, low.0, full.2, low.2
                ),
                faster_when_full(&points),
            ),
        ],
        charts: Vec::new(),
        seconds: 0.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The measured shape (Figs. 13–14 as this queue does them).
    const GOOD: [OccupancyPoint; 3] = [(10, 0.12, 60.0), (50, 0.8, 65.0), (100, 0.0, 93.0)];

    #[test]
    fn exact_when_full_rejects_errors_at_full_occupancy() {
        assert!(exact_when_full(&GOOD));
        let mut bad = GOOD;
        bad[2].1 = 0.01;
        assert!(!exact_when_full(&bad), "error at 100 %");
        let mut bad = GOOD;
        bad[0].1 = 0.0;
        assert!(!exact_when_full(&bad), "a partly empty queue as exact");
        assert!(!exact_when_full(&GOOD[..2]), "no full-occupancy point");
        assert!(!exact_when_full(&[]));
    }

    #[test]
    fn error_never_rises_sees_the_measured_rise() {
        assert!(!error_never_rises(&GOOD));
        assert!(error_never_rises(&[
            (10, 0.8, 1.0),
            (50, 0.1, 1.0),
            (100, 0.0, 1.0)
        ]));
    }

    #[test]
    fn faster_when_full_rejects_a_slower_full_queue() {
        assert!(faster_when_full(&GOOD));
        let mut bad = GOOD;
        bad[2].2 = 50.0;
        assert!(!faster_when_full(&bad));
        assert!(!faster_when_full(&GOOD[..1]));
    }
}
