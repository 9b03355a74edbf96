//! Rates in policy files (`rate`, `reservation`): an integer with an
//! optional fraction and a unit, converted to exact bytes/s. A rate that is
//! not a whole number of bytes/s, or outside what the tree accepts, is an
//! error, never rounded or clamped.

use fairway_core::policy::tree::MAX_RATE;
use std::fmt;

/// Why a rate was refused; each names the text as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RateError {
    /// No digits.
    NoNumber(String),
    /// Digits that do not make a number.
    NotANumber(String),
    /// A unit other than the ones [`parse_rate`] lists.
    UnknownUnit {
        /// The rate as written.
        text: String,
        /// The unit as written.
        unit: String,
    },
    /// Not a whole number of bytes/s (`1 bit/s`).
    NotWholeBytes(String),
    /// 0, or above the tree's largest rate (2^40 bytes/s).
    OutOfRange(String),
}

impl fmt::Display for RateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RateError::NoNumber(t) => {
                write!(f, "rate {t:?}: expected a number and a unit, e.g. \"10 Mbit/s\"")
            }
            RateError::NotANumber(t) => write!(f, "rate {t:?}: not a number"),
            RateError::UnknownUnit { text, unit } => write!(
                f,
                "rate {text:?}: unknown unit {unit:?} (bit/s, kbit/s, Mbit/s, Gbit/s, B/s, kB/s, MB/s, GB/s)"
            ),
            RateError::NotWholeBytes(t) => write!(f, "rate {t:?} is not a whole number of bytes/s"),
            RateError::OutOfRange(t) => write!(f, "rate {t:?} outside 1 B/s ..= 2^40 B/s"),
        }
    }
}

impl std::error::Error for RateError {}

/// Parses a rate: an integer with optional fraction and a unit (`bit/s`,
/// `kbit/s`, `Mbit/s`, `Gbit/s`, `B/s`, `kB/s`, `MB/s`, `GB/s`; no unit:
/// bytes/s), to exact bytes/s in `1..=2^40`.
///
/// ```
/// use fairway_policy_file::parse_rate;
/// assert_eq!(parse_rate("10 Mbit/s"), Ok(1_250_000));
/// assert_eq!(parse_rate("1 bit/s").unwrap_err().to_string(),
///            "rate \"1 bit/s\" is not a whole number of bytes/s");
/// ```
pub fn parse_rate(text: &str) -> Result<u64, RateError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let num: String = num.chars().filter(|&c| c != '_').collect();
    let (int, frac) = num.split_once('.').unwrap_or((&num, ""));
    if int.is_empty() && frac.is_empty() {
        return Err(RateError::NoNumber(text.to_string()));
    }
    let digits = format!("{int}{frac}");
    let mant: u128 = digits
        .parse()
        .map_err(|_| RateError::NotANumber(text.to_string()))?;
    let (mul, div): (u128, u128) = match unit.trim() {
        "" | "B/s" => (1, 1),
        "kB/s" => (1_000, 1),
        "MB/s" => (1_000_000, 1),
        "GB/s" => (1_000_000_000, 1),
        "bit/s" | "bps" => (1, 8),
        "kbit/s" | "kbps" => (1_000, 8),
        "Mbit/s" | "Mbps" => (1_000_000, 8),
        "Gbit/s" | "Gbps" => (1_000_000_000, 8),
        u => {
            return Err(RateError::UnknownUnit {
                text: text.to_string(),
                unit: u.to_string(),
            })
        }
    };
    // Past u128 the rate is far outside the range (or far below 1 B/s).
    let out_of_range = || RateError::OutOfRange(text.to_string());
    let den = u32::try_from(frac.len())
        .ok()
        .and_then(|digits| 10u128.checked_pow(digits))
        .and_then(|scale| scale.checked_mul(div))
        .ok_or_else(out_of_range)?;
    let num = mant.checked_mul(mul).ok_or_else(out_of_range)?;
    if !num.is_multiple_of(den) {
        return Err(RateError::NotWholeBytes(text.to_string()));
    }
    let v = num / den;
    if v == 0 || v > u128::from(MAX_RATE) {
        return Err(out_of_range());
    }
    Ok(v as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_exact_or_refused() {
        assert_eq!(parse_rate("10 Mbit/s"), Ok(1_250_000));
        assert_eq!(parse_rate("1.5Gbit/s"), Ok(187_500_000));
        assert_eq!(parse_rate("125000"), Ok(125_000));
        assert_eq!(parse_rate("2 MB/s"), Ok(2_000_000));
        assert_eq!(
            parse_rate("1 bit/s"),
            Err(RateError::NotWholeBytes("1 bit/s".into()))
        );
        assert_eq!(parse_rate("0"), Err(RateError::OutOfRange("0".into())));
        assert!(matches!(
            parse_rate("10 furlongs"),
            Err(RateError::UnknownUnit { .. })
        ));
        assert_eq!(parse_rate("1099511627776"), Ok(MAX_RATE));
        assert_eq!(
            parse_rate("1099511627777"),
            Err(RateError::OutOfRange("1099511627777".into()))
        );
        // Past u128 on the way: refused, not a panic.
        let tiny = format!("0.{}1", "0".repeat(40));
        assert_eq!(parse_rate(&tiny), Err(RateError::OutOfRange(tiny.clone())));
        let huge = format!("{} Gbit/s", "9".repeat(38));
        assert_eq!(parse_rate(&huge), Err(RateError::OutOfRange(huge.clone())));
    }
}
