//! The engine's errors: [`EngineError`] for configuration and registration,
//! [`SubmitError`] for a request refused at submission (its buffer handed
//! back) and [`IoError`] for a request that was accepted but did not
//! complete successfully (delivered in its [`super::Completion`]).

use super::buf::AlignedBuf;
use super::client::ClientId;
use super::target::TargetId;
use crate::catalogue::DiskSpecError;
use crate::request::{AddErrorKind, DiskConfigError};
use std::fmt;

/// A configuration value, a registration or the engine itself refused.
/// Every range error names the parameter and its allowed range; nothing is
/// clamped.
#[derive(Debug)]
pub enum EngineError {
    /// A numeric parameter outside its range.
    OutOfRange {
        /// The parameter.
        name: &'static str,
        /// The value given.
        value: u64,
        /// The allowed range, human readable.
        allowed: &'static str,
    },
    /// The scheduler spec is invalid or the scheduler refused it.
    Spec(DiskSpecError),
    /// The scheduler refused the client (e.g. the sum of the weights).
    Scheduler(DiskConfigError),
    /// The scheduler refused the group (unknown parent, too deep, the sum
    /// of the weights; or groups with a scheduler other than BFQ).
    Group(DiskConfigError),
    /// More groups declared at once than [`crate::hier::MAX_GROUPS`].
    TooManyGroups {
        /// The limit.
        max: u32,
    },
    /// A feature the API has room for but the engine does not provide yet.
    Unsupported(&'static str),
    /// io_uring is unavailable (old kernel, disabled, or filtered by a
    /// sandbox), or lacks timed waits (`IORING_FEAT_EXT_ARG`, Linux 5.11);
    /// or the device thread could not be started.
    Unavailable(std::io::Error),
    /// A target could not be opened.
    Open {
        /// The path.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// More clients registered at once than `max_clients`.
    TooManyClients {
        /// The engine's `max_clients`.
        max: u32,
    },
    /// More targets open at once than [`super::MAX_TARGETS`].
    TooManyTargets {
        /// The limit.
        max: u32,
    },
    /// The client is not registered (never, or removed).
    UnknownClient(ClientId),
    /// The target is not open (never, or closed).
    UnknownTarget(TargetId),
    /// The engine has stopped.
    Stopped,
    /// Memory for buffers could not be mapped
    /// ([`super::huge_page_bufs`]).
    Memory(std::io::Error),
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OutOfRange {
                name,
                value,
                allowed,
            } => write!(f, "{name} = {value} is out of range (allowed: {allowed})"),
            Self::Spec(e) => write!(f, "scheduler: {e}"),
            Self::Scheduler(e) => write!(f, "scheduler refused the client: {e}"),
            Self::Group(e) => write!(f, "scheduler refused the group: {e}"),
            Self::TooManyGroups { max } => write!(f, "too many groups ({max} declared at once)"),
            Self::Unsupported(what) => write!(f, "not supported: {what}"),
            Self::Unavailable(e) => write!(f, "io_uring unavailable: {e}"),
            Self::Open { path, source } => write!(f, "cannot open {path}: {source}"),
            Self::TooManyClients { max } => {
                write!(
                    f,
                    "too many clients (max_clients = {max} registered at once)"
                )
            }
            Self::TooManyTargets { max } => write!(f, "too many targets ({max} open at once)"),
            Self::UnknownClient(c) => write!(f, "{c} is not registered"),
            Self::UnknownTarget(t) => write!(f, "{t} is not open"),
            Self::Stopped => write!(f, "the engine has stopped"),
            Self::Memory(e) => write!(f, "cannot map memory for the buffers: {e}"),
        }
    }
}

impl std::error::Error for EngineError {}

impl From<DiskSpecError> for EngineError {
    fn from(e: DiskSpecError) -> Self {
        Self::Spec(e)
    }
}

/// Why a request was refused at submission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubmitErrorKind {
    /// `len` is zero.
    ZeroLength,
    /// `len` exceeds the buffer.
    BufferTooSmall {
        /// The request's length, bytes.
        len: u32,
        /// The buffer's length, bytes.
        buf: usize,
    },
    /// `offset` or `len` is not a multiple of the target's alignment (an
    /// `O_DIRECT` target).
    Unaligned {
        /// `"offset"` or `"length"`.
        what: &'static str,
        /// The value given.
        value: u64,
        /// The target's alignment, bytes.
        align: u32,
    },
    /// The request ends beyond [`super::MAX_OFFSET`].
    OffsetTooLarge {
        /// The request's end, bytes.
        end: u64,
    },
    /// The request spans more than L_max sectors of 512 bytes (its offset
    /// and length rounded out to sectors).
    TooLong {
        /// Sectors spanned.
        sectors: u64,
        /// L_max.
        max: u32,
    },
    /// A write to a target opened read-only.
    ReadOnlyTarget(TargetId),
    /// The client is not registered (never, or removed).
    UnknownClient(ClientId),
    /// The target is not open (never, or closed).
    UnknownTarget(TargetId),
    /// `max_queued` requests are already queued or in flight.
    QueueFull {
        /// The engine's `max_queued`.
        limit: u32,
    },
    /// The engine has stopped.
    Stopped,
}

impl fmt::Display for SubmitErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ZeroLength => write!(f, "request of zero bytes"),
            Self::BufferTooSmall { len, buf } => {
                write!(f, "request of {len} bytes exceeds its {buf}-byte buffer")
            }
            Self::Unaligned { what, value, align } => write!(
                f,
                "{what} {value} is not a multiple of the target's alignment {align} (O_DIRECT)"
            ),
            Self::OffsetTooLarge { end } => write!(
                f,
                "request ends at byte {end}, beyond the largest offset {}",
                super::MAX_OFFSET
            ),
            Self::TooLong { sectors, max } => write!(
                f,
                "request spans {sectors} sectors of 512 bytes, more than L_max = {max}"
            ),
            Self::ReadOnlyTarget(t) => write!(f, "write to read-only {t}"),
            Self::UnknownClient(c) => write!(f, "{c} is not registered"),
            Self::UnknownTarget(t) => write!(f, "{t} is not open"),
            Self::QueueFull { limit } => {
                write!(f, "queue full (max_queued = {limit} requests outstanding)")
            }
            Self::Stopped => write!(f, "the engine has stopped"),
        }
    }
}

/// A refused request: why, and its buffer handed back.
#[derive(Debug)]
pub struct SubmitError {
    /// Why.
    pub kind: SubmitErrorKind,
    /// The request's buffer, untouched.
    pub buf: AlignedBuf,
}

impl fmt::Display for SubmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "request refused: {}", self.kind)
    }
}

impl std::error::Error for SubmitError {}

/// Why an accepted request did not complete successfully.
#[derive(Debug)]
pub enum IoError {
    /// The operating system failed the transfer (e.g. `EIO`, `EINVAL`).
    Os(std::io::Error),
    /// Fewer bytes than requested were transferred: the request reaches
    /// beyond the end of the file or device.
    Short {
        /// Bytes transferred.
        transferred: u32,
        /// Bytes requested.
        len: u32,
    },
    /// Its client was removed before the request was dispatched.
    Cancelled,
    /// The scheduler refused it (cannot happen with the catalogue's
    /// schedulers, whose bounds submission checks first).
    Refused(AddErrorKind),
    /// The engine shut down before the request was dispatched.
    ShutDown,
}

impl fmt::Display for IoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Os(e) => write!(f, "I/O error: {e}"),
            Self::Short { transferred, len } => write!(
                f,
                "short transfer: {transferred} of {len} bytes (beyond the end of the target)"
            ),
            Self::Cancelled => write!(f, "cancelled: its client was removed"),
            Self::Refused(k) => write!(f, "refused by the scheduler: {k:?}"),
            Self::ShutDown => write!(f, "the engine shut down before serving it"),
        }
    }
}

impl std::error::Error for IoError {}
