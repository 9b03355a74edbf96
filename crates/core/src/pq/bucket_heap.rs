//! Bucketed binary heap, the "BH" baseline of the Eiffel paper §5.2: FIFO lists
//! per bucket plus a binary min-heap of the ids of non-empty buckets.
//!
//! Insert into an empty bucket and the extract that empties one cost
//! O(log B) for B non-empty buckets; the other operations are O(1). A bucket
//! emptied by [`IntegerPriorityQueue::remove`] is left in the heap and
//! skipped lazily (an `in_heap` flag prevents duplicates), so removal stays
//! O(1).

use super::bucket_lists::BucketLists;
use super::{IntegerPriorityQueue, PqError};
use alloc::vec;
use alloc::vec::Vec;

/// FIFO per bucket + binary heap of non-empty bucket ids, over ranks
/// `base..base + buckets`.
/// # Examples
///
/// ```
/// use fairway_core::pq::{BucketHeap, IntegerPriorityQueue};
///
/// // Ranks 100..10100, handles 0..8.
/// let mut q = BucketHeap::new(100, 10_000, 8).unwrap();
/// q.insert(5, 130).unwrap();
/// q.insert(2, 110).unwrap();
/// q.insert(7, 110).unwrap(); // same bucket as handle 2: FIFO order
/// assert!(q.insert(5, 120).is_err()); // handle 5 is already queued
/// assert!(q.remove(5)); // O(1), by handle
/// assert_eq!(q.extract_min(), Some((2, 110)));
/// assert_eq!(q.extract_min(), Some((7, 110)));
/// assert!(q.is_empty());
/// ```
pub struct BucketHeap {
    lists: BucketLists,
    /// Min-heap of bucket ids (ids order like ranks).
    heap: Vec<u32>,
    in_heap: Vec<bool>,
    base: u64,
}

impl BucketHeap {
    /// A queue for ranks `base..base + buckets` and handles `0..capacity`.
    pub fn new(base: u64, buckets: u32, capacity: u32) -> Result<Self, PqError> {
        if buckets == 0 || base.checked_add(u64::from(buckets)).is_none() {
            return Err(PqError::InvalidConfig(
                "buckets must be >= 1 and base + buckets must fit in u64",
            ));
        }
        Ok(Self {
            lists: BucketLists::new(buckets, capacity)?,
            heap: Vec::with_capacity(buckets as usize),
            in_heap: vec![false; buckets as usize],
            base,
        })
    }

    #[inline]
    fn sift_up(&mut self, mut pos: usize) {
        let id = self.heap[pos];
        while pos > 0 {
            let parent = (pos - 1) / 2;
            let p = self.heap[parent];
            if p <= id {
                break;
            }
            self.heap[pos] = p;
            pos = parent;
        }
        self.heap[pos] = id;
    }

    /// Removes the heap's top (heap non-empty).
    #[inline]
    fn pop_top(&mut self) {
        let last = self.heap.pop().unwrap_or_default();
        let n = self.heap.len();
        if n == 0 {
            return;
        }
        let mut pos = 0;
        loop {
            let left = 2 * pos + 1;
            if left >= n {
                break;
            }
            let right = left + 1;
            let child = if right < n && self.heap[right] < self.heap[left] {
                right
            } else {
                left
            };
            if self.heap[child] >= last {
                break;
            }
            self.heap[pos] = self.heap[child];
            pos = child;
        }
        self.heap[pos] = last;
    }

    /// Drops emptied buckets from the top, then returns the top bucket.
    #[inline]
    fn top(&mut self) -> Option<u32> {
        loop {
            let b = *self.heap.first()?;
            if !self.lists.is_bucket_empty(b) {
                return Some(b);
            }
            self.in_heap[b as usize] = false;
            self.pop_top();
        }
    }

    /// Smallest non-empty bucket without mutating (skips stale ids by scan
    /// of the heap only when the top is stale, which `extract_min` repairs).
    fn peek_bucket(&self) -> Option<u32> {
        let b = *self.heap.first()?;
        if !self.lists.is_bucket_empty(b) {
            return Some(b);
        }
        self.heap
            .iter()
            .copied()
            .filter(|&b| !self.lists.is_bucket_empty(b))
            .min()
    }
}

impl IntegerPriorityQueue for BucketHeap {
    #[inline]
    fn insert(&mut self, handle: u32, rank: u64) -> Result<(), PqError> {
        let i = super::fixed_range_bucket(rank, self.base, self.lists.buckets())?;
        let b = i as u32;
        if self.lists.push_back_untagged(i, handle)? && !self.in_heap[b as usize] {
            self.in_heap[b as usize] = true;
            self.heap.push(b);
            self.sift_up(self.heap.len() - 1);
        }
        Ok(())
    }

    fn peek_min(&self) -> Option<(u32, u64)> {
        let b = self.peek_bucket()?;
        let (handle, _) = self.lists.front(b)?;
        Some((handle, self.base + u64::from(b)))
    }

    #[inline]
    fn extract_min(&mut self) -> Option<(u32, u64)> {
        let b = self.top()?;
        let (handle, now_empty) = self.lists.pop_front_untagged(b);
        if now_empty {
            self.in_heap[b as usize] = false;
            self.pop_top();
        }
        Some((handle, self.base + u64::from(b)))
    }

    fn remove(&mut self, handle: u32) -> bool {
        self.lists.unlink(handle).is_some()
    }

    fn soonest_rank(&self) -> Option<u64> {
        Some(self.base + u64::from(self.peek_bucket()?))
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
