//! One grammar for the numbers every subcommand takes.
//!
//! - Counts (`--pairs`, `--repeat`, `--rounds`): whole numbers ≥ 1 (≥ 0
//!   where none makes sense, `--warmup`). Zero, negatives and values beyond
//!   the type are rejected with the reason, never raised to 1 or wrapped.
//! - Rates: a decimal number with an optional SI multiplier K, M, G or T
//!   (powers of 1000, any case), and for bit rates optionally the unit as tc
//!   writes it: `10G`, `2.5G`, `10gbit`, `100Mbit/s`, `1000000`. Packet rates
//!   take the same multipliers: `200k`, `1.6M`. `bps` is refused because tc
//!   reads it as bytes/s and most other tools as bits/s.
//!
//! - Byte rates (`policy run --link`, whose model counts bytes/s): the bit
//!   rates above, which must come to a whole number of bytes/s (`100mbit`
//!   = 12500000 B/s), or bytes stated with `B/s`: `12.5MB/s`, `1250kB/s`.
//!   A bare number is bit/s here too, as everywhere.
//!
//! The parsers return a [`UnitError`]; clap prints it after the flag's
//! name (`invalid value '-3' for '--pairs <N>': ...`).

use std::fmt;

/// Why a count or a rate was refused; the text says what was given and
/// what is accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnitError {
    /// A leading `-`; `rule` says what the value must be instead.
    Negative {
        /// The value given.
        text: String,
        /// `a count must not be negative` or `a rate must be positive`.
        rule: &'static str,
    },
    /// A count with something other than digits.
    NotWhole {
        /// The value given.
        text: String,
    },
    /// A value beyond its type.
    TooLarge {
        /// The value given.
        text: String,
        /// The largest value accepted.
        max: u128,
    },
    /// A count of 0 where at least one is needed.
    Zero {
        /// The largest value accepted.
        max: u128,
    },
    /// A rate without a number.
    NotANumber {
        /// The value given.
        text: String,
        /// `bit rate`, `byte rate` or `packet rate`.
        what: &'static str,
    },
    /// A rate that is a fraction of its unit.
    Fraction {
        /// The value given.
        text: String,
        /// `bit rate`, `byte rate` or `packet rate`.
        what: &'static str,
    },
    /// A rate of zero.
    NotPositive {
        /// The value given.
        text: String,
        /// `bit rate`, `byte rate` or `packet rate`.
        what: &'static str,
    },
    /// A bit rate whose unit is not `bit`, `bit/s` or none, after a multiplier.
    UnknownUnit {
        /// The unit given.
        unit: String,
        /// The value given.
        text: String,
    },
    /// A multiplier other than K, M, G or T.
    UnknownMultiplier {
        /// The multiplier given.
        prefix: String,
        /// The value given.
        text: String,
        /// A value written right, for the message.
        example: &'static str,
    },
    /// A byte rate that was neither bits nor bytes; the bit-rate reason.
    NeitherBitsNorBytes(Box<UnitError>),
    /// A bit rate that is not a whole number of bytes/s.
    NotWholeBytes {
        /// The value given.
        text: String,
        /// Its value in bit/s.
        bits: u64,
    },
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Negative { text, rule } => write!(f, "{text} is negative; {rule}"),
            Self::NotWhole { text } => write!(f, "`{text}` is not a whole number"),
            Self::TooLarge { text, max } => write!(f, "{text} is too large (at most {max})"),
            Self::Zero { max } => write!(f, "0 is out of range 1..={max}"),
            Self::NotANumber { text, what } => write!(f, "`{text}` is not a {what} (e.g. 10G)"),
            Self::Fraction { text, what } => {
                write!(f, "{text} is not a whole number of {what} units")
            }
            Self::NotPositive { text, what } => write!(f, "{text}: a {what} must be positive"),
            Self::UnknownUnit { unit, text } => write!(
                f,
                "unknown unit `{unit}` in `{text}` (bit/s with K, M, G, T: 10G, 10gbit, 100Mbit/s)"
            ),
            Self::UnknownMultiplier {
                prefix,
                text,
                example,
            } => write!(
                f,
                "unknown multiplier `{prefix}` in `{text}` (K, M, G or T: {example})"
            ),
            Self::NeitherBitsNorBytes(e) => write!(f, "{e}; or bytes with B/s: 12.5MB/s"),
            Self::NotWholeBytes { text, bits } => write!(
                f,
                "{text} is {bits} bit/s, not a whole number of bytes/s (give a multiple of 8 bit/s, or B/s)"
            ),
        }
    }
}

impl std::error::Error for UnitError {}

const COUNT_RULE: &str = "a count must not be negative";
const RATE_RULE: &str = "a rate must be positive";

/// Parses a whole number of type `T` (no sign, no multiplier).
fn whole<T: TryFrom<u128>>(text: &str) -> Result<T, UnitError> {
    let t = text.trim();
    if t.starts_with('-') {
        return Err(UnitError::Negative {
            text: t.to_string(),
            rule: COUNT_RULE,
        });
    }
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(UnitError::NotWhole {
            text: t.to_string(),
        });
    }
    let too_large = || UnitError::TooLarge {
        text: t.to_string(),
        max: max_of::<T>(),
    };
    let v: u128 = t.parse().map_err(|_| too_large())?;
    T::try_from(v).map_err(|_| too_large())
}

/// The largest value of `T`, for messages.
fn max_of<T: TryFrom<u128>>() -> u128 {
    // Binary search on the conversion: T is an unsigned integer type here.
    let (mut lo, mut hi) = (0u128, u128::MAX);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if T::try_from(mid).is_ok() {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

fn at_least_one<T: TryFrom<u128> + Into<u128> + Copy>(text: &str) -> Result<T, UnitError> {
    let v: T = whole(text)?;
    if v.into() == 0 {
        return Err(UnitError::Zero { max: max_of::<T>() });
    }
    Ok(v)
}

/// A count ≥ 0 as a `u64` (clap value parser), for counts where none is a
/// meaningful choice (`bench --warmup 0`: time from a cold start).
pub fn count_or_zero_u64(text: &str) -> Result<u64, UnitError> {
    whole(text)
}

/// A count ≥ 1 as a `u64` (clap value parser).
pub fn count_u64(text: &str) -> Result<u64, UnitError> {
    at_least_one(text)
}

/// A count ≥ 1 as a `u32` (clap value parser).
pub fn count_u32(text: &str) -> Result<u32, UnitError> {
    at_least_one(text)
}

/// A count ≥ 1 as a `usize` (clap value parser).
pub fn count_usize(text: &str) -> Result<usize, UnitError> {
    at_least_one::<u64>(text).and_then(|v| {
        usize::try_from(v).map_err(|_| UnitError::TooLarge {
            text: v.to_string(),
            max: usize::MAX as u128,
        })
    })
}

/// Splits `2.5Gbit/s` into the number `2.5` and the rest `Gbit/s`.
fn split_number(t: &str) -> (&str, &str) {
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(t.len());
    t.split_at(end)
}

/// `number × multiplier`, exact for decimal fractions, ≥ 1 and within u64.
fn scaled(text: &str, num: &str, mult: u128, what: &'static str) -> Result<u64, UnitError> {
    let num: String = num.chars().filter(|&c| c != '_').collect();
    let (int, frac) = num.split_once('.').unwrap_or((&num, ""));
    let text = text.to_string();
    if (int.is_empty() && frac.is_empty()) || frac.contains('.') {
        return Err(UnitError::NotANumber { text, what });
    }
    let too_large = || UnitError::TooLarge {
        text: text.clone(),
        max: u128::from(u64::MAX),
    };
    let digits: u128 = format!("{int}{frac}").parse().map_err(|_| too_large())?;
    let scale = 10u128
        .checked_pow(u32::try_from(frac.len()).map_err(|_| too_large())?)
        .ok_or_else(too_large)?;
    let v = digits.checked_mul(mult).ok_or_else(too_large)?;
    if v % scale != 0 {
        return Err(UnitError::Fraction { text, what });
    }
    let v = u64::try_from(v / scale).map_err(|_| too_large())?;
    if v == 0 {
        return Err(UnitError::NotPositive { text, what });
    }
    Ok(v)
}

fn multiplier(prefix: &str) -> Option<u128> {
    match prefix.to_ascii_lowercase().as_str() {
        "" => Some(1),
        "k" => Some(1_000),
        "m" => Some(1_000_000),
        "g" => Some(1_000_000_000),
        "t" => Some(1_000_000_000_000),
        _ => None,
    }
}

/// Refuses a leading `-` in a rate.
fn not_negative_rate(t: &str) -> Result<(), UnitError> {
    if t.starts_with('-') {
        return Err(UnitError::Negative {
            text: t.to_string(),
            rule: RATE_RULE,
        });
    }
    Ok(())
}

/// A bit rate in bit/s: `10G`, `2.5g`, `10gbit`, `100Mbit/s`, `1000000`.
pub fn bit_rate(text: &str) -> Result<u64, UnitError> {
    let t = text.trim();
    not_negative_rate(t)?;
    let (num, unit) = split_number(t);
    let unit = unit.trim();
    let lower = unit.to_ascii_lowercase();
    let prefix = lower
        .strip_suffix("bit/s")
        .or_else(|| lower.strip_suffix("bit"))
        .unwrap_or(&lower);
    let mult = multiplier(prefix).ok_or_else(|| UnitError::UnknownUnit {
        unit: unit.to_string(),
        text: t.to_string(),
    })?;
    scaled(t, num, mult, "bit rate")
}

/// A rate in bytes/s, written as a bit rate (`100mbit`, `10G`: bits) or
/// in bytes with `B/s` (`12.5MB/s`, `1250kB/s`, `1500B/s`).
pub fn byte_rate(text: &str) -> Result<u64, UnitError> {
    let t = text.trim();
    not_negative_rate(t)?;
    let (num, unit) = split_number(t);
    let unit = unit.trim();
    if let Some(prefix) = unit
        .strip_suffix("B/s")
        .or_else(|| unit.strip_suffix("byte/s"))
    {
        let mult = multiplier(prefix).ok_or_else(|| UnitError::UnknownMultiplier {
            prefix: prefix.to_string(),
            text: t.to_string(),
            example: "12.5MB/s",
        })?;
        return scaled(t, num, mult, "byte rate");
    }
    let bits = bit_rate(t).map_err(|e| UnitError::NeitherBitsNorBytes(Box::new(e)))?;
    if bits % 8 != 0 {
        return Err(UnitError::NotWholeBytes {
            text: t.to_string(),
            bits,
        });
    }
    Ok(bits / 8)
}

/// A packet rate in packets/s: `4000`, `200k`, `1.6M`.
pub fn packet_rate(text: &str) -> Result<u64, UnitError> {
    let t = text.trim();
    not_negative_rate(t)?;
    let (num, unit) = split_number(t);
    let mult = multiplier(unit.trim()).ok_or_else(|| UnitError::UnknownMultiplier {
        prefix: unit.to_string(),
        text: t.to_string(),
        example: "200k",
    })?;
    scaled(t, num, mult, "packet rate")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_reject_zero_negative_and_overflow_with_the_reason() {
        assert_eq!(count_u64("5"), Ok(5));
        assert!(count_u64("0")
            .unwrap_err()
            .to_string()
            .contains("out of range 1.."));
        assert!(count_u64("-3")
            .unwrap_err()
            .to_string()
            .contains("negative"));
        assert!(count_u64("99999999999999999999")
            .unwrap_err()
            .to_string()
            .contains("too large"));
        assert!(count_u32("4294967296")
            .unwrap_err()
            .to_string()
            .contains("too large"));
        assert_eq!(count_u32("4294967295"), Ok(u32::MAX));
        assert!(count_u64("1.5")
            .unwrap_err()
            .to_string()
            .contains("not a whole number"));
    }

    #[test]
    fn bit_rates_take_si_multipliers_and_tc_units() {
        assert_eq!(bit_rate("10G"), Ok(10_000_000_000));
        assert_eq!(bit_rate("10gbit"), Ok(10_000_000_000));
        assert_eq!(bit_rate("100mbit"), Ok(100_000_000));
        assert_eq!(bit_rate("100Mbit/s"), Ok(100_000_000));
        assert_eq!(bit_rate("2.5G"), Ok(2_500_000_000));
        assert_eq!(bit_rate("1T"), Ok(1_000_000_000_000));
        assert_eq!(bit_rate("1500"), Ok(1500));
        assert!(bit_rate("10mbps").is_err());
        assert!(bit_rate("0").is_err());
        assert!(bit_rate("-1G")
            .unwrap_err()
            .to_string()
            .contains("negative"));
        assert!(bit_rate("99999999T")
            .unwrap_err()
            .to_string()
            .contains("too large"));
        assert!(
            bit_rate("1.0001").is_err(),
            "fractions of a bit are refused"
        );
    }

    #[test]
    fn byte_rates_are_bits_unless_stated_in_bytes() {
        assert_eq!(byte_rate("100Mbit/s"), Ok(12_500_000));
        assert_eq!(byte_rate("100mbit"), Ok(12_500_000));
        assert_eq!(byte_rate("10G"), Ok(1_250_000_000));
        assert_eq!(byte_rate("8000"), Ok(1000), "a bare number is bit/s");
        assert_eq!(byte_rate("12.5MB/s"), Ok(12_500_000));
        assert_eq!(byte_rate("1250kB/s"), Ok(1_250_000));
        assert_eq!(byte_rate("1500B/s"), Ok(1500));
        assert!(byte_rate("12bit")
            .unwrap_err()
            .to_string()
            .contains("whole number of bytes"));
        assert!(byte_rate("10Mbps").is_err(), "bps is ambiguous");
        assert!(byte_rate("-1MB/s")
            .unwrap_err()
            .to_string()
            .contains("negative"));
        assert!(byte_rate("1.5B/s").is_err());
        assert!(byte_rate("99999999TB/s")
            .unwrap_err()
            .to_string()
            .contains("too large"));
    }

    #[test]
    fn packet_rates_take_the_same_multipliers() {
        assert_eq!(packet_rate("200k"), Ok(200_000));
        assert_eq!(packet_rate("1.6M"), Ok(1_600_000));
        assert_eq!(packet_rate("4000"), Ok(4000));
        assert!(packet_rate("4kbit").is_err());
    }
}
