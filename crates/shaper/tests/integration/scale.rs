//! A LibreQoS deployment of 10,000 circuits (20,000 devices under 100
//! access points) checks; its time is printed, not asserted.

use crate::support::{libreqos, HEADER};
use std::fmt::Write;
use std::time::Instant;

#[test]
fn ten_thousand_circuits_check() {
    let mut json = String::from("{\"Region\": {\"downloadBandwidthMbps\": 100000, \"uploadBandwidthMbps\": 100000, \"children\": {");
    for ap in 0..100 {
        let sep = if ap == 0 { "" } else { "," };
        write!(
            json,
            "{sep}\"AP_{ap}\": {{\"downloadBandwidthMbps\": 1000, \"uploadBandwidthMbps\": 500}}"
        )
        .unwrap();
    }
    json += "}}}";
    let mut csv = format!("{HEADER}\n");
    for c in 0..10_000u32 {
        let (hi, lo) = (c / 256, c % 256);
        for d in 0..2 {
            writeln!(
                csv,
                "{c},Subscriber {c},{c}-{d},CPE {d},AP_{},02:00:00:{:02x}:{:02x}:{d:02x},\"100.{}.{lo}.{}\",2001:db8:{c:x}:{d}::/64,2.5,0.5,100,20,",
                c % 100,
                hi,
                lo,
                64 + hi,
                d * 4
            )
            .unwrap();
        }
    }
    let start = Instant::now();
    let ck = libreqos("scale", &csv, Some(&json)).unwrap();
    eprintln!(
        "10,000 circuits, 20,000 devices: read and checked in {:?}",
        start.elapsed()
    );
    assert_eq!(
        (
            ck.plan.circuits.len(),
            ck.plan.devices.len(),
            ck.plan.nodes.len()
        ),
        (10_000, 20_000, 101)
    );
}
