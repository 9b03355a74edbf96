//! Active queue management: CoDel (RFC 8289) and FQ-CoDel (RFC 8290), the
//! leaves operators run under a shaper today.
//!
//! * [`codel`]: CoDel as a per-queue state machine ([`CodelState`]) over
//!   any FIFO that implements [`CodelQueue`], with its validated
//!   parameters ([`CodelParams`]) and its exact integer control law.
//! * [`codel_fifo`]: one FIFO managed by CoDel ([`CodelFifo`]).
//! * [`fq_codel`]: flow queueing with CoDel on every flow queue
//!   ([`FqCodel`]): a fixed number of buckets chosen by a caller-given flow
//!   hash (plainly, or set-associatively as CAKE's so that flows rarely
//!   share a bucket), deficit round robin over new and old flow lists so that sparse
//!   flows keep a low delay, and a total packet limit enforced by dropping
//!   from the fattest flow.
//! * [`error`]: [`AqmConfigError`], a parameter outside its range.
//!
//! Like the rest of the crate: no clocks (every operation takes `now` in
//! nanoseconds from the caller), no allocation after construction (packets
//! live in a pre-sized [`FlowQueues`] slab), no panic on
//! input. Drops are counted by reason ([`DropCounts`]) and every dropped
//! packet is handed to the caller, never silently destroyed.

pub mod codel;
pub mod codel_fifo;
pub mod error;
pub mod fq_codel;

pub use codel::{CodelParams, CodelQueue, CodelState};
pub use codel_fifo::{CodelFifo, CodelFifoConfig};
pub use error::AqmConfigError;
pub use fq_codel::{FqCodel, FqCodelConfig, Room};

use crate::flow::FlowId;
use crate::sched::flow_queues::FlowQueues;
use crate::Packet;

/// Packets dropped by an active queue manager, by reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DropCounts {
    /// Packets CoDel dropped at dequeue (standing queue above target).
    pub codel_packets: u64,
    /// Their bytes.
    pub codel_bytes: u64,
    /// Packets dropped because the packet limit was reached.
    pub overflow_packets: u64,
    /// Their bytes.
    pub overflow_bytes: u64,
}

impl DropCounts {
    fn count_codel(&mut self, len: u32) {
        self.codel_packets += 1;
        self.codel_bytes += u64::from(len);
    }

    fn count_overflow(&mut self, len: u32) {
        self.overflow_packets += 1;
        self.overflow_bytes += u64::from(len);
    }
}

/// A queued packet with its enqueue time (ns), what CoDel measures
/// sojourn times from.
struct Timed<P> {
    packet: P,
    enqueued_ns: u64,
}

impl<P: Packet> Packet for Timed<P> {
    #[inline]
    fn len(&self) -> u32 {
        self.packet.len()
    }
}

/// One flow of a [`FlowQueues`] store seen as CoDel's FIFO.
struct StoreQueue<'a, P> {
    store: &'a mut FlowQueues<Timed<P>>,
    id: FlowId,
}

impl<P: Packet> CodelQueue for StoreQueue<'_, P> {
    type Packet = P;

    #[inline]
    fn pop(&mut self) -> Option<(P, u64)> {
        self.store.pop(self.id).map(|t| (t.packet, t.enqueued_ns))
    }

    #[inline]
    fn bytes(&self) -> u64 {
        self.store.flow_backlog(self.id).map_or(0, |b| b.bytes)
    }
}
