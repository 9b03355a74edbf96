//! Per-bucket FIFO queues shared by every bucketed queue in [`crate::pq`].
//!
//! Each bucket is a chain of 64-byte *chunks* holding 15 handles and the
//! index of the next chunk, taken from one pre-sized pool. Draining a bucket
//! therefore reads handles sequentially (about one cache miss per 15 elements)
//! instead of chasing one pointer per element, which is what makes the
//! fill-drain benchmark fast at many elements per bucket: with handles
//! assigned in arrival order, an intrusive list visits them in random order.
//!
//! `remove` stays O(1): each handle records its slot and bucket, and a
//! removed slot becomes a tombstone that `pop_front` skips. A bucket whose
//! tombstones outnumber its live elements (plus one chunk) is compacted in
//! place, which costs O(live + tombstones) and is paid for by the removals
//! that created the tombstones, so the pool size below is never exceeded.
//!
//! Ranks are not stored: an element's rank is its bucket's rank, which the
//! queue knows. Only elements whose rank differs (clamped into the bucket)
//! are *tagged* and have their rank kept in a side array.

use super::PqError;
use alloc::vec;
use alloc::vec::Vec;

/// Chain terminator / empty bucket.
pub(crate) const NIL: u32 = u32::MAX;
/// Slot content of a removed element.
const TOMB: u32 = u32::MAX;
/// Handle bit marking a tagged (rank stored aside) element.
const TAG: u32 = 1 << 31;
/// Chunk size in `u32`s (one 64-byte line): 15 entries, then the link to
/// the next chunk. (128-byte chunks measured slower: one element per
/// bucket then wastes a second line.)
const SLOTS: u32 = 16;
const PER_CHUNK: u32 = SLOTS - 1;
const LINK: usize = PER_CHUNK as usize;

#[derive(Clone, Copy)]
struct Bucket {
    /// Global slot (`chunk * SLOTS + pos`) of the next entry to pop.
    head: u32,
    /// Global slot of the next entry to write (pos `LINK` = chunk full).
    tail: u32,
    live: u32,
    tombs: u32,
}

const EMPTY_BUCKET: Bucket = Bucket {
    head: NIL,
    tail: NIL,
    live: 0,
    tombs: 0,
};

/// Handle-indexed locations plus one chunked FIFO per bucket.
pub(crate) struct BucketLists {
    chunks: Vec<[u32; SLOTS as usize]>,
    free_chunk: u32,
    buckets: Vec<Bucket>,
    /// One bit per handle: queued or not. Kept apart from `slot_of` so the
    /// extract path clears a bit in a small, cache-resident array instead
    /// of writing to a random slot of a large one.
    queued: Vec<u64>,
    /// Slot of each queued handle (stale once it leaves).
    slot_of: Vec<u32>,
    bucket_of: Vec<u32>,
    /// Ranks of tagged elements.
    ranks: Vec<u64>,
    len: usize,
}

impl BucketLists {
    /// Room for handles `0..capacity` (< 2^31) spread over `buckets` FIFOs.
    pub(crate) fn new(buckets: u32, capacity: u32) -> Self {
        let capacity = capacity.min(TAG - 1);
        // Per non-empty bucket: tombstones ≤ live + 15 whenever a chunk is
        // allocated, plus ≤ 14 consumed and ≤ 14 unwritten positions
        // → ≤ 2·live/15 + 4 chunks.
        let pool =
            2 * (capacity as usize) / PER_CHUNK as usize + 4 * buckets.min(capacity) as usize + 1;
        let mut chunks = vec![[NIL; SLOTS as usize]; pool];
        for (i, c) in chunks.iter_mut().enumerate() {
            c[LINK] = if i + 1 < pool { i as u32 + 1 } else { NIL };
        }
        Self {
            chunks,
            free_chunk: 0,
            buckets: vec![EMPTY_BUCKET; buckets as usize],
            queued: vec![0; capacity.div_ceil(64) as usize],
            slot_of: vec![NIL; capacity as usize],
            bucket_of: vec![NIL; capacity as usize],
            ranks: vec![0; capacity as usize],
            len: 0,
        }
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub(crate) fn capacity(&self) -> u32 {
        self.slot_of.len() as u32
    }

    /// Typed check of a caller-supplied handle before it is inserted.
    #[inline]
    pub(crate) fn check_insert(&self, handle: u32) -> Result<(), PqError> {
        if handle >= self.capacity() {
            Err(PqError::HandleOutOfRange {
                handle,
                capacity: self.capacity(),
            })
        } else if self.is_queued(handle) {
            Err(PqError::AlreadyQueued(handle))
        } else {
            Ok(())
        }
    }

    /// True if `handle` (< capacity) is queued.
    #[inline]
    fn is_queued(&self, handle: u32) -> bool {
        self.queued[(handle / 64) as usize] >> (handle % 64) & 1 == 1
    }

    #[inline]
    fn set_queued(&mut self, handle: u32, on: bool) {
        let w = &mut self.queued[(handle / 64) as usize];
        if on {
            *w |= 1 << (handle % 64);
        } else {
            *w &= !(1 << (handle % 64));
        }
    }

    #[inline]
    pub(crate) fn is_bucket_empty(&self, bucket: u32) -> bool {
        self.buckets[bucket as usize].live == 0
    }

    /// Bucket currently holding `handle`, if queued.
    #[inline]
    pub(crate) fn bucket_of(&self, handle: u32) -> Option<u32> {
        if handle < self.capacity() && self.is_queued(handle) {
            Some(self.bucket_of[handle as usize])
        } else {
            None
        }
    }

    #[inline]
    fn entry(&self, slot: u32) -> u32 {
        self.chunks[(slot / SLOTS) as usize][(slot % SLOTS) as usize]
    }

    #[inline]
    fn set_entry(&mut self, slot: u32, v: u32) {
        self.chunks[(slot / SLOTS) as usize][(slot % SLOTS) as usize] = v;
    }

    /// Slot after `slot`, following the link at the end of a chunk.
    #[inline]
    fn next_slot(&self, slot: u32) -> u32 {
        let next = slot + 1;
        if next % SLOTS == LINK as u32 {
            self.chunks[(slot / SLOTS) as usize][LINK].wrapping_mul(SLOTS)
        } else {
            next
        }
    }

    #[inline]
    fn alloc_chunk(&mut self) -> u32 {
        let c = self.free_chunk;
        debug_assert!(c != NIL, "chunk pool exhausted: sizing bound violated");
        self.free_chunk = self.chunks[c as usize][LINK];
        self.chunks[c as usize][LINK] = NIL;
        c
    }

    #[inline]
    fn free_chunk(&mut self, c: u32) {
        self.chunks[c as usize][LINK] = self.free_chunk;
        self.free_chunk = c;
    }

    /// Returns every chunk of an emptied bucket to the pool.
    fn release(&mut self, bucket: u32) {
        let b = self.buckets[bucket as usize];
        let (mut c, last) = (b.head / SLOTS, b.tail / SLOTS);
        loop {
            let next = self.chunks[c as usize][LINK];
            self.free_chunk(c);
            if c == last {
                break;
            }
            c = next;
        }
        self.buckets[bucket as usize] = EMPTY_BUCKET;
    }

    /// Decodes a popped or peeked entry.
    #[inline]
    fn decode(&self, v: u32) -> (u32, Option<u64>) {
        let h = v & !TAG;
        (
            h,
            if v & TAG != 0 {
                Some(self.ranks[h as usize])
            } else {
                None
            },
        )
    }

    /// First element of `bucket`: its handle and, if tagged, its rank.
    pub(crate) fn front(&self, bucket: u32) -> Option<(u32, Option<u64>)> {
        let b = self.buckets[bucket as usize];
        if b.live == 0 {
            return None;
        }
        let mut slot = b.head;
        loop {
            let v = self.entry(slot);
            if v != TOMB {
                return Some(self.decode(v));
            }
            slot = self.next_slot(slot);
        }
    }

    /// Appends `handle` (already validated) to `bucket`; `tagged_rank` is
    /// `Some` when the rank differs from the bucket's. True if the bucket
    /// was empty before.
    #[inline]
    pub(crate) fn push_back(&mut self, bucket: u32, handle: u32, tagged_rank: Option<u64>) -> bool {
        let mut b = self.buckets[bucket as usize];
        let was_empty = b.live == 0;
        if was_empty {
            let c = self.alloc_chunk();
            b.head = c * SLOTS;
            b.tail = c * SLOTS;
        } else if b.tail % SLOTS == LINK as u32 {
            if b.tombs > b.live + PER_CHUNK {
                self.buckets[bucket as usize] = b;
                self.compact(bucket);
                b = self.buckets[bucket as usize];
            }
            if b.tail % SLOTS == LINK as u32 {
                let c = self.alloc_chunk();
                self.chunks[(b.tail / SLOTS) as usize][LINK] = c;
                b.tail = c * SLOTS;
            }
        }
        let mut v = handle;
        if let Some(rank) = tagged_rank {
            self.ranks[handle as usize] = rank;
            v |= TAG;
        }
        self.set_entry(b.tail, v);
        self.slot_of[handle as usize] = b.tail;
        self.set_queued(handle, true);
        self.bucket_of[handle as usize] = bucket;
        b.tail += 1;
        b.live += 1;
        self.buckets[bucket as usize] = b;
        self.len += 1;
        was_empty
    }

    /// Pops the first element of a non-empty bucket: handle, tagged rank,
    /// and whether the bucket is now empty.
    #[inline]
    pub(crate) fn pop_front(&mut self, bucket: u32) -> (u32, Option<u64>, bool) {
        let mut b = self.buckets[bucket as usize];
        debug_assert!(b.live > 0, "pop_front on an empty bucket");
        let mut v = self.entry(b.head);
        while v == TOMB {
            b.tombs -= 1;
            b.head = self.advance_head(b.head, b.tail);
            v = self.entry(b.head);
        }
        let (h, rank) = self.decode(v);
        self.set_queued(h, false);
        self.len -= 1;
        b.live -= 1;
        if b.live == 0 {
            self.buckets[bucket as usize] = b;
            self.release(bucket);
            return (h, rank, true);
        }
        b.head = self.advance_head(b.head, b.tail);
        self.buckets[bucket as usize] = b;
        (h, rank, false)
    }

    /// Moves the head past `head`, freeing a chunk it has finished.
    #[inline]
    fn advance_head(&mut self, head: u32, tail: u32) -> u32 {
        let next = head + 1;
        if next % SLOTS == LINK as u32 && next != tail {
            let c = head / SLOTS;
            let following = self.chunks[c as usize][LINK];
            self.free_chunk(c);
            following * SLOTS
        } else {
            next
        }
    }

    /// Unlinks `handle`; returns its bucket and whether that bucket is now
    /// empty, or `None` if the handle is not queued.
    #[inline]
    pub(crate) fn unlink(&mut self, handle: u32) -> Option<(u32, bool)> {
        if handle >= self.capacity() || !self.is_queued(handle) {
            return None;
        }
        let slot = self.slot_of[handle as usize];
        let bucket = self.bucket_of[handle as usize];
        self.set_queued(handle, false);
        self.len -= 1;
        let b = &mut self.buckets[bucket as usize];
        b.live -= 1;
        if b.live == 0 {
            self.release(bucket);
            return Some((bucket, true));
        }
        b.tombs += 1;
        self.set_entry(slot, TOMB);
        Some((bucket, false))
    }

    /// Squeezes tombstones out of a bucket, keeping FIFO order; frees the
    /// chunks left unused.
    fn compact(&mut self, bucket: u32) {
        let b = self.buckets[bucket as usize];
        let (mut read, mut write) = (b.head, b.head);
        while read != b.tail {
            let v = self.entry(read);
            if v != TOMB {
                self.set_entry(write, v);
                self.slot_of[(v & !TAG) as usize] = write;
                write = self.next_slot_for_write(write);
            }
            read = self.next_slot_for_write(read);
        }
        // Free the chunks after the one `write` ends in.
        let last = write / SLOTS;
        let mut c = self.chunks[last as usize][LINK];
        self.chunks[last as usize][LINK] = NIL;
        while c != NIL {
            let next = self.chunks[c as usize][LINK];
            self.free_chunk(c);
            if c == b.tail / SLOTS {
                break;
            }
            c = next;
        }
        let nb = &mut self.buckets[bucket as usize];
        nb.tail = write;
        nb.tombs = 0;
    }

    /// Like `next_slot`, but stops at a chunk's link slot when it is the
    /// last chunk (the write position of a full tail chunk).
    #[inline]
    fn next_slot_for_write(&self, slot: u32) -> u32 {
        let next = slot + 1;
        if next % SLOTS == LINK as u32 {
            let link = self.chunks[(slot / SLOTS) as usize][LINK];
            if link == NIL {
                next
            } else {
                link * SLOTS
            }
        } else {
            next
        }
    }
}
