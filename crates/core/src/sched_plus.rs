//! The SCHED+ modification scheme (seed 000 §2), written once over any
//! aggregate-level fair-queueing scheduler, and its instances QFQ+ (seed 000
//! §3) and WF2Q++.
//!
//! # The scheme
//!
//! Flows with the same weight `w` and maximum packet length `L` are grouped
//! into *aggregates* of at most `M` flows. An aggregate `k` with `m^k`
//! flows is scheduled by SCHED as one entity of weight `m^k·w` whose
//! "packet" is its *budget* `m^k·L` (the largest amount of service it may
//! receive per turn). Once SCHED selects an aggregate, it is served alone:
//! each dequeue picks the next flow of the aggregate with a weightless DRR
//! (quantum `L`, a flow joins with a full quantum), charges the packet to
//! the flow's deficit and to the aggregate's budget, and advances SCHED's
//! virtual time by the packet. The aggregate is deselected when its budget
//! does not cover the next packet (it is then charged the service actually
//! received and rescheduled, `S = F`) or when it empties (charged and left
//! idle). Flows' head packets are read only when they are about to be served
//! (*head-packet independence*): enqueues on backlogged flows never touch
//! SCHED, and SCHED runs once per ~`m·L` bytes instead of once per packet.
//!
//! Aggregates are created, filled and emptied as flows are added, removed
//! and reconfigured — also while backlogged: a reconfigured flow leaves its
//! aggregate (deactivating it in SCHED if it was its last backlogged flow)
//! and joins a non-full aggregate with its new `(w, L)`, activating that one
//! if it was idle. Finding a non-full aggregate is an ordered-map lookup on
//! the configuration path only.
//!
//! # M
//!
//! `M` is a constructor parameter, `1..=`[`MAX_AGGREGATE_FLOWS`]. Linux QFQ+
//! (seed 000 §3.1) sets `M = min(8, Q_pkts)` with `Q_pkts` one plus the
//! length in packets of the device transmit queue; the core does not know
//! the device, so the default is 8 and callers that know the transmit queue
//! should pass `min(8, tx_queue_len + 1)`.
//!
//! # Guarantees
//!
//! Seed 000 Theorem 1 / Eq. (3) (T-WFI) and Theorem 2 / Eq. (7) (B-WFI) with
//! `φ^k = w / W` (W = [`SchedPlus::weight_denominator`]), `m^k` =
//! [`SchedPlus::aggregate_size`] and the SCHED timestamp-error terms:
//! for QFQ+ `ΔS⁻ = 2L^k/φ^k`, `ΔS⁺ = 4L^k/φ^k` (Eq. 22); for WF2Q++
//! `ΔS⁻ = 0`, `ΔS⁺ = L^k/φ^k` (seed 000 App. A.3).

use crate::error::{ConfigError, EnqueueError};
use crate::flow::{FlowConfig, FlowId, Limits};
use crate::flow_queues::FlowQueues;
use crate::indexed_heap::IndexedHeap;
use crate::qfq::{clamp_limits, QfqAggregates};
use crate::scheduler::{Capacity, Dequeued, Scheduler};
use crate::vtime::{vt_ge, vt_len, Era, VirtualClock, VirtualTime};
use crate::Packet;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;

pub use crate::qfq::MAX_AGGREGATE_FLOWS;

/// Default aggregate size (the Linux cap, seed 000 §3.1).
pub const DEFAULT_M: u32 = 8;

const NIL: u32 = u32::MAX;

/// A fair-queueing scheduler of aggregates: the SCHED of SCHED+.
///
/// Aggregate ids are `0..max_aggregates`. An aggregate is *idle*,
/// *scheduled* (after [`activate`](Self::activate) or a backlogged
/// [`release`](Self::release)) or *in service* (returned by
/// [`select`](Self::select), until [`release`](Self::release)); at most
/// one is in service.
pub trait AggregateScheduler {
    /// Command-line name of the SCHED+ instance.
    const NAME: &'static str;

    /// SCHED's timestamp-error term `ΔS⁻` (seed 000 App. A.3) in units of
    /// `L^k/φ^k`: 2 for QFQ, 0 for WF2Q+.
    const DELTA_S_MINUS_FACTOR: u32;

    /// SCHED's timestamp-error term `ΔS⁺` in units of `L^k/φ^k`: 4 for
    /// QFQ, 1 for WF2Q+.
    const DELTA_S_PLUS_FACTOR: u32;

    /// A scheduler for `max_aggregates` aggregates of at most `max_members`
    /// flows each.
    fn new(max_aggregates: u32, max_members: u32) -> Self;

    /// The ranges of weights, lengths and weight sums the arithmetic supports.
    fn limits() -> Limits;

    /// Prepares idle aggregate `a` for flows of weight `weight` and maximum
    /// length `max_len` (fixed for the aggregate's lifetime).
    fn init_aggregate(&mut self, a: u32, weight: u32, max_len: u32);

    /// Aggregate `a` now has `m ≥ 1` flows: weight `m·weight`, budget
    /// `m·max_len`. Allowed in any state.
    fn set_members(&mut self, a: u32, m: u32, weight: u32, max_len: u32);

    /// Sum of the weights of all configured flows.
    fn set_weight_sum(&mut self, w: u64);

    /// Idle aggregate `a` became backlogged: timestamp and schedule it.
    fn activate(&mut self, a: u32);

    /// Removes scheduled aggregate `a` (its flows left or emptied).
    fn deactivate(&mut self, a: u32);

    /// Picks the next aggregate to serve and removes it from the schedule.
    fn select(&mut self) -> Option<u32>;

    /// The in-service aggregate stops being served after receiving `service`
    /// bytes; it is rescheduled (`S = F`) if still `backlogged`.
    fn release(&mut self, a: u32, service: u64, backlogged: bool);

    /// The end of a turn as one call: [`charge`](Self::charge) `uncharged`
    /// bytes, [`release`](Self::release) `a`, [`select`](Self::select).
    fn end_turn(&mut self, a: u32, service: u64, uncharged: u32, backlogged: bool) -> Option<u32> {
        self.charge(uncharged);
        self.release(a, service, backlogged);
        self.select()
    }

    /// `len` bytes of the in-service aggregate were dequeued since the last
    /// call (SCHED+ batches the packets of a turn: it charges before every
    /// other call, not per packet).
    fn charge(&mut self, len: u32);

    /// Timestamp back-shifts forced by a finite data structure (see
    /// [`crate::qfq`]); 0 for exact schedulers.
    fn slot_clamps(&self) -> u64 {
        0
    }

    /// Test hook behind [`Scheduler::warp_idle_clock`]: advances the virtual
    /// time by `delta` units while no aggregate is scheduled or in service.
    #[doc(hidden)]
    fn warp_idle_clock(&mut self, delta: u64);

    /// Debug invariant checker.
    #[cfg(any(test, debug_assertions))]
    fn check(&self) -> Result<(), &'static str> {
        Ok(())
    }
}

#[derive(Clone, Copy)]
struct FlowState {
    agg: u32,
    next: u32,
    deficit: u32,
}

#[derive(Clone, Copy)]
struct Agg {
    weight: u32,
    max_len: u32,
    members: u32,
    /// DRR list of the backlogged flows.
    head: u32,
    tail: u32,
    budget: u64,
    initial_budget: u64,
    scheduled: bool,
}

const AGG0: Agg = Agg {
    weight: 0,
    max_len: 0,
    members: 0,
    head: NIL,
    tail: NIL,
    budget: 0,
    initial_budget: 0,
    scheduled: false,
};

/// SCHED+ over the aggregate scheduler `A` (see the module doc).
pub struct SchedPlus<P, A> {
    queues: FlowQueues<P>,
    sched: A,
    flows: Vec<FlowState>,
    aggs: Vec<Agg>,
    free_aggs: Vec<u32>,
    /// Non-full aggregates by `(weight, max_len)`.
    nonfull: BTreeMap<(u32, u32), Vec<u32>>,
    in_service: u32,
    /// The in-service aggregate's budget when SCHED's virtual time was last
    /// charged: service since then (`charged_at - budget`) is charged in one
    /// step before SCHED is next consulted ([`Self::sync`]), not per packet.
    charged_at: u64,
    max_members: u32,
}

/// QFQ+: SCHED+ over QFQ.
pub type QfqPlus<P> = SchedPlus<P, QfqAggregates>;
/// WF2Q++: SCHED+ over exact WF2Q+.
pub type Wf2qPlusPlus<P> = SchedPlus<P, Wf2qAggregates>;

impl<P: Packet, A: AggregateScheduler> SchedPlus<P, A> {
    /// SCHED+ with `M` = [`DEFAULT_M`] and the scheduler's own limits.
    pub fn new(cap: Capacity) -> Self {
        Self::with_options(cap, Limits::DEFAULT, DEFAULT_M)
    }

    /// SCHED+ accepting the intersection of `limits` with the aggregate
    /// scheduler's ranges, with aggregates of at most `m` flows (clamped to
    /// `1..=MAX_AGGREGATE_FLOWS`; see [`Self::try_with_options`]).
    pub fn with_options(cap: Capacity, limits: Limits, m: u32) -> Self {
        let m = m.clamp(1, MAX_AGGREGATE_FLOWS);
        let own = A::limits();
        let limits = Limits {
            max_weight: limits.max_weight.min(own.max_weight),
            max_packet_len: limits.max_packet_len.min(own.max_packet_len),
            max_weight_sum: limits.max_weight_sum.min(own.max_weight_sum),
        };
        let n = cap.max_flows;
        Self {
            queues: FlowQueues::new(cap, limits),
            sched: A::new(n, m),
            flows: alloc::vec![FlowState { agg: NIL, next: NIL, deficit: 0 }; n as usize],
            aggs: alloc::vec![AGG0; n as usize],
            free_aggs: (0..n).rev().collect(),
            nonfull: BTreeMap::new(),
            in_service: NIL,
            charged_at: 0,
            max_members: m,
        }
    }

    /// As [`Self::with_options`] but rejecting `m` outside
    /// `1..=MAX_AGGREGATE_FLOWS`.
    pub fn try_with_options(cap: Capacity, limits: Limits, m: u32) -> Result<Self, ConfigError> {
        if m == 0 || m > MAX_AGGREGATE_FLOWS {
            return Err(ConfigError::InvalidParameter(
                "aggregate size m must be in 1..=64",
            ));
        }
        Ok(Self::with_options(cap, limits, m))
    }

    /// `(ΔS⁻, ΔS⁺)` of SCHED in units of `L^k/φ^k` (for Eq. 3 / Eq. 7 of
    /// seed 000: `ΔS^k = ΔS⁻ + ΔS⁺`).
    pub const fn timestamp_error_factors() -> (u32, u32) {
        (A::DELTA_S_MINUS_FACTOR, A::DELTA_S_PLUS_FACTOR)
    }

    /// `M`, the largest number of flows per aggregate.
    pub fn max_aggregate_size(&self) -> u32 {
        self.max_members
    }

    /// `m^k`, the number of flows in the aggregate of flow `id`.
    pub fn aggregate_size(&self, id: FlowId) -> Option<u32> {
        self.queues.config(id)?;
        Some(self.aggs[self.flows[id.index()].agg as usize].members)
    }

    /// Number of aggregates in use.
    pub fn num_aggregates(&self) -> usize {
        self.aggs.len() - self.free_aggs.len()
    }

    /// `W`: flow k's share (φ of every bound) is `w_k / W`.
    pub fn weight_denominator(&self) -> u64 {
        self.queues.weight_sum()
    }

    /// Timestamp back-shifts of the aggregate scheduler (see [`crate::qfq`]).
    pub fn slot_clamps(&self) -> u64 {
        self.sched.slot_clamps()
    }

    /// The aggregate scheduler.
    pub fn aggregates(&self) -> &A {
        &self.sched
    }

    /// Checks the SCHED+ bookkeeping (aggregate membership and sizes, DRR
    /// lists holding exactly the backlogged flows, every backlogged
    /// aggregate scheduled or in service, budgets) and the aggregate
    /// scheduler's own invariants (for QFQ+, those of seed 003 §4.1.3).
    #[cfg(any(test, debug_assertions))]
    #[doc(hidden)]
    pub fn check_invariants(&self) -> Result<(), &'static str> {
        let mut members = alloc::vec![0u32; self.aggs.len()];
        let mut listed = alloc::vec![0u32; self.aggs.len()];
        for i in 0..self.queues.max_flows() {
            let id = FlowId(i);
            let Some(cfg) = self.queues.config(id) else {
                continue;
            };
            let a = self.flows[i as usize].agg;
            let agg = self.aggs.get(a as usize).ok_or("flow without aggregate")?;
            if agg.weight != cfg.weight || agg.max_len != cfg.max_len {
                return Err("flow in an aggregate of other parameters");
            }
            members[a as usize] += 1;
            if self.queues.is_backlogged(id) {
                listed[a as usize] += 1;
            }
        }
        for (a, agg) in self.aggs.iter().enumerate() {
            if agg.members != members[a] || agg.members > self.max_members {
                return Err("aggregate member count is wrong");
            }
            let mut n = 0;
            let mut f = agg.head;
            let mut last = NIL;
            while f != NIL {
                if self.flows[f as usize].agg != a as u32 || !self.queues.is_backlogged(FlowId(f)) {
                    return Err("DRR list holds a foreign or idle flow");
                }
                let len = self.queues.head_len(FlowId(f)).unwrap_or(0);
                if self.flows[f as usize].deficit < len {
                    return Err("a listed flow's deficit does not cover its head packet");
                }
                n += 1;
                last = f;
                f = self.flows[f as usize].next;
            }
            if n != listed[a] || agg.tail != last {
                return Err("DRR list does not hold exactly the backlogged flows");
            }
            let in_service = self.in_service == a as u32;
            if n > 0 && !(agg.scheduled ^ in_service) {
                return Err("a backlogged aggregate is neither scheduled nor in service");
            }
            if n == 0 && agg.scheduled {
                return Err("an idle aggregate is scheduled");
            }
            if in_service && agg.budget > agg.initial_budget {
                return Err("budget above its initial value");
            }
            if in_service && (self.charged_at < agg.budget || self.charged_at > agg.initial_budget)
            {
                return Err("uncharged service outside the budget");
            }
        }
        self.sched.check()
    }

    /// Charges SCHED's virtual time with the service the in-service
    /// aggregate received since the last charge; called before every call
    /// into SCHED, so SCHED always sees exact virtual time.
    #[inline]
    fn sync(&mut self) {
        let a = self.in_service;
        if a != NIL {
            let b = self.aggs[a as usize].budget;
            let d = self.charged_at - b;
            if d != 0 {
                self.charged_at = b;
                // d ≤ m·L ≤ 64·2^16: fits.
                self.sched.charge(d as u32);
            }
        }
    }

    /// DRR: the head flow `f` of aggregate `a` ends its turn and moves to
    /// the back of the list.
    #[inline(always)]
    fn rotate(&mut self, a: u32, f: u32) {
        let agg = &mut self.aggs[a as usize];
        let t = agg.tail;
        if t != f {
            agg.head = self.flows[f as usize].next;
            agg.tail = f;
            self.flows[f as usize].next = NIL;
            self.flows[t as usize].next = f;
        }
    }

    fn list_push(&mut self, a: u32, f: u32) {
        self.flows[f as usize].next = NIL;
        let agg = &mut self.aggs[a as usize];
        if agg.tail == NIL {
            agg.head = f;
        } else {
            self.flows[agg.tail as usize].next = f;
        }
        self.aggs[a as usize].tail = f;
    }

    fn list_pop(&mut self, a: u32) -> u32 {
        let agg = &mut self.aggs[a as usize];
        let f = agg.head;
        agg.head = self.flows[f as usize].next;
        if agg.head == NIL {
            agg.tail = NIL;
        }
        self.flows[f as usize].next = NIL;
        f
    }

    /// Unlinks `f` from its aggregate's DRR list: O(M).
    fn list_unlink(&mut self, a: u32, f: u32) {
        let mut prev = NIL;
        let mut cur = self.aggs[a as usize].head;
        while cur != NIL {
            let next = self.flows[cur as usize].next;
            if cur == f {
                if prev == NIL {
                    self.aggs[a as usize].head = next;
                } else {
                    self.flows[prev as usize].next = next;
                }
                if self.aggs[a as usize].tail == f {
                    self.aggs[a as usize].tail = prev;
                }
                self.flows[f as usize].next = NIL;
                return;
            }
            prev = cur;
            cur = next;
        }
    }

    /// A backlogged flow joins its aggregate's DRR list with a full quantum;
    /// an idle aggregate not in service gets scheduled.
    #[inline]
    fn start_flow(&mut self, i: usize) {
        let a = self.flows[i].agg;
        let agg = self.aggs[a as usize];
        self.flows[i].deficit = agg.max_len;
        let was_idle = agg.head == NIL;
        self.list_push(a, i as u32);
        if was_idle && self.in_service != a && !agg.scheduled {
            self.sync();
            self.sched.activate(a);
            self.aggs[a as usize].scheduled = true;
        }
    }

    /// Puts flow `i` (configuration `cfg`) into a non-full aggregate.
    fn attach(&mut self, i: usize, cfg: FlowConfig, backlogged: bool) {
        self.sync();
        let key = (cfg.weight, cfg.max_len);
        let existing = self.nonfull.get(&key).and_then(|v| v.last().copied());
        let a = match existing {
            Some(a) => a,
            None => {
                // At most one aggregate per flow, so an id is always free.
                let a = self.free_aggs.pop().unwrap_or(0);
                self.aggs[a as usize] = Agg {
                    weight: cfg.weight,
                    max_len: cfg.max_len,
                    ..AGG0
                };
                self.sched.init_aggregate(a, cfg.weight, cfg.max_len);
                self.nonfull.entry(key).or_default().push(a);
                a
            }
        };
        let agg = &mut self.aggs[a as usize];
        agg.members += 1;
        let m = agg.members;
        self.sched.set_members(a, m, cfg.weight, cfg.max_len);
        if m == self.max_members {
            self.remove_nonfull(key, a);
        }
        self.flows[i] = FlowState {
            agg: a,
            next: NIL,
            deficit: 0,
        };
        if backlogged {
            self.start_flow(i);
        }
    }

    fn remove_nonfull(&mut self, key: (u32, u32), a: u32) {
        if let Some(v) = self.nonfull.get_mut(&key) {
            if let Some(pos) = v.iter().position(|&x| x == a) {
                v.swap_remove(pos);
            }
            if v.is_empty() {
                self.nonfull.remove(&key);
            }
        }
    }

    /// Takes flow `i` out of its aggregate, destroying the aggregate if it
    /// was the last member.
    fn detach(&mut self, i: usize, backlogged: bool) {
        self.sync();
        let a = self.flows[i].agg;
        if backlogged {
            self.list_unlink(a, i as u32);
            let agg = self.aggs[a as usize];
            if agg.head == NIL && agg.scheduled {
                self.sched.deactivate(a);
                self.aggs[a as usize].scheduled = false;
            }
        }
        self.flows[i] = FlowState {
            agg: NIL,
            next: NIL,
            deficit: 0,
        };
        let agg = &mut self.aggs[a as usize];
        let key = (agg.weight, agg.max_len);
        agg.members -= 1;
        let m = agg.members;
        if m == 0 {
            if self.in_service == a {
                let used = agg.initial_budget - agg.budget;
                self.sched.release(a, used, false);
                self.in_service = NIL;
            }
            self.remove_nonfull(key, a);
            self.aggs[a as usize] = AGG0;
            self.free_aggs.push(a);
            return;
        }
        self.sched.set_members(a, m, key.0, key.1);
        if m + 1 == self.max_members {
            self.nonfull.entry(key).or_default().push(a);
        }
    }

    /// The flow whose head packet the next dequeue sends. Fast path: the
    /// head flow of the in-service aggregate. Its deficit always covers its
    /// head packet (a flow joins the DRR list with a full quantum `L`, and a
    /// dequeue tops up and rotates a flow eagerly when its deficit no longer
    /// covers the next packet, see [`Self::check_invariants`]), so only the
    /// budget is checked, and the packet is read only if the budget is below
    /// `L` (the aggregate's last packets of a turn).
    #[inline(always)]
    fn prepare(&mut self) -> Option<u32> {
        let a = self.in_service;
        if a != NIL {
            let agg = &self.aggs[a as usize];
            let f = agg.head;
            if f != NIL {
                if agg.budget >= u64::from(agg.max_len) {
                    return Some(f);
                }
                if agg.budget != 0 {
                    if let Some(len) = self.queues.head_len(FlowId(f)) {
                        if u64::from(len) <= agg.budget {
                            return Some(f);
                        }
                    }
                }
            }
        }
        self.prepare_slow()
    }

    /// Aggregate `a`, just selected, enters service with a full budget
    /// `m·L`. A scheduled aggregate is backlogged, and its head flow's
    /// deficit (invariant) and the full budget cover the head packet: that
    /// flow is returned, to be served without re-checking.
    #[inline(always)]
    fn start_turn(&mut self, a: u32) -> Option<u32> {
        let agg = &mut self.aggs[a as usize];
        agg.scheduled = false;
        agg.budget = u64::from(agg.members) * u64::from(agg.max_len);
        agg.initial_budget = agg.budget;
        self.charged_at = agg.budget;
        self.in_service = a;
        (agg.head != NIL).then_some(agg.head)
    }

    /// The SCHED+ selection, when [`Self::prepare`] found no aggregate in
    /// service, or the in-service one empty or with a budget that does not
    /// cover its head packet: the aggregate is released (charged the service
    /// it received, rescheduled if still backlogged) and the next one
    /// selected; it starts with a full budget `m·L`.
    #[cold]
    #[inline(never)]
    fn prepare_slow(&mut self) -> Option<u32> {
        let a = self.in_service;
        let mut next = if a == NIL {
            self.sched.select()?
        } else {
            let agg = &mut self.aggs[a as usize];
            let backlogged = agg.head != NIL;
            agg.scheduled = backlogged;
            let used = agg.initial_budget - agg.budget;
            // ≤ m·L ≤ 64·2^16: fits.
            let uncharged = (self.charged_at - agg.budget) as u32;
            self.in_service = NIL;
            self.sched.end_turn(a, used, uncharged, backlogged)?
        };
        loop {
            if let Some(f) = self.start_turn(next) {
                return Some(f);
            }
            // Not reached: a scheduled aggregate is backlogged.
            let a = self.in_service;
            self.in_service = NIL;
            next = self.sched.end_turn(a, 0, 0, false)?;
        }
    }
}

impl<P: Packet, A: AggregateScheduler> Scheduler<P> for SchedPlus<P, A> {
    fn name(&self) -> &'static str {
        A::NAME
    }

    fn add_flow(&mut self, id: FlowId, cfg: FlowConfig) -> Result<(), ConfigError> {
        self.queues.add_flow(id, cfg)?;
        self.sync();
        self.attach(id.index(), cfg, false);
        self.sched.set_weight_sum(self.queues.weight_sum());
        Ok(())
    }

    fn remove_flow(&mut self, id: FlowId) -> Result<Vec<P>, ConfigError> {
        self.sync();
        if self.queues.contains(id) {
            let backlogged = self.queues.is_backlogged(id);
            self.detach(id.index(), backlogged);
        }
        let pkts = self.queues.remove_flow(id)?;
        self.sched.set_weight_sum(self.queues.weight_sum());
        Ok(pkts)
    }

    fn reconfigure_flow(&mut self, id: FlowId, cfg: FlowConfig) -> Result<(), ConfigError> {
        let old = self.queues.reconfigure(id, cfg)?;
        self.sync();
        self.sched.set_weight_sum(self.queues.weight_sum());
        if old != cfg {
            let backlogged = self.queues.is_backlogged(id);
            self.detach(id.index(), backlogged);
            self.attach(id.index(), cfg, backlogged);
        }
        Ok(())
    }

    // Inlined into the caller's loop, as DRR's: an enqueue on a backlogged
    // flow touches only its queue.
    #[inline(always)]
    fn enqueue(&mut self, id: FlowId, packet: P) -> Result<(), EnqueueError<P>> {
        if self.queues.push(id, packet)? {
            self.start_flow(id.index());
        }
        Ok(())
    }

    /// Per packet: the head flow of the in-service aggregate sends, its
    /// deficit and the aggregate's budget are charged (SCHED's virtual time
    /// is charged per turn, see `Self::sync`), and DRR rotates the flow
    /// eagerly if its deficit no longer covers its next packet — without
    /// reading that packet when the deficit is 0.
    #[inline(always)]
    fn dequeue(&mut self) -> Option<Dequeued<P>> {
        let f = self.prepare()?;
        let flow = FlowId(f);
        let packet = self.queues.pop(flow)?;
        let len = packet.len();
        let a = self.in_service;
        let agg = &mut self.aggs[a as usize];
        agg.budget -= u64::from(len);
        let quantum = agg.max_len;
        let fs = &mut self.flows[f as usize];
        let deficit = fs.deficit - len;
        if !self.queues.is_backlogged(flow) {
            fs.deficit = 0;
            self.list_pop(a);
        } else if deficit == 0
            || self
                .queues
                .head_len(flow)
                .is_some_and(|next| deficit < next)
        {
            // DRR: the flow's turn is over; next quantum, back of the list.
            fs.deficit = deficit + quantum;
            self.rotate(a, f);
        } else {
            fs.deficit = deficit;
        }
        Some(Dequeued { flow, packet })
    }

    fn warp_idle_clock(&mut self, delta: u64) -> bool {
        if !self.is_empty() {
            return false;
        }
        // An emptied aggregate may still be in service: end its turn first.
        self.sync();
        let a = self.in_service;
        if a != NIL {
            let agg = &mut self.aggs[a as usize];
            let used = agg.initial_budget - agg.budget;
            agg.scheduled = false;
            self.in_service = NIL;
            self.sched.release(a, used, false);
        }
        self.sched.warp_idle_clock(delta);
        true
    }

    fn peek(&mut self) -> Option<(FlowId, &P)> {
        let f = self.prepare()?;
        let flow = FlowId(f);
        self.queues.head(flow).map(|p| (flow, p))
    }

    fn queues(&self) -> &FlowQueues<P> {
        &self.queues
    }
}

/// Exact WF2Q+ over aggregates: the SCHED of WF2Q++. Same policy and
/// arithmetic as [`crate::Wf2qPlus`] (virtual times of [`crate::vtime`],
/// `φ = weight / W`), with two indexed heaps (eligible by F, pending by S).
pub struct Wf2qAggregates {
    start: Vec<VirtualTime>,
    finish: Vec<VirtualTime>,
    /// The era of `finish` when the aggregate last went idle (see
    /// [`crate::vtime`]): its restart `max(V, F)` is exact after any idle time.
    idle_era: Vec<Era>,
    weight: Vec<u64>,
    budget: Vec<u64>,
    eligible: IndexedHeap,
    pending: IndexedHeap,
    clock: VirtualClock,
    weight_sum: u64,
}

impl Wf2qAggregates {
    fn push(&mut self, a: u32) {
        let i = a as usize;
        if vt_ge(self.clock.now(), self.start[i]) {
            self.eligible.push(self.finish[i], a);
        } else {
            self.pending.push(self.start[i], a);
        }
    }

    #[inline]
    fn vlen(&self, bytes: u64, a: usize) -> VirtualTime {
        vt_len(bytes.min(u64::from(u32::MAX)) as u32, self.weight[a])
    }

    /// Aggregate `a` is idle from now on with finish time `finish[a]`.
    fn went_idle(&mut self, a: usize) {
        self.idle_era[a] = self.clock.era(self.finish[a]);
    }
}

impl AggregateScheduler for Wf2qAggregates {
    const NAME: &'static str = "wf2q++";
    const DELTA_S_MINUS_FACTOR: u32 = 0;
    const DELTA_S_PLUS_FACTOR: u32 = 1;

    fn new(max_aggregates: u32, _max_members: u32) -> Self {
        let n = max_aggregates as usize;
        Self {
            start: alloc::vec![0; n],
            finish: alloc::vec![0; n],
            idle_era: alloc::vec![0; n],
            weight: alloc::vec![1; n],
            budget: alloc::vec![0; n],
            eligible: IndexedHeap::new(max_aggregates),
            pending: IndexedHeap::new(max_aggregates),
            clock: VirtualClock::default(),
            weight_sum: 1,
        }
    }

    fn limits() -> Limits {
        // Same arithmetic range as the flow-level WF2Q+, intersected with
        // QFQ's so that the two SCHED+ instances accept the same flows.
        clamp_limits(Limits::DEFAULT)
    }

    fn init_aggregate(&mut self, a: u32, _weight: u32, _max_len: u32) {
        let now = self.clock.now();
        self.start[a as usize] = now;
        self.finish[a as usize] = now;
        self.went_idle(a as usize);
    }

    fn set_members(&mut self, a: u32, m: u32, weight: u32, max_len: u32) {
        self.weight[a as usize] = u64::from(m.max(1)) * u64::from(weight);
        self.budget[a as usize] = u64::from(m) * u64::from(max_len);
    }

    fn set_weight_sum(&mut self, w: u64) {
        self.weight_sum = w.max(1);
    }

    fn activate(&mut self, a: u32) {
        let i = a as usize;
        let s = self.clock.restart(self.finish[i], self.idle_era[i]);
        self.start[i] = s;
        self.finish[i] = s.wrapping_add(self.vlen(self.budget[i], i));
        self.push(a);
    }

    fn deactivate(&mut self, a: u32) {
        self.eligible.remove(a);
        self.pending.remove(a);
        self.finish[a as usize] = self.start[a as usize];
        self.went_idle(a as usize);
    }

    fn select(&mut self) -> Option<u32> {
        if self.eligible.is_empty() {
            let (s, _) = self.pending.peek()?;
            self.clock.advance_to(s);
        }
        while let Some((s, a)) = self.pending.peek() {
            if !vt_ge(self.clock.now(), s) {
                break;
            }
            self.pending.pop();
            self.eligible.push(self.finish[a as usize], a);
        }
        self.eligible.pop().map(|(_, a)| a)
    }

    fn release(&mut self, a: u32, service: u64, backlogged: bool) {
        let i = a as usize;
        let service = service.min(self.budget[i]);
        self.finish[i] = self.start[i].wrapping_add(self.vlen(service, i));
        if backlogged {
            self.start[i] = self.finish[i];
            self.finish[i] = self.start[i].wrapping_add(self.vlen(self.budget[i], i));
            self.push(a);
        } else {
            self.went_idle(i);
        }
    }

    #[inline]
    fn charge(&mut self, len: u32) {
        self.clock.advance(vt_len(len, self.weight_sum));
    }

    fn warp_idle_clock(&mut self, delta: u64) {
        debug_assert!(self.eligible.is_empty() && self.pending.is_empty());
        self.clock.advance(delta);
    }
}
