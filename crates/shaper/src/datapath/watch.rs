//! What an operator watches besides the counters ([`super::stats`]): each
//! class's current rate and its queueing-delay percentiles, per
//! direction, for every circuit, the default class, the unshaped frames
//! and every node (a node's delays are those of the frames sent from its
//! subtree).
//!
//! # Windows
//!
//! Both are measured over fixed windows aligned on the engine's clock, so
//! that every class's window is the same and a node's rate is exactly the
//! sum of its circuits':
//!
//! - **rate**: the bytes sent in the last complete window of
//!   [`RATE_WINDOW_NS`] (one second), in bit/s;
//! - **delay**: the sojourn of every frame sent (from its reception to
//!   its dequeue, the time CoDel measures) goes into an `hdrhistogram`;
//!   the percentiles shown are those of the last complete window of
//!   [`DELAY_WINDOW_NS`] (ten seconds, so a Prometheus scrape every 15 s
//!   misses little), not of the whole run: a day-old spike does not hide
//!   today's delays, and the histogram's `u32` counts cannot overflow in
//!   a window (4·10⁹ frames in 10 s is far beyond any link).
//!
//! A class's window is rolled on its next frame, or by the loop's sweep
//! ([`Watch::sweep`], at most [`SWEEP_PER_TURN`] classes a turn), which
//! computes the percentiles of the windows that ended without a frame
//! since: a snapshot then only copies numbers, and the loop never spends
//! a long stretch computing all classes' percentiles at once. Nothing is
//! allocated per frame.
//!
//! # Memory
//!
//! A histogram tracks 1 µs to 10 s at 2 significant digits (values within
//! 1 % of each other are not told apart; sojourns above 10 s are recorded
//! as 10 s): 2,304 `u32` counts, about 9.2 KiB. Every class has one per
//! direction, so a circuit takes about 18.5 KiB: 10,000 circuits about
//! 185 MB. [`stats_bytes`] computes it for a plan, and the engine refuses
//! a plan above [`MAX_STATS_BYTES`] before allocating any of it.

use super::slots::Rearrange;
use crate::plan::Dir;
use crate::validate::Checked;
use hdrhistogram::Histogram;

/// The rate's window, ns.
pub const RATE_WINDOW_NS: u64 = 1_000_000_000;
/// The delay percentiles' window, ns.
pub const DELAY_WINDOW_NS: u64 = 10_000_000_000;
/// The smallest delay told apart from zero, µs.
pub const DELAY_LOW_US: u64 = 1;
/// The largest delay recorded as itself, µs (larger ones count as it).
pub const DELAY_HIGH_US: u64 = 10_000_000;
/// Significant decimal digits of the recorded delays.
pub const DELAY_DIGITS: u8 = 2;
/// Classes (per direction, circuits and nodes) the loop's sweep looks at
/// per turn. A class already rolled costs a comparison; one to roll, its
/// percentiles (a pass over its histogram) and a reset, a few
/// microseconds: 256 keep a turn's worst case near a millisecond, and an
/// idle loop, which turns at least ten times a second, still rolls
/// 20,000 classes within a window.
pub const SWEEP_PER_TURN: usize = 256;
/// The shortest time between two sweeps: a busy loop turns far more
/// often than needed (256 classes a millisecond roll 20,000 classes in
/// under a tenth of a second).
pub const SWEEP_EVERY_NS: u64 = 1_000_000;
/// The most memory the statistics' histograms may take, bytes: the
/// plan's maxima (100,000 circuits and 10,000 nodes) fit, and a machine
/// shaping that many subscribers has it; a bound all the same, checked
/// before allocating.
pub const MAX_STATS_BYTES: u64 = 2 << 30;

/// Percentiles of one window, µs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Quantiles {
    /// Frames measured.
    pub samples: u64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Largest.
    pub max: u64,
}

fn histogram() -> Histogram<u32> {
    // Constant, valid bounds: low ≥ 1, high ≥ 2·low, digits ≤ 5.
    Histogram::new_with_bounds(DELAY_LOW_US, DELAY_HIGH_US, DELAY_DIGITS)
        .expect("constant histogram bounds are valid")
}

/// Bytes one class-direction's histogram takes.
pub fn histogram_bytes() -> u64 {
    let counts = histogram().distinct_values() as u64;
    counts * 4 + std::mem::size_of::<Histogram<u32>>() as u64
}

/// The bytes the statistics of a plan take: a histogram per direction
/// for every circuit, node, the default class and the unshaped frames.
pub fn stats_bytes(c: &Checked) -> u64 {
    let classes = c.plan.circuits.len() as u64 + c.plan.nodes.len() as u64 + 2;
    classes * 2 * (histogram_bytes() + std::mem::size_of::<Class>() as u64)
}

/// The percentiles of `h`.
pub fn quantiles(h: &Histogram<u32>) -> Quantiles {
    if h.is_empty() {
        return Quantiles::default();
    }
    let mut q = h.value_at_quantiles([0.5, 0.9, 0.99]);
    Quantiles {
        samples: h.len(),
        p50: q.next().unwrap_or(0),
        p90: q.next().unwrap_or(0),
        p99: q.next().unwrap_or(0),
        max: h.max(),
    }
}

/// The windows a time falls in: computed once per frame for the
/// circuit and all its ancestors.
#[derive(Clone, Copy, Debug)]
struct Epochs {
    rate: u64,
    delay: u64,
}

impl Epochs {
    fn at(now_ns: u64) -> Self {
        Epochs {
            rate: now_ns / RATE_WINDOW_NS,
            delay: now_ns / DELAY_WINDOW_NS,
        }
    }
}

/// One class's rate and delays in one direction.
#[derive(Clone, Debug)]
pub struct Class {
    rate_epoch: u64,
    rate_now: u64,
    rate_last: u64,
    delay_epoch: u64,
    delay: Histogram<u32>,
    delay_last: Quantiles,
}

impl Class {
    fn new() -> Self {
        Self::with(histogram())
    }

    fn with(delay: Histogram<u32>) -> Self {
        Class {
            rate_epoch: 0,
            rate_now: 0,
            rate_last: 0,
            delay_epoch: 0,
            delay,
            delay_last: Quantiles::default(),
        }
    }

    /// A class that only holds a place for a moment during a reload
    /// (its histogram as small as one can be).
    fn stand_in() -> Self {
        Self::with(Histogram::new_with_bounds(1, 2, 0).unwrap_or_else(|_| histogram()))
    }

    fn roll_at(&mut self, at: Epochs) {
        let e = at.rate;
        if e != self.rate_epoch {
            self.rate_last = if e == self.rate_epoch + 1 {
                self.rate_now
            } else {
                0
            };
            self.rate_now = 0;
            self.rate_epoch = e;
        }
        let e = at.delay;
        if e != self.delay_epoch {
            self.delay_last = if e == self.delay_epoch + 1 {
                quantiles(&self.delay)
            } else {
                Quantiles::default()
            };
            self.delay.reset();
            self.delay_epoch = e;
        }
    }

    /// Counts a frame of `len` bytes sent at `now_ns` after `sojourn_ns`
    /// queued.
    pub fn sent(&mut self, now_ns: u64, len: u32, sojourn_ns: u64) {
        self.sent_at(Epochs::at(now_ns), len, sojourn_ns);
    }

    fn sent_at(&mut self, at: Epochs, len: u32, sojourn_ns: u64) {
        self.roll_at(at);
        self.rate_now += u64::from(len);
        self.delay.saturating_record(sojourn_ns / 1000);
    }

    /// Only the delay of a frame sent (a node's, whose rate is its
    /// circuits' sum).
    fn delayed(&mut self, at: Epochs, sojourn_ns: u64) {
        self.roll_at(at);
        self.delay.saturating_record(sojourn_ns / 1000);
    }

    /// The rate (bit/s) of the last complete rate window before `now_ns`.
    pub fn rate(&self, now_ns: u64) -> u64 {
        let e = now_ns / RATE_WINDOW_NS;
        let bytes = if e == self.rate_epoch {
            self.rate_last
        } else if e == self.rate_epoch + 1 {
            self.rate_now
        } else {
            0
        };
        bytes * 8 * 1_000_000_000 / RATE_WINDOW_NS
    }

    /// The delays of the last complete delay window before `now_ns`.
    pub fn delays(&self, now_ns: u64) -> Quantiles {
        let e = now_ns / DELAY_WINDOW_NS;
        if e == self.delay_epoch {
            self.delay_last
        } else if e == self.delay_epoch + 1 {
            quantiles(&self.delay)
        } else {
            Quantiles::default()
        }
    }
}

/// Rates and delays of every class, both directions, and the arrival
/// time of every frame held in the pool.
#[derive(Debug)]
pub struct Watch {
    /// Per direction: circuits, then the default class (if any), then the
    /// unshaped frames (the engine's leaf order, and one more).
    pub leaves: [Vec<Class>; 2],
    /// Per direction, per plan node.
    pub nodes: [Vec<Class>; 2],
    /// Each leaf's parent node (plan index), `None`: the root.
    pub leaf_parent: Vec<Option<usize>>,
    /// Each node's parent node.
    pub node_parent: Vec<Option<usize>>,
    arrival: Vec<u64>,
    /// The sweep's position: direction, then leaves before nodes.
    cursor: usize,
    /// No sweep before this time.
    next_sweep_ns: u64,
}

/// Why the statistics cannot be kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatsTooLarge {
    /// What they would take, bytes.
    pub bytes: u64,
}

impl std::fmt::Display for StatsTooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the statistics would take {} bytes, above the limit of {MAX_STATS_BYTES} \
             (a delay histogram of {} bytes per circuit, node and direction)",
            self.bytes,
            histogram_bytes()
        )
    }
}

impl std::error::Error for StatsTooLarge {}

fn side(d: Dir) -> usize {
    match d {
        Dir::Download => 0,
        Dir::Upload => 1,
    }
}

/// A reload's change to the statistics, prepared off the loop: the
/// slots that change ([`Rearrange`]; the leaves' includes the unshaped
/// frames' class, always the last) and the classes they need, with
/// histograms only for the new classes.
#[derive(Debug)]
pub struct WatchEdit {
    leaves: Rearrange,
    nodes: Rearrange,
    fresh: Vec<Class>,
    stand_ins: Vec<Class>,
    retired: Vec<Class>,
    leaf_parent: Vec<Option<usize>>,
    node_parent: Vec<Option<usize>>,
}

impl WatchEdit {
    /// The change to the statistics of plan `c` (arranged by slot):
    /// `leaves` (circuits, the default class, the unshaped frames) and
    /// `nodes` say which slots change; refused above
    /// [`MAX_STATS_BYTES`], before allocating.
    pub fn new(c: &Checked, leaves: Rearrange, nodes: Rearrange) -> Result<Self, StatsTooLarge> {
        let bytes = stats_bytes(c);
        if bytes > MAX_STATS_BYTES {
            return Err(StatsTooLarge { bytes });
        }
        let adds = 2 * (leaves.adds.len() + nodes.adds.len());
        let all = 2 * (leaves.fresh_count() + nodes.fresh_count());
        let mut leaf_parent = c.circuit_parent.clone();
        if c.plan.default_class.is_some() {
            leaf_parent.push(c.default_parent);
        }
        leaf_parent.push(None);
        Ok(WatchEdit {
            fresh: (0..adds).map(|_| Class::new()).collect(),
            stand_ins: (0..all - adds).map(|_| Class::stand_in()).collect(),
            retired: Vec::with_capacity(all + 2 * (leaves.removed.len() + nodes.removed.len())),
            leaves,
            nodes,
            leaf_parent,
            node_parent: c.node_parent.clone(),
        })
    }
}

impl Watch {
    /// The statistics of a plan whose engine's pool has `slots` slots;
    /// refused above [`MAX_STATS_BYTES`], before allocating.
    pub fn new(c: &Checked, slots: u32) -> Result<Self, StatsTooLarge> {
        let bytes = stats_bytes(c);
        if bytes > MAX_STATS_BYTES {
            return Err(StatsTooLarge { bytes });
        }
        let mut leaf_parent = c.circuit_parent.clone();
        if c.plan.default_class.is_some() {
            leaf_parent.push(c.default_parent);
        }
        // The unshaped frames: under no node.
        leaf_parent.push(None);
        let make = |n: usize| (0..n).map(|_| Class::new()).collect::<Vec<_>>();
        Ok(Watch {
            leaves: [make(leaf_parent.len()), make(leaf_parent.len())],
            nodes: [make(c.plan.nodes.len()), make(c.plan.nodes.len())],
            node_parent: c.node_parent.clone(),
            leaf_parent,
            arrival: vec![0; slots as usize],
            cursor: 0,
            next_sweep_ns: 0,
        })
    }

    /// Applies a reload's change (see [`WatchEdit`]): the classes that
    /// stay keep their slots, windows and histograms; new ones start
    /// empty; what goes stays in `e`, to be freed off the loop. The
    /// arrival times stay (the frames in the pool stay). O(changes).
    pub fn edit(&mut self, e: &mut WatchEdit) {
        let WatchEdit {
            leaves,
            nodes,
            fresh,
            stand_ins,
            retired,
            leaf_parent,
            node_parent,
        } = e;
        let mut take = |add: Option<u32>| {
            let pool = if add.is_some() {
                &mut *fresh
            } else {
                &mut *stand_ins
            };
            pool.pop().unwrap_or_else(Class::stand_in)
        };
        for d in 0..2 {
            leaves.apply(&mut self.leaves[d], &mut take, |c| retired.push(c));
            nodes.apply(&mut self.nodes[d], &mut take, |c| retired.push(c));
        }
        std::mem::swap(&mut self.leaf_parent, leaf_parent);
        std::mem::swap(&mut self.node_parent, node_parent);
        let per_dir = self.leaves[0].len() + self.nodes[0].len();
        if self.cursor >= 2 * per_dir {
            self.cursor = 0;
        }
    }

    /// Rolls the windows of up to `budget` classes, continuing where the
    /// last sweep stopped; at most once per [`SWEEP_EVERY_NS`].
    pub fn sweep(&mut self, now_ns: u64, budget: usize) {
        if now_ns < self.next_sweep_ns {
            return;
        }
        self.next_sweep_ns = now_ns + SWEEP_EVERY_NS;
        let at = Epochs::at(now_ns);
        let per_dir = self.leaves[0].len() + self.nodes[0].len();
        let total = 2 * per_dir;
        for _ in 0..budget.min(total) {
            let i = self.cursor;
            self.cursor = (i + 1) % total;
            let (d, k) = (i / per_dir, i % per_dir);
            let class = match k.checked_sub(self.leaves[d].len()) {
                None => &mut self.leaves[d][k],
                Some(n) => &mut self.nodes[d][n],
            };
            class.roll_at(at);
        }
    }

    /// The index of the unshaped frames' class.
    pub fn unshaped(&self) -> usize {
        self.leaf_parent.len() - 1
    }

    /// A frame entered pool slot `slot` at `now_ns`.
    pub fn arrived(&mut self, slot: u32, now_ns: u64) {
        if let Some(a) = self.arrival.get_mut(slot as usize) {
            *a = now_ns;
        }
    }

    /// The frame in `slot` of `len` bytes, of leaf `leaf` (the unshaped
    /// class: [`Self::unshaped`]), was sent at `now_ns`.
    pub fn sent(&mut self, dir: Dir, leaf: usize, slot: u32, len: u32, now_ns: u64) {
        let since = self.arrival.get(slot as usize).copied().unwrap_or(now_ns);
        let sojourn = now_ns.saturating_sub(since);
        let d = side(dir);
        let at = Epochs::at(now_ns);
        if let Some(c) = self.leaves[d].get_mut(leaf) {
            c.sent_at(at, len, sojourn);
        }
        let mut up = self.leaf_parent.get(leaf).copied().flatten();
        while let Some(n) = up {
            self.nodes[d][n].delayed(at, sojourn);
            up = self.node_parent[n];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The model's percentile: the smallest sample with at least
    /// `q · n` samples at or below it.
    fn model(sorted: &[u64], q: f64) -> u64 {
        let rank = ((q * sorted.len() as f64).ceil() as usize).max(1);
        sorted[rank - 1]
    }

    proptest! {
        /// The histogram's percentiles are the sorted list's, within the
        /// histogram's resolution (the same value up to 1 %).
        #[test]
        fn percentiles_match_a_sorted_list(mut v in proptest::collection::vec(1u64..5_000_000, 1..2000)) {
            let mut h = histogram();
            for &x in &v {
                h.saturating_record(x);
            }
            v.sort_unstable();
            let q = quantiles(&h);
            prop_assert_eq!(q.samples, v.len() as u64);
            for (got, want) in [(q.p50, model(&v, 0.5)), (q.p90, model(&v, 0.9)),
                                (q.p99, model(&v, 0.99)), (q.max, *v.last().unwrap())] {
                prop_assert!(h.equivalent(got, want), "got {got}, want {want}");
                prop_assert!(got >= want && got <= want + want / 100 + 1, "got {got}, want {want}");
            }
        }
    }

    #[test]
    fn the_rate_and_delays_are_those_of_the_last_complete_window() {
        let mut c = Class::new();
        let s = RATE_WINDOW_NS;
        // 1250 bytes in the first second: 10 kbit/s, shown during the next.
        for k in 0..10 {
            c.sent(k * s / 10, 125, 1_000_000);
        }
        assert_eq!(c.rate(s / 2), 0);
        assert_eq!(c.rate(s + s / 2), 10_000);
        // Nothing in the second second.
        assert_eq!(c.rate(2 * s + 1), 0);
        let d = DELAY_WINDOW_NS;
        assert_eq!(c.delays(d / 2).samples, 0);
        let q = c.delays(d + 1);
        // 1 ms within the histogram's 1 %.
        assert_eq!(q.samples, 10);
        assert!((1000..=1010).contains(&q.p50), "{q:?}");
        // Rolled by a frame in the next window: the same answer.
        c.sent(d + 2, 100, 0);
        assert_eq!(c.delays(d + 3), q);
        assert_eq!(c.delays(3 * d).samples, 0);
    }

    #[test]
    fn a_node_sees_the_delays_of_its_subtree() {
        use super::super::test_plan::{checked, circuit, node, plan};
        let mut p = plan(10_000_000);
        node(&mut p, "n", None, 5_000_000, None);
        circuit(&mut p, "a", Some("n"), None, 1_000_000, None);
        circuit(&mut p, "b", None, None, 1_000_000, None);
        let c = checked(p);
        let mut w = Watch::new(&c, 4).unwrap();
        w.arrived(0, 0);
        w.sent(Dir::Download, 0, 0, 100, 2_000_000);
        w.arrived(1, 0);
        w.sent(Dir::Download, 1, 1, 100, 3_000_000);
        let later = DELAY_WINDOW_NS + 1;
        assert!((2000..=2020).contains(&w.nodes[0][0].delays(later).p50));
        assert_eq!(w.nodes[0][0].delays(later).samples, 1);
        assert_eq!(w.nodes[1][0].delays(later).samples, 0);
        assert!((3000..=3030).contains(&w.leaves[0][1].delays(later).p50));
    }

    #[test]
    fn the_sweep_rolls_quiet_classes_a_few_at_a_time_and_not_too_often() {
        use super::super::test_plan::{checked, circuit, plan};
        let mut p = plan(10_000_000);
        for k in 0..10 {
            circuit(&mut p, &format!("c{k}"), None, None, 1_000_000, None);
        }
        let mut w = Watch::new(&checked(p), 4).unwrap();
        for l in 0..10 {
            w.sent(Dir::Download, l, 0, 100, 1_000);
        }
        let end = DELAY_WINDOW_NS;
        let rolled = |w: &Watch| w.leaves[0].iter().filter(|c| c.delay_epoch == 1).count();
        // 11 leaves (10 circuits, the unshaped class) per direction.
        w.sweep(end, 4);
        assert_eq!(rolled(&w), 4);
        w.sweep(end + 1, 4);
        assert_eq!(
            rolled(&w),
            4,
            "a second sweep within a millisecond does nothing"
        );
        w.sweep(end + SWEEP_EVERY_NS, 8);
        assert_eq!(rolled(&w), 11);
        // What a snapshot reads is the same, rolled or not.
        assert!(w.leaves[0]
            .iter()
            .take(10)
            .all(|c| c.delays(end + 2 * SWEEP_EVERY_NS).samples == 1));
    }

    #[test]
    fn the_memory_check_comes_first() {
        assert!(histogram_bytes() > 9000 && histogram_bytes() < 10_000);
        // The plan's maxima fit.
        let most = (crate::limits::MAX_CIRCUITS + crate::limits::MAX_NODES + 2) as u64;
        assert!(
            most * 2 * (histogram_bytes() + std::mem::size_of::<Class>() as u64) <= MAX_STATS_BYTES
        );
    }
}
