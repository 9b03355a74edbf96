//! What the cost controller drives: a scheduler through the [`Scheduler`]
//! API, or the `none` baseline of the QFQ paper §7.1 (a plain FIFO list without
//! the API, whose cost the tables subtract).
//!
//! Everything is statically dispatched: the registry's
//! [`SchedSpec::visit`](fairway_core::SchedSpec::visit) hands the concrete
//! scheduler type a spec names to a generic visitor (see `BuildRunner` in
//! the parent module), so the measured loop is monomorphised per scheduler.

use fairway_core::{FlowId, Packet, Scheduler};

/// A packet descriptor: the length the scheduler reads and the index of
/// the (never touched) buffer in the controller's free list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BenchPacket {
    /// Length in bytes.
    pub len: u32,
    /// Buffer index, returned to the free list after the dequeue.
    pub id: u32,
}

impl Packet for BenchPacket {
    #[inline(always)]
    fn len(&self) -> u32 {
        self.len
    }
}

/// The two operations the controller needs.
pub trait CostTarget {
    /// Queues a packet of `flow`, or hands it back.
    fn push(&mut self, flow: u32, packet: BenchPacket) -> Result<(), BenchPacket>;
    /// The next packet and its flow.
    fn pop(&mut self) -> Option<(u32, BenchPacket)>;
    /// Packets queued (for checks, never on the measured path).
    fn queued(&self) -> u64;
    /// Packets queued in one flow, if the target keeps per-flow queues.
    fn flow_queued(&self, flow: u32) -> Option<u64>;
}

/// A scheduler driven through its public API.
pub struct SchedTarget<S>(pub S);

impl<S: Scheduler<BenchPacket>> CostTarget for SchedTarget<S> {
    #[inline(always)]
    fn push(&mut self, flow: u32, packet: BenchPacket) -> Result<(), BenchPacket> {
        self.0.enqueue(FlowId(flow), packet).map_err(|e| e.packet)
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<(u32, BenchPacket)> {
        self.0.dequeue().map(|d| (d.flow.0, d.packet))
    }

    fn queued(&self) -> u64 {
        self.0.backlog().packets
    }

    fn flow_queued(&self, flow: u32) -> Option<u64> {
        self.0.flow_backlog(FlowId(flow)).map(|b| b.packets)
    }
}

/// The `none` baseline: one pre-sized FIFO ring of `(flow, packet)`, no
/// validation, no per-flow state (the QFQ paper §7.1 "NONE"), as cheap as a
/// list append and a list pop can be in safe Rust.
pub struct NoneTarget {
    ring: Box<[(u32, BenchPacket)]>,
    /// `ring.len() - 1`; the length is a power of two.
    mask: usize,
    head: usize,
    len: usize,
}

impl NoneTarget {
    /// A ring for at least `capacity` packets.
    pub fn new(capacity: usize) -> Self {
        let size = capacity.max(1).next_power_of_two();
        Self {
            ring: vec![(0, BenchPacket { len: 0, id: 0 }); size].into_boxed_slice(),
            mask: size - 1,
            head: 0,
            len: 0,
        }
    }
}

impl CostTarget for NoneTarget {
    #[inline(always)]
    fn push(&mut self, flow: u32, packet: BenchPacket) -> Result<(), BenchPacket> {
        if self.len > self.mask {
            return Err(packet);
        }
        if let Some(slot) = self.ring.get_mut((self.head + self.len) & self.mask) {
            *slot = (flow, packet);
        }
        self.len += 1;
        Ok(())
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<(u32, BenchPacket)> {
        if self.len == 0 {
            return None;
        }
        let item = *self.ring.get(self.head & self.mask)?;
        self.head = self.head.wrapping_add(1);
        self.len -= 1;
        Some(item)
    }

    fn queued(&self) -> u64 {
        self.len as u64
    }

    fn flow_queued(&self, _flow: u32) -> Option<u64> {
        None
    }
}
