//! `fairway policy run` uses every parameter exactly as given or refuses
//! it with one line on stderr naming it and its range (exit 1, nothing on
//! stdout); jumbo frames run on STFQ and hClock trees; a deep chain runs
//! quickly and one past the depth limit is refused at the file's line.

use std::process::{Command, Output};

fn fairway(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args(args)
        .output()
        .expect("run fairway")
}

/// Writes `text` to a scratch policy file named `name`; its path.
fn scratch(name: &str, text: &str) -> String {
    let path = format!("{}/{name}", env!("CARGO_TARGET_TMPDIR"));
    std::fs::write(&path, text).expect("write the policy file");
    path
}

fn example(name: &str) -> String {
    format!(
        "{}/../../examples/policies/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// `policy run FILE args…` fails with exit `code`, nothing on stdout and
/// exactly one stderr line, which starts with `fairway: error: ` and
/// contains `want`.
fn refused(file: &str, args: &[&str], code: i32, want: &str) {
    let mut all = vec!["policy", "run", file, "--duration-ms", "10"];
    all.extend_from_slice(args);
    let out = fairway(&all);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "{args:?}: stdout not empty");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    assert!(stderr.starts_with("fairway: error: "), "{stderr}");
    assert!(stderr.contains(want), "{args:?}: {stderr}");
}

/// hclock.toml: 4 flows of up to 1500 bytes, 65536 packet slots.
#[test]
fn backlog_is_used_as_given_or_refused_with_its_range() {
    let f = example("hclock.toml");
    // 4 workload flows share 65536 slots: 1..=16384 each.
    refused(&f, &["--backlog", "0"], 1, "backlog 0 outside 1..=16384 (");
    refused(
        &f,
        &["--backlog", "4294967296"],
        1,
        "backlog 4294967296 outside 1..=16384 (each greedy source keeps this many packets queued",
    );
    refused(
        &f,
        &["--backlog", "16385"],
        1,
        "backlog 16385 outside 1..=16384",
    );
    let out = fairway(&[
        "policy",
        "run",
        &f,
        "--duration-ms",
        "1",
        "--backlog",
        "16384",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("refused 0 (rank) + 0 (full)"), "{stdout}");
}

#[test]
fn packet_sizes_above_the_policy_or_the_flow_are_refused_naming_both() {
    let f = example("hclock.toml");
    refused(
        &f,
        &["--flows", "1x4@9000"],
        1,
        "flows MAXLEN 9000 outside 1..=1500 (the policy's max_packet_len",
    );
    refused(
        &f,
        &["--sizes", "uniform:1501"],
        1,
        "sizes uniform:1501 outside uniform:1..=1500 (MIN must not exceed the smallest MAXLEN",
    );
    refused(
        &f,
        &["--flows", "1x2@1000,1x2", "--sizes", "uniform:1200"],
        1,
        "sizes uniform:1200 outside uniform:1..=1000",
    );
}

#[test]
fn float_and_rate_flags_refuse_nan_inf_and_negative() {
    let f = example("hclock.toml");
    // `--load=-inf`: a leading `-` in a separate argument is a flag.
    for load in ["nan", "NaN", "inf", "-inf", "-0.5", "10.5"] {
        let arg = format!("--load={load}");
        refused(&f, &[&arg], 1, "outside 0..=10 (fraction of the link)");
    }
    for link in ["nan", "inf", "-5", "0"] {
        refused(&f, &["--link", link], 2, "--link");
    }
    refused(
        &f,
        &["--link", "9Tbit/s"],
        1,
        "--link: 1125000000000 B/s is too large",
    );
}

#[test]
fn packets_a_run_can_send_are_bounded_before_it_starts() {
    let f = example("hclock.toml");
    // 8.8 Tbit/s for 10 s of 1500-byte packets: 7.3e9 packets.
    let out = fairway(&[
        "policy",
        "run",
        &f,
        "--link",
        "8Tbit/s",
        "--duration-ms",
        "10000",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("packets: at most 134217728 per run"),
        "{stderr}"
    );
}

/// hClock and STFQ (Fig. 6) trees with 9000-byte packets run on their
/// default queues, nothing refused and no internal miss.
#[test]
fn jumbo_frames_run_on_stfq_and_hclock() {
    for name in ["hclock.toml", "fig6.toml"] {
        let text = std::fs::read_to_string(example(name)).unwrap();
        let text = match text.find("max_packet_len = 1500") {
            Some(_) => text.replace("max_packet_len = 1500", "max_packet_len = 9000"),
            None => format!("max_packet_len = 9000\n{text}"),
        };
        let path = scratch(&format!("jumbo-{name}"), &text);
        let out = fairway(&[
            "policy",
            "run",
            &path,
            "--flows",
            "1x4@9000",
            "--duration-ms",
            "100",
            "--backlog",
            "8",
        ]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains("refused 0 (rank) + 0 (full)") && stdout.contains("internal misses 0"),
            "{name}: {stdout}"
        );
    }
}

/// A chain of `depth` stfq nodes with one flow at the bottom.
fn chain(depth: usize) -> String {
    let mut s = String::new();
    for i in 0..depth {
        s += &format!("[[node]]\nname = \"n{i}\"\npolicy = \"stfq\"\n");
        if i > 0 {
            s += &format!("parent = \"n{}\"\n", i - 1);
        }
    }
    s + &format!("[[flow]]\nparent = \"n{}\"\n", depth - 1)
}

/// 200 levels at 10 Gbit/s: every packet passes every level, and the run
/// finishes (its per-packet work is linear in the depth, with no cold
/// bucket memory per one-child level).
#[test]
fn a_deep_chain_runs_at_10_gbit() {
    let path = scratch("chain200.toml", &chain(200));
    let out = fairway(&[
        "policy",
        "run",
        &path,
        "--flows",
        "1x1",
        "--link",
        "10Gbit/s",
        "--duration-ms",
        "1",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // 1 ms of 1500-byte packets at 1.25 GB/s: 834 departures, each
    // counted at every level.
    assert!(stdout.contains("offered 850 packets"), "{stdout}");
    assert!(stdout.contains("\nn199 "), "{stdout}");
}

/// One node past `MAX_DEPTH` (1024) is refused at that node's line.
#[test]
fn a_chain_deeper_than_the_limit_is_refused_at_its_line() {
    let path = scratch("chain1025.toml", &chain(1025));
    let out = fairway(&["policy", "run", &path]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // Node 1024 starts on line 1 + 4 · 1024 - 1 (the root has no parent line).
    assert!(
        stderr.contains(&format!("chain1025.toml:{}:", 4 * 1024)),
        "{stderr}"
    );
    assert!(stderr.contains("past the limit of 1024 levels"), "{stderr}");
}

#[test]
fn duration_is_refused_at_zero_and_past_its_range() {
    let f = example("hclock.toml");
    for d in ["0", "18446744073710"] {
        let out = fairway(&["policy", "run", &f, "--duration-ms", d]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(out.stdout.is_empty());
        assert_eq!(
            stderr,
            "fairway: error: --duration-ms must be 1..=18446744073709 (the run counts u64 nanoseconds)\n",
            "{d}"
        );
    }
}
