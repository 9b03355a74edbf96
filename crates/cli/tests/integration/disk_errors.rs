//! Bad input to `fairway disk`: disk parameter files with a bad value
//! (named by file, line and column), files that cannot be read or are too
//! large, and sizes outside their stated limits. Each is refused before
//! anything runs: exit code 1, exactly one line on standard error, nothing
//! on standard output and no chart file written.

use fairway_disk::model::DTLA_307030_TOML;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A scratch directory of this test process, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let d =
            std::env::temp_dir().join(format!("fairway-disk-errors-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        Self(d)
    }

    /// Writes `text` to `name` in the directory; its path.
    fn file(&self, name: &str, text: &str) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `fairway ARGS`, checks it failed cleanly (exit 1, one line on
/// stderr, empty stdout) and returns the message after `fairway: error: `.
fn refused(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args(args)
        .output()
        .expect("run fairway");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?}: stdout not empty");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.ends_with('\n'), "{args:?}: {err}");
    err.trim_end()
        .strip_prefix("fairway: error: ")
        .unwrap_or_else(|| panic!("{args:?}: {err}"))
        .to_string()
}

/// The preset with the first line starting `key = ` given `value`.
fn preset_with(key: &str, value: &str) -> String {
    let prefix = format!("{key} = ");
    let mut done = false;
    let lines: Vec<String> = DTLA_307030_TOML
        .lines()
        .map(|l| {
            if !done && l.starts_with(&prefix) {
                done = true;
                format!("{prefix}{value}")
            } else {
                l.to_string()
            }
        })
        .collect();
    assert!(done, "{key}");
    lines.join("\n") + "\n"
}

/// 1-based line of the first line of `text` starting with `prefix`.
fn line_of(text: &str, prefix: &str) -> usize {
    text.lines().position(|l| l.starts_with(prefix)).unwrap() + 1
}

/// Runs `fairway disk CMD --disk FILE --chart CHART` and checks the
/// refusal, and that no chart was written.
fn refused_with_chart(s: &Scratch, cmd: &str, disk: &str) -> String {
    let chart = s.path(&format!("{cmd}.svg"));
    let chart_arg = chart.to_string_lossy().into_owned();
    let msg = refused(&[
        "disk", cmd, "--quick", "--disk", disk, "--chart", &chart_arg,
    ]);
    assert!(!chart.exists(), "{cmd}: a chart was written");
    msg
}

#[test]
fn nan_and_inf_in_a_disk_file_are_refused_at_their_line_and_column() {
    let s = Scratch::new("nan");
    for (cmd, key, value, shown, range) in [
        ("shares", "average_seek_ms", "nan", "NaN", "0.001..=1000 ms"),
        ("web", "bus_mb_per_s", "inf", "inf", "0.1..=1e5 MB/s"),
        ("throughput", "head_switch_ms", "-inf", "-inf", "0..=100 ms"),
        (
            "streaming",
            "command_overhead_ms",
            "-1.5",
            "-1.5",
            "0..=100 ms",
        ),
    ] {
        let text = preset_with(key, value);
        let file = s.file(&format!("{key}.toml"), &text);
        let line = line_of(&text, &format!("{key} = "));
        let column = key.len() + 4;
        assert_eq!(
            refused_with_chart(&s, cmd, &file),
            format!("{file}:{line}:{column}: {key} = {shown} is out of range (allowed: {range})")
        );
    }
}

#[test]
fn a_bad_value_on_a_late_line_is_named_by_that_line() {
    let s = Scratch::new("late");
    // The last zone's cylinders: the next-to-last line of the preset.
    let mut lines: Vec<&str> = DTLA_307030_TOML.trim_end().lines().collect();
    let n = lines.len();
    assert_eq!(lines[n - 2], "cylinders = 1696");
    lines[n - 2] = "cylinders = 0";
    let file = s.file("late.toml", &(lines.join("\n") + "\n"));
    assert_eq!(
        refused_with_chart(&s, "web", &file),
        format!(
            "{file}:{}:13: zones.cylinders = 0 is out of range (allowed: 1..=2^24)",
            n - 1
        )
    );
    // A value of the wrong type: the TOML parser's message, at its place.
    let text = preset_with("rpm", "7200.5");
    let file = s.file("rpm.toml", &text);
    let msg = refused_with_chart(&s, "shares", &file);
    let at = format!("{file}:{}:7: ", line_of(&text, "rpm = "));
    assert!(msg.starts_with(&at) && msg.contains("u32"), "{msg}");
}

#[test]
fn unreadable_huge_and_too_small_disk_files_are_refused() {
    let s = Scratch::new("read");
    let missing = s.path("missing.toml").to_string_lossy().into_owned();
    let msg = refused_with_chart(&s, "shares", &missing);
    assert!(
        msg.starts_with(&format!("{missing}: cannot read: ")),
        "{msg}"
    );
    // An endless file is read up to its limit, not into memory.
    let msg = refused_with_chart(&s, "web", "/dev/zero");
    assert!(
        msg.starts_with("/dev/zero: larger than 1048576 bytes"),
        "{msg}"
    );
    let binary = s.path("binary.toml");
    std::fs::write(&binary, b"name = \"x\"\n\xff\xfe").unwrap();
    let binary = binary.to_string_lossy().into_owned();
    assert_eq!(
        refused_with_chart(&s, "streaming", &binary),
        format!("{binary}:2: not UTF-8 text")
    );
    // One zone of 100 cylinders: a valid drive, too small for 30 slices.
    let head: Vec<&str> = DTLA_307030_TOML
        .lines()
        .take_while(|l| !l.starts_with("[[zones]]"))
        .collect();
    let tiny = s.file(
        "tiny.toml",
        &format!(
            "{}\n[[zones]]\ncylinders = 100\nsectors_per_track = 100\n",
            head.join("\n")
        ),
    );
    let msg = refused_with_chart(&s, "throughput", &tiny);
    assert!(
        msg.starts_with(&format!("{tiny}: the disk holds 40000 sectors")),
        "{msg}"
    );
}

#[test]
fn bench_apps_above_the_limit_are_refused_with_the_limit_its_help_states() {
    let max = fairway_disk::cost::MAX_APPS;
    let help = Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args(["disk", "bench", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains(&max.to_string()), "{help}");
    for apps in [
        format!("{}", max + 1),
        format!("10,{}", u32::MAX),
        "0".into(),
    ] {
        let msg = refused(&["disk", "bench", "--apps", &apps]);
        assert!(
            msg.starts_with("--apps ") && msg.contains(&format!("must be in 1..={max}")),
            "{msg}"
        );
    }
    let many = vec!["1"; 65].join(",");
    assert_eq!(
        refused(&["disk", "bench", "--apps", &many]),
        "--apps: 65 counts is too large (at most 64 counts)"
    );
}

#[test]
fn zero_and_huge_sizes_are_refused_naming_the_flag_and_its_range() {
    let s = Scratch::new("sizes");
    for (args, want) in [
        (&["bench", "--pairs", "0"][..], "--pairs 0 must be in 1..="),
        (
            &["bench", "--rounds", "1001"],
            "--rounds 1001 must be in 1..=1000",
        ),
        (
            &["bench", "--pairs", "1073741824", "--rounds", "2"],
            "--pairs: 1073741824 x 2 rounds x 2 counts is too large",
        ),
        (&["bench", "--apps", ""], "--apps: '' is not a valid number"),
        (
            &["throughput", "--file-mb", "0"],
            "--file-mb 0 must be in 1..=1000",
        ),
        (
            &["throughput", "--file-mb", "1001"],
            "--file-mb 1001 must be in 1..=1000",
        ),
        (
            &["throughput", "--files", "31"],
            "--files: each count must be in 1..=30",
        ),
        (
            &["throughput", "--files", "0"],
            "--files: each count must be in 1..=30",
        ),
        (
            &["throughput", "--files", &vec!["2"; 17].join(",")],
            "--files: 17 numbers is too large (at most 16 numbers)",
        ),
        (&["web", "--procs", "0"], "--procs must be in 1..=100000"),
        (
            &["web", "--seconds", "86401"],
            "--seconds must be in 1..=86400",
        ),
        (
            &["web", "--procs", "100000", "--seconds", "101"],
            "--procs: 100000 x --seconds 101 is too large (at most 10000000 process-seconds",
        ),
        (
            &["validate", "--requests", "0"],
            "--requests must be in 1..=100000",
        ),
        (
            &["validate", "--max-gap-ms", "10001"],
            "--max-gap-ms must be in 0..=10000",
        ),
        (
            &["validate", "--requests", "100000", "--max-gap-ms", "80"],
            "--requests: 100000 requests with --max-gap-ms 80 (3996 s of replay on this disk) is too large (at most 3600 s",
        ),
        (
            &["kernel", "--seconds", "0"],
            "--seconds must be in 1..=600",
        ),
        (
            &["streaming", "--readahead-kb", "16512"],
            "--readahead-kb: readahead = 16512",
        ),
    ] {
        let mut all = vec!["disk"];
        all.extend_from_slice(args);
        let chart = s.path(&format!("{}.svg", args[0]));
        let chart_arg = chart.to_string_lossy().into_owned();
        let takes_chart = !["bench", "kernel", "validate"].contains(&args[0]);
        if takes_chart {
            all.extend(["--chart", &chart_arg]);
        }
        let msg = refused(&all);
        assert!(msg.starts_with(want), "{all:?}: {msg}");
        assert!(!Path::new(&chart).exists(), "{all:?}: a chart was written");
    }
}

/// A trace is refused by the time it takes on the disk given, service
/// included, not only by its arrivals: on a drive of one sector per track
/// at 1000 rpm a request of 4 to 256 sectors takes that many 60 ms
/// revolutions, so 1000 requests arriving at once (8000 s) are refused.
#[test]
fn a_trace_too_long_to_replay_on_a_slow_drive_is_refused() {
    let s = Scratch::new("slow");
    let slow = s.file(
        "slow.toml",
        "name = \"slow\"\nrpm = 1000\nheads = 1\ntrack_to_track_ms = 1\n\
         average_seek_ms = 500\nfull_stroke_ms = 1000\nhead_switch_ms = 0\n\
         command_overhead_ms = 0\nbus_mb_per_s = 100\nreadahead_sectors = 0\n\
         [[zones]]\ncylinders = 2000000\nsectors_per_track = 1\n",
    );
    let msg = refused(&[
        "disk",
        "validate",
        "--disk",
        &slow,
        "--requests",
        "1000",
        "--max-gap-ms",
        "0",
    ]);
    assert!(
        msg.starts_with("--requests: 1000 requests with --max-gap-ms 0 (")
            && msg.contains("s of replay on this disk) is too large (at most 3600 s"),
        "{msg}"
    );
}

/// A drive whose slices (1/30 of it) hold less than an experiment's files:
/// `shares` reads files of up to 128 MB (`--quick`), `throughput` of
/// `--file-mb`. Refused before the first run, so even `--json` prints
/// nothing; formerly each file was cut to its slice.
#[test]
fn files_larger_than_a_slice_of_the_drive_are_refused_before_any_run() {
    let s = Scratch::new("slices");
    // 2930 cylinders x 4 heads x 500 sectors: 100 MB per slice.
    let head: Vec<&str> = DTLA_307030_TOML
        .lines()
        .take_while(|l| !l.starts_with("[[zones]]"))
        .collect();
    let small = s.file(
        "small.toml",
        &format!(
            "{}\n[[zones]]\ncylinders = 2930\nsectors_per_track = 500\n",
            head.join("\n")
        ),
    );
    let chart = s.path("shares.svg");
    let chart_arg = chart.to_string_lossy().into_owned();
    let msg = refused(&[
        "disk", "shares", "--quick", "--json", "--disk", &small, "--chart", &chart_arg,
    ]);
    assert_eq!(
        msg,
        format!("{small}: shares: a file of 128 MB does not fit a slice of this disk (100 MB, 1/30 of its capacity)")
    );
    assert!(!chart.exists());
    let msg = refused(&["disk", "throughput", "--disk", &small, "--file-mb", "101"]);
    assert!(
        msg.starts_with("--file-mb 101 must be in 1..=100 ("),
        "{msg}"
    );
}
