//! The ranges of the arbiter benchmark's parameters, each with its reason,
//! checked before a thread starts or a queue is allocated
//! ([`BenchConfig::validate`]).

use super::{ArbiterBenchError, BenchConfig};
use fairway_core::Limits;
use fairway_runtime::affinity::available_cpus;
use fairway_runtime::link::MIN_RATE_BPS;
use fairway_runtime::mailbox::MAX_QUEUE_LEN;
use std::time::Duration;

/// Most client threads per CPU the clients run on. Every client
/// busy-polls its queue; with more on one CPU, each would get it only
/// every few tens of ms (the kernel's time slices), and the latency
/// measured would be the time slicing's.
pub const MAX_CLIENTS_PER_CPU: usize = 64;
/// Most client threads in all: each keeps a latency histogram of about
/// 220 KB.
pub const MAX_CLIENTS: usize = 1024;
/// Most packets the client queues hold together (clients × queue length):
/// each takes a slot in its client's ring and in the scheduler, tens of
/// bytes, so this keeps them near 1 GiB.
pub const MAX_QUEUED_PACKETS: u64 = 1 << 24;
/// Shortest measurement, s: the clients start together 20 ms after the
/// arbiter, within a few time slices of each other.
pub const MIN_SECONDS: f64 = 0.001;
/// Longest measurement, s.
pub const MAX_SECONDS: f64 = 3600.0;
/// Largest Δ_A, Δ_C and minimum awake time (1 s): intervals of the
/// arbiter's and the clients' loops, far above the PSPAT paper's µs.
pub const MAX_INTERVAL: Duration = Duration::from_secs(1);

impl BenchConfig {
    /// Checks every parameter and the totals derived from several against
    /// their ranges; the error names the flag that sets it.
    pub fn validate(&self) -> Result<(), ArbiterBenchError> {
        let max_clients = self.max_clients();
        if self.clients == 0 || self.clients > max_clients {
            return out_of_range(
                "--clients",
                self.clients,
                format!("1..={max_clients}"),
                Some(format!(
                    "at most {MAX_CLIENTS_PER_CPU} busy-polling client threads per CPU they run \
                     on, {} here, and {MAX_CLIENTS} in all",
                    self.client_cpus()
                )),
            );
        }
        let max_len = Limits::DEFAULT.max_packet_len;
        if self.pkt_size == 0 || self.pkt_size > max_len {
            return out_of_range(
                "--pkt-size",
                self.pkt_size,
                format!("1..={max_len}"),
                Some("the scheduler's largest packet".into()),
            );
        }
        if self.rate_bps < MIN_RATE_BPS {
            return out_of_range(
                "--rate",
                format!("{} bit/s", self.rate_bps),
                format!("{MIN_RATE_BPS}..={} bit/s", u64::MAX),
                None,
            );
        }
        let secs = self.duration.as_secs_f64();
        if !(MIN_SECONDS..=MAX_SECONDS).contains(&secs) {
            return out_of_range(
                "--seconds",
                shown(secs),
                format!("[{MIN_SECONDS}, {MAX_SECONDS}]"),
                None,
            );
        }
        for (flag, d, unit_ns) in [
            ("--delta-a-ns", self.delta_a, 1),
            ("--delta-c-ns", self.delta_c, 1),
            ("--min-awake-us", self.min_awake, 1_000),
        ] {
            if d > MAX_INTERVAL {
                let max = MAX_INTERVAL.as_nanos() / unit_ns;
                return out_of_range(
                    flag,
                    d.as_nanos() / unit_ns,
                    format!("0..={max}"),
                    Some("1 s".into()),
                );
            }
        }
        if self.queue_len == 0 || self.queue_len >= MAX_QUEUE_LEN {
            return out_of_range(
                "--queue-len",
                self.queue_len,
                format!("1..{MAX_QUEUE_LEN}"),
                None,
            );
        }
        let total = self.clients as u64 * self.queue_len as u64;
        if total > MAX_QUEUED_PACKETS {
            return Err(ArbiterBenchError::QueuedPackets {
                clients: self.clients,
                queue_len: self.queue_len,
                total,
                max: MAX_QUEUED_PACKETS,
            });
        }
        if let Some(p) = self.realtime {
            if p == 0 || p > fairway_runtime::MAX_RT_PRIORITY {
                let range = format!("1..={}", fairway_runtime::MAX_RT_PRIORITY);
                return out_of_range("--realtime", p, range, None);
            }
        }
        self.validate_load()
    }

    /// `--load`: positive and finite, and a per-client gap between 1 ns
    /// and the measured time.
    fn validate_load(&self) -> Result<(), ArbiterBenchError> {
        let Some(load) = self.load else {
            return Ok(());
        };
        if !(load > 0.0 && load.is_finite()) {
            return out_of_range(
                "--load",
                shown(load),
                "(0, ∞)".into(),
                Some("a positive fraction of the link rate".into()),
            );
        }
        let gap_ns = self.gap_ns(load);
        let window_ns = self.duration.as_nanos();
        if !(gap_ns >= 1.0 && gap_ns <= window_ns as f64) {
            return Err(ArbiterBenchError::LoadGap {
                load,
                gap_ns,
                window_ns,
            });
        }
        Ok(())
    }

    /// A paced client's gap between packets at `load`, ns.
    pub(super) fn gap_ns(&self, load: f64) -> f64 {
        let pps = load * self.rate_bps as f64 / (8.0 * f64::from(self.pkt_size));
        1e9 / (pps / self.clients as f64)
    }

    /// The CPUs the clients run on: all but the arbiter's when pinned.
    fn client_cpus(&self) -> usize {
        let cpus = available_cpus();
        if self.pin && cpus >= 2 {
            cpus - 1
        } else {
            cpus
        }
    }

    /// The most clients this machine runs ([`MAX_CLIENTS_PER_CPU`],
    /// [`MAX_CLIENTS`]).
    pub fn max_clients(&self) -> usize {
        (MAX_CLIENTS_PER_CPU * self.client_cpus()).min(MAX_CLIENTS)
    }
}

/// An [`ArbiterBenchError::OutOfRange`].
fn out_of_range(
    flag: &'static str,
    value: impl std::fmt::Display,
    range: String,
    why: Option<String>,
) -> Result<(), ArbiterBenchError> {
    Err(ArbiterBenchError::OutOfRange {
        flag,
        value: value.to_string(),
        range,
        why,
    })
}

/// A float as a message shows it: as written for ordinary values
/// (`3601`, `-1`, `NaN`, `inf`), in exponent form when that would be
/// dozens of digits (`1e-300`).
pub fn shown(x: f64) -> String {
    let plain = x.to_string();
    if plain.len() > 24 {
        format!("{x:e}")
    } else {
        plain
    }
}

/// ` (why)`, or nothing.
pub(super) fn why_suffix(why: Option<&str>) -> String {
    why.map(|w| format!(" ({w})")).unwrap_or_default()
}
