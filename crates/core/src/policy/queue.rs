//! The ranked queue of one node (the Eiffel paper §3.1, §3.2: "the queue type of
//! each node is selectable"): any of the crate's integer priority queues
//! behind one enum, with the node's rank granularity and horizon.
//!
//! A rank `r` goes to bucket `r / granularity`; within a bucket elements
//! leave in FIFO order, so granularity trades exact order for fewer buckets
//! (the paper's "rank granularity"). The horizon is `buckets * granularity`
//! rank units:
//! * fixed-range queues (`ffs`, `hffs`, `gradient`, `approx`, `bucket-heap`)
//!   hold ranks `0..horizon`, absolutely;
//! * `cffs` holds a window of `horizon` rank units that moves forward with
//!   the minimum (the Eiffel paper Fig. 4), for ranks that only grow (virtual times,
//!   timestamps, deadlines);
//! * `binary-heap` holds any rank (the comparison-based baseline).
//!
//! `RankedQueue::can_hold` says whether a rank fits exactly; the tree
//! refuses (and counts) a packet whose rank does not, instead of letting the
//! queue clamp it.

use super::error::BuildError;
use crate::pq::{
    ApproxGradientQueue, BucketHeap, CircularFfsQueue, ElementBinaryHeap, FfsQueue, GradientQueue,
    HierarchicalFfsQueue, IntegerPriorityQueue,
};
use alloc::collections::BinaryHeap;
use core::cmp::Reverse;

/// Which integer priority queue a node uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueKind {
    /// Flat FFS bitmap (≤ 1024 buckets), fixed range.
    Ffs,
    /// Hierarchical FFS, fixed range.
    Hffs,
    /// Circular hierarchical FFS: moving window (the paper's default).
    Cffs,
    /// Exact gradient queue, fixed range.
    Gradient,
    /// Approximate gradient queue (α = 16), fixed range; approximate order.
    Approx,
    /// Heap of buckets, fixed range (baseline).
    BucketHeap,
    /// Binary heap of elements, any rank (comparison-based baseline).
    BinaryHeap,
    /// Binary heap without a handle index: removing an element (a re-rank)
    /// searches it linearly and re-heapifies, O(n), as the heap baseline of
    /// the Eiffel paper's pFabric (§5.1.2) did. For comparisons only.
    UnindexedHeap,
}

impl QueueKind {
    /// All kinds with their names, as written in policy files.
    pub const ALL: [(&'static str, QueueKind); 8] = [
        ("ffs", QueueKind::Ffs),
        ("hffs", QueueKind::Hffs),
        ("cffs", QueueKind::Cffs),
        ("gradient", QueueKind::Gradient),
        ("approx", QueueKind::Approx),
        ("bucket-heap", QueueKind::BucketHeap),
        ("binary-heap", QueueKind::BinaryHeap),
        ("unindexed-heap", QueueKind::UnindexedHeap),
    ];

    /// Parses a name of [`QueueKind::ALL`].
    pub fn parse(s: &str) -> Option<QueueKind> {
        Self::ALL.iter().find(|(n, _)| *n == s).map(|&(_, k)| k)
    }

    /// The name as written in policy files.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, k)| *k == self)
            .map_or("?", |(n, _)| n)
    }

    /// True for `cffs` (ranks must not fall below the window).
    pub fn is_moving(self) -> bool {
        self == QueueKind::Cffs
    }

    /// True for the heaps, which hold any rank.
    pub fn holds_any_rank(self) -> bool {
        matches!(self, QueueKind::BinaryHeap | QueueKind::UnindexedHeap)
    }
}

/// A node's queue: kind, number of buckets and rank units per bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueSpec {
    /// The queue.
    pub kind: QueueKind,
    /// Buckets (`cffs`: both halves together, even). Ignored by `binary-heap`.
    pub buckets: u32,
    /// Rank units per bucket, ≥ 1.
    pub granularity: u64,
}

impl QueueSpec {
    /// A queue of `kind` with `buckets` buckets of `granularity` rank units.
    pub const fn new(kind: QueueKind, buckets: u32, granularity: u64) -> Self {
        Self {
            kind,
            buckets,
            granularity,
        }
    }

    /// Rank units one half of a moving window covers (the largest step a
    /// rank may take past the minimum without risking a clamp).
    pub fn half_window(&self) -> u64 {
        u64::from(self.buckets / 2).saturating_mul(self.granularity)
    }
}

/// The queue instance; elements are `u32` handles (child slots).
pub(crate) enum NodeQueue {
    Ffs(FfsQueue),
    Hffs(HierarchicalFfsQueue),
    Cffs(CircularFfsQueue),
    Gradient(GradientQueue),
    Approx(ApproxGradientQueue),
    BucketHeap(BucketHeap),
    BinaryHeap(ElementBinaryHeap),
    Unindexed(UnindexedHeap),
    Single(SingleSlot),
}

/// A binary heap of `(rank, arrival, handle)` with no handle index (see
/// [`QueueKind::UnindexedHeap`]). Its buffer is allocated once.
pub(crate) struct UnindexedHeap {
    heap: BinaryHeap<Reverse<(u64, u64, u32)>>,
    seq: u64,
}

impl UnindexedHeap {
    fn new(capacity: u32) -> Self {
        Self {
            heap: BinaryHeap::with_capacity(capacity as usize),
            seq: 0,
        }
    }
    fn insert(&mut self, handle: u32, rank: u64) -> Result<(), crate::pq::PqError> {
        self.seq += 1;
        self.heap.push(Reverse((rank, self.seq, handle)));
        Ok(())
    }
    fn extract_min(&mut self) -> Option<(u32, u64)> {
        self.heap.pop().map(|Reverse((r, _, h))| (h, r))
    }
    fn peek_min(&self) -> Option<(u32, u64)> {
        self.heap.peek().map(|&Reverse((r, _, h))| (h, r))
    }
    fn remove(&mut self, handle: u32) -> bool {
        // Linear search, then heapify the whole buffer again (O(n)); the
        // buffer moves out and back, so nothing is allocated.
        let mut v = core::mem::take(&mut self.heap).into_vec();
        let found = match v.iter().position(|e| e.0 .2 == handle) {
            Some(i) => {
                v.swap_remove(i);
                true
            }
            None => false,
        };
        self.heap = BinaryHeap::from(v);
        found
    }
    fn soonest_rank(&self) -> Option<u64> {
        self.peek_min().map(|(_, r)| r)
    }
    fn len(&self) -> usize {
        self.heap.len()
    }
}

/// The queue of a node with one child (every node of a chain): a slot
/// holding that child or nothing. With one element every queue kind
/// serves it next, so only what it accepts matters: a fixed-range kind
/// holds buckets `0..buckets`; `cffs` and the heaps hold any rank, since
/// the one element is never queued beside another (an empty cFFS re-bases
/// its window on the rank it receives). It keeps no buckets, so the node
/// costs a few bytes instead of its buckets' arrays, and a packet through
/// it touches no cold bucket memory.
pub(crate) struct SingleSlot {
    /// The child (handle 0) and its bucket, when queued.
    item: Option<(u32, u64)>,
}

impl SingleSlot {
    fn insert(&mut self, handle: u32, bucket: u64) -> Result<(), crate::pq::PqError> {
        if handle != 0 {
            return Err(crate::pq::PqError::HandleOutOfRange {
                handle,
                capacity: 1,
            });
        }
        if self.item.is_some() {
            return Err(crate::pq::PqError::AlreadyQueued(handle));
        }
        self.item = Some((handle, bucket));
        Ok(())
    }
    fn extract_min(&mut self) -> Option<(u32, u64)> {
        self.item.take()
    }
    fn peek_min(&self) -> Option<(u32, u64)> {
        self.item
    }
    fn remove(&mut self, handle: u32) -> bool {
        self.item.take_if(|(h, _)| *h == handle).is_some()
    }
    fn soonest_rank(&self) -> Option<u64> {
        self.item.map(|(_, b)| b)
    }
    fn len(&self) -> usize {
        usize::from(self.item.is_some())
    }
}

/// Dispatches one call to whichever queue is inside.
macro_rules! each {
    ($q:expr, $x:ident => $e:expr) => {
        match $q {
            NodeQueue::Single($x) => $e,
            NodeQueue::Ffs($x) => $e,
            NodeQueue::Hffs($x) => $e,
            NodeQueue::Cffs($x) => $e,
            NodeQueue::Gradient($x) => $e,
            NodeQueue::Approx($x) => $e,
            NodeQueue::BucketHeap($x) => $e,
            NodeQueue::BinaryHeap($x) => $e,
            NodeQueue::Unindexed($x) => $e,
        }
    };
}

/// A node queue plus its granularity.
pub(crate) struct RankedQueue {
    pub(crate) q: NodeQueue,
    g: u64,
    buckets: u64,
    /// The kind holds ranks `0..buckets · g` only.
    fixed_range: bool,
}

impl RankedQueue {
    /// Builds the queue for handles `0..capacity`.
    pub(crate) fn new(spec: QueueSpec, capacity: u32, node: u32) -> Result<Self, BuildError> {
        if spec.granularity == 0 {
            return Err(BuildError::InvalidParameter(
                "queue granularity must be >= 1 rank unit",
            ));
        }
        let e = |error| BuildError::Queue { node, error };
        let b = spec.buckets;
        let cap = capacity.max(1);
        let q = match spec.kind {
            QueueKind::Ffs => NodeQueue::Ffs(FfsQueue::new(0, b, cap).map_err(e)?),
            QueueKind::Hffs => NodeQueue::Hffs(HierarchicalFfsQueue::new(0, b, cap).map_err(e)?),
            QueueKind::Cffs => {
                if b < 2 || !b.is_multiple_of(2) {
                    return Err(BuildError::InvalidParameter(
                        "cffs buckets must be even and >= 2 (two halves)",
                    ));
                }
                NodeQueue::Cffs(CircularFfsQueue::new(b / 2, cap).map_err(e)?)
            }
            QueueKind::Gradient => NodeQueue::Gradient(GradientQueue::new(0, b, cap).map_err(e)?),
            QueueKind::Approx => {
                NodeQueue::Approx(ApproxGradientQueue::new(0, b, 16, cap).map_err(e)?)
            }
            QueueKind::BucketHeap => NodeQueue::BucketHeap(BucketHeap::new(0, b, cap).map_err(e)?),
            QueueKind::BinaryHeap => NodeQueue::BinaryHeap(ElementBinaryHeap::new(cap)),
            QueueKind::UnindexedHeap => NodeQueue::Unindexed(UnindexedHeap::new(cap)),
        };
        Ok(Self {
            q,
            g: spec.granularity,
            buckets: u64::from(b),
            fixed_range: !spec.kind.is_moving() && !spec.kind.holds_any_rank(),
        })
    }

    /// The same queue for a node with one child, holding it in a
    /// [`SingleSlot`] (built by [`new`](Self::new) first, so the spec is
    /// checked as for any other node). Not for a node whose children are
    /// ranked by their packets: `can_hold` of a non-empty cFFS depends on
    /// its window, which the slot does not keep.
    pub(crate) fn into_single(self) -> Self {
        Self {
            q: NodeQueue::Single(SingleSlot { item: None }),
            ..self
        }
    }

    /// True if `rank` can be inserted now without being clamped.
    #[inline]
    pub(crate) fn can_hold(&self, rank: u64) -> bool {
        let b = rank / self.g;
        match &self.q {
            NodeQueue::BinaryHeap(_) | NodeQueue::Unindexed(_) => true,
            NodeQueue::Single(_) if !self.fixed_range => true,
            NodeQueue::Cffs(c) => {
                // Inside the current window; an empty queue re-bases on the
                // first insert. (A past-the-window insert that the queue
                // could absorb by swapping halves is refused too: being
                // conservative never clamps.)
                c.is_empty() || (b >= c.window_start() && b - c.window_start() < self.buckets)
            }
            _ => b < self.buckets,
        }
    }

    /// Inserts `handle` with `rank`; false (nothing changed) if the rank
    /// does not fit exactly.
    #[inline]
    pub(crate) fn insert(&mut self, handle: u32, rank: u64) -> bool {
        if !self.can_hold(rank) {
            return false;
        }
        let b = rank / self.g;
        each!(&mut self.q, q => q.insert(handle, b)).is_ok()
    }

    /// Pops the minimum handle.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<u32> {
        each!(&mut self.q, q => q.extract_min()).map(|(h, _)| h)
    }

    /// The minimum handle, not removed.
    #[inline]
    pub(crate) fn peek(&self) -> Option<u32> {
        each!(&self.q, q => q.peek_min()).map(|(h, _)| h)
    }

    /// Removes a queued handle.
    #[inline]
    pub(crate) fn remove(&mut self, handle: u32) -> bool {
        each!(&mut self.q, q => q.remove(handle))
    }

    /// Queued handles.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        each!(&self.q, q => q.len())
    }

    /// Bucket rank of the minimum times the granularity.
    #[inline]
    pub(crate) fn soonest(&self) -> Option<u64> {
        each!(&self.q, q => q.soonest_rank()).map(|b| b.saturating_mul(self.g))
    }
}
