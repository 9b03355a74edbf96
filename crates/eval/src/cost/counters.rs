//! Hardware counters around the measured region: instructions and cache
//! misses per pair, as seed 000 §8.2 reports them (Figs. 3 and 5).
//!
//! Uses `perf_event_open` on the calling thread. Virtual machines and
//! containers often refuse it (no PMU, `perf_event_paranoid`, seccomp):
//! [`PerfCounters::open`] then returns the reason, which the CLI prints as
//! `"counters unavailable: <reason>"`.

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
    use super::CounterValues;
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
        pub fn open() -> Result<Self, String> {
            let why = |what: &str, e: std::io::Error| format!("{what}: {e}");
            let mut group = Group::new().map_err(|e| why("perf_event_open (group)", e))?;
            let instructions = group
                .add(&Builder::new(Hardware::INSTRUCTIONS))
                .map_err(|e| why("perf_event_open (instructions)", e))?;
            let cache_misses = group
                .add(&Builder::new(Hardware::CACHE_MISSES))
                .map_err(|e| why("perf_event_open (cache-misses)", e))?;
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
                return Err("perf_event_open succeeded but counts no instructions".into());
            }
            Ok(c)
        }

        /// Zeroes and starts the counters.
        pub fn start(&mut self) -> Result<(), String> {
            self.group.reset().map_err(|e| e.to_string())?;
            self.group.enable().map_err(|e| e.to_string())
        }

        /// Stops the counters and reads them.
        pub fn stop(&mut self) -> Result<CounterValues, String> {
            self.group.disable().map_err(|e| e.to_string())?;
            let data = self.group.read().map_err(|e| e.to_string())?;
            Ok(CounterValues {
                instructions: data[&self.instructions],
                cache_misses: data[&self.cache_misses],
            })
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::CounterValues;

    /// Placeholder: hardware counters are only read on Linux.
    pub struct PerfCounters;

    impl PerfCounters {
        /// Always unavailable off Linux.
        pub fn open() -> Result<Self, String> {
            Err("perf_event_open is Linux-only".into())
        }
        /// Never called.
        pub fn start(&mut self) -> Result<(), String> {
            Ok(())
        }
        /// Never called.
        pub fn stop(&mut self) -> Result<CounterValues, String> {
            Ok(CounterValues::default())
        }
    }
}

pub use imp::PerfCounters;
