//! `fairway netsim` end to end: the `--quick --json` run reproduces the
//! orderings of the QFQ paper Tables 2–3 with S-KPS reachable by name, and bad
//! arguments fail with one line and a non-zero exit.

use std::process::{Command, Output};

fn fairway(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args(args)
        .output()
        .expect("run fairway")
}

#[test]
fn quick_json_run_holds_the_papers_orderings() {
    let out = fairway(&["netsim", "--quick", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty(), "nothing extra with --json");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let rows = v["rows"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["sched"].as_str().unwrap()).collect();
    assert_eq!(names, ["drr:quantum=250", "qfq", "s-kps", "wf2q+"]);
    assert!(rows.iter().all(|r| r["paper"].is_object()));
    let claims = v["claims"].as_array().unwrap();
    assert_eq!(claims.len(), 7);
    assert!(claims.iter().all(|c| c["holds"] == true), "{claims:#?}");
}

#[test]
fn bad_arguments_fail_with_one_line() {
    for args in [
        &["netsim", "--sched", "nope"][..],
        &["netsim", "--warmup", "30"],
        &["netsim", "--seeds", "0"],
        &["netsim", "--cbr-len", "0"],
    ] {
        let out = fairway(args);
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("fairway: error: "), "{err}");
    }
}
