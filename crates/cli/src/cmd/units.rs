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
//! The parsers return `String` errors so that clap prints them after the
//! flag's name (`invalid value '-3' for '--pairs <N>': ...`).

/// Parses a whole number of type `T` (no sign, no multiplier).
fn whole<T: TryFrom<u128>>(text: &str) -> Result<T, String> {
    let t = text.trim();
    if t.starts_with('-') {
        return Err(format!("{t} is negative; a count must not be negative"));
    }
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("`{t}` is not a whole number"));
    }
    let too_large = || format!("{t} is too large (at most {})", max_of::<T>());
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

fn at_least_one<T: TryFrom<u128> + Into<u128> + Copy>(text: &str) -> Result<T, String> {
    let v: T = whole(text)?;
    if v.into() == 0 {
        return Err(format!("0 is out of range 1..={}", max_of::<T>()));
    }
    Ok(v)
}

/// A count ≥ 0 as a `u64` (clap value parser), for counts where none is a
/// meaningful choice (`bench --warmup 0`: time from a cold start).
pub fn count_or_zero_u64(text: &str) -> Result<u64, String> {
    whole(text)
}

/// A count ≥ 1 as a `u64` (clap value parser).
pub fn count_u64(text: &str) -> Result<u64, String> {
    at_least_one(text)
}

/// A count ≥ 1 as a `u32` (clap value parser).
pub fn count_u32(text: &str) -> Result<u32, String> {
    at_least_one(text)
}

/// A count ≥ 1 as a `usize` (clap value parser).
pub fn count_usize(text: &str) -> Result<usize, String> {
    at_least_one::<u64>(text).and_then(|v| {
        usize::try_from(v).map_err(|_| format!("{v} is too large (at most {})", usize::MAX))
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
fn scaled(text: &str, num: &str, mult: u128, what: &str) -> Result<u64, String> {
    let num: String = num.chars().filter(|&c| c != '_').collect();
    let (int, frac) = num.split_once('.').unwrap_or((&num, ""));
    if (int.is_empty() && frac.is_empty()) || frac.contains('.') {
        return Err(format!("`{text}` is not a {what} (e.g. 10G)"));
    }
    let too_large = || format!("{text} is too large (at most {})", u64::MAX);
    let digits: u128 = format!("{int}{frac}").parse().map_err(|_| too_large())?;
    let scale = 10u128
        .checked_pow(u32::try_from(frac.len()).map_err(|_| too_large())?)
        .ok_or_else(too_large)?;
    let v = digits.checked_mul(mult).ok_or_else(too_large)?;
    if v % scale != 0 {
        return Err(format!("{text} is not a whole number of {what} units"));
    }
    let v = u64::try_from(v / scale).map_err(|_| too_large())?;
    if v == 0 {
        return Err(format!("{text}: a {what} must be positive"));
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

/// A bit rate in bit/s: `10G`, `2.5g`, `10gbit`, `100Mbit/s`, `1000000`.
pub fn bit_rate(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if t.starts_with('-') {
        return Err(format!("{t} is negative; a rate must be positive"));
    }
    let (num, unit) = split_number(t);
    let unit = unit.trim();
    let lower = unit.to_ascii_lowercase();
    let prefix = lower
        .strip_suffix("bit/s")
        .or_else(|| lower.strip_suffix("bit"))
        .unwrap_or(&lower);
    let mult = multiplier(prefix).ok_or_else(|| {
        format!("unknown unit `{unit}` in `{t}` (bit/s with K, M, G, T: 10G, 10gbit, 100Mbit/s)")
    })?;
    scaled(t, num, mult, "bit rate")
}

/// A rate in bytes/s, written as a bit rate (`100mbit`, `10G`: bits) or
/// in bytes with `B/s` (`12.5MB/s`, `1250kB/s`, `1500B/s`).
pub fn byte_rate(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if t.starts_with('-') {
        return Err(format!("{t} is negative; a rate must be positive"));
    }
    let (num, unit) = split_number(t);
    let unit = unit.trim();
    if let Some(prefix) = unit
        .strip_suffix("B/s")
        .or_else(|| unit.strip_suffix("byte/s"))
    {
        let mult = multiplier(prefix).ok_or_else(|| {
            format!("unknown multiplier `{prefix}` in `{t}` (K, M, G or T: 12.5MB/s)")
        })?;
        return scaled(t, num, mult, "byte rate");
    }
    let bits = bit_rate(t).map_err(|e| format!("{e}; or bytes with B/s: 12.5MB/s"))?;
    if bits % 8 != 0 {
        return Err(format!(
            "{t} is {bits} bit/s, not a whole number of bytes/s (give a multiple of 8 bit/s, or B/s)"
        ));
    }
    Ok(bits / 8)
}

/// A packet rate in packets/s: `4000`, `200k`, `1.6M`.
pub fn packet_rate(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if t.starts_with('-') {
        return Err(format!("{t} is negative; a rate must be positive"));
    }
    let (num, unit) = split_number(t);
    let mult = multiplier(unit.trim())
        .ok_or_else(|| format!("unknown multiplier `{unit}` in `{t}` (K, M, G or T: 200k)"))?;
    scaled(t, num, mult, "packet rate")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_reject_zero_negative_and_overflow_with_the_reason() {
        assert_eq!(count_u64("5"), Ok(5));
        assert!(count_u64("0").unwrap_err().contains("out of range 1.."));
        assert!(count_u64("-3").unwrap_err().contains("negative"));
        assert!(count_u64("99999999999999999999")
            .unwrap_err()
            .contains("too large"));
        assert!(count_u32("4294967296").unwrap_err().contains("too large"));
        assert_eq!(count_u32("4294967295"), Ok(u32::MAX));
        assert!(count_u64("1.5").unwrap_err().contains("not a whole number"));
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
        assert!(bit_rate("-1G").unwrap_err().contains("negative"));
        assert!(bit_rate("99999999T").unwrap_err().contains("too large"));
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
            .contains("whole number of bytes"));
        assert!(byte_rate("10Mbps").is_err(), "bps is ambiguous");
        assert!(byte_rate("-1MB/s").unwrap_err().contains("negative"));
        assert!(byte_rate("1.5B/s").is_err());
        assert!(byte_rate("99999999TB/s").unwrap_err().contains("too large"));
    }

    #[test]
    fn packet_rates_take_the_same_multipliers() {
        assert_eq!(packet_rate("200k"), Ok(200_000));
        assert_eq!(packet_rate("1.6M"), Ok(1_600_000));
        assert_eq!(packet_rate("4000"), Ok(4000));
        assert!(packet_rate("4kbit").is_err());
    }
}
