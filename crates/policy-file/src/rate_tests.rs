//! The one rate parser: both spellings, exact or refused with the reason.

use super::*;

#[test]
fn policy_rates_are_exact_bytes_or_refused() {
    assert_eq!(parse_rate("10 Mbit/s"), Ok(1_250_000));
    assert_eq!(parse_rate("1.5Gbit/s"), Ok(187_500_000));
    assert_eq!(parse_rate("125000"), Ok(125_000));
    assert_eq!(parse_rate("125_000"), Ok(125_000));
    assert_eq!(parse_rate("2 MB/s"), Ok(2_000_000));
    assert_eq!(
        parse_rate("1 bit/s"),
        Err(RateError::NotWholeBytes("1 bit/s".into()))
    );
    assert_eq!(parse_rate("0"), Err(RateError::Zero("0".into())));
    assert!(matches!(
        parse_rate("10 furlongs"),
        Err(RateError::UnknownUnit { .. })
    ));
    assert_eq!(parse_rate("1099511627776"), Ok(MAX_RATE));
    assert_eq!(
        parse_rate("1099511627777"),
        Err(RateError::TooLarge("1099511627777".into()))
    );
    // Past u128 on the way: refused, not a panic.
    let tiny = format!("0.{}1", "0".repeat(40));
    assert_eq!(
        parse_rate(&tiny),
        Err(RateError::NotWholeBytes(tiny.clone()))
    );
    let huge = format!("{} Gbit/s", "9".repeat(38));
    assert_eq!(parse_rate(&huge), Err(RateError::TooLarge(huge.clone())));
    assert_eq!(
        parse_rate("nan Mbit/s"),
        Err(RateError::NotFinite("nan Mbit/s".into()))
    );
    assert_eq!(
        parse_rate("-5 Mbit/s"),
        Err(RateError::Negative("-5 Mbit/s".into()))
    );
    assert_eq!(parse_rate("1__0"), Err(RateError::Malformed("1__0".into())));
}

#[test]
fn both_spellings_mean_the_same_rate() {
    for (policy, tc) in [
        ("10 Mbit/s", "10mbit"),
        ("1.5 Gbit/s", "1.5gbit"),
        ("500 kbit/s", "500kbit"),
        ("8 bit/s", "8bit"),
        ("512 kibit/s", "512kibit"),
        ("1 MB/s", "8mbit"),
    ] {
        assert_eq!(
            parse_rate(policy).map(|b| b * 8),
            parse_tc_rate(tc),
            "{policy} {tc}"
        );
        assert_eq!(parse_tc_rate(policy), parse_tc_rate(tc), "{policy} {tc}");
    }
}

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
    let unknown = parse_tc_rate("100 furlongs").unwrap_err();
    assert_eq!(
        unknown.to_string(),
        format!("rate \"100 furlongs\": unknown unit \"furlongs\" (allowed: {UNITS})")
    );
    // Megabits to LibreQoS, megabytes to tc: neither is guessed.
    for u in ["100mbps", "100Mbps", "1 kbps", "64bps"] {
        assert!(
            matches!(parse_tc_rate(u), Err(RateError::AmbiguousUnit { .. })),
            "{u}"
        );
        assert!(
            matches!(parse_rate(u), Err(RateError::AmbiguousUnit { .. })),
            "{u}"
        );
    }
    // Bytes need the capital B.
    assert!(matches!(
        parse_tc_rate("1 mb/s"),
        Err(RateError::UnknownUnit { .. })
    ));
    assert!(matches!(parse_tc_rate("100"), Err(RateError::NoUnit(_))));
    assert!(matches!(parse_tc_rate("0mbit"), Err(RateError::Zero(_))));
    assert!(matches!(
        parse_tc_rate("-5mbit"),
        Err(RateError::Negative(_))
    ));
    assert!(matches!(parse_tc_rate("nan"), Err(RateError::NotFinite(_))));
    assert!(matches!(parse_tc_rate("inf"), Err(RateError::NotFinite(_))));
    assert!(matches!(
        parse_tc_rate("-inf"),
        Err(RateError::NotFinite(_))
    ));
    assert!(matches!(
        parse_tc_rate("0.5bit"),
        Err(RateError::TooFine(_))
    ));
    assert!(matches!(
        parse_tc_rate("1e3bit"),
        Err(RateError::UnknownUnit { .. })
    ));
    assert!(matches!(parse_tc_rate("ten"), Err(RateError::Malformed(_))));
    assert!(matches!(
        parse_tc_rate("9999tbit"),
        Err(RateError::TooLarge(_))
    ));
    assert!(matches!(parse_tc_rate(""), Err(RateError::Empty)));
    assert!(matches!(parse_tc_rate("  "), Err(RateError::Empty)));
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
