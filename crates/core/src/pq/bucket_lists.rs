//! Per-bucket FIFO queues shared by every bucketed queue in [`crate::pq`].
//!
//! Each bucket is a chain of 64-byte *chunks* holding 15 handles and a link
//! to the next chunk. Bucket `i` owns *home* chunk `i`, where its chain
//! starts whenever it is empty; further chunks come from a pool. So:
//!
//! * filling an empty bucket and draining it allocate nothing (one element
//!   per bucket never touches the pool), and draining buckets in rank order
//!   reads their home chunks sequentially, which the prefetcher follows;
//! * draining a long bucket reads its handles sequentially, about one cache
//!   miss per 15 elements, instead of chasing one pointer per element (with
//!   handles assigned in arrival order, an intrusive list visits them in
//!   random order).
//!
//! `remove` stays O(1): each handle records its slot and bucket, and a
//! removed slot becomes a tombstone that `pop_front` skips. A bucket whose
//! tombstones outnumber its live elements (plus one chunk) is compacted in
//! place, which costs O(live + tombstones) and is paid for by the removals
//! that created the tombstones, so the pool size below is never exceeded.
//!
//! Cost of home chunks: 64 bytes of address space per bucket whatever the
//! capacity (a 2^20-bucket queue reserves 64 MiB, paged in only as buckets
//! are used). Queues with far more buckets than elements pay for that.
//!
//! Links are stored as `chunk + 1` (0 = none), so zeroed memory is a valid
//! initial state: the chunk array is allocated zeroed and pages in only as
//! it is used, and pool chunks are handed out first from a bump pointer,
//! then from the free list.
//!
//! Ranks are not stored: an element's rank is its bucket's rank, which the
//! queue knows. Only elements whose rank differs (clamped into the bucket)
//! are *tagged* and have their rank kept in a side array.
//!
//! The hot paths (`push_back`, `pop_front`) are forced inline and keep
//! chunk allocation, release, compaction and tombstone skipping out of line.

use super::PqError;
use alloc::vec;
use alloc::vec::Vec;

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

/// A chunk with no link (unwritten entries are never read).
const INIT_CHUNK: [u32; SLOTS as usize] = {
    let mut c = [TOMB; SLOTS as usize];
    c[LINK] = 0;
    c
};

#[derive(Clone, Copy)]
struct Bucket {
    /// Global slot (`chunk * SLOTS + pos`) of the next entry to pop.
    head: u32,
    /// Global slot of the next entry to write (pos `LINK` = chunk full).
    tail: u32,
    live: u32,
    tombs: u32,
}

impl Bucket {
    /// Bucket `i` when empty: both ends at the start of its home chunk.
    #[inline]
    fn empty(i: u32) -> Self {
        Bucket {
            head: i * SLOTS,
            tail: i * SLOTS,
            live: 0,
            tombs: 0,
        }
    }
}

/// Handle-indexed locations plus one chunked FIFO per bucket.
pub(crate) struct BucketLists {
    /// Home chunks `0..buckets`, then the pool.
    chunks: Vec<[u32; SLOTS as usize]>,
    /// Number of home chunks (= buckets).
    homes: u32,
    /// Free-list head as `chunk + 1` (0 = empty).
    free: u32,
    /// First pool chunk never handed out.
    fresh: u32,
    buckets: Vec<Bucket>,
    /// One bit per handle: queued or not. Kept apart from `loc` so the
    /// extract path clears a bit in a small, cache-resident array instead
    /// of writing to a random slot of a large one.
    queued: Vec<u64>,
    /// `[slot, bucket]` of each queued handle (stale once it leaves): one
    /// 8-byte store per insert.
    loc: Vec<[u32; 2]>,
    /// Ranks of tagged elements.
    ranks: Vec<u64>,
    len: usize,
}

impl BucketLists {
    /// Room for handles `0..capacity` (< 2^31) spread over `buckets` FIFOs.
    pub(crate) fn new(buckets: u32, capacity: u32) -> Result<Self, PqError> {
        let capacity = capacity.min(TAG - 1);
        // Per non-empty bucket: tombstones ≤ live + 15 whenever a chunk is
        // allocated, plus ≤ 14 consumed and ≤ 14 unwritten positions
        // → ≤ 2·live/15 + 4 chunks (home included).
        let pool = 2 * u64::from(capacity) / u64::from(PER_CHUNK)
            + 4 * u64::from(buckets.min(capacity))
            + 1;
        let total = u64::from(buckets) + pool;
        if total > u64::from(u32::MAX / SLOTS) {
            return Err(PqError::InvalidConfig(
                "too many buckets and handles for 32-bit chunk slots",
            ));
        }
        Ok(Self {
            chunks: vec![INIT_CHUNK; total as usize],
            homes: buckets,
            free: 0,
            fresh: buckets,
            buckets: (0..buckets).map(Bucket::empty).collect(),
            queued: vec![0; capacity.div_ceil(64) as usize],
            loc: vec![[0; 2]; capacity as usize],
            ranks: vec![0; capacity as usize],
            len: 0,
        })
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub(crate) fn capacity(&self) -> u32 {
        self.loc.len() as u32
    }

    /// Typed check of a caller-supplied handle before it is inserted.
    #[inline(always)]
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
    #[inline(always)]
    fn is_queued(&self, handle: u32) -> bool {
        self.queued[(handle / 64) as usize] >> (handle % 64) & 1 == 1
    }

    #[inline]
    pub(crate) fn is_bucket_empty(&self, bucket: u32) -> bool {
        self.buckets[bucket as usize].live == 0
    }

    /// Bucket currently holding `handle`, if queued.
    #[inline]
    pub(crate) fn bucket_of(&self, handle: u32) -> Option<u32> {
        if handle < self.capacity() && self.is_queued(handle) {
            Some(self.loc[handle as usize][1])
        } else {
            None
        }
    }

    #[inline(always)]
    fn entry(&self, slot: u32) -> u32 {
        self.chunks[(slot / SLOTS) as usize][(slot % SLOTS) as usize]
    }

    #[inline]
    fn set_entry(&mut self, slot: u32, v: u32) {
        self.chunks[(slot / SLOTS) as usize][(slot % SLOTS) as usize] = v;
    }

    /// The chunk linked after chunk `c` (which must have one).
    #[inline(always)]
    fn next_chunk(&self, c: u32) -> u32 {
        self.chunks[c as usize][LINK].wrapping_sub(1)
    }

    /// Slot after `slot`, following the link at the end of a chunk.
    #[inline]
    fn next_slot(&self, slot: u32) -> u32 {
        let next = slot + 1;
        if next % SLOTS == LINK as u32 {
            self.next_chunk(slot / SLOTS).wrapping_mul(SLOTS)
        } else {
            next
        }
    }

    /// A pool chunk with no link.
    #[inline]
    fn alloc_chunk(&mut self) -> u32 {
        let c = if self.free != 0 {
            let c = self.free - 1;
            self.free = self.chunks[c as usize][LINK];
            c
        } else {
            let c = self.fresh;
            debug_assert!(
                (c as usize) < self.chunks.len(),
                "chunk pool exhausted: sizing bound violated"
            );
            self.fresh += 1;
            c
        };
        self.chunks[c as usize][LINK] = 0;
        c
    }

    /// Returns pool chunk `c` to the free list; home chunks stay put.
    #[inline(always)]
    fn free_chunk(&mut self, c: u32) {
        if c >= self.homes {
            self.chunks[c as usize][LINK] = self.free;
            self.free = c + 1;
        }
    }

    /// Marks `bucket` (whose last element just left; its chain runs from
    /// slot `head` to slot `tail`) empty: back to the start of its home
    /// chunk. Takes the two ends as scalars: reloading the whole bucket
    /// right after its `live` field was stored would stall store
    /// forwarding on every bucket that a drain empties.
    #[inline(always)]
    fn reset(&mut self, bucket: u32, head: u32, tail: u32) {
        if head / SLOTS != bucket || tail / SLOTS != bucket {
            self.release(head, tail);
            self.chunks[bucket as usize][LINK] = 0;
        }
        self.buckets[bucket as usize] = Bucket::empty(bucket);
    }

    /// Returns the pool chunks of a chain `head..tail` to the pool.
    #[inline(never)]
    fn release(&mut self, head: u32, tail: u32) {
        let (mut c, last) = (head / SLOTS, tail / SLOTS);
        loop {
            let next = self.next_chunk(c);
            self.free_chunk(c);
            if c == last {
                break;
            }
            c = next;
        }
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
                let h = v & !TAG;
                return Some((h, (v & TAG != 0).then(|| self.ranks[h as usize])));
            }
            slot = self.next_slot(slot);
        }
    }

    /// Appends `handle` (already validated) to `bucket`; `tagged_rank` is
    /// `Some` when the rank differs from the bucket's. True if the bucket
    /// was empty before.
    ///
    /// The bucket's fields are read and written in place, never copied as
    /// a whole: a 16-byte reload of fields just stored one by one defeats
    /// store forwarding, which cost ~15 % when a bucket is drained.
    #[inline(always)]
    pub(crate) fn push_back(&mut self, bucket: u32, handle: u32, tagged_rank: Option<u64>) -> bool {
        // An empty bucket starts at position 0 of its home chunk, so only a
        // full tail chunk needs work.
        let mut tail = self.buckets[bucket as usize].tail;
        if tail % SLOTS == LINK as u32 {
            tail = self.grow(bucket);
        }
        let mut v = handle;
        if let Some(rank) = tagged_rank {
            self.ranks[handle as usize] = rank;
            v |= TAG;
        }
        self.chunks[(tail / SLOTS) as usize][(tail % SLOTS) as usize] = v;
        self.loc[handle as usize] = [tail, bucket];
        self.queued[(handle / 64) as usize] |= 1 << (handle % 64);
        self.len += 1;
        let b = &mut self.buckets[bucket as usize];
        b.tail = tail + 1;
        b.live += 1;
        b.live == 1
    }

    /// Gives `bucket` (full tail chunk) room for one more entry: a
    /// compaction or a new tail chunk. Returns the new tail slot.
    #[inline(never)]
    fn grow(&mut self, bucket: u32) -> u32 {
        let b = self.buckets[bucket as usize];
        if b.tombs > b.live + PER_CHUNK {
            self.compact(bucket);
        }
        let tail = self.buckets[bucket as usize].tail;
        if tail % SLOTS != LINK as u32 {
            return tail;
        }
        let c = self.alloc_chunk();
        self.chunks[(tail / SLOTS) as usize][LINK] = c + 1;
        self.buckets[bucket as usize].tail = c * SLOTS;
        c * SLOTS
    }

    /// Pops the first element of a non-empty bucket: handle, tagged rank,
    /// and whether the bucket is now empty.
    #[inline(always)]
    pub(crate) fn pop_front(&mut self, bucket: u32) -> (u32, Option<u64>, bool) {
        debug_assert!(
            self.buckets[bucket as usize].live > 0,
            "pop_front on an empty bucket"
        );
        let head = self.buckets[bucket as usize].head;
        let v = self.chunks[(head / SLOTS) as usize][(head % SLOTS) as usize];
        if v == TOMB {
            return self.pop_front_slow(bucket);
        }
        let h = v & !TAG;
        let rank = if v & TAG != 0 {
            Some(self.ranks[h as usize])
        } else {
            None
        };
        self.queued[(h / 64) as usize] &= !(1 << (h % 64));
        self.len -= 1;
        let b = &mut self.buckets[bucket as usize];
        let live = b.live - 1;
        if live == 0 {
            let tail = b.tail;
            self.reset(bucket, head, tail);
            return (h, rank, true);
        }
        b.live = live;
        // A live entry follows, so the slot after `head` exists: the next
        // one in this chunk or, past its last entry, the linked chunk.
        let mut next = head + 1;
        if next % SLOTS == LINK as u32 {
            let c = head / SLOTS;
            let following = self.next_chunk(c);
            self.free_chunk(c);
            next = following * SLOTS;
        }
        self.buckets[bucket as usize].head = next;
        (h, rank, false)
    }

    /// `pop_front` when the head is a tombstone: skips to the first live
    /// entry (one exists), then pops as usual.
    #[cold]
    #[inline(never)]
    fn pop_front_slow(&mut self, bucket: u32) -> (u32, Option<u64>, bool) {
        let mut b = self.buckets[bucket as usize];
        while self.entry(b.head) == TOMB {
            b.tombs -= 1;
            let next = b.head + 1;
            b.head = if next % SLOTS == LINK as u32 {
                let c = b.head / SLOTS;
                let following = self.next_chunk(c);
                self.free_chunk(c);
                following * SLOTS
            } else {
                next
            };
        }
        self.buckets[bucket as usize] = b;
        self.pop_front(bucket)
    }

    /// Unlinks `handle`; returns its bucket and whether that bucket is now
    /// empty, or `None` if the handle is not queued.
    #[inline]
    pub(crate) fn unlink(&mut self, handle: u32) -> Option<(u32, bool)> {
        if handle >= self.capacity() || !self.is_queued(handle) {
            return None;
        }
        let [slot, bucket] = self.loc[handle as usize];
        self.queued[(handle / 64) as usize] &= !(1 << (handle % 64));
        self.len -= 1;
        let mut b = self.buckets[bucket as usize];
        b.live -= 1;
        if b.live == 0 {
            self.reset(bucket, b.head, b.tail);
            return Some((bucket, true));
        }
        b.tombs += 1;
        self.buckets[bucket as usize] = b;
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
                self.loc[(v & !TAG) as usize][0] = write;
                write = self.next_slot_for_write(write);
            }
            read = self.next_slot_for_write(read);
        }
        // Free the chunks after the one `write` ends in.
        let last = write / SLOTS;
        let mut link = self.chunks[last as usize][LINK];
        self.chunks[last as usize][LINK] = 0;
        while link != 0 {
            let c = link - 1;
            link = self.chunks[c as usize][LINK];
            self.free_chunk(c);
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
            if link == 0 {
                next
            } else {
                (link - 1) * SLOTS
            }
        } else {
            next
        }
    }
}
