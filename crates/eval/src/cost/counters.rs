//! Hardware counters around the measured region: instructions and cache
//! misses per pair, as the QFQ+ paper §8.2 reports them (Figs. 3 and 5).
//!
//! Uses `perf_event_open` on the calling thread. Virtual machines and
//! containers often refuse it (no PMU, `perf_event_paranoid`, seccomp):
//! [`PerfCounters::open`] then returns the reason ([`CounterError`]), which
//! the reports carry as `"unavailable: <reason>"`.

use std::fmt;

/// Why the hardware counters cannot be used.
#[derive(Debug)]
pub enum CounterError {
    /// `perf_event_open` refused a counter (`what`: which).
    Open {
        /// The counter: `perf_event_open (group)`, `(instructions)`, …
        what: &'static str,
        /// The kernel's answer.
        error: std::io::Error,
    },
    /// The counters open but count nothing (some hypervisors).
    NoCounts,
    /// Starting, stopping or reading the counters failed.
    Io(std::io::Error),
    /// Not Linux: there is no `perf_event_open`.
    NotLinux,
}

impl fmt::Display for CounterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CounterError::Open { what, error } => write!(f, "{what}: {error}"),
            CounterError::NoCounts => {
                write!(f, "perf_event_open succeeded but counts no instructions")
            }
            CounterError::Io(e) => e.fmt(f),
            CounterError::NotLinux => write!(f, "perf_event_open is Linux-only"),
        }
    }
}

impl std::error::Error for CounterError {}

/// Counts read over one measured region.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CounterValues {
    /// Instructions retired.
    pub instructions: u64,
    /// Last-level cache misses.
    pub cache_misses: u64,
}

#[cfg(target_os = "linux")]
mod imp {
    use super::{CounterError, CounterValues};
    use perf_event::events::Hardware;
    use perf_event::{Builder, Counter, Group};

    /// An instructions + cache-misses counter group on this thread.
    pub struct PerfCounters {
        group: Group,
        instructions: Counter,
        cache_misses: Counter,
    }

    impl PerfCounters {
        /// Opens the counters, or explains why they are unavailable.
        pub fn open() -> Result<Self, CounterError> {
            let why = |what| move |error| CounterError::Open { what, error };
            let mut group = Group::new().map_err(why("perf_event_open (group)"))?;
            let instructions = group
                .add(&Builder::new(Hardware::INSTRUCTIONS))
                .map_err(why("perf_event_open (instructions)"))?;
            let cache_misses = group
                .add(&Builder::new(Hardware::CACHE_MISSES))
                .map_err(why("perf_event_open (cache-misses)"))?;
            let mut c = Self {
                group,
                instructions,
                cache_misses,
            };
            // A counter that opens but never counts (some hypervisors) is
            // as good as none.
            c.start()?;
            let x: u64 = (0..1000u64).map(std::hint::black_box).sum();
            std::hint::black_box(x);
            let v = c.stop()?;
            if v.instructions == 0 {
                return Err(CounterError::NoCounts);
            }
            Ok(c)
        }

        /// Zeroes and starts the counters.
        pub fn start(&mut self) -> Result<(), CounterError> {
            self.group.reset().map_err(CounterError::Io)?;
            self.group.enable().map_err(CounterError::Io)
        }

        /// Stops the counters and reads them.
        pub fn stop(&mut self) -> Result<CounterValues, CounterError> {
            self.group.disable().map_err(CounterError::Io)?;
            let data = self.group.read().map_err(CounterError::Io)?;
            Ok(CounterValues {
                instructions: data[&self.instructions],
                cache_misses: data[&self.cache_misses],
            })
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::{CounterError, CounterValues};

    /// Placeholder: hardware counters are only read on Linux.
    pub struct PerfCounters;

    impl PerfCounters {
        /// Always unavailable off Linux.
        pub fn open() -> Result<Self, CounterError> {
            Err(CounterError::NotLinux)
        }
        /// Never called.
        pub fn start(&mut self) -> Result<(), CounterError> {
            Ok(())
        }
        /// Never called.
        pub fn stop(&mut self) -> Result<CounterValues, CounterError> {
            Ok(CounterValues::default())
        }
    }
}

pub use imp::PerfCounters;
