//! `fairway shape --check`: the shipped examples check with a summary and
//! exit 0; a configuration with problems prints each on its own line
//! `file:line[:col]: message` on standard error and exits 1; without
//! `--check` or a configuration it is a usage error (exit 2).

use std::process::{Command, Output};

fn fairway(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args(args)
        .output()
        .expect("run fairway")
}

/// Writes `text` to scratch file `name`; its path.
fn scratch(name: &str, text: &str) -> String {
    let path = format!("{}/shape-{name}", env!("CARGO_TARGET_TMPDIR"));
    std::fs::write(&path, text).expect("write the scratch file");
    path
}

fn example(name: &str) -> String {
    format!(
        "{}/../../examples/shaper/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

const HEADER: &str = "Circuit ID,Circuit Name,Device ID,Device Name,Parent Node,MAC,IPv4,IPv6,Download Min Mbps,Upload Min Mbps,Download Max Mbps,Upload Max Mbps,Comment";

#[test]
fn the_examples_check_with_a_summary() {
    let csv = example("ShapedDevices.csv");
    let json = example("network.json");
    let out = fairway(&[
        "shape",
        "--check",
        "--shaped-devices",
        &csv,
        "--network",
        &json,
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty());
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], format!("{csv} + {json}: ok"));
    assert_eq!(lines[1], "6 nodes, 8 circuits, 12 devices, 0 rules");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("level 1: 2 nodes, 0 circuits; mins sum to ")),
        "{stdout}"
    );

    let toml = example("shaper.toml");
    let out = fairway(&["shape", "--check", "--config", &toml]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.starts_with(&format!(
            "{toml}: ok\n7 nodes, 9 circuits, 13 devices, 1 rules\n"
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "interfaces: internet eth0, subscribers eth1; link 2gbit download, 1gbit upload"
        ),
        "{stdout}"
    );
}

#[test]
fn each_problem_is_one_line_with_its_file_and_line_and_the_exit_is_1() {
    let csv = scratch(
        "bad.csv",
        &format!(
            "{HEADER}\n# a comment line counts\n1,a,d1,x,,02:00:00:00:00:zz,,,1,1,2,2,\n2,b,d2,x,,,100.64.0.0/24,,3,1,2,2,\n3,c,d3,x,,,100.64.0.9,,1,1,nan,2,\n4,d,d4,x,,,100.64.0.7,,1,1,2,2,\n"
        ),
    );
    let out = fairway(&["shape", "--check", "--shaped-devices", &csv]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 5, "{stderr}");
    assert!(
        lines[0].starts_with(&format!(
            "{csv}:3: MAC \"02:00:00:00:00:zz\" does not parse"
        )),
        "{stderr}"
    );
    assert!(
        lines[1].starts_with(&format!(
            "{csv}:4: circuit \"2\": download min 3mbit is above its max 2mbit"
        )),
        "{stderr}"
    );
    assert!(
        lines[2].starts_with(&format!(
            "{csv}:5: Download Max Mbps: rate \"nan\" is not a finite number"
        )),
        "{stderr}"
    );
    assert!(
        lines[3].starts_with(&format!("{csv}:6: 100.64.0.7/32 of circuit \"4\" overlaps 100.64.0.0/24 of circuit \"2\" at {csv}:4")),
        "{stderr}"
    );
    assert_eq!(
        lines[4],
        "fairway: error: 4 problems in the configuration (above, one a line)"
    );
}

#[test]
fn toml_problems_say_line_and_column() {
    let toml = scratch(
        "bad.toml",
        "[[node]]\nname = \"a\"\nparent = \"b\"\nrate = { download = \"10mbit\", upload = \"10 furlongs\" }\n\n\
         [[node]]\nname = \"b\"\nparent = \"a\"\nrate = { download = \"10mbit\", upload = \"10mbit\" }\n\n\
         [[node]]\nname = \"c\"\nparent = \"b\"\nrate = { download = \"10mbit\", upload = \"10mbit\" }\n\n\
         [[node]]\nname = \"d\"\nparent = \"c\"\nrate = { download = \"10mbit\", upload = \"10mbit\" }\n",
    );
    let out = fairway(&["shape", "--check", "--config", &toml]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(lines[0].starts_with(&format!("{toml}:4:40: rate.upload: rate \"10 furlongs\": unknown unit \"furlongs\" (allowed: bit, kbit")), "{stderr}");
    assert_eq!(
        lines[1],
        "fairway: error: 1 problem in the configuration (above, one a line)"
    );

    let fixed = std::fs::read_to_string(&toml)
        .unwrap()
        .replace("10 furlongs", "10mbit");
    let toml = scratch("cycle.toml", &fixed);
    let out = fairway(&["shape", "--check", "--config", &toml]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr.starts_with(&format!("{toml}:2:8: nodes form a cycle: a -> b -> a\n")),
        "{stderr}"
    );
}

#[test]
fn check_and_a_configuration_are_required() {
    let toml = example("shaper.toml");
    let csv = example("ShapedDevices.csv");
    for (args, says) in [
        (vec!["shape", "--shaped-devices", csv.as_str()], "--check"),
        (vec!["shape", "--check"], "--config"),
        (
            vec![
                "shape",
                "--check",
                "--config",
                toml.as_str(),
                "--network",
                "x.json",
            ],
            "cannot be used with",
        ),
    ] {
        let out = fairway(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with("fairway: error: ") && stderr.contains(says),
            "{stderr}"
        );
    }
}

#[test]
fn a_missing_file_is_one_line_naming_it() {
    let out = fairway(&[
        "shape",
        "--check",
        "--shaped-devices",
        "/nonexistent/ShapedDevices.csv",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("/nonexistent/ShapedDevices.csv: cannot read: "),
        "{stderr}"
    );
}

#[test]
fn shaping_without_interfaces_or_with_a_missing_one_is_one_line() {
    let none = scratch(
        "no-interfaces.toml",
        "[[circuit]]\nid = \"c\"\nname = \"c\"\nrate = { download = \"1mbit\", upload = \"1mbit\" }\n",
    );
    let missing = scratch(
        "missing-interface.toml",
        "[interfaces]\ninternet = \"fw-absent0\"\nsubscribers = \"fw-absent1\"\n\
         rate = { download = \"10mbit\", upload = \"10mbit\" }\n",
    );
    for (toml, says) in [
        (none, "names no interfaces"),
        (missing, "interface \"fw-absent0\": no such interface"),
    ] {
        let out = fairway(&["shape", "--config", &toml]);
        assert_eq!(out.status.code(), Some(1), "{toml}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with("fairway: error: ") && stderr.contains(says),
            "{stderr}"
        );
        assert!(out.stdout.is_empty(), "nothing started");
    }
}

#[test]
fn a_real_time_priority_outside_fifos_range_is_refused_before_any_interface() {
    let missing = scratch(
        "rt-missing-interface.toml",
        "[interfaces]\ninternet = \"fw-absent0\"\nsubscribers = \"fw-absent1\"\n\
         rate = { download = \"10mbit\", upload = \"10mbit\" }\n",
    );
    for p in ["0", "100"] {
        let out = fairway(&["shape", "--config", &missing, "--rt-priority", p]);
        assert_eq!(out.status.code(), Some(1), "{p}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains(&format!(
                "--rt-priority {p} outside 1..=99 (SCHED_FIFO's priorities)"
            )),
            "the priority is checked before the interfaces are opened: {stderr}"
        );
    }
    let example = example("shaper.toml");
    let out = fairway(&[
        "shape",
        "--check",
        "--config",
        &example,
        "--rt-priority",
        "5",
    ]);
    assert_eq!(out.status.code(), Some(2), "a check runs no loop");
}
