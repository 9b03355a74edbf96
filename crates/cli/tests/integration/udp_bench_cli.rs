//! `fairway udp-bench` end to end: bad input is one line and a non-zero
//! exit before anything is built; `--quick` runs the four configurations
//! and accounts for every packet (Linux, root; skipped visibly otherwise).

use std::process::Command;

fn fairway(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args(args)
        .output()
        .expect("run fairway")
}

#[test]
fn bad_parameters_are_rejected_with_one_line_naming_them() {
    for (args, needle) in [
        (&["udp-bench", "--seconds", "0"][..], "--seconds"),
        (&["udp-bench", "--rates", "fast"][..], "--rates"),
        (&["udp-bench", "--batch", "0"][..], "--batch"),
        (
            &["udp-bench", "--cooldown-ms", "60001"][..],
            "--cooldown-ms",
        ),
        (
            &["udp-bench", "--transport", "carrier-pigeon"][..],
            "--transport",
        ),
        (
            &["udp-bench", "--experiments", "everything"][..],
            "--experiments",
        ),
        (
            &[
                "udp-bench",
                "--transport",
                "af-packet-ring",
                "--batch",
                "512",
            ][..],
            "--batch",
        ),
    ] {
        let out = fairway(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
#[ignore = "slow tier: needs root and network namespaces"]
fn quick_latency_run_accounts_for_every_packet() {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    let tools = ["ip", "tc"]
        .iter()
        .all(|t| Command::new(t).arg("-V").output().is_ok());
    if !root || !tools {
        println!("quick_latency_run_accounts_for_every_packet: skipped, needs root and iproute2");
        return;
    }
    let out = fairway(&["udp-bench", "--quick", "--experiments", "latency", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    assert_eq!(v["targets"]["accounting_ok"], true);
    assert_eq!(v["light"].as_array().map(Vec::len), Some(4));
    assert_eq!(v["loaded"].as_array().map(Vec::len), Some(4));
    assert_eq!(v["loaded"][3]["mode"], "fairway-dispatch");
}
