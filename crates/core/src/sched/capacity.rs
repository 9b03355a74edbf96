//! How much a scheduler can hold ([`Capacity`], fixed at construction so
//! that the fast path never allocates) and how much it holds now
//! ([`Backlog`]).
//!
//! Both are plain counters shared by the schedulers, their packet store
//! ([`FlowQueues`](super::flow_queues::FlowQueues)) and the [`Scheduler`](super::Scheduler)
//! trait; they depend on nothing else in the crate.

/// Packets and bytes queued (in a flow, or in the whole scheduler).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Backlog {
    /// Number of packets.
    pub packets: u64,
    /// Sum of their lengths, in bytes.
    pub bytes: u64,
}

/// Sizes fixed at construction so that the fast path never allocates.
///
/// # Examples
///
/// ```
/// use fairway_core::{Capacity, Drr, FlowConfig, FlowId, Scheduler};
///
/// // Flow ids 0..2, at most one packet queued at once.
/// let mut s: Drr<u32> = Drr::new(Capacity::new(2, 1));
/// s.add_flow(FlowId(0), FlowConfig::new(1, 1500)).unwrap();
/// s.enqueue(FlowId(0), 100).unwrap();
/// // The second packet does not fit and comes back with the reason.
/// assert_eq!(s.enqueue(FlowId(0), 200).unwrap_err().packet, 200);
/// // Flow id 2 is outside `0..max_flows`.
/// assert!(s.add_flow(FlowId(2), FlowConfig::new(1, 1500)).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capacity {
    /// Flow ids accepted: `0..max_flows`.
    pub max_flows: u32,
    /// Packets that can be queued at once over all flows; one more is
    /// rejected with `EnqueueErrorKind::Full`.
    pub max_packets: u32,
}

impl Capacity {
    /// A capacity of `max_flows` flows and `max_packets` queued packets.
    ///
    /// Every `u32` of both is valid and used exactly as given: the
    /// schedulers allocate these sizes once, at construction (so only
    /// memory bounds them; flow id `u32::MAX` stays reserved because ids
    /// are `< max_flows ≤ u32::MAX`).
    pub const fn new(max_flows: u32, max_packets: u32) -> Self {
        Self {
            max_flows,
            max_packets,
        }
    }
}
