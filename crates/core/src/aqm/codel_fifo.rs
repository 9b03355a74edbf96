//! One FIFO managed by CoDel: the plain `codel` leaf.
//!
//! Packets are stamped with the caller's `now` at enqueue and kept in a
//! pre-sized slab of `limit` slots; at dequeue [`CodelState::dequeue`]
//! (see [`codel`](super::codel) for the algorithm) decides which head
//! packets to drop. An enqueue into a full queue is refused (tail drop),
//! counted as an overflow drop, and the packet is handed back.

use super::codel::{CodelParams, CodelState};
use super::error::AqmConfigError;
use super::fq_codel::MAX_LIMIT;
use super::{DropCounts, StoreQueue, Timed};
use crate::error::EnqueueError;
use crate::flow::{FlowConfig, FlowId, Limits};
use crate::sched::capacity::{Backlog, Capacity};
use crate::sched::flow_queues::FlowQueues;
use crate::Packet;

/// The configuration of a [`CodelFifo`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodelFifoConfig {
    /// CoDel's parameters.
    pub codel: CodelParams,
    /// Packets held at most: `1..=MAX_LIMIT` (allocated up front).
    pub limit: u32,
}

/// The only flow of the store.
const FIFO: FlowId = FlowId(0);

/// A FIFO managed by CoDel.
///
/// ```
/// use fairway_core::aqm::{CodelFifo, CodelFifoConfig, CodelParams};
///
/// let cfg = CodelFifoConfig { codel: CodelParams::RFC8289, limit: 100 };
/// let mut q: CodelFifo<u32> = CodelFifo::new(cfg).expect("valid");
/// q.enqueue(1500, 0).expect("room");
/// assert_eq!(q.dequeue(1_000), Some(1500));
/// ```
pub struct CodelFifo<P> {
    cfg: CodelFifoConfig,
    store: FlowQueues<Timed<P>>,
    state: CodelState,
    drops: DropCounts,
}

impl<P: Packet> CodelFifo<P> {
    /// A queue for `cfg`, after checking every parameter (nothing is
    /// allocated if one is out of range).
    pub fn new(cfg: CodelFifoConfig) -> Result<Self, AqmConfigError> {
        cfg.codel.check()?;
        if cfg.limit == 0 || cfg.limit > MAX_LIMIT {
            return Err(AqmConfigError::Limit { limit: cfg.limit });
        }
        let mut store = FlowQueues::new(Capacity::new(1, cfg.limit), Limits::DEFAULT);
        // Cannot fail (flow 0 of 1, weight 1, the default limits); mapped
        // rather than unwrapped all the same.
        store
            .add_flow(FIFO, FlowConfig::new(1, Limits::DEFAULT.max_packet_len))
            .map_err(|_| AqmConfigError::Limit { limit: cfg.limit })?;
        Ok(Self {
            cfg,
            store,
            state: CodelState::new(),
            drops: DropCounts::default(),
        })
    }

    /// The configuration in use.
    pub fn config(&self) -> CodelFifoConfig {
        self.cfg
    }

    /// Queues `packet`, stamped with `now_ns`. A packet of 0 or more than
    /// 65536 bytes, or one that finds the queue full, comes back in the
    /// error; a full queue also counts an overflow drop.
    pub fn enqueue(&mut self, packet: P, now_ns: u64) -> Result<(), EnqueueError<P>> {
        let timed = Timed {
            packet,
            enqueued_ns: now_ns,
        };
        match self.store.push(FIFO, timed) {
            Ok(_) => Ok(()),
            Err(e) => {
                if matches!(e.kind, crate::EnqueueErrorKind::Full { .. }) {
                    self.drops.count_overflow(e.packet.len());
                }
                Err(EnqueueError {
                    kind: e.kind,
                    packet: e.packet.packet,
                })
            }
        }
    }

    /// The next packet to send at `now_ns`; the packets CoDel drops on the
    /// way go to `on_drop`, head first.
    pub fn dequeue_with(&mut self, now_ns: u64, mut on_drop: impl FnMut(P)) -> Option<P> {
        let drops = &mut self.drops;
        let mut q = StoreQueue {
            store: &mut self.store,
            id: FIFO,
        };
        self.state
            .dequeue(&self.cfg.codel, &mut q, now_ns, &mut |p: P| {
                drops.count_codel(p.len());
                on_drop(p);
            })
    }

    /// [`Self::dequeue_with`], dropping CoDel's victims in place.
    pub fn dequeue(&mut self, now_ns: u64) -> Option<P> {
        self.dequeue_with(now_ns, drop)
    }

    /// Packets and bytes queued.
    pub fn backlog(&self) -> Backlog {
        self.store.total()
    }

    /// True if nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.store.total().packets == 0
    }

    /// Drops so far, by reason.
    pub fn drops(&self) -> DropCounts {
        self.drops
    }

    /// CoDel's state.
    pub fn codel_state(&self) -> &CodelState {
        &self.state
    }
}
