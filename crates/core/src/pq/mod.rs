//! # Integer priority queues (the Eiffel paper §3.1 and §5.2)
//!
//! Bucketed min-queues for integer ranks: elements are `u32` *handles* the
//! caller owns (indices `0..capacity`, e.g. packet slots), each queued with a
//! `u64` rank. Every queue implements [`IntegerPriorityQueue`]: insert,
//! peek/extract the minimum, remove any handle in O(1) (O(log n) for the
//! element heap), and the soonest rank (what a timer would be armed with).
//! Within one bucket elements leave in FIFO order.
//!
//! All storage is allocated by the constructor: per-bucket FIFOs of 64-byte
//! chunks plus handle-indexed locations (`bucket_lists`), so no operation
//! allocates. Bad input is a typed [`PqError`], never a panic. The bucketed
//! queues cache their minimum bucket and search again only when it empties.
//!
//! | queue | paper | find-min cost | range |
//! |---|---|---|---|
//! | [`FfsQueue`] | Fig. 2 | O(words) FFS scan | fixed, ≤ 1024 buckets |
//! | [`HierarchicalFfsQueue`] | Fig. 3 | O(log₆₄ N) FFS | fixed |
//! | [`CircularFfsQueue`] (cFFS) | Fig. 4 | O(log₆₄ N) FFS | moving window of 2N, O(1) rotation |
//! | [`GradientQueue`] | §3.1.2, Thm. 1 | O(log₃₂ N) `⌈b/a⌉` evaluations | fixed |
//! | [`ApproxGradientQueue`] | §3.1.2, App. B | 1 division (+ linear search) | fixed, one-word window of 544 buckets (α = 16) that follows the minimum; **approximate** |
//! | [`BucketHeap`] ("BH") | §5.2 baseline | O(log B) heap of buckets | fixed |
//! | [`ElementBinaryHeap`] | §5.2 baseline | O(log n) comparisons | any `u64` |
//! | [`TimingWheel`] | ref. \[54\], Carousel | linear slot scan | moving horizon of N |
//!
//! ## Which queue to use (the Eiffel paper Fig. 16, measured by fairway)
//!
//! Measured with `fairway bench-pq` (fill-drain at 5k and 10k buckets;
//! tables, machine caveats and the targets in `docs/priority-queues.md`).
//! The VM switches between a fast and a slow regime ~1.7x apart, so only
//! ratios within one run are quoted here:
//!
//! * **Few priority levels (≲ 1k)**: the choice hardly matters; a flat
//!   [`FfsQueue`] (≤ 1024 levels) or even [`ElementBinaryHeap`] is enough and
//!   uses the least memory.
//! * **Many levels, fixed range** (e.g. remaining flow size):
//!   [`HierarchicalFfsQueue`], the fastest exact queue measured.
//!   [`GradientQueue`] is exact too, at 0.75–0.8x hFFS's speed at one element
//!   per bucket (every extract empties a bucket) and 0.94–1.02x from four,
//!   with no advantage over it: per emptied bucket it evaluates `⌈b/a⌉` (a
//!   leading-zero count checked by two multiplications) where hFFS takes
//!   one FFS.
//! * **Many levels, moving range** (shaping timestamps, virtual times):
//!   [`CircularFfsQueue`]: 0.7–0.9x hFFS, 6x faster than the bucketed
//!   heap at one element per bucket, 2.4–2.5x at four, 1.3x at 16,
//!   1.05x at 64, with O(1) window rotation and counted clamping. The
//!   [`TimingWheel`] is as fast in fill-drain because a drain sweeps each
//!   slot once and it keeps no bitmap; it pays a linear scan per empty
//!   slot whenever the queue is sparse and the caller does not advance it
//!   with the clock ([`TimingWheel::pop_due`]).
//! * **Moving range, fully occupied levels**: [`ApproxGradientQueue`] is
//!   exact at 100 % occupancy; it runs at 0.77–0.81x the speed of cFFS with
//!   one element per bucket and at 1.14–1.19x from 16. Its error rate is
//!   12 % at 10 % occupancy and 72–85 % at 30–90 % occupancy (the Eiffel paper
//!   Fig. 14 shows the same trend). Use it only with every bucket
//!   occupied, and re-size the granularity when buckets empty.
//! * **Many elements per bucket (≳ 64)**: all bucketed queues are within
//!   1.3x of each other; the shared per-bucket FIFO storage dominates.
//! * [`BucketHeap`] ("BH") is the baseline the Eiffel queues must beat; it
//!   comes close to cFFS only when each bucket holds many elements.

pub mod approx_gradient;
pub mod binary_heap;
pub mod bucket_heap;
pub(crate) mod bucket_lists;
pub mod circular_ffs;
pub mod ffs;
pub mod gradient;
pub mod hierarchical_ffs;
pub mod timing_wheel;

pub use approx_gradient::ApproxGradientQueue;
pub use binary_heap::ElementBinaryHeap;
pub use bucket_heap::BucketHeap;
pub use circular_ffs::CircularFfsQueue;
pub use ffs::FfsQueue;
pub use gradient::GradientQueue;
pub use hierarchical_ffs::{bitmap_depth, HierarchicalBitmap, HierarchicalFfsQueue};
pub use timing_wheel::TimingWheel;

use core::fmt;

/// Why an insert or a constructor was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PqError {
    /// The handle is not below the queue's capacity.
    HandleOutOfRange {
        /// The offending handle.
        handle: u32,
        /// The queue's capacity (handles are `0..capacity`).
        capacity: u32,
    },
    /// The handle is already queued (remove or extract it first).
    AlreadyQueued(u32),
    /// The rank is outside a fixed-range queue's `min..=max`.
    RankOutOfRange {
        /// The rejected rank.
        rank: u64,
        /// Lowest accepted rank.
        min: u64,
        /// Highest accepted rank.
        max: u64,
    },
    /// A constructor parameter is out of range.
    InvalidConfig(&'static str),
}

impl fmt::Display for PqError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PqError::HandleOutOfRange { handle, capacity } => {
                write!(f, "handle {handle} is out of range (capacity {capacity})")
            }
            PqError::AlreadyQueued(h) => write!(f, "handle {h} is already queued"),
            PqError::RankOutOfRange { rank, min, max } => {
                write!(f, "rank {rank} is outside {min}..={max}")
            }
            PqError::InvalidConfig(msg) => write!(f, "invalid queue configuration: {msg}"),
        }
    }
}

/// The bucket of `rank` in a fixed range of `buckets` ranks starting at
/// `base`, or the typed error every fixed-range queue returns.
///
/// One compare: every constructor checks that `base + buckets` fits in a
/// `u64`, so a rank below `base` wraps to an offset of at least
/// `2^64 - base ≥ buckets`. Callers pass `BucketLists::buckets()`, the
/// length the lists index with, so the lists' own bounds check on the
/// bucket folds into this one.
#[inline(always)]
pub(crate) fn fixed_range_bucket(rank: u64, base: u64, buckets: usize) -> Result<usize, PqError> {
    let d = rank.wrapping_sub(base);
    if d >= buckets as u64 {
        return Err(PqError::RankOutOfRange {
            rank,
            min: base,
            max: base + (buckets as u64 - 1),
        });
    }
    Ok(d as usize)
}

/// A min-priority queue of caller-owned `u32` handles with integer ranks.
///
/// Equal ranks (for bucketed queues: equal buckets) leave in FIFO order.
pub trait IntegerPriorityQueue {
    /// Queues `handle` (< capacity, not already queued) with `rank`.
    fn insert(&mut self, handle: u32, rank: u64) -> Result<(), PqError>;
    /// The element the next [`extract_min`](Self::extract_min) returns.
    fn peek_min(&self) -> Option<(u32, u64)>;
    /// Removes and returns the minimum `(handle, rank)` (the rank it was
    /// inserted with).
    fn extract_min(&mut self) -> Option<(u32, u64)>;
    /// Removes a queued handle; false if it was not queued.
    fn remove(&mut self, handle: u32) -> bool;
    /// Rank of the bucket served next: the time to arm a timer for. Equals
    /// the rank of [`peek_min`](Self::peek_min) unless that element's rank
    /// was clamped into its bucket.
    fn soonest_rank(&self) -> Option<u64>;
    /// Queued elements.
    fn len(&self) -> usize;
    /// True if nothing is queued.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Handles are `0..capacity`.
    fn capacity(&self) -> u32;
    /// True if `handle` is queued.
    fn contains(&self, handle: u32) -> bool;
}
