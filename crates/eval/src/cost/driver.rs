//! The cost controller (seed 003 §7 Fig. 9, seed 000 §8 "test environment"):
//! it alternates an enqueue phase, taking packet buffers from a pre-allocated
//! free list until the total backlog reaches `high`, and a dequeue phase,
//! returning them to the free list until the backlog falls to `low`.
//!
//! The hot path is cheap on purpose, since its cost is part of every figure:
//! no allocation, no hashing, no floating point; `smooth` does no per-packet
//! bookkeeping at all, `bursty` draws two random numbers per *burst* (a
//! SplitMix64 step), and the least-backlogged choice of `small`/`large`/
//! `full`/`alternate` is dummynet's O(1) scheme: one intrusive list per
//! backlog level plus a bitmask of non-empty levels.

use super::target::{BenchPacket, CostTarget};
use crate::traffic::{FlowPick, Thresholds};

const NIL: u32 = u32::MAX;

/// One flow's node in the backlog-level lists.
#[derive(Clone, Copy)]
struct LevelNode {
    prev: u32,
    next: u32,
    level: u32,
}

/// Levels tracked by [`LevelLists`]: backlogs `0..=63`.
const LEVELS: usize = 64;

/// Flows bucketed by backlog (0..=cap), FIFO within a level, with a bitmask
/// of the non-empty levels: "least backlogged below the cap" is one
/// `trailing_zeros`. Fixed-size head/tail arrays indexed by `level & 63`
/// keep the hot path free of bounds checks.
struct LevelLists {
    nodes: Vec<LevelNode>,
    head: [u32; LEVELS],
    tail: [u32; LEVELS],
    /// Bit `l` set iff level `l` holds a flow.
    mask: u64,
    /// Levels a flow may be taken from: `0..cap`.
    below_cap: u64,
}

impl LevelLists {
    fn new(n: u32, cap: u32) -> Self {
        let cap = cap.min(LEVELS as u32 - 1);
        let mut l = Self {
            nodes: vec![
                LevelNode {
                    prev: NIL,
                    next: NIL,
                    level: 0
                };
                n as usize
            ],
            head: [NIL; LEVELS],
            tail: [NIL; LEVELS],
            mask: 0,
            below_cap: (1u64 << cap) - 1,
        };
        for f in 0..n {
            l.push_tail(f, 0);
        }
        l
    }

    #[inline(always)]
    fn push_tail(&mut self, f: u32, level: u32) {
        let lv = level as usize & (LEVELS - 1);
        let t = self.tail[lv];
        if let Some(node) = self.nodes.get_mut(f as usize) {
            *node = LevelNode {
                prev: t,
                next: NIL,
                level: lv as u32,
            };
        }
        if t == NIL {
            self.head[lv] = f;
            self.mask |= 1 << lv;
        } else if let Some(node) = self.nodes.get_mut(t as usize) {
            node.next = f;
        }
        self.tail[lv] = f;
    }

    /// Unlinks `f` and returns its level.
    #[inline(always)]
    fn unlink(&mut self, f: u32) -> u32 {
        let Some(&LevelNode { prev, next, level }) = self.nodes.get(f as usize) else {
            return 0;
        };
        let lv = level as usize & (LEVELS - 1);
        match self.nodes.get_mut(prev as usize) {
            Some(p) => p.next = next,
            None => self.head[lv] = next,
        }
        match self.nodes.get_mut(next as usize) {
            Some(n) => n.prev = prev,
            None => self.tail[lv] = prev,
        }
        if next == NIL && prev == NIL {
            self.mask &= !(1 << lv);
        }
        level
    }

    /// Takes the least backlogged flow below the cap and counts one more
    /// packet for it.
    #[inline(always)]
    fn take_least(&mut self) -> Option<u32> {
        let m = self.mask & self.below_cap;
        if m == 0 {
            return None;
        }
        let level = m.trailing_zeros();
        let f = self.head[level as usize & (LEVELS - 1)];
        self.unlink(f);
        self.push_tail(f, level + 1);
        Some(f)
    }

    /// Counts one packet less for `f`.
    #[inline(always)]
    fn release(&mut self, f: u32) {
        let level = self.unlink(f);
        self.push_tail(f, level.saturating_sub(1));
    }

    fn level(&self, f: u32) -> u32 {
        self.nodes[f as usize].level
    }
}

/// SplitMix64: one multiply-xorshift step per draw, good enough to pick
/// flows and burst sizes, and deterministic.
#[derive(Clone)]
struct SplitMix64(u64);

impl SplitMix64 {
    #[inline(always)]
    fn next(&mut self) -> u64 {
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

/// Counters kept by the controller (cheap: a few adds per packet).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DriverStats {
    /// Packets accepted by the target.
    pub enqueued: u64,
    /// Packets the target returned.
    pub dequeued: u64,
    /// Packets the target refused (always 0 with the harness's capacities).
    pub refused: u64,
    /// Dequeue phases that found the target empty before `low`.
    pub underruns: u64,
    /// Largest total backlog seen at the end of an enqueue phase.
    pub max_backlog: u64,
}

/// The controller: flow choice, thresholds, free list and counters.
pub struct Driver {
    th: Thresholds,
    n: u32,
    /// Every flow has this packet length, or 0 when lengths differ.
    uniform_len: u32,
    lens: Vec<u32>,
    weights: Vec<u32>,
    /// Free buffer indices (a stack, pre-allocated to `high` entries).
    free: Vec<u32>,
    total: u64,
    stats: DriverStats,
    cursor: u32,
    /// Backlog levels (empty unless the pattern picks the least backlogged).
    levels: LevelLists,
    rng: SplitMix64,
    not_full: Vec<u32>,
    fill: Vec<u32>,
}

impl Driver {
    /// A controller for flows with these `(weight, packet length)` pairs.
    pub fn new(th: Thresholds, flows: &[(u32, u32)], seed: u64) -> Self {
        let n = flows.len() as u32;
        let lens: Vec<u32> = flows.iter().map(|f| f.1).collect();
        let uniform_len = match lens.first() {
            Some(&l) if lens.iter().all(|&x| x == l) => l,
            _ => 0,
        };
        let bursty = th.pick == FlowPick::Bursty;
        Self {
            th,
            n,
            uniform_len,
            lens,
            weights: flows.iter().map(|f| f.0.max(1)).collect(),
            // Popped from the end: buffer 0 is handed out first.
            free: (0..th.high as u32).rev().collect(),
            total: 0,
            stats: DriverStats::default(),
            cursor: 0,
            levels: LevelLists::new(
                if th.pick == FlowPick::Least { n } else { 0 },
                th.per_flow_cap,
            ),
            rng: SplitMix64(seed),
            not_full: if bursty {
                Vec::with_capacity(n as usize)
            } else {
                Vec::new()
            },
            fill: if bursty {
                vec![0; n as usize]
            } else {
                Vec::new()
            },
        }
    }

    /// The thresholds.
    pub fn thresholds(&self) -> Thresholds {
        self.th
    }

    /// Packets the controller believes are queued.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The counters.
    pub fn stats(&self) -> DriverStats {
        self.stats
    }

    /// The backlog of `flow` as the least-backlogged lists track it.
    pub fn tracked_backlog(&self, flow: u32) -> Option<u32> {
        (self.th.pick == FlowPick::Least).then(|| self.levels.level(flow))
    }

    #[inline(always)]
    fn len_of(&self, flow: u32) -> u32 {
        if self.uniform_len != 0 {
            self.uniform_len
        } else {
            self.lens[flow as usize]
        }
    }

    /// Sends one packet of `flow`; false if it was refused.
    #[inline(always)]
    fn send<T: CostTarget>(&mut self, t: &mut T, flow: u32) -> bool {
        let Some(id) = self.free.pop() else {
            return self.refuse(None);
        };
        let packet = BenchPacket {
            len: self.len_of(flow),
            id,
        };
        match t.push(flow, packet) {
            Ok(()) => {
                self.total += 1;
                self.stats.enqueued += 1;
                true
            }
            Err(p) => self.refuse(Some(p.id)),
        }
    }

    #[cold]
    fn refuse(&mut self, id: Option<u32>) -> bool {
        if let Some(id) = id {
            self.free.push(id);
        }
        self.stats.refused += 1;
        false
    }

    /// Enqueues until the backlog reaches `high` (or no flow may take more).
    pub fn enqueue_phase<T: CostTarget>(&mut self, t: &mut T) {
        match self.th.pick {
            FlowPick::Cyclic => self.fill_cyclic(t),
            FlowPick::Least => self.fill_least(t),
            FlowPick::Bursty => self.fill_bursty(t),
        };
        self.stats.max_backlog = self.stats.max_backlog.max(self.total);
    }

    /// Dequeues until the backlog falls to `low`, returning every buffer to
    /// the free list.
    pub fn dequeue_phase<T: CostTarget>(&mut self, t: &mut T) {
        if self.th.pick == FlowPick::Least {
            self.drain_to_low::<T, true>(t);
        } else {
            self.drain_to_low::<T, false>(t);
        }
    }

    /// Backlogs are all 0 when this starts (low = 0), so cycling through
    /// the flows *is* the least-backlogged fill of seed 000 §8.
    #[inline(always)]
    fn fill_cyclic<T: CostTarget>(&mut self, t: &mut T) -> u64 {
        let before = self.total;
        while self.total < self.th.high {
            let f = self.cursor;
            self.cursor = if f + 1 == self.n { 0 } else { f + 1 };
            if !self.send(t, f) {
                break;
            }
        }
        self.total - before
    }

    #[inline(always)]
    fn fill_least<T: CostTarget>(&mut self, t: &mut T) -> u64 {
        let before = self.total;
        while self.total < self.th.high {
            let Some(f) = self.levels.take_least() else {
                break;
            };
            if !self.send(t, f) {
                self.levels.release(f);
                break;
            }
        }
        self.total - before
    }

    fn fill_bursty<T: CostTarget>(&mut self, t: &mut T) -> u64 {
        // The dequeue phase drains to 0, so every phase starts empty.
        let before = self.total;
        let cap = self.th.per_flow_cap;
        self.not_full.clear();
        self.not_full.extend(0..self.n);
        self.fill.iter_mut().for_each(|c| *c = 0);
        while self.total < self.th.high && !self.not_full.is_empty() {
            let r = self.rng.next();
            let i = scale(r as u32, self.not_full.len() as u64) as usize;
            let f = self.not_full[i];
            let w = u64::from(self.weights[f as usize]);
            let burst = 1 + scale((r >> 32) as u32, 16 * w);
            let room = u64::from(cap - self.fill[f as usize]);
            let burst = burst.min(room).min(self.th.high - self.total);
            let mut sent = 0;
            while sent < burst && self.send(t, f) {
                sent += 1;
            }
            self.fill[f as usize] += sent as u32;
            if sent < burst {
                break;
            }
            if self.fill[f as usize] >= cap {
                self.not_full.swap_remove(i);
            }
        }
        self.total - before
    }

    #[inline(always)]
    fn drain_to_low<T: CostTarget, const TRACK: bool>(&mut self, t: &mut T) -> u64 {
        let before = self.total;
        while self.total > self.th.low {
            let Some((flow, packet)) = t.pop() else {
                self.stats.underruns += 1;
                break;
            };
            self.free.push(packet.id);
            if TRACK {
                self.levels.release(flow);
            }
            self.total -= 1;
        }
        let n = before - self.total;
        self.stats.dequeued += n;
        n
    }

    /// Runs whole enqueue+dequeue cycles until at least `pairs` packets were
    /// enqueued; returns how many were. This is the measured region; the
    /// pattern is matched once, outside the per-cycle loop.
    #[inline(never)]
    pub fn measured_region<T: CostTarget>(&mut self, t: &mut T, pairs: u64) -> u64 {
        let start = self.stats.enqueued;
        macro_rules! cycles {
            ($fill:ident, $track:literal) => {
                loop {
                    let moved = self.$fill(t) + self.drain_to_low::<T, $track>(t);
                    if self.stats.enqueued - start >= pairs || moved == 0 {
                        break;
                    }
                }
            };
        }
        match self.th.pick {
            FlowPick::Cyclic => cycles!(fill_cyclic, false),
            FlowPick::Least => cycles!(fill_least, true),
            FlowPick::Bursty => cycles!(fill_bursty, false),
        }
        self.stats.enqueued - start
    }

    /// Dequeues everything still queued (outside the measured region).
    pub fn drain<T: CostTarget>(&mut self, t: &mut T) {
        while let Some((flow, packet)) = t.pop() {
            self.free.push(packet.id);
            if self.th.pick == FlowPick::Least {
                self.levels.release(flow);
            }
            self.total = self.total.saturating_sub(1);
            self.stats.dequeued += 1;
        }
    }
}
