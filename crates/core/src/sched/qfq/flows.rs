//! [`Qfq`]: the QFQ engine scheduling flows, behind the [`Scheduler`] trait.

use super::*;
use crate::error::{ConfigError, EnqueueError};
use crate::flow::{FlowConfig, FlowId};
use crate::sched::capacity::{Backlog, Capacity};
use crate::sched::flow_queues::FlowQueues;
use crate::sched::scheduler::{Dequeued, Scheduler};
use crate::Packet;
use alloc::vec::Vec;

/// Quick Fair Queueing over flows (see the module doc).
/// # Examples
///
/// ```
/// use fairway_core::{Capacity, FlowConfig, FlowId, Limits, Scheduler, Qfq};
///
/// // Flow ids 0..4, at most 64 packets queued.
/// let mut s: Qfq<u32> = Qfq::with_limits(Capacity::new(4, 64), Limits::DEFAULT);
/// s.add_flow(FlowId(0), FlowConfig::new(3, 1500)).unwrap(); // weight 3
/// s.add_flow(FlowId(1), FlowConfig::new(1, 1500)).unwrap(); // weight 1
/// for _ in 0..8 {
///     s.enqueue(FlowId(0), 1500).unwrap();
///     s.enqueue(FlowId(1), 1500).unwrap();
/// }
/// // The first 8 packets sent while both flows are backlogged.
/// let first: Vec<u32> = (0..8).filter_map(|_| s.dequeue()).map(|d| d.flow.0).collect();
/// let from_0 = first.iter().filter(|&&f| f == 0).count();
/// assert!((5..=7).contains(&from_0)); // a 3:1 share, within QFQ's approximation
/// assert_eq!(s.backlog().packets, 8);
/// ```
pub struct Qfq<P> {
    queues: FlowQueues<P>,
    core: QfqCore,
}

impl<P: Packet> Qfq<P> {
    /// QFQ with its own limits ([`QFQ_LIMITS`]).
    pub fn new(cap: Capacity) -> Self {
        Self::with_limits(cap, QFQ_LIMITS)
    }

    /// QFQ whose flow limits in effect are the intersection of `limits` and
    /// [`QFQ_LIMITS`] (QFQ's fixed-point arithmetic is proven only inside
    /// the latter, see the module doc). [`Self::limits`] returns them, a flow
    /// outside them gets a typed error naming the maximum, and
    /// [`Self::try_with_limits`] rejects `limits` beyond [`QFQ_LIMITS`]
    /// instead. ([`Limits::DEFAULT`] equals [`QFQ_LIMITS`].)
    pub fn with_limits(cap: Capacity, limits: Limits) -> Self {
        Self {
            queues: FlowQueues::new(cap, clamp_limits(limits)),
            core: QfqCore::new(cap.max_flows),
        }
    }

    /// QFQ with exactly `limits`, or, when a field exceeds [`QFQ_LIMITS`],
    /// the typed error a flow at that value would get
    /// ([`ConfigError::InvalidWeight`], [`ConfigError::InvalidMaxLen`],
    /// [`ConfigError::WeightSumOverflow`]) carrying QFQ's maximum.
    pub fn try_with_limits(cap: Capacity, limits: Limits) -> Result<Self, ConfigError> {
        limits.check_within(QFQ_LIMITS)?;
        Ok(Self::with_limits(cap, limits))
    }

    /// The flow limits in effect (see [`Self::with_limits`]).
    pub fn limits(&self) -> Limits {
        self.queues.limits()
    }

    /// `W`, the sum of the weights of the configured flows: flow k's share
    /// (the φ_k of every bound) is `w_k / W`.
    pub fn weight_denominator(&self) -> u64 {
        self.queues.weight_sum()
    }

    /// The group index `i` of a flow.
    pub fn group_of(&self, id: FlowId) -> Option<usize> {
        self.queues.config(id)?;
        Some(self.core.ent[id.index()].group as usize)
    }

    /// The slot size `σ_i` of a flow's group expressed in bytes of link
    /// service (`2^(MIN_SLOT_SHIFT+i) · W / 2^30`), the σ of the QFQ paper §5:
    /// T-WFI ≤ `(3σ_i + 2L)/R`, B-WFI ≤ `φ_k(3σ_i + 2L)`.
    pub fn slot_size_bytes(&self, id: FlowId) -> Option<f64> {
        let g = self.group_of(id)?;
        Some((1u64 << slot_shift(g)) as f64 * self.queues.weight_sum() as f64 / ONE_FP as f64)
    }

    /// The system virtual time (fixed point, [`QFQ_FRAC_BITS`]).
    pub fn virtual_time(&self) -> u64 {
        self.core.clock.now()
    }

    /// How many times a timestamp had to be shifted back to fit the bucket
    /// ring (0 in the configurations where the bounds are exact).
    pub fn slot_clamps(&self) -> u64 {
        self.core.clamps
    }

    /// Debug builds: from now on, run the general dequeue path on a copy of
    /// the state at every dequeue and panic if a fast path left a different
    /// state (a differential test of the fast paths; slow). No-op in
    /// release builds.
    #[doc(hidden)]
    pub fn verify_fast_paths(&mut self, on: bool) {
        #[cfg(debug_assertions)]
        {
            self.core.verify_fast_paths = on;
        }
        #[cfg(not(debug_assertions))]
        let _ = on;
    }

    /// Checks the invariants of the QFQ paper §4.1.3 and the bookkeeping: sets
    /// disjoint and equal to the backlogged groups, ER and EB sorted by F,
    /// IR ∪ IB sorted by S and F, eligibility (`S ≤ V` iff in ER ∪ EB),
    /// the GBT bound `S_i ≤ V + σ_i` for ineligible groups, exact
    /// Ready/Blocked membership, bucket contents, and that exactly the
    /// backlogged flows are scheduled.
    #[cfg(any(test, debug_assertions))]
    #[doc(hidden)]
    pub fn check_invariants(&self) -> Result<(), &'static str> {
        self.core.check()?;
        for i in 0..self.queues.max_flows() {
            if self.queues.is_backlogged(FlowId(i)) != self.core.is_queued(i as usize) {
                return Err("a flow is scheduled iff it is backlogged");
            }
        }
        Ok(())
    }

    fn activate(&mut self, i: usize, head_len: u32) {
        let s = self.core.start_time(i);
        let f = s.wrapping_add(u64::from(head_len) * u64::from(self.core.inv_w(i)));
        self.core.schedule(i, s, f);
    }

    fn set_params(&mut self, i: usize, cfg: FlowConfig, fresh: bool) {
        let inv_w = inv_weight(u64::from(cfg.weight));
        let g = group_index(u64::from(cfg.max_len) * u64::from(inv_w));
        self.core.configure(i, inv_w, g, fresh);
    }
}

impl<P: Packet> Scheduler<P> for Qfq<P> {
    fn name(&self) -> &'static str {
        "qfq"
    }

    fn add_flow(&mut self, id: FlowId, cfg: FlowConfig) -> Result<(), ConfigError> {
        self.queues.add_flow(id, cfg)?;
        self.set_params(id.index(), cfg, true);
        self.core.set_weight_sum(self.queues.weight_sum());
        Ok(())
    }

    fn remove_flow(&mut self, id: FlowId) -> Result<Vec<P>, ConfigError> {
        let pkts = self.queues.remove_flow(id)?;
        self.core.deactivate(id.index());
        self.core.set_weight_sum(self.queues.weight_sum());
        Ok(pkts)
    }

    fn reconfigure_flow(&mut self, id: FlowId, cfg: FlowConfig) -> Result<(), ConfigError> {
        let old = self.queues.reconfigure(id, cfg)?;
        self.core.set_weight_sum(self.queues.weight_sum());
        if old == cfg {
            return Ok(());
        }
        let i = id.index();
        self.core.deactivate(i);
        self.core.forget_future_finish(i);
        self.set_params(i, cfg, false);
        if let Some(len) = self.queues.head_len(id) {
            self.activate(i, len);
        }
        Ok(())
    }

    // Forced inline: called once per packet from a caller's loop (the
    // arbiter's scan), where a call's register saves would cost about as
    // much as the enqueue's own work.
    #[inline(always)]
    fn enqueue(&mut self, id: FlowId, packet: P) -> Result<(), EnqueueError<P>> {
        let len = packet.len();
        if self.queues.push(id, packet)? {
            self.activate(id.index(), len);
        }
        Ok(())
    }

    // Forced inline, as DRR's: called once per packet from a caller's loop
    // (the arbiter's), where the call's register saves and the returned
    // struct would be a large share of a decision.
    #[inline(always)]
    fn dequeue(&mut self) -> Option<Dequeued<P>> {
        let e = self.core.peek()?;
        let flow = FlowId(e as u32);
        let (packet, next_len) = self.queues.pop_with_next_len(flow)?;
        let next = next_len.map(|l| u64::from(l) * u64::from(self.core.inv_w(e)));
        self.core.served_head(e, packet.len(), next);
        Some(Dequeued { flow, packet })
    }

    fn warp_idle_clock(&mut self, delta: u64) -> bool {
        if !self.is_empty() {
            return false;
        }
        self.core.warp_idle_clock(delta);
        true
    }

    fn peek(&mut self) -> Option<(FlowId, &P)> {
        let e = self.core.peek()?;
        let flow = FlowId(e as u32);
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

// The differential check of the dequeue fast paths is debug-only.
#[cfg(all(test, debug_assertions))]
mod tests {
    use super::*;

    /// The differential check can fail: with the same-bucket rotation of
    /// a dequeue skipped on purpose (small packets of equal-weight flows
    /// take it at almost every dequeue), it panics.
    #[test]
    #[should_panic(expected = "a served_head fast path diverged from the general path")]
    fn differential_check_catches_a_skipped_rotation() {
        let mut s = Qfq::<u32>::new(Capacity::new(4, 64));
        s.verify_fast_paths(true);
        s.core.broken = Broken::Rotation;
        for f in 0..4 {
            s.add_flow(FlowId(f), FlowConfig::new(1, 1500)).unwrap();
            for _ in 0..4 {
                s.enqueue(FlowId(f), 60).unwrap();
            }
        }
        while s.dequeue().is_some() {}
    }
}
