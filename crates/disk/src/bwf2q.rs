//! B-WF2Q+: WF2Q+ over *budgets* (the BFQ thesis §2.1.3–2.1.4, Fig. 4).
//!
//! B-WF2Q+ schedules applications, not requests: each queued application
//! carries the virtual start S_i and finish F_i of its pending *batch* (the
//! requests it will be served with its budget B_i), and the next active
//! application is the *eligible* one (S_i ≤ V) with the smallest F_i. It
//! differs from packet WF2Q+ in three ways, which is why this engine lives
//! here instead of reusing `fairway_core::Wf2qPlus`:
//!
//! 1. **Actual service ≠ timestamped length.** A batch is stamped with its
//!    budget, `F_i = S_i + B_i/φ_i`, but the application may leave the disk
//!    having consumed less (its backlog emptied, or it exhausted the budget
//!    early). `update_vfintime` then rewrites `F_i = S_i + served/φ_i`
//!    ([`charge`](BudgetWf2q::charge)). A packet scheduler charges exactly
//!    the length it stamped and exposes no way to re-charge a flow, so
//!    `Wf2qPlus` cannot express this.
//! 2. **Two insertion rules.** An application that becomes backlogged
//!    through a new (asynchronous) arrival starts at `S_i = max(V, F_i)`
//!    ([`insert_arrival`](BudgetWf2q::insert_arrival)); the *active*
//!    application re-inserted after deactivation starts at `S_i = F_i`
//!    ([`insert_backshifted`](BudgetWf2q::insert_backshifted)), i.e. as if
//!    its next request had arrived when its previous one completed in the
//!    ideal system: the backward shift that conceals *delayed arrivals*.
//! 3. **V advances per dispatched request**, not per batch:
//!    `V ← V + L/Σw` on every dispatch ([`add_service`](BudgetWf2q::add_service)),
//!    and is pushed up to `min S_i` when nothing is eligible
//!    ([`next_application`](BudgetWf2q::next_application)), which keeps B-WF2Q+ work-conserving.
//!
//! What is reused from `fairway-core`: the wrap-safe fixed-point virtual
//! time and wrap-counting clock (`VirtualClock`, `vt_len`: one sector at
//! weight 1 is 2^24 units) and the indexed 4-ary heap (`IndexedHeap`),
//! giving O(log N) per insertion and extraction.
//!
//! Arithmetic: with integer weights w_i and W = Σ w over the admitted
//! applications, φ_i = w_i/W. Scaling every virtual time by 1/W turns
//! `F = S + B/φ_i` into `F = S + B/w_i` and `V += L` into `V += L/W`, all in
//! units of 2^-24 sector. With B ≤ 2^24 sectors and w ≥ 1 a batch spans at
//! most 2^48 units, far inside the 2^63 window of wrap-safe comparisons.

use fairway_core::{vt_ge, vt_len, Era, IndexedHeap, VirtualClock, VirtualTime};

#[derive(Clone, Copy, Default, Debug)]
struct Stamps {
    start: VirtualTime,
    finish: VirtualTime,
    /// Era of `finish` when it was last set (see `fairway_core::VirtualClock`).
    era: Era,
}

/// The budget timestamp engine (see the module doc).
pub struct BudgetWf2q {
    clock: VirtualClock,
    eligible: IndexedHeap,
    pending: IndexedHeap,
    stamps: Vec<Stamps>,
    weight_sum: u64,
}

impl BudgetWf2q {
    /// An engine for application ids `0..max_apps`.
    pub fn new(max_apps: u32) -> Self {
        Self {
            clock: VirtualClock::default(),
            eligible: IndexedHeap::new(max_apps),
            pending: IndexedHeap::new(max_apps),
            stamps: vec![Stamps::default(); max_apps as usize],
            weight_sum: 1,
        }
    }

    /// Sets W = Σ w (at least 1).
    pub fn set_weight_sum(&mut self, w: u64) {
        self.weight_sum = w.max(1);
    }

    /// The system virtual time V.
    pub fn virtual_time(&self) -> VirtualTime {
        self.clock.now()
    }

    /// (S_i, F_i).
    pub fn stamps(&self, app: u32) -> (VirtualTime, VirtualTime) {
        let s = self.stamps[app as usize];
        (s.start, s.finish)
    }

    /// Resets an application that is (re)admitted: S = F = V.
    pub fn reset(&mut self, app: u32) {
        let now = self.clock.now();
        self.stamps[app as usize] = Stamps {
            start: now,
            finish: now,
            era: self.clock.era(now),
        };
    }

    /// Number of queued applications.
    pub fn len(&self) -> usize {
        self.eligible.len() + self.pending.len()
    }

    /// No queued application.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `app` is queued.
    pub fn contains(&self, app: u32) -> bool {
        self.eligible.contains(app) || self.pending.contains(app)
    }

    fn file(&mut self, app: u32, start: VirtualTime, budget: u32, weight: u32) {
        let t = &mut self.stamps[app as usize];
        t.start = start;
        t.finish = start.wrapping_add(vt_len(budget, u64::from(weight)));
        t.era = self.clock.era(t.finish);
        if vt_ge(self.clock.now(), start) {
            self.eligible.push(t.finish, app);
        } else {
            self.pending.push(start, app);
        }
    }

    /// Fig. 4 lines 6–7, 13–15: a newly backlogged application (an
    /// asynchronous arrival) with budget `budget`: `S = max(V, F)`.
    pub fn insert_arrival(&mut self, app: u32, budget: u32, weight: u32) {
        let t = self.stamps[app as usize];
        let start = self.clock.restart(t.finish, t.era);
        self.file(app, start, budget, weight);
    }

    /// Fig. 4 lines 8–15: the active application, deactivated with backlog,
    /// re-inserted with its next budget: `S = F` (back-shifted arrival).
    pub fn insert_backshifted(&mut self, app: u32, budget: u32, weight: u32) {
        let start = self.stamps[app as usize].finish;
        self.file(app, start, budget, weight);
    }

    /// Fig. 4 `update_vfintime`: `F = S + served/w` for the application
    /// just deactivated (not queued).
    pub fn charge(&mut self, app: u32, served: u32, weight: u32) {
        let t = &mut self.stamps[app as usize];
        t.finish = t.start.wrapping_add(vt_len(served, u64::from(weight)));
        t.era = self.clock.era(t.finish);
    }

    /// Fig. 4 `inc_tot_service`: `V += sectors / W`.
    pub fn add_service(&mut self, sectors: u32) {
        self.clock.advance(vt_len(sectors, self.weight_sum));
    }

    /// Fig. 4 `get_next_application`: pushes V up to `min S` if nothing is
    /// eligible, then removes and returns the eligible application with the
    /// smallest F (ties: lowest id).
    pub fn next_application(&mut self) -> Option<u32> {
        if self.eligible.is_empty() {
            let (s, _) = self.pending.peek()?;
            self.clock.advance_to(s);
        }
        while let Some((s, a)) = self.pending.peek() {
            if !vt_ge(self.clock.now(), s) {
                break;
            }
            self.pending.pop();
            self.eligible.push(self.stamps[a as usize].finish, a);
        }
        self.eligible.pop().map(|(_, a)| a)
    }

    /// The application [`next_application`](Self::next_application) would
    /// return, left queued and V left alone (for I/O injection, which
    /// serves it a request ahead of its turn).
    pub fn peek_next(&mut self) -> Option<u32> {
        while let Some((s, a)) = self.pending.peek() {
            if !vt_ge(self.clock.now(), s) {
                break;
            }
            self.pending.pop();
            self.eligible.push(self.stamps[a as usize].finish, a);
        }
        self.eligible
            .peek()
            .or_else(|| self.pending.peek())
            .map(|(_, a)| a)
    }

    /// The eligible application (`S <= V`) with the smallest F, left
    /// queued and V left alone; `None` if none is eligible at the current V.
    pub fn peek_eligible(&mut self) -> Option<u32> {
        self.peek_next()?;
        self.eligible.peek().map(|(_, a)| a)
    }

    /// Removes `app` if queued.
    pub fn remove(&mut self, app: u32) {
        self.eligible.remove(app);
        self.pending.remove(app);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backshift_keeps_start_at_previous_finish_and_arrival_takes_max_with_v() {
        let mut b = BudgetWf2q::new(4);
        b.set_weight_sum(2);
        b.reset(0);
        b.reset(1);
        b.insert_arrival(0, 100, 1);
        b.insert_arrival(1, 100, 1);
        assert_eq!(b.next_application(), Some(0));
        for _ in 0..10 {
            b.add_service(10);
        }
        b.charge(0, 100, 1);
        // V = 100/2 = 50 sectors, F_0 = 100.
        let unit = 1u64 << 24;
        assert_eq!(b.virtual_time(), 50 * unit);
        b.insert_backshifted(0, 100, 1);
        assert_eq!(b.stamps(0), (100 * unit, 200 * unit));
        assert_eq!(b.next_application(), Some(1));
        b.charge(1, 30, 1);
        // App 1 went idle with F = 30 < V: a new arrival starts at V.
        b.insert_arrival(1, 10, 1);
        assert_eq!(b.stamps(1).0, 50 * unit);
        // Nothing eligible but app 1 (S = 50 = V) with F = 60 < 200.
        assert_eq!(b.next_application(), Some(1));
        // Only app 0 is left, not eligible (S = 100 > V = 50): V jumps.
        assert_eq!(b.next_application(), Some(0));
        assert_eq!(b.virtual_time(), 100 * unit);
    }
}
