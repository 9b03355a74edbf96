//! `fairway reproduce all --quick`: every paper's claims run, pass, and are
//! listed on stdout, in report.md and in report.json.

use std::process::Command;

/// Every claim the reduced run checks (ids as report.json names them).
const CLAIMS: [&str; 44] = [
    "000/guarantees/qfq-within-bounds",
    "000/guarantees/qfq+-within-bounds",
    "000/guarantees/wf2q+-within-bounds",
    "000/guarantees/drr-much-worse-than-qfq",
    "000/cost/qfq-plus-not-costlier",
    "000/cost/qfq-plus-below-drr-on-32k-wmix",
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
    "002/approx/exact-when-full",
    "002/approx/error-falls-with-occupancy",
    "002/pq/approx-faster-when-full",
    "004/throughput/bfq-grows-with-b-max",
    "004/throughput/as-highest",
    "004/throughput/bfq-above-cfq",
    "004/throughput/bfq-above-c-look",
    "004/shares/bfq-1-1",
    "004/shares/bfq-1-1-1-1-1",
    "004/shares/bfq-2-1",
    "004/shares/bfq-2-2-2-1-1",
    "004/shares/bfq-10-1",
    "004/shares/bfq-10-2-2-1-1",
    "004/shares/cfq-less-even-than-bfq",
    "004/web/bfq-small-files-2x-cfq",
    "004/web/bfq-aggregate-near-cfq",
    "004/web/bfq-small-files-beat-scan-edf-c-look-as",
    "004/streaming/bfq-more-than-cfq",
    "004/streaming/bfq-more-than-c-look",
    "004/streaming/bfq-more-than-as",
    "004/streaming/larger-budget-no-more-streams",
    "001/fig6-7/fairway-near-none",
    "001/fig6-7/fairway-above-tc",
    "001/fig9/threshold-not-below-tc",
    "001/fig9/p98-below-tc-above-threshold",
];

/// Claims about measured speed (cost ratios, queue throughput, real-packet
/// throughput and latency). CI runs the test suite on 2 shared cores, other
/// tests alongside, so a timing ordering can flip there; those claims must
/// be listed and measured, and every other (deterministic) claim must hold.
/// `fairway reproduce all` on a quiet machine is where the timing claims
/// are judged. The report marks them (`"timing": true`); this list checks
/// that it marks the right ones.
fn is_timing_claim(id: &str) -> bool {
    id.starts_with("000/cost/")
        || id.starts_with("003/table4/")
        || id.starts_with("002/pq/")
        || id.starts_with("001/")
}

#[test]
#[ignore = "slow tier: `fairway reproduce all --quick` end to end"]
fn quick_run_lists_every_claim_and_they_hold() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("reproduce-quick");
    let _ = std::fs::remove_dir_all(&dir);
    let out = Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args(["reproduce", "all", "--quick", "--out"])
        .arg(&dir)
        .output()
        .expect("run fairway");
    let stdout = String::from_utf8_lossy(&out.stdout);
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
    let mut failed = 0;
    let mut skipped = 0;
    for claim in json["sections"]
        .as_array()
        .expect("sections")
        .iter()
        .flat_map(|s| s["claims"].as_array().expect("claims").iter())
    {
        let id = claim["id"].as_str().expect("id");
        assert_eq!(claim["timing"] == true, is_timing_claim(id), "{id}");
        if let Some(why) = claim["skipped"].as_str() {
            // Only the real-packet runs may be skipped (no root or netns),
            // besides the documented deviations of the disk model and of
            // the approximate queue's error against occupancy.
            assert!(
                id.starts_with("001/")
                    || id == "004/throughput/bfq-above-c-look"
                    || id == "002/approx/error-falls-with-occupancy",
                "{id} skipped: {why}"
            );
            assert!(stdout.contains(&format!("skip {id}: ")), "{id}:\n{stdout}");
            skipped += 1;
            continue;
        }
        if claim["holds"] == true {
            assert!(stdout.contains(&format!("pass {id}: ")), "{id}:\n{stdout}");
        } else {
            assert!(
                is_timing_claim(id),
                "deterministic claim {id} does not hold:\n{stdout}"
            );
            eprintln!("note: timing claim {id} did not hold on this (shared) machine");
            failed += 1;
        }
    }
    assert_eq!(json["failed"], failed);
    assert_eq!(json["skipped"], skipped);
    // Every experiment with a figure in its paper has its chart, linked.
    let mut charts = vec![
        "003-fig10-cost-vs-flows.svg",
        "004-fig5-throughput-vs-b-max.svg",
    ];
    if skipped == 0 {
        charts.extend(["001-fig6-7-throughput.svg", "001-fig9-p98-vs-rate.svg"]);
    }
    for c in charts {
        let svg = std::fs::read_to_string(dir.join(c)).unwrap_or_else(|e| panic!("{c}: {e}"));
        assert!(svg.starts_with("<svg"), "{c}");
        assert!(
            md.contains(&format!("]({c})")),
            "{c} not linked from report.md"
        );
    }
    // The exit status says whether every claim held.
    assert_eq!(out.status.success(), failed == 0, "{stdout}");
    assert!(json["machine"].as_str().unwrap().ends_with(" cores"));
    assert!(md.contains("Machine: ") && md.contains("| claim | holds |"));
    assert_eq!(md.contains("**NO**"), failed > 0);
}

#[test]
fn unknown_paper_is_one_line_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args(["reproduce", "gps", "--quick"])
        .output()
        .expect("run fairway");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("unknown paper 'gps'"), "{err}");
}

#[test]
fn skipped_claims_are_listed_visibly_and_do_not_fail() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("reproduce-no-net");
    let _ = std::fs::remove_dir_all(&dir);
    let out = Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args(["reproduce", "pspat", "--quick", "--no-net", "--out"])
        .arg(&dir)
        .output()
        .expect("run fairway");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    for id in CLAIMS.iter().filter(|id| id.starts_with("001/")) {
        assert!(
            stdout.contains(&format!("skip {id}: ")) && stdout.contains("(--no-net given)"),
            "{id}:\n{stdout}"
        );
    }
    assert!(stdout.contains("0 passed, 0 failed, 4 skipped"), "{stdout}");
    let md = std::fs::read_to_string(dir.join("report.md")).expect("report.md");
    assert!(md.contains("| skipped: --no-net given |"), "{md}");
}
