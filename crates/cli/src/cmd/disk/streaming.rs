//! `fairway disk streaming`: the BFQ thesis' streaming workload (§2.4),
//! run by `fairway_lab::disk`.

use super::common::{bar, chart, fmt2, json_line, load_disk, Common, ReadAheadArg};
use super::error::DiskCmdError;
use crate::cmd::common::Table;
use clap::Args;
use fairway_eval::cost::chart::{ChartSpec, Series};
use fairway_lab::disk::thesis::{find, STREAMING};
use fairway_lab::disk::{streaming, StreamSetup, SEC, STREAM_SPECS};

/// Arguments of `fairway disk streaming`.
#[derive(Args)]
pub struct StreamingArgs {
    /// Workload seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// (Applies to the ON/OFF readers.)
    #[command(flatten)]
    readahead: ReadAheadArg,
    #[command(flatten)]
    common: Common,
}

/// Runs `fairway disk streaming`.
pub fn run(a: StreamingArgs) -> Result<(), DiskCmdError> {
    let c = &a.common;
    let disk = load_disk(c)?;
    let setup = StreamSetup::new(c.quick, a.readahead.get()?);
    let pb = bar(STREAM_SPECS.len() as u64, c.json);
    let mut table = Table::new(&["scheduler", "streams", "thesis", "aggr MB/s", "thesis"]);
    let mut pts = Vec::new();
    for (i, spec) in STREAM_SPECS.iter().enumerate() {
        pb.set_message(spec.label());
        let r = streaming(*spec, setup, &disk, a.seed)?;
        let th = find(STREAMING, &r.spec, |r| r.0);
        if c.json {
            json_line(&serde_json::json!({
                "experiment": "streaming", "result": r,
                "thesis": th.map(|x| serde_json::json!({"streams": x.1, "aggregate_mb_s": x.2})),
            }))?;
        }
        table.row(vec![
            r.sched.clone(),
            r.streams.to_string(),
            th.map_or(String::new(), |x| format!("{:.2}", x.1)),
            fmt2(r.aggregate_mb_s),
            th.map_or(String::new(), |x| fmt2(x.2)),
        ]);
        pts.push((i as f64 + 1.0, r.streams as f64));
        pb.inc(1);
    }
    pb.finish_and_clear();
    if !c.json {
        crate::outln!(
            "Streaming: a new stream every {} s (32 KiB every 128 ms, 1 s buffer) + {} ON/OFF readers (read-ahead {} KiB); streams sustained below {} % loss (BFQ thesis §2.4):",
            setup.every / SEC,
            setup.on_off,
            a.readahead.readahead_kb,
            setup.max_loss * 100.0
        );
        table.print()?;
    }
    chart(
        &c.chart,
        ChartSpec {
            title: "Streams sustained: 1-3 BFQ 4k/8k/16k, 4 SCAN-EDF, 5 YFQ, 6 CFQ, 7 C-LOOK, 8 AS"
                .into(),
            x_label: "scheduler".into(),
            y_label: "streams".into(),
            log_x: false,
            log_y: false,
        },
        &[Series {
            name: "streams below 1 % loss".into(),
            points: pts,
            dashed: false,
            color: 0,
        }],
    )
}
