//! `fairway disk web`: the BFQ thesis' web-server workload (§2.4), run by
//! `fairway_lab::disk`.

use super::common::{bar, chart, fmt2, json_line, load_disk, Common};
use super::error::{DiskCmdError, FlagError};
use crate::cmd::common::Table;
use clap::Args;
use fairway_eval::cost::chart::{ChartSpec, Series};
use fairway_lab::disk::thesis::{find, WEB_SERVER};
use fairway_lab::disk::web_server::bfq_vs_cfq;
use fairway_lab::disk::{web_server, DiskSchedSpec, WebResult, SEC, SHARE_SPECS};

/// Arguments of `fairway disk web`.
#[derive(Args)]
pub struct WebArgs {
    /// Processes, 1..=100000; --procs x --seconds at most 10^7 (the
    /// simulation's work grows with both).
    #[arg(long, default_value_t = 100)]
    procs: u32,
    /// Simulated seconds, 1..=86400 (default 3600, 300 with --quick).
    #[arg(long)]
    seconds: Option<u64>,
    /// Workload seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    common: Common,
}

/// Most `--procs` × `--seconds`: 100 processes for a day, or 100000 for
/// 100 s.
const MAX_PROC_SECONDS: u64 = 10_000_000;

/// Runs `fairway disk web`.
pub fn run(a: WebArgs) -> Result<(), DiskCmdError> {
    let c = &a.common;
    let disk = load_disk(c)?;
    let secs = a.seconds.unwrap_or(if c.quick { 300 } else { 3600 });
    if !(1..=86_400).contains(&secs) {
        return Err(FlagError::OutOfRange {
            flag: "--seconds",
            range: "1..=86400".into(),
            why: None,
        }
        .into());
    }
    if !(1..=100_000).contains(&a.procs) {
        return Err(FlagError::OutOfRange {
            flag: "--procs",
            range: "1..=100000".into(),
            why: None,
        }
        .into());
    }
    if u64::from(a.procs) * secs > MAX_PROC_SECONDS {
        return Err(FlagError::TooLarge {
            flag: "--procs",
            value: format!("{} x --seconds {secs}", a.procs),
            max: format!(
                "{MAX_PROC_SECONDS} process-seconds: the simulation's work grows with both"
            ),
        }
        .into());
    }
    let pb = bar(SHARE_SPECS.len() as u64, c.json);
    let mut table = Table::new(&[
        "scheduler",
        "small file s",
        "thesis",
        "large MB/s",
        "thesis",
        "aggr MB/s",
        "thesis",
        "wall s",
    ]);
    let mut rows = Vec::new();
    for spec in SHARE_SPECS {
        pb.set_message(spec.label());
        let t0 = std::time::Instant::now();
        let r = web_server(spec, a.procs, secs * SEC, &disk, a.seed)?;
        let wall = t0.elapsed().as_secs_f64();
        let th = find(WEB_SERVER, &r.spec, |x| x.0);
        let t = |f: fn(&(DiskSchedSpec, f64, f64, f64)) -> f64| {
            th.map_or(String::new(), |x| fmt2(f(x)))
        };
        if c.json {
            json_line(&serde_json::json!({
                "experiment": "web", "result": r, "wall_seconds": wall,
                "thesis": th.map(|x| serde_json::json!({"small_file_s": x.1, "large_file_mb_s": x.2, "aggregate_mb_s": x.3})),
            }))?;
        }
        table.row(vec![
            r.sched.clone(),
            none_read(r.small_files).unwrap_or_else(|| format!("{:.3}", r.small_file_s)),
            t(|x| x.1),
            none_read(r.large_files).unwrap_or_else(|| fmt2(r.large_file_mb_s)),
            t(|x| x.2),
            fmt2(r.aggregate_mb_s),
            t(|x| x.3),
            format!("{wall:.2}"),
        ]);
        rows.push(r);
        pb.inc(1);
    }
    pb.finish_and_clear();
    if !c.json {
        crate::outln!(
            "Web-server workload: {} processes, {secs} simulated s (BFQ thesis §2.4):",
            a.procs
        );
        table.print()?;
        if let Some((speedup, gap)) = bfq_vs_cfq(&rows) {
            crate::outln!(
                "BFQ vs CFQ: small-file latency {speedup:.2}x lower, aggregate throughput {:+.1} %",
                gap * 100.0
            );
        }
    }
    chart(&c.chart, chart_spec(), &series(&rows))
}

/// `-` for a mean over no file (a run too short to read one), instead of
/// a 0 that would read as a measurement.
fn none_read(files: usize) -> Option<String> {
    (files == 0).then(|| "-".to_string())
}

fn chart_spec() -> ChartSpec {
    ChartSpec {
        title: "Web server: 1 BFQ, 2 SCAN-EDF, 3 YFQ, 4 CFQ, 5 C-LOOK, 6 AS".into(),
        x_label: "scheduler".into(),
        y_label: "s / MB/s".into(),
        log_x: false,
        log_y: true,
    }
}

fn series(rows: &[WebResult]) -> Vec<Series> {
    let pts = |f: fn(&WebResult) -> f64| {
        rows.iter()
            .enumerate()
            .map(|(i, r)| (i as f64 + 1.0, f(r)))
            .collect()
    };
    vec![
        Series {
            name: "small-file completion time [s]".into(),
            points: pts(|r| r.small_file_s),
            dashed: false,
            color: 0,
        },
        Series {
            name: "aggregate throughput [MB/s]".into(),
            points: pts(|r| r.aggregate_mb_s),
            dashed: false,
            color: 1,
        },
    ]
}
