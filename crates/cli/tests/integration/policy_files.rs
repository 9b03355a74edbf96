//! `fairway policy check|run` on policy files: every shipped example
//! checks, scheduler nodes take registry specs with parameters, and a bad
//! spec fails with the registry's one line at the file's line:column.

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

/// A `root` scheduler node (its `policy` on line 3) over a `class`
/// scheduler node (line 8) of weight 3 with four flows, and one flow.
fn two_schedulers(root: &str, class: &str) -> String {
    format!(
        "[[node]]\nname = \"root\"\npolicy = \"{root}\"\n\n\
         [[node]]\nname = \"class\"\nparent = \"root\"\npolicy = \"{class}\"\nweight = 3\n\n\
         [[flow]]\nparent = \"class\"\ncount = 4\n\n\
         [[flow]]\nparent = \"root\"\n"
    )
}

#[test]
fn every_shipped_example_checks() {
    let dir = format!("{}/../../examples/policies", env!("CARGO_MANIFEST_DIR"));
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            let p = p.to_str().unwrap();
            let out = fairway(&["policy", "check", p]);
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "{p}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(stdout.starts_with(&format!("{p}: ok: ")), "{stdout}");
        }
    }
}

#[test]
fn scheduler_nodes_take_parameterised_registry_specs() {
    let path = scratch(
        "params.toml",
        &two_schedulers("drr:quantum=3000", "qfq+:m=4"),
    );
    let out = fairway(&["policy", "check", &path]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{path}: ok: 2 nodes, 5 flows, 65536 packet slots, shaper 20000 x 100000 ns\n")
    );
    let out = fairway(&[
        "policy",
        "run",
        &path,
        "--flows",
        "1x5",
        "--duration-ms",
        "50",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Greedy sources, weights 3:1 between the class and the flow.
    let class = r["nodes"][1]["share"].as_f64().unwrap();
    assert!((class - 0.75).abs() < 0.02, "class share {class}");
}

#[test]
fn a_bad_scheduler_spec_fails_with_one_line_at_its_place() {
    for (root, class, line, message) in [
        (
            "qfq+:m=65",
            "drr",
            3,
            "parameter m=65 of qfq+ is outside 1..=64",
        ),
        (
            "drr",
            "drr:quantum=0",
            8,
            "parameter quantum=0 of drr is outside 1..=4294967295",
        ),
        (
            "wf2q+:m=4",
            "drr",
            3,
            "bad parameter 'm=4': scheduler wf2q+ takes none",
        ),
    ] {
        let path = scratch("bad-spec.toml", &two_schedulers(root, class));
        for cmd in ["check", "run"] {
            let out = fairway(&["policy", cmd, &path]);
            assert!(!out.status.success(), "{root} {class}");
            assert!(out.stdout.is_empty());
            assert_eq!(
                String::from_utf8_lossy(&out.stderr),
                format!("fairway: error: {path}:{line}:10: {message}\n")
            );
        }
    }
}
