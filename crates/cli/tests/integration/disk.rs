//! End-to-end tests of `fairway disk` (quick versions of the thesis'
//! §2.4 experiments): the shapes the issue asks for, JSON output, errors.

use std::process::{Command, Output};

fn fairway(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args(args)
        .output()
        .expect("run fairway")
}

fn json_lines(out: &Output) -> Vec<serde_json::Value> {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

#[test]
fn web_server_bfq_halves_cfq_latency_at_similar_throughput() {
    let rows = json_lines(&fairway(&["disk", "web", "--quick", "--json"]));
    assert_eq!(rows.len(), 6);
    let get = |p: &str| {
        rows.iter()
            .find(|r| r["result"]["sched"].as_str().unwrap().starts_with(p))
            .map(|r| &r["result"])
            .unwrap()
    };
    let (bfq, cfq) = (get("BFQ"), get("CFQ"));
    let lat = |r: &serde_json::Value| r["small_file_s"].as_f64().unwrap();
    let thr = |r: &serde_json::Value| r["aggregate_mb_s"].as_f64().unwrap();
    assert!(lat(cfq) >= 2.0 * lat(bfq), "{bfq} vs {cfq}");
    assert!((thr(bfq) / thr(cfq) - 1.0).abs() <= 0.10, "{bfq} vs {cfq}");
}

#[test]
fn streaming_bfq_sustains_more_streams_than_every_baseline() {
    let rows = json_lines(&fairway(&["disk", "streaming", "--quick", "--json"]));
    let streams = |p: &str| {
        rows.iter()
            .find(|r| r["result"]["sched"].as_str().unwrap().starts_with(p))
            .map(|r| r["result"]["streams"].as_u64().unwrap())
            .unwrap()
    };
    let bfq = streams("BFQ 4096");
    for other in ["SCAN-EDF", "CFQ", "C-LOOK", "AS", "YFQ"] {
        assert!(
            bfq > streams(other),
            "BFQ {bfq} vs {other} {}",
            streams(other)
        );
    }
}

#[test]
fn throughput_grows_with_the_maximum_budget() {
    let rows = json_lines(&fairway(&[
        "disk",
        "throughput",
        "--quick",
        "--files",
        "2",
        "--json",
    ]));
    let bfq: Vec<f64> = rows
        .iter()
        .filter(|r| r["sched"].as_str().unwrap().starts_with("BFQ"))
        .map(|r| r["aggregate_mb_s"].as_f64().unwrap())
        .collect();
    assert_eq!(bfq.len(), 3);
    assert!(bfq.windows(2).all(|w| w[0] < w[1]), "{bfq:?}");
}

#[test]
fn bad_disk_arguments_give_one_line_and_a_failure_code() {
    for args in [
        &["disk", "throughput", "--files", "0"][..],
        &["disk", "web", "--seconds", "0"],
        &["disk", "bench", "--apps", "ten"],
        &["disk", "shares", "--disk", "/nonexistent.toml"],
        &["disk", "throughput", "--readahead-kb", "100"],
        &["disk", "streaming", "--readahead-kb", "99999"],
        &["disk", "kernel", "--in-flight", "4"],
        &[
            "disk",
            "kernel",
            "--backend",
            "io-uring",
            "--in-flight",
            "0",
        ],
        &["disk", "kernel", "--backend", "aio"],
    ] {
        let out = fairway(args);
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("fairway: error:"), "{err}");
    }
}

#[test]
fn the_disk_catalogue_lists_every_scheduler_with_its_parameters() {
    let rows = json_lines(&fairway(&["disk", "scheds", "--json"]));
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    let catalogue: Vec<&str> = fairway_disk::catalogue::DiskSchedKind::ALL
        .iter()
        .map(|k| k.name())
        .collect();
    assert_eq!(
        names, catalogue,
        "one row per catalogue entry, in its order"
    );
    let bfq = &rows[names.iter().position(|n| *n == "bfq").unwrap()];
    assert_eq!(bfq["label"], "BFQ 4096 sect");
    let b_max = &bfq["params"][0];
    assert_eq!(
        (
            &b_max["key"],
            &b_max["min"],
            &b_max["max"],
            &b_max["default"]
        ),
        (
            &serde_json::json!("b_max"),
            &serde_json::json!(256),
            &serde_json::json!(16_777_216),
            &serde_json::json!(4096)
        )
    );
    let out = fairway(&["disk", "scheds"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("slice_ms=1..=60000 (default 100)"), "{text}");
}
