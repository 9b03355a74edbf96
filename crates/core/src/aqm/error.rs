//! The one error type of the active queue managers: a parameter outside its
//! range, named with the value given and the range accepted.

use super::codel::{MAX_INTERVAL_NS, MAX_MTU};
use super::fq_codel::{MAX_BUCKETS, MAX_LIMIT, MAX_QUANTUM, MAX_WAYS, MIN_QUANTUM};
use core::fmt;

/// A parameter of [`CodelParams`](super::CodelParams),
/// [`CodelFifoConfig`](super::CodelFifoConfig) or
/// [`FqCodelConfig`](super::FqCodelConfig) outside its range. Nothing is
/// clamped: the constructor refuses and allocates nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AqmConfigError {
    /// `target_ns` outside `1..=interval_ns`.
    Target {
        /// The target given, nanoseconds.
        target_ns: u64,
        /// The interval it must not exceed, nanoseconds.
        interval_ns: u64,
    },
    /// `interval_ns` outside `1..=`[`MAX_INTERVAL_NS`].
    Interval {
        /// The interval given, nanoseconds.
        interval_ns: u64,
    },
    /// `mtu` outside `1..=`[`MAX_MTU`].
    Mtu {
        /// The MTU given, bytes.
        mtu: u32,
    },
    /// `quantum` outside [`MIN_QUANTUM`]`..=`[`MAX_QUANTUM`].
    Quantum {
        /// The quantum given, bytes.
        quantum: u32,
    },
    /// `buckets` outside `1..=`[`MAX_BUCKETS`].
    Buckets {
        /// The number of buckets given.
        buckets: u32,
    },
    /// `ways` not a power of two in `1..=`[`MAX_WAYS`] dividing `buckets`.
    Ways {
        /// The number of ways given.
        ways: u32,
        /// The number of buckets it must divide.
        buckets: u32,
    },
    /// `limit` outside `1..=`[`MAX_LIMIT`].
    Limit {
        /// The packet limit given.
        limit: u32,
    },
}

impl fmt::Display for AqmConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            AqmConfigError::Target {
                target_ns,
                interval_ns,
            } => write!(
                f,
                "codel target {target_ns} ns out of range 1..={interval_ns} ns (at most the interval)"
            ),
            AqmConfigError::Interval { interval_ns } => write!(
                f,
                "codel interval {interval_ns} ns out of range 1..={MAX_INTERVAL_NS} ns"
            ),
            AqmConfigError::Mtu { mtu } => {
                write!(f, "codel mtu {mtu} bytes out of range 1..={MAX_MTU}")
            }
            AqmConfigError::Quantum { quantum } => write!(
                f,
                "fq_codel quantum {quantum} bytes out of range {MIN_QUANTUM}..={MAX_QUANTUM} \
                 (a smaller quantum costs one list rotation per quantum of a packet)"
            ),
            AqmConfigError::Buckets { buckets } => write!(
                f,
                "fq_codel buckets {buckets} out of range 1..={MAX_BUCKETS} \
                 (allocated up front; overflow scans the active buckets)"
            ),
            AqmConfigError::Ways { ways, buckets } => write!(
                f,
                "fq_codel ways {ways} out of range: a power of two in 1..={MAX_WAYS} \
                 that divides buckets ({buckets}) (the scan of a set is per packet)"
            ),
            AqmConfigError::Limit { limit } => write!(
                f,
                "queue limit {limit} packets out of range 1..={MAX_LIMIT} \
                 (every packet slot is allocated up front)"
            ),
        }
    }
}
