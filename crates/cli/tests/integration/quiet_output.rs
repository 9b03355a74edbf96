//! Measuring commands show progress only on a terminal: piped (as here:
//! the test harness' pipes are not terminals) or with `--json` they print
//! nothing extra. And every `--json` float keeps its meaningful digits only.

use std::process::{Command, Output};

fn fairway_env(args: &[&str], progress: Option<&str>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fairway"));
    c.args(args).env_remove("FAIRWAY_PROGRESS");
    if let Some(p) = progress {
        c.env("FAIRWAY_PROGRESS", p);
    }
    c.output().expect("run fairway")
}

fn policy_file() -> String {
    format!(
        "{}/../../examples/policies/fig6.toml",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// A fresh output directory under the system's temporary directory.
fn scratch(name: &str) -> String {
    let d = std::env::temp_dir().join(format!("fairway-quiet-{}-{name}", std::process::id()));
    d.display().to_string()
}

/// What a progress display leaves in a captured stream: carriage returns,
/// terminal escape codes, braille spinner frames, indicatif's clock.
fn progress_artefacts(text: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(text);
    let mut found = Vec::new();
    if text.contains('\r') {
        found.push("carriage return".into());
    }
    if text.contains('\u{1b}') {
        found.push("escape code".into());
    }
    if text.chars().any(|c| ('\u{2800}'..='\u{28ff}').contains(&c)) {
        found.push("spinner frame".into());
    }
    if text.contains("[00:0") {
        found.push("elapsed clock".into());
    }
    found
}

/// Quick runs of every measuring command that runs here unprivileged
/// (udp-bench needs root and netns; its own tests cover it).
fn quick_runs() -> Vec<Vec<String>> {
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        v(&["guarantees", "--sched", "drr,qfq", "--packets", "2000"]),
        v(&[
            "bench", "--sched", "drr", "--pairs", "2000", "--repeat", "1",
        ]),
        v(&[
            "bench-pq",
            "--queues",
            "cffs",
            "--buckets",
            "64",
            "--per-bucket",
            "1",
            "--min-ops",
            "256",
            "--batches",
            "1",
        ]),
        v(&["arbiter-bench", "--seconds", "0.05"]),
        v(&[
            "policy",
            "run",
            &policy_file(),
            "--flows",
            "1x3",
            "--duration-ms",
            "5",
        ]),
        v(&["disk", "web", "--quick"]),
        v(&[
            "policy",
            "bench",
            "--quick",
            "--out",
            &scratch("policy-bench"),
        ]),
        v(&[
            "bench",
            "--sweep",
            "m",
            "--pairs",
            "1000",
            "--repeat",
            "1",
            "--flows",
            "1x4",
            "--out",
            &scratch("sweep"),
        ]),
        v(&["demo"]),
    ]
}

#[test]
#[ignore = "slow tier: runs every measuring command, policy bench in real time"]
fn piped_and_json_runs_print_no_progress_artefacts() {
    for args in quick_runs() {
        for json in [false, true] {
            let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
            if json {
                a.push("--json");
            }
            let out = fairway_env(&a, None);
            assert!(
                out.status.success(),
                "{a:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
                let found = progress_artefacts(bytes);
                assert!(found.is_empty(), "{a:?} {stream}: {found:?}");
            }
            if json {
                // Only JSON on stdout: one value per line or indented.
                let text = String::from_utf8_lossy(&out.stdout);
                for v in serde_json::Deserializer::from_str(&text).into_iter::<serde_json::Value>()
                {
                    v.unwrap_or_else(|e| panic!("{a:?}: not JSON ({e}): {text}"));
                }
            }
        }
    }
    for d in ["policy-bench", "sweep"] {
        std::fs::remove_dir_all(scratch(d)).ok();
    }
}

#[test]
fn the_check_sees_a_bar_when_one_is_drawn() {
    // FAIRWAY_PROGRESS=always draws even on a pipe: the check above must
    // then find the bar, or it could never fail.
    let out = fairway_env(
        &["guarantees", "--sched", "drr", "--packets", "2000"],
        Some("always"),
    );
    assert!(out.status.success());
    assert!(
        !progress_artefacts(&out.stderr).is_empty(),
        "a drawn bar went unseen: {:?}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(progress_artefacts(&out.stdout).is_empty(), "bar on stdout");
    // --json still wins over `always`.
    let out = fairway_env(
        &[
            "guarantees",
            "--sched",
            "drr",
            "--packets",
            "2000",
            "--json",
        ],
        Some("always"),
    );
    assert!(progress_artefacts(&out.stderr).is_empty());
}

/// Significant digits of a JSON number's text (`0.001235` has 4,
/// `1235.0` has 4, `12345679` is an integer and has none to count).
fn significant_digits(num: &str) -> usize {
    let mantissa = num.split(['e', 'E']).next().unwrap_or(num);
    let Some((int, frac)) = mantissa.trim_start_matches('-').split_once('.') else {
        return 0;
    };
    let digits = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    if int.trim_start_matches('0').is_empty() {
        digits.len()
    } else {
        // Integer digits are all kept; count the fraction's beyond them.
        int.len().max(digits.trim_end_matches('0').len())
    }
}

fn floats(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Number(n) if n.is_f64() => out.push(n.to_string()),
        serde_json::Value::Array(a) => a.iter().for_each(|x| floats(x, out)),
        serde_json::Value::Object(o) => o.values().for_each(|x| floats(x, out)),
        _ => {}
    }
}

#[test]
fn json_floats_keep_four_significant_digits() {
    assert_eq!(significant_digits("0.001235"), 4);
    assert_eq!(significant_digits("23.46"), 4);
    assert_eq!(significant_digits("0.3333333333333333"), 16);
    for args in [
        &[
            "guarantees",
            "--sched",
            "drr,wf2q+",
            "--packets",
            "2000",
            "--json",
        ][..],
        &[
            "bench", "--sched", "drr", "--pairs", "2000", "--repeat", "1", "--json",
        ],
        &["arbiter-bench", "--seconds", "0.05", "--json"],
    ] {
        let out = fairway_env(args, None);
        assert!(out.status.success(), "{args:?}");
        let mut all = Vec::new();
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect("JSON line");
            floats(&v, &mut all);
        }
        assert!(!all.is_empty(), "{args:?}: no floats to check");
        for f in &all {
            let d = significant_digits(f);
            let int_digits = f.trim_start_matches('-').split('.').next().unwrap().len();
            assert!(d <= 4.max(int_digits), "{args:?}: {f} has {d} digits");
        }
    }
}
