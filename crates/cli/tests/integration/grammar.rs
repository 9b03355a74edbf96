//! Numbers in flow sets and link rates: one grammar, errors that say which
//! number is wrong, why, and the allowed range.

use std::process::{Command, Output};

fn fairway(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args(args)
        .output()
        .expect("run fairway")
}

fn one_line_error(args: &[&str]) -> String {
    let out = fairway(args);
    assert!(!out.status.success(), "{args:?} should fail");
    assert!(out.stdout.is_empty(), "{args:?} measured before failing");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    err
}

fn policy_file() -> String {
    format!(
        "{}/../../examples/policies/fig6.toml",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn an_over_large_flow_count_says_too_large_and_names_the_range() {
    let err = one_line_error(&["guarantees", "--flows", "1x99999999999"]);
    assert!(err.contains("too large"), "{err}");
    assert!(!err.contains("not an integer"), "{err}");
    assert!(err.contains("1..=4194304"), "{err}");
    let err = one_line_error(&["guarantees", "--flows", "99999999999x1"]);
    assert!(err.contains("WEIGHT") && err.contains("too large"), "{err}");
    // The list grammar of `bench --flows`: presets, then groups.
    let err = one_line_error(&["bench", "--flows", "1k-w1,1x99999999999"]);
    assert!(err.contains("cannot be combined"), "{err}");
    let err = one_line_error(&["bench", "--flows", "1x1,1x99999999999"]);
    assert!(err.contains("too large"), "{err}");
    let err = one_line_error(&["policy", "run", &policy_file(), "--flows", "1x99999999999"]);
    assert!(err.contains("too large"), "{err}");
    // The other number lists of the same kind.
    let err = one_line_error(&["guarantees", "--sizes", "uniform:99999999999"]);
    assert!(err.contains("too large") && err.contains("1..="), "{err}");
    let err = one_line_error(&["bench-pq", "--buckets", "99999999999"]);
    assert!(
        err.contains("--buckets") && err.contains("too large"),
        "{err}"
    );
}

#[test]
fn policy_link_takes_the_shared_rate_grammar() {
    let link = |rate: &str| {
        let out = fairway(&[
            "policy",
            "run",
            &policy_file(),
            "--flows",
            "1x3",
            "--duration-ms",
            "1",
            "--link",
            rate,
            "--json",
        ]);
        assert!(
            out.status.success(),
            "{rate}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["link"].as_u64().expect("link in bytes/s")
    };
    assert_eq!(link("100Mbit/s"), 12_500_000);
    assert_eq!(link("100mbit"), 12_500_000);
    assert_eq!(link("1G"), 125_000_000);
    assert_eq!(link("12.5MB/s"), 12_500_000);
    let err = one_line_error(&["policy", "run", &policy_file(), "--link", "10Mbps"]);
    assert!(err.contains("--link") && err.contains("unit"), "{err}");
    let err = one_line_error(&["policy", "run", &policy_file(), "--link", "-8"]);
    assert!(err.contains("--link") && err.contains("negative"), "{err}");
    let err = one_line_error(&["policy", "run", &policy_file(), "--link", "12bit"]);
    assert!(err.contains("whole number of bytes"), "{err}");
}
