//! # Programmable scheduling policies (the Eiffel paper §3.2, §5.1)
//!
//! Eiffel's extended PIFO model on fairway's integer priority queues
//! ([`crate::pq`]) and schedulers:
//!
//! * a **scheduling tree** ([`TreeSpec`] → [`PolicyTree`]): each node is a
//!   scheduling transaction ([`Transaction`]) over a ranked queue whose kind,
//!   number of buckets and rank granularity are chosen per node
//!   ([`QueueSpec`]); flows at the leaves hold the packets;
//! * **per-flow ranking** and **on-dequeue ranking** (§3.2.1, Fig. 10): a
//!   child's rank can be a function of its queued packets' ranks
//!   ([`FlowRank`]), recomputed on enqueue and on dequeue, while a flow's
//!   packets are never reordered;
//! * **one shared shaper** (§3.2.2, Figs. 6–7): a rate limit on any node or
//!   flow, and pacing of the root, all through one timestamp-ordered queue;
//!   [`PolicyTree::soonest_deadline`] tells a caller when to wake up;
//! * **fairway's schedulers as nodes**: any scheduler of the
//!   [`crate::registry`] with its parameters (`drr:quantum=3000`,
//!   `qfq+:m=4`, `wf2q+`, …: [`Transaction::Scheduler`]);
//! * a **time-aware interface** beside [`crate::Scheduler`]:
//!   [`PolicyTree::enqueue`] and [`PolicyTree::dequeue`] take `now` in ns,
//!   [`PolicyTree::next_eligible`] gives the next time a packet can leave.
//!
//! [`policies`] builds the paper's examples (strict priority, STFQ, HPFQ,
//! pFabric, LSTF, EDF, hClock, per-flow pacing, Fig. 6).
//!
//! ```
//! use fairway_core::policy::{policies, PolicyTree};
//!
//! // pFabric over 4 flows: the flow with the least remaining bytes first.
//! let spec = policies::pfabric(4, 1 << 20, 1024);
//! let mut t: PolicyTree<u32> = PolicyTree::build(&spec).expect("valid tree");
//! t.enqueue(0, 0, 1500, 90_000).expect("fits"); // flow 0: 90 kB left
//! t.enqueue(0, 1, 1500, 3_000).expect("fits");  // flow 1: 3 kB left
//! assert_eq!(t.dequeue(0).map(|s| s.flow), Some(1));
//! assert_eq!(t.dequeue(0).map(|s| s.flow), Some(0));
//! ```

mod check;
pub mod error;
pub mod policies;
pub mod queue;
mod sched_node;
pub mod spec;
pub mod tree;

#[cfg(test)]
mod deep_tests;
#[cfg(test)]
mod tests;

pub use error::{BuildError, PolicyEnqueueError, PolicyEnqueueErrorKind};
pub use queue::{QueueKind, QueueSpec};
pub use spec::{ChildParams, FlowRank, FlowSpec, NodeSpec, Transaction, TreeSpec};
pub use tree::{
    stfq_rank_shift, tx_ns, PolicyTree, Served, ServedCount, TreeStats, MAX_DEPTH, MAX_ENTITIES,
    MAX_PACKETS, MAX_QUEUE_BUCKETS, MAX_RATE, MAX_WEIGHT, STFQ_BASE_LEN, STFQ_SCALE,
};
