//! # fairway-core: the scheduling algorithms
//!
//! `no_std` + `alloc`: no threads, no I/O, no clocks. Everything here is a pure
//! data structure driven by its caller.
//!
//! The crate is laid out by concept:
//!
//! * [`sched`]: the packet schedulers. [`Scheduler`] is the one trait they
//!   all implement (add/remove/reconfigure a flow, enqueue, dequeue, peek,
//!   counters); one module per algorithm: [`fifo`], [`drr`], [`wf2q_plus`]
//!   (exact WF2Q+, the oracle the approximate schedulers are checked
//!   against), [`qfq`] (O(1) QFQ), [`s_kps`] (S-KPS, QFQ's O(1) competitor)
//!   and [`sched_plus`] (the SCHED+ scheme: QFQ+ and WF2Q++); [`flow_queues`] holds the packets of every scheduler
//!   (a pre-sized slab with one intrusive FIFO list per flow, so the fast
//!   path never allocates); [`vtime`] is their fixed-point virtual time.
//! * [`pq`]: integer priority queues (bucketed FFS and gradient queues of
//!   Eiffel, a bucket heap, a binary heap, a timing wheel).
//! * [`registry`]: the catalogue of schedulers. It turns a textual spec such
//!   as `drr` or `qfq+:m=4` into a boxed scheduler, describes each
//!   algorithm's parameters and guarantees, and dispatches statically for
//!   benchmarks.
//! * [`aqm`]: active queue managers, CoDel (RFC 8289) and FQ-CoDel
//!   (RFC 8290), driven by caller-given nanosecond times.
//! * [`flow`], [`packet`], [`error`]: flow ids and configurations, the
//!   packet abstraction and the typed errors shared by everything above.
//!
//! Exact ranges: every scheduler accepts weights `1..=2^16`, packets of
//! `1..=2^16` bytes and a weight sum up to `2^24` ([`Limits::DEFAULT`]).
//! Virtual times count bytes of service (fixed point, see [`vtime`] and each
//! scheduler's module doc), never seconds, so results do not depend on the
//! link rate: any rate is exact.
//!
//! ```
//! use fairway_core::{Capacity, EnqueueErrorKind, FlowConfig, FlowId, Limits, Qfq, Scheduler};
//!
//! // 1024 flows, at most 4096 packets queued at once (pre-allocated).
//! let mut q: Qfq<u32> = Qfq::with_limits(Capacity::new(1024, 4096), Limits::DEFAULT);
//! q.add_flow(FlowId(0), FlowConfig::new(8, 1500)).expect("valid flow");
//! q.add_flow(FlowId(1), FlowConfig::new(1, 9000)).expect("valid flow");
//! q.enqueue(FlowId(1), 9000).expect("fits");
//! q.enqueue(FlowId(0), 1500).expect("fits");
//! // Too long for flow 0: the packet comes back with the reason.
//! let err = q.enqueue(FlowId(0), 1501).unwrap_err();
//! assert_eq!(err.kind, EnqueueErrorKind::PacketTooLong { len: 1501, max_len: 1500 });
//! assert_eq!(err.packet, 1501);
//! let mut sent = Vec::new();
//! while let Some(d) = q.dequeue() {
//!     sent.push((d.flow, d.packet));
//! }
//! assert_eq!(sent.len(), 2);
//! ```
//!
//! Bad input never panics and never loses a packet: every error is typed
//! ([`ConfigError`], [`EnqueueError`]) and an enqueue error hands the packet
//! back to the caller.
//!
//! `unsafe` is denied crate-wide. The two exceptions are the per-bucket FIFO
//! storage of the integer priority queues (`pq::bucket_lists`), whose pop
//! path indexes without bounds checks where the module's own invariants
//! (private fields, fixed lengths) guarantee the index, and prefetches a
//! bucket's next chunk, and the schedulers' packet store
//! ([`FlowQueues`]), whose slots hold `MaybeUninit` packets and are indexed
//! without bounds checks where its free and flow lists guarantee the index;
//! each block states its invariant, and debug builds (the tests) assert it.
#![no_std]
#![deny(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;

pub mod aqm;
pub mod error;
pub mod flow;
mod flow_id;
pub mod packet;
pub mod policy;
pub mod pq;
pub mod registry;
pub mod sched;

// The algorithm modules keep their paths at the crate root
// (`fairway_core::qfq::Qfq`, `fairway_core::vtime::vt_ge`, ...), so code
// written against those paths compiles unchanged.
pub use sched::{
    capacity, drr, fifo, flow_queues, indexed_heap, qfq, s_kps, sched_plus, scheduler, vtime,
    wf2q_plus,
};

pub use error::{ConfigError, EnqueueError, EnqueueErrorKind};
pub use flow::{FlowConfig, FlowId, Limits};
pub use packet::Packet;
pub use registry::{SchedKind, SchedSpec, SpecError};
pub use sched::{
    AggregateScheduler, AggregateSize, Backlog, Capacity, Dequeued, Drr, Fifo, FlowQueues, HeadPop,
    Qfq, QfqPlus, SKps, SchedPlus, Scheduler, Wf2qPlus, Wf2qPlusPlus,
};
// The virtual-time primitives and the indexed heap, for schedulers built
// outside this crate on the same clock (fairway-disk's B-WF2Q+).
pub use {
    indexed_heap::IndexedHeap,
    vtime::{vt_ge, vt_gt, vt_len, Era, VirtualClock, VirtualTime, FRAC_BITS},
};
