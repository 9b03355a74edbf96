//! Hierarchical FFS-based queue (the Eiffel paper §3.1.1, Fig. 3).
//!
//! [`HierarchicalBitmap`] is a tree of 64-bit occupancy words: bit `i` of a
//! leaf word says whether bucket `i` is non-empty, and bit `j` of a word one
//! level up says whether leaf word `j` has any bit set. Finding the first
//! non-empty bucket is one `trailing_zeros` per level, so every operation is
//! O(log_64 N) with a depth fixed when the queue is built (3 levels cover
//! 262 144 buckets). [`HierarchicalFfsQueue`] puts per-bucket FIFO lists
//! under the bitmap over a fixed rank range; the circular variant
//! ([`super::CircularFfsQueue`]) reuses the bitmap for its two halves.

use super::bucket_lists::BucketLists;
use super::{IntegerPriorityQueue, PqError};
use alloc::vec;
use alloc::vec::Vec;

/// Bits per bitmap word (the FFS width `w` of the paper).
pub const WORD_BITS: u32 = 64;
/// 64^6 > u32::MAX, so six levels cover every bucket count.
const MAX_LEVELS: usize = 6;

/// Number of levels of a 64-ary occupancy tree over `buckets` leaves:
/// ⌈log_64 N⌉, and 1 for N ≤ 64 (a single word is still one level).
pub fn bitmap_depth(buckets: u32) -> u32 {
    let mut depth = 1;
    let mut words = buckets.div_ceil(WORD_BITS);
    while words > 1 {
        depth += 1;
        words = words.div_ceil(WORD_BITS);
    }
    depth
}

/// A 64-ary tree of occupancy bits over `0..buckets`.
#[derive(Clone)]
pub struct HierarchicalBitmap {
    /// All levels in one allocation; `offsets[0]` is the leaf level.
    words: Vec<u64>,
    offsets: [usize; MAX_LEVELS],
    depth: usize,
    buckets: u32,
}

impl HierarchicalBitmap {
    /// An empty bitmap over `buckets` bits (at least one).
    pub fn new(buckets: u32) -> Self {
        let buckets = buckets.max(1);
        let depth = bitmap_depth(buckets) as usize;
        let mut offsets = [0; MAX_LEVELS];
        let mut total = 0usize;
        let mut bits = buckets;
        for offset in offsets.iter_mut().take(depth) {
            *offset = total;
            let words = bits.div_ceil(WORD_BITS);
            total += words as usize;
            bits = words;
        }
        Self {
            words: vec![0; total],
            offsets,
            depth,
            buckets,
        }
    }

    /// Number of bits.
    pub fn buckets(&self) -> u32 {
        self.buckets
    }

    /// Levels in the tree (⌈log_64 N⌉, at least 1).
    pub fn depth(&self) -> u32 {
        self.depth as u32
    }

    /// True if no bit is set (one load: the root word).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.words[self.offsets[self.depth - 1]] == 0
    }

    /// Sets bit `i` (< buckets); stops climbing at the first level whose
    /// word was already non-zero, since its parent bit is already set.
    #[inline(always)]
    pub fn set(&mut self, i: u32) {
        // The leaf level is at offset 0.
        let w = &mut self.words[(i / WORD_BITS) as usize];
        let was = *w;
        *w = was | 1 << (i % WORD_BITS);
        if was == 0 && self.depth > 1 {
            self.set_upper(i / WORD_BITS);
        }
    }

    #[inline(never)]
    fn set_upper(&mut self, i: u32) {
        let mut i = i as usize;
        for level in 1..self.depth {
            let w = &mut self.words[self.offsets[level] + i / 64];
            let was = *w;
            *w = was | (1u64 << (i % 64));
            if was != 0 {
                break;
            }
            i /= 64;
        }
    }

    /// Clears bit `i` (< buckets); climbs only while words become zero.
    #[inline(always)]
    pub fn clear(&mut self, i: u32) {
        let w = &mut self.words[(i / WORD_BITS) as usize];
        *w &= !(1 << (i % WORD_BITS));
        if *w == 0 && self.depth > 1 {
            self.clear_upper(i / WORD_BITS);
        }
    }

    #[inline(never)]
    fn clear_upper(&mut self, i: u32) {
        let mut i = i as usize;
        for level in 1..self.depth {
            let w = &mut self.words[self.offsets[level] + i / 64];
            *w &= !(1u64 << (i % 64));
            if *w != 0 {
                break;
            }
            i /= 64;
        }
    }

    /// True if bit `i` is set.
    #[inline]
    pub fn contains(&self, i: u32) -> bool {
        let i = i as usize;
        self.words[i / 64] >> (i % 64) & 1 == 1
    }

    /// Index of the lowest set bit: one FFS (`trailing_zeros`) per level.
    #[inline]
    pub fn first(&self) -> Option<u32> {
        let mut idx = 0usize;
        let mut level = self.depth;
        while level > 0 {
            level -= 1;
            let w = self.words[self.offsets[level] + idx];
            if w == 0 {
                return None; // only possible at the root
            }
            idx = idx * 64 + w.trailing_zeros() as usize;
        }
        Some(idx as u32)
    }

    /// Lowest set bit, given that no bit below `from` is set: one leaf-word
    /// FFS when `from`'s word still has a bit at or above it (the common
    /// case right after the minimum bucket emptied), else [`Self::first`].
    #[inline]
    pub fn first_from(&self, from: u32) -> Option<u32> {
        let wi = (from / WORD_BITS) as usize;
        let w = self.words[wi] & (u64::MAX << (from % WORD_BITS));
        if w != 0 {
            Some(wi as u32 * WORD_BITS + w.trailing_zeros())
        } else {
            self.first()
        }
    }

    /// Clears bit `i`, which must be the lowest set bit, and returns the
    /// new lowest: [`Self::clear`] then [`Self::first_from`] in one pass.
    /// The leaf word stays in a register: clearing its lowest bit
    /// (`w & (w - 1)`) leaves the next candidate for `trailing_zeros`, with
    /// no mask and no reload (what a drain does after each emptied bucket).
    #[inline(always)]
    pub(crate) fn clear_min(&mut self, i: u32) -> Option<u32> {
        let wi = (i / WORD_BITS) as usize;
        let w = self.words[wi];
        debug_assert_eq!(
            w.trailing_zeros(),
            i % WORD_BITS,
            "clear_min: {i} is not the lowest set bit"
        );
        let rest = w & w.wrapping_sub(1);
        self.words[wi] = rest;
        if rest != 0 {
            return Some(wi as u32 * WORD_BITS + rest.trailing_zeros());
        }
        if self.depth > 1 {
            self.clear_upper(wi as u32);
        }
        self.first()
    }

    /// Lowest set bit at or after `from`, scanning leaf words linearly
    /// (used by the approximate gradient queue's fallback search).
    #[inline]
    pub fn next_set_from(&self, from: u32) -> Option<u32> {
        let leaves = &self.words[..self.buckets.div_ceil(WORD_BITS) as usize];
        let mut wi = from as usize / 64;
        let mut w = *leaves.get(wi)? & (u64::MAX << (from % 64));
        loop {
            if w != 0 {
                return Some((wi * 64) as u32 + w.trailing_zeros());
            }
            wi += 1;
            w = *leaves.get(wi)?;
        }
    }
}

/// Bucketed min-queue over the fixed rank range `base..base + buckets`, with
/// a [`HierarchicalBitmap`] over the buckets and FIFO order inside each.
/// # Examples
///
/// ```
/// use fairway_core::pq::{HierarchicalFfsQueue, IntegerPriorityQueue};
///
/// // Ranks 100..10100, handles 0..8.
/// let mut q = HierarchicalFfsQueue::new(100, 10_000, 8).unwrap();
/// q.insert(5, 130).unwrap();
/// q.insert(2, 110).unwrap();
/// q.insert(7, 110).unwrap(); // same bucket as handle 2: FIFO order
/// assert!(q.insert(5, 120).is_err()); // handle 5 is already queued
/// assert!(q.remove(5)); // O(1), by handle
/// assert_eq!(q.extract_min(), Some((2, 110)));
/// assert_eq!(q.extract_min(), Some((7, 110)));
/// assert!(q.is_empty());
/// ```
pub struct HierarchicalFfsQueue {
    lists: BucketLists,
    bitmap: HierarchicalBitmap,
    base: u64,
    /// The minimum non-empty bucket (`u32::MAX` when empty): lowered by
    /// inserts, recomputed only when that bucket empties.
    cur: u32,
}

impl HierarchicalFfsQueue {
    /// A queue for ranks `base..base + buckets` and handles `0..capacity`.
    pub fn new(base: u64, buckets: u32, capacity: u32) -> Result<Self, PqError> {
        if buckets == 0 || base.checked_add(u64::from(buckets)).is_none() {
            return Err(PqError::InvalidConfig(
                "buckets must be >= 1 and base + buckets must fit in u64",
            ));
        }
        Ok(Self {
            lists: BucketLists::new(buckets, capacity)?,
            bitmap: HierarchicalBitmap::new(buckets),
            base,
            cur: u32::MAX,
        })
    }

    /// Levels of the occupancy tree.
    pub fn depth(&self) -> u32 {
        self.bitmap.depth()
    }
}

impl IntegerPriorityQueue for HierarchicalFfsQueue {
    // Forced inline, as the gradient queue's and cFFS's: out of line, the
    // register saves and the returned value cost ~25 instructions per call.
    #[inline(always)]
    fn insert(&mut self, handle: u32, rank: u64) -> Result<(), PqError> {
        let i = super::fixed_range_bucket(rank, self.base, self.lists.buckets())?;
        let bucket = i as u32;
        // Only a bucket that was empty can be below the minimum.
        if self.lists.push_back_untagged(i, handle)? {
            self.bitmap.set(bucket);
            self.cur = self.cur.min(bucket);
        }
        Ok(())
    }

    #[inline]
    fn peek_min(&self) -> Option<(u32, u64)> {
        if self.cur == u32::MAX {
            return None;
        }
        let (handle, _) = self.lists.front(self.cur)?;
        Some((handle, self.base + u64::from(self.cur)))
    }

    #[inline(always)]
    fn extract_min(&mut self) -> Option<(u32, u64)> {
        let bucket = self.cur;
        if bucket == u32::MAX {
            return None;
        }
        let (handle, now_empty) = self.lists.pop_front_untagged(bucket);
        if now_empty {
            self.cur = self.bitmap.clear_min(bucket).unwrap_or(u32::MAX);
        }
        Some((handle, self.base + u64::from(bucket)))
    }

    fn remove(&mut self, handle: u32) -> bool {
        match self.lists.unlink(handle) {
            Some((bucket, now_empty)) => {
                if now_empty {
                    self.bitmap.clear(bucket);
                    if bucket == self.cur {
                        self.cur = self.bitmap.first_from(bucket).unwrap_or(u32::MAX);
                    }
                }
                true
            }
            None => false,
        }
    }

    fn soonest_rank(&self) -> Option<u64> {
        (self.cur != u32::MAX).then(|| self.base + u64::from(self.cur))
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
