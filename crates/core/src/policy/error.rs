//! Typed errors of the policy model: what a tree description can get wrong
//! ([`BuildError`]) and why one packet was refused ([`PolicyEnqueueError`],
//! which hands the packet back). Nothing here is ever clamped or grown
//! silently: a rank a node's queue cannot hold exactly is refused and
//! counted.

use crate::pq::PqError;
use core::fmt;

/// Why a tree description was rejected. Node and flow numbers are indices
/// into [`TreeSpec::nodes`](super::TreeSpec) / `flows`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildError {
    /// The tree has no nodes.
    Empty,
    /// A parent index names no node.
    UnknownNode {
        /// The node or flow whose parent is wrong (`"node"` / `"flow"`).
        what: &'static str,
        /// Its index.
        index: u32,
        /// The parent index it gave.
        parent: u32,
    },
    /// No node, or more than one, has no parent.
    RootCount(u32),
    /// Following parents from this node comes back to it.
    Cycle {
        /// A node on the cycle.
        node: u32,
    },
    /// A rate limit (or reservation) of 0 bytes/s.
    RateZero {
        /// `"node"` or `"flow"`.
        what: &'static str,
        /// Its index.
        index: u32,
    },
    /// A weight outside `1..=65536`.
    InvalidWeight {
        /// `"node"` or `"flow"`.
        what: &'static str,
        /// Its index.
        index: u32,
        /// The rejected weight.
        weight: u32,
    },
    /// A parameter out of its range; the message names it and the range.
    InvalidParameter(&'static str),
    /// A node's queue could not be built.
    Queue {
        /// The node.
        node: u32,
        /// The queue's reason.
        error: PqError,
    },
    /// A moving-window queue (cFFS) must cover the largest rank step its
    /// policy can take in one half window, or ranks would be clamped.
    HorizonTooShort {
        /// The node (`u32::MAX` for the shaper).
        node: u32,
        /// Rank units one half window must exceed.
        needs: u64,
        /// Rank units one half window covers (`buckets / 2 * granularity`).
        has: u64,
    },
    /// The node's ranks are not monotone (static priorities) and its queue
    /// has a moving window: use a fixed-range queue or the binary heap.
    NeedsFixedRange {
        /// The node.
        node: u32,
    },
    /// A node's transaction cannot order this kind of child.
    BadChild {
        /// The node.
        node: u32,
        /// Why.
        reason: &'static str,
    },
    /// The existing scheduler refused a child's configuration.
    Scheduler {
        /// The node.
        node: u32,
        /// The scheduler's reason.
        error: crate::ConfigError,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Empty => write!(f, "the tree has no nodes"),
            BuildError::UnknownNode { what, index, parent } => {
                write!(f, "{what} {index}: parent {parent} is not a node")
            }
            BuildError::RootCount(n) => {
                write!(f, "a tree needs exactly one root (node without parent), found {n}")
            }
            BuildError::Cycle { node } => write!(f, "node {node} is its own ancestor (cycle)"),
            BuildError::RateZero { what, index } => {
                write!(f, "{what} {index}: rate 0 bytes/s (allowed: 1..=2^40)")
            }
            BuildError::InvalidWeight { what, index, weight } => {
                write!(f, "{what} {index}: weight {weight} outside 1..=65536")
            }
            BuildError::InvalidParameter(m) => write!(f, "invalid parameter: {m}"),
            BuildError::Queue { node, error } => write!(f, "node {node}: {error}"),
            BuildError::HorizonTooShort { node, needs, has } => {
                if *node == u32::MAX {
                    write!(f, "shaper: half window covers {has} ns, the slowest rate needs > {needs} ns")
                } else {
                    write!(f, "node {node}: half window covers {has} rank units, one step can be {needs}")
                }
            }
            BuildError::NeedsFixedRange { node } => write!(
                f,
                "node {node}: static priorities are not monotone; use a fixed-range queue (ffs, hffs, gradient, approx, bucket-heap) or binary-heap, not cffs"
            ),
            BuildError::BadChild { node, reason } => write!(f, "node {node}: {reason}"),
            BuildError::Scheduler { node, error } => write!(f, "node {node}: {error}"),
        }
    }
}

/// Why one packet was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyEnqueueErrorKind {
    /// The flow index names no flow of the tree.
    UnknownFlow(u32),
    /// Zero-length packet.
    EmptyPacket,
    /// Longer than the tree's `max_packet_len`.
    PacketTooLong {
        /// Its length.
        len: u32,
        /// The maximum.
        max_len: u32,
    },
    /// Every packet slot is in use: an overload drop, counted.
    Full {
        /// Packet slots of the tree.
        capacity: u32,
    },
    /// The packet's rank does not fit a node's queue exactly (outside its
    /// horizon): refused and counted, never clamped.
    RankOutsideHorizon {
        /// The node whose queue cannot hold it.
        node: u32,
        /// The rank.
        rank: u64,
    },
    /// A node ordering flows by their front packet on a moving window needs
    /// each flow's ranks non-decreasing; this one is below the flow's last.
    RankDecreased {
        /// The flow.
        flow: u32,
        /// The rank refused.
        rank: u64,
        /// The flow's last rank.
        last: u64,
    },
}

impl fmt::Display for PolicyEnqueueErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownFlow(i) => write!(f, "unknown flow {i}"),
            Self::EmptyPacket => write!(f, "zero-length packet"),
            Self::PacketTooLong { len, max_len } => {
                write!(
                    f,
                    "packet of {len} bytes exceeds the tree's max of {max_len}"
                )
            }
            Self::Full { capacity } => write!(f, "tree full ({capacity} packets queued)"),
            Self::RankOutsideHorizon { node, rank } => {
                write!(
                    f,
                    "rank {rank} is outside the horizon of node {node}'s queue"
                )
            }
            Self::RankDecreased { flow, rank, last } => {
                write!(f, "flow {flow}: rank {rank} below its previous rank {last}")
            }
        }
    }
}

/// A refused packet: the reason and the packet, untouched.
#[derive(Debug, PartialEq, Eq)]
pub struct PolicyEnqueueError<P> {
    /// Why.
    pub kind: PolicyEnqueueErrorKind,
    /// The packet, handed back.
    pub packet: P,
}

impl<P> fmt::Display for PolicyEnqueueError<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.kind.fmt(f)
    }
}
