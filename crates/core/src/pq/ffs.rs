//! Flat FFS bitmap queue (the Eiffel paper §3.1.1, Fig. 2): one occupancy bit
//! per bucket in a few 64-bit words, scanned word by word.
//!
//! With M words, finding the minimum is O(M) `trailing_zeros` steps, which is
//! the fastest layout for small M (the Linux real-time scheduler's 100
//! priorities use two words). Limited to [`FfsQueue::MAX_BUCKETS`]; beyond
//! that use [`super::HierarchicalFfsQueue`].

use super::bucket_lists::BucketLists;
use super::{IntegerPriorityQueue, PqError};
use alloc::vec;
use alloc::vec::Vec;

/// Bucketed min-queue over `base..base + buckets` with a flat bitmap.
/// # Examples
///
/// ```
/// use fairway_core::pq::{FfsQueue, IntegerPriorityQueue};
///
/// // Ranks 100..164, handles 0..8.
/// let mut q = FfsQueue::new(100, 64, 8).unwrap();
/// q.insert(5, 130).unwrap();
/// q.insert(2, 110).unwrap();
/// q.insert(7, 110).unwrap(); // same bucket as handle 2: FIFO order
/// assert!(q.insert(5, 120).is_err()); // handle 5 is already queued
/// assert!(q.remove(5)); // O(1), by handle
/// assert_eq!(q.extract_min(), Some((2, 110)));
/// assert_eq!(q.extract_min(), Some((7, 110)));
/// assert!(q.is_empty());
/// ```
pub struct FfsQueue {
    lists: BucketLists,
    words: Vec<u64>,
    base: u64,
}

impl FfsQueue {
    /// Largest supported bucket count (16 words): past it a linear word scan
    /// loses to the hierarchical bitmap.
    pub const MAX_BUCKETS: u32 = 16 * 64;

    /// A queue for ranks `base..base + buckets` and handles `0..capacity`.
    pub fn new(base: u64, buckets: u32, capacity: u32) -> Result<Self, PqError> {
        if buckets == 0
            || buckets > Self::MAX_BUCKETS
            || base.checked_add(u64::from(buckets)).is_none()
        {
            return Err(PqError::InvalidConfig("FfsQueue supports 1..=1024 buckets"));
        }
        Ok(Self {
            lists: BucketLists::new(buckets, capacity)?,
            words: vec![0; buckets.div_ceil(64) as usize],
            base,
        })
    }

    #[inline]
    fn first(&self) -> Option<u32> {
        self.words
            .iter()
            .position(|&w| w != 0)
            .map(|i| i as u32 * 64 + self.words[i].trailing_zeros())
    }
}

impl IntegerPriorityQueue for FfsQueue {
    #[inline]
    fn insert(&mut self, handle: u32, rank: u64) -> Result<(), PqError> {
        let i = super::fixed_range_bucket(rank, self.base, self.lists.buckets())?;
        let bucket = i as u32;
        if self.lists.push_back_untagged(i, handle)? {
            self.words[(bucket / 64) as usize] |= 1 << (bucket % 64);
        }
        Ok(())
    }

    #[inline]
    fn peek_min(&self) -> Option<(u32, u64)> {
        let bucket = self.first()?;
        let (handle, _) = self.lists.front(bucket)?;
        Some((handle, self.base + u64::from(bucket)))
    }

    #[inline]
    fn extract_min(&mut self) -> Option<(u32, u64)> {
        let bucket = self.first()?;
        let (handle, now_empty) = self.lists.pop_front_untagged(bucket);
        if now_empty {
            self.words[(bucket / 64) as usize] &= !(1 << (bucket % 64));
        }
        Some((handle, self.base + u64::from(bucket)))
    }

    fn remove(&mut self, handle: u32) -> bool {
        match self.lists.unlink(handle) {
            Some((bucket, now_empty)) => {
                if now_empty {
                    self.words[(bucket / 64) as usize] &= !(1 << (bucket % 64));
                }
                true
            }
            None => false,
        }
    }

    fn soonest_rank(&self) -> Option<u64> {
        Some(self.base + u64::from(self.first()?))
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
