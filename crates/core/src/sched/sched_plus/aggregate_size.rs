//! [`AggregateSize`]: SCHED+'s `M` (the QFQ+ paper §3), the largest number of
//! flows per aggregate, checked once so that the constructors taking it
//! never adjust it.

use super::{DEFAULT_M, MAX_AGGREGATE_FLOWS};
use crate::error::ConfigError;

/// `M`, a number in `1..=`[`MAX_AGGREGATE_FLOWS`] (64): the aggregate size
/// [`SchedPlus::with_options`](super::SchedPlus::with_options) uses exactly.
///
/// # Examples
///
/// ```
/// use fairway_core::sched::sched_plus::AggregateSize;
///
/// assert_eq!(AggregateSize::new(64).unwrap().get(), 64);
/// let err = AggregateSize::new(65).unwrap_err();
/// assert_eq!(err.to_string(), "invalid parameter: aggregate size m must be in 1..=64");
/// assert!(AggregateSize::new(0).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AggregateSize(u32);

impl AggregateSize {
    /// [`DEFAULT_M`] (8).
    pub const DEFAULT: AggregateSize = AggregateSize(DEFAULT_M);
    /// The largest, [`MAX_AGGREGATE_FLOWS`] (64).
    pub const MAX: AggregateSize = AggregateSize(MAX_AGGREGATE_FLOWS);

    /// `m` if it is in `1..=64`, else [`ConfigError::InvalidParameter`]
    /// naming `m` and that range.
    pub const fn new(m: u32) -> Result<Self, ConfigError> {
        if m == 0 || m > MAX_AGGREGATE_FLOWS {
            Err(ConfigError::InvalidParameter(
                "aggregate size m must be in 1..=64",
            ))
        } else {
            Ok(AggregateSize(m))
        }
    }

    /// The value, in `1..=64`.
    pub const fn get(self) -> u32 {
        self.0
    }
}

impl Default for AggregateSize {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl TryFrom<u32> for AggregateSize {
    type Error = ConfigError;

    fn try_from(m: u32) -> Result<Self, ConfigError> {
        Self::new(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn range_limits_and_one_past() {
        assert_eq!(AggregateSize::new(1).map(AggregateSize::get), Ok(1));
        assert_eq!(AggregateSize::new(64).map(AggregateSize::get), Ok(64));
        for bad in [0, 65, u32::MAX] {
            let err = AggregateSize::new(bad).unwrap_err();
            assert!(err.to_string().contains("m must be in 1..=64"), "{err}");
        }
        const _: () = assert!(MAX_AGGREGATE_FLOWS == 64 && DEFAULT_M <= MAX_AGGREGATE_FLOWS);
    }
}
