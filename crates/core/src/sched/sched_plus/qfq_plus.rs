//! QFQ+: the SCHED+ scheme over QFQ (the QFQ+ paper §3), and [`QfqAggregates`],
//! the QFQ engine scheduling aggregates that it runs.

use super::{AggregateScheduler, SchedPlus};
use crate::flow::Limits;
use crate::sched::qfq::{
    group_index, inv_weight, QfqCore, DELTA_S_MINUS_FACTOR, DELTA_S_PLUS_FACTOR, QFQ_LIMITS,
};

/// QFQ+: SCHED+ over QFQ.
/// # Examples
///
/// ```
/// use fairway_core::{AggregateSize, Capacity, FlowConfig, FlowId, Limits, Scheduler, QfqPlus};
///
/// // Flow ids 0..4, at most 64 packets queued.
/// let mut s: QfqPlus<u32> = QfqPlus::with_options(
///     Capacity::new(4, 64),
///     Limits::DEFAULT,
///     AggregateSize::new(8).unwrap(), // M, in 1..=64
/// );
/// s.add_flow(FlowId(0), FlowConfig::new(3, 1500)).unwrap(); // weight 3
/// s.add_flow(FlowId(1), FlowConfig::new(1, 1500)).unwrap(); // weight 1
/// for _ in 0..8 {
///     s.enqueue(FlowId(0), 1500).unwrap();
///     s.enqueue(FlowId(1), 1500).unwrap();
/// }
/// // The first 8 packets sent while both flows are backlogged.
/// let first: Vec<u32> = (0..8).filter_map(|_| s.dequeue()).map(|d| d.flow.0).collect();
/// let from_0 = first.iter().filter(|&&f| f == 0).count();
/// assert!((4..=8).contains(&from_0)); // flows of different weights: separate aggregates
/// assert_eq!(s.backlog().packets, 8);
/// ```
pub type QfqPlus<P> = SchedPlus<P, QfqAggregates>;

/// QFQ scheduling aggregates of flows: the SCHED of QFQ+
/// ([`crate::sched::sched_plus::QfqPlus`]). An aggregate of `m` flows of weight `w`
/// and max length `L` is an entity of weight `m·w` whose "packet" is its
/// budget `m·L`; its group is that of one of its flows, computed with
/// enough slack (`L·M` extra units) that `m·L·⌈2^30/(m·w)⌉ ≤ σ_i` for every
/// `m ≤ M`. It keeps no budget of its own: SCHED+ passes `m·L` with every
/// call that needs it, and its virtual length is one multiplication by the
/// entity's `inv_w`, read with the entity's timestamps.
pub struct QfqAggregates {
    core: QfqCore,
    max_members: u32,
}

impl AggregateScheduler for QfqAggregates {
    const NAME: &'static str = "qfq+";
    const DELTA_S_MINUS_FACTOR: u32 = DELTA_S_MINUS_FACTOR;
    const DELTA_S_PLUS_FACTOR: u32 = DELTA_S_PLUS_FACTOR;

    fn new(max_aggregates: u32, max_members: u32) -> Self {
        Self {
            core: QfqCore::new(max_aggregates),
            max_members,
        }
    }

    fn limits() -> Limits {
        QFQ_LIMITS
    }

    fn init_aggregate(&mut self, a: u32, weight: u32, max_len: u32) {
        let per_flow = u64::from(max_len) * u64::from(inv_weight(u64::from(weight)));
        let g = group_index(per_flow + u64::from(max_len) * u64::from(self.max_members));
        self.core.configure(a as usize, 0, g, true);
    }

    fn set_members(&mut self, a: u32, m: u32, weight: u32) {
        let inv_w = inv_weight(u64::from(weight) * u64::from(m.max(1)));
        self.core.set_inv_w(a as usize, inv_w);
    }

    fn set_weight_sum(&mut self, w: u64) {
        self.core.set_weight_sum(w);
    }

    fn activate(&mut self, a: u32, full: u32) {
        let e = a as usize;
        let s = self.core.start_time(e);
        let f = s.wrapping_add(u64::from(full) * u64::from(self.core.inv_w(e)));
        self.core.schedule(e, s, f);
    }

    fn deactivate(&mut self, a: u32) {
        self.core.deactivate(a as usize);
    }

    fn select(&mut self) -> Option<u32> {
        self.core.select().map(|e| e as u32)
    }

    fn release(&mut self, a: u32, service: u64, full: u32, backlogged: bool) {
        let e = a as usize;
        let Some((service_vt, requeue)) = self.charges(e, service, full, backlogged) else {
            return;
        };
        self.core.release(e, service_vt, requeue, 0);
    }

    #[inline(always)]
    fn end_turn(
        &mut self,
        a: u32,
        service: u64,
        full: u32,
        uncharged: u32,
        backlogged: bool,
    ) -> Option<u32> {
        let e = a as usize;
        let (service_vt, requeue) = self.charges(e, service, full, backlogged)?;
        // `release` ends with the eligibility update `select` would do:
        // the next aggregate is the one `peek` returns.
        self.core
            .end_turn(e, service_vt, requeue, uncharged)
            .map(|e| e as u32)
    }

    // Inlined into SCHED+'s (out-of-line) turn switch: one frame per turn.
    #[inline(always)]
    fn try_end_turn(
        &mut self,
        a: u32,
        service: u64,
        full: u32,
        uncharged: u32,
        backlogged: bool,
    ) -> Option<u32> {
        let e = a as usize;
        let (service_vt, requeue) = self.charges(e, service, full, backlogged)?;
        self.core
            .try_end_turn(e, service_vt, requeue, uncharged)
            .map(|e| e as u32)
    }

    #[inline]
    fn charge(&mut self, len: u32) {
        self.core.charge(len);
    }

    fn slot_clamps(&self) -> u64 {
        self.core.clamps()
    }

    fn verify_fast_paths(&mut self, on: bool) {
        #[cfg(debug_assertions)]
        self.core.set_verify_fast_paths(on);
        #[cfg(not(debug_assertions))]
        let _ = on;
    }

    fn warp_idle_clock(&mut self, delta: u64) {
        self.core.warp_idle_clock(delta);
    }

    #[cfg(any(test, debug_assertions))]
    fn check(&self) -> Result<(), &'static str> {
        self.core.check()
    }

    #[cfg(any(test, debug_assertions))]
    fn is_scheduled(&self, a: u32) -> Option<bool> {
        self.core.inv_w_checked(a as usize)?;
        Some(self.core.is_queued(a as usize))
    }
}

impl QfqAggregates {
    /// The virtual service of a turn of aggregate `e` (`None` if `e` is not
    /// an aggregate): `min(service, m·L)·inv_w` (a turn may have used more
    /// than the budget if the aggregate shrank meanwhile), and, if it stays
    /// `backlogged`, the virtual length `m·L·inv_w` of its next turn.
    #[inline(always)]
    fn charges(
        &self,
        e: usize,
        service: u64,
        full: u32,
        backlogged: bool,
    ) -> Option<(u64, Option<u64>)> {
        let inv_w = u64::from(self.core.inv_w_checked(e)?);
        let full = u64::from(full);
        let service_vt = service.min(full) * inv_w;
        Some((service_vt, backlogged.then_some(full * inv_w)))
    }
}

// Both tests need the debug-only differential check of the turn end.
#[cfg(all(test, debug_assertions))]
mod tests {
    use super::*;
    use crate::flow::{FlowConfig, FlowId};
    use crate::sched::capacity::Capacity;
    use crate::sched::qfq::Broken;
    use crate::sched::sched_plus::AggregateSize;
    use crate::sched::scheduler::Scheduler;

    /// Flows `(weight, max_len)` kept backlogged with packets of
    /// pseudo-random lengths `≤ max_len`, some flows emptying now and then
    /// (turns that end below budget), dequeued in bursts, with the
    /// differential check of the turn-end fast paths on (debug builds) and
    /// the invariants checked as it goes, and the engine's fast path
    /// `broken` on purpose. Returns the fast-path hit counts.
    fn run_checked(flows: &[(u32, u32)], m: u32, broken: Broken) -> [u64; 4] {
        let n = flows.len() as u32;
        let mut s: QfqPlus<u32> = QfqPlus::with_options(
            Capacity::new(n, 64 * n),
            Limits::DEFAULT,
            AggregateSize::new(m).unwrap(),
        );
        for (i, &(w, l)) in flows.iter().enumerate() {
            s.add_flow(FlowId(i as u32), FlowConfig::new(w, l)).unwrap();
        }
        s.verify_fast_paths(true);
        s.aggregates_mut().core.broken = broken;
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = move |k: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % k
        };
        for round in 0..400u32 {
            for (i, &(_, l)) in flows.iter().enumerate() {
                let id = FlowId(i as u32);
                // Every 5th round, a third of the flows get nothing.
                let k = if round % 5 == 0 && i % 3 == 0 {
                    0
                } else {
                    rnd(3)
                };
                for _ in 0..k {
                    if s.flow_backlog(id).map_or(0, |b| b.packets) < 8 {
                        let len = 1 + rnd(u64::from(l)) as u32;
                        s.enqueue(id, len).unwrap();
                    }
                }
            }
            for _ in 0..=rnd(2 * u64::from(n)) {
                s.dequeue();
            }
            assert_eq!(s.check_invariants(), Ok(()));
        }
        while s.dequeue().is_some() {}
        assert_eq!(s.check_invariants(), Ok(()));
        s.aggregates().core.fast_path_hits
    }

    /// The turn-end fast paths of the QFQ engine (aggregate re-filed in its
    /// front bucket, alone in its group, re-filed further on in a shared
    /// group, and the successor path: re-filed anywhere while its successor
    /// keeps the front bucket) leave exactly the state its general path
    /// leaves and select the same next aggregate, and the workloads take
    /// each of them.
    #[test]
    #[cfg(debug_assertions)]
    fn turn_end_fast_paths_match_the_general_path() {
        let mut hits = [0; 4];
        let sets: [(&[(u32, u32)], u32); 4] = [
            // Many aggregates of one group.
            (&[(1, 1500); 64], 8),
            // One aggregate alone in its group.
            (&[(1, 1500); 4], 8),
            // Several groups, small packets, small aggregates.
            (
                &[(1, 64), (3, 64), (1, 64), (7, 1500), (3, 64), (1, 9000)],
                2,
            ),
            (&[(2, 1500), (2, 1500), (5, 300), (5, 300), (1, 1500)], 1),
        ];
        for (flows, m) in sets {
            let h = run_checked(flows, m, Broken::Nothing);
            for (a, b) in hits.iter_mut().zip(h) {
                *a += b;
            }
        }
        assert!(
            hits.iter().all(|&h| h > 0),
            "fast paths not all taken: {hits:?}"
        );
    }

    /// The differential check can fail: with the successor path leaving a
    /// stale link on purpose, it panics.
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "a release fast path diverged from the general path")]
    fn differential_check_catches_a_stale_link() {
        run_checked(&[(1, 1500); 64], 8, Broken::SuccessorLink);
    }

    /// The differential check can fail: with the successor path returning
    /// the wrong next aggregate on purpose (its state is right), it panics.
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "a release fast path diverged from the general path")]
    fn differential_check_catches_a_wrong_successor() {
        run_checked(&[(1, 1500); 64], 8, Broken::Successor);
    }
}
