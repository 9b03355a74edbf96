//! The one JSON writer of every `--json` output: floats keep their
//! meaningful digits only.
//!
//! Measurements carry noise in their third or fourth digit, so
//! `1234.5678901234` ns or a share of `0.33333333333333` print digits nobody
//! can use and make the output hard to read and diff. Every float is
//! rounded to [`SIGNIFICANT`] significant digits, keeping all of its integer
//! digits (`12345678.9` decisions/s becomes `12345679`, never `12350000`);
//! integers (counts, bytes, seeds) are never touched. The rounding is
//! decimal (through the shortest decimal text), so `0.1234567` becomes
//! exactly the JSON text `0.1235`.

use serde::Serialize;
use serde_json::Value;

/// Significant digits a float keeps (ns: 0.1 ns below 1 µs; ratios: 4).
pub const SIGNIFICANT: i32 = 4;

/// `x` to [`SIGNIFICANT`] significant digits, integer digits all kept.
pub fn round_float(x: f64) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    // Digits before the point minus one: 4 for 12345.6, -3 for 0.00123.
    let magnitude = x.abs().log10().floor() as i32;
    let decimals = (SIGNIFICANT - 1 - magnitude).max(0);
    format!("{x:.prec$}", prec = decimals as usize)
        .parse()
        .unwrap_or(x)
}

/// Rounds every float in `v`, recursively.
pub fn round_floats(v: Value) -> Value {
    match v {
        Value::Number(n) if n.is_f64() => n
            .as_f64()
            .and_then(|x| serde_json::Number::from_f64(round_float(x)))
            .map_or(Value::Number(n), Value::Number),
        Value::Array(a) => Value::Array(a.into_iter().map(round_floats).collect()),
        Value::Object(o) => {
            Value::Object(o.into_iter().map(|(k, v)| (k, round_floats(v))).collect())
        }
        other => other,
    }
}

/// A value that could not be turned into JSON.
#[derive(Debug)]
pub struct JsonError(pub serde_json::Error);

impl std::fmt::Display for JsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "JSON: {}", self.0)
    }
}

impl std::error::Error for JsonError {}

fn rounded<T: Serialize + ?Sized>(v: &T) -> Result<Value, JsonError> {
    serde_json::to_value(v).map(round_floats).map_err(JsonError)
}

/// `v` as one line of JSON, floats rounded.
pub fn line<T: Serialize + ?Sized>(v: &T) -> Result<String, JsonError> {
    Ok(rounded(v)?.to_string())
}

/// `v` as indented JSON, floats rounded.
pub fn pretty<T: Serialize + ?Sized>(v: &T) -> Result<String, JsonError> {
    serde_json::to_string_pretty(&rounded(v)?).map_err(JsonError)
}

/// Prints `v` as one line of JSON on stdout.
pub fn print_line<T: Serialize + ?Sized>(v: &T) -> Result<(), crate::cmd::error::CliError> {
    crate::outln!("{}", line(v)?);
    Ok(())
}

/// Prints `v` as indented JSON on stdout.
pub fn print_pretty<T: Serialize + ?Sized>(v: &T) -> Result<(), crate::cmd::error::CliError> {
    crate::outln!("{}", pretty(v)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_keep_four_significant_digits_and_all_integer_digits() {
        assert_eq!(round_float(1234.5678901234), 1235.0);
        assert_eq!(round_float(123.456789), 123.5);
        assert_eq!(round_float(0.333333333333), 0.3333);
        assert_eq!(round_float(0.00123456), 0.001235);
        assert_eq!(round_float(-5.123456), -5.123);
        assert_eq!(round_float(12345678.9), 12345679.0);
        assert_eq!(round_float(0.0), 0.0);
        assert!(round_float(f64::NAN).is_nan());
    }

    #[test]
    fn json_text_has_no_long_fractions_and_integers_are_untouched() {
        let v = serde_json::json!({
            "ns_per_pair": 23.456789012,
            "share": [0.1234567, 0.87654321],
            "packets": 12345678901u64,
            "name": "drr",
            "nested": {"ratio": 1.0000001},
        });
        let text = line(&v).unwrap();
        assert_eq!(
            text,
            r#"{"name":"drr","nested":{"ratio":1.0},"ns_per_pair":23.46,"packets":12345678901,"share":[0.1235,0.8765]}"#
        );
    }
}
