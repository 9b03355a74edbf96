//! One grammar for every `--flows`: `,` joins groups into one flow set,
//! `;` (or `,` between presets) separates sets; `guarantees` and `bench`
//! read the same lists with the same meaning.

use std::process::{Command, Output};

fn fairway(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args(args)
        .output()
        .expect("run fairway")
}

/// The JSON lines of a successful run.
fn lines(out: &Output) -> Vec<serde_json::Value> {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// The flow sets a run measured, in order, each once.
fn sets(lines: &[serde_json::Value]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for l in lines {
        let name = l["flows"].as_str().expect("field flows").to_string();
        if names.last() != Some(&name) {
            names.push(name);
        }
    }
    names
}

fn guarantees(flows: &str) -> Output {
    fairway(&[
        "guarantees",
        "--sched",
        "fifo",
        "--flows",
        flows,
        "--packets",
        "300",
        "--json",
    ])
}

fn bench(flows: &str) -> Output {
    fairway(&[
        "bench",
        "--sched",
        "fifo",
        "--flows",
        flows,
        "--pairs",
        "2000",
        "--repeat",
        "1",
        "--pattern",
        "smooth",
        "--no-counters",
        "--json",
    ])
}

#[test]
fn both_commands_read_the_same_lists_with_the_same_meaning() {
    for (flows, names, counts) in [
        ("1x6,2x3", vec!["1x6,2x3"], vec![9]),
        ("1x6;2x3", vec!["1x6", "2x3"], vec![6, 3]),
        ("1x6; 2x3,1x1", vec!["1x6", "2x3,1x1"], vec![6, 4]),
        ("1k-w1,1k-wmix", vec!["1k-w1", "1k-wmix"], vec![1000, 875]),
        ("1k-w1;1x5", vec!["1k-w1", "1x5"], vec![1000, 5]),
    ] {
        let g = lines(&guarantees(flows));
        assert_eq!(sets(&g), names, "guarantees --flows {flows}");
        let b = lines(&bench(flows));
        assert_eq!(sets(&b), names, "bench --flows {flows}");
        let mut n: Vec<u64> = b
            .iter()
            .map(|l| l["n_flows"].as_u64().expect("n_flows"))
            .collect();
        n.dedup();
        assert_eq!(n, counts, "bench --flows {flows}");
    }
}

#[test]
fn both_commands_refuse_the_same_lists() {
    for flows in ["1k-w1,1x5", "1x5;1x5", "1x5;", "1k-w1;1k-w1"] {
        for out in [guarantees(flows), bench(flows)] {
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "--flows {flows}: {stderr}");
            assert_eq!(stderr.lines().count(), 1, "{stderr}");
        }
    }
}
