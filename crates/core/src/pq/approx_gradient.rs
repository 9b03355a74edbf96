//! Approximate gradient queue (seed 002 §3.1.2, "Approximate Gradient
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
//! (seed 002 Fig. 14).
//!
//! Representation (choices the paper leaves open):
//! * `a` and `b` are exact `u128` integers built from integer weights, so
//!   add/subtract never drift (an `f64` sum loses the small terms when the
//!   large ones are subtracted as the minimum advances).
//! * Weights are relative to a moving *origin*: the origin bucket weighs
//!   `2^96` and bucket `origin + d` weighs `round(2^(96 - d/α))`, so the
//!   curvature sees a window of `96·α + 1` buckets (the paper's
//!   `I_0..I_max`: what one machine word can represent). When the minimum
//!   has moved half a window past the origin, or leaves the window, or an
//!   insert lands before it, the origin moves to the true minimum and `a`,
//!   `b` are recomputed from the bitmap ([`ApproxGradientQueue::rebases`]).
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

/// Exponent of the heaviest weight. With a window of at most 2^15 buckets,
/// `b ≤ (V - 1)·a < 2^15 · 2^15 · 2^96 = 2^126` fits a `u128`.
const TOP_EXPONENT: u32 = 96;
/// Largest accepted α (keeps the window ≤ 2^15 buckets).
pub const MAX_ALPHA: u32 = 341;

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

/// Approximate single-level gradient queue over ranks `base..base + buckets`.
pub struct ApproxGradientQueue {
    lists: BucketLists,
    /// Occupancy bits, one per bucket: the linear-search fallback.
    occupied: Vec<u64>,
    /// `weights[d]`: weight of bucket `origin + d`, for `d < window`.
    weights: Vec<u128>,
    a: u128,
    b: u128,
    origin: u32,
    window: u32,
    /// `-u(α) = 1/(2^(1/α) - 1) + 0.5`: the dense-case shift plus rounding.
    shift: f64,
    alpha: u32,
    base: u64,
    buckets: u32,
    max_search_offset: u32,
    fallback_searches: u64,
    rebases: u64,
    /// [`Self::locate`]'s last answer, valid until `a`, `b`, the origin or
    /// the occupancy change (a pure function of those), so draining one
    /// bucket divides once, not once per element.
    located: Option<(u32, bool)>,
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
        let window = (TOP_EXPONENT * alpha + 1).min(buckets);
        let r = root_of_two(alpha);
        let mut weights = Vec::with_capacity(window as usize);
        let mut x = (1u128 << TOP_EXPONENT) as f64;
        for _ in 0..window {
            weights.push((x + 0.5) as u128);
            x /= r;
        }
        let shift = 1.0 / (r - 1.0) + 0.5;
        let max_search_offset = Self::search_offset_bound(&weights, shift).min(buckets);
        Ok(Self {
            lists: BucketLists::new(buckets, capacity)?,
            occupied: vec![0; buckets.div_ceil(64) as usize],
            weights,
            a: 0,
            b: 0,
            origin: 0,
            window,
            shift,
            alpha,
            base,
            buckets,
            max_search_offset,
            fallback_searches: 0,
            rebases: 0,
            located: None,
        })
    }

    /// Worst case over the minimum's position `M` (weight index) of how far
    /// below `M` the estimate can fall: every lower index occupied gives
    /// `M - b/a ≤ Σ_{i<M} (M - i)·w_i / w_M`, minus the shift.
    fn search_offset_bound(weights: &[u128], shift: f64) -> u32 {
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

    /// Buckets the curvature sees at once (`96·α + 1`, at most `buckets`).
    pub fn window(&self) -> u32 {
        self.window
    }

    /// Documented error bound: the search for the minimum starts at most
    /// this many buckets past the true minimum bucket.
    pub fn max_search_offset(&self) -> u32 {
        self.max_search_offset
    }

    /// Extractions whose estimate landed on an empty bucket (linear search).
    pub fn fallback_searches(&self) -> u64 {
        self.fallback_searches
    }

    /// Times the weight origin moved and `a`, `b` were recomputed.
    pub fn rebases(&self) -> u64 {
        self.rebases
    }

    #[inline]
    fn is_occupied(&self, j: u32) -> bool {
        self.occupied[(j / 64) as usize] >> (j % 64) & 1 == 1
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

    /// Adds (`sign = true`) or subtracts bucket `j`'s weight if it is in the
    /// window.
    #[inline]
    fn account(&mut self, j: u32, add: bool) {
        let d = j.wrapping_sub(self.origin);
        if j < self.origin || d >= self.window {
            return;
        }
        let w = self.weights[d as usize];
        let wb = w * u128::from(self.window - 1 - d);
        if add {
            self.a += w;
            self.b += wb;
        } else {
            self.a -= w;
            self.b -= wb;
        }
    }

    /// Moves the origin to `origin` (≤ every occupied bucket) and recomputes
    /// the curvature over the window from the bitmap.
    fn rebase(&mut self, origin: u32) {
        self.rebases += 1;
        self.origin = origin;
        self.a = 0;
        self.b = 0;
        let end = origin.saturating_add(self.window).min(self.buckets);
        let mut j = origin;
        while let Some(k) = self.next_occupied(j) {
            if k >= end {
                break;
            }
            self.account(k, true);
            j = k + 1;
        }
    }

    /// One-division estimate of the minimum bucket, then the linear search.
    /// Returns the bucket to serve and whether the search was needed.
    #[inline]
    fn locate(&self) -> Option<(u32, bool)> {
        if self.a == 0 {
            // Nothing in the window: the (exact) search finds what is left.
            return self.next_occupied(self.origin).map(|j| (j, true));
        }
        // Scale both to 64 bits, keeping ≥ 49 significant bits of `a`.
        let s = (128 - self.b.leading_zeros()).saturating_sub(64);
        let mean = (self.b >> s) as u64 as f64 / (self.a >> s) as u64 as f64;
        let top = u64::from(self.window - 1);
        let i_est = ((mean + self.shift) as u64).min(top);
        let j_est = self.origin + (top - i_est) as u32;
        if self.is_occupied(j_est) {
            return Some((j_est, false));
        }
        self.next_occupied(j_est)
            .or_else(|| self.next_occupied(self.origin))
            .map(|j| (j, true))
    }
}

impl IntegerPriorityQueue for ApproxGradientQueue {
    #[inline]
    fn insert(&mut self, handle: u32, rank: u64) -> Result<(), PqError> {
        let b = super::fixed_range_bucket(rank, self.base, self.lists.buckets())?;
        let j = b as u32;
        if self.lists.push_back(b, handle, None)? {
            self.located = None;
            self.occupied[(j / 64) as usize] |= 1 << (j % 64);
            if j < self.origin || self.lists.len() == 1 {
                // Weights only grow toward the origin: move it back (or
                // onto the first element of an empty queue).
                self.rebase(j);
            } else {
                self.account(j, true);
            }
        }
        Ok(())
    }

    #[inline]
    fn peek_min(&self) -> Option<(u32, u64)> {
        let j = self.locate()?.0;
        let (handle, _) = self.lists.front(j)?;
        Some((handle, self.base + u64::from(j)))
    }

    #[inline]
    fn extract_min(&mut self) -> Option<(u32, u64)> {
        let (j, searched) = match self.located {
            Some(l) => l,
            None => {
                let l = self.locate()?;
                self.located = Some(l);
                l
            }
        };
        self.fallback_searches += u64::from(searched);
        let (handle, now_empty) = self.lists.pop_front_untagged(j);
        if now_empty {
            self.located = None;
            self.occupied[(j / 64) as usize] &= !(1 << (j % 64));
            self.account(j, false);
            if self.a == 0 || j - self.origin > self.window / 2 {
                // Keep the minimum in the heavy half of the window.
                if let Some(min) = self.next_occupied(self.origin) {
                    self.rebase(min);
                }
            }
        }
        Some((handle, self.base + u64::from(j)))
    }

    fn remove(&mut self, handle: u32) -> bool {
        match self.lists.unlink(handle) {
            Some((j, now_empty)) => {
                if now_empty {
                    self.located = None;
                    self.occupied[(j / 64) as usize] &= !(1 << (j % 64));
                    self.account(j, false);
                }
                true
            }
            None => false,
        }
    }

    fn soonest_rank(&self) -> Option<u64> {
        Some(self.base + u64::from(self.locate()?.0))
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
