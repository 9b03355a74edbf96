//! Deficit Round Robin (Shreedhar & Varghese; the QFQ+ paper §2, the BFQ thesis §1.3).
//!
//! Backlogged flows sit in a circular active list. The flow at the head may
//! send packets while its *deficit counter* covers the head packet's length;
//! when it does not, the flow receives its quantum and moves to the tail.
//! A flow that empties leaves the list and forgets its deficit; a flow that
//! becomes backlogged joins the tail with a full quantum.
//!
//! Quantum of flow i = `weight_i × quantum_unit` bytes. The unit defaults to
//! the largest `max_len` among the flows configured *now*, so every flow can
//! send at least one maximum-size packet per round and selection is O(1); it
//! is recomputed whenever a flow is added, removed or reconfigured (a count
//! of flows per `max_len` makes that O(log N)), so removing the flow with the
//! largest packets shrinks the quantum back. An explicit smaller unit is
//! allowed (then a flow may need several rounds per packet).
//!
//! Per round, flow i sends at most `quantum_i + max_len_i - 1` bytes
//! (the deficit carried over is always below the flow's max packet length).
//!
//! # The end of a flow's turn, one dequeue early
//!
//! As in Linux `sch_drr` and dummynet's `dn_sched_rr`, the order is that of
//! a *lazy* DRR: a flow's turn ends in the dequeue that finds its head
//! packet too long for its deficit. Done literally, that dequeue visits two
//! flows (the one whose turn ends, then the next), the usual case with
//! full-size packets and a quantum of one of them. Here the dequeue that
//! sends a packet also checks the packet behind it (its length is in the
//! flow's record) and, if it no longer fits, grants the quantum and moves
//! the flow to the tail right away, so the next dequeue usually visits one
//! flow. Until that next dequeue the early move is *pending*: a flow that
//! becomes backlogged meanwhile is put before the pending flow (where lazy
//! DRR, which would move it only later, puts it), `peek` commits it (lazy
//! DRR's `peek` would move it too), and a flow added, removed or
//! reconfigured takes it back first (the quantum may change). So the
//! service order is exactly the lazy one: `tests/integration/drr_model.rs` checks it
//! against a lazy DRR written from the definition, and
//! `tests/integration/service_order_hash.rs` pins it.

use crate::error::{ConfigError, EnqueueError};
use crate::flow::{FlowConfig, FlowId, Limits};
use crate::sched::capacity::{Backlog, Capacity};
use crate::sched::flow_queues::{FlowQueues, HeadPop};
use crate::sched::scheduler::{Dequeued, Scheduler};
use crate::Packet;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;

const NIL: u32 = u32::MAX;

/// Deficit Round Robin.
/// # Examples
///
/// ```
/// use fairway_core::{Capacity, FlowConfig, FlowId, Limits, Scheduler, Drr};
///
/// // Flow ids 0..4, at most 64 packets queued.
/// let mut s: Drr<u32> = Drr::with_options(Capacity::new(4, 64), Limits::DEFAULT, None);
/// s.add_flow(FlowId(0), FlowConfig::new(3, 1500)).unwrap(); // weight 3
/// s.add_flow(FlowId(1), FlowConfig::new(1, 1500)).unwrap(); // weight 1
/// for _ in 0..8 {
///     s.enqueue(FlowId(0), 1500).unwrap();
///     s.enqueue(FlowId(1), 1500).unwrap();
/// }
/// // The first 8 packets sent while both flows are backlogged.
/// let first: Vec<u32> = (0..8).filter_map(|_| s.dequeue()).map(|d| d.flow.0).collect();
/// let from_0 = first.iter().filter(|&&f| f == 0).count();
/// assert_eq!(from_0, 6); // a 3:1 share
/// assert_eq!(s.backlog().packets, 8);
/// ```
pub struct Drr<P> {
    queues: FlowQueues<P>,
    /// DRR's own state per flow id, one record so that a turn touches one
    /// cache line and passes one bounds check.
    flows: Vec<DrrFlow>,
    /// Active list, circular (`next` of the tail is the head, as in
    /// dummynet's `dn_sched_rr.c`), so that moving the head to the tail is
    /// two stores: `head` is being served, `tail` was activated last.
    head: u32,
    tail: u32,
    /// The flow moved to the tail early by the last dequeue, `NIL` if none
    /// (see the module doc); it is `tail`.
    pending: u32,
    /// While a move is pending: the flow after which a newly backlogged
    /// flow is linked (the old tail, then the last flow linked there).
    pending_prev: u32,
    fixed_unit: Option<u32>,
    /// The largest `max_len` of the configured flows (0 if none).
    largest_max_len: u32,
    /// The quantum unit in effect, bytes: `fixed_unit`, else
    /// `largest_max_len` (kept current by `count_max_len`).
    unit: u64,
    /// Number of configured flows per `max_len`, to keep `largest_max_len`
    /// current when flows leave or change.
    max_len_counts: BTreeMap<u32, u32>,
}

/// What one visit of the head flow did.
enum Visit<P> {
    /// Sent its head packet.
    Sent(Dequeued<P>),
    /// Granted it a quantum and moved it to the tail.
    Rotated,
    /// The active list is empty.
    Idle,
}

/// DRR's per-flow state.
#[derive(Clone, Copy)]
struct DrrFlow {
    /// Deficit counter, bytes.
    deficit: u64,
    /// Next flow in the active list (meaningless while the flow is idle).
    next: u32,
    /// The flow's weight, a copy of its configuration's, so that granting a
    /// quantum (`weight × unit`) needs no lookup in the packet store.
    weight: u32,
}

const IDLE_FLOW: DrrFlow = DrrFlow {
    deficit: 0,
    next: NIL,
    weight: 0,
};

impl<P: Packet> Drr<P> {
    /// DRR whose quantum unit is the largest configured `max_len`.
    pub fn new(cap: Capacity) -> Self {
        Self::with_options(cap, Limits::DEFAULT, None)
    }

    /// DRR with explicit limits and, optionally, a fixed quantum unit in bytes.
    pub fn with_options(cap: Capacity, limits: Limits, quantum_unit: Option<u32>) -> Self {
        let n = cap.max_flows as usize;
        let fixed_unit = quantum_unit.filter(|&u| u > 0);
        Self {
            queues: FlowQueues::new(cap, limits),
            flows: alloc::vec![IDLE_FLOW; n],
            head: NIL,
            tail: NIL,
            pending: NIL,
            pending_prev: NIL,
            fixed_unit,
            largest_max_len: 0,
            unit: u64::from(fixed_unit.unwrap_or(0)),
            max_len_counts: BTreeMap::new(),
        }
    }

    /// Counts a flow of maximum length `max_len` in (`joined`) or out of the
    /// configured set and refreshes the default quantum unit.
    fn count_max_len(&mut self, max_len: u32, joined: bool) {
        if joined {
            *self.max_len_counts.entry(max_len).or_insert(0) += 1;
        } else if let Some(n) = self.max_len_counts.get_mut(&max_len) {
            *n -= 1;
            if *n == 0 {
                self.max_len_counts.remove(&max_len);
            }
        }
        self.largest_max_len = self.max_len_counts.keys().next_back().copied().unwrap_or(0);
        self.unit = u64::from(self.fixed_unit.unwrap_or(self.largest_max_len));
    }

    /// The quantum of a flow, in bytes.
    pub fn quantum(&self, id: FlowId) -> Option<u64> {
        let cfg = self.queues.config(id)?;
        Some(self.quantum_of(cfg))
    }

    #[inline]
    fn quantum_of(&self, cfg: FlowConfig) -> u64 {
        u64::from(cfg.weight) * self.unit
    }

    /// Appends `f` to the active list (before a pending flow, see the
    /// module doc).
    #[inline(always)]
    fn push_tail(&mut self, f: u32) {
        if self.pending != NIL {
            self.push_before_pending(f);
            return;
        }
        let head = if self.tail == NIL { f } else { self.head };
        if let Some(t) = self.flows.get_mut(self.tail as usize) {
            t.next = f;
        }
        if let Some(x) = self.flows.get_mut(f as usize) {
            x.next = head;
        }
        self.head = head;
        self.tail = f;
    }

    /// Links `f`, newly backlogged, just before the pending flow (the tail),
    /// where lazy DRR puts it: its move to the tail has not happened yet
    /// there. If nothing else is listed, `f` becomes the head. Out of line
    /// and cold, so that the enqueue inlined into the caller's loop stays
    /// small on its common path; this rare call costs the same either way.
    #[cold]
    #[inline(never)]
    fn push_before_pending(&mut self, f: u32) {
        let (p, before) = (self.pending, self.pending_prev);
        if let Some(b) = self.flows.get_mut(before as usize) {
            b.next = f;
        }
        if let Some(x) = self.flows.get_mut(f as usize) {
            x.next = p;
        }
        if self.head == p {
            self.head = f;
        }
        self.pending_prev = f;
    }

    /// Takes a pending early move back: the flow gives its quantum back and
    /// is the head again, the list being circular (lazy DRR's state, before
    /// a configuration change that may change the quantum).
    fn undo_pending(&mut self) {
        let p = self.pending;
        if p == NIL {
            return;
        }
        self.pending = NIL;
        let unit = self.unit;
        if let Some(x) = self.flows.get_mut(p as usize) {
            x.deficit -= u64::from(x.weight) * unit;
        }
        self.head = p;
        self.tail = self.pending_prev;
    }

    /// Removes the head of the active list (which must not be empty).
    #[inline(always)]
    fn pop_head(&mut self) {
        if self.head == self.tail {
            self.head = NIL;
            self.tail = NIL;
        } else {
            let next = self.flows.get(self.head as usize).map_or(NIL, |h| h.next);
            self.head = next;
            if let Some(t) = self.flows.get_mut(self.tail as usize) {
                t.next = next;
            }
        }
    }

    /// Moves the head of the active list to its tail: the list is circular,
    /// so the head's successor becomes the head and the head the tail.
    #[inline(always)]
    fn rotate(&mut self, head_next: u32) {
        self.tail = self.head;
        self.head = head_next;
    }

    /// Makes the head of the active list a flow whose head packet fits its
    /// deficit, granting quanta as the round advances.
    #[inline]
    fn select(&mut self) -> Option<FlowId> {
        loop {
            if self.head == NIL {
                return None;
            }
            let f = FlowId(self.head);
            let len = self.queues.head_len(f)? as u64;
            let unit = self.unit;
            let x = self.flows.get_mut(f.index())?;
            if len <= x.deficit {
                return Some(f);
            }
            x.deficit += u64::from(x.weight) * unit;
            let next = x.next;
            self.rotate(next);
        }
    }

    /// One DRR visit of the head flow: sends its head packet if it fits the
    /// deficit; otherwise grants the flow its quantum and moves it to the
    /// tail of the active list (a no-op rotation if it is alone).
    #[inline(always)]
    fn visit_head(&mut self) -> Visit<P> {
        let f = self.head;
        let Some(x) = self.flows.get_mut(f as usize) else {
            return Visit::Idle;
        };
        match self.queues.pop_within_and_next_len(FlowId(f), x.deficit) {
            (
                HeadPop::Popped {
                    packet,
                    len,
                    now_empty,
                },
                next_len,
            ) => {
                if now_empty {
                    x.deficit = 0;
                    self.pop_head();
                } else {
                    let left = x.deficit - u64::from(len);
                    if left < u64::from(next_len) {
                        // Its turn is over: the move lazy DRR makes at the
                        // next dequeue, made now (pending until then).
                        x.deficit = left + u64::from(x.weight) * self.unit;
                        let next = x.next;
                        self.pending_prev = self.tail;
                        self.pending = f;
                        self.rotate(next);
                    } else {
                        x.deficit = left;
                    }
                }
                Visit::Sent(Dequeued {
                    flow: FlowId(f),
                    packet,
                })
            }
            (HeadPop::TooLong(_), _) => {
                x.deficit += u64::from(x.weight) * self.unit;
                let next = x.next;
                self.rotate(next);
                Visit::Rotated
            }
            // Only with a broken invariant (an empty flow in the list).
            (HeadPop::Empty, _) => Visit::Idle,
        }
    }

    /// Visits flows until one sends: the rounds in which several flows in a
    /// row need a new quantum (an explicit unit below the packet lengths,
    /// or mixed lengths and weights).
    #[inline(never)]
    fn dequeue_after_rotations(&mut self) -> Option<Dequeued<P>> {
        loop {
            match self.visit_head() {
                Visit::Sent(d) => return Some(d),
                Visit::Rotated => {}
                Visit::Idle => return None,
            }
        }
    }

    /// Takes `f` out of the active list: O(active flows), for the rare
    /// removal of a backlogged flow.
    fn unlink(&mut self, f: u32) {
        if self.head == NIL {
            return;
        }
        if self.head == f {
            self.pop_head();
            return;
        }
        let mut prev = self.head;
        loop {
            let cur = self.flows[prev as usize].next;
            if cur == self.head {
                return; // not in the list
            }
            if cur == f {
                let after = self.flows[cur as usize].next;
                self.flows[prev as usize].next = after;
                if self.tail == f {
                    self.tail = prev;
                }
                return;
            }
            prev = cur;
        }
    }
}

impl<P: Packet> Scheduler<P> for Drr<P> {
    fn name(&self) -> &'static str {
        "drr"
    }

    fn add_flow(&mut self, id: FlowId, cfg: FlowConfig) -> Result<(), ConfigError> {
        self.undo_pending();
        self.queues.add_flow(id, cfg)?;
        self.flows[id.index()] = DrrFlow {
            weight: cfg.weight,
            ..IDLE_FLOW
        };
        self.count_max_len(cfg.max_len, true);
        Ok(())
    }

    fn remove_flow(&mut self, id: FlowId) -> Result<Vec<P>, ConfigError> {
        self.undo_pending();
        let backlogged = self.queues.is_backlogged(id);
        let old = self.queues.config(id);
        let pkts = self.queues.remove_flow(id)?;
        if let Some(old) = old {
            self.count_max_len(old.max_len, false);
        }
        if backlogged {
            // O(active flows), acceptable on this rare configuration path.
            self.unlink(id.0);
        }
        self.flows[id.index()] = IDLE_FLOW;
        Ok(pkts)
    }

    fn reconfigure_flow(&mut self, id: FlowId, cfg: FlowConfig) -> Result<(), ConfigError> {
        self.undo_pending();
        let old = self.queues.reconfigure(id, cfg)?;
        self.flows[id.index()].weight = cfg.weight;
        if old.max_len != cfg.max_len {
            self.count_max_len(old.max_len, false);
            self.count_max_len(cfg.max_len, true);
        }
        Ok(())
    }

    // Forced inline: called once per packet from a caller's loop (the
    // arbiter's scan), where a call's register saves would cost about as
    // much as the enqueue's own work.
    #[inline(always)]
    fn enqueue(&mut self, id: FlowId, packet: P) -> Result<(), EnqueueError<P>> {
        if self.queues.push(id, packet)? {
            // A newly backlogged flow starts its turn with a full quantum, as
            // in Linux sch_drr; otherwise it would wait one extra round.
            let unit = self.unit;
            if let Some(x) = self.flows.get_mut(id.index()) {
                x.deficit = u64::from(x.weight) * unit;
            }
            self.push_tail(id.0);
        }
        Ok(())
    }

    // Inlined into the caller's loop: the call itself (register saves and
    // the returned struct) would be a large share of DRR's cheap pair. One
    // visit is written out before the general loop (out of line): with the
    // turn ended one dequeue early, the head's deficit covers its packet
    // unless an explicit quantum unit is below the packet lengths; a loop
    // around the visit made the compiler load and spill the store's fields
    // on every call.
    #[inline(always)]
    fn dequeue(&mut self) -> Option<Dequeued<P>> {
        // Lazy DRR would make a pending move now: it is final.
        self.pending = NIL;
        match self.visit_head() {
            Visit::Sent(d) => Some(d),
            Visit::Rotated => self.dequeue_after_rotations(),
            Visit::Idle => None,
        }
    }

    fn peek(&mut self) -> Option<(FlowId, &P)> {
        // Lazy DRR's selection would make a pending move now.
        self.pending = NIL;
        let flow = self.select()?;
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
