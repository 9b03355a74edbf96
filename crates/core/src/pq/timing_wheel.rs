//! Timing wheel (Varghese & Lauck, the Eiffel paper ref. \[54\]; the
//! Carousel-style time-slot queue the Eiffel paper compares against).
//!
//! `N` slots hold one FIFO list each; slot `t % N` holds the elements due at
//! time `t` for `t` in `now..now + N`. Insert is O(1); finding the next
//! element advances the cursor linearly over empty slots (no bitmap), which
//! is cheap when the wheel is dense or the caller advances with the clock,
//! and is what the FFS queues improve on when it is sparse. Like Carousel,
//! times before the cursor are served at the cursor and times past the
//! horizon go to the last slot; both are counted.

use super::bucket_lists::BucketLists;
use super::{IntegerPriorityQueue, PqError};

/// A timing wheel of `slots` one-unit slots starting at time 0.
/// # Examples
///
/// ```
/// use fairway_core::pq::{TimingWheel, IntegerPriorityQueue};
///
/// // 1024 one-unit slots from time 0, handles 0..8.
/// let mut q = TimingWheel::new(1024, 8).unwrap();
/// q.insert(5, 130).unwrap();
/// q.insert(2, 110).unwrap();
/// q.insert(7, 110).unwrap(); // same bucket as handle 2: FIFO order
/// assert!(q.insert(5, 120).is_err()); // handle 5 is already queued
/// assert!(q.remove(5)); // O(1), by handle
/// assert_eq!(q.extract_min(), Some((2, 110)));
/// assert_eq!(q.extract_min(), Some((7, 110)));
/// assert!(q.is_empty());
/// ```
pub struct TimingWheel {
    lists: BucketLists,
    /// Current time (the earliest time an element can be due).
    now: u64,
    /// `now % slots`, kept incrementally.
    now_slot: u32,
    slots: u32,
    clamped_past: u64,
    clamped_horizon: u64,
}

impl TimingWheel {
    /// A wheel with `slots` slots (its horizon) and handles `0..capacity`.
    pub fn new(slots: u32, capacity: u32) -> Result<Self, PqError> {
        if slots == 0 {
            return Err(PqError::InvalidConfig("a timing wheel needs >= 1 slot"));
        }
        Ok(Self {
            lists: BucketLists::new(slots, capacity)?,
            now: 0,
            now_slot: 0,
            slots,
            clamped_past: 0,
            clamped_horizon: 0,
        })
    }

    /// The cursor: no element is due before it.
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Inserts due before the cursor (served at the cursor).
    pub fn clamped_past(&self) -> u64 {
        self.clamped_past
    }

    /// Inserts past the horizon (served at its last slot).
    pub fn clamped_horizon(&self) -> u64 {
        self.clamped_horizon
    }

    #[inline]
    fn step(&mut self) {
        self.now += 1;
        self.now_slot += 1;
        if self.now_slot == self.slots {
            self.now_slot = 0;
        }
    }

    /// Pops the next element due at or before `now`, advancing the cursor
    /// up to `now`; an empty wheel jumps straight there.
    pub fn pop_due(&mut self, now: u64) -> Option<(u32, u64)> {
        while self.now <= now {
            if self.lists.len() == 0 {
                self.now = now;
                self.now_slot = (now % u64::from(self.slots)) as u32;
                return None;
            }
            if !self.lists.is_bucket_empty(self.now_slot) {
                let (h, rank, _) = self.lists.pop_front_ranked(self.now_slot, self.now);
                return Some((h, rank));
            }
            self.step();
        }
        None
    }

    /// First non-empty slot, scanning from the cursor.
    fn first_slot(&self) -> Option<(u32, u64)> {
        if self.lists.len() == 0 {
            return None;
        }
        let mut slot = self.now_slot;
        for ahead in 0..u64::from(self.slots) {
            if !self.lists.is_bucket_empty(slot) {
                return Some((slot, self.now + ahead));
            }
            slot = if slot + 1 == self.slots { 0 } else { slot + 1 };
        }
        None
    }
}

impl IntegerPriorityQueue for TimingWheel {
    #[inline]
    fn insert(&mut self, handle: u32, rank: u64) -> Result<(), PqError> {
        self.lists.check_insert(handle)?;
        // Clamped elements keep their own rank aside (tagged); the others'
        // rank is their slot's time.
        let (ahead, tagged) = if rank < self.now {
            self.clamped_past += 1;
            (0, Some(rank))
        } else if rank - self.now >= u64::from(self.slots) {
            self.clamped_horizon += 1;
            (self.slots - 1, Some(rank))
        } else {
            ((rank - self.now) as u32, None)
        };
        let mut slot = self.now_slot + ahead;
        if slot >= self.slots {
            slot -= self.slots;
        }
        self.lists.push_back(slot as usize, handle, tagged)?;
        Ok(())
    }

    fn peek_min(&self) -> Option<(u32, u64)> {
        let (slot, time) = self.first_slot()?;
        let (handle, tagged) = self.lists.front(slot)?;
        Some((handle, tagged.unwrap_or(time)))
    }

    #[inline]
    fn extract_min(&mut self) -> Option<(u32, u64)> {
        if self.lists.len() == 0 {
            return None;
        }
        while self.lists.is_bucket_empty(self.now_slot) {
            self.step();
        }
        let (h, rank, _) = self.lists.pop_front_ranked(self.now_slot, self.now);
        Some((h, rank))
    }

    fn remove(&mut self, handle: u32) -> bool {
        self.lists.unlink(handle).is_some()
    }

    fn soonest_rank(&self) -> Option<u64> {
        self.first_slot().map(|(_, t)| t)
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
