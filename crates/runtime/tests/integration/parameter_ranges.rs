//! The runtime's durations at the edge of their range and one past it:
//! `delta_a`, `delta_c` and `min_awake` are used as given up to
//! `2^64 − 1` ns and rejected above it with a typed error naming the field,
//! never truncated to 64 bits.

use fairway_runtime::{RuntimeBuilder, RuntimeConfig, RuntimeError, MAX_DURATION_NS};
use std::time::Duration;

fn with(field: &str, d: Duration) -> RuntimeConfig {
    let mut cfg = RuntimeConfig::default();
    match field {
        "delta_a" => cfg.delta_a = d,
        "delta_c" => cfg.delta_c = d,
        "min_awake" => cfg.min_awake = d,
        _ => unreachable!("no such field {field}"),
    }
    cfg
}

#[test]
fn durations_up_to_u64_nanoseconds_are_kept_one_past_is_rejected() {
    let at_limit = Duration::from_nanos(MAX_DURATION_NS);
    let one_past = at_limit + Duration::from_nanos(1);
    for field in ["delta_a", "delta_c", "min_awake"] {
        assert!(
            RuntimeBuilder::new(with(field, at_limit)).is_ok(),
            "{field} at the limit"
        );
        let err = RuntimeBuilder::new(with(field, one_past))
            .err()
            .expect("one past is refused");
        match &err {
            RuntimeError::DurationTooLong { parameter, nanos } => {
                assert_eq!((*parameter, *nanos), (field, 1u128 << 64));
            }
            other => panic!("{field}: unexpected {other:?}"),
        }
        // Truncating `as u64` would have made this 0 ns; the message says
        // what was given and the range.
        assert_eq!(
            err.to_string(),
            format!("{field} of 18446744073709551616 ns is outside 0..=18446744073709551615 ns")
        );
    }
}
