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
