//! Circular hierarchical FFS-based queue, cFFS (the Eiffel paper §3.1.1,
//! Fig. 4).
//!
//! Two [`HierarchicalBitmap`]s of `N` buckets each cover a moving window of
//! `2N` ranks: the *primary* half holds ranks `base..base + N`, the
//! *secondary* (buffer) half the next `N`. When the primary empties, the two
//! halves swap roles in O(1) (a flag flips and `base` advances by `N`): the
//! old secondary's bitmap and buckets become the primary without copying.
//!
//! Out-of-window ranks are clamped as the paper says, and counted:
//! a rank below `base` goes to the first primary bucket
//! ([`CircularFfsQueue::clamped_low`]) and one past the window to the last
//! secondary bucket ([`CircularFfsQueue::clamped_high`]); both keep FIFO order
//! within that bucket but lose their relative rank order.
//!
//! Window policy (choices the paper leaves open):
//! * an insert into an empty queue keeps the window if the rank falls
//!   inside it, and otherwise re-bases it on `rank - rank % N`, so a fresh
//!   burst never clamps below its first rank (keeping the window matters
//!   when ranks arrive out of order: re-basing on the first of them would
//!   clamp every lower one);
//! * an insert past the window while the primary is empty swaps first, which
//!   extends the window instead of clamping;
//! * otherwise the swap is lazy, on the extract that finds the primary empty.
//!
//! The minimum's window offset is cached (`cur`): an insert lowers it, and
//! only the operation that empties the minimum bucket looks for the next
//! one — a single leaf-word FFS when it shares the word, else the full
//! O(log₆₄ N) descent. Draining a bucket therefore costs no bitmap work per
//! element.

use super::bucket_lists::BucketLists;
use super::hierarchical_ffs::HierarchicalBitmap;
use super::{IntegerPriorityQueue, PqError};

/// cFFS: a min-queue over a moving window of `2 * buckets_per_half` ranks.
/// # Examples
///
/// ```
/// use fairway_core::pq::{CircularFfsQueue, IntegerPriorityQueue};
///
/// // A window of 2048 ranks starting at 0 that moves with the minimum;
/// // handles 0..8.
/// let mut q = CircularFfsQueue::new(1024, 8).unwrap();
/// q.insert(5, 130).unwrap();
/// q.insert(2, 110).unwrap();
/// q.insert(7, 110).unwrap(); // same bucket as handle 2: FIFO order
/// assert!(q.insert(5, 120).is_err()); // handle 5 is already queued
/// assert!(q.remove(5)); // O(1), by handle
/// assert_eq!(q.extract_min(), Some((2, 110)));
/// assert_eq!(q.extract_min(), Some((7, 110)));
/// assert!(q.is_empty());
/// ```
pub struct CircularFfsQueue {
    /// Buckets `0..N` belong to half 0 and `N..2N` to half 1.
    lists: BucketLists,
    bitmaps: [HierarchicalBitmap; 2],
    /// Which half is the primary (0 or 1).
    primary: usize,
    /// First bucket id of the primary half (`primary * N`).
    pstart: u32,
    /// First rank of the primary half.
    base: u64,
    half: u32,
    clamped_low: u64,
    clamped_high: u64,
    /// Window offset (`0..2N`, primary first) of the minimum non-empty
    /// bucket, [`EMPTY`] when nothing is queued. Always exact.
    cur: u32,
}

/// `cur` of an empty queue (above every offset, so any insert lowers it).
const EMPTY: u32 = u32::MAX;

impl CircularFfsQueue {
    /// A queue whose window spans `2 * buckets_per_half` ranks, starting at
    /// rank 0, for handles `0..capacity`.
    pub fn new(buckets_per_half: u32, capacity: u32) -> Result<Self, PqError> {
        if buckets_per_half == 0 || buckets_per_half > u32::MAX / 2 {
            return Err(PqError::InvalidConfig(
                "cFFS needs 1..=2^31-1 buckets per half",
            ));
        }
        Ok(Self {
            lists: BucketLists::new(2 * buckets_per_half, capacity)?,
            bitmaps: [
                HierarchicalBitmap::new(buckets_per_half),
                HierarchicalBitmap::new(buckets_per_half),
            ],
            primary: 0,
            pstart: 0,
            base: 0,
            half: buckets_per_half,
            clamped_low: 0,
            clamped_high: 0,
            cur: EMPTY,
        })
    }

    /// First rank of the primary half; the window is `base..base + 2N`.
    pub fn window_start(&self) -> u64 {
        self.base
    }

    /// Buckets per half (`N`).
    pub fn buckets_per_half(&self) -> u32 {
        self.half
    }

    /// Inserts whose rank was below the window (served as its first rank).
    pub fn clamped_low(&self) -> u64 {
        self.clamped_low
    }

    /// Inserts whose rank was past the window (served as its last rank).
    pub fn clamped_high(&self) -> u64 {
        self.clamped_high
    }

    /// Depth of each half's bitmap tree.
    pub fn depth(&self) -> u32 {
        self.bitmaps[0].depth()
    }

    /// O(1) rotation: the secondary becomes the primary.
    #[inline]
    fn swap_halves(&mut self) {
        self.primary ^= 1;
        self.pstart = self.half - self.pstart;
        self.base = self.base.saturating_add(u64::from(self.half));
        // Only called with the primary empty: the minimum is in the old
        // secondary (or nothing is queued).
        if self.cur != EMPTY {
            self.cur -= self.half;
        }
    }

    /// Recomputes `cur` from the bitmaps; `from` is a window offset below
    /// which nothing is queued.
    #[inline]
    fn refresh_min(&mut self, from: u32) {
        let p = self.primary;
        let n = self.half;
        self.cur = if from < n {
            match self.bitmaps[p].first_from(from) {
                Some(i) => i,
                None => self.bitmaps[p ^ 1].first().map_or(EMPTY, |i| i + n),
            }
        } else {
            self.bitmaps[p ^ 1]
                .first_from(from - n)
                .map_or(EMPTY, |i| i + n)
        };
    }

    /// Marks bucket id `bucket` non-empty in its half's bitmap.
    #[inline(always)]
    fn set_bucket(&mut self, bucket: u32) {
        // Branch-free choice of the half (see `insert`).
        let upper = bucket >= self.half;
        let index = bucket - (self.half & u32::from(upper).wrapping_neg());
        self.bitmaps[usize::from(upper)].set(index);
    }

    /// Insert of a handle whose rank is outside the window: checks the
    /// handle, then re-bases (empty queue), rotates or clamps.
    #[inline(never)]
    fn insert_slow(&mut self, handle: u32, rank: u64) -> Result<(), PqError> {
        self.lists.check_insert(handle)?;
        let n = u64::from(self.half);
        if self.lists.len() == 0 {
            self.base = rank - rank % n;
        } else if rank.saturating_sub(self.base) >= 2 * n && self.bitmaps[self.primary].is_empty() {
            // The secondary is non-empty (len > 0): promote it, which moves
            // the window forward instead of clamping the new rank.
            self.swap_halves();
        }
        // Clamped elements keep their own rank aside (tagged); the others'
        // rank is their bucket's.
        let (offset, tagged) = if rank < self.base {
            self.clamped_low += 1;
            (0, Some(rank))
        } else if rank - self.base >= 2 * n {
            self.clamped_high += 1;
            (2 * n - 1, Some(rank))
        } else {
            (rank - self.base, None)
        };
        let (half, index) = if offset < n {
            (self.primary, offset as u32)
        } else {
            (self.primary ^ 1, (offset - n) as u32)
        };
        if self
            .lists
            .push_back(self.bucket_id(half, index) as usize, handle, tagged)?
        {
            self.bitmaps[half].set(index);
        }
        self.cur = self.cur.min(offset as u32);
        Ok(())
    }

    /// The non-empty (half, index) holding the minimum, without swapping.
    #[inline]
    fn min_slot(&self) -> Option<(usize, u32)> {
        if self.cur == EMPTY {
            None
        } else if self.cur < self.half {
            Some((self.primary, self.cur))
        } else {
            Some((self.primary ^ 1, self.cur - self.half))
        }
    }

    #[inline]
    fn bucket_id(&self, half: usize, index: u32) -> u32 {
        half as u32 * self.half + index
    }

    #[inline]
    fn slot_rank(&self, half: usize, index: u32) -> u64 {
        let offset = if half == self.primary {
            0
        } else {
            u64::from(self.half)
        };
        self.base.saturating_add(offset + u64::from(index))
    }
}

impl IntegerPriorityQueue for CircularFfsQueue {
    // Forced inline (as `extract_min`): out of line, the register saves
    // and the returned value cost ~25 instructions per call (callgrind),
    // a fifth of a fill-drain's work per element.
    #[inline(always)]
    fn insert(&mut self, handle: u32, rank: u64) -> Result<(), PqError> {
        let offset = rank.wrapping_sub(self.base);
        if rank < self.base || offset >= 2 * u64::from(self.half) {
            return self.insert_slow(handle, rank);
        }
        // Bucket id of window offset `offset`: the primary half starts at
        // `primary * N`, the secondary follows it circularly.
        // Branch-free: with ranks in random order the wrap is a coin flip,
        // and a mispredicted branch here cost more than the rest of the
        // insert.
        let offset = offset as u32;
        let bucket = self.pstart + offset;
        let bucket = bucket - ((2 * self.half) & u32::from(bucket >= 2 * self.half).wrapping_neg());
        // Only a bucket that was empty can be below the minimum (`cur` is
        // exact).
        if self.lists.push_back(bucket as usize, handle, None)? {
            self.set_bucket(bucket);
            self.cur = self.cur.min(offset);
        }
        Ok(())
    }

    #[inline]
    fn peek_min(&self) -> Option<(u32, u64)> {
        let (half, index) = self.min_slot()?;
        let (handle, tagged) = self.lists.front(self.bucket_id(half, index))?;
        Some((
            handle,
            tagged.unwrap_or_else(|| self.slot_rank(half, index)),
        ))
    }

    #[inline(always)]
    fn extract_min(&mut self) -> Option<(u32, u64)> {
        if self.cur >= self.half {
            if self.cur == EMPTY {
                return None;
            }
            // The primary is empty: rotate (O(1)), the minimum moves with it.
            self.swap_halves();
        }
        let index = self.cur;
        let bucket_rank = self.base + u64::from(index);
        let (handle, rank, now_empty) = self
            .lists
            .pop_front_ranked(self.pstart + index, bucket_rank);
        if now_empty {
            // `index` is the primary's lowest bit: clear it and take the
            // next from the same leaf word, else the other half's first.
            let p = self.primary & 1;
            self.cur = match self.bitmaps[p].clear_min(index) {
                Some(i) => i,
                None => self.bitmaps[p ^ 1].first().map_or(EMPTY, |i| i + self.half),
            };
        }
        Some((handle, rank))
    }

    fn remove(&mut self, handle: u32) -> bool {
        match self.lists.unlink(handle) {
            Some((bucket, now_empty)) => {
                if now_empty {
                    let half = (bucket >= self.half) as usize;
                    let index = bucket - half as u32 * self.half;
                    self.bitmaps[half].clear(index);
                    let offset = if half == self.primary {
                        index
                    } else {
                        index + self.half
                    };
                    if offset == self.cur {
                        self.refresh_min(offset);
                    }
                }
                true
            }
            None => false,
        }
    }

    fn soonest_rank(&self) -> Option<u64> {
        let (half, index) = self.min_slot()?;
        Some(self.slot_rank(half, index))
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
