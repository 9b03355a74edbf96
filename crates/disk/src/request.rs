//! Disk requests and the identifiers, units and errors shared by every
//! disk scheduler (the BFQ thesis §2.1, Table 1).
//!
//! Units used throughout the crate:
//! * positions and lengths are in **sectors** of 512 bytes ([`SECTOR_BYTES`]);
//! * times are **nanoseconds** ([`Nanos`]) on the caller's clock (virtual in
//!   the simulator, monotonic in a real back-end), never read by the
//!   schedulers themselves.

use core::fmt;

/// Bytes per sector (the BFQ thesis §2.4: 512-byte sectors).
pub const SECTOR_BYTES: u64 = 512;

/// A point in time or a duration, in nanoseconds.
pub type Nanos = u64;

/// One millisecond in [`Nanos`].
pub const MS: Nanos = 1_000_000;

/// An application (process, thread, tenant) competing for the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct AppId(pub u32);

impl AppId {
    /// The id as a slice index.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for AppId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "app {}", self.0)
    }
}

/// Read or write (the schedulers treat both alike; the disk model may not).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Direction {
    /// Transfer from the disk.
    Read,
    /// Transfer to the disk.
    Write,
}

/// A request R_i^j: `len` contiguous sectors from `sector`, issued by `app`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Request {
    /// Caller-chosen tag, returned untouched (e.g. an index into the
    /// caller's own table of waiting requests).
    pub tag: u64,
    /// The issuing application.
    pub app: AppId,
    /// Position of the first sector.
    pub sector: u64,
    /// Size L_i^j in sectors (`1..=L_max`).
    pub len: u32,
    /// Read or write.
    pub dir: Direction,
    /// Arrival time a_i^j, set by the scheduler from `now` on
    /// [`add_request`](crate::DiskScheduler::add_request).
    pub arrival: Nanos,
    /// Synchronous: the application waits for it before issuing its next
    /// request (a read, a commit), so BFQ idles for the application's next
    /// request after it. Asynchronous requests (write-back, prefetch) are
    /// not waited for and BFQ does not idle after them, as the kernel's BFQ
    /// idles only for synchronous queues.
    pub sync: bool,
}

impl Request {
    /// A read of `len` sectors at `sector` for `app` (tag 0, arrival set on add).
    pub fn read(app: AppId, sector: u64, len: u32) -> Self {
        Self {
            tag: 0,
            app,
            sector,
            len,
            dir: Direction::Read,
            arrival: 0,
            sync: true,
        }
    }

    /// The same request, asynchronous (no idling after it).
    pub fn asynchronous(mut self) -> Self {
        self.sync = false;
        self
    }

    /// The same request with tag `tag`.
    pub fn with_tag(mut self, tag: u64) -> Self {
        self.tag = tag;
        self
    }

    /// First sector after the request.
    #[inline]
    pub fn end(&self) -> u64 {
        self.sector.saturating_add(u64::from(self.len))
    }
}

/// Why a scheduler's configuration or an application's was refused. Every
/// variant names the parameter and the allowed range; nothing is clamped.
#[derive(Clone, Debug, PartialEq)]
pub enum DiskConfigError {
    /// A numeric parameter outside its range.
    OutOfRange {
        /// Parameter name as in the config / CLI.
        name: &'static str,
        /// The rejected value.
        value: f64,
        /// Allowed range, human readable.
        allowed: &'static str,
    },
    /// Two parameters that must be ordered are not.
    Inconsistent {
        /// What must hold.
        rule: &'static str,
    },
    /// The application id is not configured.
    UnknownApp(AppId),
    /// The application id is already configured.
    AppExists(AppId),
    /// The id is beyond the scheduler's capacity.
    AppIdTooLarge {
        /// The rejected id.
        app: AppId,
        /// Ids must be below this.
        max_apps: u32,
    },
    /// Admitting this weight would push the sum of the weights above the
    /// admissible total (the thesis' Σφ ≤ 1 with φ_i = w_i / total).
    WeightSumTooLarge {
        /// Sum including the new weight.
        sum: u64,
        /// The admissible total.
        max: u64,
    },
    /// The group is not declared.
    UnknownGroup(u32),
    /// The group is already declared.
    GroupExists(u32),
    /// The group still has members (applications or groups).
    GroupNotEmpty(u32),
}

impl fmt::Display for DiskConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OutOfRange {
                name,
                value,
                allowed,
            } => write!(f, "{name} = {value} is out of range (allowed: {allowed})"),
            Self::Inconsistent { rule } => write!(f, "inconsistent parameters: {rule}"),
            Self::UnknownApp(a) => write!(f, "{a} is not configured"),
            Self::AppExists(a) => write!(f, "{a} is already configured"),
            Self::AppIdTooLarge { app, max_apps } => {
                write!(f, "{app} is out of range (ids 0..{max_apps})")
            }
            Self::WeightSumTooLarge { sum, max } => {
                write!(f, "sum of weights {sum} exceeds the admissible total {max}")
            }
            Self::UnknownGroup(g) => write!(f, "group {g} is not declared"),
            Self::GroupExists(g) => write!(f, "group {g} is already declared"),
            Self::GroupNotEmpty(g) => write!(f, "group {g} still has members"),
        }
    }
}

impl std::error::Error for DiskConfigError {}

/// Why a request was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddErrorKind {
    /// Its application is not configured.
    UnknownApp,
    /// Zero sectors.
    ZeroLength,
    /// Longer than the scheduler's L_max.
    TooLong {
        /// The request's length.
        len: u32,
        /// L_max.
        max: u32,
    },
    /// The scheduler holds as many requests as it was sized for.
    Full {
        /// The capacity.
        capacity: usize,
    },
}

/// A refused request, handed back to the caller: nothing is lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddError {
    /// Why.
    pub kind: AddErrorKind,
    /// The request, untouched.
    pub request: Request,
}

impl fmt::Display for AddError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.request;
        match self.kind {
            AddErrorKind::UnknownApp => write!(f, "request for unconfigured {}", r.app),
            AddErrorKind::ZeroLength => write!(f, "request of zero sectors from {}", r.app),
            AddErrorKind::TooLong { len, max } => {
                write!(
                    f,
                    "request of {len} sectors from {} exceeds L_max = {max}",
                    r.app
                )
            }
            AddErrorKind::Full { capacity } => {
                write!(f, "scheduler full ({capacity} requests queued)")
            }
        }
    }
}

impl std::error::Error for AddError {}

/// Checks `value` is in `lo..=hi`, else the typed error naming it. A
/// float that is not a number is in no range, so NaN is refused too.
pub(crate) fn check_range<T: PartialOrd + Copy + Into<f64>>(
    name: &'static str,
    value: T,
    lo: T,
    hi: T,
    allowed: &'static str,
) -> Result<T, DiskConfigError> {
    if !(lo <= value && value <= hi) {
        Err(DiskConfigError::OutOfRange {
            name,
            value: value.into(),
            allowed,
        })
    } else {
        Ok(value)
    }
}
