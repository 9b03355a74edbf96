//! One start instant t0 for every client thread and the rate sampler of a
//! trial, and the waits on `CLOCK_MONOTONIC` the threads use to reach it
//! and their packets' due times.

use super::spec::ClientClock;
use fairway_runtime::net::{interrupted, monotonic_ns};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::Duration;

/// How far after the last thread is ready the shared start t0 lies, ns.
/// Every waiting thread must be awake before t0, and the start-up
/// transient of a fresh trial (a first grant delayed by tens of ms) must
/// be over before the first packet is due, or the target's latency
/// counts it.
const START_LEAD_NS: u64 = 100_000_000;

/// Brings the clients and the sampler to one start instant.
pub(super) struct StartGate {
    ready: Barrier,
    set: Barrier,
    t0: AtomicU64,
}

impl StartGate {
    pub(super) fn new(threads: usize) -> Self {
        Self {
            ready: Barrier::new(threads),
            set: Barrier::new(threads),
            t0: AtomicU64::new(0),
        }
    }

    /// Waits until every thread is ready; the last to arrive sets t0 a
    /// little ahead while the others sleep in the second barrier (a
    /// real-time thread spinning for it could starve the leader on a
    /// shared CPU). Returns t0 (ns of `CLOCK_MONOTONIC`) without waiting
    /// for it.
    pub(super) fn t0(&self) -> u64 {
        if self.ready.wait().is_leader() {
            self.t0
                .store(monotonic_ns() + START_LEAD_NS, Ordering::Release);
        }
        self.set.wait();
        self.t0.load(Ordering::Acquire)
    }

    /// [`StartGate::t0`], then sleeps until client `flow`'s start (t0
    /// under [`ClientClock::Shared`]) and returns it.
    pub(super) fn start(&self, clock: ClientClock, flow: u16) -> u64 {
        let t0 = self.t0();
        let at = match clock {
            ClientClock::Shared => t0,
            #[cfg(feature = "test-support")]
            ClientClock::Staggered { step_ns } => t0 + u64::from(flow) * step_ns,
        };
        #[cfg(not(feature = "test-support"))]
        let _ = flow;
        sleep_until(at);
        at
    }
}

/// Sleeps (then spins the last few µs) until `due`, ns, or until SIGINT or
/// SIGTERM arrived ([`interrupted`]).
pub(super) fn sleep_until(due: u64) {
    while monotonic_ns() < due && !interrupted() {
        wait_until(due);
    }
}

/// Waits until `due` (ns): sleeps when far, spins when close. A sleep
/// lasts [`MAX_SLEEP_NS`] at most, so a caller looping on it sees a signal
/// within that time.
pub(super) fn wait_until(due: u64) {
    let now = monotonic_ns();
    if due > now + 30_000 {
        std::thread::sleep(Duration::from_nanos((due - now - 20_000).min(MAX_SLEEP_NS)));
    } else {
        std::hint::spin_loop();
    }
}

/// The longest single sleep of [`wait_until`], ns.
const MAX_SLEEP_NS: u64 = 20_000_000;
