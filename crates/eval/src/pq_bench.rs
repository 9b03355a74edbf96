//! Fill-drain benchmark of the integer priority queues (the Eiffel paper §5.2,
//! Figs. 12–14).
//!
//! One configuration = a queue, a bucket count `N`, an occupancy (percent of
//! buckets that hold elements) and a number of elements per occupied bucket.
//! The occupied buckets are drawn at random, every element's rank is its
//! bucket, and the ranks are inserted in random order into an empty queue
//! (handles `0..n` in insertion order, as packet slots would be), then all
//! elements are extracted. Throughput is `n / (fill + drain time)`, i.e.
//! each element counts once for its insert and extract together; the best
//! of several batches is reported, each batch repeating fill-drain on the
//! same queue until at least [`FillDrainConfig::min_ops`] elements went
//! through. The approximate queue's error rate (extractions that did not
//! return a minimum-rank element) comes from a separate, untimed drain.
//! Fill and drain are timed separately too (`fill_ns_per_element`,
//! `drain_ns_per_element`). The moving-range queues (cFFS, timing wheel)
//! get ranks offset to where the previous drain left them, as time would
//! move them; cFFS must not clamp any rank (checked), so it is measured
//! exact like the others.
//!
//! `ideal` is a yardstick, not a queue: the same workload on one pre-sized
//! `Vec` per bucket (append; then read the buckets in rank order), with no
//! minimum search, no O(1) remove and no queued-handle check. It is what the
//! memory system allows this workload on this machine, measured in the same
//! run as the queues: on a shared VM whose speed drifts from minute to
//! minute, a queue's share of `ideal` (`of_ideal`) usually moves less than
//! its Mpps.

mod check;

pub use check::{check_sweep, planned_inserts, MAX_ROUNDS};

use crate::limits::{try_vec, MemoryError, MAX_WORK};
use fairway_core::pq::{
    ApproxGradientQueue, BucketHeap, CircularFfsQueue, ElementBinaryHeap, GradientQueue,
    HierarchicalFfsQueue, IntegerPriorityQueue, PqError, TimingWheel,
};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::Serialize;
use std::fmt;
use std::fmt::Write as _;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Why a fill-drain configuration could not run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PqBenchError {
    /// A queue name the benchmark does not know.
    UnknownQueue(String),
    /// A value outside its range.
    OutOfRange {
        /// The parameter (as the CLI names it).
        param: &'static str,
        /// The value given.
        value: u64,
        /// Its range.
        range: String,
    },
    /// An occupancy that rounds to no occupied bucket.
    NoBucketOccupied {
        /// Buckets.
        buckets: u32,
        /// Percent occupied.
        occupancy: u32,
    },
    /// More elements than a queue's `u32` handles.
    TooManyElements {
        /// Elements of one fill.
        elements: u64,
    },
    /// A sweep planning more inserts than [`MAX_WORK`].
    TooMuchWork {
        /// Configurations per round.
        configs: usize,
        /// Rounds.
        rounds: u32,
        /// Inserts planned (`None`: beyond `u128`).
        total: Option<u128>,
    },
    /// A configuration needing more memory than the limit.
    Memory(MemoryError),
    /// A queue refused its construction or an insert.
    Queue(PqError),
    /// cFFS clamped ranks: the workload left its window.
    Clamped {
        /// Ranks clamped to the window's low end.
        low: u64,
        /// Ranks clamped to its high end.
        high: u64,
    },
}

impl fmt::Display for PqBenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PqBenchError::UnknownQueue(s) => {
                let names: Vec<_> = QueueKind::ALL.iter().map(|k| k.name()).collect();
                write!(
                    f,
                    "unknown queue `{s}` (expected one of {})",
                    names.join(", ")
                )
            }
            PqBenchError::OutOfRange {
                param,
                value,
                range,
            } => write!(f, "{param} {value} must be in {range}"),
            PqBenchError::NoBucketOccupied { buckets, occupancy } => write!(
                f,
                "--occupancy {occupancy} of --buckets {buckets} occupies no bucket \
                 (buckets × occupancy must be at least 50, to round to one bucket)"
            ),
            PqBenchError::TooManyElements { elements } => write!(
                f,
                "--buckets × --occupancy × --per-bucket is {elements} elements; \
                 the limit is 4294967295 (the queues' handles are 32-bit)"
            ),
            PqBenchError::TooMuchWork {
                configs,
                rounds,
                total,
            } => {
                write!(f, "--rounds {rounds} × {configs} configurations plans ")?;
                match total {
                    Some(t) => write!(f, "{t} inserts")?,
                    None => write!(f, "more than 2^128 inserts")?,
                }
                write!(
                    f,
                    " (at least max(--min-ops, elements) each); the limit is {MAX_WORK} \
                     (2^40, about a day of measuring at tens of ns each)"
                )
            }
            PqBenchError::Memory(e) => e.fmt(f),
            PqBenchError::Queue(e) => e.fmt(f),
            PqBenchError::Clamped { low, high } => write!(
                f,
                "cFFS clamped {low} low and {high} high ranks: the workload left its window"
            ),
        }
    }
}

impl std::error::Error for PqBenchError {}

impl From<PqError> for PqBenchError {
    fn from(e: PqError) -> Self {
        PqBenchError::Queue(e)
    }
}

/// The queues the benchmark knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueKind {
    /// [`CircularFfsQueue`] with two halves of `⌈N/2⌉` buckets, so the
    /// drain crosses one O(1) rotation; each fill starts at the window the
    /// previous drain left (ranks advance like time) and must not clamp.
    Cffs,
    /// [`HierarchicalFfsQueue`] over `N` buckets.
    Hffs,
    /// Exact [`GradientQueue`].
    Gradient,
    /// [`ApproxGradientQueue`] with the configured α.
    Approx,
    /// [`BucketHeap`], the paper's "BH".
    BucketHeap,
    /// [`ElementBinaryHeap`].
    BinaryHeap,
    /// [`TimingWheel`] with `N` slots.
    TimingWheel,
    /// The yardstick (module doc): one pre-sized `Vec` per bucket.
    Ideal,
}

impl QueueKind {
    /// Every queue, in table order, then the yardstick.
    pub const ALL: [QueueKind; 8] = [
        QueueKind::Cffs,
        QueueKind::Hffs,
        QueueKind::Gradient,
        QueueKind::Approx,
        QueueKind::BucketHeap,
        QueueKind::BinaryHeap,
        QueueKind::TimingWheel,
        QueueKind::Ideal,
    ];

    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            QueueKind::Cffs => "cffs",
            QueueKind::Hffs => "hffs",
            QueueKind::Gradient => "gradient",
            QueueKind::Approx => "approx",
            QueueKind::BucketHeap => "bucket-heap",
            QueueKind::BinaryHeap => "binary-heap",
            QueueKind::TimingWheel => "timing-wheel",
            QueueKind::Ideal => "ideal",
        }
    }

    /// Parses a command-line name.
    pub fn parse(s: &str) -> Result<Self, PqBenchError> {
        Self::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| PqBenchError::UnknownQueue(s.to_string()))
    }
}

/// One fill-drain configuration.
#[derive(Clone, Copy, Debug)]
pub struct FillDrainConfig {
    /// Queue under test.
    pub queue: QueueKind,
    /// Buckets (priority levels) `N`.
    pub buckets: u32,
    /// Elements per occupied bucket.
    pub per_bucket: u32,
    /// Percent of buckets that are occupied (1..=100).
    pub occupancy: u32,
    /// α of the approximate gradient queue.
    pub alpha: u32,
    /// RNG seed of the workload.
    pub seed: u64,
    /// Elements per timed batch (fill-drain repeated until reached).
    pub min_ops: u64,
    /// Timed batches; the best is reported.
    pub batches: u32,
}

/// Result of one configuration (one JSON object with `--json`).
#[derive(Clone, Debug, Serialize)]
pub struct FillDrainResult {
    /// Queue name.
    pub queue: &'static str,
    /// Buckets `N`.
    pub buckets: u32,
    /// Elements per occupied bucket.
    pub per_bucket: u32,
    /// Percent of buckets occupied.
    pub occupancy: u32,
    /// Elements per fill-drain.
    pub elements: u64,
    /// Million elements per second (insert + extract per element).
    pub mpps: f64,
    /// Nanoseconds per element (insert + extract).
    pub ns_per_element: f64,
    /// Of which the fill (inserts), ns per element.
    pub fill_ns_per_element: f64,
    /// Of which the drain (extracts), ns per element.
    pub drain_ns_per_element: f64,
    /// Approximate queue only: share of extractions not at the minimum.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_rate: Option<f64>,
    /// Approximate queue only: share of minimum lookups (one per emptied
    /// bucket) whose estimate landed on an empty bucket, so that the linear
    /// search found the bucket served.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback_rate: Option<f64>,
    /// This configuration's Mpps over `ideal`'s in the same sweep, when
    /// `ideal` was run too (filled in by [`add_ideal_shares`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub of_ideal: Option<f64>,
    /// With several rounds of the sweep (`fairway bench-pq --rounds`): the
    /// lowest Mpps of any round; the other fields are the best round's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mpps_worst_round: Option<f64>,
}

impl FillDrainResult {
    /// Keeps the better of two rounds of the same configuration and
    /// records the worse one's Mpps in [`Self::mpps_worst_round`].
    pub fn merge_round(self, other: FillDrainResult) -> FillDrainResult {
        let worst = self
            .mpps_worst_round
            .unwrap_or(self.mpps)
            .min(other.mpps_worst_round.unwrap_or(other.mpps));
        let best = if other.mpps > self.mpps { other } else { self };
        FillDrainResult {
            mpps_worst_round: Some(worst),
            ..best
        }
    }
}

/// Random ranks: `occupancy`% of `buckets` chosen (rounded to the
/// nearest), `per_bucket` each, shuffled. The sizes must pass
/// [`FillDrainConfig::check`] (an occupancy above 100 takes every bucket,
/// one rounding to none gives no rank). A refused allocation is an error:
/// the sizes come from the user.
pub fn fill_drain_ranks(
    buckets: u32,
    per_bucket: u32,
    occupancy: u32,
    seed: u64,
) -> Result<Vec<u64>, MemoryError> {
    let mut rng = StdRng::seed_from_u64(seed);
    let occupied = (u64::from(buckets) * u64::from(occupancy) + 50) / 100;
    let occupied = usize::try_from(occupied).unwrap_or(usize::MAX);
    let what = || format!("--buckets {buckets} with --per-bucket {per_bucket}");
    let mut ids: Vec<u64> = try_vec(what, buckets as usize)?;
    ids.extend(0..u64::from(buckets));
    ids.shuffle(&mut rng);
    ids.truncate(occupied);
    // At most 2^32 × (2^32 − 1): within u64; beyond usize the reservation fails.
    let n = ids.len() as u64 * u64::from(per_bucket);
    let n = usize::try_from(n).unwrap_or(usize::MAX);
    let mut ranks: Vec<u64> = try_vec(what, n)?;
    ranks.extend(
        ids.iter()
            .flat_map(|&b| std::iter::repeat_n(b, per_bucket as usize)),
    );
    ranks.shuffle(&mut rng);
    Ok(ranks)
}

/// Time of `reps` fills and of `reps` drains.
#[derive(Clone, Copy)]
struct Timing {
    fill: Duration,
    drain: Duration,
}

/// What the timing loop fills and drains: a queue, or the yardstick.
trait FillDrain {
    /// Inserts `ranks` (handle = index).
    fn fill(&mut self, ranks: &[u64]) -> Result<(), PqError>;
    /// Extracts everything; returns a checksum of handles and ranks.
    fn drain(&mut self) -> u64;
}

/// A queue with the rank origin of each repetition: `origin` gives rank 0
/// (the timing wheel's clock has moved on after a drain, cFFS's window too;
/// the other queues restart at 0).
struct Timed<'q, Q> {
    q: &'q mut Q,
    origin: fn(&Q) -> u64,
}

impl<Q: IntegerPriorityQueue> FillDrain for Timed<'_, Q> {
    #[inline(always)]
    fn fill(&mut self, ranks: &[u64]) -> Result<(), PqError> {
        let base = (self.origin)(self.q);
        for (h, &rank) in ranks.iter().enumerate() {
            self.q.insert(h as u32, base + rank)?;
        }
        Ok(())
    }

    #[inline(always)]
    fn drain(&mut self) -> u64 {
        let mut checksum = 0u64;
        while let Some((h, rank)) = self.q.extract_min() {
            checksum = checksum.wrapping_add(rank ^ u64::from(h));
        }
        checksum
    }
}

/// The yardstick: one `Vec` per bucket, each with room for its elements.
struct IdealBuckets(Vec<Vec<u32>>);

impl IdealBuckets {
    /// `buckets` buckets, each sized for its share of `ranks`.
    fn for_ranks(buckets: u32, ranks: &[u64]) -> Self {
        let mut sizes = vec![0usize; buckets as usize];
        for &rank in ranks {
            sizes[rank as usize] += 1;
        }
        Self(sizes.into_iter().map(Vec::with_capacity).collect())
    }
}

impl FillDrain for IdealBuckets {
    #[inline(always)]
    fn fill(&mut self, ranks: &[u64]) -> Result<(), PqError> {
        for (h, &rank) in ranks.iter().enumerate() {
            self.0[rank as usize].push(h as u32);
        }
        Ok(())
    }

    #[inline(always)]
    fn drain(&mut self) -> u64 {
        let mut checksum = 0u64;
        for (rank, bucket) in self.0.iter_mut().enumerate() {
            for &h in bucket.iter() {
                checksum = checksum.wrapping_add(rank as u64 ^ u64::from(h));
            }
            bucket.clear();
        }
        checksum
    }
}

/// Fills and drains `f` with `ranks`, `reps` times. Only the operations and
/// a checksum run between the clock reads: the ranks are generated and
/// shuffled before.
#[inline(never)]
fn timed_fill_drain<F: FillDrain>(f: &mut F, ranks: &[u64], reps: u64) -> Result<Timing, PqError> {
    let mut checksum = 0u64;
    let mut t = Timing {
        fill: Duration::ZERO,
        drain: Duration::ZERO,
    };
    for _ in 0..reps {
        let start = Instant::now();
        f.fill(ranks)?;
        let filled = Instant::now();
        checksum = checksum.wrapping_add(f.drain());
        let drained = Instant::now();
        t.fill += filled - start;
        t.drain += drained - filled;
    }
    black_box(checksum);
    Ok(t)
}

/// Best time of one fill-drain over `cfg.batches` batches (fewer once
/// 0.25 s were spent, so slow queues keep the run short).
fn measure<Q: IntegerPriorityQueue>(
    mut q: Q,
    ranks: &[u64],
    cfg: &FillDrainConfig,
) -> Result<Timing, PqError> {
    measure_with(&mut q, ranks, cfg, |_| 0)
}

fn measure_with<Q: IntegerPriorityQueue>(
    q: &mut Q,
    ranks: &[u64],
    cfg: &FillDrainConfig,
    origin: fn(&Q) -> u64,
) -> Result<Timing, PqError> {
    measure_fill_drain(&mut Timed { q, origin }, ranks, cfg)
}

fn measure_fill_drain<F: FillDrain>(
    f: &mut F,
    ranks: &[u64],
    cfg: &FillDrainConfig,
) -> Result<Timing, PqError> {
    // Checked: at least one element, one batch and one op.
    let n = ranks.len() as u64;
    let reps = cfg.min_ops.div_ceil(n);
    timed_fill_drain(f, ranks, 1)?; // warm-up: page in and train
    let mut best: Option<Timing> = None;
    let mut spent = Duration::ZERO;
    for batch in 0..cfg.batches {
        let t = timed_fill_drain(f, ranks, reps)?;
        let total = t.fill + t.drain;
        spent += total;
        if best.is_none_or(|b| total < b.fill + b.drain) {
            best = Some(t);
        }
        if batch >= 2 && spent > Duration::from_millis(250) {
            break;
        }
    }
    let best = best.unwrap_or(Timing {
        fill: Duration::ZERO,
        drain: Duration::ZERO,
    });
    // reps may exceed u32 (Duration's divisor): divide the nanoseconds.
    let per_rep = |d: Duration| {
        Duration::from_nanos(u64::try_from(d.as_nanos() / u128::from(reps)).unwrap_or(u64::MAX))
    };
    Ok(Timing {
        fill: per_rep(best.fill),
        drain: per_rep(best.drain),
    })
}

/// Share of extractions that did not return a minimum-rank element, and
/// share of minimum lookups that needed the linear search, for one untimed
/// fill-drain.
fn approx_errors(cfg: &FillDrainConfig, ranks: &[u64]) -> Result<(f64, f64), PqError> {
    let n = ranks.len() as u32;
    let mut q = ApproxGradientQueue::new(0, cfg.buckets, cfg.alpha, n)?;
    let mut remaining = vec![0u32; cfg.buckets as usize];
    for (h, &rank) in ranks.iter().enumerate() {
        q.insert(h as u32, rank)?;
        remaining[rank as usize] += 1;
    }
    let (mut min, mut errors) = (0usize, 0u64);
    while let Some((_, rank)) = q.extract_min() {
        while remaining[min] == 0 {
            min += 1;
        }
        errors += u64::from(rank as usize != min);
        remaining[rank as usize] -= 1;
    }
    Ok((
        errors as f64 / f64::from(n),
        q.fallback_searches() as f64 / q.lookups().max(1) as f64,
    ))
}

/// Runs one configuration.
pub fn run_fill_drain(cfg: &FillDrainConfig) -> Result<FillDrainResult, PqBenchError> {
    cfg.check()?;
    let ranks = fill_drain_ranks(cfg.buckets, cfg.per_bucket, cfg.occupancy, cfg.seed)
        .map_err(PqBenchError::Memory)?;
    let n = u32::try_from(ranks.len()).map_err(|_| PqBenchError::TooManyElements {
        elements: ranks.len() as u64,
    })?;
    let per_fill_drain = match cfg.queue {
        QueueKind::Cffs => {
            // Ranks move forward like time: each repetition starts at the
            // window the previous drain left, so no rank is clamped (checked).
            let mut q = CircularFfsQueue::new(cfg.buckets.div_ceil(2), n)?;
            let t = measure_with(&mut q, &ranks, cfg, CircularFfsQueue::window_start)?;
            if q.clamped_low() + q.clamped_high() != 0 {
                return Err(PqBenchError::Clamped {
                    low: q.clamped_low(),
                    high: q.clamped_high(),
                });
            }
            t
        }
        QueueKind::Hffs => measure(HierarchicalFfsQueue::new(0, cfg.buckets, n)?, &ranks, cfg)?,
        QueueKind::Gradient => measure(GradientQueue::new(0, cfg.buckets, n)?, &ranks, cfg)?,
        QueueKind::Approx => measure(
            ApproxGradientQueue::new(0, cfg.buckets, cfg.alpha, n)?,
            &ranks,
            cfg,
        )?,
        QueueKind::BucketHeap => measure(BucketHeap::new(0, cfg.buckets, n)?, &ranks, cfg)?,
        QueueKind::BinaryHeap => measure(ElementBinaryHeap::new(n), &ranks, cfg)?,
        QueueKind::TimingWheel => {
            let mut wheel = TimingWheel::new(cfg.buckets, n)?;
            measure_with(&mut wheel, &ranks, cfg, TimingWheel::now)?
        }
        QueueKind::Ideal => measure_fill_drain(
            &mut IdealBuckets::for_ranks(cfg.buckets, &ranks),
            &ranks,
            cfg,
        )?,
    };
    let (error_rate, fallback_rate) = if cfg.queue == QueueKind::Approx {
        let (e, f) = approx_errors(cfg, &ranks)?;
        (Some(e), Some(f))
    } else {
        (None, None)
    };
    let per_element = |d: Duration| d.as_secs_f64() * 1e9 / f64::from(n);
    let ns = per_element(per_fill_drain.fill + per_fill_drain.drain);
    Ok(FillDrainResult {
        queue: cfg.queue.name(),
        buckets: cfg.buckets,
        per_bucket: cfg.per_bucket,
        occupancy: cfg.occupancy,
        elements: u64::from(n),
        mpps: 1e3 / ns,
        ns_per_element: ns,
        fill_ns_per_element: per_element(per_fill_drain.fill),
        drain_ns_per_element: per_element(per_fill_drain.drain),
        error_rate,
        fallback_rate,
        of_ideal: None,
        mpps_worst_round: None,
    })
}

/// Fills in [`FillDrainResult::of_ideal`] of every result whose
/// configuration (buckets, per bucket, occupancy) has an `ideal` result.
pub fn add_ideal_shares(results: &mut [FillDrainResult]) {
    let ideal: Vec<(u32, u32, u32, f64)> = results
        .iter()
        .filter(|r| r.queue == QueueKind::Ideal.name())
        .map(|r| (r.buckets, r.per_bucket, r.occupancy, r.mpps))
        .collect();
    for r in results.iter_mut() {
        r.of_ideal = ideal
            .iter()
            .find(|i| (i.0, i.1, i.2) == (r.buckets, r.per_bucket, r.occupancy))
            .map(|i| r.mpps / i.3);
    }
}

/// A dependency-free SVG line chart: Mpps against elements per bucket, one
/// line per (queue, buckets, occupancy), log2 x axis. The `ideal` yardstick
/// is left out: it runs well above the queues and would flatten their lines.
pub fn chart_svg(results: &[FillDrainResult]) -> String {
    let results: Vec<&FillDrainResult> = results
        .iter()
        .filter(|r| r.queue != QueueKind::Ideal.name())
        .collect();
    const W: f64 = 960.0;
    const H: f64 = 520.0;
    const L: f64 = 70.0;
    const R: f64 = 300.0;
    const T: f64 = 40.0;
    const B: f64 = 60.0;
    // One line per (queue, buckets, occupancy): points (log2 per_bucket, Mpps).
    type Series<'a> = ((&'a str, u32, u32), Vec<(f64, f64)>);
    let mut series: Vec<Series> = Vec::new();
    for r in &results {
        let key = (r.queue, r.buckets, r.occupancy);
        let point = (f64::from(r.per_bucket).log2(), r.mpps);
        match series.iter_mut().find(|(k, _)| *k == key) {
            Some((_, pts)) => pts.push(point),
            None => series.push((key, vec![point])),
        }
    }
    let x_max = results
        .iter()
        .map(|r| f64::from(r.per_bucket).log2())
        .fold(1.0, f64::max);
    let y_max = results.iter().map(|r| r.mpps).fold(1.0, f64::max) * 1.1;
    let px = |x: f64| L + x / x_max * (W - L - R);
    let py = |y: f64| H - B - y / y_max * (H - T - B);
    let colors = [
        "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
        "#bcbd22", "#17becf",
    ];
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="15">fill-drain throughput (Eiffel paper Fig. 12)</text>"#,
        (W - R + L) / 2.0
    );
    let _ = writeln!(
        s,
        r#"<line x1="{L}" y1="{}" x2="{}" y2="{}" stroke="black"/><line x1="{L}" y1="{T}" x2="{L}" y2="{}" stroke="black"/>"#,
        H - B,
        W - R,
        H - B,
        H - B
    );
    for k in 0..=5 {
        let y = y_max * f64::from(k) / 5.0;
        let _ = writeln!(
            s,
            r##"<line x1="{L}" y1="{0:.1}" x2="{1}" y2="{0:.1}" stroke="#ddd"/><text x="{2}" y="{3:.1}" text-anchor="end">{y:.0}</text>"##,
            py(y),
            W - R,
            L - 6.0,
            py(y) + 4.0
        );
    }
    let mut x = 0.0;
    while x <= x_max + 1e-9 {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
            px(x),
            H - B + 18.0,
            2f64.powf(x).round()
        );
        x += 1.0;
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">elements per bucket</text><text x="18" y="{}" transform="rotate(-90 18 {})" text-anchor="middle">Mpps</text>"#,
        (W - R + L) / 2.0,
        H - 15.0,
        H / 2.0,
        H / 2.0
    );
    // One colour per queue, one dash pattern per (buckets, occupancy), so
    // that a queue's lines are recognisable across configurations.
    let mut queues: Vec<&str> = Vec::new();
    let mut variants: Vec<(u32, u32)> = Vec::new();
    for ((queue, buckets, occ), _) in &series {
        if !queues.contains(queue) {
            queues.push(queue);
        }
        if !variants.contains(&(*buckets, *occ)) {
            variants.push((*buckets, *occ));
        }
    }
    let dashes = ["", "7 4", "2 3", "9 3 2 3"];
    for (i, ((queue, buckets, occ), pts)) in series.iter().enumerate() {
        let qi = queues.iter().position(|q| q == queue).unwrap_or(0);
        let vi = variants
            .iter()
            .position(|v| *v == (*buckets, *occ))
            .unwrap_or(0);
        let color = colors[qi % colors.len()];
        let dash = match dashes[vi % dashes.len()] {
            "" => String::new(),
            d => format!(r#" stroke-dasharray="{d}""#),
        };
        let path: Vec<String> = pts
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        let _ = writeln!(
            s,
            r#"<polyline fill="none" stroke="{color}" stroke-width="2"{dash} points="{}"/>"#,
            path.join(" ")
        );
        for &(x, y) in pts {
            let _ = writeln!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{color}"/>"#,
                px(x),
                py(y)
            );
        }
        let ly = T + 16.0 * i as f64;
        let _ = writeln!(
            s,
            r#"<line x1="{0}" y1="{ly}" x2="{1}" y2="{ly}" stroke="{color}" stroke-width="2"{dash}/><text x="{2}" y="{3}">{queue} N={buckets} occ={occ}%</text>"#,
            W - R + 15.0,
            W - R + 40.0,
            W - R + 46.0,
            ly + 4.0
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A result of `queue` at 100 buckets, 100 % occupied, `per_bucket`
    /// each, all its time in the drain.
    fn result(queue: &'static str, per_bucket: u32, mpps: f64) -> FillDrainResult {
        FillDrainResult {
            queue,
            buckets: 100,
            per_bucket,
            occupancy: 100,
            elements: 100 * u64::from(per_bucket),
            mpps,
            ns_per_element: 1e3 / mpps,
            fill_ns_per_element: 0.0,
            drain_ns_per_element: 1e3 / mpps,
            error_rate: None,
            fallback_rate: None,
            of_ideal: None,
            mpps_worst_round: None,
        }
    }

    #[test]
    fn rounds_keep_the_best_and_record_the_worst() {
        let round = |mpps: f64, fill: f64| FillDrainResult {
            fill_ns_per_element: fill,
            drain_ns_per_element: 1e3 / mpps - fill,
            ..result("cffs", 1, mpps)
        };
        let merged = round(50.0, 10.0)
            .merge_round(round(80.0, 6.0))
            .merge_round(round(30.0, 20.0));
        assert_eq!(merged.mpps, 80.0);
        assert_eq!(merged.fill_ns_per_element, 6.0);
        assert_eq!(merged.mpps_worst_round, Some(30.0));
    }

    #[test]
    fn ranks_have_the_requested_shape() {
        let ranks = fill_drain_ranks(1000, 4, 10, 7).unwrap();
        assert_eq!(ranks.len(), 400);
        let mut distinct = ranks.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 100);
    }

    #[test]
    fn every_queue_runs_and_approx_reports_errors() {
        for queue in QueueKind::ALL {
            let cfg = FillDrainConfig {
                queue,
                buckets: 300,
                per_bucket: 2,
                occupancy: 50,
                alpha: 16,
                seed: 1,
                min_ops: 1000,
                batches: 1,
            };
            let r = run_fill_drain(&cfg).unwrap();
            assert!(r.mpps > 0.0);
            assert_eq!(r.error_rate.is_some(), queue == QueueKind::Approx);
        }
        let svg = chart_svg(&[]);
        assert!(svg.starts_with("<svg"));
    }

    #[test]
    fn ideal_drains_every_element_in_rank_order() {
        let ranks = fill_drain_ranks(50, 3, 40, 5).unwrap();
        let mut ideal = IdealBuckets::for_ranks(50, &ranks);
        ideal.fill(&ranks).unwrap();
        let order: Vec<(u64, u32)> = ideal
            .0
            .iter()
            .enumerate()
            .flat_map(|(rank, b)| b.iter().map(move |&h| (rank as u64, h)))
            .collect();
        let mut expected: Vec<(u64, u32)> = ranks
            .iter()
            .enumerate()
            .map(|(h, &r)| (r, h as u32))
            .collect();
        expected.sort_unstable();
        assert_eq!(order, expected, "rank order, FIFO within a bucket");
        let checksum = expected
            .iter()
            .fold(0u64, |c, &(r, h)| c.wrapping_add(r ^ u64::from(h)));
        assert_eq!(ideal.drain(), checksum);
        assert!(ideal.0.iter().all(Vec::is_empty));
    }

    #[test]
    fn shares_of_ideal_pair_matching_configurations() {
        let mut results = vec![
            result("cffs", 1, 30.0),
            result("cffs", 4, 50.0),
            result("ideal", 1, 120.0),
        ];
        add_ideal_shares(&mut results);
        assert_eq!(results[0].of_ideal, Some(0.25));
        assert_eq!(results[1].of_ideal, None, "no ideal at 4 per bucket");
        assert_eq!(results[2].of_ideal, Some(1.0));
        let svg = chart_svg(&results);
        assert!(svg.contains("cffs N=100") && !svg.contains("ideal N=100"));
    }
}
