//! WF2Q++: the SCHED+ scheme over exact WF2Q+ (the QFQ+ paper App. A.3), and
//! [`Wf2qAggregates`], the exact WF2Q+ aggregate scheduler it runs.

use super::{AggregateScheduler, SchedPlus};
use crate::flow::Limits;
use crate::sched::indexed_heap::IndexedHeap;
use crate::sched::qfq::clamp_limits;
use crate::sched::vtime::{vt_ge, vt_len, Era, VirtualClock, VirtualTime};
use crate::sched::wf2q_plus;
use alloc::vec::Vec;

/// WF2Q++: SCHED+ over exact WF2Q+.
/// # Examples
///
/// ```
/// use fairway_core::{AggregateSize, Capacity, FlowConfig, FlowId, Limits, Scheduler, Wf2qPlusPlus};
///
/// // Flow ids 0..4, at most 64 packets queued.
/// let mut s: Wf2qPlusPlus<u32> = Wf2qPlusPlus::with_options(
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
pub type Wf2qPlusPlus<P> = SchedPlus<P, Wf2qAggregates>;

/// Exact WF2Q+ over aggregates: the SCHED of WF2Q++. Same policy and
/// arithmetic as [`crate::Wf2qPlus`] (virtual times of [`crate::sched::vtime`],
/// `φ = weight / W`), with two indexed heaps (eligible by F, pending by S).
pub struct Wf2qAggregates {
    start: Vec<VirtualTime>,
    finish: Vec<VirtualTime>,
    /// The era of `finish` when the aggregate last went idle (see
    /// [`crate::sched::vtime`]): its restart `max(V, F)` is exact after any idle time.
    idle_era: Vec<Era>,
    weight: Vec<u64>,
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
    const DELTA_S_MINUS_FACTOR: u32 = wf2q_plus::DELTA_S_MINUS_FACTOR;
    const DELTA_S_PLUS_FACTOR: u32 = wf2q_plus::DELTA_S_PLUS_FACTOR;

    fn new(max_aggregates: u32, _max_members: u32) -> Self {
        let n = max_aggregates as usize;
        Self {
            start: alloc::vec![0; n],
            finish: alloc::vec![0; n],
            idle_era: alloc::vec![0; n],
            weight: alloc::vec![1; n],
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

    fn set_members(&mut self, a: u32, m: u32, weight: u32) {
        self.weight[a as usize] = u64::from(m.max(1)) * u64::from(weight);
    }

    fn set_weight_sum(&mut self, w: u64) {
        self.weight_sum = w.max(1);
    }

    fn activate(&mut self, a: u32, full: u32) {
        let i = a as usize;
        let s = self.clock.restart(self.finish[i], self.idle_era[i]);
        self.start[i] = s;
        self.finish[i] = s.wrapping_add(self.vlen(u64::from(full), i));
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

    fn release(&mut self, a: u32, service: u64, full: u32, backlogged: bool) {
        let i = a as usize;
        let service = service.min(u64::from(full));
        self.finish[i] = self.start[i].wrapping_add(self.vlen(service, i));
        if backlogged {
            self.start[i] = self.finish[i];
            self.finish[i] = self.start[i].wrapping_add(self.vlen(u64::from(full), i));
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

    #[cfg(any(test, debug_assertions))]
    fn is_scheduled(&self, a: u32) -> Option<bool> {
        Some(self.eligible.contains(a) || self.pending.contains(a))
    }
}
