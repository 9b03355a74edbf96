//! FIFO: one global first-come first-served order over all flows.
//!
//! The baseline of every cost comparison (the QFQ+ paper §8). Packets live in the
//! per-flow queues of [`FlowQueues`]; a pre-sized ring of flow ids records the
//! global arrival order, so dequeue pops the oldest flow id and then that
//! flow's head packet. Weights are accepted and ignored.

use crate::error::{ConfigError, EnqueueError};
use crate::flow::{FlowConfig, FlowId, Limits};
use crate::sched::capacity::{Backlog, Capacity};
use crate::sched::flow_queues::FlowQueues;
use crate::sched::scheduler::{Dequeued, Scheduler};
use crate::Packet;
use alloc::vec::Vec;

/// First-in first-out over all flows.
/// # Examples
///
/// ```
/// use fairway_core::{Capacity, FlowConfig, FlowId, Limits, Scheduler, Fifo};
///
/// // Flow ids 0..4, at most 64 packets queued.
/// let mut s: Fifo<u32> = Fifo::with_limits(Capacity::new(4, 64), Limits::DEFAULT);
/// s.add_flow(FlowId(0), FlowConfig::new(3, 1500)).unwrap(); // weight 3
/// s.add_flow(FlowId(1), FlowConfig::new(1, 1500)).unwrap(); // weight 1
/// for _ in 0..8 {
///     s.enqueue(FlowId(0), 1500).unwrap();
///     s.enqueue(FlowId(1), 1500).unwrap();
/// }
/// // The first 8 packets sent while both flows are backlogged.
/// let first: Vec<u32> = (0..8).filter_map(|_| s.dequeue()).map(|d| d.flow.0).collect();
/// assert_eq!(first, [0, 1, 0, 1, 0, 1, 0, 1]); // arrival order, weights ignored
/// assert_eq!(s.backlog().packets, 8);
/// ```
pub struct Fifo<P> {
    queues: FlowQueues<P>,
    /// Arrival order as flow ids; ring of `max_packets` entries.
    order: Vec<u32>,
    head: usize,
    len: usize,
}

impl<P: Packet> Fifo<P> {
    /// A FIFO with the given capacity and default limits.
    pub fn new(cap: Capacity) -> Self {
        Self::with_limits(cap, Limits::DEFAULT)
    }

    /// A FIFO with explicit limits.
    pub fn with_limits(cap: Capacity, limits: Limits) -> Self {
        let queues = FlowQueues::new(cap, limits);
        let order = alloc::vec![0; queues.max_packets() as usize];
        Self {
            queues,
            order,
            head: 0,
            len: 0,
        }
    }

    /// Rare path (flow removal): drops the removed flow's entries from the
    /// arrival ring, keeping everyone else's relative order.
    fn forget_flow(&mut self, removed: FlowId) {
        let n = self.order.len();
        let mut kept = 0;
        for i in 0..self.len {
            let f = self.order[(self.head + i) % n];
            if f != removed.0 {
                self.order[(self.head + kept) % n] = f;
                kept += 1;
            }
        }
        self.len = kept;
    }
}

impl<P: Packet> Scheduler<P> for Fifo<P> {
    fn name(&self) -> &'static str {
        "fifo"
    }

    fn add_flow(&mut self, id: FlowId, cfg: FlowConfig) -> Result<(), ConfigError> {
        self.queues.add_flow(id, cfg)
    }

    fn remove_flow(&mut self, id: FlowId) -> Result<Vec<P>, ConfigError> {
        let pkts = self.queues.remove_flow(id)?;
        if !pkts.is_empty() {
            self.forget_flow(id);
        }
        Ok(pkts)
    }

    fn reconfigure_flow(&mut self, id: FlowId, cfg: FlowConfig) -> Result<(), ConfigError> {
        self.queues.reconfigure(id, cfg).map(|_| ())
    }

    // Forced inline, as DRR's: code compiled for the concrete type (the C
    // ABI's typed fast path, a caller's monomorphised loop) otherwise pays a
    // call frame and a result returned through memory on every packet.
    #[inline(always)]
    fn enqueue(&mut self, id: FlowId, packet: P) -> Result<(), EnqueueError<P>> {
        self.queues.push(id, packet)?;
        // push succeeded, so a slot was free and the ring has room too.
        let n = self.order.len();
        let tail = (self.head + self.len) % n;
        self.order[tail] = id.0;
        self.len += 1;
        Ok(())
    }

    #[inline(always)]
    fn dequeue(&mut self) -> Option<Dequeued<P>> {
        if self.len == 0 {
            return None;
        }
        let flow = FlowId(self.order[self.head]);
        self.head = (self.head + 1) % self.order.len();
        self.len -= 1;
        let packet = self.queues.pop(flow)?;
        Some(Dequeued { flow, packet })
    }

    fn peek(&mut self) -> Option<(FlowId, &P)> {
        if self.len == 0 {
            return None;
        }
        let flow = FlowId(self.order[self.head]);
        self.queues.head(flow).map(|p| (flow, p))
    }

    #[inline]
    fn backlog(&self) -> Backlog {
        self.queues.total()
    }

    fn flow_backlog(&self, id: FlowId) -> Option<Backlog> {
        self.queues.flow_backlog(id)
    }

    fn flow_config(&self, id: FlowId) -> Option<FlowConfig> {
        self.queues.config(id)
    }
}
