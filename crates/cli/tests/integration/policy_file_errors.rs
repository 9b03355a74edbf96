//! `fairway policy check` on bad policy files: exit code 1, nothing on
//! standard output, and exactly one line on standard error that names the
//! file and, where there is one, the line and column of what is wrong.

use std::process::Command;

/// Runs `fairway policy check PATH`; its one stderr line, after checking
/// the exit code and that stdout is empty.
fn refused(path: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args(["policy", "check", path])
        .output()
        .expect("run fairway");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(stderr.lines().count(), 1, "not one line: {stderr}");
    assert!(stderr.ends_with('\n'), "{stderr}");
    stderr.trim_end().to_string()
}

/// Writes `text` to a scratch file named `name`; its path.
fn scratch(name: &str, text: &str) -> String {
    let path = format!("{}/pfe-{name}", env!("CARGO_TARGET_TMPDIR"));
    std::fs::write(&path, text).expect("write the policy file");
    path
}

/// `fairway: error: PATH:` + `rest`.
fn at(path: &str, rest: &str) -> String {
    format!("fairway: error: {path}:{rest}")
}

#[test]
fn an_unreadable_or_huge_file_is_one_line_without_a_position() {
    assert_eq!(
        refused("/dev/zero"),
        "fairway: error: /dev/zero: larger than the 1048576-byte limit for policy files (held in memory while parsed; use `count` for many identical flows)"
    );
    let missing = format!("{}/pfe-does-not-exist.toml", env!("CARGO_TARGET_TMPDIR"));
    assert_eq!(
        refused(&missing),
        at(&missing, " cannot read: No such file or directory")
    );
}

#[test]
fn syntax_errors_and_unknown_fields_are_one_line() {
    let p = scratch(
        "syntax.toml",
        "[[node]]\nname = \"root\"\npolicy = \"stfq\n",
    );
    assert_eq!(
        refused(&p),
        at(&p, "3:15: invalid basic string, expected `\"`")
    );
    let p = scratch(
        "unknown.toml",
        "[[node]]\nname = \"root\"\npolicy = \"stfq\"\n\n[[flow]]\nparent = \"root\"\nwieght = 2\n",
    );
    assert_eq!(
        refused(&p),
        at(&p, "7:1: unknown field `wieght`, expected one of `name`, `parent`, `count`, `deadline_us`, `message_bytes`, `weight`, `priority`, `rate`, `reservation`")
    );
}

#[test]
fn two_flows_of_one_name_are_refused_naming_both_lines() {
    let p = scratch(
        "dup.toml",
        "[[node]]\nname = \"root\"\npolicy = \"stfq\"\n\n[[flow]]\nname = \"web\"\nparent = \"root\"\n\n[[flow]]\nname = \"web\"\nparent = \"root\"\n",
    );
    assert_eq!(
        refused(&p),
        at(
            &p,
            "10:8: flow name \"web\" used twice (also on line 6): flow names must differ"
        )
    );
}

#[test]
fn a_reservation_under_edf_is_refused_at_its_value() {
    let p = scratch(
        "edf-reservation.toml",
        "[[node]]\nname = \"root\"\npolicy = \"edf\"\n\n[[flow]]\nname = \"a\"\nparent = \"root\"\ndeadline_us = 100\nreservation = \"10 Mbit/s\"\n",
    );
    assert_eq!(
        refused(&p),
        at(&p, "9:15: `reservation` of flow \"a\" is ignored: its parent \"root\" is edf, and only hclock reads it")
    );
}

/// A bad `priority` on the last of 12 leaves (line 63) and a bad `queue`
/// late in the file each point at their own value, not at the top.
#[test]
fn a_bad_value_late_in_the_file_points_at_its_line() {
    let mut text = String::from("[[node]]\nname = \"root\"\npolicy = \"strict-priority\"\n");
    for k in 0..12 {
        text.push_str(&format!(
            "\n[[flow]]\nname = \"f{k}\"\nparent = \"root\"\npriority = {k}\n"
        ));
    }
    let p = scratch(
        "late-priority.toml",
        &text.replace("priority = 11", "priority = 640"),
    );
    assert_eq!(
        refused(&p),
        at(&p, "63:12: priority 640 of flow \"f11\" is outside the queue of its parent \"root\" (64 buckets x granularity 1: priorities 0..64)")
    );
    let late_queue = text + "\n[[node]]\nname = \"class\"\nparent = \"root\"\npolicy = \"stfq\"\nqueue = { kind = \"ffs\", buckets = 64, granularity = 1 }\n\n[[flow]]\nname = \"g\"\nparent = \"class\"\n";
    let p = scratch("late-queue.toml", &late_queue);
    assert_eq!(
        refused(&p),
        at(
            &p,
            "69:9: node \"class\": fair queueing tags grow without bound: use cffs or binary-heap"
        )
    );
}
