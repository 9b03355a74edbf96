//! The controller of the test environment of seeds 003 §7 and 000 §8.
//!
//! It alternates an *enqueue phase*, generating packets until the total
//! backlog reaches `high`, and a *dequeue phase*, run by its user (a link
//! simulation or a cost loop), until the backlog falls to `low`. Optionally
//! (seed 000 §8.3) it switches to the enqueue phase with probability
//! `switch_prob` every time a flow queue gets empty.
//!
//! The enqueue phase follows the [`Pattern`]:
//! * `bursty`: bursts of a random size in `1..=16·w` to a random flow of
//!   weight `w`;
//! * every other pattern: one packet at a time to the flow with the
//!   smallest backlog (round-robin fill for `smooth`), between the pattern's
//!   thresholds ([`Pattern::thresholds`]).
//!
//! A flow never holds more than `per_flow_max` packets. The cost harness
//! drives the same patterns with its own allocation-free loop
//! ([`crate::cost::driver`]).

pub use super::pattern::Pattern;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

/// Controller parameters.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ControllerConfig {
    /// Enqueue-phase pattern.
    pub pattern: Pattern,
    /// Largest backlog of one flow, in packets (30 in seed 000 §8).
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
    /// random switch with probability 0.5 (seed 000 §8.3).
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

/// Flows bucketed by backlog so that "least backlogged" and "random
/// non-full" are O(1).
struct FlowLevels {
    levels: Vec<Vec<u32>>,
    pos: Vec<u32>,
    level: Vec<u32>,
    min_hint: usize,
}

impl FlowLevels {
    fn new(n: usize, max: u32) -> Self {
        let mut levels = vec![Vec::new(); max as usize + 1];
        levels[0] = (0..n as u32).collect();
        Self {
            levels,
            pos: (0..n as u32).collect(),
            level: vec![0; n],
            min_hint: 0,
        }
    }

    fn set(&mut self, f: u32, new_level: u32) {
        let old = self.level[f as usize] as usize;
        let p = self.pos[f as usize] as usize;
        let v = &mut self.levels[old];
        v.swap_remove(p);
        if let Some(&moved) = v.get(p) {
            self.pos[moved as usize] = p as u32;
        }
        let nl = new_level as usize;
        self.pos[f as usize] = self.levels[nl].len() as u32;
        self.levels[nl].push(f);
        self.level[f as usize] = new_level;
        self.min_hint = self.min_hint.min(nl);
    }

    fn least(&mut self) -> Option<(u32, u32)> {
        while self.min_hint < self.levels.len() {
            if let Some(&f) = self.levels[self.min_hint].last() {
                return Some((f, self.min_hint as u32));
            }
            self.min_hint += 1;
        }
        None
    }
}

/// Drives enqueue phases and decides phase switches.
pub struct Controller {
    cfg: ControllerConfig,
    weights: Vec<u32>,
    levels: FlowLevels,
    /// Flows below `per_flow_max`, for the bursty pattern.
    not_full: Vec<u32>,
    not_full_pos: Vec<u32>,
    total: u64,
    rng: StdRng,
}

const ABSENT: u32 = u32::MAX;

impl Controller {
    /// A controller for flows of the given weights.
    pub fn new(cfg: ControllerConfig, weights: &[u32], seed: u64) -> Self {
        let n = weights.len();
        let cap = cfg.per_flow_max.max(1);
        Self {
            cfg: ControllerConfig {
                per_flow_max: cap,
                ..cfg
            },
            weights: weights.to_vec(),
            levels: FlowLevels::new(n, cap),
            not_full: (0..n as u32).collect(),
            not_full_pos: (0..n as u32).collect(),
            total: 0,
            rng: StdRng::seed_from_u64(seed),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ControllerConfig {
        &self.cfg
    }

    /// Packets the controller believes are queued (enqueued − dequeued).
    pub fn total(&self) -> u64 {
        self.total
    }

    /// A flow's backlog in packets, as tracked by the controller.
    pub fn backlog(&self, flow: u32) -> u32 {
        self.levels.level[flow as usize]
    }

    /// The shared random generator (for packet sizes).
    pub fn rng(&mut self) -> &mut StdRng {
        &mut self.rng
    }

    fn bump(&mut self, f: u32, delta: i32) {
        let old = self.levels.level[f as usize];
        let new = (old as i64 + delta as i64) as u32;
        self.levels.set(f, new);
        let cap = self.cfg.per_flow_max;
        if old < cap && new >= cap {
            let p = self.not_full_pos[f as usize] as usize;
            self.not_full.swap_remove(p);
            if let Some(&moved) = self.not_full.get(p) {
                self.not_full_pos[moved as usize] = p as u32;
            }
            self.not_full_pos[f as usize] = ABSENT;
        } else if old >= cap && new < cap {
            self.not_full_pos[f as usize] = self.not_full.len() as u32;
            self.not_full.push(f);
        }
    }

    /// Runs one enqueue phase: calls `emit(flow, rng)` for every packet to
    /// generate, until the total backlog reaches `high`, every flow is full,
    /// or `budget` packets have been generated (the budget is decremented).
    /// `emit` returns false if the packet was refused (then it is not counted
    /// and the phase ends).
    pub fn fill(&mut self, budget: &mut u64, mut emit: impl FnMut(u32, &mut StdRng) -> bool) {
        let cap = self.cfg.per_flow_max;
        while *budget > 0 && self.total < self.cfg.high {
            let (flow, burst) = match self.cfg.pattern {
                Pattern::Small
                | Pattern::Large
                | Pattern::Full
                | Pattern::Smooth
                | Pattern::Alternate => match self.levels.least() {
                    Some((f, lvl)) if lvl < cap => (f, 1),
                    _ => return,
                },
                Pattern::Bursty => {
                    if self.not_full.is_empty() {
                        return;
                    }
                    let f = self.not_full[self.rng.random_range(0..self.not_full.len())];
                    let w = self.weights[f as usize].max(1);
                    let b = self.rng.random_range(1..=16 * w as u64);
                    let room = (cap - self.levels.level[f as usize]) as u64;
                    (f, b.min(room).min(self.cfg.high - self.total).min(*budget))
                }
            };
            for _ in 0..burst {
                if !emit(flow, &mut self.rng) {
                    return;
                }
                self.total += 1;
                *budget -= 1;
                self.bump(flow, 1);
            }
        }
    }

    /// Records the dequeue of one packet of `flow`. Returns true if the
    /// controller wants to switch to the enqueue phase now: the total fell to
    /// `low`, or the flow emptied and the coin (`switch_prob`) said so.
    pub fn on_dequeue(&mut self, flow: u32) -> bool {
        if self.levels.level.get(flow as usize).is_none_or(|&l| l == 0) {
            return self.total <= self.cfg.low;
        }
        self.total -= 1;
        self.bump(flow, -1);
        if self.total <= self.cfg.low {
            return true;
        }
        self.levels.level[flow as usize] == 0
            && self.cfg.switch_prob > 0.0
            && self.rng.random_bool(self.cfg.switch_prob.min(1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smooth_fills_round_robin_up_to_the_cap() {
        let cfg = ControllerConfig {
            pattern: Pattern::Smooth,
            per_flow_max: 3,
            high: 100,
            low: 0,
            switch_prob: 0.0,
        };
        let mut c = Controller::new(cfg, &[1, 1, 1, 1], 1);
        let mut seen = Vec::new();
        let mut budget = 1000;
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
        let cfg = ControllerConfig {
            pattern: Pattern::Bursty,
            per_flow_max: 30,
            high: 50,
            low: 0,
            switch_prob: 0.0,
        };
        let mut c = Controller::new(cfg, &[1, 8, 2], 7);
        let mut counts = [0u32; 3];
        let mut budget = 40;
        c.fill(&mut budget, |f, _| {
            counts[f as usize] += 1;
            true
        });
        assert_eq!(budget, 0);
        assert_eq!(counts.iter().sum::<u32>(), 40);
        assert!(counts.iter().all(|&n| n <= 30));
        for f in 0..3 {
            assert_eq!(c.backlog(f), counts[f as usize]);
        }
    }

    #[test]
    fn dequeue_switches_at_low_and_on_empty_flows() {
        let cfg = ControllerConfig {
            pattern: Pattern::Smooth,
            per_flow_max: 2,
            high: 4,
            low: 1,
            switch_prob: 1.0,
        };
        let mut c = Controller::new(cfg, &[1, 1], 3);
        let mut budget = 10;
        c.fill(&mut budget, |_, _| true);
        assert_eq!(c.total(), 4);
        assert!(!c.on_dequeue(0));
        assert!(c.on_dequeue(0), "flow 0 emptied with switch_prob 1");
        assert!(c.on_dequeue(1), "total reached low");
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
            let mut budget = 1_000;
            c.fill(&mut budget, |_, _| true);
            assert_eq!(c.total(), t.high, "{pattern}");
            // Draining to the low threshold asks for the enqueue phase.
            let mut switched = false;
            for f in (0..4).cycle().take(1_000) {
                if c.backlog(f) > 0 && c.on_dequeue(f) {
                    switched = true;
                    break;
                }
            }
            assert!(switched, "{pattern}");
            assert_eq!(c.total(), t.low, "{pattern}");
        }
    }
}
