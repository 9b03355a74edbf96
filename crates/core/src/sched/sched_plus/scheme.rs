//! [`SchedPlus`]: the SCHED+ scheme over any [`AggregateScheduler`] (see the
//! [module doc](super) for the derivation).

use super::nonfull::NonFull;
use super::{AggregateScheduler, AggregateSize};
use crate::error::{ConfigError, EnqueueError};
use crate::flow::{FlowConfig, FlowId, Limits};
use crate::sched::capacity::{Backlog, Capacity};
use crate::sched::flow_queues::{FlowQueues, HeadPop};
use crate::sched::scheduler::{Dequeued, Scheduler};
use crate::Packet;
use alloc::vec::Vec;

const NIL: u32 = u32::MAX;

/// SCHED+'s DRR state per flow id, one 8-byte record so that a DRR step
/// touches one cache line and indexes it with a shift (the flow's aggregate,
/// needed only when it joins a list or changes, is in
/// [`SchedPlus::agg_of`]).
#[derive(Clone, Copy)]
struct FlowState {
    /// Next flow in the aggregate's circular DRR list (meaningless while
    /// the flow is not listed).
    next: u32,
    /// DRR deficit, bytes.
    deficit: u32,
}

/// An aggregate's DRR list of its backlogged flows, circular (`next` of
/// the tail is the head, as in DRR's active list), so that moving the head
/// to the tail is two stores here and none in the flow records: `head` is
/// being served, `tail` joined last. Both `NIL` when empty.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct List {
    head: u32,
    tail: u32,
}

const EMPTY: List = List {
    head: NIL,
    tail: NIL,
};

/// An aggregate. Its first field is the [`Turn`] it starts a turn with, so
/// that starting a turn is one 16-byte copy; 32 bytes, so that indexing is
/// a shift.
#[derive(Clone, Copy)]
#[repr(align(32))]
struct Agg {
    /// `list`: the DRR list (while the aggregate is in service the live
    /// list is [`SchedPlus::turn`]'s and this copy is stale, see
    /// [`SchedPlus::list_of`]); `budget`: the full budget `m·L`;
    /// `max_len`: `L`.
    start: Turn,
    weight: u32,
    members: u32,
}

const AGG0: Agg = Agg {
    start: NO_TURN,
    weight: 0,
    members: 0,
};

/// The in-service aggregate's state that every dequeue touches, kept in
/// [`SchedPlus`] itself: a dequeue reads no aggregate record. With no
/// aggregate in service, `list` is empty and `budget` 0.
#[derive(Clone, Copy)]
#[repr(C)]
struct Turn {
    /// The in-service aggregate's DRR list (its record's copy is stale).
    list: List,
    /// Bytes it may still send in this turn (`≤ m·L ≤ 64·2^16`).
    budget: u32,
    /// `L`, the quantum of its flows.
    max_len: u32,
}

const NO_TURN: Turn = Turn {
    list: EMPTY,
    budget: 0,
    max_len: 0,
};

/// SCHED+ over the aggregate scheduler `A` (see the module doc).
pub struct SchedPlus<P, A> {
    queues: FlowQueues<P>,
    sched: A,
    flows: Vec<FlowState>,
    /// Each flow id's aggregate (`NIL` while unconfigured).
    agg_of: Vec<u32>,
    aggs: Vec<Agg>,
    free_aggs: Vec<u32>,
    /// Non-full aggregates by `(weight, max_len)`, sized at construction:
    /// adding and removing flows allocates nothing.
    nonfull: NonFull,
    in_service: u32,
    /// The in-service aggregate's hot state.
    turn: Turn,
    /// Its budget at the start of the turn.
    initial_budget: u32,
    /// Its budget when SCHED's virtual time was last charged: service since
    /// then (`charged_at - budget`) is charged in one step before SCHED is
    /// next consulted ([`Self::sync`]), not per packet.
    charged_at: u32,
    max_members: u32,
}

impl<P: Packet, A: AggregateScheduler> SchedPlus<P, A> {
    /// SCHED+ with `M` = [`DEFAULT_M`](super::DEFAULT_M) and the scheduler's own limits.
    pub fn new(cap: Capacity) -> Self {
        Self::with_options(cap, Limits::DEFAULT, AggregateSize::DEFAULT)
    }

    /// SCHED+ with aggregates of at most `m` flows, used exactly as given
    /// (an [`AggregateSize`] is always in `1..=64`; build one from a `u32`
    /// with [`AggregateSize::new`], or call [`Self::try_with_options`]).
    ///
    /// The flow limits in effect are the intersection of `limits` with the
    /// aggregate scheduler's own ([`AggregateScheduler::limits`]): the
    /// arithmetic is proven only inside the latter. [`Self::limits`] returns
    /// them, [`Self::try_with_options`] rejects `limits` that exceed them,
    /// and a flow outside them gets a typed error naming the maximum.
    pub fn with_options(cap: Capacity, limits: Limits, m: AggregateSize) -> Self {
        let m = m.get();
        let limits = limits.intersect(A::limits());
        let n = cap.max_flows;
        Self {
            queues: FlowQueues::new(cap, limits),
            sched: A::new(n, m),
            flows: alloc::vec![FlowState { next: NIL, deficit: 0 }; n as usize],
            agg_of: alloc::vec![NIL; n as usize],
            aggs: alloc::vec![AGG0; n as usize],
            free_aggs: (0..n).rev().collect(),
            nonfull: NonFull::new(n),
            in_service: NIL,
            turn: NO_TURN,
            initial_budget: 0,
            charged_at: 0,
            max_members: m,
        }
    }

    /// As [`Self::with_options`], but rejecting instead of narrowing: `m`
    /// outside `1..=`[`MAX_AGGREGATE_FLOWS`](super::MAX_AGGREGATE_FLOWS) is
    /// [`ConfigError::InvalidParameter`] naming `m`, and a `limits` field
    /// above the aggregate scheduler's own is the error its flows would get
    /// ([`ConfigError::InvalidWeight`], [`ConfigError::InvalidMaxLen`] or
    /// [`ConfigError::WeightSumOverflow`], carrying the value and the
    /// largest accepted).
    pub fn try_with_options(cap: Capacity, limits: Limits, m: u32) -> Result<Self, ConfigError> {
        let m = AggregateSize::new(m)?;
        limits.check_within(A::limits())?;
        Ok(Self::with_options(cap, limits, m))
    }

    /// The flow limits in effect (see [`Self::with_options`]).
    pub fn limits(&self) -> Limits {
        self.queues.limits()
    }

    /// `(ΔS⁻, ΔS⁺)` of SCHED in units of `L^k/φ^k` (for Eq. 3 / Eq. 7 of
    /// the QFQ+ paper: `ΔS^k = ΔS⁻ + ΔS⁺`).
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
        Some(self.aggs[self.agg_of[id.index()] as usize].members)
    }

    /// Number of aggregates in use.
    pub fn num_aggregates(&self) -> usize {
        self.aggs.len() - self.free_aggs.len()
    }

    /// `W`: flow k's share (φ of every bound) is `w_k / W`.
    pub fn weight_denominator(&self) -> u64 {
        self.queues.weight_sum()
    }

    /// Timestamp back-shifts of the aggregate scheduler (see [`crate::sched::qfq`]).
    pub fn slot_clamps(&self) -> u64 {
        self.sched.slot_clamps()
    }

    /// Debug builds: from now on, run the aggregate scheduler's general
    /// path on a copy of its state at every turn end and panic if a fast
    /// path left a different state (a differential test; slow). No-op in
    /// release builds.
    #[doc(hidden)]
    pub fn verify_fast_paths(&mut self, on: bool) {
        self.sched.verify_fast_paths(on);
    }

    /// Unit tests: the aggregate scheduler, to break it on purpose (with
    /// the debug-only differential check).
    #[cfg(all(test, debug_assertions))]
    pub(super) fn aggregates_mut(&mut self) -> &mut A {
        &mut self.sched
    }

    /// The aggregate scheduler.
    pub fn aggregates(&self) -> &A {
        &self.sched
    }

    /// Checks the SCHED+ bookkeeping (aggregate membership and sizes, DRR
    /// lists holding exactly the backlogged flows, every backlogged
    /// aggregate scheduled or in service, budgets) and the aggregate
    /// scheduler's own invariants (for QFQ+, those of the QFQ paper §4.1.3).
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
            let a = self.agg_of[i as usize];
            let agg = self.aggs.get(a as usize).ok_or("flow without aggregate")?;
            if agg.weight != cfg.weight || agg.start.max_len != cfg.max_len {
                return Err("flow in an aggregate of other parameters");
            }
            members[a as usize] += 1;
            if self.queues.is_backlogged(id) {
                listed[a as usize] += 1;
            }
        }
        if (self.in_service == NIL) != (self.turn.max_len == 0)
            || (self.in_service == NIL && (self.turn.list != EMPTY || self.turn.budget != 0))
        {
            return Err("turn state without an aggregate in service, or the reverse");
        }
        for (a, agg) in self.aggs.iter().enumerate() {
            let in_service = self.in_service == a as u32;
            let list = if in_service {
                self.turn.list
            } else {
                agg.start.list
            };
            if in_service && self.turn.max_len != agg.start.max_len {
                return Err("the turn's quantum is not the in-service aggregate's");
            }
            if agg.members != members[a] || agg.members > self.max_members {
                return Err("aggregate member count is wrong");
            }
            if agg.start.budget != agg.members * agg.start.max_len {
                return Err("aggregate full budget is not m·L");
            }
            // Walk the circular list from the head; it must come back to
            // the head through the tail within `listed[a]` steps.
            let mut n = 0;
            if (list.head == NIL) != (list.tail == NIL) {
                return Err("DRR list with a head but no tail, or the reverse");
            }
            if list.head != NIL {
                let mut f = list.head;
                loop {
                    let Some(fs) = self.flows.get(f as usize) else {
                        return Err("DRR list holds an out-of-range flow");
                    };
                    if self.agg_of[f as usize] != a as u32 || !self.queues.is_backlogged(FlowId(f))
                    {
                        return Err("DRR list holds a foreign or idle flow");
                    }
                    let len = self.queues.head_len(FlowId(f)).unwrap_or(0);
                    if fs.deficit < len {
                        return Err("a listed flow's deficit does not cover its head packet");
                    }
                    n += 1;
                    if n > listed[a] {
                        return Err("DRR list does not hold exactly the backlogged flows");
                    }
                    if fs.next == list.head {
                        if f != list.tail {
                            return Err("DRR list does not close at its tail");
                        }
                        break;
                    }
                    f = fs.next;
                }
            }
            if n != listed[a] {
                return Err("DRR list does not hold exactly the backlogged flows");
            }
            // Not in service, an aggregate is scheduled exactly when it is
            // backlogged (SCHED+ keeps no flag of its own: SCHED is asked).
            if !in_service
                && self
                    .sched
                    .is_scheduled(a as u32)
                    .is_some_and(|s| s != (n > 0))
            {
                return Err(if n > 0 {
                    "a backlogged aggregate is neither scheduled nor in service"
                } else {
                    "an idle aggregate is scheduled"
                });
            }
            let budget = self.turn.budget;
            if in_service && budget > self.initial_budget {
                return Err("budget above its initial value");
            }
            if in_service && (self.charged_at < budget || self.charged_at > self.initial_budget) {
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
        // 0 with no aggregate in service.
        let d = self.charged_at - self.turn.budget;
        if d != 0 {
            self.charged_at = self.turn.budget;
            self.sched.charge(d);
        }
    }

    /// Aggregate `a`'s full budget `m·L` (0 if `a` is no aggregate).
    fn full_budget(&self, a: u32) -> u32 {
        self.aggs.get(a as usize).map_or(0, |agg| agg.start.budget)
    }

    /// Aggregate `a`'s live DRR list: the turn's if `a` is in service.
    #[inline]
    fn list_of(&mut self, a: u32) -> &mut List {
        if a == self.in_service {
            &mut self.turn.list
        } else {
            &mut self.aggs[a as usize].start.list
        }
    }

    /// Appends `f` to the tail of aggregate `a`'s circular DRR list.
    fn list_push(&mut self, a: u32, f: u32) {
        let list = *self.list_of(a);
        if list.tail == NIL {
            self.flows[f as usize].next = f;
            *self.list_of(a) = List { head: f, tail: f };
        } else {
            self.flows[f as usize].next = list.head;
            self.flows[list.tail as usize].next = f;
            self.list_of(a).tail = f;
        }
    }

    /// Unlinks `f` from its aggregate's DRR list: O(M), configuration path
    /// only.
    fn list_unlink(&mut self, a: u32, f: u32) {
        let list = *self.list_of(a);
        if list.head == NIL {
            return;
        }
        if list.head == list.tail {
            if list.head == f {
                *self.list_of(a) = EMPTY;
            }
            return;
        }
        // At least two flows: find the predecessor of `f`, starting at the
        // tail (the head's predecessor).
        let mut prev = list.tail;
        loop {
            let cur = self.flows[prev as usize].next;
            if cur == f {
                let after = self.flows[f as usize].next;
                self.flows[prev as usize].next = after;
                let list = self.list_of(a);
                if list.head == f {
                    list.head = after;
                }
                if list.tail == f {
                    list.tail = prev;
                }
                return;
            }
            if cur == list.tail {
                return; // not listed
            }
            prev = cur;
        }
    }

    /// A backlogged flow joins its aggregate's DRR list with a full quantum;
    /// an idle aggregate not in service gets scheduled.
    #[inline]
    fn start_flow(&mut self, i: usize) {
        let a = self.agg_of[i];
        let agg = self.aggs[a as usize];
        self.flows[i].deficit = agg.start.max_len;
        let was_idle = self.list_of(a).head == NIL;
        self.list_push(a, i as u32);
        // An idle aggregate is not scheduled (see `check_invariants`).
        if was_idle && self.in_service != a {
            self.sync();
            self.sched.activate(a, agg.start.budget);
        }
    }

    /// Puts flow `i` (configuration `cfg`) into a non-full aggregate.
    fn attach(&mut self, i: usize, cfg: FlowConfig, backlogged: bool) {
        self.sync();
        let key = (cfg.weight, cfg.max_len);
        let existing = self.nonfull.last(key);
        let a = match existing {
            Some(a) => a,
            None => {
                // At most one aggregate per flow, so an id is always free.
                let a = self.free_aggs.pop().unwrap_or(0);
                self.aggs[a as usize] = Agg {
                    start: Turn {
                        max_len: cfg.max_len,
                        ..NO_TURN
                    },
                    weight: cfg.weight,
                    ..AGG0
                };
                self.sched.init_aggregate(a, cfg.weight, cfg.max_len);
                self.nonfull.push(key, a);
                a
            }
        };
        let agg = &mut self.aggs[a as usize];
        agg.members += 1;
        let m = agg.members;
        // ≤ 64·2^16: fits.
        agg.start.budget = m * cfg.max_len;
        self.sched.set_members(a, m, cfg.weight);
        if m == self.max_members {
            self.nonfull.remove(key, a);
        }
        self.agg_of[i] = a;
        self.flows[i] = FlowState {
            next: NIL,
            deficit: 0,
        };
        if backlogged {
            self.start_flow(i);
        }
    }

    /// Takes flow `i` out of its aggregate, destroying the aggregate if it
    /// was the last member.
    fn detach(&mut self, i: usize, backlogged: bool) {
        self.sync();
        let a = self.agg_of[i];
        if backlogged {
            self.list_unlink(a, i as u32);
            // Backlogged, `i` was listed: an aggregate not in service whose
            // list it empties was scheduled.
            if self.in_service != a && self.aggs[a as usize].start.list.head == NIL {
                self.sched.deactivate(a);
            }
        }
        self.agg_of[i] = NIL;
        self.flows[i] = FlowState {
            next: NIL,
            deficit: 0,
        };
        let agg = &mut self.aggs[a as usize];
        let key = (agg.weight, agg.start.max_len);
        agg.members -= 1;
        let m = agg.members;
        agg.start.budget = m * key.1;
        if m == 0 {
            if self.in_service == a {
                // Charged at most the budget it had, one flow's `L`.
                let used = self.initial_budget - self.turn.budget;
                self.sched.release(a, u64::from(used), key.1, false);
                self.end_service();
            }
            self.nonfull.remove(key, a);
            self.aggs[a as usize] = AGG0;
            self.free_aggs.push(a);
            return;
        }
        self.sched.set_members(a, m, key.0);
        if m + 1 == self.max_members {
            self.nonfull.push(key, a);
        }
    }

    /// The flow whose head packet the next dequeue sends. Fast path: the
    /// head flow of the in-service aggregate. Its deficit always covers its
    /// head packet (a flow joins the DRR list with a full quantum `L`, and a
    /// dequeue tops up and rotates a flow eagerly when its deficit no longer
    /// covers the next packet, see [`Self::check_invariants`]), so only the
    /// budget is checked.
    #[inline(always)]
    fn prepare(&mut self) -> Option<u32> {
        let f = self.turn.list.head;
        if f != NIL {
            if let Some(len) = self.queues.head_len(FlowId(f)) {
                if len <= self.turn.budget {
                    return Some(f);
                }
            }
        }
        self.next_turn()
    }

    /// No aggregate is in service any more.
    #[inline(always)]
    fn end_service(&mut self) {
        self.in_service = NIL;
        self.turn = NO_TURN;
        self.initial_budget = 0;
        self.charged_at = 0;
    }

    /// Aggregate `a`, just selected, enters service with a full budget
    /// `m·L`. A scheduled aggregate is backlogged, and its head flow's
    /// deficit (invariant) and the full budget cover the head packet: that
    /// flow is returned, to be served without re-checking.
    #[inline(always)]
    fn start_turn(&mut self, a: u32) -> Option<u32> {
        let agg = &self.aggs[a as usize];
        self.turn = agg.start;
        self.initial_budget = agg.start.budget;
        self.charged_at = agg.start.budget;
        self.in_service = a;
        (agg.start.list.head != NIL).then_some(agg.start.list.head)
    }

    /// The SCHED+ selection, when [`Self::prepare`] found no aggregate in
    /// service, or the in-service one empty or with a budget that does not
    /// cover its head packet: the aggregate is released (charged the service
    /// it received, rescheduled if still backlogged) and the next one
    /// selected; it starts with a full budget `m·L`.
    #[cold]
    #[inline(never)]
    fn next_turn(&mut self) -> Option<u32> {
        let a = self.in_service;
        let Turn { list, budget, .. } = self.turn;
        // `NIL` (no aggregate in service) is no aggregate id: the lookup
        // that writes the turn's list back is also that test.
        let Some(agg) = self.aggs.get_mut(a as usize) else {
            return self.first_turn();
        };
        agg.start.list = list;
        let full = agg.start.budget;
        let backlogged = list.head != NIL;
        let used = self.initial_budget - budget;
        let uncharged = self.charged_at - budget;
        // SCHED's common turn end first; it changes nothing if it declines.
        let Some(next) = self
            .sched
            .try_end_turn(a, u64::from(used), full, uncharged, backlogged)
        else {
            return self.end_turn_slow(a, used, full, uncharged, backlogged);
        };
        match self.start_turn(next) {
            Some(f) => Some(f),
            None => self.skip_empty_turns(),
        }
    }

    /// [`Self::next_turn`] where SCHED's fast turn end does not apply.
    #[inline(always)]
    fn end_turn_slow(
        &mut self,
        a: u32,
        used: u32,
        full: u32,
        uncharged: u32,
        backlogged: bool,
    ) -> Option<u32> {
        // `start_turn` overwrites the turn state; only without a next
        // aggregate is it cleared here.
        let Some(next) = self
            .sched
            .end_turn(a, u64::from(used), full, uncharged, backlogged)
        else {
            self.end_service();
            return None;
        };
        match self.start_turn(next) {
            Some(f) => Some(f),
            None => self.skip_empty_turns(),
        }
    }

    /// [`Self::next_turn`] with no aggregate in service.
    #[cold]
    #[inline(never)]
    fn first_turn(&mut self) -> Option<u32> {
        let next = self.sched.select()?;
        match self.start_turn(next) {
            Some(f) => Some(f),
            None => self.skip_empty_turns(),
        }
    }

    /// Not reached: a scheduled aggregate is backlogged. Should one be
    /// selected empty, its turn ends at once.
    #[cold]
    #[inline(never)]
    fn skip_empty_turns(&mut self) -> Option<u32> {
        loop {
            let a = self.in_service;
            self.end_service();
            let next = self.sched.end_turn(a, 0, self.full_budget(a), 0, false)?;
            if let Some(f) = self.start_turn(next) {
                return Some(f);
            }
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

    /// Per packet: the head flow of the in-service aggregate sends if its
    /// head packet fits the aggregate's budget (one lookup in the packet
    /// store both checks and removes it; the flow's deficit covers it by
    /// invariant), else the SCHED+ selection runs (`Self::next_turn`).
    /// The flow's deficit and the aggregate's budget are charged (SCHED's
    /// virtual time is charged per turn, see `Self::sync`), and DRR rotates
    /// the flow eagerly if its deficit no longer covers its next packet —
    /// without reading that packet when the deficit is 0. Same service
    /// order as `Self::prepare` followed by a pop.
    #[inline(always)]
    fn dequeue(&mut self) -> Option<Dequeued<P>> {
        // The in-service aggregate's state is in `self.turn`, borrowed apart
        // from the flow records and the queues. With no aggregate in
        // service its list is empty.
        // An empty list's head (`NIL`) is no flow id, and a budget of 0
        // fits no packet (lengths are at least 1): both go to the slow path.
        let f = self.turn.list.head;
        if let HeadPop::Popped {
            packet,
            len,
            now_empty,
        } = self
            .queues
            .pop_within(FlowId(f), u64::from(self.turn.budget))
        {
            served(
                &mut self.turn,
                &mut self.flows,
                &self.queues,
                f,
                len,
                now_empty,
            );
            return Some(Dequeued {
                flow: FlowId(f),
                packet,
            });
        }
        let f = self.next_turn()?;
        match self.queues.pop_within(FlowId(f), u64::MAX) {
            HeadPop::Popped {
                packet,
                len,
                now_empty,
            } => {
                served(
                    &mut self.turn,
                    &mut self.flows,
                    &self.queues,
                    f,
                    len,
                    now_empty,
                );
                Some(Dequeued {
                    flow: FlowId(f),
                    packet,
                })
            }
            // Only with a broken invariant (an empty flow listed).
            _ => None,
        }
    }

    fn warp_idle_clock(&mut self, delta: u64) -> bool {
        if !self.is_empty() {
            return false;
        }
        // An emptied aggregate may still be in service: end its turn first.
        self.sync();
        let a = self.in_service;
        if a != NIL {
            let used = self.initial_budget - self.turn.budget;
            self.aggs[a as usize].start.list = EMPTY;
            self.end_service();
            self.sched
                .release(a, u64::from(used), self.full_budget(a), false);
        }
        self.sched.warp_idle_clock(delta);
        true
    }

    fn peek(&mut self) -> Option<(FlowId, &P)> {
        let f = self.prepare()?;
        let flow = FlowId(f);
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

/// Accounts a packet `len` bytes long just sent by flow `f`, the head of
/// the in-service aggregate (`turn`): charges the turn's budget and the
/// flow's deficit; an emptied flow leaves the DRR list, and a flow whose
/// deficit no longer covers its next packet (not read when the deficit is 0)
/// gets its quantum `L` and moves to the tail: two stores, the list being
/// circular.
#[inline(always)]
fn served<P: Packet>(
    turn: &mut Turn,
    flows: &mut [FlowState],
    queues: &FlowQueues<P>,
    f: u32,
    len: u32,
    now_empty: bool,
) {
    turn.budget -= len;
    let Some(fs) = flows.get_mut(f as usize) else {
        return;
    };
    let deficit = fs.deficit - len;
    let list = &mut turn.list;
    if now_empty {
        fs.deficit = 0;
        // `f` is the head: unlink it.
        if list.tail == f {
            *list = EMPTY;
        } else {
            let next = fs.next;
            list.head = next;
            if let Some(t) = flows.get_mut(list.tail as usize) {
                t.next = next;
            }
        }
    } else if deficit == 0
        || queues
            .head_len(FlowId(f))
            .is_some_and(|next| deficit < next)
    {
        // DRR: the flow's turn is over; next quantum, back of the list.
        fs.deficit = deficit + turn.max_len;
        list.tail = f;
        list.head = fs.next;
    } else {
        fs.deficit = deficit;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::sched_plus::QfqPlus;

    /// Three backlogged flows of one aggregate, after one dequeue (so the
    /// list has rotated and an aggregate is in service).
    fn three_backlogged() -> QfqPlus<u32> {
        let mut s: QfqPlus<u32> = QfqPlus::new(Capacity::new(4, 64));
        for f in 0..3 {
            s.add_flow(FlowId(f), FlowConfig::new(1, 1500)).unwrap();
            s.enqueue(FlowId(f), 1500).unwrap();
            s.enqueue(FlowId(f), 1500).unwrap();
        }
        assert_eq!(s.dequeue().map(|d| d.flow), Some(FlowId(0)));
        assert_eq!(s.check_invariants(), Ok(()));
        s
    }

    #[test]
    fn circular_list_rotates_in_join_order() {
        let mut s = three_backlogged();
        let order: Vec<u32> = (0..5)
            .filter_map(|_| s.dequeue())
            .map(|d| d.flow.0)
            .collect();
        // Flow 0 went to the tail after its first packet; flows leave the
        // list when they empty.
        assert_eq!(order, [1, 2, 0, 1, 2]);
        assert_eq!(s.check_invariants(), Ok(()));
        assert!(s.dequeue().is_none());
    }

    #[test]
    fn invariant_check_catches_a_broken_circular_list() {
        // The aggregate is in service: its live list is the turn's.
        let mut s = three_backlogged();
        let a = s.agg_of[0];
        assert_eq!(s.in_service, a);
        // A list that does not close at its tail.
        let list = s.list_of(a);
        list.tail = list.head;
        assert!(s.check_invariants().is_err());
        // A flow skipped: the list holds fewer than the backlogged flows.
        let mut s = three_backlogged();
        let head = s.list_of(a).head as usize;
        let second = s.flows[head].next as usize;
        s.flows[head].next = s.flows[second].next;
        assert!(s.check_invariants().is_err());
        // A cycle that never returns to the head.
        let mut s = three_backlogged();
        let tail = s.list_of(a).tail as usize;
        s.flows[tail].next = s.flows[head].next;
        assert!(s.check_invariants().is_err());
        // Head without tail.
        let mut s = three_backlogged();
        s.list_of(a).tail = NIL;
        assert!(s.check_invariants().is_err());
        // The stale copy in the aggregate's record is not the one checked
        // (nor used) while it is in service; the turn's list is.
        let mut s = three_backlogged();
        s.aggs[a as usize].start.list = EMPTY;
        assert_eq!(s.check_invariants(), Ok(()));
        s.turn.list = EMPTY;
        assert!(s.check_invariants().is_err());
        // An emptied aggregate left with a dangling head.
        let mut s = three_backlogged();
        while s.dequeue().is_some() {}
        assert_eq!(s.check_invariants(), Ok(()));
        assert_eq!(s.in_service, NIL);
        s.aggs[a as usize].start.list.head = 0;
        assert!(s.check_invariants().is_err());
        // A turn left behind with no aggregate in service.
        let mut s = three_backlogged();
        while s.dequeue().is_some() {}
        s.turn.budget = 1;
        assert!(s.check_invariants().is_err());
    }
}
