//! Exact WF2Q+ (Bennett & Zhang; the QFQ paper §3.1, the BFQ thesis §1.4.1,
//! the QFQ+ paper App. A.2).
//!
//! Each flow i carries virtual start and finish times of its head packet:
//! `S_i = max(V, F_i)` when the flow becomes backlogged, `S_i = F_i` after a
//! dequeue, and `F_i = S_i + l/φ_i`. The system virtual time follows Eq. (3)
//! of the QFQ paper (A.3 of the QFQ+ paper): `V ← max(V + l/Φ, min_{backlogged} S_i)`
//! after every dequeue of `l` bytes. A flow is *eligible* when `S_i <= V`;
//! dequeue serves the eligible flow with the smallest `F_i` (ties: lowest id).
//!
//! Two indexed binary heaps make every operation O(log N): eligible flows
//! keyed by F, not-yet-eligible flows keyed by S. This is the exact reference
//! the approximate schedulers (QFQ, QFQ+) are tested against.
//!
//! Arithmetic: φ_i = w_i / W with W the sum of the weights of *all*
//! configured flows (Σφ = 1). Virtual times are fixed point
//! ([`crate::sched::vtime`], 24 fractional bits); `l/φ_i` is `l·2^24/w_i` and the V
//! increment `l·2^24/W`, each truncated by less than one unit (2^-24 byte).
//! Exact within the default [`Limits`]. (The two divisions per dequeue
//! stay: where the 64-bit divide is fast, an exact reciprocal multiply,
//! with its 128-bit product and variable shift, costs more.) A flow going
//! idle records the era of
//! its finish time on the wrap-counting [`VirtualClock`], so its start
//! `max(V, F)` is exact however long it stayed idle (see [`crate::sched::vtime`]).

use crate::error::{ConfigError, EnqueueError};
use crate::flow::{FlowConfig, FlowId, Limits};
use crate::sched::capacity::{Backlog, Capacity};
use crate::sched::flow_queues::FlowQueues;
use crate::sched::indexed_heap::IndexedHeap;
use crate::sched::scheduler::{Dequeued, Scheduler};
use crate::sched::vtime::{vt_ge, vt_len, Era, VirtualClock, VirtualTime};
use crate::Packet;
use alloc::vec::Vec;

/// `ΔS⁻ ≤ DELTA_S_MINUS_FACTOR · L_k/φ_k` for exact WF2Q+: its timestamps are
/// exact, `Ŝ = S` (the QFQ+ paper App. A, Eq. A.4).
pub const DELTA_S_MINUS_FACTOR: u32 = 0;
/// `ΔS⁺ ≤ DELTA_S_PLUS_FACTOR · L_k/φ_k` for exact WF2Q+: `F̂ = F = S + l/φ_k
/// ≤ S + L_k/φ_k` (the QFQ+ paper App. A, Eq. A.4).
pub const DELTA_S_PLUS_FACTOR: u32 = 1;

#[derive(Clone, Copy, Default)]
struct FlowTimes {
    start: VirtualTime,
    finish: VirtualTime,
    /// The era of `finish` on the virtual clock when the flow last went idle.
    idle_era: Era,
    /// The flow's configured weight `w_i`, a copy kept here so that a
    /// dequeue needs no lookup of the configuration.
    weight: u64,
}

/// Exact WF2Q+.
/// # Examples
///
/// ```
/// use fairway_core::{Capacity, FlowConfig, FlowId, Limits, Scheduler, Wf2qPlus};
///
/// // Flow ids 0..4, at most 64 packets queued.
/// let mut s: Wf2qPlus<u32> = Wf2qPlus::with_limits(Capacity::new(4, 64), Limits::DEFAULT);
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
pub struct Wf2qPlus<P> {
    queues: FlowQueues<P>,
    times: Vec<FlowTimes>,
    eligible: IndexedHeap,
    pending: IndexedHeap,
    clock: VirtualClock,
}

impl<P: Packet> Wf2qPlus<P> {
    /// WF2Q+ with default limits.
    pub fn new(cap: Capacity) -> Self {
        Self::with_limits(cap, Limits::DEFAULT)
    }

    /// WF2Q+ with explicit limits (must not exceed [`Limits::DEFAULT`] for
    /// the arithmetic to stay exact).
    pub fn with_limits(cap: Capacity, limits: Limits) -> Self {
        Self {
            queues: FlowQueues::new(cap, limits),
            times: alloc::vec![FlowTimes::default(); cap.max_flows as usize],
            eligible: IndexedHeap::new(cap.max_flows),
            pending: IndexedHeap::new(cap.max_flows),
            clock: VirtualClock::default(),
        }
    }

    /// The system virtual time.
    pub fn virtual_time(&self) -> VirtualTime {
        self.clock.now()
    }

    /// A flow's virtual (start, finish) times.
    pub fn flow_times(&self, id: FlowId) -> Option<(VirtualTime, VirtualTime)> {
        self.queues.config(id)?;
        let t = self.times[id.index()];
        Some((t.start, t.finish))
    }

    /// Stamps the flow's head packet starting at `start` and files the flow.
    fn schedule(&mut self, i: usize, start: VirtualTime, head_len: u32) {
        let t = &mut self.times[i];
        t.start = start;
        t.finish = start.wrapping_add(vt_len(head_len, t.weight));
        if vt_ge(self.clock.now(), start) {
            self.eligible.push(t.finish, i as u32);
        } else {
            self.pending.push(start, i as u32);
        }
    }

    /// The flow to serve: the eligible heap's minimum, once every flow
    /// whose start time V has reached is in that heap. Inline, the usual
    /// case: a flow is eligible and the smallest pending start is ahead of V
    /// (or nothing is pending), so nothing moves.
    #[inline(always)]
    fn select(&mut self) -> Option<FlowId> {
        if let Some((_, f)) = self.eligible.peek() {
            match self.pending.peek() {
                None => return Some(FlowId(f)),
                Some((s, _)) if !vt_ge(self.clock.now(), s) => return Some(FlowId(f)),
                Some(_) => {}
            }
        }
        self.select_moving()
    }

    /// [`Self::select`] when flows move: brings V up to the smallest start
    /// time if nothing is eligible (work conservation) and moves the flows
    /// that became eligible. Out of line.
    #[inline(never)]
    fn select_moving(&mut self) -> Option<FlowId> {
        if self.eligible.is_empty() {
            let (s, _) = self.pending.peek()?;
            self.clock.advance_to(s);
        }
        while let Some((s, f)) = self.pending.peek() {
            if !vt_ge(self.clock.now(), s) {
                break;
            }
            self.pending.pop();
            self.eligible.push(self.times[f as usize].finish, f);
        }
        self.eligible.peek().map(|(_, f)| FlowId(f))
    }
}

impl<P: Packet> Scheduler<P> for Wf2qPlus<P> {
    fn name(&self) -> &'static str {
        "wf2q+"
    }

    fn add_flow(&mut self, id: FlowId, cfg: FlowConfig) -> Result<(), ConfigError> {
        self.queues.add_flow(id, cfg)?;
        let now = self.clock.now();
        self.times[id.index()] = FlowTimes {
            start: now,
            finish: now,
            idle_era: self.clock.era(now),
            weight: u64::from(cfg.weight),
        };
        Ok(())
    }

    fn remove_flow(&mut self, id: FlowId) -> Result<Vec<P>, ConfigError> {
        let pkts = self.queues.remove_flow(id)?;
        self.eligible.remove(id.0);
        self.pending.remove(id.0);
        Ok(pkts)
    }

    fn reconfigure_flow(&mut self, id: FlowId, cfg: FlowConfig) -> Result<(), ConfigError> {
        // The head packet keeps its timestamps; later packets use the new weight.
        self.queues.reconfigure(id, cfg)?;
        self.times[id.index()].weight = u64::from(cfg.weight);
        Ok(())
    }

    // Forced inline, as DRR's: called once per packet from the caller's
    // loop, where a call saves and restores registers on every packet.
    #[inline(always)]
    fn enqueue(&mut self, id: FlowId, packet: P) -> Result<(), EnqueueError<P>> {
        let len = packet.len();
        if self.queues.push(id, packet)? {
            let i = id.index();
            let t = self.times[i];
            let start = self.clock.restart(t.finish, t.idle_era);
            self.schedule(i, start, len);
        }
        Ok(())
    }

    // Forced inline, as `enqueue`; what is long and rare (moving flows
    // between the heaps, a sift in a heap of several) is out of line.
    #[inline(always)]
    fn dequeue(&mut self) -> Option<Dequeued<P>> {
        // `flow` is the eligible heap's minimum; it leaves that heap below,
        // unless it stays eligible with its next packet (then its key is
        // replaced in place: one sift instead of a pop and a push).
        let flow = self.select()?;
        let Some((packet, next_len)) = self.queues.pop_with_next_len(flow) else {
            self.eligible.pop();
            return None;
        };
        let len = packet.len();
        self.clock.advance(vt_len(len, self.queues.weight_sum()));
        let i = flow.index();
        let Some(t) = self.times.get_mut(i) else {
            self.eligible.pop();
            return Some(Dequeued { flow, packet });
        };
        match next_len {
            Some(next_len) => {
                let start = t.finish;
                t.start = start;
                t.finish = start.wrapping_add(vt_len(next_len, t.weight));
                if vt_ge(self.clock.now(), start) {
                    self.eligible.replace_top(t.finish);
                } else {
                    self.eligible.pop();
                    self.pending.push(start, i as u32);
                }
            }
            None => {
                self.eligible.pop();
                t.idle_era = self.clock.era(t.finish);
            }
        }
        Some(Dequeued { flow, packet })
    }

    fn warp_idle_clock(&mut self, delta: u64) -> bool {
        if !self.is_empty() {
            return false;
        }
        self.clock.advance(delta);
        true
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
