//! The declarative description of a scheduling tree (the Eiffel paper §3.2, Fig. 6):
//! nodes with their transaction and queue, flows (the leaves that hold
//! packets) and, on every node or flow, how its parent treats it (weight,
//! priority, rate limit, reservation). Parents are indices, in any order;
//! [`PolicyTree::build`](super::PolicyTree::build) checks the whole
//! description (unknown parent, one root, no cycle, no zero rate, weights,
//! horizons) before allocating anything the fast path uses.

use super::queue::{QueueKind, QueueSpec};
use crate::registry::SchedSpec;

/// How a node orders its children: its scheduling transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transaction {
    /// Lowest [`ChildParams::priority`] first; FIFO among equals.
    StrictPriority,
    /// Start-time fair queueing (Goyal et al.): a child's rank is its
    /// virtual start tag `S = max(V, F)`, `F = S + len·2^16/weight`, `V` the
    /// start tag of the last child served.
    Stfq,
    /// Per-flow ranking (the Eiffel paper §3.2.1): a child's rank is a function of
    /// the ranks of its queued packets, updated on enqueue *and* dequeue.
    PacketRank(FlowRank),
    /// hClock (the Eiffel paper's extended version): each child gets at least its
    /// reservation, at most its rate limit, and the rest by weight (STFQ).
    /// Reservation tags are times in ns kept in `reservation_queue`.
    HClock {
        /// Time-ordered queue of the reservation tags.
        reservation_queue: QueueSpec,
    },
    /// One of fairway's schedulers, named by a registry spec with its
    /// parameters (`drr:quantum=3000`, `qfq+:m=4`, `wf2q+`, …: any
    /// [`SchedSpec`], checked by the registry when it was made), orders
    /// the children; each backlogged child is one flow of it holding one
    /// token (its next packet's length).
    Scheduler(SchedSpec),
}

/// A child's rank as a function of its queued packets' ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowRank {
    /// The rank of the packet it would send next (EDF, LSTF, per-packet
    /// priorities: equals sorting packets by rank when each flow's ranks are
    /// non-decreasing).
    Front,
    /// pFabric (the Eiffel paper Fig. 10): on enqueue `f.rank = min(p.rank,
    /// f.rank)`; on dequeue the minimum over the packets still queued.
    Min,
}

/// How a node or flow is treated by its parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChildParams {
    /// Weight at an STFQ / hClock / scheduler parent, `1..=65536`.
    pub weight: u32,
    /// Priority at a strict-priority parent (lower first).
    pub priority: u64,
    /// Rate limit in bytes/s through the shared shaper (`None`: unlimited).
    /// On the root it paces the tree's output.
    pub rate: Option<u64>,
    /// Reservation in bytes/s at an hClock parent (`None`: none).
    pub reservation: Option<u64>,
}

impl Default for ChildParams {
    fn default() -> Self {
        Self {
            weight: 1,
            priority: 0,
            rate: None,
            reservation: None,
        }
    }
}

/// One node: a scheduling transaction over its children.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSpec {
    /// Parent node index; `None` for the root.
    pub parent: Option<u32>,
    /// How the children are ordered.
    pub transaction: Transaction,
    /// The queue holding the children (unused by `Scheduler` nodes).
    pub queue: QueueSpec,
    /// How the parent treats this node.
    pub params: ChildParams,
}

/// One flow: a FIFO of packets under a node (packets of a flow are never
/// reordered).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowSpec {
    /// The node it belongs to.
    pub parent: u32,
    /// How the parent treats this flow.
    pub params: ChildParams,
}

/// The whole tree plus its sizes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeSpec {
    /// Nodes; exactly one has no parent.
    pub nodes: alloc::vec::Vec<NodeSpec>,
    /// Flows (packets enter here).
    pub flows: alloc::vec::Vec<FlowSpec>,
    /// The one shared shaper's queue: ranks are times in ns.
    pub shaper: QueueSpec,
    /// Packets that can be queued at once (pre-allocated).
    pub max_packets: u32,
    /// Longest packet in bytes, `1..=65536`.
    pub max_packet_len: u32,
}

impl TreeSpec {
    /// The default shaper: cFFS, 2 × 10 000 buckets of 100 µs (a 1 s half
    /// window), the shape of the 20k-bucket, 2 s horizon of the Eiffel
    /// paper §5.1.1.
    pub const DEFAULT_SHAPER: QueueSpec = QueueSpec::new(QueueKind::Cffs, 20_000, 100_000);
}
