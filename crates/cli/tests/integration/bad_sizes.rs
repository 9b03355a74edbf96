//! Sizes beyond the machine, totals beyond the stated limits, values
//! outside their ranges and duplicates in lists, given to `guarantees`,
//! `bench`, `bench-pq` and `netsim`: each is one line on stderr naming the
//! flag and the limit or range, exit code 1 (2 for clap's own usage
//! errors), nothing on stdout, no chart or output file, and never an abort,
//! a panic or a run that only ends when killed.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `fairway args` and returns (exit code, stdout, stderr); a run
/// still going after a minute is killed and fails the test (before the
/// limits, several of these commands planned hours or days of work).
fn fairway(args: &[&str]) -> (Option<i32>, String, String) {
    let dir = scratch("run");
    let (out, err) = (dir.join("stdout"), dir.join("stderr"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).expect("stdout file"))
        .stderr(std::fs::File::create(&err).expect("stderr file"))
        .spawn()
        .expect("run fairway");
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if started.elapsed() > Duration::from_secs(60) {
            child.kill().ok();
            child.wait().ok();
            panic!("{args:?} still running after a minute: no limit stopped it");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let read =
        |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned();
    let result = (status.code(), read(&out), read(&err));
    std::fs::remove_dir_all(&dir).ok();
    result
}

/// A fresh directory under the system's temporary directory.
fn scratch(what: &str) -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "fairway-bad-sizes-{what}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Asserts exit code `code`, empty stdout and one stderr line containing
/// every one of `needles`; returns the line.
fn refused(code: i32, args: &[&str], needles: &[&str]) -> String {
    let (status, out, err) = fairway(args);
    assert_eq!(
        status,
        Some(code),
        "{args:?}: exit {status:?}, stderr: {err}"
    );
    assert!(out.is_empty(), "{args:?} printed to stdout: {out}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(err.starts_with("fairway: error: "), "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: {err:?} lacks {n:?}");
    }
    err
}

const QUARTER: &str = "a quarter of this machine's memory";
const WORK_LIMIT: &str = "the limit is 1099511627776 (2^40";

#[test]
fn guarantees_sizes_beyond_memory_are_refused_before_allocating() {
    // Beyond the 32-bit packet ids.
    for p in ["4294967296", "18446744073709551615"] {
        refused(
            1,
            &["guarantees", "--packets", p],
            &["--packets", "1..=4294967295"],
        );
    }
    // Within the ids, beyond memory: the sizes, the estimate and the limit.
    refused(
        1,
        &["guarantees", "--sched", "fifo", "--packets", "4294967295"],
        &["--packets 4294967295", "needs about", QUARTER],
    );
    refused(
        1,
        &[
            "guarantees",
            "--sched",
            "fifo",
            "--packets",
            "100",
            "--queue",
            "4294967295",
        ],
        &["--queue 4294967295", QUARTER],
    );
    // Zero, negative, not a number: clap's usage errors.
    for p in ["0", "-1", "nan", "inf", ""] {
        refused(2, &["guarantees", "--packets", p], &["--packets"]);
    }
}

#[test]
fn guarantees_values_outside_their_ranges_are_refused() {
    refused(
        1,
        &["guarantees", "--sizes", "uniform:1501", "--packets", "100"],
        &["--sizes", "1..=1500"],
    );
    for p in ["nan", "inf", "-1", "1.5"] {
        refused(
            1,
            &["guarantees", "--switch-prob", p, "--packets", "100"],
            &["--switch-prob", "probability"],
        );
    }
    refused(
        1,
        &["guarantees", "--sched", "fifo,fifo", "--packets", "100"],
        &["--sched", "fifo", "twice"],
    );
    refused(2, &["guarantees", "--rate", "0"], &["--rate", "positive"]);
}

#[test]
fn bench_plans_beyond_the_work_limit_are_refused() {
    let base = ["bench", "--sched", "drr", "--no-counters"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        base.iter().chain(extra).copied().collect()
    };
    refused(
        1,
        &with(&["--pairs", "18446744073709551615", "--repeat", "1"]),
        &["--pairs 18446744073709551615", WORK_LIMIT],
    );
    refused(
        1,
        &with(&["--pairs", "100", "--repeat", "18446744073709551615"]),
        &["--repeat 18446744073709551615", WORK_LIMIT],
    );
    refused(
        1,
        &with(&[
            "--pairs",
            "100",
            "--repeat",
            "1",
            "--warmup",
            "18446744073709551615",
        ]),
        &["--warmup 18446744073709551615", WORK_LIMIT],
    );
    // Within the work limit, beyond memory: one sample per timed run.
    refused(
        1,
        &with(&["--pairs", "1", "--repeat", "4294967296"]),
        &["--repeat 4294967296", QUARTER],
    );
    for flag in ["--pairs", "--repeat"] {
        refused(2, &with(&[flag, "0"]), &[flag, "1.."]);
    }
}

#[test]
fn bench_sweeps_refuse_before_writing_anything() {
    let out = scratch("sweep");
    let dir = out.join("charts");
    refused(
        1,
        &[
            "bench",
            "--sweep",
            "flows",
            "--sched",
            "drr",
            "--pairs",
            "100",
            "--repeat",
            "18446744073709551615",
            "--no-counters",
            "--out",
            dir.to_str().unwrap(),
        ],
        &["--repeat 18446744073709551615", WORK_LIMIT],
    );
    let written = std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0);
    assert_eq!(written, 0, "files written to {}", dir.display());
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn bench_lists_name_each_entry_once() {
    let base = ["bench", "--pairs", "100", "--repeat", "1", "--no-counters"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        base.iter().chain(extra).copied().collect()
    };
    refused(
        1,
        &with(&["--sched", "drr,drr"]),
        &["--sched", "drr", "twice"],
    );
    refused(
        1,
        &with(&["--sched", "drr", "--pattern", "smooth,smooth"]),
        &["--pattern", "smooth", "twice"],
    );
    refused(
        1,
        &with(&["--sched", "drr", "--pattern", "smooth,"]),
        &["--pattern", "empty"],
    );
    refused(
        1,
        &with(&["--sched", "drr", "--flows", "1k-w1,1k-w1"]),
        &["--flows", "1k-w1", "twice"],
    );
}

#[test]
fn bench_pq_sizes_beyond_memory_and_handles_are_refused_without_a_chart() {
    let dir = scratch("pq");
    let chart = dir.join("pq.svg");
    let chart_arg = chart.to_str().unwrap();
    let run = |extra: &[&str], needles: &[&str]| {
        let mut args = vec![
            "bench-pq",
            "--queues",
            "cffs",
            "--min-ops",
            "1",
            "--batches",
            "1",
            "--chart",
            chart_arg,
        ];
        args.extend_from_slice(extra);
        refused(1, &args, needles);
        assert!(!chart.exists(), "{args:?} wrote {}", chart.display());
    };
    run(
        &["--buckets", "4294967295", "--per-bucket", "1"],
        &["--buckets 4294967295", QUARTER],
    );
    run(
        &["--buckets", "100000", "--per-bucket", "4294967295"],
        &["--per-bucket", "the limit is 4294967295"],
    );
    run(
        &["--buckets", "16", "--per-bucket", "1", "--occupancy", "101"],
        &["--occupancy 101", "1..=100"],
    );
    run(
        &["--buckets", "16", "--per-bucket", "1", "--occupancy", "1"],
        &["--occupancy 1", "--buckets 16", "no bucket"],
    );
    run(
        &["--buckets", "1", "--per-bucket", "1"],
        &["--buckets 1", "2..="],
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bench_pq_work_rounds_alpha_and_duplicates_are_refused() {
    let small = [
        "bench-pq",
        "--queues",
        "cffs",
        "--buckets",
        "16",
        "--per-bucket",
        "1",
    ];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        small.iter().chain(extra).copied().collect()
    };
    refused(
        1,
        &with(&["--min-ops", "18446744073709551615", "--batches", "1"]),
        &["--min-ops", WORK_LIMIT],
    );
    refused(
        1,
        &with(&["--min-ops", "1", "--batches", "1", "--rounds", "1001"]),
        &["--rounds 1001", "1..=1000"],
    );
    refused(2, &with(&["--rounds", "0"]), &["--rounds", "1.."]);
    refused(
        1,
        &[
            "bench-pq",
            "--queues",
            "approx",
            "--buckets",
            "16",
            "--per-bucket",
            "1",
            "--alpha",
            "0",
        ],
        &["--alpha 0", "1..=341"],
    );
    refused(
        1,
        &[
            "bench-pq",
            "--queues",
            "cffs,cffs",
            "--buckets",
            "16",
            "--per-bucket",
            "1",
        ],
        &["--queues", "cffs", "twice"],
    );
    refused(
        1,
        &[
            "bench-pq",
            "--queues",
            "cffs",
            "--buckets",
            "16,16",
            "--per-bucket",
            "1",
        ],
        &["--buckets", "16", "twice"],
    );
}

#[test]
fn netsim_seeds_and_simulated_time_are_bounded() {
    refused(
        1,
        &[
            "netsim",
            "--sched",
            "qfq",
            "--duration",
            "0.01",
            "--warmup",
            "0",
            "--seeds",
            "3",
            "--seed",
            "18446744073709551615",
        ],
        &["--seed 18446744073709551615", "--seeds 3", "2^64 − 1"],
    );
    refused(
        1,
        &[
            "netsim",
            "--sched",
            "qfq,drr,wf2q+",
            "--duration",
            "3600",
            "--seeds",
            "100",
        ],
        &["--seeds 100", "--duration 3600", "the limit is 36000"],
    );
    refused(
        1,
        &[
            "netsim",
            "--sched",
            "qfq,qfq",
            "--duration",
            "0.01",
            "--warmup",
            "0",
            "--seeds",
            "1",
        ],
        &["--sched", "qfq", "twice"],
    );
    for d in ["nan", "inf", "-1", "0", "3601"] {
        refused(
            1,
            &["netsim", "--duration", d],
            &["--duration", "(0, 3600]"],
        );
    }
    refused(1, &["netsim", "--warmup", "nan"], &["--warmup"]);
    refused(1, &["netsim", "--seeds", "0"], &["--seeds 0", "1..=100"]);
}
