//! Rates, the one parser of every fairway file: policy files (`10 Mbit/s`,
//! `2 MB/s`), the shaper file (tc's `100mbit`, `1.5gbit`, `500kibit`) and
//! LibreQoS's decimal Mbps (`2.5`). A rate is a decimal number (digits,
//! an optional fraction, `_` between digits) and a unit, converted to
//! exact bit/s: no rounding (a rate finer than its file's unit of account
//! is an error), no clamping, and `nan`, `inf`, negatives and zero are
//! refused with the reason.
//!
//! Units, one list for every file:
//! * bits, case-insensitive, with or without `/s`: `bit`, `kbit`, `mbit`,
//!   `gbit`, `tbit` (powers of 1000) and tc's `kibit`, `mibit`, `gibit`,
//!   `tibit` (powers of 1024): `10 Mbit/s`, `100mbit`, `1.5Gbit`;
//! * bytes, with a capital `B` and `/s`: `B/s`, `kB/s`, `MB/s`, `GB/s`,
//!   `TB/s` (powers of 1000).
//!
//! `bps`, `kbps`, `mbps`, … are refused everywhere: tc reads `mbps` as
//! megabytes/s, LibreQoS and most people as megabits/s, and a file that
//! means one but runs the other is worse than one refused. A bare number
//! is bytes/s in a policy file (as before the formats merged) and refused
//! in the shaper file (tc reads it as bit/s, older tc as bytes/s): the
//! caller says which ([`Bare`]).

use fairway_core::policy::tree::MAX_RATE;
use std::fmt;

/// Largest rate in bit/s: the policy tree's ceiling (2^40 bytes/s =
/// 2^43 bit/s, 8.8 Tbit/s), so that every rate a file gives can be handed
/// to the tree.
pub const MAX_BITS: u64 = MAX_RATE * 8;

/// The units every rate takes, as error messages list them.
pub const UNITS: &str = "bit, kbit, mbit, gbit, tbit (x1000), kibit, mibit, gibit, tibit (x1024), \
     each with or without /s and in any case (10 Mbit/s, 100mbit); B/s, kB/s, MB/s, GB/s, TB/s (bytes)";

/// What a number without a unit means where it is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bare {
    /// Bytes/s (policy files).
    Bytes,
    /// Refused: the unit is required (the shaper file).
    Refused,
}

/// Why a rate was refused; each names the text as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RateError {
    /// Nothing written.
    Empty,
    /// Not a decimal number (`1e3`, `1.2.3`, `ten`).
    Malformed(String),
    /// A number without a unit where a unit is required.
    NoUnit(String),
    /// A unit [`UNITS`] does not list.
    UnknownUnit {
        /// The rate as written.
        text: String,
        /// The unit as written.
        unit: String,
    },
    /// `bps`, `kbps`, `mbps`, …: bits to some, bytes to tc.
    AmbiguousUnit {
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
    /// Not a whole number of bytes/s where bytes are the unit of account
    /// (a policy file: the tree counts bytes).
    NotWholeBytes(String),
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
            Self::NoUnit(t) => write!(f, "rate {t:?} has no unit (allowed: {UNITS})"),
            Self::UnknownUnit { text, unit } => {
                write!(f, "rate {text:?}: unknown unit {unit:?} (allowed: {UNITS})")
            }
            Self::AmbiguousUnit { text, unit } => write!(
                f,
                "rate {text:?}: unit {unit:?} is bits/s to some and bytes/s to tc; write mbit (or Mbit/s) for bits, MB/s for bytes"
            ),
            Self::Negative(t) => write!(f, "rate {t:?} is negative; rates are > 0"),
            Self::NotFinite(t) => write!(f, "rate {t:?} is not a finite number; rates are > 0"),
            Self::Zero(t) => write!(f, "rate {t:?} is zero; rates are > 0"),
            Self::TooFine(t) => {
                write!(
                    f,
                    "rate {t:?} is not a whole number of bit/s (1 bit/s is the finest)"
                )
            }
            Self::NotWholeBytes(t) => write!(f, "rate {t:?} is not a whole number of bytes/s"),
            Self::TooLarge(t) => write!(
                f,
                "rate {t:?} is above the largest, {MAX_BITS} bit/s (2^40 B/s, the policy tree's ceiling)"
            ),
        }
    }
}

impl std::error::Error for RateError {}

/// Parses a policy file's rate to exact bytes/s in `1..=2^40` (a bare
/// number is bytes/s).
///
/// ```
/// use fairway_policy_file::parse_rate;
/// assert_eq!(parse_rate("10 Mbit/s"), Ok(1_250_000));
/// assert_eq!(parse_rate("100mbit"), Ok(12_500_000));
/// assert_eq!(parse_rate("1 bit/s").unwrap_err().to_string(),
///            "rate \"1 bit/s\" is not a whole number of bytes/s");
/// ```
pub fn parse_rate(text: &str) -> Result<u64, RateError> {
    let bits = parse_bits(text, Bare::Bytes).map_err(|e| match e {
        // Finer than a bit is finer than a byte: say what the file counts.
        RateError::TooFine(t) => RateError::NotWholeBytes(t),
        e => e,
    })?;
    if !bits.is_multiple_of(8) {
        return Err(RateError::NotWholeBytes(text.to_string()));
    }
    Ok(bits / 8)
}

/// Parses the shaper file's rate (tc's `100mbit`, `1.5mbit`, or any unit
/// of [`UNITS`]; a unit is required) to bit/s in `1..=MAX_BITS`.
///
/// ```
/// use fairway_policy_file::rate::parse_tc_rate;
/// assert_eq!(parse_tc_rate("1.5mbit"), Ok(1_500_000));
/// assert_eq!(parse_tc_rate("10 Mbit/s"), Ok(10_000_000));
/// assert!(parse_tc_rate("100mbps").unwrap_err().to_string().contains("bytes/s to tc"));
/// ```
pub fn parse_tc_rate(text: &str) -> Result<u64, RateError> {
    parse_bits(text, Bare::Refused)
}

/// Parses LibreQoS's Mbps (`100`, `2.5`, `0.25`; no unit written) to
/// bit/s in `1..=MAX_BITS`.
pub fn parse_mbps(text: &str) -> Result<u64, RateError> {
    decimal(text, text.trim(), 1_000_000)
}

/// Parses a rate of any unit of [`UNITS`] to exact bit/s in
/// `1..=MAX_BITS`; `bare` says what a number without a unit means.
pub fn parse_bits(text: &str, bare: Bare) -> Result<u64, RateError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | '_')))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let unit = unit.trim();
    if t.is_empty() {
        return Err(RateError::Empty);
    }
    // `nan`, `inf`, `-inf` are words the split leaves in the unit.
    if num.is_empty() || num == "-" || num == "+" {
        let word = unit.split_whitespace().next().unwrap_or("");
        if matches!(
            word.to_ascii_lowercase().as_str(),
            "nan" | "inf" | "infinity"
        ) {
            return Err(RateError::NotFinite(text.to_string()));
        }
        if num.is_empty() {
            return Err(RateError::Malformed(text.to_string()));
        }
    }
    let scale = match unit {
        "" => match bare {
            Bare::Bytes => 8,
            Bare::Refused => return Err(RateError::NoUnit(text.to_string())),
        },
        u => unit_scale(text, u)?,
    };
    decimal(text, num, scale)
}

/// Bit/s per unit of `unit` (not empty).
fn unit_scale(text: &str, unit: &str) -> Result<u64, RateError> {
    // Bytes need the capital B: `mb/s` could be either.
    if let Some(prefix) = unit.strip_suffix("B/s") {
        let scale = match prefix {
            "" => Some(1),
            "k" | "K" => Some(1_000),
            "M" => Some(1_000_000),
            "G" => Some(1_000_000_000),
            "T" => Some(1_000_000_000_000),
            _ => None,
        };
        if let Some(s) = scale {
            return Ok(s * 8);
        }
    }
    let lower = unit.to_ascii_lowercase();
    let bits = lower.strip_suffix("/s").unwrap_or(&lower);
    Ok(match bits {
        "bit" => 1,
        "kbit" => 1_000,
        "mbit" => 1_000_000,
        "gbit" => 1_000_000_000,
        "tbit" => 1_000_000_000_000,
        "kibit" => 1 << 10,
        "mibit" => 1 << 20,
        "gibit" => 1 << 30,
        "tibit" => 1 << 40,
        "bps" | "kbps" | "mbps" | "gbps" | "tbps" => {
            return Err(RateError::AmbiguousUnit {
                text: text.to_string(),
                unit: unit.to_string(),
            })
        }
        _ => {
            return Err(RateError::UnknownUnit {
                text: text.to_string(),
                unit: unit.to_string(),
            })
        }
    })
}

/// `num` (a decimal number) times `scale` bit/s, exactly; `text` is the
/// rate as written, for errors.
fn decimal(text: &str, num: &str, scale: u64) -> Result<u64, RateError> {
    let err = |f: fn(String) -> RateError| Err(f(text.to_string()));
    if num.is_empty() {
        return if text.trim().is_empty() {
            Err(RateError::Empty)
        } else {
            err(RateError::Malformed)
        };
    }
    let lower = num.to_ascii_lowercase();
    let unsigned = lower.strip_prefix('+').unwrap_or(&lower);
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
    // `_` only between digits, as in TOML integers.
    let b = unsigned.as_bytes();
    let bad_sep = b.iter().enumerate().any(|(i, &c)| {
        c == b'_'
            && !(i > 0 && b[i - 1].is_ascii_digit() && b.get(i + 1).is_some_and(u8::is_ascii_digit))
    });
    if bad_sep {
        return err(RateError::Malformed);
    }
    let unsigned: String = unsigned.chars().filter(|&c| c != '_').collect();
    let (int, frac) = unsigned.split_once('.').unwrap_or((&unsigned, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !digits(int) || !digits(frac) {
        return err(RateError::Malformed);
    }
    // Trailing zeros of the fraction change nothing; what is left must
    // come to whole bit/s.
    let frac = frac.trim_end_matches('0');
    // Past 38 digits u128 overflows: a fraction that long cannot come to
    // whole bit/s (scale <= 2^43), an integer part that long is too large.
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
    let Some(num) = mant.checked_mul(u128::from(scale)) else {
        return err(RateError::TooLarge);
    };
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
#[path = "rate_tests.rs"]
mod tests;
