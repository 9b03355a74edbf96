//! `fairway disk`: BFQ and the baseline disk schedulers on the simulated
//! IBM-DTLA-307030 (seed 004 §2.4, App. C); the logic lives in
//! `fairway_disk`.

use super::common::Table;
use clap::{Args, Subcommand};
use fairway_disk::experiment::{
    seq_readers, streaming, thesis_throughput, throughput_specs, web_server, SchedSpec,
    StreamSetup, SEC, SHARE_SPECS, STREAM_SPECS,
};
use fairway_disk::model::{DiskModel, DiskParams};
use fairway_disk::readahead::ReadAhead;
use fairway_disk::{cost, thesis};
use fairway_eval::cost::chart::{write_svg, ChartSpec, Series};
use indicatif::ProgressBar;
use std::path::Path;

/// Arguments of `fairway disk`.
#[derive(Args)]
pub struct DiskArgs {
    #[command(subcommand)]
    cmd: DiskCmd,
}

#[derive(Subcommand)]
enum DiskCmd {
    /// Aggregate throughput of 2 and 5 sequential readers vs B_max (Fig. 5).
    #[command(
        after_help = "Examples:\n  fairway disk throughput\n  fairway disk throughput --quick --chart fig5.svg\n  fairway disk throughput --files 2 --file-mb 256 --json"
    )]
    Throughput(ThroughputArgs),
    /// Bandwidth distribution: equal weights (2, 5 readers) and 1:2, 1:2:10.
    #[command(
        after_help = "Examples:\n  fairway disk shares\n  fairway disk shares --quick --json"
    )]
    Shares(SharesArgs),
    /// Web-server workload: small-file latency, large-file bandwidth.
    #[command(
        after_help = "Examples:\n  fairway disk web\n  fairway disk web --seconds 600 --procs 50\n  fairway disk web --quick --chart web.svg"
    )]
    Web(WebArgs),
    /// Streaming workload: streams sustained below 1 % loss.
    #[command(
        after_help = "Examples:\n  fairway disk streaming\n  fairway disk streaming --quick --json"
    )]
    Streaming(StreamingArgs),
    /// Replay a synthetic trace through the real-time emulated disk and
    /// report its error against the simulator (App. C.5.1).
    #[command(
        after_help = "Examples:\n  fairway disk validate\n  fairway disk validate --trace mixed --requests 500 --max-gap-ms 500\n  fairway disk validate --quick --json"
    )]
    Validate(ValidateArgs),
    /// Share accuracy of the kernel's BFQ (fio) and fairway's (real reads)
    /// on the same loop device; needs root, fio and losetup.
    #[command(
        after_help = "Examples:\n  fairway disk kernel\n  fairway disk kernel --seconds 10 --json\n  fairway disk kernel --backend io-uring --in-flight 1"
    )]
    Kernel(KernelArgs),
    /// Nanoseconds per add+dispatch of BFQ at 10 and 1000 applications.
    #[command(
        after_help = "Examples:\n  fairway disk bench\n  fairway disk bench --apps 10,100,1000,10000 --pairs 500000"
    )]
    Bench(BenchArgs),
}

/// Flags shared by the experiments.
#[derive(Args, Clone)]
struct Common {
    /// One JSON object per result line instead of the table.
    #[arg(long)]
    json: bool,
    /// Also write an SVG chart here.
    #[arg(long, value_name = "PATH.svg")]
    chart: Option<String>,
    /// Disk parameters (TOML, fields as in presets/ibm-dtla-307030.toml);
    /// default: the built-in IBM-DTLA-307030.
    #[arg(long, value_name = "FILE.toml")]
    disk: Option<String>,
    /// A short version for CI (smaller files, shorter runs).
    #[arg(long)]
    quick: bool,
}

/// The sequential readers' kernel read-ahead.
#[derive(Args, Clone)]
struct ReadAheadArg {
    /// Kernel read-ahead of the sequential readers, KiB: a multiple of 128
    /// (one 128 KiB request each) up to 16384; 128 is Linux 2.6.21's
    /// default, the thesis' kernel; 0 makes the readers strictly
    /// synchronous. Example: --readahead-kb 0
    #[arg(long, value_name = "KIB", default_value_t = 128)]
    readahead_kb: u64,
}

impl ReadAheadArg {
    fn get(&self) -> Result<ReadAhead, String> {
        ReadAhead::kib(self.readahead_kb).map_err(|e| format!("--readahead-kb: {e}"))
    }
}

#[derive(Args)]
struct ThroughputArgs {
    /// Numbers of concurrent readers, comma separated (e.g. 2,5).
    #[arg(long, default_value = "2,5")]
    files: String,
    /// File size, MB (default 128, 32 with --quick).
    #[arg(long)]
    file_mb: Option<u64>,
    #[command(flatten)]
    readahead: ReadAheadArg,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
struct SharesArgs {
    #[command(flatten)]
    readahead: ReadAheadArg,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
struct WebArgs {
    /// Processes.
    #[arg(long, default_value_t = 100)]
    procs: u32,
    /// Simulated seconds (default 3600, 300 with --quick).
    #[arg(long)]
    seconds: Option<u64>,
    /// Workload seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
struct StreamingArgs {
    /// Workload seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// (Applies to the ON/OFF readers.)
    #[command(flatten)]
    readahead: ReadAheadArg,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
struct ValidateArgs {
    /// Trace pattern: random, mixed or both.
    #[arg(long, default_value = "both")]
    trace: String,
    /// Requests per trace (default 500, 100 with --quick).
    #[arg(long)]
    requests: Option<usize>,
    /// Inter-arrival times are uniform in 0..=this many ms (the thesis'
    /// traces use 500; the default keeps the disk ~75 % busy with random
    /// requests and the run short: 500 requests take ~10 s).
    #[arg(long, default_value_t = 40)]
    max_gap_ms: u64,
    /// Workload seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
struct KernelArgs {
    /// Seconds per side (kernel, then fairway), 1..=600.
    #[arg(long, default_value_t = 5)]
    seconds: u64,
    /// How fairway's side does the transfers: `pread` (one blocking read at
    /// a time) or `io-uring` (asynchronous, io_uring). Example: --backend io-uring
    #[arg(long, default_value = "pread", value_parser = ["pread", "io-uring"])]
    backend: String,
    /// With --backend io-uring: transfers in the ring at once, 1..=256
    /// (default 1, BFQ's one request in service). Example: --in-flight 4
    #[arg(long)]
    in_flight: Option<u32>,
    /// One JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct BenchArgs {
    /// Application counts, comma separated.
    #[arg(long, default_value = "10,1000")]
    apps: String,
    /// Timed add+dispatch pairs per round.
    #[arg(long, default_value_t = 200_000)]
    pairs: u64,
    /// Rounds; the best is reported.
    #[arg(long, default_value_t = 5)]
    rounds: u32,
    /// JSON lines instead of the table.
    #[arg(long)]
    json: bool,
}

/// Runs `fairway disk`.
pub fn run(args: DiskArgs) -> Result<(), String> {
    match args.cmd {
        DiskCmd::Throughput(a) => throughput(a),
        DiskCmd::Shares(a) => shares(a),
        DiskCmd::Web(a) => web(a),
        DiskCmd::Streaming(a) => streaming_cmd(a),
        DiskCmd::Validate(a) => validate_cmd(a),
        DiskCmd::Kernel(a) => kernel(a),
        DiskCmd::Bench(a) => bench(a),
    }
}

fn load_disk(c: &Common) -> Result<DiskModel, String> {
    // Every experiment loads the disk first: check its chart path here,
    // before the run, not after it.
    if let Some(p) = &c.chart {
        super::outputs::check_chart_file("--chart", Path::new(p))?;
    }
    let params = match &c.disk {
        None => DiskParams::dtla_307030(),
        Some(p) => {
            let text = std::fs::read_to_string(p).map_err(|e| format!("{p}: {e}"))?;
            DiskParams::from_toml(&text).map_err(|e| format!("{p}: {e}"))?
        }
    };
    DiskModel::new(params).map_err(|e| format!("disk parameters: {e}"))
}

fn bar(total: u64, json: bool) -> ProgressBar {
    super::progress::bar(Some(total), super::progress::COUNTED, json)
}

fn parse_list<T: std::str::FromStr>(flag: &str, text: &str) -> Result<Vec<T>, String> {
    text.split(',')
        .map(|s| {
            s.trim()
                .parse()
                .map_err(|_| format!("{flag}: '{s}' is not a valid number"))
        })
        .collect()
}

fn json_line(v: &impl serde::Serialize) -> Result<(), String> {
    super::json::print_line(v)
}

fn fmt2(x: f64) -> String {
    format!("{x:.2}")
}

fn chart(path: &Option<String>, spec: ChartSpec, series: &[Series]) -> Result<(), String> {
    if let Some(p) = path {
        write_svg(Path::new(p), &spec, series)?;
        eprintln!("chart written to {p}");
    }
    Ok(())
}

fn throughput(a: ThroughputArgs) -> Result<(), String> {
    let c = &a.common;
    let disk = load_disk(c)?;
    let files: Vec<usize> = parse_list("--files", &a.files)?;
    if files.iter().any(|&n| !(1..=30).contains(&n)) {
        return Err("--files: each count must be in 1..=30".into());
    }
    let file_mb = a.file_mb.unwrap_or(if c.quick { 32 } else { 128 });
    if !(1..=1000).contains(&file_mb) {
        return Err("--file-mb must be in 1..=1000 (a 30-slice disk of 30 GB)".into());
    }
    let ra = a.readahead.get()?;
    let specs = throughput_specs(c.quick);
    let pb = bar((specs.len() * files.len()) as u64, c.json);
    let mut header = vec!["scheduler".to_string()];
    header.extend(files.iter().map(|n| format!("{n} files MB/s")));
    header.push("thesis 2 files (best)".into());
    let hdr: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut table = Table::new(&hdr);
    let mut results = Vec::new();
    for spec in &specs {
        let mut row = vec![spec.label()];
        for &n in &files {
            pb.set_message(format!("{} x{n}", spec.label()));
            let r =
                seq_readers(*spec, &vec![1; n], file_mb, ra, &disk).map_err(|e| e.to_string())?;
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
            results.push((*spec, n, r.aggregate_mb_s));
            pb.inc(1);
        }
        row.push(thesis_throughput(spec).map_or(String::new(), fmt2));
        table.row(row);
    }
    pb.finish_and_clear();
    if !c.json {
        println!(
            "Aggregate throughput, {file_mb} MB files in slices at maximum distance, read-ahead {} KiB (BFQ thesis §2.4, Fig. 5):",
            a.readahead.readahead_kb
        );
        table.print();
    }
    // Every measured line: BFQ over B_max for each reader count (solid),
    // each baseline as a flat dashed line per reader count.
    let bfq_of = |n: usize| -> Vec<(f64, f64)> {
        results
            .iter()
            .filter_map(|(s, m, v)| match s {
                SchedSpec::Bfq { b_max } if *m == n => Some((f64::from(*b_max), *v)),
                _ => None,
            })
            .collect()
    };
    let first = bfq_of(files[0]);
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
            points: bfq_of(n),
            dashed: false,
            color: base,
        });
        for (k, want) in [
            SchedSpec::Cfq { slice_ms: 100 },
            SchedSpec::CLook,
            SchedSpec::As,
        ]
        .iter()
        .enumerate()
        {
            if let Some((_, _, v)) = results.iter().find(|(s, m, _)| s == want && *m == n) {
                series.push(Series {
                    name: format!("{} ({n} files)", want.label()),
                    points: vec![(x0, *v), (x1, *v)],
                    dashed: true,
                    color: base + k + 1,
                });
            }
        }
    }
    let counts: Vec<String> = files.iter().map(|n| n.to_string()).collect();
    let n0 = counts.join(", ");
    chart(
        &c.chart,
        ChartSpec {
            title: format!("Aggregate throughput, {n0} readers of {file_mb} MB"),
            x_label: "B_max [sectors]".into(),
            y_label: "MB/s".into(),
            log_x: true,
            log_y: false,
        },
        &series,
    )
}

/// Scheduler, weights, largest file in MB, the thesis' MB/s per reader.
type ShareJob = (SchedSpec, Vec<u32>, u64, Option<Vec<f64>>);

fn shares(a: SharesArgs) -> Result<(), String> {
    let c = &a.common;
    let disk = load_disk(c)?;
    let ra = a.readahead.get()?;
    let equal_mb = if c.quick { 32 } else { 128 };
    let mut jobs: Vec<ShareJob> = Vec::new();
    for spec in SHARE_SPECS {
        let th = thesis::find(thesis::EQUAL_SHARES, &spec.label(), |r| r.0);
        jobs.push((spec, vec![1; 2], equal_mb, th.map(|r| r.1.to_vec())));
        jobs.push((spec, vec![1; 5], equal_mb, th.map(|r| r.2.to_vec())));
    }
    for (w, mbs) in thesis::WEIGHTED_SHARES {
        let max = *w.iter().max().unwrap_or(&1);
        let mb = match (max, c.quick) {
            (10, false) => 1024,
            (_, false) => 256,
            (_, true) => 128,
        };
        jobs.push((
            SchedSpec::Bfq { b_max: 4096 },
            w.to_vec(),
            mb,
            Some(mbs.to_vec()),
        ));
    }
    for (spec, th) in [
        (
            SchedSpec::ScanEdf {
                delta_ms: 80,
                t_wait_ms: 4,
            },
            [26.58, 6.92],
        ),
        (
            SchedSpec::Yfq {
                batch: 4,
                t_wait_ms: 4,
            },
            [22.70, 5.41],
        ),
    ] {
        jobs.push((
            spec,
            vec![10, 1],
            if c.quick { 128 } else { 1024 },
            Some(th.to_vec()),
        ));
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
    for (k, (spec, w, mb, th)) in jobs.iter().enumerate() {
        pb.set_message(format!("{} {w:?}", spec.label()));
        let r = seq_readers(*spec, w, *mb, ra, &disk).map_err(|e| e.to_string())?;
        let wsum: f64 = w.iter().map(|&x| f64::from(x)).sum();
        let err = r
            .per_app_mb_s
            .iter()
            .zip(w)
            .map(|(v, &x)| (v / r.aggregate_mb_s) / (f64::from(x) / wsum) - 1.0)
            .fold(0.0f64, |m, e| if e.abs() > m.abs() { e } else { m });
        let list = |v: &[f64]| v.iter().map(|x| fmt2(*x)).collect::<Vec<_>>().join(" ");
        if c.json {
            json_line(&serde_json::json!({
                "experiment": "shares", "sched": r.sched, "weights": w, "file_mb": mb,
                "readahead_kb": a.readahead.readahead_kb,
                "per_app_mb_s": r.per_app_mb_s, "aggregate_mb_s": r.aggregate_mb_s,
                "worst_share_error": err, "thesis_per_app_mb_s": th,
            }))?;
        }
        table.row(vec![
            r.sched.clone(),
            format!("{w:?}"),
            list(&r.per_app_mb_s),
            th.as_deref().map_or(String::new(), list),
            format!("{:+.1} %", err * 100.0),
        ]);
        if matches!(spec, SchedSpec::Bfq { .. }) && w.len() == 5 {
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
        println!(
            "Per-reader throughput, read-ahead {} KiB (BFQ thesis §2.4); share error = (share / weight share) - 1, worst reader:",
            a.readahead.readahead_kb
        );
        table.print();
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

fn web(a: WebArgs) -> Result<(), String> {
    let c = &a.common;
    let disk = load_disk(c)?;
    let secs = a.seconds.unwrap_or(if c.quick { 300 } else { 3600 });
    if !(1..=86_400).contains(&secs) {
        return Err("--seconds must be in 1..=86400".into());
    }
    if !(1..=100_000).contains(&a.procs) {
        return Err("--procs must be in 1..=100000".into());
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
        let r = web_server(spec, a.procs, secs * SEC, &disk, a.seed).map_err(|e| e.to_string())?;
        let wall = t0.elapsed().as_secs_f64();
        let th = thesis::find(thesis::WEB_SERVER, &r.sched, |r| r.0);
        let t = |f: fn(&(&str, f64, f64, f64)) -> f64| th.map_or(String::new(), |x| fmt2(f(x)));
        if c.json {
            json_line(&serde_json::json!({
                "experiment": "web", "result": r, "wall_seconds": wall,
                "thesis": th.map(|x| serde_json::json!({"small_file_s": x.1, "large_file_mb_s": x.2, "aggregate_mb_s": x.3})),
            }))?;
        }
        table.row(vec![
            r.sched.clone(),
            format!("{:.3}", r.small_file_s),
            t(|x| x.1),
            fmt2(r.large_file_mb_s),
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
        println!(
            "Web-server workload: {} processes, {secs} simulated s (BFQ thesis §2.4):",
            a.procs
        );
        table.print();
        if let (Some(b), Some(f)) = (
            rows.iter().find(|r| r.sched.starts_with("BFQ")),
            rows.iter().find(|r| r.sched.starts_with("CFQ")),
        ) {
            println!(
                "BFQ vs CFQ: small-file latency {:.2}x lower, aggregate throughput {:+.1} %",
                f.small_file_s / b.small_file_s,
                (b.aggregate_mb_s / f.aggregate_mb_s - 1.0) * 100.0
            );
        }
    }
    let pts = |f: fn(&fairway_disk::experiment::WebResult) -> f64| {
        rows.iter()
            .enumerate()
            .map(|(i, r)| (i as f64 + 1.0, f(r)))
            .collect()
    };
    chart(
        &c.chart,
        ChartSpec {
            title: "Web server: 1 BFQ, 2 SCAN-EDF, 3 YFQ, 4 CFQ, 5 C-LOOK, 6 AS".into(),
            x_label: "scheduler".into(),
            y_label: "s / MB/s".into(),
            log_x: false,
            log_y: true,
        },
        &[
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
        ],
    )
}

fn streaming_cmd(a: StreamingArgs) -> Result<(), String> {
    let c = &a.common;
    let disk = load_disk(c)?;
    let readahead = a.readahead.get()?;
    let setup = StreamSetup {
        every: if c.quick {
            5 * SEC
        } else {
            StreamSetup::THESIS.every
        },
        readahead,
        ..StreamSetup::THESIS
    };
    let pb = bar(STREAM_SPECS.len() as u64, c.json);
    let mut table = Table::new(&["scheduler", "streams", "thesis", "aggr MB/s", "thesis"]);
    let mut pts = Vec::new();
    for (i, spec) in STREAM_SPECS.iter().enumerate() {
        pb.set_message(spec.label());
        let r = streaming(*spec, setup, &disk, a.seed).map_err(|e| e.to_string())?;
        let th = thesis::find(thesis::STREAMING, &r.sched, |r| r.0);
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
        println!(
            "Streaming: a new stream every {} s (32 KiB every 128 ms, 1 s buffer) + {} ON/OFF readers (read-ahead {} KiB); streams sustained below {} % loss (BFQ thesis §2.4):",
            setup.every / SEC,
            setup.on_off,
            a.readahead.readahead_kb,
            setup.max_loss * 100.0
        );
        table.print();
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

fn validate_cmd(a: ValidateArgs) -> Result<(), String> {
    use fairway_disk::validate::{synthetic_trace, validate, Summary, TraceKind};
    let c = &a.common;
    let disk = load_disk(c)?;
    let kinds = match a.trace.as_str() {
        "random" => vec![TraceKind::Random],
        "mixed" => vec![TraceKind::Mixed],
        "both" => vec![TraceKind::Random, TraceKind::Mixed],
        other => {
            return Err(format!(
                "--trace: '{other}' is not one of random, mixed, both"
            ))
        }
    };
    let n = a.requests.unwrap_or(if c.quick { 100 } else { 500 });
    if !(1..=100_000).contains(&n) {
        return Err("--requests must be in 1..=100000".into());
    }
    if a.max_gap_ms > 10_000 {
        return Err("--max-gap-ms must be in 0..=10000".into());
    }
    if c.chart.is_some() {
        return Err("--chart: validate draws no chart".into());
    }
    let pb = bar(kinds.len() as u64, c.json);
    let mut table = Table::new(&[
        "trace",
        "requests",
        "response ms",
        "injection p50/p99/max us",
        "device max us",
        "emulation p50/p90/p99/max us",
        "lost",
    ]);
    let q = |s: &Summary, all: bool| {
        if all {
            format!(
                "{:.0}/{:.0}/{:.0}/{:.0}",
                s.p50_us, s.p90_us, s.p99_us, s.max_us
            )
        } else {
            format!("{:.0}/{:.0}/{:.0}", s.p50_us, s.p99_us, s.max_us)
        }
    };
    for kind in kinds {
        pb.set_message(format!("{kind:?} trace"));
        let trace = synthetic_trace(kind, n, a.max_gap_ms * 1_000_000, disk.capacity(), a.seed);
        let v = validate(kind, &trace, &disk);
        if c.json {
            json_line(&v)?;
        }
        table.row(vec![
            format!("{kind:?}"),
            n.to_string(),
            format!("{:.2}", v.mean_response_ms),
            q(&v.injection, false),
            format!("{:.0}", v.device.max_us.abs().max(v.device.min_us.abs())),
            q(&v.emulation, true),
            (v.missing + v.early).to_string(),
        ]);
        pb.inc(1);
    }
    pb.finish_and_clear();
    if !c.json {
        println!("Emulated device vs simulator, per request (BFQ thesis App. C.5.1; error = emulated - simulated response time):");
        table.print();
    }
    Ok(())
}

fn kernel(a: KernelArgs) -> Result<(), String> {
    use fairway_disk::kernel_bfq::{compare, Backend, Skip};
    use fairway_disk::uring_device::MAX_IN_FLIGHT;
    if !(1..=600).contains(&a.seconds) {
        return Err("--seconds must be in 1..=600".into());
    }
    let backend = match (a.backend.as_str(), a.in_flight) {
        ("pread", None) => Backend::Pread,
        ("pread", Some(_)) => return Err("--in-flight needs --backend io-uring".into()),
        (_, n) => {
            let in_flight = n.unwrap_or(1);
            if !(1..=MAX_IN_FLIGHT).contains(&in_flight) {
                return Err(format!("--in-flight must be in 1..={MAX_IN_FLIGHT}"));
            }
            Backend::IoUring { in_flight }
        }
    };
    let pb = bar(1, a.json);
    pb.set_message("kernel BFQ (fio), then fairway BFQ, on a loop device");
    let r = compare(a.seconds, backend);
    pb.finish_and_clear();
    let c = match r {
        Ok(c) => c,
        Err(Skip::Failed(e)) => return Err(e),
        Err(skip) => {
            // Not an error: the environment lacks what the comparison needs.
            eprintln!("fairway disk kernel: {skip}");
            return Ok(());
        }
    };
    if a.json {
        return json_line(&c);
    }
    println!(
        "Two synchronous sequential readers (128 KiB O_DIRECT reads), weights {:?}, {} s each side, same loop device:",
        c.weights, a.seconds
    );
    let mut t = Table::new(&[
        "scheduler",
        "MB/s per reader",
        "shares",
        "ideal",
        "worst share error",
    ]);
    for side in [&c.kernel, &c.fairway] {
        let err = side
            .share
            .iter()
            .zip(&c.ideal)
            .map(|(s, i)| s / i - 1.0)
            .fold(0.0f64, |m, e| if e.abs() > m.abs() { e } else { m });
        let list =
            |v: &[f64], f: fn(f64) -> String| v.iter().map(|x| f(*x)).collect::<Vec<_>>().join(" ");
        t.row(vec![
            side.scheduler.clone(),
            list(&side.mb_s, |x| format!("{x:.1}")),
            list(&side.share, |x| format!("{x:.3}")),
            list(&c.ideal, |x| format!("{x:.3}")),
            format!("{:+.1} %", err * 100.0),
        ]);
    }
    t.print();
    Ok(())
}

fn bench(a: BenchArgs) -> Result<(), String> {
    let apps: Vec<u32> = parse_list("--apps", &a.apps)?;
    if apps.iter().any(|&n| !(1..=1 << 20).contains(&n)) {
        return Err("--apps: each count must be in 1..=1048576".into());
    }
    if !(1..=1 << 30).contains(&a.pairs) || !(1..=1000).contains(&a.rounds) {
        return Err("--pairs must be in 1..=2^30 and --rounds in 1..=1000".into());
    }
    let pb = bar(apps.len() as u64, a.json);
    let mut table = Table::new(&["apps", "BFQ ns/pair", "C-LOOK ns/pair", "BFQ / C-LOOK"]);
    for &n in &apps {
        pb.set_message(format!("{n} apps"));
        let r = cost::sweep(&[n], a.pairs, a.rounds);
        if a.json {
            for c in &r {
                json_line(c)?;
            }
        }
        table.row(vec![
            n.to_string(),
            format!("{:.1}", r[0].ns_per_pair),
            format!("{:.1}", r[1].ns_per_pair),
            format!("{:.2}", r[0].ns_per_pair / r[1].ns_per_pair),
        ]);
        pb.inc(1);
    }
    pb.finish_and_clear();
    if !a.json {
        println!(
            "add_request + dispatch + complete, every application backlogged, budgets of one request (worst case for B-WF2Q+), best of {} rounds of {} pairs:",
            a.rounds, a.pairs
        );
        table.print();
    }
    Ok(())
}
