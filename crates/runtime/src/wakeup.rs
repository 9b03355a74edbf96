//! Sleeping and waking without lost wake-ups: the PSPAT paper §3.1 and Fig. 4.
//!
//! * The arbiter sleeps until `link_idle` when the link is busy, and blocks
//!   on an event when every queue is empty. Before blocking it announces
//!   `arb_sleep = true`, issues a full fence and scans the queues once more
//!   (the double check). A client, after publishing a packet, issues a full
//!   fence and reads `arb_sleep`. With both fences sequentially consistent,
//!   at least one side sees the other's write (Dekker): either the
//!   arbiter's double check finds the packet, or the client sees
//!   `arb_sleep` and acts. The event is a binary semaphore, so a kick sent
//!   between the double check and the wait is not lost either.
//! * `kick_arbiter`, first variant ([`KickMode::Notify`]): signal the event
//!   if the arbiter may be sleeping.
//! * Second variant ([`KickMode::ClientScan`]): the client tries `arb_lock`
//!   until it gets it or finds the arbiter awake; with the lock it runs
//!   `do_scan` itself for a short while (the conventional architecture at
//!   light load), then unlocks and wakes the arbiter only if traffic
//!   remains.
//! * The arbiter holds `arb_lock` whenever it is awake, and releases it
//!   only right before blocking; it stays awake at least `min_awake` after
//!   each wake-up, because unlock/notify cost µs (§3.1).
//!
//! The protocol is generic over `ScanCore` so that the loom models in
//! `loom_tests.rs` check this exact code.

use crate::arbiter::ScanResult;
use crate::dispatch::Dispatch;
use crate::sync::{fence, spin_wait, AtomicBool, Condvar, Mutex, Ordering};
use crossbeam_utils::CachePadded;
use std::sync::OnceLock;

/// How clients notify an arbiter that may be sleeping (Fig. 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KickMode {
    /// First variant: only wake the arbiter up.
    Notify,
    /// Second variant: when the arbiter sleeps, the client runs `do_scan`
    /// itself under `arb_lock`, for up to `run_for_ns` while traffic
    /// remains, then hands over to the arbiter. Needs a `Send` scheduler.
    ClientScan {
        /// How long a client keeps scheduling before waking the arbiter.
        run_for_ns: u64,
    },
}

/// What the sleep/kick protocol needs from the arbiter.
pub(crate) trait ScanCore {
    /// One `do_scan` round; `forced` ignores the Δ_A rate limit.
    fn scan(&mut self, forced: bool) -> ScanResult;
    /// The current time, ns.
    fn now_ns(&self) -> u64;
    /// When the emulated link is free, ns.
    fn link_idle_ns(&self) -> u64;
    /// Counts a block (`true`) or a timed sleep (`false`).
    fn count_sleep(&mut self, blocked: bool);
    /// Counts a `do_scan` run by a client.
    fn count_client_scan(&mut self);
}

/// A binary semaphore: `notify` sets it, `wait` blocks until set and
/// clears it (`send_event` / `wait_event` of Fig. 4).
pub(crate) struct Event {
    set: Mutex<bool>,
    cv: Condvar,
}

impl Event {
    pub(crate) fn new() -> Self {
        Self {
            set: Mutex::new(false),
            cv: Condvar::new(),
        }
    }

    pub(crate) fn notify(&self) {
        let mut set = self.set.lock().unwrap_or_else(|e| e.into_inner());
        *set = true;
        drop(set);
        self.cv.notify_one();
    }

    pub(crate) fn wait(&self) {
        let mut set = self.set.lock().unwrap_or_else(|e| e.into_inner());
        while !*set {
            set = self.cv.wait(set).unwrap_or_else(|e| e.into_inner());
        }
        *set = false;
    }
}

/// A client's way into the second `kick_arbiter` variant, installed when
/// the arbiter starts (only for schedulers that are `Send`).
pub(crate) trait ClientScanTarget: Send + Sync {
    fn kick_and_scan(&self, wake: &Wakeup, run_for_ns: u64);
}

/// State shared by the arbiter and every client for sleeping and waking.
pub(crate) struct Wakeup {
    /// `arb_sleep` of Fig. 4: the arbiter may be about to block.
    arb_sleep: CachePadded<AtomicBool>,
    stop: CachePadded<AtomicBool>,
    event: Event,
    /// Set at spawn when `kick` is `ClientScan`.
    pub(crate) scan_target: OnceLock<std::sync::Arc<dyn ClientScanTarget>>,
}

impl Wakeup {
    pub(crate) fn new() -> Self {
        Self {
            arb_sleep: CachePadded::new(AtomicBool::new(false)),
            stop: CachePadded::new(AtomicBool::new(false)),
            event: Event::new(),
            scan_target: OnceLock::new(),
        }
    }

    /// Asks the arbiter loop to return, waking it if blocked.
    pub(crate) fn request_stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.event.notify();
    }

    /// Lets a new arbiter loop run after a stop (a restart): called before
    /// its thread starts, when no loop is running.
    pub(crate) fn clear_stop(&self) {
        self.stop.store(false, Ordering::SeqCst);
    }

    #[inline]
    pub(crate) fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// First variant of `kick_arbiter`: call after publishing a packet.
    #[inline]
    pub(crate) fn kick_notify(&self) {
        fence(Ordering::SeqCst);
        if self.arb_sleep.load(Ordering::Relaxed) {
            self.event.notify();
        }
    }

    /// Second variant of `kick_arbiter` (see the module doc).
    pub(crate) fn kick_client_scan<C: ScanCore>(&self, core: &LockedCore<C>, run_for_ns: u64) {
        fence(Ordering::SeqCst);
        loop {
            if core.try_lock() {
                break;
            }
            if !self.arb_sleep.load(Ordering::Relaxed) {
                return; // the arbiter is running and will scan our packet
            }
            spin_wait();
        }
        let result = core.with(|c| {
            let end = c.now_ns().saturating_add(run_for_ns);
            loop {
                c.count_client_scan();
                let r = c.scan(true);
                if r == ScanResult::NoTraffic || c.now_ns() >= end {
                    break r;
                }
                spin_wait();
            }
        });
        core.unlock();
        if result == ScanResult::MoreTraffic {
            self.event.notify();
        }
    }

    /// The arbiter loop of Fig. 4 without a dispatcher (the loom model).
    #[cfg(loom)]
    pub(crate) fn run_sleeping<C: ScanCore>(&self, core: &LockedCore<C>, min_awake_ns: u64) {
        self.run_sleeping_dispatching(core, min_awake_ns, &mut ());
    }

    /// The arbiter loop of Fig. 4, until `request_stop`, calling `dispatch`
    /// after every scan (`()`: none; else the arbiter thread transmits
    /// granted packets, [`crate::dispatch`]).
    pub(crate) fn run_sleeping_dispatching<C: ScanCore, D: Dispatch + ?Sized>(
        &self,
        core: &LockedCore<C>,
        min_awake_ns: u64,
        dispatch: &mut D,
    ) {
        core.lock();
        let mut awake_since = core.with(|c| c.now_ns());
        loop {
            if self.stop_requested() {
                break;
            }
            let (result, now, idle) = core.with(|c| (c.scan(false), c.now_ns(), c.link_idle_ns()));
            dispatch.dispatch();
            if result == ScanResult::MoreTraffic {
                core.with(|c| sleep_till(c, now, idle));
                continue;
            }
            if now.saturating_sub(awake_since) < min_awake_ns {
                spin_wait();
                continue;
            }
            self.arb_sleep.store(true, Ordering::Relaxed);
            fence(Ordering::SeqCst);
            let last = core.with(|c| c.scan(true));
            dispatch.dispatch();
            if last == ScanResult::NoTraffic {
                core.with(|c| c.count_sleep(true));
                core.unlock();
                self.event.wait();
                core.lock();
                awake_since = core.with(|c| c.now_ns());
            }
            self.arb_sleep.store(false, Ordering::Relaxed);
        }
        core.unlock();
    }

    /// The busy-polling arbiter loop (no sleeping), until `request_stop`,
    /// calling `dispatch` after every scan (`()`: none); spins with a pause
    /// hint only when there was nothing to schedule and nothing to
    /// transmit.
    pub(crate) fn run_busy_dispatching<C: ScanCore, D: Dispatch + ?Sized>(
        &self,
        core: &LockedCore<C>,
        dispatch: &mut D,
    ) {
        core.lock();
        core.with(|c| {
            while !self.stop_requested() {
                let scanned = c.scan(false);
                let sent = dispatch.dispatch();
                if scanned == ScanResult::NoTraffic && sent == 0 {
                    // Nothing queued: a pause hint instead of a hot spin.
                    // The two vCPUs of a small VM are often hyperthreads
                    // of one core, and a hot spin here takes issue slots
                    // from the clients running on the sibling.
                    spin_wait();
                }
            }
        });
        core.unlock();
    }
}

/// Below this, sleeping is too imprecise (§3.1: usleep ≥ ~10 µs): spin.
const MIN_SLEEP_NS: u64 = 20_000;

/// Waits until the link is idle: a timed sleep if far enough, else one spin.
fn sleep_till<C: ScanCore>(core: &mut C, now: u64, idle: u64) {
    let wait = idle.saturating_sub(now);
    if wait >= MIN_SLEEP_NS {
        core.count_sleep(false);
        #[cfg(not(loom))]
        std::thread::sleep(std::time::Duration::from_nanos(wait - MIN_SLEEP_NS / 2));
        #[cfg(loom)]
        loom::thread::yield_now();
    } else {
        spin_wait();
    }
}

/// `arb_lock` plus the state it guards.
pub(crate) struct LockedCore<C> {
    locked: CachePadded<AtomicBool>,
    cell: crate::sync::UnsafeCell<C>,
}

// SAFETY: `cell` is only accessed through `with`, by the thread holding
// `locked` (acquired with Acquire, released with Release), so at most one
// thread touches `C` at a time and every access happens-after the previous
// one; sharing the core is then exactly as safe as sending `C`.
unsafe impl<C: Send> Sync for LockedCore<C> {}

impl<C> LockedCore<C> {
    pub(crate) fn new(core: C) -> Self {
        Self {
            locked: CachePadded::new(AtomicBool::new(false)),
            cell: crate::sync::UnsafeCell::new(core),
        }
    }

    #[inline]
    pub(crate) fn try_lock(&self) -> bool {
        !self.locked.load(Ordering::Relaxed)
            && self
                .locked
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
    }

    pub(crate) fn lock(&self) {
        while !self.try_lock() {
            spin_wait();
        }
    }

    pub(crate) fn unlock(&self) {
        self.locked.store(false, Ordering::Release);
    }

    /// Runs `f` on the core. The caller must hold the lock.
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut C) -> R) -> R {
        debug_assert!(self.locked.load(Ordering::Relaxed));
        // SAFETY: the caller holds `locked` (every call site in this module
        // sits between `lock`/`try_lock` and `unlock`), so no other thread
        // accesses the cell, and the `&mut` does not outlive `f`.
        self.cell.with_mut(|p| f(unsafe { &mut *p }))
    }

    /// Takes the core back (the lock is no longer shared).
    pub(crate) fn into_inner(self) -> C {
        self.cell.into_inner()
    }
}
