//! Per-bucket FIFO queues shared by every bucketed queue in [`crate::pq`].
//!
//! Each bucket is a chain of 64-byte *chunks*: 15 `u32` entries, then a
//! link to the next chunk. All chunks live in one flat array of slots
//! (chunk `c` is slots `16c..16c + 16`), so an entry is addressed by its
//! global slot number with one index and one bounds check. Bucket `i` owns
//! *home* chunk `i`, where its chain starts whenever it is empty; further
//! chunks come from a pool. A bucket's header lives in two compact side
//! arrays of 8 bytes per bucket: the insert side (live count and tail slot
//! packed in one `u64`) and the pop side (head slot, tombstones). So:
//!
//! * an insert is a hit in a small array (80 KB for 10k buckets, L2
//!   resident) plus one store into its bucket's tail line, which the core
//!   does not wait for. (Headers inside the home chunks would make an
//!   insert into a long bucket wait for a miss on the home chunk first,
//!   then store to another line.) Tail and live count change together on
//!   every insert: one add to the packed word. (One 16-byte header array
//!   instead of the two halves makes inserts slower at 1-4 per bucket.)
//! * filling an empty bucket and draining it allocate nothing (up to 15
//!   elements per bucket never touch the pool), and draining buckets in
//!   rank order reads their headers and home chunks sequentially, which
//!   the prefetcher follows;
//! * draining a long bucket reads its handles sequentially, about one cache
//!   miss per 15 elements, instead of chasing one pointer per element (with
//!   handles assigned in arrival order, an intrusive list visits them in
//!   random order).
//!
//! `remove` stays O(1): each handle records its slot (4 bytes, written on
//! every insert); the bucket follows from the slot's chunk, a home chunk
//! being its own bucket and a pool chunk having its owner recorded when it
//! is handed out (once per 15 entries, not per insert). The same slot says
//! whether the handle is queued: every way out overwrites the element's
//! slot, so a handle is queued iff its recorded slot still holds it. That
//! costs an insert one load of the slot its handle last had (a random line)
//! and a pop one store into the line it just read, instead of a bitmap
//! test-and-set per insert and a clear per pop (~10 instructions each;
//! clearing `loc` on pop instead would be a random store on the drain
//! path, see docs/priority-queues.md). A removed slot
//! becomes a tombstone that `pop_front` skips. A bucket whose tombstones
//! outnumber its live elements (plus one chunk) is compacted in place,
//! which costs O(live + tombstones) and is paid for by the removals that
//! created the tombstones, so the pool size below is never exceeded.
//!
//! Cost of home chunks: 64 bytes of address space per bucket whatever the
//! capacity (a 2^20-bucket queue reserves 64 MiB). Every chunk starts
//! zeroed and nothing is written at construction, so untouched chunks stay
//! unpaged.
//!
//! Links are stored as `chunk + 1` (0 = none), so zeroed memory is a valid
//! chunk; pool chunks are handed out first from a bump pointer, then from
//! the free list.
//!
//! Ranks are not stored: an element's rank is its bucket's rank, which the
//! queue knows. Only elements whose rank differs (clamped into the bucket)
//! are *tagged* and have their rank kept in a side array.
//!
//! The hot paths (`push_back`, `pop_front`) are forced inline and keep
//! chunk allocation, release, compaction and tombstone skipping out of
//! line. They take every array as a local slice before their first store:
//! a store through a heap pointer may alias `self` as far as the compiler
//! knows, so fields read after one are reloaded, with their bounds checks.
//! Functions used on the hot paths' slow branches take the slices, not
//! `self`, so the fast path's slices stay in registers.
//!
//! This module is one of the core crate's two modules with `unsafe` (the
//! other is the schedulers' packet store): a pop reads its
//! bucket's head slot and live count without bounds checks, because every
//! stored head is a slot of an existing chunk (see `Start::head`; the one
//! place a head comes from a stored link is checked) and `ends` has
//! `starts`' length; debug builds assert both. A pop that crosses into a
//! bucket's next chunk also prefetches the chunk after it (x86_64), since
//! a long bucket's pool chunks lie scattered in fill order. Together with
//! the untagged queues' mask-free queued check: gradient queue 5k x 64
//! and 10k x 64 about 5 % faster, interleaved runs (docs/priority-queues.md).

use super::PqError;
use alloc::vec;
use alloc::vec::Vec;

/// Slot content of a removed element.
const TOMB: u32 = u32::MAX;
/// `loc` of a handle never queued (no slot is this high).
const NEVER: u32 = u32::MAX;
/// Handle bit marking a tagged (rank stored aside) element.
const TAG: u32 = 1 << 31;
/// Chunk size in `u32`s (one 64-byte line): entries, then the link to
/// the next chunk. (128-byte chunks measured slower: one element per
/// bucket then wastes a second line.)
const SLOTS: u32 = 16;
/// Entries of a chunk.
const PER_CHUNK: u32 = SLOTS - 1;
/// Position of the link in a chunk: first, so that a tail slot one past a
/// full chunk is a multiple of `SLOTS` (one `test` on the insert path).
const LINK: u32 = 0;
/// Position of a chunk's first entry.
const FIRST: u32 = 1;
/// One more live element and tail slot in an [`End`].
const PUSHED: u64 = 1 << 32 | 1;

/// Insert side of a bucket's header, 8 bytes: live entries (low half) and
/// the slot of the next entry to write (high half; a multiple of `SLOTS`,
/// one past the end of its chunk, when that chunk is full). An insert adds
/// [`PUSHED`]; a pop subtracts 1 and tests the low half.
type End = u64;

#[inline(always)]
fn live(e: End) -> u32 {
    e as u32
}

#[inline(always)]
fn tail(e: End) -> u32 {
    (e >> 32) as u32
}

#[inline(always)]
fn with_tail(e: End, tail: u32) -> End {
    u64::from(tail) << 32 | u64::from(live(e))
}

/// `End` of bucket `i` when empty: tail at its home chunk's first entry.
#[inline(always)]
fn empty_end(i: u32) -> End {
    u64::from(i * SLOTS + FIRST) << 32
}

/// Pop side of a bucket's header.
#[derive(Clone, Copy)]
struct Start {
    /// Slot of the next entry to pop. Invariant the unchecked reads of
    /// `pop` rely on: always a slot of an existing chunk (`< slots.len()`).
    /// Heads are set only to a home chunk's first entry, to the next slot
    /// in the same chunk, or to the first entry of a linked chunk, which
    /// the pops check.
    head: u32,
    /// Tombstones between head and tail.
    tombs: u32,
}

impl Start {
    /// Bucket `i` when empty: head at its home chunk's first entry.
    #[inline(always)]
    fn empty(i: u32) -> Self {
        Self {
            head: i * SLOTS + FIRST,
            tombs: 0,
        }
    }
}

/// Pool chunks: who owns them, which are free.
struct Pool {
    /// Number of home chunks (= buckets): pool chunks follow them.
    homes: u32,
    /// Free-list head as `chunk + 1` (0 = empty).
    free: u32,
    /// First pool chunk not handed out since the last restart.
    fresh: u32,
    /// Pool chunks in some bucket's chain.
    in_use: u32,
    /// Bucket of each pool chunk (index `chunk - homes`), written when the
    /// chunk is handed out.
    owner: Vec<u32>,
}

impl Pool {
    /// A pool chunk with no link, recorded as `bucket`'s.
    ///
    /// When no pool chunk is in use, the free list is dropped and chunks
    /// are handed out in address order again, as after construction. The
    /// free list holds chunks in the order the last drain released them,
    /// which is the order an earlier fill, in random bucket order, took
    /// them: scattered lines. In address order, a fill's new chunks are
    /// consecutive lines that the prefetcher brings in ahead of the
    /// stores. Fill-drain at 64 per bucket, interleaved runs: fill 0.76-0.81
    /// of the time at 5k buckets and 0.86-0.95 at 10k, where the drain got
    /// 7-13 % slower (same instruction count: a memory effect), totals
    /// 0.83-0.87 and 0.93-0.98. A queue that never empties its long
    /// buckets pays nothing and gains nothing.
    #[inline]
    fn alloc(&mut self, slots: &mut [u32], bucket: u32) -> u32 {
        if self.in_use == 0 {
            self.free = 0;
            self.fresh = self.homes;
        }
        self.in_use += 1;
        let c = if self.free != 0 {
            let c = self.free - 1;
            self.free = slots[link_slot(c)];
            c
        } else {
            let c = self.fresh;
            debug_assert!(
                (c - self.homes) < self.owner.len() as u32,
                "chunk pool exhausted: sizing bound violated"
            );
            self.fresh += 1;
            c
        };
        slots[link_slot(c)] = 0;
        self.owner[(c - self.homes) as usize] = bucket;
        c
    }

    /// Returns pool chunk `c` to the free list; home chunks stay put.
    #[inline(always)]
    fn free_chunk(&mut self, slots: &mut [u32], c: u32) {
        if c >= self.homes {
            self.in_use -= 1;
            slots[link_slot(c)] = self.free;
            self.free = c + 1;
        }
    }

    /// Returns the pool chunks of a chain `head..tail` to the pool.
    #[inline(never)]
    fn release(&mut self, slots: &mut [u32], head: u32, tail: u32) {
        let (mut c, last) = (head / SLOTS, last_chunk(tail));
        loop {
            let next = slots[link_slot(c)].wrapping_sub(1);
            self.free_chunk(slots, c);
            if c == last {
                break;
            }
            c = next;
        }
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
}

/// True if `slot` holds `handle`: whether `handle`, whose `loc` is `slot`,
/// is queued. Every way out of the queue overwrites the element's slot
/// (a pop or a removal writes [`TOMB`]; a compaction moves it and updates
/// `loc`), so a slot holds a handle only while the handle is queued there.
/// `TAGS`: whether the queue may tag; one that never does stores bare
/// handles, so the comparison needs no mask.
#[inline(always)]
fn holds<const TAGS: bool>(slots: &[u32], slot: u32, handle: u32) -> bool {
    let mask = if TAGS { !TAG } else { u32::MAX };
    slots
        .get(slot as usize)
        .is_some_and(|&v| v & mask == handle)
}

/// Starts loading the chunk after `slot`'s, if linked, into the cache;
/// `slot` is the first entry of the chunk a pop just crossed into. Reading
/// that chunk's link costs no extra wait: the next pop reads the same line.
/// Draining a long bucket then finds its third and later chunks (pool
/// chunks are handed out in fill order, so a chain is scattered) on their
/// way 15 pops ahead, where each used to stall the pop that crossed into
/// it. Only the crossing pays for it: the test on every pop that would
/// also cover a bucket's first pool chunk slowed drains at one element
/// per bucket (hFFS 10k x 1: +38 %).
#[inline(always)]
fn prefetch_next_chunk(slots: &[u32], slot: u32) {
    #[cfg(target_arch = "x86_64")]
    {
        // (Indexed from `slot`, which the caller has just checked: the
        // bounds check folds away.)
        let link = slots[(slot - FIRST + LINK) as usize];
        if link != 0 {
            let next = slots.as_ptr().wrapping_add(link_slot(link - 1));
            // SAFETY: a prefetch is only a hint: it never faults, whatever
            // the address, and changes no memory.
            #[allow(unsafe_code)]
            unsafe {
                core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                    next.cast(),
                );
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slots, slot);
}

/// Slot of chunk `c`'s link.
#[inline(always)]
fn link_slot(c: u32) -> usize {
    (c * SLOTS + LINK) as usize
}

/// Chunk holding the entry before tail slot `tail` (the chain's last).
#[inline(always)]
fn last_chunk(tail: u32) -> u32 {
    (tail - 1) / SLOTS
}

/// Slot after entry slot `slot`, following its chunk's link past the
/// chunk's last entry (the chunk must have one).
#[inline]
fn next_slot(slots: &[u32], slot: u32) -> u32 {
    let next = slot + 1;
    if next.is_multiple_of(SLOTS) {
        slots[link_slot(slot / SLOTS)]
            .wrapping_sub(1)
            .wrapping_mul(SLOTS)
            .wrapping_add(FIRST)
    } else {
        next
    }
}

/// Like [`next_slot`], but a chunk without a link ends at the slot one
/// past its last entry (the tail slot of a full tail chunk).
#[inline]
fn next_slot_for_write(slots: &[u32], slot: u32) -> u32 {
    let next = slot + 1;
    if next.is_multiple_of(SLOTS) {
        let link = slots[link_slot(slot / SLOTS)];
        if link == 0 {
            next
        } else {
            (link - 1) * SLOTS + FIRST
        }
    } else {
        next
    }
}

/// Marks `bucket` (whose last element just left) empty: back to the start
/// of its home chunk. A chain whose tail is in the home chunk is that
/// chunk alone (the home chunk is always a chain's first), so a bucket
/// that never outgrew it costs one compare and the header store.
#[inline(always)]
fn reset(slots: &mut [u32], pool: &mut Pool, end: &mut End, start: &mut Start, bucket: u32) {
    if last_chunk(tail(*end)) != bucket {
        pool.release(slots, start.head, tail(*end));
        slots[link_slot(bucket)] = 0;
    }
    *end = empty_end(bucket);
    *start = Start::empty(bucket);
}

/// Gives a bucket whose tail chunk is full room for one more entry: a
/// compaction or a new tail chunk. Returns the new `live_tail`. (Inlined
/// into its one caller, itself out of line: a second call here cost ~40
/// instructions of register saves per new chunk, ~2.5 per element at 64
/// per bucket.)
#[inline(always)]
fn grow(
    slots: &mut [u32],
    loc: &mut [u32],
    pool: &mut Pool,
    end: &mut End,
    start: &mut Start,
    bucket: u32,
) -> End {
    if start.tombs > live(*end) + PER_CHUNK {
        compact(slots, loc, pool, end, start);
    }
    let t = tail(*end);
    if !t.is_multiple_of(SLOTS) {
        return *end;
    }
    let c = pool.alloc(slots, bucket);
    slots[link_slot(last_chunk(t))] = c + 1;
    *end = with_tail(*end, c * SLOTS + FIRST);
    *end
}

/// Squeezes tombstones out of a bucket, keeping FIFO order; frees the
/// chunks left unused.
#[cold]
#[inline(never)]
fn compact(slots: &mut [u32], loc: &mut [u32], pool: &mut Pool, end: &mut End, start: &mut Start) {
    let (head, tail) = (start.head, tail(*end));
    let (mut read, mut write) = (head, head);
    while read != tail {
        let v = slots[read as usize];
        if v != TOMB {
            slots[write as usize] = v;
            loc[(v & !TAG) as usize] = write;
            write = next_slot_for_write(slots, write);
        }
        read = next_slot_for_write(slots, read);
    }
    // Free the chunks after the one `write` ends in.
    let last = link_slot(last_chunk(write));
    let mut link = slots[last];
    slots[last] = 0;
    while link != 0 {
        let c = link - 1;
        link = slots[link_slot(c)];
        pool.free_chunk(slots, c);
    }
    *end = with_tail(*end, write);
    start.tombs = 0;
}

/// Handle-indexed locations plus one chunked FIFO per bucket.
pub(crate) struct BucketLists {
    /// Home chunks `0..buckets`, then the pool, 16 slots each.
    slots: Vec<u32>,
    /// Per bucket: live count and tail. Kept apart from the home chunks,
    /// in 8 bytes per bucket (80 KB for 10k buckets), because an insert
    /// needs the tail *before* it can store: with the header in the home
    /// chunk, an insert into a bucket whose tail is in a pool chunk waited
    /// for a cache miss on the home chunk before it could even address its
    /// store. Inserts touch only this array.
    ends: Vec<End>,
    /// Per bucket: head and tombstones (pops and removals only).
    starts: Vec<Start>,
    /// Slot of each handle: where it is queued, or was last (then that
    /// slot no longer holds it), or [`NEVER`]. One 4-byte store per insert.
    loc: Vec<u32>,
    /// Ranks of tagged elements.
    ranks: Vec<u64>,
    pool: Pool,
    len: usize,
}

impl BucketLists {
    /// Room for handles `0..capacity` (< 2^31) spread over `buckets` FIFOs.
    pub(crate) fn new(buckets: u32, capacity: u32) -> Result<Self, PqError> {
        let capacity = capacity.min(TAG - 1);
        // Per non-empty bucket, when a chunk is allocated: tombstones ≤
        // live + 15, plus ≤ 14 consumed positions in the head chunk, and
        // the home chunk (if still in the chain) has 15 positions → after
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
        Ok(Self {
            // Zeroed (lazily paged): every chunk starts linkless.
            slots: vec![0; (total * u64::from(SLOTS)) as usize],
            ends: (0..buckets).map(empty_end).collect(),
            starts: (0..buckets).map(Start::empty).collect(),
            loc: vec![NEVER; capacity as usize],
            ranks: vec![0; capacity as usize],
            pool: Pool {
                homes: buckets,
                free: 0,
                fresh: buckets,
                in_use: 0,
                owner: vec![0; pool as usize],
            },
            len: 0,
        })
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Number of buckets: the bound of `push_back`'s bucket index. A
    /// caller that checks its bucket against this value right before
    /// `push_back` spares it a bounds check (the same load, unchanged).
    #[inline(always)]
    pub(crate) fn buckets(&self) -> usize {
        self.ends.len()
    }

    #[inline]
    pub(crate) fn capacity(&self) -> u32 {
        self.loc.len() as u32
    }

    /// Typed check of a caller-supplied handle before it is inserted (for
    /// callers that change state before [`Self::push_back`], which checks
    /// again).
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
    #[inline(always)]
    fn is_queued(&self, handle: u32) -> bool {
        holds::<true>(&self.slots, self.loc[handle as usize], handle)
    }

    #[inline]
    pub(crate) fn is_bucket_empty(&self, bucket: u32) -> bool {
        live(self.ends[bucket as usize]) == 0
    }

    /// Bucket currently holding `handle`, if queued.
    #[inline]
    pub(crate) fn bucket_of(&self, handle: u32) -> Option<u32> {
        if handle < self.capacity() && self.is_queued(handle) {
            Some(self.pool.bucket_of_slot(self.loc[handle as usize]))
        } else {
            None
        }
    }

    /// First element of `bucket`: its handle and, if tagged, its rank.
    pub(crate) fn front(&self, bucket: u32) -> Option<(u32, Option<u64>)> {
        if live(self.ends[bucket as usize]) == 0 {
            return None;
        }
        let mut slot = self.starts[bucket as usize].head;
        loop {
            let v = self.slots[slot as usize];
            if v != TOMB {
                let h = v & !TAG;
                return Some((h, (v & TAG != 0).then(|| self.ranks[h as usize])));
            }
            slot = next_slot(&self.slots, slot);
        }
    }

    /// Appends `handle` to `bucket` after checking it (a typed error
    /// changes nothing); `tagged_rank` is `Some` when the rank differs
    /// from the bucket's. True if the bucket was empty before.
    #[inline(always)]
    pub(crate) fn push_back(
        &mut self,
        bucket: usize,
        handle: u32,
        tagged_rank: Option<u64>,
    ) -> Result<bool, PqError> {
        self.push::<true>(bucket, handle, tagged_rank)
    }

    /// [`Self::push_back`] for a queue that never tags (as
    /// [`Self::pop_front_untagged`]): its slots hold bare handles, so the
    /// already-queued check compares without masking the tag bit.
    #[inline(always)]
    pub(crate) fn push_back_untagged(
        &mut self,
        bucket: usize,
        handle: u32,
    ) -> Result<bool, PqError> {
        self.push::<false>(bucket, handle, None)
    }

    #[inline(always)]
    fn push<const TAGS: bool>(
        &mut self,
        bucket: usize,
        handle: u32,
        tagged_rank: Option<u64>,
    ) -> Result<bool, PqError> {
        let Self {
            slots,
            ends,
            loc,
            ranks,
            len,
            ..
        } = self;
        let (slots, ends, loc) = (&mut slots[..], &mut ends[..], &mut loc[..]);
        let h = handle as usize;
        if h >= loc.len() {
            return Err(PqError::HandleOutOfRange {
                handle,
                capacity: loc.len() as u32,
            });
        }
        if holds::<TAGS>(slots, loc[h], handle) {
            return Err(PqError::AlreadyQueued(handle));
        }
        // An empty bucket starts at its home chunk's first entry, so only a
        // full tail chunk needs work, out of line: a call here would keep
        // every slice and the caller's state live across it (spills).
        let end = &mut ends[bucket];
        let live_tail = *end;
        let tail = tail(live_tail);
        if tail.is_multiple_of(SLOTS) {
            return Ok(self.push_back_grow(bucket as u32, handle, tagged_rank));
        }
        let mut v = handle;
        if let Some(rank) = tagged_rank {
            ranks[h] = rank;
            v |= TAG;
        }
        loc[h] = tail;
        slots[tail as usize] = v;
        *end = live_tail + PUSHED;
        *len += 1;
        Ok(live(live_tail) == 0)
    }

    /// [`Self::push_back`] of a checked handle into a bucket whose tail
    /// chunk is full.
    #[inline(never)]
    fn push_back_grow(&mut self, bucket: u32, handle: u32, tagged_rank: Option<u64>) -> bool {
        let b = bucket as usize;
        let (end, start) = (&mut self.ends[b], &mut self.starts[b]);
        let live_tail = grow(
            &mut self.slots,
            &mut self.loc,
            &mut self.pool,
            end,
            start,
            bucket,
        );
        let mut v = handle;
        if let Some(rank) = tagged_rank {
            self.ranks[handle as usize] = rank;
            v |= TAG;
        }
        let tail = tail(live_tail);
        self.loc[handle as usize] = tail;
        self.slots[tail as usize] = v;
        *end = live_tail + PUSHED;
        self.len += 1;
        live(live_tail) == 0
    }

    /// Pops the first element of a non-empty bucket whose rank is
    /// `bucket_rank`: handle, its rank (a tagged element's own), and whether
    /// the bucket is now empty. (A plain `u64` rather than an `Option`:
    /// the option's flag cost a register and spills in cFFS's drain.)
    #[inline(always)]
    pub(crate) fn pop_front_ranked(&mut self, bucket: u32, bucket_rank: u64) -> (u32, u64, bool) {
        self.pop::<true>(bucket, bucket_rank)
    }

    /// [`Self::pop_front_ranked`] for a queue that never tags (every rank is its
    /// bucket's): no rank lookup, whose bounds check is otherwise paid on
    /// every extract. Returns the handle and whether the bucket is empty.
    #[inline(always)]
    pub(crate) fn pop_front_untagged(&mut self, bucket: u32) -> (u32, bool) {
        let (h, _, now_empty) = self.pop::<false>(bucket, 0);
        (h, now_empty)
    }

    #[inline(always)]
    fn pop<const TAGS: bool>(&mut self, bucket: u32, bucket_rank: u64) -> (u32, u64, bool) {
        let Self {
            slots,
            ends,
            starts,
            ranks,
            pool,
            len,
            ..
        } = self;
        let (slots, ends, starts) = (&mut slots[..], &mut ends[..], &mut starts[..]);
        let b = bucket as usize;
        debug_assert_eq!(ends.len(), starts.len());
        let start = &mut starts[b];
        let head = start.head;
        debug_assert!((head as usize) < slots.len());
        // SAFETY: every head ever stored is a slot of an existing chunk
        // (see `Start::head`).
        #[allow(unsafe_code)]
        let v = unsafe { *slots.get_unchecked(head as usize) };
        if v == TOMB {
            return self.pop_front_slow::<TAGS>(bucket, bucket_rank);
        }
        debug_assert!(TAGS || v & TAG == 0, "tagged element in an untagged queue");
        let h = if TAGS { v & !TAG } else { v };
        let rank = if TAGS && v & TAG != 0 {
            ranks[h as usize]
        } else {
            bucket_rank
        };
        // SAFETY: the slot just read.
        #[allow(unsafe_code)]
        unsafe {
            *slots.get_unchecked_mut(head as usize) = TOMB;
        }
        *len -= 1;
        // SAFETY: `ends` and `starts` both have one entry per bucket (set
        // by the constructor, never resized), and `starts[b]` exists.
        #[allow(unsafe_code)]
        let end = unsafe { ends.get_unchecked_mut(b) };
        debug_assert!(live(*end) > 0, "pop_front on an empty bucket");
        let live_tail = *end - 1;
        if live(live_tail) == 0 {
            reset(slots, pool, end, start, bucket);
            return (h, rank, true);
        }
        *end = live_tail;
        // A live entry follows, so the slot after `head` exists: the next
        // one in this chunk or, past its last entry, the linked chunk.
        // (`next` stays a slot of an existing chunk: the next one in the
        // same chunk, or the first of a linked chunk, checked by index.)
        let mut next = head + 1;
        if next.is_multiple_of(SLOTS) {
            let c = head / SLOTS;
            let following = slots[link_slot(c)].wrapping_sub(1);
            pool.free_chunk(slots, c);
            next = following * SLOTS + FIRST;
            assert!((next as usize) < slots.len(), "corrupt chunk link");
            prefetch_next_chunk(slots, next);
        }
        start.head = next;
        (h, rank, false)
    }

    /// `pop_front` when the head is a tombstone: skips to the first live
    /// entry (one exists), then pops as usual.
    #[cold]
    #[inline(never)]
    fn pop_front_slow<const TAGS: bool>(
        &mut self,
        bucket: u32,
        bucket_rank: u64,
    ) -> (u32, u64, bool) {
        let start = &mut self.starts[bucket as usize];
        let slots = &mut self.slots[..];
        let (mut head, mut tombs) = (start.head, start.tombs);
        while slots[head as usize] == TOMB {
            tombs -= 1;
            let next = head + 1;
            head = if next.is_multiple_of(SLOTS) {
                let c = head / SLOTS;
                let following = slots[link_slot(c)].wrapping_sub(1);
                self.pool.free_chunk(slots, c);
                following * SLOTS + FIRST
            } else {
                next
            };
        }
        start.head = head;
        start.tombs = tombs;
        self.pop::<TAGS>(bucket, bucket_rank)
    }

    /// Unlinks `handle`; returns its bucket and whether that bucket is now
    /// empty, or `None` if the handle is not queued.
    #[inline]
    pub(crate) fn unlink(&mut self, handle: u32) -> Option<(u32, bool)> {
        if handle >= self.capacity() || !self.is_queued(handle) {
            return None;
        }
        let slot = self.loc[handle as usize];
        let bucket = self.pool.bucket_of_slot(slot);
        self.len -= 1;
        self.slots[slot as usize] = TOMB;
        let b = bucket as usize;
        let (end, start) = (&mut self.ends[b], &mut self.starts[b]);
        let live_tail = *end - 1;
        if live(live_tail) == 0 {
            reset(&mut self.slots, &mut self.pool, end, start, bucket);
            return Some((bucket, true));
        }
        *end = live_tail;
        start.tombs += 1;
        Some((bucket, false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fills two buckets, 40 interleaved elements each (the home chunk and
    /// two pool chunks per bucket), and returns every handle's slot.
    fn fill_two_buckets(lists: &mut BucketLists) -> Vec<u32> {
        for h in 0..80u32 {
            lists.push_back_untagged((h % 2) as usize, h).unwrap();
        }
        lists.loc[..80].to_vec()
    }

    #[test]
    fn pool_hands_out_chunks_in_address_order_again_once_none_is_in_use() {
        let mut lists = BucketLists::new(4, 256).unwrap();
        let first = fill_two_buckets(&mut lists);
        assert_eq!(lists.pool.in_use, 4);
        for b in 0..2 {
            let mut popped = Vec::new();
            while !lists.is_bucket_empty(b) {
                popped.push(lists.pop_front_untagged(b).0);
            }
            let expected: Vec<u32> = (0..80).filter(|h| h % 2 == b).collect();
            assert_eq!(popped, expected, "FIFO order in bucket {b}");
        }
        assert_eq!(lists.pool.in_use, 0);
        // The free list would hand the chunks out in reverse release order.
        assert_eq!(fill_two_buckets(&mut lists), first);
    }
}
