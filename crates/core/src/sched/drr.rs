//! Deficit Round Robin (Shreedhar & Varghese; seed 000 §2, seed 004 §1.3).
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
    deficit: Vec<u64>,
    next: Vec<u32>,
    /// Active list: `head` is being served, `tail` was activated last.
    head: u32,
    tail: u32,
    fixed_unit: Option<u32>,
    /// The largest `max_len` of the configured flows (0 if none).
    largest_max_len: u32,
    /// Number of configured flows per `max_len`, to keep `largest_max_len`
    /// current when flows leave or change.
    max_len_counts: BTreeMap<u32, u32>,
}

impl<P: Packet> Drr<P> {
    /// DRR whose quantum unit is the largest configured `max_len`.
    pub fn new(cap: Capacity) -> Self {
        Self::with_options(cap, Limits::DEFAULT, None)
    }

    /// DRR with explicit limits and, optionally, a fixed quantum unit in bytes.
    pub fn with_options(cap: Capacity, limits: Limits, quantum_unit: Option<u32>) -> Self {
        let n = cap.max_flows as usize;
        Self {
            queues: FlowQueues::new(cap, limits),
            deficit: alloc::vec![0; n],
            next: alloc::vec![NIL; n],
            head: NIL,
            tail: NIL,
            fixed_unit: quantum_unit.filter(|&u| u > 0),
            largest_max_len: 0,
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
    }

    /// The quantum of a flow, in bytes.
    pub fn quantum(&self, id: FlowId) -> Option<u64> {
        let cfg = self.queues.config(id)?;
        Some(self.quantum_of(cfg))
    }

    #[inline]
    fn quantum_of(&self, cfg: FlowConfig) -> u64 {
        cfg.weight as u64 * self.fixed_unit.unwrap_or(self.largest_max_len) as u64
    }

    fn push_tail(&mut self, f: u32) {
        self.next[f as usize] = NIL;
        if self.tail == NIL {
            self.head = f;
        } else {
            self.next[self.tail as usize] = f;
        }
        self.tail = f;
    }

    fn pop_head(&mut self) -> u32 {
        let f = self.head;
        self.head = self.next[f as usize];
        if self.head == NIL {
            self.tail = NIL;
        }
        self.next[f as usize] = NIL;
        f
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
            if len <= self.deficit[f.index()] {
                return Some(f);
            }
            let cfg = self.queues.config(f)?;
            self.deficit[f.index()] += self.quantum_of(cfg);
            let g = self.pop_head();
            self.push_tail(g);
        }
    }

    fn unlink(&mut self, f: u32) {
        let mut prev = NIL;
        let mut cur = self.head;
        while cur != NIL {
            if cur == f {
                let nxt = self.next[cur as usize];
                if prev == NIL {
                    self.head = nxt;
                } else {
                    self.next[prev as usize] = nxt;
                }
                if self.tail == cur {
                    self.tail = prev;
                }
                self.next[cur as usize] = NIL;
                return;
            }
            prev = cur;
            cur = self.next[cur as usize];
        }
    }
}

impl<P: Packet> Scheduler<P> for Drr<P> {
    fn name(&self) -> &'static str {
        "drr"
    }

    fn add_flow(&mut self, id: FlowId, cfg: FlowConfig) -> Result<(), ConfigError> {
        self.queues.add_flow(id, cfg)?;
        self.deficit[id.index()] = 0;
        self.count_max_len(cfg.max_len, true);
        Ok(())
    }

    fn remove_flow(&mut self, id: FlowId) -> Result<Vec<P>, ConfigError> {
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
        self.deficit[id.index()] = 0;
        Ok(pkts)
    }

    fn reconfigure_flow(&mut self, id: FlowId, cfg: FlowConfig) -> Result<(), ConfigError> {
        let old = self.queues.reconfigure(id, cfg)?;
        if old.max_len != cfg.max_len {
            self.count_max_len(old.max_len, false);
            self.count_max_len(cfg.max_len, true);
        }
        Ok(())
    }

    // Forced inline: called once per packet from a caller's loop (the
    // arbiter's scan), where a call costs ~15 instructions per packet.
    #[inline(always)]
    fn enqueue(&mut self, id: FlowId, packet: P) -> Result<(), EnqueueError<P>> {
        if self.queues.push(id, packet)? {
            // A newly backlogged flow starts its turn with a full quantum, as
            // in Linux sch_drr; otherwise it would wait one extra round.
            if let Some(cfg) = self.queues.config(id) {
                self.deficit[id.index()] = self.quantum_of(cfg);
            }
            self.push_tail(id.0);
        }
        Ok(())
    }

    // Inlined into the caller's loop: the call itself (register saves and
    // the returned struct) was ~15% of DRR's instructions per pair.
    #[inline(always)]
    fn dequeue(&mut self) -> Option<Dequeued<P>> {
        loop {
            let f = self.head;
            let deficit = self.deficit.get_mut(f as usize)?;
            match self.queues.pop_within(FlowId(f), *deficit) {
                HeadPop::Popped {
                    packet,
                    len,
                    now_empty,
                } => {
                    if now_empty {
                        *deficit = 0;
                        self.pop_head();
                    } else {
                        *deficit -= u64::from(len);
                    }
                    return Some(Dequeued {
                        flow: FlowId(f),
                        packet,
                    });
                }
                HeadPop::TooLong(_) => {
                    let cfg = self.queues.config(FlowId(f))?;
                    let quantum = self.quantum_of(cfg);
                    self.deficit[f as usize] += quantum;
                    // To the tail of the active list (already there if alone).
                    if self.head != self.tail {
                        let g = self.pop_head();
                        self.push_tail(g);
                    }
                }
                // Only with a broken invariant (an empty flow in the list).
                HeadPop::Empty => return None,
            }
        }
    }

    fn peek(&mut self) -> Option<(FlowId, &P)> {
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
