//! What a runtime is built from: the arbiter's parameters
//! ([`RuntimeConfig`], [`ArbiterMode`]), each client's ([`ClientConfig`]),
//! and the limits the builder checks them against.

use crate::wakeup::KickMode;
use std::time::Duration;

/// Whether the arbiter may sleep (§3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArbiterMode {
    /// Spin on `do_scan` forever: lowest latency, one core always busy.
    BusyPoll,
    /// Sleep until `link_idle` when the link is busy, block when all queues
    /// are empty (Fig. 4); clients kick it as `RuntimeConfig::kick` says.
    Sleep,
}

/// Runtime parameters.
#[derive(Clone, Copy, Debug)]
pub struct RuntimeConfig {
    /// Emulated link rate, bits/s (B of §3).
    pub rate_bps: u64,
    /// Δ_A: the arbiter scans the client queues at most this often.
    pub delta_a: Duration,
    /// Δ_C: a client reads the grant index at most this often in `drain`.
    pub delta_c: Duration,
    /// Busy-poll or sleep.
    pub mode: ArbiterMode,
    /// How clients wake a sleeping arbiter.
    pub kick: KickMode,
    /// Minimum time the arbiter stays awake after a wake-up (§3.1: 20..50 µs).
    pub min_awake: Duration,
    /// CPU to pin the arbiter thread to, if any.
    pub arbiter_cpu: Option<usize>,
    /// Run the arbiter thread under `SCHED_FIFO` at this priority (1..=99),
    /// so other processes cannot preempt it; `None`: normal scheduling.
    /// Needs `CAP_SYS_NICE`; see [`crate::set_realtime_priority`].
    pub realtime_priority: Option<u8>,
}

impl Default for RuntimeConfig {
    /// 10 Gbit/s, Δ_A = Δ_C = 1 µs (§5.2), busy-polling, notify kicks,
    /// 20 µs minimum awake time.
    fn default() -> Self {
        Self {
            rate_bps: 10_000_000_000,
            delta_a: Duration::from_micros(1),
            delta_c: Duration::from_micros(1),
            mode: ArbiterMode::BusyPoll,
            kick: KickMode::Notify,
            min_awake: Duration::from_micros(20),
            arbiter_cpu: None,
            realtime_priority: None,
        }
    }
}

/// One client: its scheduler flow and its queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientConfig {
    /// The flow's weight in the scheduler.
    pub weight: u32,
    /// Largest packet the client submits, bytes.
    pub max_len: u32,
    /// Packets the client queue holds, exactly, `1..MAX_QUEUE_LEN`.
    pub queue_len: usize,
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self {
            weight: 1,
            max_len: 1514,
            queue_len: 1023,
        }
    }
}

/// Largest `delta_a`, `delta_c` and `min_awake`, in nanoseconds.
pub const MAX_DURATION_NS: u64 = u64::MAX;

/// Largest total length of all client queues, in packets: the scheduler's
/// [`Capacity::max_packets`](fairway_core::Capacity::max_packets) is a
/// `u32`.
pub const MAX_TOTAL_QUEUE_LEN: u64 = u32::MAX as u64;

/// `d` in nanoseconds; [`RuntimeBuilder::new`](crate::RuntimeBuilder::new)
/// checked that it fits in a `u64` ([`MAX_DURATION_NS`]), so nothing is
/// truncated.
pub(super) fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(MAX_DURATION_NS)
}
