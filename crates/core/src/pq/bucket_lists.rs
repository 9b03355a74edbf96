//! Per-bucket FIFO queues shared by every bucketed queue in [`crate::pq`].
//!
//! Each bucket is a chain of 64-byte *chunks* of `u32`s, the last one a
//! link to the next chunk. Bucket `i` owns *home* chunk `i`, which holds
//! the bucket's cold header (head slot, tombstone count) and 13 entries,
//! and is where its chain starts whenever it is empty; further chunks (15
//! entries each) come from a pool. The hot header (tail slot, live count),
//! which every insert reads before it can address its store, lives in a
//! compact side array of 8 bytes per bucket. So:
//!
//! * an insert is a hit in a small array (80 KB for 10k buckets, L2
//!   resident) plus one store into its bucket's tail line, which the core
//!   does not wait for. (Headers inside the home chunks made an insert
//!   into a long bucket wait for a miss on the home chunk first, then
//!   store to another line: measured 34 -> 38 Mpps at 10k buckets x 64
//!   per bucket, 54 -> 59 at 10k x 4. A separate 16-byte header array
//!   before that cost an extra miss at one element per bucket.)
//! * filling an empty bucket and draining it allocate nothing (up to 13
//!   elements per bucket never touch the pool), and draining buckets in
//!   rank order reads their home chunks sequentially, which the prefetcher
//!   follows;
//! * draining a long bucket reads its handles sequentially, about one cache
//!   miss per 15 elements, instead of chasing one pointer per element (with
//!   handles assigned in arrival order, an intrusive list visits them in
//!   random order).
//!
//! `remove` stays O(1): each handle records its slot (4 bytes, written on
//! every insert); the bucket follows from the slot's chunk, a home chunk
//! being its own bucket and a pool chunk having its owner recorded when it
//! is handed out (once per 15 entries, not per insert). A removed slot
//! becomes a tombstone that `pop_front` skips. A bucket whose tombstones
//! outnumber its live elements (plus one chunk) is compacted in place,
//! which costs O(live + tombstones) and is paid for by the removals that
//! created the tombstones, so the pool size below is never exceeded.
//!
//! Cost of home chunks: 64 bytes per bucket whatever the capacity, written
//! by the constructor (a 2^20-bucket queue takes 64 MiB). Queues with far
//! more buckets than elements pay for that, and a scan over empty buckets
//! (the timing wheel's) reads one line per bucket.
//!
//! Links are stored as `chunk + 1` (0 = none), so zeroed memory is a valid
//! pool chunk: the pool is allocated zeroed and pages in only as it is
//! used, handed out first from a bump pointer, then from the free list.
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
/// Chunk size in `u32`s (one 64-byte line): entries, then the link to
/// the next chunk. (128-byte chunks measured slower: one element per
/// bucket then wastes a second line.)
const SLOTS: u32 = 16;
/// Entries of a pool chunk.
const PER_CHUNK: u32 = SLOTS - 1;
const LINK: usize = PER_CHUNK as usize;
/// Header words at the start of a home chunk: global slot
/// (`chunk * SLOTS + pos`) of the next entry to pop, tombstones. The home
/// chunk's entries start after them.
const HEAD: usize = 0;
const TOMBS: usize = 1;
const HOME_FIRST: u32 = 2;
/// Fields of [`BucketLists::hot`]: global slot of the next entry to write
/// (pos `LINK` = chunk full), live entries.
const TAIL: usize = 0;
const LIVE: usize = 1;

type Chunk = [u32; SLOTS as usize];

/// Header of bucket `i` when empty: both ends at its home chunk's first
/// entry.
#[inline(always)]
fn empty_header(i: u32) -> [u32; HOME_FIRST as usize] {
    [i * SLOTS + HOME_FIRST, 0]
}

/// `hot` entry of bucket `i` when empty.
#[inline(always)]
fn empty_hot(i: u32) -> [u32; 2] {
    [i * SLOTS + HOME_FIRST, 0]
}

/// Handle-indexed locations plus one chunked FIFO per bucket.
pub(crate) struct BucketLists {
    /// Home chunks `0..buckets` (header + entries), then the pool.
    chunks: Vec<Chunk>,
    /// Number of home chunks (= buckets).
    homes: u32,
    /// Per bucket: tail slot and live count. Kept apart from the home
    /// chunks, in 8 bytes per bucket (80 KB for 10k buckets: stays in L2),
    /// because an insert needs them *before* it can store: with the header
    /// in the home chunk, an insert into a bucket whose tail is in a pool
    /// chunk waited for a cache miss on the home chunk before it could
    /// even address its store. With them here, an insert is an L1/L2 hit
    /// plus a store, which the core does not wait for.
    hot: Vec<[u32; 2]>,
    /// Free-list head as `chunk + 1` (0 = empty).
    free: u32,
    /// First pool chunk never handed out.
    fresh: u32,
    /// Bucket of each pool chunk (index `chunk - homes`), written when the
    /// chunk is handed out.
    owner: Vec<u32>,
    /// One bit per handle: queued or not. Kept apart from `loc` so the
    /// extract path clears a bit in a small, cache-resident array instead
    /// of writing to a random slot of a large one.
    queued: Vec<u64>,
    /// Slot of each queued handle (stale once it leaves): one 4-byte store
    /// per insert.
    loc: Vec<u32>,
    /// Ranks of tagged elements.
    ranks: Vec<u64>,
    len: usize,
}

impl BucketLists {
    /// Room for handles `0..capacity` (< 2^31) spread over `buckets` FIFOs.
    pub(crate) fn new(buckets: u32, capacity: u32) -> Result<Self, PqError> {
        let capacity = capacity.min(TAG - 1);
        // Per non-empty bucket, when a chunk is allocated: tombstones ≤
        // live + 15, plus ≤ 14 consumed positions in the head chunk, and
        // the home chunk (if still in the chain) has 13 positions → after
        // the allocation ≤ (2·live + 42) / 15 pool chunks, i.e. ≤ 2·live/15
        // + 3; one more per bucket and one overall for slack.
        let pool = 2 * u64::from(capacity) / u64::from(PER_CHUNK)
            + 4 * u64::from(buckets.min(capacity))
            + 1;
        let total = u64::from(buckets) + pool;
        if total > u64::from(u32::MAX / SLOTS) {
            return Err(PqError::InvalidConfig(
                "too many buckets and handles for 32-bit chunk slots",
            ));
        }
        // Zeroed (lazily paged) chunks; only the home headers need values.
        let mut chunks = vec![[0; SLOTS as usize]; total as usize];
        for (i, home) in chunks.iter_mut().take(buckets as usize).enumerate() {
            home[..HOME_FIRST as usize].copy_from_slice(&empty_header(i as u32));
        }
        Ok(Self {
            chunks,
            homes: buckets,
            hot: (0..buckets).map(empty_hot).collect(),
            free: 0,
            fresh: buckets,
            owner: vec![0; pool as usize],
            queued: vec![0; capacity.div_ceil(64) as usize],
            loc: vec![0; capacity as usize],
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
        self.hot[bucket as usize][LIVE] == 0
    }

    /// Bucket whose chain contains `slot`.
    #[inline]
    fn bucket_of_slot(&self, slot: u32) -> u32 {
        let c = slot / SLOTS;
        if c < self.homes {
            c
        } else {
            self.owner[(c - self.homes) as usize]
        }
    }

    /// Bucket currently holding `handle`, if queued.
    #[inline]
    pub(crate) fn bucket_of(&self, handle: u32) -> Option<u32> {
        if handle < self.capacity() && self.is_queued(handle) {
            Some(self.bucket_of_slot(self.loc[handle as usize]))
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

    /// Slot after `slot`, following the link at the end of a chunk (to a
    /// pool chunk, whose entries start at position 0).
    #[inline]
    fn next_slot(&self, slot: u32) -> u32 {
        let next = slot + 1;
        if next % SLOTS == LINK as u32 {
            self.next_chunk(slot / SLOTS).wrapping_mul(SLOTS)
        } else {
            next
        }
    }

    /// A pool chunk with no link, recorded as `bucket`'s.
    #[inline]
    fn alloc_chunk(&mut self, bucket: u32) -> u32 {
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
        self.owner[(c - self.homes) as usize] = bucket;
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

    /// Marks `bucket` (whose last element just left; its chain ends at slot
    /// `tail`, starting at slot `head`) empty: back to the start of its
    /// home chunk. A chain whose tail is in the home chunk is that chunk
    /// alone (the home chunk is always a chain's first), so a bucket that
    /// never outgrew it costs one compare and the header store.
    #[inline(always)]
    fn reset(&mut self, bucket: u32, head: u32, tail: u32) {
        if tail / SLOTS != bucket {
            self.release(head, tail);
            self.chunks[bucket as usize][LINK] = 0;
        }
        self.chunks[bucket as usize][..HOME_FIRST as usize].copy_from_slice(&empty_header(bucket));
        self.hot[bucket as usize] = empty_hot(bucket);
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
        if self.hot[bucket as usize][LIVE] == 0 {
            return None;
        }
        let mut slot = self.chunks[bucket as usize][HEAD];
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
    /// The header's fields are read and written one by one, never copied
    /// as a whole: a 16-byte reload of fields just stored one by one
    /// defeats store forwarding, which cost ~15 % when a bucket is drained.
    #[inline(always)]
    pub(crate) fn push_back(&mut self, bucket: u32, handle: u32, tagged_rank: Option<u64>) -> bool {
        // An empty bucket starts at its home chunk's first entry, so only a
        // full tail chunk needs work.
        let b = bucket as usize;
        let mut tail = self.hot[b][TAIL];
        if tail % SLOTS == LINK as u32 {
            tail = self.grow(bucket);
        }
        // Every array as a local slice up front: their pointers and lengths
        // then stay in registers instead of being reloaded after each store
        // (which could alias them as far as the compiler knows).
        let (chunks, loc, queued) = (
            &mut self.chunks[..],
            &mut self.loc[..],
            &mut self.queued[..],
        );
        let mut v = handle;
        if let Some(rank) = tagged_rank {
            self.ranks[handle as usize] = rank;
            v |= TAG;
        }
        loc[handle as usize] = tail;
        queued[(handle / 64) as usize] |= 1 << (handle % 64);
        chunks[(tail / SLOTS) as usize][(tail % SLOTS) as usize] = v;
        let hot = &mut self.hot[b];
        hot[TAIL] = tail + 1;
        let live = hot[LIVE] + 1;
        hot[LIVE] = live;
        self.len += 1;
        live == 1
    }

    /// Gives `bucket` (full tail chunk) room for one more entry: a
    /// compaction or a new tail chunk. Returns the new tail slot.
    #[inline(never)]
    fn grow(&mut self, bucket: u32) -> u32 {
        if self.chunks[bucket as usize][TOMBS] > self.hot[bucket as usize][LIVE] + PER_CHUNK {
            self.compact(bucket);
        }
        let tail = self.hot[bucket as usize][TAIL];
        if tail % SLOTS != LINK as u32 {
            return tail;
        }
        let c = self.alloc_chunk(bucket);
        self.chunks[(tail / SLOTS) as usize][LINK] = c + 1;
        self.hot[bucket as usize][TAIL] = c * SLOTS;
        c * SLOTS
    }

    /// Pops the first element of a non-empty bucket: handle, tagged rank,
    /// and whether the bucket is now empty.
    #[inline(always)]
    pub(crate) fn pop_front(&mut self, bucket: u32) -> (u32, Option<u64>, bool) {
        self.pop::<true>(bucket)
    }

    /// [`Self::pop_front`] for a queue that never tags (every rank is its
    /// bucket's): no rank lookup, whose bounds check is otherwise paid on
    /// every extract. Returns the handle and whether the bucket is empty.
    #[inline(always)]
    pub(crate) fn pop_front_untagged(&mut self, bucket: u32) -> (u32, bool) {
        let (h, _, now_empty) = self.pop::<false>(bucket);
        (h, now_empty)
    }

    #[inline(always)]
    fn pop<const TAGS: bool>(&mut self, bucket: u32) -> (u32, Option<u64>, bool) {
        let b = bucket as usize;
        debug_assert!(self.hot[b][LIVE] > 0, "pop_front on an empty bucket");
        let head = self.chunks[b][HEAD];
        let v = self.chunks[(head / SLOTS) as usize][(head % SLOTS) as usize];
        if v == TOMB {
            return self.pop_front_slow::<TAGS>(bucket);
        }
        let h = v & !TAG;
        debug_assert!(TAGS || v & TAG == 0, "tagged element in an untagged queue");
        let rank = if TAGS && v & TAG != 0 {
            Some(self.ranks[h as usize])
        } else {
            None
        };
        self.queued[(h / 64) as usize] &= !(1 << (h % 64));
        self.len -= 1;
        let live = self.hot[b][LIVE] - 1;
        if live == 0 {
            let tail = self.hot[b][TAIL];
            self.reset(bucket, head, tail);
            return (h, rank, true);
        }
        self.hot[b][LIVE] = live;
        // A live entry follows, so the slot after `head` exists: the next
        // one in this chunk or, past its last entry, the linked chunk.
        let mut next = head + 1;
        if next % SLOTS == LINK as u32 {
            let c = head / SLOTS;
            let following = self.next_chunk(c);
            self.free_chunk(c);
            next = following * SLOTS;
        }
        self.chunks[b][HEAD] = next;
        (h, rank, false)
    }

    /// `pop_front` when the head is a tombstone: skips to the first live
    /// entry (one exists), then pops as usual.
    #[cold]
    #[inline(never)]
    fn pop_front_slow<const TAGS: bool>(&mut self, bucket: u32) -> (u32, Option<u64>, bool) {
        let b = bucket as usize;
        let (mut head, mut tombs) = (self.chunks[b][HEAD], self.chunks[b][TOMBS]);
        while self.entry(head) == TOMB {
            tombs -= 1;
            let next = head + 1;
            head = if next % SLOTS == LINK as u32 {
                let c = head / SLOTS;
                let following = self.next_chunk(c);
                self.free_chunk(c);
                following * SLOTS
            } else {
                next
            };
        }
        self.chunks[b][HEAD] = head;
        self.chunks[b][TOMBS] = tombs;
        self.pop::<TAGS>(bucket)
    }

    /// Unlinks `handle`; returns its bucket and whether that bucket is now
    /// empty, or `None` if the handle is not queued.
    #[inline]
    pub(crate) fn unlink(&mut self, handle: u32) -> Option<(u32, bool)> {
        if handle >= self.capacity() || !self.is_queued(handle) {
            return None;
        }
        let slot = self.loc[handle as usize];
        let bucket = self.bucket_of_slot(slot);
        self.queued[(handle / 64) as usize] &= !(1 << (handle % 64));
        self.len -= 1;
        let b = bucket as usize;
        let live = self.hot[b][LIVE] - 1;
        if live == 0 {
            let (head, tail) = (self.chunks[b][HEAD], self.hot[b][TAIL]);
            self.reset(bucket, head, tail);
            return Some((bucket, true));
        }
        self.hot[b][LIVE] = live;
        self.chunks[b][TOMBS] += 1;
        self.set_entry(slot, TOMB);
        Some((bucket, false))
    }

    /// Squeezes tombstones out of a bucket, keeping FIFO order; frees the
    /// chunks left unused.
    fn compact(&mut self, bucket: u32) {
        let b = bucket as usize;
        let (head, tail) = (self.chunks[b][HEAD], self.hot[b][TAIL]);
        let (mut read, mut write) = (head, head);
        while read != tail {
            let v = self.entry(read);
            if v != TOMB {
                self.set_entry(write, v);
                self.loc[(v & !TAG) as usize] = write;
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
        self.hot[b][TAIL] = write;
        self.chunks[b][TOMBS] = 0;
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
