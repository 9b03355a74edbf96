//! Rates as operators write them, to exact bit/s: tc's units in the
//! shaper file (`100mbit`, `1.5mbit`, `10gbit`) and LibreQoS's decimal
//! Mbps (`2.5`). A rate is used exactly as written or refused: no
//! rounding (a fraction finer than 1 bit/s is an error), no clamping, no
//! default unit (a bare number means bit/s to tc and bytes/s to old tc
//! versions, so it is refused).
//!
//! This parser is the shaper's own for now; the policy file's rates
//! (`10 Mbit/s`, bytes/s) and these should become one parser when the two
//! file formats merge.

use std::fmt;

/// Largest rate in bit/s: the policy tree's ceiling (2^40 bytes/s,
/// 8.8 Tbit/s), so that every rate of a plan can be handed to the tree.
pub const MAX_BITS: u64 = fairway_core::policy::tree::MAX_RATE * 8;

/// The units [`parse_tc_rate`] takes (case-insensitive, as tc).
pub const TC_UNITS: &str =
    "bit, kbit, mbit, gbit, tbit (x1000), kibit, mibit, gibit, tibit (x1024)";

/// Why a rate was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RateError {
    /// Nothing written.
    Empty,
    /// Not a decimal number (`1e3`, `1.2.3`, `ten`).
    Malformed(String),
    /// A number without a unit (shaper file).
    NoUnit(String),
    /// A unit [`TC_UNITS`] does not list; tc's byte units (`mbps`) are
    /// refused too, since LibreQoS's "Mbps" means megabits.
    UnknownUnit {
        /// The rate as written.
        text: String,
        /// The unit as written.
        unit: String,
    },
    /// Below zero.
    Negative(String),
    /// `nan` or `inf`.
    NotFinite(String),
    /// Zero.
    Zero(String),
    /// Not a whole number of bit/s.
    TooFine(String),
    /// Above [`MAX_BITS`].
    TooLarge(String),
}

impl fmt::Display for RateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("rate is empty; write a positive number"),
            Self::Malformed(t) => write!(
                f,
                "rate {t:?} is not a decimal number (digits with an optional fraction, e.g. 2.5)"
            ),
            Self::NoUnit(t) => write!(f, "rate {t:?} has no unit (allowed: {TC_UNITS})"),
            Self::UnknownUnit { text, unit } => {
                write!(
                    f,
                    "rate {text:?}: unknown unit {unit:?} (allowed: {TC_UNITS})"
                )
            }
            Self::Negative(t) => write!(f, "rate {t:?} is negative; rates are > 0"),
            Self::NotFinite(t) => write!(f, "rate {t:?} is not a finite number; rates are > 0"),
            Self::Zero(t) => write!(f, "rate {t:?} is zero; rates are > 0"),
            Self::TooFine(t) => {
                write!(
                    f,
                    "rate {t:?} is not a whole number of bit/s (1 bit/s is the finest)"
                )
            }
            Self::TooLarge(t) => write!(f, "rate {t:?} is above the largest, {MAX_BITS} bit/s"),
        }
    }
}

impl std::error::Error for RateError {}

/// Parses a tc rate (`100mbit`, `1.5mbit`, `500kbit`, `10gbit`) to bit/s
/// in `1..=MAX_BITS`.
///
/// ```
/// use fairway_shaper::rate::parse_tc_rate;
/// assert_eq!(parse_tc_rate("1.5mbit"), Ok(1_500_000));
/// assert!(parse_tc_rate("100mbps").unwrap_err().to_string().contains("unknown unit"));
/// ```
pub fn parse_tc_rate(text: &str) -> Result<u64, RateError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" if num.is_empty() => return parse_decimal(text, t, 1),
        "" => return Err(RateError::NoUnit(text.to_string())),
        "bit" => 1,
        "kbit" => 1_000,
        "mbit" => 1_000_000,
        "gbit" => 1_000_000_000,
        "tbit" => 1_000_000_000_000,
        "kibit" => 1 << 10,
        "mibit" => 1 << 20,
        "gibit" => 1 << 30,
        "tibit" => 1 << 40,
        _ if num.is_empty() => return parse_decimal(text, t, 1),
        u => {
            return Err(RateError::UnknownUnit {
                text: text.to_string(),
                unit: u.to_string(),
            })
        }
    };
    parse_decimal(text, num, scale)
}

/// Parses LibreQoS's Mbps (`100`, `2.5`, `0.25`) to bit/s in
/// `1..=MAX_BITS`.
pub fn parse_mbps(text: &str) -> Result<u64, RateError> {
    parse_decimal(text, text.trim(), 1_000_000)
}

/// `num` (a decimal number) times `scale`, exactly; `text` is the rate
/// as written, for errors.
fn parse_decimal(text: &str, num: &str, scale: u64) -> Result<u64, RateError> {
    let err = |f: fn(String) -> RateError| Err(f(text.to_string()));
    let lower = num.to_ascii_lowercase();
    let unsigned = lower.strip_prefix('+').unwrap_or(&lower);
    if num.is_empty() {
        return Err(RateError::Empty);
    }
    if let Some(rest) = unsigned.strip_prefix('-') {
        return if matches!(rest, "nan" | "inf" | "infinity") {
            err(RateError::NotFinite)
        } else {
            err(RateError::Negative)
        };
    }
    if matches!(unsigned, "nan" | "inf" | "infinity") {
        return err(RateError::NotFinite);
    }
    let (int, frac) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !digits(int) || !digits(frac) {
        return err(RateError::Malformed);
    }
    // Trailing zeros of the fraction change nothing; what is left must
    // come to whole bit/s.
    let frac = frac.trim_end_matches('0');
    // Past 38 digits u128 overflows: a fraction that long cannot come to
    // whole bit/s (scale <= 2^40), an integer part that long is too large.
    if frac.len() > 38 {
        return err(RateError::TooFine);
    }
    let all = format!("{int}{frac}");
    let all = all.trim_start_matches('0');
    if all.len() > 38 {
        return err(RateError::TooLarge);
    }
    let mant: u128 = if all.is_empty() {
        0
    } else {
        all.parse::<u128>()
            .map_err(|_| RateError::Malformed(text.to_string()))?
    };
    let den = 10u128.pow(frac.len() as u32);
    let num = mant
        .checked_mul(u128::from(scale))
        .ok_or_else(|| RateError::TooLarge(text.to_string()))?;
    if num == 0 {
        return err(RateError::Zero);
    }
    if num % den != 0 {
        return err(RateError::TooFine);
    }
    let bits = num / den;
    if bits > u128::from(MAX_BITS) {
        return err(RateError::TooLarge);
    }
    Ok(bits as u64)
}

/// A rate in bit/s as tc would print it, exactly (`1500kbit`, `2gbit`).
pub fn show(bits: u64) -> String {
    for (div, unit) in [
        (1_000_000_000_000, "tbit"),
        (1_000_000_000, "gbit"),
        (1_000_000, "mbit"),
        (1_000, "kbit"),
    ] {
        if bits >= div && bits.is_multiple_of(div) {
            return format!("{}{unit}", bits / div);
        }
    }
    format!("{bits}bit")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tc_units_are_exact() {
        assert_eq!(parse_tc_rate("100mbit"), Ok(100_000_000));
        assert_eq!(parse_tc_rate("1gbit"), Ok(1_000_000_000));
        assert_eq!(parse_tc_rate("500kbit"), Ok(500_000));
        assert_eq!(parse_tc_rate("1.5mbit"), Ok(1_500_000));
        assert_eq!(parse_tc_rate("10GBit"), Ok(10_000_000_000));
        assert_eq!(parse_tc_rate("1mibit"), Ok(1 << 20));
        assert_eq!(parse_tc_rate("64bit"), Ok(64));
        assert_eq!(parse_tc_rate("1.000mbit"), Ok(1_000_000));
    }

    #[test]
    fn tc_rates_are_refused_with_the_reason() {
        let unknown = parse_tc_rate("100mbps").unwrap_err();
        assert_eq!(
            unknown.to_string(),
            format!("rate \"100mbps\": unknown unit \"mbps\" (allowed: {TC_UNITS})")
        );
        assert!(matches!(parse_tc_rate("100"), Err(RateError::NoUnit(_))));
        assert!(matches!(parse_tc_rate("0mbit"), Err(RateError::Zero(_))));
        assert!(matches!(
            parse_tc_rate("-5mbit"),
            Err(RateError::Negative(_))
        ));
        assert!(matches!(parse_tc_rate("nan"), Err(RateError::NotFinite(_))));
        assert!(matches!(parse_tc_rate("inf"), Err(RateError::NotFinite(_))));
        assert!(matches!(
            parse_tc_rate("0.5bit"),
            Err(RateError::TooFine(_))
        ));
        assert!(matches!(
            parse_tc_rate("1e3bit"),
            Err(RateError::UnknownUnit { .. })
        ));
        assert!(matches!(
            parse_tc_rate("9999tbit"),
            Err(RateError::TooLarge(_))
        ));
        assert!(matches!(parse_tc_rate(""), Err(RateError::Empty)));
        let huge = format!("{}bit", "9".repeat(60));
        assert!(matches!(parse_tc_rate(&huge), Err(RateError::TooLarge(_))));
        let tiny = format!("0.{}1mbit", "0".repeat(60));
        assert!(matches!(parse_tc_rate(&tiny), Err(RateError::TooFine(_))));
    }

    #[test]
    fn libreqos_mbps_are_exact() {
        assert_eq!(parse_mbps("2.5"), Ok(2_500_000));
        assert_eq!(parse_mbps("0.01"), Ok(10_000));
        assert_eq!(parse_mbps("155"), Ok(155_000_000));
        assert_eq!(parse_mbps("0.000001"), Ok(1));
        assert!(matches!(
            parse_mbps("0.0000001"),
            Err(RateError::TooFine(_))
        ));
        assert!(matches!(parse_mbps("0"), Err(RateError::Zero(_))));
        assert!(matches!(parse_mbps("-1"), Err(RateError::Negative(_))));
        assert!(matches!(parse_mbps("NaN"), Err(RateError::NotFinite(_))));
        assert!(matches!(parse_mbps("1e3"), Err(RateError::Malformed(_))));
        assert!(matches!(parse_mbps(""), Err(RateError::Empty)));
    }

    #[test]
    fn rates_show_as_tc_writes_them() {
        assert_eq!(show(1_500_000), "1500kbit");
        assert_eq!(show(2_000_000_000), "2gbit");
        assert_eq!(show(64), "64bit");
    }
}
