//! The cost loop (the QFQ paper §7 Fig. 9, the QFQ+ paper §8 "test environment"),
//! run on the one traffic controller ([`crate::traffic::controller`], in
//! its timed mode): the controller picks flows and counts the backlog; this
//! module adds what only the timed loop needs, a pre-allocated free list of
//! packet buffers (taken in the enqueue phase until the backlog reaches
//! `high`, returned in the dequeue phase until it falls to `low`) and
//! counters.
//!
//! The hot path is cheap on purpose, since its cost is part of every figure:
//! no allocation, no hashing, no floating point; `smooth` does no per-packet
//! bookkeeping at all, `bursty` draws one SplitMix64 step per *burst*, and
//! the least-backlogged choice of `small`/`large`/`full`/`alternate` is
//! dummynet's O(1) scheme ([`crate::traffic::levels`]). The pattern is
//! matched once per measured run, and the controller's fill loops are
//! inlined with this module's per-packet hook (the buffer sender), so the
//! timed region compiles to one loop per pattern.

use super::target::{BenchPacket, CostTarget};
use crate::traffic::{
    ControllerError, Emit, FlowPick, SplitMix64, Thresholds, TimedController, Unlimited,
};

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

/// The timed loop: the controller, the free list and counters.
pub struct Driver {
    th: Thresholds,
    ctl: TimedController,
    buffers: Buffers,
}

/// What the timed loop's per-packet hook works on.
struct Buffers {
    /// Every flow has this packet length, or 0 when lengths differ.
    uniform_len: u32,
    lens: Vec<u32>,
    /// Free buffer indices (a stack, pre-allocated to `high` entries).
    free: Vec<u32>,
    stats: DriverStats,
}

impl Buffers {
    #[inline(always)]
    fn len_of(&self, flow: u32) -> u32 {
        if self.uniform_len != 0 {
            self.uniform_len
        } else {
            self.lens[flow as usize]
        }
    }

    /// Sends one packet of `flow` to `t` in a buffer from the free list;
    /// false if it was refused. The packets accepted are counted once per
    /// phase, from what the controller's fill returns.
    #[inline(always)]
    fn send<T: CostTarget>(&mut self, t: &mut T, flow: u32) -> bool {
        let Some(id) = self.free.pop() else {
            return self.refuse(None);
        };
        let len = self.len_of(flow);
        match t.push(flow, BenchPacket { len, id }) {
            Ok(()) => true,
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
}

/// The timed loop's per-packet hook: the buffers and the target.
struct Sender<'a, T> {
    buffers: &'a mut Buffers,
    target: &'a mut T,
}

impl<T: CostTarget> Emit<SplitMix64> for Sender<'_, T> {
    #[inline(always)]
    fn packet(&mut self, flow: u32, _: &mut SplitMix64) -> bool {
        self.buffers.send(self.target, flow)
    }

    /// A burst: the packet length looked up once.
    #[inline(always)]
    fn burst(&mut self, flow: u32, n: u64, _: &mut SplitMix64) -> u64 {
        let b = &mut *self.buffers;
        let len = b.len_of(flow);
        let mut sent = 0;
        while sent < n {
            let Some(id) = b.free.pop() else {
                b.refuse(None);
                break;
            };
            if let Err(p) = self.target.push(flow, BenchPacket { len, id }) {
                b.refuse(Some(p.id));
                break;
            }
            sent += 1;
        }
        sent
    }
}

/// One enqueue phase of the controller with the given pick, every packet
/// through [`Sender`]; returns the packets accepted.
macro_rules! enqueue {
    ($self:ident, $t:ident, $fill:ident) => {
        $self.ctl.$fill(
            &mut Unlimited,
            Sender {
                buffers: &mut $self.buffers,
                target: $t,
            },
        )
    };
}

impl Driver {
    /// A controller for flows with these `(weight, packet length)` pairs;
    /// refuses thresholds the timed controller cannot run
    /// ([`TimedController::timed`]).
    pub fn new(th: Thresholds, flows: &[(u32, u32)], seed: u64) -> Result<Self, ControllerError> {
        let lens: Vec<u32> = flows.iter().map(|f| f.1).collect();
        let uniform_len = match lens.first() {
            Some(&l) if lens.iter().all(|&x| x == l) => l,
            _ => 0,
        };
        let weights: Vec<u32> = flows.iter().map(|f| f.0).collect();
        Ok(Self {
            th,
            ctl: TimedController::timed(th, &weights, seed)?,
            buffers: Buffers {
                uniform_len,
                lens,
                // Popped from the end: buffer 0 is handed out first.
                free: (0..th.high as u32).rev().collect(),
                stats: DriverStats::default(),
            },
        })
    }

    /// The thresholds.
    pub fn thresholds(&self) -> Thresholds {
        self.th
    }

    /// Packets the controller believes are queued.
    pub fn total(&self) -> u64 {
        self.ctl.total()
    }

    /// The counters.
    pub fn stats(&self) -> DriverStats {
        self.buffers.stats
    }

    /// The backlog of `flow` as the least-backlogged lists track it.
    pub fn tracked_backlog(&self, flow: u32) -> Option<u32> {
        if self.th.pick == FlowPick::Least {
            self.ctl.backlog(flow)
        } else {
            None
        }
    }

    /// Enqueues until the backlog reaches `high` (or no flow may take more).
    pub fn enqueue_phase<T: CostTarget>(&mut self, t: &mut T) {
        self.buffers.stats.enqueued += match self.th.pick {
            FlowPick::Cyclic => enqueue!(self, t, fill_cyclic),
            FlowPick::Least => enqueue!(self, t, fill_least),
            FlowPick::Bursty => enqueue!(self, t, fill_bursty),
        };
        self.buffers.stats.max_backlog = self.buffers.stats.max_backlog.max(self.ctl.total());
    }

    /// Dequeues until the backlog falls to `low`, returning every buffer to
    /// the free list.
    pub fn dequeue_phase<T: CostTarget>(&mut self, t: &mut T) {
        self.buffers.stats.dequeued += if self.th.pick == FlowPick::Least {
            self.drain_to_low::<T, true>(t)
        } else {
            self.drain_to_low::<T, false>(t)
        };
    }

    /// Dequeues until the backlog falls to `low`; returns how many packets
    /// it took (the caller counts them).
    #[inline(always)]
    fn drain_to_low<T: CostTarget, const TRACK: bool>(&mut self, t: &mut T) -> u64 {
        let before = self.ctl.total();
        while self.ctl.total() > self.th.low {
            let Some((flow, packet)) = t.pop() else {
                self.buffers.stats.underruns += 1;
                break;
            };
            self.buffers.free.push(packet.id);
            self.ctl.dequeued::<TRACK>(flow);
        }
        before - self.ctl.total()
    }

    /// Runs whole enqueue+dequeue cycles until at least `pairs` packets were
    /// enqueued; returns how many were. This is the measured region; the
    /// pattern is matched once, outside the per-cycle loop, and the packets
    /// moved are counted once at the end.
    #[inline(never)]
    pub fn measured_region<T: CostTarget>(&mut self, t: &mut T, pairs: u64) -> u64 {
        let queued_before = self.ctl.total();
        let mut enqueued = 0u64;
        macro_rules! cycles {
            ($enqueue:expr, $track:literal) => {
                loop {
                    let sent = $enqueue;
                    let got = self.drain_to_low::<T, $track>(t);
                    enqueued += sent;
                    if enqueued >= pairs || sent + got == 0 {
                        break;
                    }
                }
            };
        }
        match self.th.pick {
            FlowPick::Cyclic => cycles!(enqueue!(self, t, fill_cyclic), false),
            FlowPick::Least => cycles!(enqueue!(self, t, fill_least), true),
            FlowPick::Bursty => cycles!(self.bursty_phase(t), false),
        }
        self.buffers.stats.enqueued += enqueued;
        // What went in and is no longer queued came out.
        self.buffers.stats.dequeued += queued_before + enqueued - self.ctl.total();
        enqueued
    }

    /// The bursty enqueue phase in a function of its own: its two nested
    /// loops (bursts, packets of a burst) keep their counters in registers
    /// only when not inlined into the cycle loop, and the call is once per
    /// phase of `30·N` packets.
    #[inline(never)]
    fn bursty_phase<T: CostTarget>(&mut self, t: &mut T) -> u64 {
        enqueue!(self, t, fill_bursty)
    }

    /// Dequeues everything still queued (outside the measured region).
    pub fn drain<T: CostTarget>(&mut self, t: &mut T) {
        while let Some((flow, packet)) = t.pop() {
            self.buffers.free.push(packet.id);
            self.ctl.forget(flow);
            self.buffers.stats.dequeued += 1;
        }
    }
}
