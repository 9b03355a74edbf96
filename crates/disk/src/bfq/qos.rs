//! dmClock's reservation and limit inside BFQ ([`crate::dmclock`]).
//!
//! # How they compose with BFQ
//!
//! * **Reservation: a phase in front of BFQ's choice.** On every dispatch,
//!   before BFQ serves its active application, the backlogged application
//!   (other than the active one) whose reservation tag is the earliest and
//!   due is served one request, whatever BFQ is doing: serving another
//!   application's budget, idling for one, or holding back an idle-class
//!   one. A reservation is a promise of a rate, and only a phase that
//!   overrides BFQ's exclusive service can keep it: BFQ alone would make a
//!   reserved application wait a whole round of other applications'
//!   budgets (hundreds of milliseconds). The sectors served this way are
//!   deducted from its next budgets, as injected ones are, so B-WF2Q+
//!   counts them against its weighted share: it gets `max(reservation,
//!   weighted share)`, not their sum.
//! * **Limit: eligibility.** An application whose limit tag is in the
//!   future is not in B-WF2Q+ (it is *parked*) until the tag is reached;
//!   an active one that reaches it ends its turn, charged what it
//!   consumed; when the tag is reached it re-enters B-WF2Q+ and ends the
//!   turn of a serving application of its class, so B-WF2Q+ chooses
//!   between them (a limited application is paced at its limit, not at
//!   one request per round of the others' budgets). BFQ's idling, budgets and weight raising are unchanged for
//!   the applications within their limits, and nothing else is served
//!   while every backlogged application is at its limit: the device
//!   waits, and `dispatch` answers [`Dispatch::Idle`] with the instant the
//!   earliest tag is reached, so the caller wakes then.
//!
//! The reservation phase scans the applications with a reservation and
//! unparking scans the parked ones: O(reserved + parked) per dispatch.

use super::Bfq;
use crate::request::{Nanos, Request};
use crate::scheduler::Dispatch;

impl Bfq {
    /// Whether `app`'s limit forbids serving it at `now`.
    /// Its own limit or one of its groups' ([`super::group_rates`]).
    pub(super) fn over_limit_at(&self, app: u32, now: Nanos) -> bool {
        !self.apps[app as usize].dm.allows(now) || !self.groups_allow(app, now)
    }

    /// Whether `app`'s limit forbids serving it at the latest instant a
    /// call passed in.
    pub(super) fn over_limit(&self, app: u32) -> bool {
        self.over_limit_at(app, self.clock)
    }

    /// Holds backlogged `app` out of B-WF2Q+ until its limit allows it.
    pub(super) fn park(&mut self, app: u32) {
        if !self.parked.contains(&app) {
            self.parked.push(app);
            self.stats.limited += 1;
        }
    }

    /// Returns to B-WF2Q+, as new arrivals (`S = max(V, F)`), the parked
    /// applications their limits allow at `now`.
    pub(super) fn unpark(&mut self, now: Nanos) {
        let mut i = 0;
        while i < self.parked.len() {
            let app = self.parked[i];
            if self.over_limit_at(app, now) {
                i += 1;
                continue;
            }
            self.parked.swap_remove(i);
            let is_active = self.active.is_some_and(|a| a.app == app);
            let st = &self.apps[app as usize];
            if st.queue.is_empty() || is_active || self.engine(app).contains(app) {
                continue;
            }
            let st = &self.apps[app as usize];
            let (budget, w, class) = (st.budget, st.cur_weight, st.class);
            self.engines[class].insert_arrival(app, budget, w);
            self.preempt_for_unparked(class);
        }
    }

    /// An application of `class` back from its limit ends the turn of an
    /// active application of its class or a lower one, idling or not:
    /// B-WF2Q+ then chooses between them. Without this a limited
    /// application would get one request per turn of the others (a whole
    /// budget, and an idling wait, each) instead of one per limit
    /// interval, and fall short of its limit. The preempted application
    /// is charged what it consumed and, if backlogged, re-inserted
    /// back-shifted, so it loses nothing of its share; one that was idling
    /// re-enters as a new arrival when its next request comes.
    fn preempt_for_unparked(&mut self, class: usize) {
        let Some(a) = self.active else { return };
        let st = &self.apps[a.app as usize];
        if st.class < class {
            return;
        }
        self.preempt_active();
    }

    /// The active application reached its limit: its turn ends, charged
    /// what it consumed, its budget kept; it is parked.
    pub(super) fn expire_limited(&mut self) {
        let Some(a) = self.active else { return };
        let budget = self.apps[a.app as usize].budget;
        self.deactivate(budget - a.remaining, budget);
    }

    /// The reservation phase: one request of the backlogged application,
    /// not the active one, whose reservation tag is the earliest and due
    /// at `now` (and whose limits allow it), or of a member of the reserved
    /// group whose tag is ([`super::group_rates`]).
    pub(super) fn reservation_phase(&mut self, now: Nanos) -> Option<Request> {
        let active = self.active.map(|a| a.app);
        let mut best: Option<(u128, u32)> = None;
        for &i in &self.reserved {
            let st = &self.apps[i as usize];
            if Some(i) == active || st.queue.is_empty() || self.over_limit_at(i, now) {
                continue;
            }
            if st.dm.due_at().is_some_and(|t| t <= now)
                && best.is_none_or(|(tag, _)| st.dm.r_tag() < tag)
            {
                best = Some((st.dm.r_tag(), i));
            }
        }
        let mut via_group = None;
        if !self.reserved_groups.is_empty() {
            if let Some((tag, m, g)) = self.group_reservation(now, active) {
                if best.is_none_or(|(t, _)| tag < t) {
                    best = Some((tag, m));
                    via_group = Some(g);
                }
            }
        }
        let (_, i) = best?;
        let (head, t_fifo) = (self.head, Some(self.cfg.t_fifo));
        let st = &mut self.apps[i as usize];
        let req = st.queue.pop_next_within(head, now, t_fifo, u32::MAX).ok()?;
        st.injected = st.injected.saturating_add(req.len);
        st.in_service += 1;
        self.in_flight += 1;
        let (class, empty) = (st.class, st.queue.is_empty());
        self.charge_tags(i, req.len, now);
        if let Some(g) = via_group {
            self.charge_group_share(i, g, req.len);
        }
        self.queued -= 1;
        self.head = req.end();
        self.note_dispatch(class, now);
        self.engines[class].add_service(i, req.len);
        self.stats.dispatched += 1;
        self.stats.reserved += 1;
        if empty {
            // Nothing left for B-WF2Q+ to give it a turn for.
            self.engines[class].remove(i);
            self.parked.retain(|&a| a != i);
        }
        Some(req)
    }

    /// The earliest instant after `now` at which a reservation falls due
    /// or a limit lets a parked application go.
    fn qos_wake(&self, now: Nanos) -> Option<Nanos> {
        let active = self.active.map(|a| a.app);
        let reserved = self.reserved.iter().filter_map(|&i| {
            let st = &self.apps[i as usize];
            if Some(i) == active || st.queue.is_empty() {
                return None;
            }
            let due = st.dm.due_at()?;
            Some(due.max(self.allowed_at(i).unwrap_or(0)))
        });
        let parked = self.parked.iter().filter_map(|&i| self.allowed_at(i));
        let groups = self.group_reservation_wake(now);
        reserved
            .chain(parked)
            .filter(|&t| t > now)
            .chain(groups)
            .min()
    }

    /// BFQ's answer `d`, brought forward to the next reservation or limit
    /// instant when it would leave the device idle longer.
    pub(super) fn with_qos_wake(&self, d: Dispatch, now: Nanos) -> Dispatch {
        if self.reserved.is_empty() && self.parked.is_empty() && self.reserved_groups.is_empty() {
            return d;
        }
        let Some(w) = self.qos_wake(now) else {
            return d;
        };
        match d {
            Dispatch::Serve(_) => d,
            Dispatch::Empty | Dispatch::Idle(None) => Dispatch::Idle(Some(w)),
            Dispatch::Idle(Some(t)) => Dispatch::Idle(Some(t.min(w))),
        }
    }
}
