//! `fairway disk s-bench`: its flags (fast: every check happens before
//! anything is created), its skip without root (exit 3), and, in the slow
//! tier, a quick run on a loop device whose JSON has a figure for every
//! case and scheduler, leaving no loop device or image behind.

use std::process::{Command, Output};

fn fairway(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args(args)
        .output()
        .expect("run fairway")
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

fn one_line_error(args: &[&str], code: i32, says: &str) {
    let out = fairway(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    assert!(err.starts_with("fairway: error:"), "{err}");
    assert!(err.contains(says), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?}");
}

#[test]
fn bad_flags_give_one_line_before_anything_runs() {
    let sb = |extra: &[&'static str]| {
        let mut v = vec!["disk", "s-bench"];
        v.extend_from_slice(extra);
        v
    };
    one_line_error(&sb(&["--reps", "0"]), 1, "--reps 0 must be in 1..=100");
    one_line_error(
        &sb(&["--region-mib", "8"]),
        1,
        "--region-mib 8 must be in 16..=4096",
    );
    one_line_error(
        &sb(&["--warmup-s", "601"]),
        1,
        "--warmup-s 601 must be in 0..=600",
    );
    one_line_error(
        &sb(&["--max-startup-s", "0"]),
        1,
        "--max-startup-s 0 must be in 1..=600",
    );
    one_line_error(
        &sb(&["--in-flight", "257"]),
        1,
        "--in-flight 257 must be in 1..=256",
    );
    for depth in ["0", "65"] {
        one_line_error(
            &sb(&["--reader-depth", depth]),
            1,
            &format!("--reader-depth {depth} must be in 1..=64"),
        );
    }
    one_line_error(&sb(&["--cases", "idle,busy"]), 1, "--cases: unknown `busy`");
    one_line_error(
        &sb(&["--cases", "idle,idle"]),
        1,
        "--cases idle,idle: must be a list naming each entry once",
    );
    one_line_error(
        &sb(&["--schedulers", "cfq"]),
        1,
        "--schedulers: unknown `cfq`",
    );
    one_line_error(
        &sb(&["--spec", "bfq:t_max_ms=x"]),
        1,
        "bad parameter 't_max_ms=x'",
    );
    one_line_error(
        &sb(&["--trace", "/nonexistent/app.trace"]),
        1,
        "/nonexistent/app.trace: ",
    );
    one_line_error(
        &sb(&["--s-checkout", "/nonexistent"]),
        1,
        "/nonexistent/comm_startup_lat/gnometerm.trace: ",
    );
    one_line_error(&sb(&["--chart", "/nonexistent/dir/c.svg"]), 1, "--chart");
    one_line_error(&sb(&["--app", "xterm"]), 2, "required arguments");
    one_line_error(&sb(&["--s-checkout", "/x", "--app", "emacs"]), 2, "emacs");
    one_line_error(
        &sb(&["--trace", "a", "--s-checkout", "/x"]),
        2,
        "cannot be used with",
    );
    one_line_error(&sb(&["--reps", "-1"]), 2, "negative");
    one_line_error(&sb(&["--submission", "batch"]), 2, "batch");
    one_line_error(&sb(&["--buffers", "stack"]), 2, "stack");
}

#[test]
fn a_bad_trace_is_refused_with_its_file_line_and_column() {
    let dir = std::env::temp_dir().join(format!("fairway-sbench-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.trace");
    std::fs::write(&path, "app 8 seq sync\napp 8 seq sometimes\n").unwrap();
    let p = path.to_str().unwrap();
    one_line_error(
        &["disk", "s-bench", "--trace", p],
        1,
        &format!("{p}:2:11: `sometimes` is neither `sync` nor `async`"),
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn without_root_it_is_skipped_with_exit_code_3() {
    let bin = env!("CARGO_BIN_EXE_fairway");
    let out = if is_root() {
        // Drop to nobody to see the skip (the binary must be reachable).
        match Command::new("setpriv")
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                bin,
                "disk",
                "s-bench",
                "--quick",
            ])
            .output()
        {
            Ok(o) if !String::from_utf8_lossy(&o.stderr).contains("setpriv:") => o,
            _ => {
                eprintln!("root without a usable setpriv: not checked");
                return;
            }
        }
    } else {
        fairway(&["disk", "s-bench", "--quick"])
    };
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("Permission denied") {
        eprintln!("the binary is not reachable as nobody: not checked");
        return;
    }
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert_eq!(err.trim(), "fairway disk s-bench: skipped, needs root");
    assert!(out.stdout.is_empty());
}

/// Linux's smallest order of the free blocks it reports to a hypervisor.
const REPORTING_ORDER: &str = "/sys/module/page_reporting/parameters/page_reporting_order";

fn leftovers() -> (String, Vec<String>) {
    let losetup = Command::new("losetup")
        .arg("-a")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    let loops = losetup
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("fairway-s-bench"))
        .collect::<Vec<_>>()
        .join("\n");
    let files = std::fs::read_dir("/var/tmp")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("fairway-s-bench"))
                .collect()
        })
        .unwrap_or_default();
    (loops, files)
}

#[test]
#[ignore = "slow tier: root, loop device"]
fn quick_run_gives_every_scheduler_figures_and_cleans_up() {
    if !is_root() {
        eprintln!("skipped, needs root");
        return;
    }
    let order = || std::fs::read_to_string(REPORTING_ORDER).ok();
    let order_before = order();
    let out = fairway(&["disk", "s-bench", "--quick", "--json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // Free page reporting, paused for the run where the machine has it,
    // is as it was.
    assert_eq!(order(), order_before);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let scheds: Vec<&str> = v["schedulers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(
        scheds,
        ["none", "mq-deadline", "kyber", "bfq", "fairway-bfq"]
    );
    let cases: Vec<&str> = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["case"].as_str().unwrap())
        .collect();
    assert_eq!(cases, ["idle", "5r-seq", "10r-seq", "5r5w-seq", "10r-rand"]);
    for case in v["cases"].as_array().unwrap() {
        let busy = case["readers"].as_u64().unwrap() + case["writers"].as_u64().unwrap() > 0;
        let cells = case["cells"].as_array().unwrap();
        assert_eq!(cells.len(), 5);
        for (cell, s) in cells.iter().zip(&scheds) {
            assert_eq!(cell["scheduler"], *s);
            let runs = cell["startup_runs_s"].as_array().unwrap();
            assert_eq!(runs.len(), 1, "{cell}");
            assert!(runs[0].as_f64().unwrap() > 0.0, "{cell}");
            assert!(cell["requests"].as_u64().unwrap() > 0, "{cell}");
            assert!(cell["cpu_us_per_request"].as_f64().is_some(), "{cell}");
            if busy {
                assert!(cell["throughput_mb_s"].as_f64().unwrap() > 0.0, "{cell}");
                let during = cell["startup_throughput_mb_s"].as_f64().unwrap();
                assert!(during > 0.0, "{cell}");
                let load = &cell["device_load"];
                assert!(load["in_flight_reads"].as_f64().unwrap() >= 0.0, "{cell}");
                assert!(load["read_bytes"].as_f64().unwrap() >= 512.0, "{cell}");
            }
        }
        // fairway's sequential readers follow what S's made of the device
        // under `none`, in the same row.
        let shape = &case["fairway_readers"];
        if case["pattern"] == "seq" && busy {
            assert_eq!(shape["measured_in"], "none", "{case}");
            let none = &cells[0]["device_load"];
            assert_eq!(shape["load"], *none, "{case}");
            assert!(shape["depth"].as_u64().unwrap() >= 1, "{shape}");
            assert_eq!(shape["bytes"].as_u64().unwrap() % 4096, 0, "{shape}");
        } else {
            assert!(shape.is_null(), "{case}");
        }
    }
    assert_eq!(v["reads"], "buffered");
    assert_eq!(v["submission"], "device-thread");
    assert_eq!(v["buffers"], "huge");
    let reporting = v["page_reporting"].as_str().unwrap();
    let queue =
        std::fs::read_to_string("/proc/interrupts").is_ok_and(|i| i.contains("reporting_vq"));
    if queue {
        assert!(reporting == "paused for the run" || reporting.starts_with("left on"));
    } else {
        assert_eq!(reporting, "absent", "{v}");
    }
    // --quick's shortened S loop: 1 s, the cache dropped, 0.2 s, the
    // replay, 0.5 s after a short one.
    assert_eq!(v["pause_before_s"], 1.0);
    assert_eq!(v["pause_settle_s"], 0.2);
    assert_eq!(v["pause_after_s"], 0.5);
    let targets = v["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 4);
    // The throughput target (S's measure) has the during-start-up ratio
    // beside it; the start-up targets have none.
    assert!(targets[3]["ratio_during_startup"].as_f64().is_some(), "{v}");
    assert!(targets[0]["ratio_during_startup"].is_null(), "{v}");
    assert_eq!(leftovers(), (String::new(), Vec::new()));
}
