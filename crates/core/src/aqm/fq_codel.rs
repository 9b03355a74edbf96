//! FQ-CoDel (RFC 8290): flow queueing with CoDel on every flow queue.
//!
//! # The algorithm
//!
//! A subscriber's traffic mixes a few bulk transfers, which fill any buffer,
//! with many sparse flows (DNS, a game, a call, TCP handshakes) that send a
//! packet now and then and suffer from every packet queued ahead of them.
//! FQ-CoDel separates them and serves them fairly:
//!
//! 1. **Classification.** The caller hashes each packet's flow key (its
//!    5-tuple) to a `u32`; the flow's *home* bucket is
//!    `⌊hash · buckets / 2^32⌋` ([`FqCodel::bucket_of`]): a multiply and a
//!    shift, as Linux's `reciprocal_scale`, uniform when the hash is.
//!    With `ways = 1` (the default) a packet goes to its home bucket, and
//!    flows whose hashes land in one bucket share it (stochastic fairness).
//!
//!    With `ways = w > 1` the buckets are **set-associative**, as CAKE's
//!    (Linux `sch_cake`): they are grouped in sets of `w` consecutive
//!    buckets, the home bucket picks the set, and each bucket remembers
//!    the full 32-bit hash of the flow that last took it (its *tag*). A
//!    packet scans its set once, starting at its home bucket and wrapping
//!    around within the set, and goes to
//!    * the bucket tagged with its hash, if there is one (the flow's own);
//!    * else the first *free* bucket of the scan (no packet queued and on
//!      neither list), which it re-tags with its hash;
//!    * else (every bucket of the set busy with other flows) its home
//!      bucket, which it shares with the flow owning it: a **collision**,
//!      counted per packet in [`FqCodel::collisions`]. The home bucket
//!      keeps its owner's tag, so the owner is not displaced.
//!
//!    A bucket is busy while it holds packets or is on a list (an emptied
//!    new bucket passing through the old list). So two flows share a
//!    bucket only when more than `w` flows busy at once hash into one set
//!    (with `ways = 1`: when two busy flows share a home): a sparse flow whose home is a bulk flow's bucket takes
//!    another bucket of the set and keeps the sparse-flow priority below.
//!    The scan is `O(w)` per enqueue and allocates nothing. A flow can be
//!    reordered only after a collision: if a bucket of its set frees up
//!    while its packets still wait in the shared home bucket, its next
//!    packets take the free bucket (CAKE behaves the same). A bucket's
//!    CoDel state stays with the bucket when it is re-tagged, as it does
//!    with `ways = 1` when another flow hashes to an idle bucket. With
//!    `ways = 1` the set is the home bucket alone and the rule reduces to
//!    plain hashing; collisions are still counted (a packet arriving at a
//!    bucket busy with another flow).
//!
//! 2. **Per-bucket FIFO and CoDel.** Each bucket is a FIFO with its own
//!    [`CodelState`]; packets carry their enqueue time; CoDel judges a
//!    bucket's packets against that bucket's own bytes (the RFC 8289
//!    `MAXPACKET` rule applied per queue; Linux compares against the whole
//!    qdisc's backlog instead).
//!
//! 3. **Deficit round robin over two lists.** A bucket that is in neither
//!    list when a packet arrives joins the tail of the *new* list
//!    with a deficit of one `quantum` (counted in [`FqCodel::new_flow_count`]).
//!    Dequeue looks at the head of the new list, else of the old list:
//!    * a deficit `≤ 0` earns one more quantum and sends the bucket to the
//!      tail of the old list (DRR's round; the deficit may go negative, so a
//!      packet is sent whenever the deficit is positive, not only when it
//!      covers the packet);
//!    * otherwise CoDel dequeues from the bucket (dropping what it decides
//!      to drop); a packet is charged to the deficit and returned;
//!    * a bucket CoDel finds empty leaves the lists — except a *new* bucket
//!      while the old list is not empty: it goes to the tail of the old
//!      list first, so that a flow cannot stay new forever by emptying its
//!      queue each round and starve the old flows. (The RFC's text moves
//!      every emptied new bucket to the old list; with no old bucket to
//!      protect, Linux lets it leave at once, and so do we: its next packet
//!      makes it new again instead of waiting on the old list.)
//!
//!    The effect is the **sparse-flow optimisation**: a flow whose queue
//!    empties every time it is served (its rate below its fair share) keeps
//!    re-entering through the new list and is served ahead of every bulk
//!    flow — its delay is about one packet transmission, not the bulk
//!    flows' standing queue. A bulk flow stays on the old list and gets its
//!    quantum per round.
//!
//! 4. **Overflow.** When an enqueue brings the total over `limit` packets,
//!    the head packet of the bucket with the most bytes queued is dropped
//!    (counted as an overflow drop and returned to the caller): the flow
//!    with the largest backlog pays for the overflow, not the sparse flows
//!    whose few bytes sit behind it.
//!    Linux drops a batch (up to half the fat flow's bytes, at most 64
//!    packets) and adds the drops to that bucket's CoDel count; we follow
//!    the RFC: one packet per packet over the limit, CoDel untouched. The
//!    search scans the buckets on the two lists (every bucket holding a
//!    packet is on one): O(active buckets) per overflow drop, none
//!    otherwise. Ties go to the lowest bucket index, as Linux's scan.
//!
//! No operation allocates: the buckets, the lists (intrusive, through one
//! `next` index per bucket) and room for a slab of `limit + 1` packet slots
//! (one above the limit, for the packet that overflows; a slot is written
//! when first used) are allocated by [`FqCodel::new`].
//!
//! The limit can change on a running queue ([`FqCodel::relimit`]), with
//! room for the new limit allocated beforehand ([`FqCodel::room_for`]):
//! the queue keeps its packets, their order and CoDel's state. The new
//! limit holds from the next enqueue when the queue is empty or the limit
//! fits the room it has (a lower one always does): packets above a
//! lowered limit stay queued and leave as they are served; while the
//! total stays above the limit, each enqueue drops one packet as an
//! overflow (above), so the queue does not grow. A queue holding packets
//! whose new limit needs more room refuses the change (nothing is
//! copied): the caller gives it again once the queue is empty.
//!
//! # Constants and ranges
//!
//! * [`DEFAULT_QUANTUM`] = 1514 bytes, [`DEFAULT_BUCKETS`] = 1024,
//!   [`DEFAULT_LIMIT`] = 10240 packets: RFC 8290's defaults (and Linux's).
//! * `quantum` [`MIN_QUANTUM`]`..=`[`MAX_QUANTUM`] (256 B ..= 1 MiB). A
//!   packet of `L` bytes costs `⌈L/quantum⌉` list rotations before it is
//!   sent, so the lower bound caps that at 256 for the largest packet; the
//!   upper bound keeps a bucket's turn under 100 ms at 100 Mbit/s (a turn
//!   longer than CoDel's interval is no longer fair queueing at the
//!   timescale CoDel acts on). Linux raises values below 256 to 256; we
//!   refuse them.
//! * `buckets` `1..=`[`MAX_BUCKETS`] (65536, Linux's bound): allocated up
//!   front, 96 bytes each on 64-bit targets (56 of list, deficit and CoDel
//!   state, 8 of tag, 32 of queue record).
//! * `ways` a power of two in `1..=`[`MAX_WAYS`] (64) that divides
//!   `buckets`; [`DEFAULT_WAYS`] = 1 (plain hashing, RFC 8290). CAKE uses
//!   8; the bound keeps the per-enqueue scan short. Tags take 8 more bytes
//!   per bucket.
//! * `limit` `1..=`[`MAX_LIMIT`] (2^24 packets, the crate's bound on
//!   pre-allocated packet slots, as the C ABI's `max_packets`).
//! * Packets `1..=65536` bytes ([`Limits::DEFAULT`]); outside, the enqueue
//!   error hands the packet back.
//! * Deficits are `i64`: they stay within `(−65536, quantum]`.

use super::codel::{CodelParams, CodelState, DEFAULT_MTU};
use super::error::AqmConfigError;
use super::{DropCounts, StoreQueue, Timed};
use crate::error::EnqueueError;
use crate::flow::{FlowConfig, FlowId, Limits};
use crate::sched::capacity::{Backlog, Capacity};
use crate::sched::flow_queues::{FlowQueues, Slab};
use crate::Packet;
use alloc::vec::Vec;

/// RFC 8290's default quantum: one Ethernet frame, bytes.
pub const DEFAULT_QUANTUM: u32 = DEFAULT_MTU;
/// RFC 8290's default number of buckets.
pub const DEFAULT_BUCKETS: u32 = 1024;
/// RFC 8290's default packet limit.
pub const DEFAULT_LIMIT: u32 = 10240;
/// Smallest accepted quantum, bytes.
pub const MIN_QUANTUM: u32 = 256;
/// Largest accepted quantum, bytes.
pub const MAX_QUANTUM: u32 = 1 << 20;
/// Largest accepted number of buckets.
pub const MAX_BUCKETS: u32 = 1 << 16;
/// Largest accepted packet limit.
pub const MAX_LIMIT: u32 = 1 << 24;
/// Default associativity: one bucket per set, plain hashing (RFC 8290).
pub const DEFAULT_WAYS: u32 = 1;
/// Largest accepted associativity (buckets per set).
pub const MAX_WAYS: u32 = 64;

/// List terminator and "in no list".
const NIL: u32 = u32::MAX;

/// The configuration of an [`FqCodel`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FqCodelConfig {
    /// CoDel's parameters, the same for every bucket.
    pub codel: CodelParams,
    /// Bytes of service a bucket earns per round: `MIN_QUANTUM..=MAX_QUANTUM`.
    pub quantum: u32,
    /// Number of flow buckets: `1..=MAX_BUCKETS`.
    pub buckets: u32,
    /// Buckets per set of the set-associative classification (see the
    /// module doc): a power of two in `1..=MAX_WAYS` dividing `buckets`;
    /// 1 is plain hashing.
    pub ways: u32,
    /// Packets held at most over all buckets: `1..=MAX_LIMIT`.
    pub limit: u32,
}

impl FqCodelConfig {
    /// RFC 8290's defaults: CoDel's RFC 8289 defaults, quantum 1514 bytes,
    /// 1024 buckets, plain hashing (1 way), 10240 packets.
    pub const RFC8290: FqCodelConfig = FqCodelConfig {
        codel: CodelParams::RFC8289,
        quantum: DEFAULT_QUANTUM,
        buckets: DEFAULT_BUCKETS,
        ways: DEFAULT_WAYS,
        limit: DEFAULT_LIMIT,
    };

    /// `Ok` if every field is in its range; otherwise the error naming the
    /// first one out of range (CoDel's, then quantum, buckets, ways, limit).
    pub const fn check(&self) -> Result<(), AqmConfigError> {
        if let Err(e) = self.codel.check() {
            return Err(e);
        }
        if self.quantum < MIN_QUANTUM || self.quantum > MAX_QUANTUM {
            return Err(AqmConfigError::Quantum {
                quantum: self.quantum,
            });
        }
        if self.buckets == 0 || self.buckets > MAX_BUCKETS {
            return Err(AqmConfigError::Buckets {
                buckets: self.buckets,
            });
        }
        if !self.ways.is_power_of_two()
            || self.ways > MAX_WAYS
            || !self.buckets.is_multiple_of(self.ways)
        {
            return Err(AqmConfigError::Ways {
                ways: self.ways,
                buckets: self.buckets,
            });
        }
        if self.limit == 0 || self.limit > MAX_LIMIT {
            return Err(AqmConfigError::Limit { limit: self.limit });
        }
        Ok(())
    }
}

/// Which list a bucket is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OnList {
    None,
    New,
    Old,
}

/// One bucket's scheduling and CoDel state (its packets are in the store).
#[derive(Clone, Copy, Debug)]
struct Bucket {
    codel: CodelState,
    deficit: i64,
    /// Next bucket on the same list.
    next: u32,
    list: OnList,
}

const IDLE_BUCKET: Bucket = Bucket {
    codel: CodelState::new(),
    deficit: 0,
    next: NIL,
    list: OnList::None,
};

/// A FIFO list of buckets, linked through `Bucket::next`.
#[derive(Clone, Copy, Debug)]
struct List {
    head: u32,
    tail: u32,
}

impl List {
    const EMPTY: List = List {
        head: NIL,
        tail: NIL,
    };

    fn push_tail(&mut self, buckets: &mut [Bucket], b: u32, tag: OnList) {
        if let Some(bucket) = buckets.get_mut(b as usize) {
            bucket.next = NIL;
            bucket.list = tag;
        }
        match buckets.get_mut(self.tail as usize) {
            Some(tail) => tail.next = b,
            None => self.head = b,
        }
        self.tail = b;
    }

    /// Unlinks the head (the caller re-files or retires it).
    fn pop_head(&mut self, buckets: &[Bucket]) {
        let next = buckets.get(self.head as usize).map_or(NIL, |h| h.next);
        self.head = next;
        if next == NIL {
            self.tail = NIL;
        }
    }
}

/// Room for an [`FqCodel`]'s packets at another limit, allocated (not
/// written) ahead of [`FqCodel::relimit`].
pub struct Room<P> {
    limit: u32,
    slab: Slab<Timed<P>>,
}

impl<P> Room<P> {
    /// The limit it has room for.
    pub fn limit(&self) -> u32 {
        self.limit
    }
}

/// Flow-queueing CoDel over a fixed set of hash buckets.
///
/// ```
/// use fairway_core::aqm::{FqCodel, FqCodelConfig};
///
/// let mut q: FqCodel<u32> = FqCodel::new(FqCodelConfig::RFC8290).expect("valid");
/// // The caller hashes each packet's 5-tuple to a u32 (the bucket is
/// // hash · 1024 / 2^32): a bulk flow and a sparse one.
/// let (bulk, sparse) = (0x1234_5678, 0x9abc_def0);
/// assert_ne!(q.bucket_of(bulk), q.bucket_of(sparse));
/// for _ in 0..3 {
///     assert_eq!(q.enqueue(bulk, 1500, 0), Ok(None));
/// }
/// assert_eq!(q.enqueue(sparse, 64, 0), Ok(None));
/// let mut sent = Vec::new();
/// while let Some(p) = q.dequeue(1_000) {
///     sent.push(p);
/// }
/// // The bulk flow is served while its deficit is positive: its 1514-byte
/// // quantum covers one packet and starts a second (the deficit goes
/// // negative); then the sparse flow, then the bulk flow's next quantum.
/// assert_eq!(sent, [1500, 1500, 64, 1500]);
/// ```
pub struct FqCodel<P> {
    cfg: FqCodelConfig,
    store: FlowQueues<Timed<P>>,
    buckets: Vec<Bucket>,
    /// Each bucket's tag: the hash of the flow that last took it (`None`:
    /// never taken).
    tags: Vec<Option<u32>>,
    new_flows: List,
    old_flows: List,
    drops: DropCounts,
    new_flow_count: u64,
    collisions: u64,
}

impl<P: Packet> FqCodel<P> {
    /// An empty FQ-CoDel for `cfg`, after checking every parameter (nothing
    /// is allocated if one is out of range).
    pub fn new(cfg: FqCodelConfig) -> Result<Self, AqmConfigError> {
        cfg.check()?;
        // limit ≤ 2^24, so limit + 1 fits; buckets ≤ 2^16 at weight 1 stay
        // within the store's weight sum, so `add_flow` cannot fail (its
        // error is mapped rather than unwrapped all the same).
        let cap = Capacity::new(cfg.buckets, cfg.limit + 1);
        let mut store = FlowQueues::new(cap, Limits::DEFAULT);
        for b in 0..cfg.buckets {
            store
                .add_flow(
                    FlowId(b),
                    FlowConfig::new(1, Limits::DEFAULT.max_packet_len),
                )
                .map_err(|_| AqmConfigError::Buckets {
                    buckets: cfg.buckets,
                })?;
        }
        Ok(Self {
            cfg,
            store,
            buckets: alloc::vec![IDLE_BUCKET; cfg.buckets as usize],
            tags: alloc::vec![None; cfg.buckets as usize],
            new_flows: List::EMPTY,
            old_flows: List::EMPTY,
            drops: DropCounts::default(),
            new_flow_count: 0,
            collisions: 0,
        })
    }

    /// Room for the packets of a queue of limit `limit` (checked as
    /// [`FqCodelConfig::check`] does), to give to [`Self::relimit`]: it
    /// allocates, so it is called before, not where the queue runs.
    pub fn room_for(limit: u32) -> Result<Room<P>, AqmConfigError> {
        if limit == 0 || limit > MAX_LIMIT {
            return Err(AqmConfigError::Limit { limit });
        }
        Ok(Room {
            limit,
            slab: Slab::with_room(limit + 1),
        })
    }

    /// Takes the limit of `room` (see the module doc), keeping every
    /// queued packet, and gives back the room to free (elsewhere): an
    /// empty queue takes `room` and gives back its old one; a queue
    /// holding packets keeps its own when the new limit fits it (a lower
    /// one) and gives back `room` unused. `Err(room)`: the queue holds
    /// packets and the new limit does not fit its room; nothing changed.
    /// O(1), never allocates.
    pub fn relimit(&mut self, room: Room<P>) -> Result<Room<P>, Room<P>> {
        let limit = room.limit;
        if self.is_empty() {
            let old = self.cfg.limit;
            return match self.store.swap_slab(room.slab) {
                Ok(slab) => {
                    self.cfg.limit = limit;
                    Ok(Room { limit: old, slab })
                }
                Err(slab) => Err(Room { limit, slab }),
            };
        }
        // Room for the limit and the one packet that overflows it.
        if limit < self.store.max_packets() {
            self.cfg.limit = limit;
            return Ok(room);
        }
        Err(room)
    }

    /// The configuration in use.
    pub fn config(&self) -> FqCodelConfig {
        self.cfg
    }

    /// The home bucket of a flow hash: `⌊hash · buckets / 2^32⌋` (with
    /// `ways = 1`, the bucket its packets go to).
    #[inline]
    pub fn bucket_of(&self, hash: u32) -> u32 {
        ((u64::from(hash) * u64::from(self.cfg.buckets)) >> 32) as u32
    }

    /// The bucket a packet of the flow `hash` would be queued in now, and
    /// whether that is a collision (the bucket is busy with another flow):
    /// the scan of the module doc, `O(ways)`.
    pub fn bucket_for(&self, hash: u32) -> (u32, bool) {
        let home = self.bucket_of(hash);
        let mask = self.cfg.ways - 1;
        let base = home & !mask;
        let mut free = None;
        for i in 0..self.cfg.ways {
            let k = base | (home.wrapping_add(i) & mask);
            if self.tags.get(k as usize) == Some(&Some(hash)) {
                return (k, false);
            }
            let idle = self.buckets.get(k as usize).map(|b| b.list) == Some(OnList::None);
            if free.is_none() && idle {
                free = Some(k);
            }
        }
        match free {
            Some(k) => (k, false),
            None => (home, true),
        }
    }

    /// Queues `packet` of the flow whose key hashes to `flow_hash`, stamped
    /// with `now_ns`. `Ok(None)`: queued. `Ok(Some(victim))`: queued, and
    /// the total went over `limit`, so `victim`, the head packet of the
    /// bucket with the most bytes, was dropped (counted as an overflow
    /// drop; it may be this very packet). A packet of 0 or more than 65536
    /// bytes comes back in the error, nothing changed.
    pub fn enqueue(
        &mut self,
        flow_hash: u32,
        packet: P,
        now_ns: u64,
    ) -> Result<Option<P>, EnqueueError<P>> {
        let (b, collision) = self.bucket_for(flow_hash);
        let timed = Timed {
            packet,
            enqueued_ns: now_ns,
        };
        if let Err(e) = self.store.push(FlowId(b), timed) {
            return Err(EnqueueError {
                kind: e.kind,
                packet: e.packet.packet,
            });
        }
        if collision {
            self.collisions += 1;
        } else if let Some(tag) = self.tags.get_mut(b as usize) {
            *tag = Some(flow_hash);
        }
        let joins = self.buckets.get(b as usize).map(|k| k.list) == Some(OnList::None);
        if joins {
            self.new_flows.push_tail(&mut self.buckets, b, OnList::New);
            if let Some(bucket) = self.buckets.get_mut(b as usize) {
                bucket.deficit = i64::from(self.cfg.quantum);
            }
            self.new_flow_count += 1;
        }
        if self.store.total().packets > u64::from(self.cfg.limit) {
            return Ok(self.drop_from_fattest());
        }
        Ok(None)
    }

    /// Drops the head packet of the bucket with the most bytes (lowest
    /// index on ties) among those on the lists.
    fn drop_from_fattest(&mut self) -> Option<P> {
        let mut fattest: Option<(u64, u32)> = None;
        for list in [self.new_flows, self.old_flows] {
            let mut b = list.head;
            while let Some(bucket) = self.buckets.get(b as usize) {
                let bytes = self.store.flow_backlog(FlowId(b)).map_or(0, |k| k.bytes);
                let better = match fattest {
                    None => bytes > 0,
                    Some((most, at)) => bytes > most || (bytes == most && b < at),
                };
                if better {
                    fattest = Some((bytes, b));
                }
                b = bucket.next;
            }
        }
        let (_, b) = fattest?;
        let victim = self.store.pop(FlowId(b))?.packet;
        self.drops.count_overflow(victim.len());
        Some(victim)
    }

    /// The next packet to send at `now_ns`; the packets CoDel drops on the
    /// way go to `on_drop`, in the order dropped.
    pub fn dequeue_with(&mut self, now_ns: u64, mut on_drop: impl FnMut(P)) -> Option<P> {
        loop {
            let (from_new, b) = if self.new_flows.head != NIL {
                (true, self.new_flows.head)
            } else if self.old_flows.head != NIL {
                (false, self.old_flows.head)
            } else {
                return None;
            };
            let bucket = self.buckets.get_mut(b as usize)?;
            if bucket.deficit <= 0 {
                bucket.deficit += i64::from(self.cfg.quantum);
                self.unlink_head(from_new);
                self.old_flows.push_tail(&mut self.buckets, b, OnList::Old);
                continue;
            }
            let drops = &mut self.drops;
            let mut q = StoreQueue {
                store: &mut self.store,
                id: FlowId(b),
            };
            let sent = bucket
                .codel
                .dequeue(&self.cfg.codel, &mut q, now_ns, &mut |p: P| {
                    drops.count_codel(p.len());
                    on_drop(p);
                });
            if let Some(packet) = sent {
                bucket.deficit -= i64::from(packet.len());
                return Some(packet);
            }
            self.unlink_head(from_new);
            if from_new && self.old_flows.head != NIL {
                self.old_flows.push_tail(&mut self.buckets, b, OnList::Old);
            } else if let Some(bucket) = self.buckets.get_mut(b as usize) {
                bucket.list = OnList::None;
                bucket.next = NIL;
            }
        }
    }

    /// [`Self::dequeue_with`], dropping CoDel's victims in place.
    pub fn dequeue(&mut self, now_ns: u64) -> Option<P> {
        self.dequeue_with(now_ns, drop)
    }

    fn unlink_head(&mut self, from_new: bool) {
        if from_new {
            self.new_flows.pop_head(&self.buckets);
        } else {
            self.old_flows.pop_head(&self.buckets);
        }
    }

    /// Packets and bytes queued over all buckets.
    pub fn backlog(&self) -> Backlog {
        self.store.total()
    }

    /// Packets and bytes queued in one bucket (`None` past the last).
    pub fn bucket_backlog(&self, bucket: u32) -> Option<Backlog> {
        self.store.flow_backlog(FlowId(bucket))
    }

    /// One bucket's CoDel state (`None` past the last).
    pub fn codel_state(&self, bucket: u32) -> Option<&CodelState> {
        self.buckets.get(bucket as usize).map(|b| &b.codel)
    }

    /// True if nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.store.total().packets == 0
    }

    /// Drops so far, by reason.
    pub fn drops(&self) -> DropCounts {
        self.drops
    }

    /// How many times a bucket joined the new-flow list.
    pub fn new_flow_count(&self) -> u64 {
        self.new_flow_count
    }

    /// Packets queued in a bucket busy with another flow (see the module
    /// doc): every bucket of the flow's set was busy (with `ways = 1`: its
    /// one bucket was).
    pub fn collisions(&self) -> u64 {
        self.collisions
    }
}
