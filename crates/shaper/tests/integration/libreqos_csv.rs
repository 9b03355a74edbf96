//! ShapedDevices.csv as LibreQoS writes it, and each way a row is refused
//! with its line.

use crate::support::{libreqos, only, path, problems, HEADER};
use fairway_shaper::plan::Bandwidth;

#[test]
fn columns_are_found_by_header_in_any_order_with_comments_and_quoted_lists() {
    let csv = "# exported by an integration\n\
        Comment,Upload Max Mbps,Download Max Mbps,Upload Min Mbps,Download Min Mbps,IPv6,IPv4,MAC,Parent Node ID,Parent Node,Device Name,Device ID,Circuit Name,Circuit ID,Some Column\n\
        hello,5.25,25.5,0.5,2.5,\"2001:db8::/48, 2001:db8:1::1\",\"100.64.0.0/30, 100.64.0.9\",AA-BB-CC-DD-EE-01,,,Dev,d1,Circ,c1,ignored\n\
        # a comment between rows\n\
        ,5.25,25.5,0.5,2.5,,100.64.0.10,,,,Dev2,d2,Circ,c1,\n";
    let ck = libreqos("cols", csv, None).unwrap();
    let p = &ck.plan;
    assert_eq!((p.circuits.len(), p.devices.len()), (1, 2));
    let c = &p.circuits[0];
    assert_eq!(
        (c.id.as_str(), c.name.as_str(), c.parent.as_deref()),
        ("c1", "Circ", None)
    );
    assert_eq!(
        c.rates.download,
        Bandwidth {
            min: Some(2_500_000),
            max: 25_500_000
        }
    );
    assert_eq!(
        c.rates.upload,
        Bandwidth {
            min: Some(500_000),
            max: 5_250_000
        }
    );
    let nets: Vec<String> = p.devices[0]
        .prefixes
        .iter()
        .map(|x| x.net.to_string())
        .collect();
    assert_eq!(
        nets,
        [
            "100.64.0.0/30",
            "100.64.0.9/32",
            "2001:db8::/48",
            "2001:db8:1::1/128"
        ]
    );
    assert_eq!(p.devices[0].mac.unwrap().to_string(), "aa:bb:cc:dd:ee:01");
    assert_eq!(p.devices[1].at.line, Some(5));
}

#[test]
fn a_missing_column_is_named_at_the_header() {
    let header = HEADER.replace("Upload Max Mbps,", "");
    let e = problems(libreqos("nocol", &format!("# c\n{header}\n"), None));
    only(
        &e,
        &format!("{}:2", path("nocol.csv")),
        "the header has no column \"Upload Max Mbps\" (required)",
    );
}

#[test]
fn rows_of_one_circuit_must_agree_on_name_parent_and_rates() {
    let json = r#"{"AP": {"downloadBandwidthMbps": 100, "uploadBandwidthMbps": 100},
                  "AP2": {"downloadBandwidthMbps": 100, "uploadBandwidthMbps": 100}}"#;
    let csv = format!(
        "{HEADER}\n1,One,d1,x,AP,,,,1,1,10,10,\n1,One,d2,x,AP2,,,,1,1,10,10,\n1,One,d3,x,AP,,,,1,1,20,10,\n1,Uno,d4,x,AP,,,,1,1,10,10,\n"
    );
    let e = problems(libreqos("dup", &csv, Some(json)));
    let f = path("dup.csv");
    assert_eq!(e.len(), 3, "{e:#?}");
    assert!(
        e[0].starts_with(&format!(
            "{f}:3: circuit \"1\": Parent Node \"AP2\" differs from \"AP\" at {f}:2"
        )),
        "{e:#?}"
    );
    assert!(
        e[1].starts_with(&format!(
            "{f}:4: circuit \"1\": rates \"download 1mbit..20mbit"
        )),
        "{e:#?}"
    );
    assert!(
        e[2].starts_with(&format!(
            "{f}:5: circuit \"1\": Circuit Name \"Uno\" differs from \"One\""
        )),
        "{e:#?}"
    );
}

#[test]
fn macs_and_addresses_that_do_not_parse_are_refused_with_their_row() {
    let csv = format!(
        "{HEADER}\n1,a,d1,x,,02:00:00:00:00:0g,,,1,1,2,2,\n2,b,d2,x,,,\"100.64.0.1, 100.64.0.300\",,1,1,2,2,\n\
         3,c,d3,x,,,100.64.0.1/24,,1,1,2,2,\n4,d,d4,x,,,2001:db8::1,100.64.7.1,1,1,2,2,\n"
    );
    let e = problems(libreqos("addr", &csv, None));
    let f = path("addr.csv");
    assert_eq!(e.len(), 5, "{e:#?}");
    assert!(
        e[0].starts_with(&format!(
            "{f}:2: MAC \"02:00:00:00:00:0g\" does not parse (allowed: "
        )),
        "{e:#?}"
    );
    assert!(
        e[1].starts_with(&format!("{f}:3: IPv4 \"100.64.0.300\" does not parse")),
        "{e:#?}"
    );
    // Host bits set: LibreQoS drops such a prefix from its lookups.
    assert!(
        e[2].starts_with(&format!("{f}:4: IPv4 \"100.64.0.1/24\" does not parse")),
        "{e:#?}"
    );
    assert!(
        e[3].starts_with(&format!("{f}:5: IPv4 \"2001:db8::1\"")),
        "{e:#?}"
    );
    assert!(
        e[4].starts_with(&format!("{f}:5: IPv6 \"100.64.7.1\"")),
        "{e:#?}"
    );
}

#[test]
fn rates_that_are_not_positive_finite_decimals_are_refused() {
    let csv = format!("{HEADER}\n1,a,d1,x,,,,,nan,inf,-1,0,\n2,b,d2,x,,,,,1e3,0.0000001,,10,\n");
    let e = problems(libreqos("rates", &csv, None));
    let f = path("rates.csv");
    let want = [
        format!("{f}:2: Download Min Mbps: rate \"nan\" is not a finite number; rates are > 0"),
        format!("{f}:2: Upload Min Mbps: rate \"inf\" is not a finite number; rates are > 0"),
        format!("{f}:2: Download Max Mbps: rate \"-1\" is negative; rates are > 0"),
        format!("{f}:2: Upload Max Mbps: rate \"0\" is zero; rates are > 0"),
        format!("{f}:3: Download Min Mbps: rate \"1e3\" is not a decimal number (digits with an optional fraction, e.g. 2.5)"),
        format!("{f}:3: Upload Min Mbps: rate \"0.0000001\" is not a whole number of bit/s (1 bit/s is the finest)"),
        format!("{f}:3: Download Max Mbps: rate is empty; write a positive number"),
    ];
    let mut got = e.clone();
    got.sort();
    let mut want = want.to_vec();
    want.sort();
    assert_eq!(got, want);
}

#[test]
fn fields_fairway_does_not_support_are_refused_not_ignored() {
    let csv = format!("{},sqm\n1,a,d1,x,,,,,1,1,2,2,,cake\n", HEADER);
    let e = problems(libreqos("sqm", &csv, None));
    only(
        &e,
        &format!("{}:2", path("sqm.csv")),
        "sqm \"cake\": per-circuit SQM overrides are not supported",
    );
}

#[test]
fn ids_are_required() {
    let csv = format!("{HEADER}\n,a,d1,x,,,,,1,1,2,2,\n1,a,,x,,,,,1,1,2,2,\n");
    let e = problems(libreqos("ids", &csv, None));
    let f = path("ids.csv");
    assert_eq!(
        e,
        [
            format!("{f}:2: Circuit ID is required and may not be empty"),
            format!("{f}:3: Device ID is required and may not be empty"),
        ]
    );
}
