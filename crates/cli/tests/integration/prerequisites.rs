//! A measurement that cannot run here (a tool missing from `PATH`, not
//! root) is not a silent success: one line on stderr naming what is
//! missing, and exit status 3, distinct from a failure (1) and a usage
//! error (2).

use std::path::Path;
use std::process::{Command, Output};

/// An empty directory to serve as the whole `PATH`.
fn empty_dir(name: &str) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the empty PATH directory");
    dir
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

/// `fairway ARGS` with `PATH` set to `path`; as root, also as user `nobody`
/// when `setpriv` can do it (it needs the binary readable by nobody).
fn run(args: &[&str], path: &Path, as_nobody: bool) -> Output {
    let mut cmd = if as_nobody {
        let mut c = Command::new("/usr/bin/setpriv");
        c.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_fairway"));
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_fairway"))
    };
    cmd.args(args)
        .env("PATH", path)
        .output()
        .expect("run fairway")
}

fn check_cannot_run(out: &Output, needles: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "stderr: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.starts_with("fairway: error: "), "{stderr}");
    for n in needles {
        assert!(stderr.contains(n), "{n:?} not named: {stderr}");
    }
    assert!(out.stdout.is_empty(), "no result on stdout");
}

#[test]
fn disk_kernel_without_fio_exits_3_naming_it() {
    let path = empty_dir("prereq-empty-path-kernel");
    let out = run(&["disk", "kernel", "--seconds", "1"], &path, false);
    let mut needles = vec!["fio (package fio)", "losetup"];
    if !is_root() {
        needles.push("root");
    }
    check_cannot_run(&out, &needles);
}

#[test]
fn disk_kernel_as_non_root_exits_3_naming_root() {
    if !is_root() {
        // Already non-root: the test above names root.
        return;
    }
    if !Path::new("/usr/bin/setpriv").exists() {
        eprintln!("note: no setpriv; the non-root case is checked only when run as non-root");
        return;
    }
    let path = empty_dir("prereq-empty-path-nobody");
    let out = run(&["disk", "kernel", "--seconds", "1"], &path, true);
    if matches!(out.status.code(), Some(126 | 127)) || out.status.code().is_none() {
        eprintln!(
            "note: setpriv could not run fairway as nobody: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    check_cannot_run(&out, &["root", "fio"]);
}

#[test]
fn udp_bench_without_iproute2_exits_3_naming_it() {
    let path = empty_dir("prereq-empty-path-udp");
    let out = run(&["udp-bench", "--quick"], &path, false);
    let mut needles = vec!["`ip`", "`tc`", "iproute2"];
    if !is_root() {
        needles.push("root");
    }
    check_cannot_run(&out, &needles);
}

#[test]
fn help_documents_exit_status_3() {
    let out = Command::new(env!("CARGO_BIN_EXE_fairway"))
        .arg("--help")
        .output()
        .expect("run fairway");
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("3  a measurement asked for could not run here"),
        "{help}"
    );
}

#[test]
fn udp_bench_ingress_drop_without_ebpf_exits_3_naming_the_feature() {
    let path = empty_dir("prereq-empty-path-ebpf");
    let out = run(&["udp-bench", "--quick"], &path, false);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if cfg!(feature = "ebpf") {
        // Built with the programs: only iproute2 (and root) are missing.
        assert!(!stderr.contains("eBPF"), "{stderr}");
        return;
    }
    check_cannot_run(
        &out,
        &[
            "--receive ingress-drop",
            "built without eBPF programs",
            "--features ebpf",
            "clang",
        ],
    );
    // The receive path that needs no program does not ask for them.
    let out = run(
        &["udp-bench", "--quick", "--receive", "sockets"],
        &path,
        false,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(!stderr.contains("eBPF"), "{stderr}");
}
