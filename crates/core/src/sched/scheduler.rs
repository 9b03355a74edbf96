//! The one trait every packet scheduler implements.
//!
//! The contract, shared by FIFO, DRR, WF2Q+, QFQ and QFQ+:
//! * flows are identified by caller-chosen [`FlowId`]s below
//!   `Capacity::max_flows`, configured with a weight and a maximum packet length;
//! * `enqueue` either accepts the packet or returns it inside an
//!   [`EnqueueError`]; `dequeue` returns the next packet to transmit and its flow;
//! * `peek` returns the packet the next `dequeue` will return, provided no
//!   enqueue or reconfiguration happens in between;
//! * per-flow queues are FIFO; a flow removed while backlogged hands back its
//!   packets in order, and every counter stays consistent.

use crate::error::{ConfigError, EnqueueError};
use crate::flow::{FlowConfig, FlowId};
use alloc::vec::Vec;

pub use super::capacity::{Backlog, Capacity};

/// A dequeued packet and the flow it belongs to.
#[derive(Debug, PartialEq, Eq)]
pub struct Dequeued<P> {
    /// The flow the packet was enqueued on.
    pub flow: FlowId,
    /// The packet.
    pub packet: P,
}

/// A packet scheduler. See the module doc for the contract.
/// # Examples
///
/// Code written against the trait runs any scheduler, chosen statically or
/// from a spec at run time:
///
/// ```
/// use fairway_core::{Capacity, Drr, FlowConfig, FlowId, Limits, SchedSpec, Scheduler};
///
/// /// Sends `n` packets of `len` bytes on each of two flows, returns the order.
/// fn serve(s: &mut dyn Scheduler<u32>, n: usize, len: u32) -> Vec<u32> {
///     s.add_flow(FlowId(0), FlowConfig::new(1, len)).unwrap();
///     s.add_flow(FlowId(1), FlowConfig::new(1, len)).unwrap();
///     for _ in 0..n {
///         s.enqueue(FlowId(0), len).unwrap();
///         s.enqueue(FlowId(1), len).unwrap();
///     }
///     assert_eq!(s.flow_backlog(FlowId(0)).unwrap().packets, n as u64);
///     let mut order = Vec::new();
///     while let Some(d) = s.dequeue() {
///         order.push(d.flow.0);
///     }
///     assert!(s.is_empty());
///     order
/// }
///
/// let cap = Capacity::new(2, 16);
/// let mut drr: Drr<u32> = Drr::new(cap);
/// assert_eq!(serve(&mut drr, 2, 100), [0, 1, 0, 1]);
/// let mut wf2q = SchedSpec::parse("wf2q+").unwrap().build::<u32>(cap, Limits::DEFAULT);
/// assert_eq!(serve(wf2q.as_mut(), 2, 100), [0, 1, 0, 1]);
/// ```
pub trait Scheduler<P: crate::Packet> {
    /// Short name, as used on the command line (`drr`, `wf2q+`, ...).
    fn name(&self) -> &'static str;

    /// Configures a new flow.
    fn add_flow(&mut self, id: FlowId, cfg: FlowConfig) -> Result<(), ConfigError>;

    /// Removes a flow, returning its queued packets in FIFO order.
    fn remove_flow(&mut self, id: FlowId) -> Result<Vec<P>, ConfigError>;

    /// Changes a flow's weight and maximum packet length, also while it is
    /// backlogged. Fails (changing nothing) if a queued packet is longer
    /// than the new maximum.
    fn reconfigure_flow(&mut self, id: FlowId, cfg: FlowConfig) -> Result<(), ConfigError>;

    /// Queues `packet` on flow `id`, or hands it back with the reason.
    fn enqueue(&mut self, id: FlowId, packet: P) -> Result<(), EnqueueError<P>>;

    /// Removes and returns the next packet to transmit.
    fn dequeue(&mut self) -> Option<Dequeued<P>>;

    /// The flow and packet the next `dequeue` will return.
    fn peek(&mut self) -> Option<(FlowId, &P)>;

    /// Packets and bytes queued in the whole scheduler.
    fn backlog(&self) -> Backlog;

    /// Packets and bytes queued in one flow, `None` for an unknown flow.
    fn flow_backlog(&self, id: FlowId) -> Option<Backlog>;

    /// A flow's configuration, `None` for an unknown flow.
    fn flow_config(&self, id: FlowId) -> Option<FlowConfig>;

    /// True when no packet is queued.
    #[inline]
    fn is_empty(&self) -> bool {
        self.backlog().packets == 0
    }

    /// Test hook, not part of the stable interface. If nothing is queued,
    /// advances the scheduler's virtual clock (if it has one) by `delta`
    /// units, as if flows since removed had been served meanwhile, and
    /// returns true; returns false, changing nothing, if a packet is queued.
    /// It lets tests reach the states of a very long run — the clock
    /// wrapping around `u64` while a flow is idle — without sending
    /// billions of packets.
    #[doc(hidden)]
    fn warp_idle_clock(&mut self, delta: u64) -> bool {
        let _ = delta;
        self.is_empty()
    }
}
