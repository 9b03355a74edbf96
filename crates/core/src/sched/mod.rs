//! The packet schedulers, their shared packet store and their clocks.
//!
//! * [`Scheduler`] ([`scheduler`]) is the one trait every packet scheduler
//!   implements; [`Capacity`] and [`Backlog`] ([`capacity`]) size and count
//!   what it holds.
//! * One module per algorithm: [`fifo`], [`drr`], [`wf2q_plus`] (exact WF2Q+,
//!   the oracle the approximate schedulers are checked against), [`qfq`]
//!   (O(1) QFQ) and [`sched_plus`] (the SCHED+ scheme and its instances QFQ+
//!   and WF2Q++, each next to the aggregate scheduler it runs); [`s_kps`]
//!   is S-KPS, the QFQ paper's O(1) competitor (reconstructed from it).
//! * [`flow_queues`] holds the packets of every scheduler: a pre-sized slab
//!   with one intrusive FIFO list per flow, so the fast path never allocates.
//! * [`vtime`] is the fixed-point virtual time with wrap-safe comparisons and
//!   the wrap-counting clock; [`indexed_heap`] the 4-ary heap of flows keyed
//!   by virtual time that WF2Q+ and WF2Q++ sort with.
//!
//! Dependencies point one way: `capacity` ← `flow_queues` ← the algorithms →
//! `scheduler`; the SCHED+ instances use the QFQ engine and the heap, never
//! the reverse.

pub mod capacity;
pub mod drr;
pub mod fifo;
pub mod flow_queues;
pub mod indexed_heap;
pub mod qfq;
pub mod s_kps;
pub mod sched_plus;
pub mod scheduler;
pub mod vtime;
pub mod wf2q_plus;

pub use capacity::{Backlog, Capacity};
pub use drr::Drr;
pub use fifo::Fifo;
pub use flow_queues::{FlowQueues, HeadPop};
pub use qfq::Qfq;
pub use s_kps::SKps;
pub use sched_plus::{AggregateScheduler, AggregateSize, QfqPlus, SchedPlus, Wf2qPlusPlus};
pub use scheduler::{Dequeued, Scheduler};
pub use wf2q_plus::Wf2qPlus;
