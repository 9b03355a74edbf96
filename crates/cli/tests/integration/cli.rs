//! End-to-end tests of the `fairway` binary: the commands the guides show,
//! exit codes and error messages.

use std::process::{Command, Output};

fn fairway(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args(args)
        .output()
        .expect("run fairway")
}

fn json_lines(out: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

#[test]
fn guarantees_json_reproduces_the_papers_regime() {
    let out = fairway(&[
        "guarantees",
        "--sched",
        "qfq,qfq+,drr,wf2q+",
        "--flows",
        "1k-highw",
        "--queue",
        "1",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = json_lines(&out);
    assert_eq!(rows.len(), 4);
    let get = |name: &str| {
        rows.iter()
            .find(|r| r["sched"] == name)
            .unwrap_or_else(|| panic!("no {name}"))
    };
    for r in &rows {
        assert_eq!(r["flows"], "1k-highw");
        assert!(r["twfi_max_weight_flow"].is_f64());
        assert!(r["bwfi_max_weight_flow"].is_f64());
        assert_eq!(r["bound_violations"], 0);
    }
    let t = |name: &str| get(name)["twfi_max_weight_flow"].as_f64().unwrap();
    assert!(t("wf2q+") <= 2.0);
    assert!(t("qfq") <= 2.0);
    assert!(t("qfq+") <= 4.0);
    assert!(t("drr") >= 100.0);
}

#[test]
fn demo_runs_with_no_arguments() {
    let out = fairway(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for name in ["fifo", "drr", "qfq", "qfq+", "wf2q+"] {
        assert!(
            text.lines().any(|l| l.starts_with(&format!("{name} "))),
            "no row for {name}:\n{text}"
        );
    }
}

#[test]
fn bad_input_gives_one_line_and_a_failure_code() {
    for args in [
        &["guarantees", "--flows", "1x"][..],
        &["guarantees", "--sched", "nope"],
        &["guarantees", "--sched", "drr:m=3"],
        &["guarantees", "--sched", "qfq+:m=65"],
        &["bench", "--sched", "drr:quantum=0"],
        &["guarantees", "--pattern", "wavy"],
        &["guarantees", "--sizes", "uniform:0"],
        &["guarantees", "--flows", "70000x1"],
    ] {
        let out = fairway(args);
        assert!(!out.status.success(), "{args:?} should fail");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("fairway: error: "), "{args:?}: {err}");
    }
}

#[test]
fn help_documents_flags_with_an_example() {
    let out = fairway(&["guarantees", "--help"]);
    let text = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--sched", "--flows", "--queue", "--seed", "--json", "Example",
    ] {
        assert!(text.contains(flag), "missing {flag}");
    }
}

#[test]
fn scheds_lists_the_catalogue_with_ranges() {
    let out = fairway(&["scheds", "--json"]);
    assert!(out.status.success());
    let rows = json_lines(&out);
    let names: Vec<&str> = rows.iter().filter_map(|r| r["name"].as_str()).collect();
    let catalogue: Vec<&str> = fairway_core::SchedKind::ALL
        .iter()
        .map(|k| k.name())
        .collect();
    assert_eq!(
        names, catalogue,
        "one row per catalogue entry, in its order"
    );
    let row = |name: &str| &rows[names.iter().position(|n| *n == name).unwrap()];
    let qfq_plus = row("qfq+");
    assert_eq!(qfq_plus["params"][0]["key"], "m");
    assert_eq!(qfq_plus["params"][0]["max"], 64);
    assert_eq!(qfq_plus["guarantee"], "aggregate");
    assert_eq!(row("qfq")["delta_s_minus"], 2);
    assert_eq!(row("qfq")["delta_s_plus"], 4);
}
