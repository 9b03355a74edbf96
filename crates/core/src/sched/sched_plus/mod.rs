//! The SCHED+ modification scheme (the QFQ+ paper §2), written once over any
//! aggregate-level fair-queueing scheduler, and its instances QFQ+ (the QFQ+ paper
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
//! (the QFQ+ paper §3.1) sets `M = min(8, Q_pkts)` with `Q_pkts` one plus the
//! length in packets of the device transmit queue; the core does not know
//! the device, so the default is 8 and callers that know the transmit queue
//! should pass `min(8, tx_queue_len + 1)`.
//!
//! # Guarantees
//!
//! The QFQ+ paper's Theorem 1 / Eq. (3) (T-WFI) and Theorem 2 / Eq. (7) (B-WFI) with
//! `φ^k = w / W` (W = [`SchedPlus::weight_denominator`]), `m^k` =
//! [`SchedPlus::aggregate_size`] and the SCHED timestamp-error terms:
//! for QFQ+ `ΔS⁻ = 2L^k/φ^k`, `ΔS⁺ = 4L^k/φ^k` (Eq. 22); for WF2Q++
//! `ΔS⁻ = 0`, `ΔS⁺ = L^k/φ^k` (the QFQ+ paper App. A.3).

mod aggregate_size;
mod nonfull;
mod qfq_plus;
mod scheme;
mod wf2q_plus_plus;

pub use aggregate_size::AggregateSize;
pub use qfq_plus::{QfqAggregates, QfqPlus};
pub use scheme::SchedPlus;
pub use wf2q_plus_plus::{Wf2qAggregates, Wf2qPlusPlus};

pub use crate::sched::qfq::MAX_AGGREGATE_FLOWS;

use crate::flow::Limits;

/// Default aggregate size (the Linux cap, the QFQ+ paper §3.1).
pub const DEFAULT_M: u32 = 8;

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

    /// SCHED's timestamp-error term `ΔS⁻` (the QFQ+ paper App. A.3) in units of
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

    /// Aggregate `a` now has `m ≥ 1` flows: weight `m·weight`. Allowed in
    /// any state. Its budget `m·max_len` is SCHED+'s: it is passed to the
    /// calls that need it (`full` below), so SCHED keeps no copy.
    fn set_members(&mut self, a: u32, m: u32, weight: u32);

    /// Sum of the weights of all configured flows.
    fn set_weight_sum(&mut self, w: u64);

    /// Idle aggregate `a`, of full budget `full = m·L` bytes, became
    /// backlogged: timestamp and schedule it.
    fn activate(&mut self, a: u32, full: u32);

    /// Removes scheduled aggregate `a` (its flows left or emptied).
    fn deactivate(&mut self, a: u32);

    /// Picks the next aggregate to serve and removes it from the schedule.
    fn select(&mut self) -> Option<u32>;

    /// The in-service aggregate, of full budget `full = m·L` bytes, stops
    /// being served after receiving `service` bytes (charged at most
    /// `full`: a turn may exceed the budget of an aggregate that shrank
    /// meanwhile); it is rescheduled (`S = F`) if still `backlogged`.
    fn release(&mut self, a: u32, service: u64, full: u32, backlogged: bool);

    /// The end of a turn as one call: [`charge`](Self::charge) `uncharged`
    /// bytes, [`release`](Self::release) `a`, [`select`](Self::select).
    fn end_turn(
        &mut self,
        a: u32,
        service: u64,
        full: u32,
        uncharged: u32,
        backlogged: bool,
    ) -> Option<u32> {
        self.charge(uncharged);
        self.release(a, service, full, backlogged);
        self.select()
    }

    /// [`end_turn`](Self::end_turn)'s fast path, if the scheduler has one
    /// and it applies: `Some(next)`, the turn ended and `next` is selected;
    /// `None`, nothing was done (SCHED+ then calls `end_turn`, out of line).
    /// Same arguments and result as `end_turn`, whose common case this is.
    #[inline(always)]
    fn try_end_turn(
        &mut self,
        a: u32,
        service: u64,
        full: u32,
        uncharged: u32,
        backlogged: bool,
    ) -> Option<u32> {
        let _ = (a, service, full, uncharged, backlogged);
        None
    }

    /// `len` bytes of the in-service aggregate were dequeued since the last
    /// call (SCHED+ batches the packets of a turn: it charges before every
    /// other call, not per packet).
    fn charge(&mut self, len: u32);

    /// Timestamp back-shifts forced by a finite data structure (see
    /// [`crate::sched::qfq`]); 0 for exact schedulers.
    fn slot_clamps(&self) -> u64 {
        0
    }

    /// Test hook behind [`Scheduler::warp_idle_clock`]: advances the virtual
    /// time by `delta` units while no aggregate is scheduled or in service.
    #[doc(hidden)]
    fn warp_idle_clock(&mut self, delta: u64);

    /// Debug builds: from now on, check the scheduler's fast paths against
    /// its general paths at every call (see [`crate::Qfq::verify_fast_paths`]).
    /// No-op by default and in release builds.
    #[doc(hidden)]
    fn verify_fast_paths(&mut self, on: bool) {
        let _ = on;
    }

    /// Debug invariant checker.
    #[cfg(any(test, debug_assertions))]
    fn check(&self) -> Result<(), &'static str> {
        Ok(())
    }

    /// Debug builds: whether aggregate `a`, not in service, is scheduled
    /// (`None` if the scheduler does not say), for SCHED+'s invariant
    /// check.
    #[cfg(any(test, debug_assertions))]
    fn is_scheduled(&self, a: u32) -> Option<bool> {
        let _ = a;
        None
    }
}
