//! `fairway reproduce all --quick`: every paper's claims run, pass, and are
//! listed on stdout, in report.md and in report.json.

use std::process::Command;

/// Every claim the reduced run checks (ids as report.json names them).
const CLAIMS: [&str; 18] = [
    "000/guarantees/qfq-within-bounds",
    "000/guarantees/qfq+-within-bounds",
    "000/guarantees/wf2q+-within-bounds",
    "000/guarantees/drr-much-worse-than-qfq",
    "000/cost/qfq-plus-not-costlier",
    "003/table4/s-kps-costlier-64",
    "003/table4/s-kps-costlier-4096",
    "003/table4/qfq-flat",
    "003/table4/wf2q-plus-grows",
    "003/fig8/0",
    "003/fig8/1",
    "003/fig8/2",
    "003/fig8/3",
    "003/fig8/4",
    "003/fig8/5",
    "003/fig8/6",
    "002/pq/cffs-beats-binary-heap",
    "002/pq/cffs-beats-bucket-heap",
];

#[test]
fn quick_run_lists_every_claim_and_they_hold() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("reproduce-quick");
    let _ = std::fs::remove_dir_all(&dir);
    let out = Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args(["reproduce", "all", "--quick", "--out"])
        .arg(&dir)
        .output()
        .expect("run fairway");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "reproduce failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = std::fs::read_to_string(dir.join("report.md")).expect("report.md");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).expect("json"))
            .expect("report.json is JSON");
    let ids: Vec<&str> = json["sections"]
        .as_array()
        .expect("sections")
        .iter()
        .flat_map(|s| s["claims"].as_array().expect("claims").iter())
        .map(|c| c["id"].as_str().expect("id"))
        .collect();
    assert_eq!(ids, CLAIMS, "claims in report.json");
    for id in CLAIMS {
        assert!(
            stdout.contains(&format!("pass {id}: ")),
            "{id} not listed as passed:\n{stdout}"
        );
    }
    assert_eq!(json["failed"], 0);
    assert!(json["machine"].as_str().unwrap().ends_with(" cores"));
    assert!(md.contains("Machine: ") && md.contains("| claim | holds |"));
    assert!(!md.contains("**NO**"));
}

#[test]
fn unknown_paper_is_one_line_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args(["reproduce", "pspat", "--quick"])
        .output()
        .expect("run fairway");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("unknown paper 'pspat'"), "{err}");
}
