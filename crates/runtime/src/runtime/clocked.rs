//! The arbiter with its clock: the `ScanCore` that the sleep/kick protocol
//! of [`crate::wakeup`] drives, and the way a client runs it itself (the
//! second `kick_arbiter` variant).

use crate::arbiter::{Arbiter, ScanResult};
use crate::clock::MonotonicClock;
use crate::wakeup::{ClientScanTarget, LockedCore, ScanCore, Wakeup};
use fairway_core::Scheduler;

/// The arbiter plus its clock: what the sleep/kick protocol drives.
pub(super) struct ClockedArbiter<S: ?Sized> {
    pub(super) clock: MonotonicClock,
    /// When the previous round ran, ns; 0 after a sleep or a block, whose
    /// length is the arbiter's choice and not a missed Δ_A.
    pub(super) last_scan_ns: u64,
    pub(super) arbiter: Arbiter<S>,
}

impl<S: Scheduler<u32> + ?Sized> ScanCore for ClockedArbiter<S> {
    #[inline]
    fn scan(&mut self, forced: bool) -> ScanResult {
        if forced {
            self.arbiter.force_scan();
        }
        let now = self.clock.now_ns();
        if self.last_scan_ns != 0 {
            self.arbiter
                .record_round_gap(now.saturating_sub(self.last_scan_ns));
        }
        self.last_scan_ns = now;
        self.arbiter.do_scan(now)
    }
    #[inline]
    fn now_ns(&self) -> u64 {
        self.clock.now_ns()
    }
    fn link_idle_ns(&self) -> u64 {
        self.arbiter.link_idle_ns()
    }
    fn count_sleep(&mut self, blocked: bool) {
        self.last_scan_ns = 0;
        if blocked {
            self.arbiter.stats.blocks += 1;
        } else {
            self.arbiter.stats.timed_sleeps += 1;
        }
    }
    fn count_client_scan(&mut self) {
        self.arbiter.stats.client_scans += 1;
    }
}

impl<S: Scheduler<u32> + Send + ?Sized> ClientScanTarget for LockedCore<ClockedArbiter<S>> {
    fn kick_and_scan(&self, wake: &Wakeup, run_for_ns: u64) {
        wake.kick_client_scan(self, run_for_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arbiter::ScanGapWindow;
    use crate::link::EmulatedLink;
    use fairway_core::Capacity;

    /// The longest scan gap counts a round the arbiter missed (its thread
    /// did not run) but not a sleep or a block it chose.
    #[test]
    fn the_longest_scan_gap_counts_missed_rounds_not_sleeps() {
        let sched = Box::new(fairway_core::Drr::<u32>::with_options(
            Capacity::new(1, 16),
            fairway_core::Limits::default(),
            None,
        ));
        let mut core = ClockedArbiter {
            clock: MonotonicClock::new(),
            last_scan_ns: 0,
            arbiter: Arbiter::new(sched, Vec::new(), EmulatedLink::new(1_000_000).unwrap(), 0),
        };
        let longest = |c: &ClockedArbiter<_>| c.arbiter.stats().longest_scan_gap_ns;
        core.scan(false);
        assert_eq!(longest(&core), 0, "one round: no gap yet");
        // The thread misses 30 ms of rounds (as if preempted).
        std::thread::sleep(std::time::Duration::from_millis(30));
        core.scan(false);
        let missed = longest(&core);
        assert!(missed >= 30_000_000, "{missed}");
        // The owner's window saw it, and starts anew once taken.
        let window = ScanGapWindow(core.arbiter.round_gap.clone());
        assert_eq!(window.take(), missed);
        core.scan(false);
        let now = window.take();
        assert!(now < missed, "{now}");
        // A longer block by choice is not a missed round.
        core.count_sleep(true);
        std::thread::sleep(std::time::Duration::from_millis(90));
        core.scan(false);
        core.scan(false);
        assert!(longest(&core) < 90_000_000, "{}", longest(&core));
        assert!(longest(&core) >= missed);
    }
}
