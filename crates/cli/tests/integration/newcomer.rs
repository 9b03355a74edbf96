//! The command line as a newcomer meets it: the default command, numbers
//! and units, output paths checked before measuring, notes on stderr.

use std::process::{Command, Output};

fn fairway(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args(args)
        .output()
        .expect("run fairway")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The demo's text up to its timing table, which differs from run to run.
fn deterministic_part(text: &str) -> String {
    text.lines()
        .take_while(|l| !l.starts_with("Cost per packet"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn bare_fairway_is_the_demo_and_the_demo_explains_itself() {
    let bare = fairway(&[]);
    let demo = fairway(&["demo"]);
    assert!(bare.status.success() && demo.status.success());
    let (bare, demo) = (stdout(&bare), stdout(&demo));
    assert_eq!(deterministic_part(&bare), deterministic_part(&demo));
    for needle in [
        "T-WFI",
        "B-WFI",
        "bound",
        "vs GPS",
        "Negative",
        "worst flow",
        "violations",
        "Verdict: within their guarantee:",
        "Cost per packet",
    ] {
        assert!(demo.contains(needle), "demo lacks {needle:?}:\n{demo}");
    }
    // The verdict names every scheduler once.
    let verdict = demo.lines().find(|l| l.starts_with("Verdict")).unwrap();
    for name in ["fifo", "drr", "qfq", "qfq+", "wf2q+"] {
        assert!(
            verdict
                .split(['(', ' ', ',', ';', ':', '.'])
                .any(|w| w == name),
            "verdict lacks {name}: {verdict}"
        );
    }
    // The cost table has a row per scheduler.
    let cost: Vec<&str> = demo
        .lines()
        .skip_while(|l| !l.starts_with("Cost per packet"))
        .collect();
    for name in ["fifo", "drr", "qfq", "qfq+", "wf2q+"] {
        assert!(
            cost.iter().any(|l| l.starts_with(&format!("{name} "))),
            "no cost row for {name}:\n{demo}"
        );
    }
}

#[test]
fn demo_json_is_one_object_with_guarantees_verdict_and_cost() {
    let out = fairway(&["demo", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    assert_eq!(text.trim_end().lines().count(), 1, "{text}");
    let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let g = v["guarantees"].as_array().expect("guarantees");
    let verdict = v["verdict"].as_array().expect("verdict");
    let cost = v["cost"].as_array().expect("cost");
    assert!(g.len() >= 5 && verdict.len() == g.len() && cost.len() == g.len());
    assert_eq!(g[0]["seed"], 1, "same seed as bare fairway");
    for row in verdict {
        let s = row["status"].as_str().unwrap();
        assert!(["within", "exceeded", "none"].contains(&s), "{row}");
    }
    assert!(cost
        .iter()
        .all(|c| c["ns_per_pair"].as_f64().unwrap() > 0.0));
}

/// Runs a command that must fail at argument checking and returns its
/// single stderr line.
fn one_line_error(args: &[&str]) -> String {
    let out = fairway(args);
    assert!(!out.status.success(), "{args:?} should fail");
    assert!(out.stdout.is_empty(), "{args:?} measured before failing");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(err.starts_with("fairway: error: "), "{args:?}: {err}");
    err
}

#[test]
fn zero_counts_are_refused_not_raised_to_one() {
    for (args, flag) in [
        (&["bench", "--pairs", "0"][..], "--pairs"),
        (&["bench", "--repeat", "0"], "--repeat"),
        (&["bench-pq", "--rounds", "0"], "--rounds"),
        (&["guarantees", "--packets", "0"], "--packets"),
    ] {
        let err = one_line_error(args);
        assert!(err.contains(flag) && err.contains("1..="), "{err}");
    }
}

#[test]
fn negative_and_huge_numbers_name_the_flag_and_the_reason() {
    for (args, flag) in [
        (&["bench", "--pairs", "-5"][..], "--pairs"),
        (&["guarantees", "--queue", "-1"], "--queue"),
        (&["guarantees", "--rate", "-10"], "--rate"),
    ] {
        let err = one_line_error(args);
        assert!(err.contains(flag) && err.contains("negative"), "{err}");
    }
    let err = one_line_error(&["bench", "--pairs", "99999999999999999999999"]);
    assert!(
        err.contains("--pairs") && err.contains("too large"),
        "{err}"
    );
    let err = one_line_error(&["bench-pq", "--rounds", "4294967296"]);
    assert!(
        err.contains("--rounds") && err.contains("too large"),
        "{err}"
    );
}

#[test]
fn rates_take_si_multipliers_and_tc_units_everywhere() {
    let g = |rate: &str| {
        let out = fairway(&[
            "guarantees",
            "--sched",
            "drr",
            "--packets",
            "200",
            "--rate",
            rate,
            "--json",
        ]);
        assert!(
            out.status.success(),
            "{rate}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
        v["rate_bps"].as_u64().unwrap()
    };
    assert_eq!(g("10G"), 10_000_000_000);
    assert_eq!(g("10gbit"), 10_000_000_000);
    assert_eq!(g("100mbit"), 100_000_000);
    assert_eq!(g("2.5G"), 2_500_000_000);
    let err = one_line_error(&["guarantees", "--rate", "10mbps"]);
    assert!(err.contains("--rate") && err.contains("unit"), "{err}");
    let err = one_line_error(&["arbiter-bench", "--rate", "10x"]);
    assert!(err.contains("--rate"), "{err}");
    let err = one_line_error(&["udp-bench", "--target-pps", "4q"]);
    assert!(err.contains("--target-pps"), "{err}");
}

/// A directory path that cannot exist: below a regular file.
fn unwritable(name: &str) -> String {
    format!("{}/Cargo.toml/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn outputs_are_checked_before_measuring() {
    // Each of these would measure for seconds to minutes before writing.
    let chart = unwritable("pq.svg");
    let err = one_line_error(&["bench-pq", "--chart", &chart]);
    assert!(
        err.contains("--chart") && err.contains("cannot write"),
        "{err}"
    );
    let err = one_line_error(&["bench-pq", "--chart", "pq.png"]);
    assert!(err.contains("--chart") && err.contains(".svg"), "{err}");
    assert!(!std::path::Path::new("pq.png").exists());
    let chart = unwritable("lat.svg");
    let err = one_line_error(&["arbiter-bench", "--chart", &chart]);
    assert!(err.contains("--chart"), "{err}");
    let out = unwritable("sweep");
    let err = one_line_error(&["bench", "--sweep", "m", "--out", &out]);
    assert!(
        err.contains("--out") && err.contains("cannot create"),
        "{err}"
    );
    let prefix = unwritable("udp");
    let err = one_line_error(&["udp-bench", "--quick", "--chart", &prefix]);
    assert!(err.contains("--chart"), "{err}");
}

#[test]
fn flags_that_do_not_apply_are_errors() {
    let err = one_line_error(&["bench", "--out", "target/x"]);
    assert!(err.contains("--out") && err.contains("--sweep"), "{err}");
    let err = one_line_error(&["bench", "--sweep", "m", "--warmup", "1000"]);
    assert!(err.contains("--warmup") && err.contains("--sweep"), "{err}");
    let err = one_line_error(&["bench", "--warmup", "-1"]);
    assert!(
        err.contains("--warmup") && err.contains("negative"),
        "{err}"
    );
    let err = one_line_error(&["arbiter-bench", "--kick", "scan"]);
    assert!(
        err.contains("--kick") && err.contains("--mode sleep"),
        "{err}"
    );
    for cmd in ["guarantees", "bench", "arbiter-bench", "udp-bench"] {
        let err = one_line_error(&[cmd, "--sched", "qfq+:m=4,m=5"]);
        assert!(err.contains("`m`") && err.contains("twice"), "{cmd}: {err}");
    }
}

#[test]
fn disk_and_policy_outputs_are_checked_before_running() {
    let err = one_line_error(&["disk", "throughput", "--chart", "fig5.png"]);
    assert!(err.contains("--chart") && err.contains(".svg"), "{err}");
    let out = unwritable("pb");
    let err = one_line_error(&["policy", "bench", "--out", &out]);
    assert!(err.contains("--out"), "{err}");
}

#[test]
fn notes_go_to_stderr_and_json_runs_say_nothing_extra() {
    // Hardware counters may or may not open here; either way stdout holds
    // only the table, and a note, if any, is on stderr.
    let out = fairway(&[
        "bench", "--sched", "drr", "--pairs", "2000", "--repeat", "1",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    assert!(!text.contains("unavailable"), "note on stdout:\n{text}");
    let out = fairway(&[
        "bench", "--sched", "drr", "--pairs", "2000", "--repeat", "1", "--json",
    ]);
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in stdout(&out).lines() {
        serde_json::from_str::<serde_json::Value>(line).expect("only JSON on stdout");
    }
    let out = fairway(&["demo", "--json"]);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn user_facing_text_names_papers_not_seed_files() {
    let mut texts = vec![stdout(&fairway(&["--help"]))];
    for cmd in [
        "demo",
        "guarantees",
        "bench",
        "bench-pq",
        "arbiter-bench",
        "udp-bench",
        "netsim",
        "policy",
        "disk",
    ] {
        texts.push(stdout(&fairway(&[cmd, "--help"])));
    }
    texts.push(stdout(&fairway(&["demo"])));
    assert!(texts[0].contains("QFQ+ paper §8.3"), "{}", texts[0]);
    let chart = std::env::temp_dir().join(format!("fairway-pq-{}.svg", std::process::id()));
    let out = fairway(&[
        "bench-pq",
        "--queues",
        "cffs",
        "--buckets",
        "16",
        "--per-bucket",
        "1",
        "--min-ops",
        "16",
        "--batches",
        "1",
        "--json",
        "--chart",
        chart.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let svg = std::fs::read_to_string(&chart).expect("chart written");
    let _ = std::fs::remove_file(&chart);
    assert!(svg.contains("Eiffel paper"), "chart title");
    texts.push(svg);
    for t in &texts {
        assert!(
            !t.contains("seed 00"),
            "file number in user-facing text:\n{t}"
        );
    }
}

#[test]
fn bench_reports_every_repeat_and_their_drift() {
    let out = fairway(&[
        "bench", "--sched", "none,drr", "--pairs", "2000", "--repeat", "4", "--warmup", "0",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert_eq!(lines.len(), 2);
    for v in &lines {
        let runs = v["ns_per_pair_runs"].as_array().expect("runs");
        assert_eq!(runs.len(), 4, "{v}");
    }
    // The baseline has no drift of its own; a scheduler has one from 4 repeats.
    assert!(lines[0]["drift"].is_null(), "{}", lines[0]);
    assert!(
        lines[1]["drift"].as_f64().is_some_and(|d| d > 0.0),
        "{}",
        lines[1]
    );
}
