//! The runtime's errors: building or running it ([`RuntimeError`]), and a
//! refused submit ([`SubmitError`], which hands the packet back).

use super::config::{MAX_DURATION_NS, MAX_TOTAL_QUEUE_LEN};
use crate::affinity::MAX_RT_PRIORITY;
use crate::link::MIN_RATE_BPS;
use crate::mailbox::MAX_QUEUE_LEN;
use fairway_core::ConfigError;
use std::fmt;

/// Errors building or running the runtime.
#[derive(Debug)]
pub enum RuntimeError {
    /// Link rate below [`MIN_RATE_BPS`].
    RateTooLow(u64),
    /// `queue_len` outside `1..MAX_QUEUE_LEN`.
    BadQueueLen(usize),
    /// The scheduler refused a client's flow configuration.
    Flow {
        /// The client (= flow) index.
        client: usize,
        /// Why.
        error: ConfigError,
    },
    /// More clients than flow ids.
    TooManyClients,
    /// `KickMode::ClientScan` lets clients run the scheduler, so it must be
    /// `Send`: use [`RuntimeBuilder::spawn_send`](crate::RuntimeBuilder::spawn_send).
    ClientScanNeedsSendScheduler,
    /// The arbiter thread could not be started, or panicked.
    Thread(String),
    /// Pinning a thread failed.
    Affinity(std::io::Error),
    /// `realtime_priority` outside 1..=99.
    BadPriority(u8),
    /// The arbiter thread could not get its real-time priority.
    Realtime(std::io::Error),
    /// A duration (`parameter`: `delta_a`, `delta_c` or `min_awake`) above
    /// [`MAX_DURATION_NS`] (`2^64 − 1` ns, about 584 years), the range the
    /// runtime's nanosecond clock counts.
    DurationTooLong {
        /// Which field of [`RuntimeConfig`](crate::RuntimeConfig).
        parameter: &'static str,
        /// The value given, in nanoseconds.
        nanos: u128,
    },
    /// Adding this client would make the clients' queues hold more than
    /// [`MAX_TOTAL_QUEUE_LEN`] packets in all, more than the scheduler
    /// behind them can hold (so it could no longer promise never to refuse
    /// a packet). The client was not added.
    TotalQueueLenTooLarge {
        /// The total the client would make, in packets.
        total: u64,
    },
    /// [`ArbiterHandle::pause`](crate::ArbiterHandle::pause) with the client-scan kick: the clients may
    /// run the stopped arbiter's scheduler themselves, so it cannot be
    /// handed to another one.
    PauseNeedsNotifyKick,
}

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuntimeError::RateTooLow(r) => {
                write!(f, "link rate {r} bit/s is below the minimum {MIN_RATE_BPS}")
            }
            RuntimeError::BadQueueLen(n) => {
                write!(f, "queue length {n} outside 1..{MAX_QUEUE_LEN}")
            }
            RuntimeError::Flow { client, error } => write!(f, "client {client}: {error}"),
            RuntimeError::TooManyClients => write!(f, "too many clients"),
            RuntimeError::ClientScanNeedsSendScheduler => write!(
                f,
                "the client-scan kick needs a Send scheduler (RuntimeBuilder::spawn_send)"
            ),
            RuntimeError::Thread(m) => write!(f, "arbiter thread: {m}"),
            RuntimeError::Affinity(e) => write!(f, "cannot pin thread: {e}"),
            RuntimeError::BadPriority(p) => {
                write!(f, "real-time priority {p} outside 1..={MAX_RT_PRIORITY}")
            }
            RuntimeError::Realtime(e) => write!(
                f,
                "cannot give the arbiter real-time priority: {e} (needs CAP_SYS_NICE, e.g. root)"
            ),
            RuntimeError::DurationTooLong { parameter, nanos } => write!(
                f,
                "{parameter} of {nanos} ns is outside 0..={MAX_DURATION_NS} ns"
            ),
            RuntimeError::TotalQueueLenTooLarge { total } => write!(
                f,
                "total client queue length {total} packets is outside 0..={MAX_TOTAL_QUEUE_LEN}"
            ),
            RuntimeError::PauseNeedsNotifyKick => write!(
                f,
                "an arbiter started with the client-scan kick cannot be paused or restarted"
            ),
        }
    }
}

impl std::error::Error for RuntimeError {}

/// Why a submit failed; the packet is handed back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubmitErrorKind {
    /// The client queue is full (backpressure): drain, then retry.
    Full,
    /// Zero-length packet (0 marks an empty slot).
    EmptyPacket,
    /// Longer than the client's `max_len`.
    TooLong {
        /// The packet's length.
        len: u32,
        /// The client's maximum.
        max_len: u32,
    },
}

/// A refused submit: why, and the packet, untouched.
#[derive(Debug, PartialEq, Eq)]
pub struct SubmitError<P> {
    /// Why.
    pub kind: SubmitErrorKind,
    /// The packet, back to the caller.
    pub packet: P,
}

impl<P> fmt::Display for SubmitError<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            SubmitErrorKind::Full => write!(f, "client queue full"),
            SubmitErrorKind::EmptyPacket => write!(f, "zero-length packet"),
            SubmitErrorKind::TooLong { len, max_len } => {
                write!(
                    f,
                    "packet of {len} bytes exceeds the client's max {max_len}"
                )
            }
        }
    }
}
