//! Approximate gradient queue (the Eiffel paper §3.1.2, "Approximate Gradient
//! Queue", and Appendix B).
//!
//! A single curvature function over all buckets: bucket weight `2^(i/α)`
//! instead of `2^i`, `a = Σ 2^(i/α)`, `b = Σ i·2^(i/α)`. The weighted mean
//! `b/a` sits a constant `u(α) = 1/(1 - 2^(1/α))` below the highest non-empty
//! index when the buckets under it are occupied, so one division estimates
//! the minimum: `î = round(b/a - u(α))`. If the estimate lands on an empty
//! bucket the queue searches forward linearly (a word at a time over an
//! occupancy bitmap), as the paper prescribes. Estimates that fall *before*
//! the minimum are therefore always corrected; estimates *after* it return a
//! non-minimal element — the approximation error the benchmark reports
//! (the Eiffel paper Fig. 14).
//!
//! Representation (choices the paper leaves open):
//! * **One machine word.** `a` and `b` are exact `u64` integers, so
//!   add/subtract never drift, and the curvature sees a *window* of `W`
//!   buckets starting at a moving *origin*: the paper's `I_0..I_max`, "what
//!   the CPU word can represent" (its example: 523 buckets at α = 16; here
//!   `W = 544` at α = 16). Buckets past the window weigh nothing until the
//!   window reaches them; the linear search still finds them.
//! * **Weights that shift exactly.** Bucket `origin + d` weighs
//!   `m[d mod α] << (Q - ⌊d/α⌋)`, where `m[r] = round(2^(16 - r/α))` is a
//!   16-bit mantissa table and `Q` the largest exponent whose sums fit the
//!   word (`W = (Q + 1)·α`, so `(W - 1)·Σ weights < 2^63`). Moving the origin
//!   forward by `k·α` buckets then multiplies every weight by exactly `2^k`:
//!   `a ← a << k`, `b ← (b + k·α·a) << k`, plus the buckets that enter the
//!   window, O(k·α) instead of recomputing the whole window, and a fully
//!   occupied stretch of a bitmap word enters as two prefix-sum
//!   differences. Each bucket enters the window once.
//! * **The window follows a tracked minimum.** The queue keeps the lowest
//!   occupied bucket (lowered by inserts, searched forward in the bitmap
//!   only when its bucket empties) to place the window; extractions still
//!   serve the estimate. The origin jumps to the minimum, rounded down to
//!   a multiple of α, once the minimum reaches the window's middle. Up to
//!   there the paper's `g(α, M)`, which the dense-case shift `u(α)`
//!   neglects, is below 2^-13 (`M` is at least half the window, 13α for
//!   the largest α; at α = 16, `g < 2^-17`, an error of 0.002 buckets),
//!   and in the dense case a non-zero `g` only moves the estimate *before*
//!   the minimum, which the search corrects. An insert before the origin
//!   recomputes the window from the bitmap
//!   ([`ApproxGradientQueue::rebases`]).
//! * **The division off the critical path.** Each time a bucket empties, the
//!   queue estimates the next minimum (one `f64` division of `b` by `a`,
//!   ~14 cycles, plus two conversions) and also reads the next occupied
//!   bucket in the same bitmap word, the *guess*. When the two agree (in
//!   the dense case, all but once per 64 buckets), the queue continues
//!   with the guess through a predicted branch, so the next pop does not
//!   wait for the division, and skips the estimate's occupancy test (the
//!   guess is occupied). The answer is the estimate's in every case.
//!
//! Guarantees: nothing is lost or duplicated; a queue whose occupied buckets
//! are contiguous from the minimum is served exactly; and in general the
//! search starts at most [`ApproxGradientQueue::max_search_offset`] buckets
//! past the true minimum, so the only elements that can be overtaken are
//! those ranked within that offset of the minimum.

use super::bucket_lists::BucketLists;
use super::{IntegerPriorityQueue, PqError};
use alloc::vec;
use alloc::vec::Vec;

/// Bits of the weight mantissas `m[r] = round(2^(MANTISSA_BITS - r/α))`:
/// relative rounding 2^-17, far below one bucket of estimate error.
const MANTISSA_BITS: u32 = 16;
/// Largest accepted α.
pub const MAX_ALPHA: u32 = 341;
/// Smallest window, in multiples of α: the minimum stays in the first half
/// and the dense-case shift needs many occupied buckets after it.
const MIN_WINDOW_EXPONENTS: u32 = 16;
/// "No bucket": for the located bucket and the minimum.
const NONE: u32 = u32::MAX;

/// `2^(1/α)` by Newton's method (`core` has no `powf`).
fn root_of_two(alpha: u32) -> f64 {
    let alpha_f = f64::from(alpha);
    let mut x = 1.0 + core::f64::consts::LN_2 / alpha_f;
    for _ in 0..40 {
        let mut p = 1.0; // x^(α-1)
        for _ in 1..alpha {
            p *= x;
        }
        let next = x - (p * x - 2.0) / (alpha_f * p);
        if next == x {
            break;
        }
        x = next;
    }
    x
}

/// The weight table of a window: `weights[d] = m[d mod α] << (q - ⌊d/α⌋)`
/// for the largest `q` whose window `(q + 1)·α` keeps `(W - 1)·Σ weights`
/// (a bound on `b`, and on `a`) below 2^63, or `None` if that window is
/// under `MIN_WINDOW_EXPONENTS·α`.
fn weight_table(alpha: u32, r: f64) -> Option<Vec<u64>> {
    let mut mantissas = Vec::with_capacity(alpha as usize);
    let mut x = f64::from(1u32 << MANTISSA_BITS);
    for _ in 0..alpha {
        mantissas.push((x + 0.5) as u64);
        x /= r;
    }
    let mantissa_sum: u128 = mantissas.iter().map(|&m| u128::from(m)).sum();
    // Σ weights = mantissa_sum · (2^(q+1) - 1); W = (q + 1)·α.
    let fits = |q: u32| {
        let window = u128::from((q + 1) * alpha);
        (window - 1) * mantissa_sum * ((1u128 << (q + 1)) - 1) < 1u128 << 63
    };
    let q = (0..64 - MANTISSA_BITS).rev().find(|&q| fits(q))?;
    if q + 1 < MIN_WINDOW_EXPONENTS {
        return None;
    }
    Some(
        (0..(q + 1) * alpha)
            .map(|d| mantissas[(d % alpha) as usize] << (q - d / alpha))
            .collect(),
    )
}

/// Approximate single-level gradient queue over ranks `base..base + buckets`.
/// # Examples
///
/// ```
/// use fairway_core::pq::{ApproxGradientQueue, IntegerPriorityQueue};
///
/// // Ranks 0..1024, handles 0..1024, weight exponent i/16 (the paper's α).
/// let mut q = ApproxGradientQueue::new(0, 1024, 16, 1024).unwrap();
/// // Every bucket occupied: the estimate of the minimum is exact.
/// for r in (0..1024u32).rev() {
///     q.insert(r, u64::from(r)).unwrap();
/// }
/// for r in 0..1024u64 {
///     assert_eq!(q.extract_min().map(|(_, rank)| rank), Some(r));
/// }
/// // With buckets missing it may return a near-minimum element, never lose one.
/// for (h, r) in [(1, 900), (2, 3), (3, 500)] {
///     q.insert(h, r).unwrap();
/// }
/// let mut out: Vec<u64> = (0..3).filter_map(|_| q.extract_min()).map(|(_, r)| r).collect();
/// out.sort();
/// assert_eq!(out, [3, 500, 900]);
/// ```
pub struct ApproxGradientQueue {
    lists: BucketLists,
    /// Occupancy bits, one per bucket: the linear-search fallback.
    occupied: Vec<u64>,
    /// `weights[d]`: weight of bucket `origin + d`, for `d < W`.
    weights: Vec<u64>,
    /// `prefix[d]`: the `(a, b)` of buckets `origin..origin + d` all
    /// occupied, for `d ≤ W`.
    prefix: Vec<(u64, u64)>,
    a: u64,
    b: u64,
    /// First bucket of the window; never above an occupied bucket.
    origin: u32,
    /// The lowest occupied bucket ([`NONE`] when empty), kept only to move
    /// the window: lowered by inserts, searched for (forward, in the
    /// bitmap) only when its bucket empties. Extractions use the estimate.
    min: u32,
    /// `W - 1`: weight index of the origin (`i = W - 1 - d`).
    top: u32,
    /// How far the minimum may get from the origin before the origin
    /// follows it: half the window, a multiple of α.
    follow_at: u32,
    /// `-u(α) = 1/(2^(1/α) - 1) + 0.5`: the dense-case shift plus rounding.
    shift: f64,
    alpha: u32,
    base: u64,
    buckets: u32,
    /// The bucket the next extraction serves, as located (estimate, then
    /// search) after the last change of the curvature; [`NONE`] when it
    /// must be located again.
    cur: u32,
    max_search_offset: u32,
    lookups: u64,
    fallback_searches: u64,
    rebases: u64,
}

impl ApproxGradientQueue {
    /// A queue for ranks `base..base + buckets`, handles `0..capacity`, and
    /// weight exponent `f(i) = i/alpha` (`1..=MAX_ALPHA`; the paper uses 16).
    pub fn new(base: u64, buckets: u32, alpha: u32, capacity: u32) -> Result<Self, PqError> {
        if buckets == 0 || base.checked_add(u64::from(buckets)).is_none() {
            return Err(PqError::InvalidConfig(
                "buckets must be >= 1 and base + buckets must fit in u64",
            ));
        }
        if alpha == 0 || alpha > MAX_ALPHA {
            return Err(PqError::InvalidConfig("alpha must be in 1..=341"));
        }
        let r = root_of_two(alpha);
        let weights = weight_table(alpha, r).ok_or(PqError::InvalidConfig(
            "alpha too large for a 64-bit curvature",
        ))?;
        let shift = 1.0 / (r - 1.0) + 0.5;
        let max_search_offset = Self::search_offset_bound(&weights, shift).min(buckets);
        let top = weights.len() as u32 - 1;
        let mut prefix = Vec::with_capacity(weights.len() + 1);
        let (mut a, mut b) = (0u64, 0u64);
        prefix.push((a, b));
        for (d, &w) in (0u32..).zip(&weights) {
            a += w;
            b += w * u64::from(top - d);
            prefix.push((a, b));
        }
        Ok(Self {
            lists: BucketLists::new(buckets, capacity)?,
            occupied: vec![0; buckets.div_ceil(64) as usize],
            prefix,
            top,
            follow_at: weights.len() as u32 / 2 / alpha * alpha,
            weights,
            a: 0,
            b: 0,
            origin: 0,
            min: NONE,
            shift,
            alpha,
            base,
            buckets,
            cur: NONE,
            max_search_offset,
            lookups: 0,
            fallback_searches: 0,
            rebases: 0,
        })
    }

    /// Worst case over the minimum's position `M` (weight index) of how far
    /// below `M` the estimate can fall: every lower index occupied gives
    /// `M - b/a ≤ Σ_{i<M} (M - i)·w_i / w_M`, minus the shift.
    fn search_offset_bound(weights: &[u64], shift: f64) -> u32 {
        let v = weights.len();
        let (mut p, mut q) = (0.0f64, 0.0f64);
        let mut worst = 0.0f64;
        for m in 0..v {
            let w_m = weights[v - 1 - m] as f64;
            let dev = (m as f64 * p - q) / w_m;
            worst = worst.max(dev - shift + 1.0);
            p += w_m;
            q += m as f64 * w_m;
        }
        // +1 for rounding in the estimate; ceil without `f64::ceil` (no_std).
        worst as u32 + 2
    }

    /// The α in use.
    pub fn alpha(&self) -> u32 {
        self.alpha
    }

    /// Buckets the curvature sees at once (`W = (Q + 1)·α`; 544 at α = 16).
    pub fn window(&self) -> u32 {
        self.top + 1
    }

    /// Documented error bound: the search for the minimum starts at most
    /// this many buckets past the true minimum bucket.
    pub fn max_search_offset(&self) -> u32 {
        self.max_search_offset
    }

    /// Lookups of the minimum by extractions: one per emptied bucket (and
    /// per extraction after a change by `insert` or `remove`).
    pub fn lookups(&self) -> u64 {
        self.lookups
    }

    /// Lookups whose estimate landed on an empty bucket, so that the
    /// linear search found the bucket served.
    pub fn fallback_searches(&self) -> u64 {
        self.fallback_searches
    }

    /// Times the window was recomputed from the bitmap (an insert before
    /// the origin, or a jump of the minimum past the whole window).
    pub fn rebases(&self) -> u64 {
        self.rebases
    }

    #[inline(always)]
    fn is_occupied(&self, j: u32) -> bool {
        self.occupied
            .get((j / 64) as usize)
            .is_some_and(|w| w >> (j % 64) & 1 == 1)
    }

    /// First occupied bucket at or after `from` (linear, word at a time).
    #[inline]
    fn next_occupied(&self, from: u32) -> Option<u32> {
        let mut wi = (from / 64) as usize;
        let mut w = *self.occupied.get(wi)? & (u64::MAX << (from % 64));
        loop {
            if w != 0 {
                return Some(wi as u32 * 64 + w.trailing_zeros());
            }
            wi += 1;
            w = *self.occupied.get(wi)?;
        }
    }

    /// Bucket `j`'s `(w, i·w)` terms, zero outside the window.
    #[inline(always)]
    fn terms(&self, j: u32) -> (u64, u64) {
        let d = j.wrapping_sub(self.origin);
        match self.weights.get(d as usize) {
            Some(&w) => (w, w * u64::from(self.top - d)),
            None => (0, 0),
        }
    }

    /// Adds the weights of the occupied buckets in `from..to` (`from` at
    /// or after the origin), a bitmap word at a time; a fully occupied
    /// stretch of a word costs two prefix-sum differences.
    fn add_occupied(&mut self, from: u32, to: u32) {
        let origin = self.origin;
        let to = to
            .min(self.buckets)
            .min(origin.saturating_add(self.top + 1));
        let (mut a, mut b) = (self.a, self.b);
        let mut lo = from;
        while lo < to {
            let wi = lo / 64;
            let hi = (u64::from(wi + 1) * 64).min(u64::from(to)) as u32;
            let mask = (u64::MAX << (lo % 64)) & (u64::MAX >> (63 - (hi - 1) % 64));
            let mut word = self.occupied[wi as usize] & mask;
            let (d_lo, d_hi) = ((lo - origin) as usize, (hi - origin) as usize);
            if word == mask {
                a += self.prefix[d_hi].0 - self.prefix[d_lo].0;
                b += self.prefix[d_hi].1 - self.prefix[d_lo].1;
            } else {
                while word != 0 {
                    let d = wi * 64 + word.trailing_zeros() - origin;
                    word &= word - 1;
                    let w = self.weights[d as usize];
                    a += w;
                    b += w * u64::from(self.top - d);
                }
            }
            lo = hi;
        }
        self.a = a;
        self.b = b;
    }

    /// Moves the origin to `origin` (≤ every occupied bucket) and recomputes
    /// the curvature over the window from the bitmap.
    #[inline(never)]
    fn rebase(&mut self, origin: u32) {
        self.rebases += 1;
        self.origin = origin;
        self.a = 0;
        self.b = 0;
        self.add_occupied(origin, origin.saturating_add(self.top + 1));
    }

    /// The minimum's bucket emptied (or was removed): finds the next one
    /// and keeps it within the window's first half by moving the
    /// origin forward by whole multiples of α (exact doubling of weights)
    /// or, past the whole window, recomputing the window at it. `next` is
    /// the next occupied bucket if already known.
    #[inline(always)]
    fn min_emptied(&mut self, j: u32, next: u32) {
        self.min = if next != NONE {
            next
        } else {
            self.next_occupied(j).unwrap_or(NONE)
        };
        if self.min != NONE && self.min - self.origin >= self.follow_at {
            self.follow_minimum();
        }
    }

    #[inline(never)]
    fn follow_minimum(&mut self) {
        let k = (self.min - self.origin) / self.alpha;
        let s = k * self.alpha;
        if s > self.top {
            self.rebase(self.min);
        } else {
            // Buckets origin..origin + s are empty, so every weighed bucket
            // moves down by s: i → i + s and w → w·2^k.
            self.b = (self.b + u64::from(s) * self.a) << k;
            self.a <<= k;
            let old_end = self.origin + self.top + 1;
            self.origin += s;
            self.add_occupied(old_end, old_end.saturating_add(s));
        }
    }

    /// One-division estimate of the minimum bucket, then the linear search.
    /// Returns the bucket to serve (or [`NONE`]) and whether the search was
    /// needed.
    #[inline(always)]
    fn locate(&self) -> (u32, bool) {
        if self.a == 0 {
            // Nothing in the window: the (exact) search finds what is left.
            return (self.min, true);
        }
        self.resolve(self.estimate())
    }

    /// The one-division estimate `origin + (W - 1 - round(b/a - u(α)))`;
    /// `a` must be non-zero.
    #[inline(always)]
    fn estimate(&self) -> u32 {
        // Both are below 2^63 (see `weight_table`): one signed conversion
        // each instead of the unsigned sequence.
        let mean = self.b as i64 as f64 / self.a as i64 as f64;
        let i_est = ((mean + self.shift) as u32).min(self.top);
        self.origin.saturating_add(self.top - i_est)
    }

    /// The estimate if its bucket is occupied, else the linear search.
    #[inline(always)]
    fn resolve(&self, j_est: u32) -> (u32, bool) {
        if self.is_occupied(j_est) {
            return (j_est, false);
        }
        self.search_from(j_est)
    }

    /// The linear search from an estimate that landed on an empty bucket.
    #[inline(never)]
    fn search_from(&self, j_est: u32) -> (u32, bool) {
        let found = self
            .next_occupied(j_est)
            .or_else(|| self.next_occupied(self.origin));
        (found.unwrap_or(NONE), true)
    }

    #[inline(always)]
    fn count_lookup(&mut self, searched: bool) {
        self.lookups += 1;
        if searched {
            self.fallback_searches += 1;
        }
    }

    /// The bucket the next extraction serves: the cached answer, or
    /// [`Self::locate`]'s (without caching it).
    #[inline]
    fn located(&self) -> u32 {
        if self.cur == NONE {
            self.locate().0
        } else {
            self.cur
        }
    }

    /// [`Self::locate`] when the cached answer was invalidated by an insert
    /// or a removal.
    #[cold]
    #[inline(never)]
    fn relocate(&mut self) -> u32 {
        let (j, searched) = self.locate();
        self.cur = j;
        self.count_lookup(searched);
        j
    }

    /// Bucket `j` is empty (served or removed): clears its bit, takes its
    /// weight out of the curvature and, if it was the minimum, moves on
    /// to the next one. Returns the next occupied bucket in the same bitmap
    /// word, or [`NONE`].
    #[inline(always)]
    fn unmark(&mut self, j: u32) -> u32 {
        let mut next = NONE;
        if let Some(word) = self.occupied.get_mut((j / 64) as usize) {
            *word &= !(1 << (j % 64));
            let after = *word & (u64::MAX << (j % 64));
            if after != 0 {
                next = j & !63 | after.trailing_zeros();
            }
        }
        let (w, wi) = self.terms(j);
        self.a -= w;
        self.b -= wi;
        // (The window empties only with its lowest bucket, the minimum.)
        if j == self.min {
            self.min_emptied(j, next);
        }
        next
    }

    /// Bucket `j` (just served) is empty: [`Self::unmark`], then locate the
    /// next minimum.
    #[inline(always)]
    fn emptied(&mut self, j: u32) {
        // The guess the next pop proceeds with while the division runs
        // (see the module doc).
        let guess = self.unmark(j);
        if self.a == 0 {
            // Nothing in the window: the (exact) search finds what is left.
            self.count_lookup(true);
            self.cur = self.min;
            return;
        }
        let est = self.estimate();
        if est == guess {
            // The guess is occupied by construction: no occupancy test.
            self.count_lookup(false);
            self.cur = guess;
            return;
        }
        // An estimate on an empty bucket is often corrected to the guess
        // by the search (sparse queues): compare again.
        let (j, searched) = self.resolve(est);
        self.count_lookup(searched);
        self.cur = if j == guess { guess } else { mispredicted(j) };
    }
}

/// The bucket located when it differs from the bitmap's guess: a call, so
/// that the agreeing case stays a predicted branch that goes on with the
/// guess rather than a select that waits for the division. (`black_box`
/// keeps the compiler from seeing that the call returns its argument and
/// folding both arms into one.)
#[cold]
#[inline(never)]
fn mispredicted(j: u32) -> u32 {
    core::hint::black_box(j)
}

impl IntegerPriorityQueue for ApproxGradientQueue {
    #[inline(always)]
    fn insert(&mut self, handle: u32, rank: u64) -> Result<(), PqError> {
        let b = super::fixed_range_bucket(rank, self.base, self.lists.buckets())?;
        let j = b as u32;
        if self.lists.push_back_untagged(b, handle)? {
            self.cur = NONE;
            if let Some(word) = self.occupied.get_mut(b / 64) {
                *word |= 1 << (j % 64);
            }
            self.min = self.min.min(j);
            if self.lists.len() == 1 {
                // The only element: the window starts at it.
                self.origin = j;
                self.a = self.weights[0];
                self.b = self.weights[0] * u64::from(self.top);
            } else if j < self.origin {
                // Weights only grow toward the origin: move it back.
                self.rebase(j);
            } else {
                let (w, wi) = self.terms(j);
                self.a += w;
                self.b += wi;
            }
        }
        Ok(())
    }

    #[inline]
    fn peek_min(&self) -> Option<(u32, u64)> {
        let j = self.located();
        if j == NONE {
            return None;
        }
        let (handle, _) = self.lists.front(j)?;
        Some((handle, self.base + u64::from(j)))
    }

    #[inline(always)]
    fn extract_min(&mut self) -> Option<(u32, u64)> {
        let mut j = self.cur;
        if j == NONE {
            if self.lists.len() == 0 {
                return None;
            }
            j = self.relocate();
        }
        let (handle, now_empty) = self.lists.pop_front_untagged(j);
        if now_empty {
            self.emptied(j);
        }
        Some((handle, self.base + u64::from(j)))
    }

    fn remove(&mut self, handle: u32) -> bool {
        match self.lists.unlink(handle) {
            Some((j, now_empty)) => {
                if now_empty {
                    self.cur = NONE;
                    self.unmark(j);
                }
                true
            }
            None => false,
        }
    }

    fn soonest_rank(&self) -> Option<u64> {
        let j = self.located();
        (j != NONE).then(|| self.base + u64::from(j))
    }

    fn len(&self) -> usize {
        self.lists.len()
    }

    fn capacity(&self) -> u32 {
        self.lists.capacity()
    }

    fn contains(&self, handle: u32) -> bool {
        self.lists.bucket_of(handle).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_fits_one_word_for_every_alpha() {
        for alpha in [1, 2, 16, 100, MAX_ALPHA] {
            let q = ApproxGradientQueue::new(0, 1 << 20, alpha, 1).unwrap();
            let w = &q.weights;
            assert_eq!(w.len() as u32 % alpha, 0);
            assert!(w.len() as u32 >= MIN_WINDOW_EXPONENTS * alpha);
            let sum: u128 = w.iter().map(|&x| u128::from(x)).sum();
            assert!((w.len() as u128 - 1) * sum < 1 << 63, "α={alpha}");
            // Shifting the origin by α doubles every weight exactly.
            for d in alpha as usize..w.len() {
                assert_eq!(w[d] << 1, w[d - alpha as usize], "α={alpha} d={d}");
            }
        }
        // The paper's example configuration: a few hundred buckets at α = 16.
        let q = ApproxGradientQueue::new(0, 10_000, 16, 1).unwrap();
        assert_eq!(q.window(), 544);
    }

    /// The incrementally shifted curvature equals a brute-force sum over
    /// the window, and the tracked minimum the true one, after every
    /// operation of a long drain with removals, over dense stretches (the
    /// prefix sums) and holes (the bit loop).
    #[test]
    fn shifted_curvature_matches_recomputation() {
        let buckets = 5000;
        let mut q = ApproxGradientQueue::new(0, buckets, 16, 3 * buckets).unwrap();
        let mut h = 0;
        for j in (0..buckets).filter(|j| j % 7 != 3 || !(1000..2500).contains(j)) {
            for _ in 0..1 + j % 3 {
                q.insert(h, u64::from(j)).unwrap();
                h += 1;
            }
        }
        let mut k = 0;
        loop {
            // Every fifth step removes a handle (queued or not) instead.
            k += 1;
            if k % 5 == 0 {
                q.remove(k * 7919 % h);
            } else if q.extract_min().is_none() {
                break;
            }
            assert_eq!(q.min, q.next_occupied(0).unwrap_or(NONE));
            let (mut a, mut b) = (0, 0);
            for d in 0..q.window() {
                if q.is_occupied(q.origin + d) {
                    a += q.weights[d as usize];
                    b += q.weights[d as usize] * u64::from(q.top - d);
                }
            }
            assert_eq!((q.a, q.b), (a, b), "origin {}", q.origin);
        }
    }
}
