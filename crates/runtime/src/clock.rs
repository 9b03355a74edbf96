//! The monotonic clock shared by the arbiter and the clients: the TSC via
//! `quanta` (the PSPAT paper Fig. 3 reads `rdtsc()`), calibrated once and reported
//! in nanoseconds since the runtime was built, so every thread compares
//! timestamps on the same scale. Falls back to `CLOCK_MONOTONIC` where the
//! TSC is not usable (quanta decides).

/// Nanoseconds since a common epoch; cheap to clone and to read.
#[derive(Clone, Debug)]
pub struct MonotonicClock {
    clock: quanta::Clock,
    epoch_raw: u64,
}

impl MonotonicClock {
    /// A clock whose epoch is now.
    pub fn new() -> Self {
        let clock = quanta::Clock::new();
        let epoch_raw = clock.raw();
        Self { clock, epoch_raw }
    }

    /// Nanoseconds since the epoch.
    #[inline]
    pub fn now_ns(&self) -> u64 {
        self.clock.delta_as_nanos(self.epoch_raw, self.clock.raw())
    }
}

impl Default for MonotonicClock {
    fn default() -> Self {
        Self::new()
    }
}
