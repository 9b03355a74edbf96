//! Standard output that cannot be written — a closed pipe
//! (`fairway … | head -0`) or a full disk (`> /dev/full`) — ends the command
//! with one line on standard error and a non-zero exit, never a panic.

use std::fs::File;
use std::process::{Command, Output, Stdio};

const POLICY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../examples/policies/hpfq.toml"
);

/// Runs `fairway args` with standard output going to `stdout`.
fn fairway_into(args: &[&str], stdout: Stdio) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args(args)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .expect("run fairway")
}

/// The command failed with exactly one line naming the output problem.
fn assert_one_line_error(out: &Output, why: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("fairway: error: cannot write standard output: ") && err.contains(why),
        "{err}"
    );
}

/// A pipe whose reading end is closed before `fairway` starts: its first
/// write fails with EPIPE (Rust ignores SIGPIPE, so the write returns it).
fn closed_pipe() -> Stdio {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    Stdio::from(writer)
}

#[test]
fn a_closed_pipe_is_one_line_and_exit_1() {
    for args in [
        &["scheds"][..],
        &["policy", "check", POLICY],
        &["disk", "scheds"],
        &["scheds", "--json"],
    ] {
        let out = fairway_into(args, closed_pipe());
        assert_one_line_error(&out, "Broken pipe");
    }
}

#[test]
fn a_full_disk_is_one_line_and_exit_1() {
    let Ok(full) = File::options().write(true).open("/dev/full") else {
        eprintln!("skipped: no /dev/full on this system");
        return;
    };
    let out = fairway_into(&["scheds"], Stdio::from(full));
    assert_one_line_error(&out, "No space left on device");
}

#[test]
fn the_same_commands_succeed_when_the_output_is_writable() {
    // The check above can fail: the commands do print, so a closed output
    // is noticed rather than never written.
    let out = fairway_into(&["scheds"], Stdio::piped());
    assert!(out.status.success());
    assert!(!out.stdout.is_empty());
}
