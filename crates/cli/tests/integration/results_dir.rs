//! Files a command writes without `--out` go under `./fairway-results/`
//! (or `$FAIRWAY_RESULTS`), never under a `./target/` that would pass for
//! a Cargo build directory, and the command prints where.

use std::path::Path;
use std::process::Command;

fn fresh(name: &str) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the working directory");
    dir
}

#[test]
fn reproduce_writes_under_fairway_results_and_says_so() {
    let cwd = fresh("results-dir-cwd");
    let out = Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args(["reproduce", "pspat", "--quick", "--no-net"])
        .current_dir(&cwd)
        .env_remove("FAIRWAY_RESULTS")
        .output()
        .expect("run fairway");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(cwd.join("fairway-results/reproduce/report.md").is_file());
    assert!(!cwd.join("target").exists(), "no ./target/ written");
    assert!(
        stdout.contains("report in fairway-results/reproduce/report.md"),
        "{stdout}"
    );
}

#[test]
fn fairway_results_moves_the_default_directory() {
    let cwd = fresh("results-dir-env-cwd");
    let results = fresh("results-dir-env");
    let out = Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args(["reproduce", "pspat", "--quick", "--no-net"])
        .current_dir(&cwd)
        .env("FAIRWAY_RESULTS", &results)
        .output()
        .expect("run fairway");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let report = results.join("reproduce/report.md");
    assert!(report.is_file(), "{stdout}");
    assert!(stdout.contains(&report.display().to_string()), "{stdout}");
    assert!(std::fs::read_dir(&cwd).expect("cwd").next().is_none());
}
