//! The one controller of the test environment of seeds 003 §7 and 000 §8,
//! used by both the guarantee experiment ([`crate::link_sim`], through
//! [`Controller`]) and the cost harness ([`crate::cost::driver`], through
//! [`TimedController`]).
//!
//! It alternates an *enqueue phase*, generating packets until the total
//! backlog reaches `high` ([`TrafficController::fill`]), and a *dequeue
//! phase*, run by its user (the link simulation or the timed cost loop),
//! until the backlog falls to `low`; every dequeued packet is reported back
//! ([`TrafficController::on_dequeue`] / [`TrafficController::dequeued`]).
//! Optionally (seed 000 §8.3) it switches to the enqueue phase with
//! probability `switch_prob` every time a flow queue gets empty.
//!
//! The enqueue phase chooses flows as the pattern's [`FlowPick`] says:
//! * `Least`: one packet at a time to the flow with the smallest backlog
//!   below the cap ([`super::levels`], O(1));
//! * `Cyclic`: flows 0, 1, …, N−1, 0, …: the least-backlogged fill when
//!   every phase starts empty, with no per-packet bookkeeping at all;
//! * `Bursty`: bursts of a random size in `1..=16·w` to a random non-full
//!   flow of weight `w`.
//!
//! **Generic, so that the timed path pays nothing it does not use.** The
//! per-packet work that differs between the two users is a type parameter,
//! resolved at compile time and inlined away:
//! * the *measure hook*: the `emit(flow, draws)` closure called for each
//!   packet (the link simulation records the packet and enqueues it; the
//!   cost loop takes a buffer from its free list and pushes it);
//! * the random source ([`Draws`]): the guarantee experiment draws from
//!   `StdRng` with `rand`'s uniform sampling (its seeded figures stay
//!   identical), the cost loop from one SplitMix64 step per burst;
//! * the budget ([`Budget`]): a packet count for the simulation,
//!   [`Unlimited`] (nothing to count) for the cost loop;
//! * `TIMED` (const): `true` for the cost loop, whose phases always start
//!   empty (`low = 0` or the least-backlogged pick, no random switch), so
//!   the bursty bookkeeping is reset per phase instead of being updated on
//!   every dequeue, and ties between equally backlogged flows are broken
//!   first-come first-served (dummynet); `false` for the simulation, which
//!   tracks every dequeue and breaks ties in array swap-remove order (the
//!   order its published figures were computed with).
//!
//! A flow never holds more than `per_flow_max` packets.

use super::levels::LevelLists;
pub use super::levels::LEVELS;
pub use super::pattern::{FlowPick, Pattern, Thresholds};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

/// Controller parameters.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ControllerConfig {
    /// Enqueue-phase pattern (what the report names).
    pub pattern: Pattern,
    /// How the enqueue phase picks flows.
    #[serde(skip)]
    pub pick: FlowPick,
    /// Largest backlog of one flow, in packets (30 in seed 000 §8),
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
    /// random switch with probability 0.5 (seed 000 §8.3). With random
    /// switches a phase may start with packets queued, so `smooth` fills by
    /// least backlog rather than cyclically.
    pub fn paper(pattern: Pattern, n: usize) -> Self {
        let t = pattern.thresholds(n.min(u32::MAX as usize) as u32);
        Self {
            pattern,
            pick: match t.pick {
                FlowPick::Cyclic => FlowPick::Least,
                p => p,
            },
            per_flow_max: t.per_flow_cap,
            high: t.high,
            low: t.low,
            switch_prob: 0.5,
        }
    }
}

/// The random draws of the controller.
pub trait Draws {
    /// A bursty enqueue: an index `i` into `not_full` (not empty), its flow
    /// `f = not_full[i]` and a burst size in `1..=16·w_f`.
    fn bursty(&mut self, not_full: &[u32], weights: &[u32]) -> (usize, u32, u64);
    /// True with probability `p` (in `(0, 1]`).
    fn coin(&mut self, p: f64) -> bool;
}

impl Draws for StdRng {
    #[inline]
    fn bursty(&mut self, not_full: &[u32], weights: &[u32]) -> (usize, u32, u64) {
        let i = self.random_range(0..not_full.len());
        let f = not_full[i];
        let w = weights[f as usize].max(1);
        (i, f, self.random_range(1..=16 * w as u64))
    }

    fn coin(&mut self, p: f64) -> bool {
        self.random_bool(p)
    }
}

/// SplitMix64: one multiply-xorshift step per draw, good enough to pick
/// flows and burst sizes, and deterministic; the cost loop's source (one
/// step per burst).
#[derive(Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// `x * range / 2^32`: a value in `0..range` from 32 random bits.
#[inline(always)]
fn scale(x: u32, range: u64) -> u64 {
    (u64::from(x) * range) >> 32
}

impl Draws for SplitMix64 {
    /// Both numbers from one step: the low half picks the flow, the high
    /// half the burst.
    #[inline(always)]
    fn bursty(&mut self, not_full: &[u32], weights: &[u32]) -> (usize, u32, u64) {
        let r = self.next_u64();
        let i = scale(r as u32, not_full.len() as u64) as usize;
        let f = not_full[i];
        let w = u64::from(weights[f as usize]);
        (i, f, 1 + scale((r >> 32) as u32, 16 * w))
    }

    fn coin(&mut self, p: f64) -> bool {
        ((self.next_u64() >> 11) as f64) < p * (1u64 << 53) as f64
    }
}

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

/// No budget: the timed loop counts its pairs itself, per phase.
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

const ABSENT: u32 = u32::MAX;

/// The controller; see the module doc for the parameters.
pub struct TrafficController<D: Draws, const TIMED: bool> {
    low: u64,
    high: u64,
    cap: u32,
    pick: FlowPick,
    switch_prob: f64,
    n: u32,
    weights: Vec<u32>,
    total: u64,
    /// Next flow of the cyclic fill.
    cursor: u32,
    /// Backlog levels (empty unless the pick is `Least`).
    levels: LevelLists<TIMED>,
    /// Flows below the cap, their positions there and their backlogs
    /// (bursty pick only).
    not_full: Vec<u32>,
    not_full_pos: Vec<u32>,
    fill: Vec<u32>,
    draws: D,
}

/// The guarantee experiment's controller (link simulation): every dequeue
/// tracked, `StdRng` draws.
pub type Controller = TrafficController<StdRng, false>;

/// The cost harness's controller: phases start empty, SplitMix64 draws.
pub type TimedController = TrafficController<SplitMix64, true>;

impl Controller {
    /// A controller for flows of the given weights; refuses a
    /// `per_flow_max` outside `1..LEVELS` and the cyclic pick (which is
    /// the least-backlogged fill only when phases start empty).
    pub fn new(cfg: ControllerConfig, weights: &[u32], seed: u64) -> Result<Self, String> {
        if !(1..LEVELS as u32).contains(&cfg.per_flow_max) {
            return Err(format!(
                "per_flow_max {} outside 1..={}",
                cfg.per_flow_max,
                LEVELS - 1
            ));
        }
        if cfg.pick == FlowPick::Cyclic {
            return Err(
                "the cyclic fill needs phases that start empty; use the least-backlogged pick"
                    .into(),
            );
        }
        Ok(Self::build(
            cfg.low,
            cfg.high,
            cfg.per_flow_max,
            cfg.pick,
            cfg.switch_prob,
            weights,
            StdRng::seed_from_u64(seed),
        ))
    }

    /// The random generator (packet sizes are drawn from it too).
    pub fn rng(&mut self) -> &mut StdRng {
        &mut self.draws
    }
}

impl TimedController {
    /// A controller for the cost loop. The pattern thresholds guarantee
    /// what this mode relies on: a cap below [`LEVELS`], and `low = 0`
    /// for the cyclic and bursty picks (phases start empty).
    pub fn timed(th: Thresholds, weights: &[u32], seed: u64) -> Self {
        debug_assert!(th.per_flow_cap < LEVELS as u32);
        debug_assert!(th.pick == FlowPick::Least || th.low == 0);
        Self::build(
            th.low,
            th.high,
            th.per_flow_cap,
            th.pick,
            0.0,
            weights,
            SplitMix64(seed),
        )
    }
}

impl<D: Draws, const TIMED: bool> TrafficController<D, TIMED> {
    fn build(
        low: u64,
        high: u64,
        cap: u32,
        pick: FlowPick,
        switch_prob: f64,
        weights: &[u32],
        draws: D,
    ) -> Self {
        let n = weights.len() as u32;
        let bursty = pick == FlowPick::Bursty;
        let per_flow = |v: Vec<u32>| if bursty { v } else { Vec::new() };
        Self {
            low,
            high,
            cap,
            pick,
            switch_prob,
            n,
            weights: weights.iter().map(|&w| w.max(1)).collect(),
            total: 0,
            cursor: 0,
            levels: LevelLists::new(if pick == FlowPick::Least { n } else { 0 }, cap),
            not_full: per_flow((0..n).collect()),
            not_full_pos: per_flow((0..n).collect()),
            fill: per_flow(vec![0; n as usize]),
            draws,
        }
    }

    /// How the enqueue phase picks flows.
    pub fn pick(&self) -> FlowPick {
        self.pick
    }

    /// Packets the controller believes are queued (enqueued − dequeued).
    pub fn total(&self) -> u64 {
        self.total
    }

    /// A flow's backlog in packets as tracked (`None` for the cyclic pick,
    /// which tracks nothing).
    pub fn backlog(&self, flow: u32) -> Option<u32> {
        match self.pick {
            FlowPick::Least => Some(self.levels.level(flow)),
            FlowPick::Bursty => Some(self.fill.get(flow as usize).copied().unwrap_or(0)),
            FlowPick::Cyclic => None,
        }
    }

    /// Runs one enqueue phase: calls `emit(flow, draws)` for every packet
    /// to generate, until the total backlog reaches `high`, no flow may
    /// take more, or the budget is spent. `emit` returns false if the
    /// packet was refused (then it is not counted and the phase ends).
    /// Returns the packets generated.
    #[inline]
    pub fn fill<B: Budget>(
        &mut self,
        budget: &mut B,
        mut emit: impl FnMut(u32, &mut D) -> bool,
    ) -> u64 {
        let emit = |_: &mut (), _: &mut (), f: u32, d: &mut D| emit(f, d);
        let (c, x) = (&mut (), &mut ());
        match self.pick {
            FlowPick::Cyclic => self.fill_cyclic(budget, c, x, emit),
            FlowPick::Least => self.fill_least(budget, c, x, emit),
            FlowPick::Bursty => self.fill_bursty(budget, c, x, emit),
        }
    }

    /// [`Self::fill`] for the cyclic pick. The per-packet hook's state is
    /// passed as arguments (`c`, `x`) rather than captured by `emit`, so
    /// that the compiler knows it does not alias the controller's and keeps
    /// both in registers across the timed loop.
    #[inline(always)]
    pub fn fill_cyclic<B: Budget, C, X>(
        &mut self,
        budget: &mut B,
        c: &mut C,
        x: &mut X,
        mut emit: impl FnMut(&mut C, &mut X, u32, &mut D) -> bool,
    ) -> u64 {
        let before = self.total;
        while budget.left() && self.total < self.high {
            let f = self.cursor;
            self.cursor = if f + 1 == self.n { 0 } else { f + 1 };
            if !emit(c, x, f, &mut self.draws) {
                break;
            }
            self.total += 1;
            budget.take(1);
        }
        self.total - before
    }

    /// [`Self::fill`] for the least-backlogged pick.
    #[inline(always)]
    pub fn fill_least<B: Budget, C, X>(
        &mut self,
        budget: &mut B,
        c: &mut C,
        x: &mut X,
        mut emit: impl FnMut(&mut C, &mut X, u32, &mut D) -> bool,
    ) -> u64 {
        let before = self.total;
        while budget.left() && self.total < self.high {
            let Some(f) = self.levels.take_least() else {
                break;
            };
            if !emit(c, x, f, &mut self.draws) {
                self.levels.release(f);
                break;
            }
            self.total += 1;
            budget.take(1);
        }
        self.total - before
    }

    /// [`Self::fill`] for the bursty pick.
    #[inline(always)]
    pub fn fill_bursty<B: Budget, C, X>(
        &mut self,
        budget: &mut B,
        c: &mut C,
        x: &mut X,
        mut emit: impl FnMut(&mut C, &mut X, u32, &mut D) -> bool,
    ) -> u64 {
        let before = self.total;
        let cap = self.cap;
        if TIMED {
            // The timed loop drains to 0: every phase starts empty.
            self.not_full.clear();
            self.not_full.extend(0..self.n);
            self.fill.iter_mut().for_each(|c| *c = 0);
        }
        while budget.left() && self.total < self.high && !self.not_full.is_empty() {
            let (i, f, b) = self.draws.bursty(&self.not_full, &self.weights);
            let have = self.fill[f as usize];
            let room = u64::from(cap - have);
            let burst = budget.limit(b.min(room).min(self.high - self.total));
            let mut sent = 0;
            while sent < burst && emit(c, x, f, &mut self.draws) {
                sent += 1;
            }
            self.total += sent;
            budget.take(sent);
            let now = have + sent as u32;
            self.fill[f as usize] = now;
            if now >= cap {
                self.not_full.swap_remove(i);
                if !TIMED {
                    if let Some(&moved) = self.not_full.get(i) {
                        self.not_full_pos[moved as usize] = i as u32;
                    }
                    self.not_full_pos[f as usize] = ABSENT;
                }
            }
            if sent < burst {
                break;
            }
        }
        self.total - before
    }

    /// Records the dequeue of one packet of `flow` in the timed loop: only
    /// the least-backlogged levels are tracked (`TRACK`), nothing is drawn.
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

impl<D: Draws> TrafficController<D, false> {
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
            FlowPick::Bursty => {
                let f = flow as usize;
                self.fill[f] = level - 1;
                if level >= self.cap && level - 1 < self.cap {
                    self.not_full_pos[f] = self.not_full.len() as u32;
                    self.not_full.push(flow);
                }
            }
            FlowPick::Cyclic => {}
        }
        if self.total <= self.low {
            return true;
        }
        level == 1 && self.switch_prob > 0.0 && self.draws.coin(self.switch_prob.min(1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(pick: FlowPick, cap: u32, high: u64, low: u64, switch_prob: f64) -> ControllerConfig {
        ControllerConfig {
            pattern: Pattern::Smooth,
            pick,
            per_flow_max: cap,
            high,
            low,
            switch_prob,
        }
    }

    #[test]
    fn least_fills_evenly_up_to_the_cap() {
        let mut c =
            Controller::new(cfg(FlowPick::Least, 3, 100, 0, 0.0), &[1, 1, 1, 1], 1).unwrap();
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
        let mut c = Controller::new(cfg(FlowPick::Bursty, 30, 50, 0, 0.0), &[1, 8, 2], 7).unwrap();
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
    fn dequeue_switches_at_low_and_on_empty_flows() {
        let mut c = Controller::new(cfg(FlowPick::Least, 2, 4, 1, 1.0), &[1, 1], 3).unwrap();
        let mut budget = 10u64;
        c.fill(&mut budget, |_, _| true);
        assert_eq!(c.total(), 4);
        assert!(!c.on_dequeue(0));
        assert!(c.on_dequeue(0), "flow 0 emptied with switch_prob 1");
        assert!(c.on_dequeue(1), "total reached low");
    }

    #[test]
    fn bad_parameters_are_refused() {
        assert!(Controller::new(cfg(FlowPick::Least, 0, 4, 1, 0.0), &[1], 1).is_err());
        assert!(Controller::new(cfg(FlowPick::Least, 64, 4, 1, 0.0), &[1], 1).is_err());
        assert!(Controller::new(cfg(FlowPick::Cyclic, 3, 4, 0, 0.0), &[1], 1).is_err());
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
            let mut c = Controller::new(cfg, &[1, 2, 1, 4], 9).unwrap();
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
            let mut timed = TimedController::timed(t, &[1, 2, 1, 4], 9);
            assert_eq!(timed.fill(&mut Unlimited, |_, _| true), t.high, "{pattern}");
        }
    }
}
