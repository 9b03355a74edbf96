//! `fairway disk throughput`: the BFQ thesis' aggregate-throughput sweep
//! (§2.4, Fig. 5), run by `fairway_lab::disk`.

use super::common::{bar, chart, fmt2, json_line, load_disk, parse_list, Common, ReadAheadArg};
use super::error::{DiskCmdError, FlagError};
use crate::cmd::common::Table;
use clap::Args;
use fairway_eval::cost::chart::{ChartSpec, Series};
use fairway_lab::disk::throughput::{bfq_curve, run_of, CHART_BASELINES};
use fairway_lab::disk::{
    max_file_mb, seq_readers, thesis_throughput, throughput_specs, ThroughputRun,
};

/// Most reader counts in one run.
const MAX_COUNTS: usize = 16;
/// Largest file, MB: the thesis' files are at most 1 GB, and a run's
/// simulated time grows with the bytes read.
const MAX_FILE_MB: u64 = 1000;

/// Arguments of `fairway disk throughput`.
#[derive(Args)]
pub struct ThroughputArgs {
    /// Numbers of concurrent readers, comma separated (e.g. 2,5), each
    /// 1..=30 (one slice of the disk per reader), at most 16 numbers.
    #[arg(long, default_value = "2,5")]
    files: String,
    /// File size, MB, 1..=1000 and at most a slice of the disk (1/30 of
    /// it, 1024 MB on the built-in drive) (default 128, 32 with --quick).
    #[arg(long)]
    file_mb: Option<u64>,
    #[command(flatten)]
    readahead: ReadAheadArg,
    #[command(flatten)]
    common: Common,
}

/// Runs `fairway disk throughput`.
pub fn run(a: ThroughputArgs) -> Result<(), DiskCmdError> {
    let c = &a.common;
    let disk = load_disk(c)?;
    let files: Vec<usize> = parse_list("--files", &a.files)?;
    if files.iter().any(|&n| !(1..=30).contains(&n)) {
        return Err(FlagError::CountOutOfRange {
            flag: "--files",
            range: "1..=30 (one slice of the disk per reader)",
        }
        .into());
    }
    if files.len() > MAX_COUNTS {
        return Err(FlagError::TooLarge {
            flag: "--files",
            value: format!("{} numbers", files.len()),
            max: format!("{MAX_COUNTS} numbers"),
        }
        .into());
    }
    let file_mb = a.file_mb.unwrap_or(if c.quick { 32 } else { 128 });
    let max_mb = MAX_FILE_MB.min(max_file_mb(&disk));
    if !(1..=max_mb).contains(&file_mb) {
        return Err(FlagError::ValueOutOfRange {
            flag: "--file-mb",
            value: file_mb.to_string(),
            range: format!(
                "1..={max_mb} (files of at most {MAX_FILE_MB} MB are run; a slice of this disk, 1/30 of it, holds {} MB)",
                max_file_mb(&disk)
            ),
        }
        .into());
    }
    let ra = a.readahead.get()?;
    let specs = throughput_specs(c.quick);
    let pb = bar((specs.len() * files.len()) as u64, c.json);
    let mut header = vec!["scheduler".to_string()];
    header.extend(files.iter().map(|n| format!("{n} files MB/s")));
    header.push("thesis 2 files (best)".into());
    let hdr: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut table = Table::new(&hdr);
    let mut runs = Vec::new();
    for spec in &specs {
        let mut row = vec![spec.label()];
        for &n in &files {
            pb.set_message(format!("{} x{n}", spec.label()));
            let r = seq_readers(*spec, &vec![1; n], file_mb, ra, &disk)?;
            row.push(fmt2(r.aggregate_mb_s));
            if c.json {
                json_line(&serde_json::json!({
                    "experiment": "throughput", "sched": r.sched, "files": n,
                    "file_mb": file_mb, "readahead_kb": a.readahead.readahead_kb,
                    "aggregate_mb_s": r.aggregate_mb_s,
                    "per_app_mb_s": r.per_app_mb_s, "sim_seconds": r.sim_seconds,
                    "thesis_2_files_mb_s": if n == 2 { thesis_throughput(spec) } else { None },
                }))?;
            }
            runs.push(ThroughputRun {
                spec: *spec,
                files: n,
                aggregate_mb_s: r.aggregate_mb_s,
            });
            pb.inc(1);
        }
        row.push(thesis_throughput(spec).map_or(String::new(), fmt2));
        table.row(row);
    }
    pb.finish_and_clear();
    if !c.json {
        crate::outln!(
            "Aggregate throughput, {file_mb} MB files in slices at maximum distance, read-ahead {} KiB (BFQ thesis §2.4, Fig. 5):",
            a.readahead.readahead_kb
        );
        table.print()?;
    }
    chart(
        &c.chart,
        chart_spec(&files, file_mb),
        &series(&runs, &files),
    )
}

fn chart_spec(files: &[usize], file_mb: u64) -> ChartSpec {
    let counts: Vec<String> = files.iter().map(|n| n.to_string()).collect();
    ChartSpec {
        title: format!(
            "Aggregate throughput, {} readers of {file_mb} MB",
            counts.join(", ")
        ),
        x_label: "B_max [sectors]".into(),
        y_label: "MB/s".into(),
        log_x: true,
        log_y: false,
    }
}

/// Every measured line: BFQ over B_max for each reader count (solid),
/// each baseline as a flat dashed line per reader count.
fn series(runs: &[ThroughputRun], files: &[usize]) -> Vec<Series> {
    let first = bfq_curve(runs, files[0]);
    let (x0, x1) = (
        first.first().map_or(512.0, |p| p.0),
        first.last().map_or(16384.0, |p| p.0),
    );
    let mut series = Vec::new();
    for (fi, &n) in files.iter().enumerate() {
        // Colours: BFQ of the i-th count in 0, 4, 8..; its baselines next.
        let base = 4 * fi;
        series.push(Series {
            name: format!("BFQ ({n} files)"),
            points: bfq_curve(runs, n),
            dashed: false,
            color: base,
        });
        for (k, want) in CHART_BASELINES.iter().enumerate() {
            if let Some(v) = run_of(runs, want, n) {
                series.push(Series {
                    name: format!("{} ({n} files)", want.label()),
                    points: vec![(x0, v), (x1, v)],
                    dashed: true,
                    color: base + k + 1,
                });
            }
        }
    }
    series
}
