//! The controller of the test environment of the QFQ paper §7 and the QFQ+ paper §8, the
//! one both harnesses run: the guarantee experiment's link simulation
//! ([`crate::link_sim`], through [`Controller`]) and the cost harness's
//! timed loop ([`crate::cost::driver`], through [`TimedController`]).
//!
//! It alternates an *enqueue phase*, generating packets until the total
//! backlog reaches `high` ([`TrafficController::fill`]), and a *dequeue
//! phase*, run by its user, until the backlog falls to `low`; the user
//! reports every dequeued packet back ([`TrafficController::on_dequeue`],
//! [`TrafficController::dequeued`]). Optionally (the QFQ+ paper §8.3) it switches
//! to the enqueue phase with probability `switch_prob` every time a flow
//! queue gets empty. A flow never holds more than `per_flow_max` packets.
//!
//! The enqueue phase picks flows as the pattern's [`FlowPick`] says:
//! * `Least`: one packet at a time to the flow with the smallest backlog
//!   below the cap, in O(1) ([`super::levels`]);
//! * `Cyclic`: flows 0, 1, …, N−1, 0, …, which *is* the least-backlogged
//!   fill when every phase starts empty, with no per-packet bookkeeping;
//! * `Bursty`: bursts of a random size in `1..=16·w` to a random non-full
//!   flow of weight `w` ([`super::draws`]).
//!
//! # One loop, two users, no cost for the timed one
//!
//! The fill loops are written once and are generic over what differs
//! between the users, resolved at compile time and inlined:
//! * the per-packet hook, `emit(flow, draws) -> bool`: the link simulation
//!   records and enqueues the packet, the cost loop takes a buffer from its
//!   free list and pushes it. The loops call it from `#[inline(always)]`
//!   code with a concrete closure type, so no per-packet call or branch on
//!   the hook remains;
//! * the random source ([`Draws`]): `StdRng` for the guarantee experiment
//!   (its seeded figures stay as they were), one SplitMix64 step per burst
//!   for the cost loop;
//! * the [`Budget`]: a packet count for the simulation, [`Unlimited`] for
//!   the cost loop (which counts pairs per cycle);
//! * `TIMED`: the cost loop's phases always start empty (it drains to
//!   `low = 0` for the cyclic and bursty picks and never switches at
//!   random), so the bursty bookkeeping is reset once per phase instead of
//!   being updated on every dequeue, and ties between equally backlogged
//!   flows go first come first served (dummynet's controller). The
//!   simulation (`TIMED = false`) tracks every dequeue and breaks ties in
//!   the swap-remove order its published figures were computed with.
//!
//! Per-burst decisions (which flow, how many packets, the room left under
//! the cap and under `high`) are taken before the per-packet loop, which is
//! only `emit` and a count.

pub use super::draws::{Draws, SplitMix64};
use super::levels::LevelLists;
pub use super::levels::LEVELS;
pub use super::pattern::{FlowPick, Pattern, Thresholds};
use rand::rngs::StdRng;
use rand::SeedableRng;
use serde::Serialize;
use std::fmt;

/// Controller parameters of the guarantee experiment.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ControllerConfig {
    /// Enqueue-phase pattern.
    pub pattern: Pattern,
    /// Largest backlog of one flow, in packets (30 in the QFQ+ paper §8);
    /// `1..LEVELS`.
    pub per_flow_max: u32,
    /// The enqueue phase stops at this total backlog (packets).
    pub high: u64,
    /// The dequeue phase stops at this total backlog (packets).
    pub low: u64,
    /// Probability of switching to the enqueue phase when a flow empties.
    pub switch_prob: f64,
}

impl ControllerConfig {
    /// The paper's configuration for `n` flows: the pattern's thresholds
    /// (for `smooth` and `bursty` flows oscillate between 0 and 30 packets),
    /// random switch with probability 0.5 (the QFQ+ paper §8.3).
    pub fn paper(pattern: Pattern, n: usize) -> Self {
        let t = pattern.thresholds(n.min(u32::MAX as usize) as u32);
        Self {
            pattern,
            per_flow_max: t.per_flow_cap,
            high: t.high,
            low: t.low,
            switch_prob: 0.5,
        }
    }
}

/// A controller parameter outside its range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ControllerError {
    /// `per_flow_max` (the per-flow cap) is not in `1..LEVELS`.
    PerFlowMax(u32),
    /// The timed mode's cyclic and bursty picks need every phase to start
    /// empty, so `low` must be 0 for them.
    TimedLow {
        /// The pick.
        pick: FlowPick,
        /// The `low` given.
        low: u64,
    },
    /// `switch_prob` is not a probability (in `[0, 1]`).
    SwitchProb(String),
    /// A flow of weight 0.
    ZeroWeight(usize),
}

impl fmt::Display for ControllerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ControllerError::PerFlowMax(v) => {
                write!(f, "per-flow cap {v} outside 1..={} packets", LEVELS - 1)
            }
            ControllerError::TimedLow { pick, low } => write!(
                f,
                "the timed {pick:?} pick needs phases that start empty (low 0), got low {low}"
            ),
            ControllerError::SwitchProb(p) => {
                write!(f, "switch probability {p} is not in [0, 1]")
            }
            ControllerError::ZeroWeight(flow) => write!(f, "flow {flow} has weight 0"),
        }
    }
}

impl std::error::Error for ControllerError {}

/// How many packets an enqueue phase may still generate.
pub trait Budget {
    /// Whether one more packet may be generated.
    fn left(&self) -> bool;
    /// `n` limited to what is left.
    fn limit(&self, n: u64) -> u64;
    /// Counts `n` packets generated.
    fn take(&mut self, n: u64);
}

impl Budget for u64 {
    #[inline(always)]
    fn left(&self) -> bool {
        *self > 0
    }
    #[inline(always)]
    fn limit(&self, n: u64) -> u64 {
        n.min(*self)
    }
    #[inline(always)]
    fn take(&mut self, n: u64) {
        *self -= n;
    }
}

/// No budget: the timed loop counts its pairs itself, once per cycle.
#[derive(Clone, Copy, Debug)]
pub struct Unlimited;

impl Budget for Unlimited {
    #[inline(always)]
    fn left(&self) -> bool {
        true
    }
    #[inline(always)]
    fn limit(&self, n: u64) -> u64 {
        n
    }
    #[inline(always)]
    fn take(&mut self, _: u64) {}
}

/// The per-packet hook of an enqueue phase: what "send a packet of this
/// flow" means to the controller's user.
pub trait Emit<D> {
    /// Generates one packet of `flow`; false if it was refused (then it is
    /// not counted and the phase ends).
    fn packet(&mut self, flow: u32, draws: &mut D) -> bool;

    /// Generates up to `n` packets of `flow` one after the other and
    /// returns how many were accepted (fewer than `n` only if one was
    /// refused). The default calls [`Self::packet`] `n` times; a hook may
    /// override it to take what is the same for the whole burst (the
    /// packet length, the counters) out of the per-packet loop.
    #[inline(always)]
    fn burst(&mut self, flow: u32, n: u64, draws: &mut D) -> u64 {
        let mut sent = 0;
        while sent < n && self.packet(flow, draws) {
            sent += 1;
        }
        sent
    }
}

/// A closure `emit(flow, draws) -> bool` as an [`Emit`] hook.
pub struct PerPacket<F>(pub F);

impl<D, F: FnMut(u32, &mut D) -> bool> Emit<D> for PerPacket<F> {
    #[inline(always)]
    fn packet(&mut self, flow: u32, draws: &mut D) -> bool {
        (self.0)(flow, draws)
    }
}

/// Marks a flow that is not in `not_full`.
const ABSENT: u32 = u32::MAX;

/// The controller; see the module doc for its parameters.
pub struct TrafficController<D: Draws, const TIMED: bool> {
    high: u64,
    low: u64,
    /// Largest backlog of one flow (packets), `1..LEVELS`.
    cap: u32,
    pick: FlowPick,
    switch_prob: f64,
    n: u32,
    /// Flow weights, at least 1 (the bursty burst scales with them).
    weights: Vec<u32>,
    /// Packets generated and not yet reported dequeued.
    total: u64,
    /// Next flow of the cyclic pick.
    cursor: u32,
    /// Backlog levels (no flows unless the pick is `Least`).
    levels: LevelLists<TIMED>,
    /// Bursty pick only: the flows below the cap, each one's position there
    /// (`ABSENT` if none; kept up to date only when not `TIMED`) and its
    /// backlog.
    not_full: Vec<u32>,
    not_full_pos: Vec<u32>,
    fill: Vec<u32>,
    draws: D,
}

/// The guarantee experiment's controller: every dequeue tracked, random
/// phase switch, `StdRng` draws.
pub type Controller = TrafficController<StdRng, false>;

/// The cost harness's controller: phases start empty, SplitMix64 draws.
pub type TimedController = TrafficController<SplitMix64, true>;

impl Controller {
    /// A controller for flows of the given weights, seeded with `seed`.
    /// With random switches a phase may start with packets queued, so the
    /// cyclic pick (`smooth`) fills by least backlog, which it equals when
    /// phases start empty.
    ///
    /// # Panics
    /// If `per_flow_max` is outside `1..LEVELS` ([`Self::try_new`] returns
    /// the error instead); [`ControllerConfig::paper`] gives 30.
    pub fn new(cfg: ControllerConfig, weights: &[u32], seed: u64) -> Self {
        match Self::try_new(cfg, weights, seed) {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        }
    }

    /// [`Self::new`], with an error for a parameter out of range.
    pub fn try_new(
        cfg: ControllerConfig,
        weights: &[u32],
        seed: u64,
    ) -> Result<Self, ControllerError> {
        let pick = match cfg.pattern.pick() {
            FlowPick::Cyclic => FlowPick::Least,
            p => p,
        };
        Self::build(
            Thresholds {
                low: cfg.low,
                high: cfg.high,
                per_flow_cap: cfg.per_flow_max,
                pick,
            },
            cfg.switch_prob,
            weights,
            StdRng::seed_from_u64(seed),
        )
    }

    /// The random generator (the link simulation draws packet sizes from
    /// it too).
    pub fn rng(&mut self) -> &mut StdRng {
        &mut self.draws
    }

    /// Records the dequeue of one packet of `flow`. Returns true if the
    /// controller wants to switch to the enqueue phase now: the total fell
    /// to `low`, or the flow emptied and the coin (`switch_prob`) said so.
    pub fn on_dequeue(&mut self, flow: u32) -> bool {
        let level = self.backlog(flow).unwrap_or(0);
        if level == 0 {
            return self.total <= self.low;
        }
        self.total -= 1;
        match self.pick {
            FlowPick::Least => self.levels.release(flow),
            FlowPick::Bursty | FlowPick::Cyclic => {
                let f = flow as usize;
                self.fill[f] = level - 1;
                if level == self.cap {
                    self.not_full_pos[f] = self.not_full.len() as u32;
                    self.not_full.push(flow);
                }
            }
        }
        if self.total <= self.low {
            return true;
        }
        level == 1 && self.switch_prob > 0.0 && self.draws.coin(self.switch_prob)
    }
}

impl TimedController {
    /// A controller for the cost loop with the pattern's thresholds; it
    /// relies on a cap below [`LEVELS`] and, for the cyclic and bursty
    /// picks, on `low = 0` (every phase starts empty), which
    /// [`Pattern::thresholds`] gives.
    pub fn timed(th: Thresholds, weights: &[u32], seed: u64) -> Result<Self, ControllerError> {
        if th.pick != FlowPick::Least && th.low != 0 {
            return Err(ControllerError::TimedLow {
                pick: th.pick,
                low: th.low,
            });
        }
        Self::build(th, 0.0, weights, SplitMix64(seed))
    }
}

impl<D: Draws, const TIMED: bool> TrafficController<D, TIMED> {
    fn build(
        th: Thresholds,
        switch_prob: f64,
        weights: &[u32],
        draws: D,
    ) -> Result<Self, ControllerError> {
        if !(1..LEVELS as u32).contains(&th.per_flow_cap) {
            return Err(ControllerError::PerFlowMax(th.per_flow_cap));
        }
        if !(0.0..=1.0).contains(&switch_prob) {
            return Err(ControllerError::SwitchProb(switch_prob.to_string()));
        }
        if let Some(flow) = weights.iter().position(|&w| w == 0) {
            return Err(ControllerError::ZeroWeight(flow));
        }
        let n = weights.len() as u32;
        let bursty = th.pick == FlowPick::Bursty;
        let per_flow = |v: Vec<u32>| if bursty { v } else { Vec::new() };
        Ok(Self {
            high: th.high,
            low: th.low,
            cap: th.per_flow_cap,
            pick: th.pick,
            switch_prob,
            n,
            weights: weights.to_vec(),
            total: 0,
            cursor: 0,
            levels: LevelLists::new(
                if th.pick == FlowPick::Least { n } else { 0 },
                th.per_flow_cap,
            ),
            not_full: per_flow((0..n).collect()),
            not_full_pos: per_flow((0..n).collect()),
            fill: per_flow(vec![0; n as usize]),
            draws,
        })
    }

    /// How the enqueue phase picks flows.
    pub fn pick(&self) -> FlowPick {
        self.pick
    }

    /// The dequeue phase stops at this total backlog.
    pub fn low(&self) -> u64 {
        self.low
    }

    /// Packets the controller believes are queued (enqueued − dequeued).
    pub fn total(&self) -> u64 {
        self.total
    }

    /// A flow's backlog in packets as the controller tracks it: always for
    /// the least-backlogged pick, for the bursty pick only when every
    /// dequeue is tracked (`TIMED = false`), never for the cyclic pick.
    pub fn backlog(&self, flow: u32) -> Option<u32> {
        match self.pick {
            FlowPick::Least => Some(self.levels.level(flow)),
            FlowPick::Bursty if !TIMED => Some(self.fill.get(flow as usize).copied().unwrap_or(0)),
            _ => None,
        }
    }

    /// Runs one enqueue phase: calls `emit(flow, draws)` for every packet
    /// to generate, until the total backlog reaches `high`, no flow may
    /// take more, or the budget is spent. `emit` returns false if the
    /// packet was refused (then it is not counted and the phase ends).
    /// Returns the packets generated.
    pub fn fill<B: Budget>(
        &mut self,
        budget: &mut B,
        emit: impl FnMut(u32, &mut D) -> bool,
    ) -> u64 {
        let emit = PerPacket(emit);
        match self.pick {
            FlowPick::Cyclic => self.fill_cyclic(budget, emit),
            FlowPick::Least => self.fill_least(budget, emit),
            FlowPick::Bursty => self.fill_bursty(budget, emit),
        }
    }

    /// [`Self::fill`] with the cyclic pick (whatever [`Self::pick`] says;
    /// the timed loop dispatches once per run, not once per phase).
    #[inline(always)]
    pub fn fill_cyclic<B: Budget>(&mut self, budget: &mut B, mut emit: impl Emit<D>) -> u64 {
        // Locals, not fields, in the loop: the compiler cannot tell that
        // `emit` (which writes a scheduler's memory) leaves `self` alone, so
        // fields would be reloaded after every packet.
        let (high, n) = (self.high, self.n);
        let (mut total, mut cursor) = (self.total, self.cursor);
        let before = total;
        while budget.left() && total < high {
            let f = cursor;
            cursor = if f + 1 == n { 0 } else { f + 1 };
            if !emit.packet(f, &mut self.draws) {
                break;
            }
            total += 1;
            budget.take(1);
        }
        (self.total, self.cursor) = (total, cursor);
        total - before
    }

    /// [`Self::fill`] with the least-backlogged pick.
    #[inline(always)]
    pub fn fill_least<B: Budget>(&mut self, budget: &mut B, mut emit: impl Emit<D>) -> u64 {
        let high = self.high;
        let mut total = self.total;
        let before = total;
        while budget.left() && total < high {
            let Some(f) = self.levels.take_least() else {
                break;
            };
            if !emit.packet(f, &mut self.draws) {
                self.levels.release(f);
                break;
            }
            total += 1;
            budget.take(1);
        }
        self.total = total;
        total - before
    }

    /// [`Self::fill`] with the bursty pick. The flow, the burst and the
    /// room left (under the cap, under `high`, in the budget) are drawn and
    /// computed once per burst; the per-packet loop only emits and counts.
    #[inline(always)]
    pub fn fill_bursty<B: Budget>(&mut self, budget: &mut B, mut emit: impl Emit<D>) -> u64 {
        let (high, cap) = (self.high, self.cap);
        let mut total = self.total;
        let before = total;
        if TIMED {
            // The timed loop drains to 0: every phase starts empty.
            self.not_full.clear();
            self.not_full.extend(0..self.n);
            self.fill.iter_mut().for_each(|c| *c = 0);
        }
        while budget.left() && total < high && !self.not_full.is_empty() {
            let (i, f, b) = self.draws.bursty(&self.not_full, &self.weights);
            let room = u64::from(cap - self.fill[f as usize]);
            let burst = budget.limit(b.min(room).min(high - total));
            let sent = emit.burst(f, burst, &mut self.draws);
            total += sent;
            budget.take(sent);
            self.fill[f as usize] += sent as u32;
            if sent < burst {
                break;
            }
            if self.fill[f as usize] >= cap {
                self.not_full.swap_remove(i);
                if !TIMED {
                    if let Some(&moved) = self.not_full.get(i) {
                        self.not_full_pos[moved as usize] = i as u32;
                    }
                    self.not_full_pos[f as usize] = ABSENT;
                }
            }
        }
        self.total = total;
        total - before
    }

    /// Records the dequeue of one packet of `flow` in the timed loop: only
    /// the least-backlogged pick tracks backlogs (`TRACK`), nothing is
    /// drawn.
    #[inline(always)]
    pub fn dequeued<const TRACK: bool>(&mut self, flow: u32) {
        if TRACK {
            self.levels.release(flow);
        }
        self.total -= 1;
    }

    /// Records the dequeue of a packet outside any timed region (draining
    /// what is left).
    pub fn forget(&mut self, flow: u32) {
        if self.pick == FlowPick::Least {
            self.levels.release(flow);
        }
        self.total = self.total.saturating_sub(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(pattern: Pattern, cap: u32, high: u64, low: u64, switch_prob: f64) -> ControllerConfig {
        ControllerConfig {
            pattern,
            per_flow_max: cap,
            high,
            low,
            switch_prob,
        }
    }

    #[test]
    fn switch_probabilities_and_weights_are_used_as_given_or_refused() {
        let ok = Controller::try_new(cfg(Pattern::Smooth, 3, 100, 0, 1.0), &[1, 1], 1);
        assert!(ok.is_ok());
        for p in [1.5, -0.1, f64::NAN, f64::INFINITY] {
            let e = Controller::try_new(cfg(Pattern::Smooth, 3, 100, 0, p), &[1, 1], 1);
            assert!(matches!(e, Err(ControllerError::SwitchProb(_))), "{p}");
        }
        let e = Controller::try_new(cfg(Pattern::Smooth, 3, 100, 0, 0.5), &[1, 0], 1);
        assert!(matches!(e, Err(ControllerError::ZeroWeight(1))));
    }

    #[test]
    fn smooth_fills_evenly_up_to_the_cap() {
        let mut c = Controller::new(cfg(Pattern::Smooth, 3, 100, 0, 0.0), &[1, 1, 1, 1], 1);
        let mut seen = Vec::new();
        let mut budget = 1000u64;
        c.fill(&mut budget, |f, _| {
            seen.push(f);
            true
        });
        assert_eq!(seen.len(), 12);
        // after every 4 packets, each flow has one more
        for chunk in seen.chunks(4) {
            let mut c = chunk.to_vec();
            c.sort();
            assert_eq!(c, vec![0, 1, 2, 3]);
        }
        assert_eq!(budget, 1000 - 12);
    }

    #[test]
    fn bursty_respects_cap_high_and_budget() {
        let mut c = Controller::new(cfg(Pattern::Bursty, 30, 50, 0, 0.0), &[1, 8, 2], 7);
        let mut counts = [0u32; 3];
        let mut budget = 40u64;
        c.fill(&mut budget, |f, _| {
            counts[f as usize] += 1;
            true
        });
        assert_eq!(budget, 0);
        assert_eq!(counts.iter().sum::<u32>(), 40);
        assert!(counts.iter().all(|&n| n <= 30));
        for f in 0..3 {
            assert_eq!(c.backlog(f), Some(counts[f as usize]));
        }
    }

    #[test]
    fn a_refused_packet_ends_the_phase_uncounted() {
        for pattern in [Pattern::Small, Pattern::Bursty] {
            let mut c = Controller::new(cfg(pattern, 30, 50, 0, 0.0), &[1, 2], 3);
            let mut budget = 100u64;
            let mut calls = 0;
            let got = c.fill(&mut budget, |_, _| {
                calls += 1;
                calls < 5
            });
            assert_eq!((got, c.total(), budget), (4, 4, 96), "{pattern}");
            let tracked: u32 = (0..2).map(|f| c.backlog(f).unwrap()).sum();
            assert_eq!(tracked, 4, "{pattern}");
        }
    }

    #[test]
    fn dequeue_switches_at_low_and_on_empty_flows() {
        let mut c = Controller::new(cfg(Pattern::Smooth, 2, 4, 1, 1.0), &[1, 1], 3);
        let mut budget = 10u64;
        c.fill(&mut budget, |_, _| true);
        assert_eq!(c.total(), 4);
        assert!(!c.on_dequeue(0));
        assert!(c.on_dequeue(0), "flow 0 emptied with switch_prob 1");
        assert!(c.on_dequeue(1), "total reached low");
    }

    /// A bursty flow that falls below the cap may be picked again: the
    /// non-full list is kept up to date by the dequeues.
    #[test]
    fn bursty_flows_below_the_cap_come_back() {
        let mut c = Controller::new(cfg(Pattern::Bursty, 2, 100, 0, 0.0), &[1, 1], 5);
        let mut budget = 100u64;
        assert_eq!(c.fill(&mut budget, |_, _| true), 4);
        assert!(!c.on_dequeue(1));
        let mut again = Vec::new();
        c.fill(&mut budget, |f, _| {
            again.push(f);
            true
        });
        assert_eq!(again, vec![1]);
        assert_eq!((c.backlog(0), c.backlog(1)), (Some(2), Some(2)));
    }

    #[test]
    fn bad_parameters_are_refused() {
        let w = [1u32];
        for cap in [0, LEVELS as u32] {
            let e = Controller::try_new(cfg(Pattern::Small, cap, 4, 1, 0.0), &w, 1).err();
            assert_eq!(e, Some(ControllerError::PerFlowMax(cap)));
        }
        let th = Pattern::Bursty.thresholds(4);
        assert!(TimedController::timed(Thresholds { low: 1, ..th }, &w, 1).is_err());
        let th = Pattern::Full.thresholds(4);
        assert!(TimedController::timed(th, &w, 1).is_ok());
    }

    #[test]
    fn every_pattern_fills_to_its_thresholds() {
        for &pattern in Pattern::ALL {
            let cfg = ControllerConfig {
                switch_prob: 0.0,
                ..ControllerConfig::paper(pattern, 4)
            };
            let t = pattern.thresholds(4);
            assert_eq!(
                (cfg.low, cfg.high, cfg.per_flow_max),
                (t.low, t.high, t.per_flow_cap)
            );
            let mut c = Controller::new(cfg, &[1, 2, 1, 4], 9);
            let mut budget = 1_000u64;
            c.fill(&mut budget, |_, _| true);
            assert_eq!(c.total(), t.high, "{pattern}");
            // Draining to the low threshold asks for the enqueue phase.
            let mut switched = false;
            for f in (0..4).cycle().take(1_000) {
                if c.backlog(f).unwrap() > 0 && c.on_dequeue(f) {
                    switched = true;
                    break;
                }
            }
            assert!(switched, "{pattern}");
            assert_eq!(c.total(), t.low, "{pattern}");
            // The timed mode fills the same patterns to the same level.
            let mut timed = TimedController::timed(t, &[1, 2, 1, 4], 9).unwrap();
            assert_eq!(timed.fill(&mut Unlimited, |_, _| true), t.high, "{pattern}");
        }
    }
}
