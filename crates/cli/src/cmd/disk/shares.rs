//! `fairway disk shares`: the BFQ thesis' bandwidth distribution (§2.4),
//! run by `fairway_lab::disk`.

use super::common::{bar, chart, fmt2, json_line, load_disk, Common, ReadAheadArg};
use super::error::DiskCmdError;
use crate::cmd::common::Table;
use clap::Args;
use fairway_eval::cost::chart::{ChartSpec, Series};
use fairway_lab::disk::{
    max_file_mb, seq_readers, share_jobs, worst_share_error, DiskRunError, DiskSchedKind,
};

/// Arguments of `fairway disk shares`.
#[derive(Args)]
pub struct SharesArgs {
    #[command(flatten)]
    readahead: ReadAheadArg,
    #[command(flatten)]
    common: Common,
}

/// Runs `fairway disk shares`.
pub fn run(a: SharesArgs) -> Result<(), DiskCmdError> {
    let c = &a.common;
    let disk = load_disk(c)?;
    let ra = a.readahead.get()?;
    let jobs = share_jobs(c.quick);
    // Every file is checked against the drive before the first run, so a
    // drive too small fails at once, with nothing printed.
    let slice_mb = max_file_mb(&disk);
    if let Some(job) = jobs.iter().find(|j| j.file_mb > slice_mb) {
        return Err(DiskCmdError::DiskTooSmallFor {
            path: c
                .disk
                .clone()
                .unwrap_or_else(|| "the built-in drive".into()),
            experiment: "shares",
            error: DiskRunError::FileTooLarge {
                file_mb: job.file_mb,
                slice_mb,
            },
        });
    }
    let pb = bar(jobs.len() as u64, c.json);
    let mut table = Table::new(&[
        "scheduler",
        "weights",
        "MB/s per reader",
        "thesis",
        "worst share error",
    ]);
    let mut series = Vec::new();
    for (k, job) in jobs.iter().enumerate() {
        let w = &job.weights;
        pb.set_message(format!("{} {w:?}", job.spec.label()));
        let r = seq_readers(job.spec, w, job.file_mb, ra, &disk)?;
        let err = worst_share_error(&r);
        let list = |v: &[f64]| v.iter().map(|x| fmt2(*x)).collect::<Vec<_>>().join(" ");
        if c.json {
            json_line(&serde_json::json!({
                "experiment": "shares", "sched": r.sched, "weights": w, "file_mb": job.file_mb,
                "readahead_kb": a.readahead.readahead_kb,
                "per_app_mb_s": r.per_app_mb_s, "aggregate_mb_s": r.aggregate_mb_s,
                "worst_share_error": err, "thesis_per_app_mb_s": job.thesis,
            }))?;
        }
        table.row(vec![
            r.sched.clone(),
            format!("{w:?}"),
            list(&r.per_app_mb_s),
            job.thesis.as_deref().map_or(String::new(), list),
            format!("{:+.1} %", err * 100.0),
        ]);
        if job.spec.kind() == DiskSchedKind::Bfq && w.len() == 5 {
            series.push(Series {
                name: format!("{} {w:?}", r.sched),
                points: r
                    .per_app_mb_s
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (i as f64 + 1.0, *v))
                    .collect(),
                dashed: false,
                color: k % 8,
            });
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    if !c.json {
        crate::outln!(
            "Per-reader throughput, read-ahead {} KiB (BFQ thesis §2.4); share error = (share / weight share) - 1, worst reader:",
            a.readahead.readahead_kb
        );
        table.print()?;
    }
    chart(
        &c.chart,
        ChartSpec {
            title: "BFQ per-reader throughput, 5 readers".into(),
            x_label: "reader".into(),
            y_label: "MB/s".into(),
            log_x: false,
            log_y: false,
        },
        &series,
    )
}
