//! Plain binary min-heap of elements: the comparison-based baseline that
//! the Eiffel paper §5.2 reports bucketed queues beat by about 6x.
//!
//! Keys are `(rank, insertion sequence)`, so equal ranks leave in FIFO order
//! like the bucketed queues. A position index per handle makes `remove`
//! O(log n). Unlike the bucketed queues it accepts any `u64` rank.

use super::{IntegerPriorityQueue, PqError};
use alloc::vec;
use alloc::vec::Vec;

const ABSENT: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Entry {
    rank: u64,
    seq: u64,
    handle: u32,
}

impl Entry {
    #[inline]
    fn before(&self, other: &Entry) -> bool {
        (self.rank, self.seq) < (other.rank, other.seq)
    }
}

/// Binary heap of `(rank, seq, handle)` with handle positions.
/// # Examples
///
/// ```
/// use fairway_core::pq::{ElementBinaryHeap, IntegerPriorityQueue};
///
/// // Any rank, handles 0..8.
/// let mut q = Ok::<_, ()>(ElementBinaryHeap::new(8)).unwrap();
/// q.insert(5, 130).unwrap();
/// q.insert(2, 110).unwrap();
/// q.insert(7, 110).unwrap(); // same bucket as handle 2: FIFO order
/// assert!(q.insert(5, 120).is_err()); // handle 5 is already queued
/// assert!(q.remove(5)); // O(1), by handle
/// assert_eq!(q.extract_min(), Some((2, 110)));
/// assert_eq!(q.extract_min(), Some((7, 110)));
/// assert!(q.is_empty());
/// ```
pub struct ElementBinaryHeap {
    heap: Vec<Entry>,
    pos: Vec<u32>,
    seq: u64,
}

impl ElementBinaryHeap {
    /// An empty heap for handles `0..capacity`.
    pub fn new(capacity: u32) -> Self {
        Self {
            heap: Vec::with_capacity(capacity as usize),
            pos: vec![ABSENT; capacity as usize],
            seq: 0,
        }
    }

    #[inline]
    fn place(&mut self, i: usize, e: Entry) {
        self.heap[i] = e;
        self.pos[e.handle as usize] = i as u32;
    }

    #[inline]
    fn sift_up(&mut self, mut i: usize, e: Entry) -> usize {
        while i > 0 {
            let parent = (i - 1) / 2;
            let p = self.heap[parent];
            if !e.before(&p) {
                break;
            }
            self.place(i, p);
            i = parent;
        }
        self.place(i, e);
        i
    }

    #[inline]
    fn sift_down(&mut self, mut i: usize, e: Entry) {
        let n = self.heap.len();
        loop {
            let left = 2 * i + 1;
            if left >= n {
                break;
            }
            let right = left + 1;
            let child = if right < n && self.heap[right].before(&self.heap[left]) {
                right
            } else {
                left
            };
            let c = self.heap[child];
            if !c.before(&e) {
                break;
            }
            self.place(i, c);
            i = child;
        }
        self.place(i, e);
    }

    /// Removes the entry at heap index `i` and restores the heap.
    #[inline]
    fn take(&mut self, i: usize) -> Entry {
        let e = self.heap[i];
        self.pos[e.handle as usize] = ABSENT;
        let last = self.heap.pop().unwrap_or(e);
        if i < self.heap.len() {
            let at = self.sift_up(i, last);
            if at == i {
                self.sift_down(i, last);
            }
        }
        e
    }
}

impl IntegerPriorityQueue for ElementBinaryHeap {
    #[inline]
    fn insert(&mut self, handle: u32, rank: u64) -> Result<(), PqError> {
        match self.pos.get(handle as usize) {
            None => {
                return Err(PqError::HandleOutOfRange {
                    handle,
                    capacity: self.pos.len() as u32,
                })
            }
            Some(&p) if p != ABSENT => return Err(PqError::AlreadyQueued(handle)),
            Some(_) => {}
        }
        let e = Entry {
            rank,
            seq: self.seq,
            handle,
        };
        self.seq += 1;
        self.heap.push(e);
        self.sift_up(self.heap.len() - 1, e);
        Ok(())
    }

    fn peek_min(&self) -> Option<(u32, u64)> {
        self.heap.first().map(|e| (e.handle, e.rank))
    }

    #[inline]
    fn extract_min(&mut self) -> Option<(u32, u64)> {
        if self.heap.is_empty() {
            return None;
        }
        let e = self.take(0);
        Some((e.handle, e.rank))
    }

    fn remove(&mut self, handle: u32) -> bool {
        match self.pos.get(handle as usize) {
            Some(&p) if p != ABSENT => {
                self.take(p as usize);
                true
            }
            _ => false,
        }
    }

    fn soonest_rank(&self) -> Option<u64> {
        self.heap.first().map(|e| e.rank)
    }

    fn len(&self) -> usize {
        self.heap.len()
    }

    fn capacity(&self) -> u32 {
        self.pos.len() as u32
    }

    fn contains(&self, handle: u32) -> bool {
        matches!(self.pos.get(handle as usize), Some(&p) if p != ABSENT)
    }
}
