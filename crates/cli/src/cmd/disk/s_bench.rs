//! `fairway disk s-bench`: the S suite's start-up latency method on a loop
//! device, the kernel's schedulers beside fairway's BFQ in the engine, run
//! by `fairway_lab::disk::s_bench`.

use super::common::{bar, chart, json_line};
use super::error::{DiskCmdError, FlagError};
use crate::cmd::common::Table;
use clap::Args;
use fairway_disk::catalogue::DiskSchedSpec;
use fairway_disk::engine::Submission;
use fairway_eval::cost::chart::{ChartSpec, Series};
use fairway_lab::disk::s_bench::buffers::Buffers;
use fairway_lab::disk::s_bench::workers::SeqReads;
use fairway_lab::disk::s_bench::{
    self, trace, Case, SBenchConfig, SBenchError, SReport, Trace, CASES, FAIRWAY,
    KERNEL_SCHEDULERS, MAX_STARTUP_S, QUICK_LOOP, REGION_MIB, REPS, S_BENCH_BFQ, S_LOOP, WARMUP_S,
};
use std::path::Path;

/// The exit status of a run that could not measure here (not root, no
/// loop device scheduler, no io_uring).
pub const EXIT_SKIPPED: u8 = 3;

/// Arguments of `fairway disk s-bench`.
#[derive(Args)]
pub struct SBenchArgs {
    /// A start-up trace file, in S's format or fairway's (default: the
    /// synthetic trace of examples/disk/startup-synthetic.trace).
    /// Example: --trace my-app.trace
    #[arg(long, value_name = "FILE", conflicts_with = "s_checkout")]
    trace: Option<String>,
    /// A checkout of the S suite (github.com/Algodev-github/S): replay its
    /// recorded trace comm_startup_lat/APP.trace. Example: --s-checkout ~/S
    #[arg(long, value_name = "DIR")]
    s_checkout: Option<String>,
    /// With --s-checkout: whose start-up to replay.
    #[arg(long, value_name = "APP", requires = "s_checkout", value_parser = ["gnometerm", "xterm", "lowriter"])]
    app: Option<String>,
    /// Replays per case and scheduler, 1..=100 (default 3, 1 with --quick).
    #[arg(long)]
    reps: Option<u32>,
    /// Each greedy worker's region of the device, MiB, 16..=4096 (default
    /// 256, 16 with --quick); the image holds 10 of them.
    #[arg(long, value_name = "MIB")]
    region_mib: Option<u64>,
    /// Seconds the greedy workers run before the first replay, 0..=600
    /// (default 4, as S waits for weight raising to end; 1 with --quick).
    #[arg(long, value_name = "S")]
    warmup_s: Option<u64>,
    /// A replay's time limit, seconds, 1..=600 (default 60, 20 with --quick).
    #[arg(long, value_name = "S")]
    max_startup_s: Option<u64>,
    /// The workload cases (rows), comma separated, from: idle, 5r-seq,
    /// 10r-seq, 5r5w-seq, 10r-rand (default all). Example: --cases idle,10r-seq
    #[arg(long, value_name = "LIST")]
    cases: Option<String>,
    /// The schedulers (columns), comma separated, from: none, mq-deadline,
    /// kyber, bfq, fairway-bfq (default all). Example: --schedulers none,bfq,fairway-bfq
    #[arg(long, value_name = "LIST")]
    schedulers: Option<String>,
    /// Run the benchmark's threads (workers, replay, the engine's device
    /// thread) under SCHED_RR priority 1, so other load on the machine
    /// delays them less.
    #[arg(long)]
    realtime: bool,
    /// fairway's engine: transfers on the device at once while no
    /// weight-raised client is warm, 1..=256 (default 256: 32 MiB of 128
    /// KiB transfers for the readers' throughput, where the kernel's BFQ
    /// lets S's readers keep some 34 reads of 1.24 MiB on the loop
    /// device). While one is warm the others keep BFQ's warm_depth
    /// (--spec bfq:...,warm_depth=N, default 2, BFQ's).
    #[arg(long, default_value_t = 256)]
    in_flight: u32,
    /// fairway's engine: its largest request, bytes, 131072..=1048576, a
    /// multiple of 4096 (default 131072). fairway's sequential readers
    /// read up to this much at a time; while a weight-raised client is
    /// warm BFQ dispatches them in pieces of 128 KiB, and --in-flight
    /// counts a transfer once per 128 KiB.
    #[arg(long, default_value_t = 128 << 10)]
    max_request: u32,
    /// Where both sides' direct-I/O buffers live: huge (transparent huge
    /// pages, so a direct transfer reaches the loop device in requests of
    /// up to its max_sectors_kb, as S's buffered read-ahead does) or heap
    /// (4 KiB pages: at most 128 segments of one page, 512 KiB, per
    /// request). Default huge.
    #[arg(long, value_name = "KIND", value_parser = ["huge", "heap"], default_value = "huge")]
    buffers: String,
    /// Instead of S's readers, each sequential reader on both sides issues
    /// batches of this many direct 128 KiB reads, 1..=64 (1: one
    /// synchronous read after another). Default: S's readers, 4 KiB reads
    /// through the page cache on the kernel's side, and on fairway's the
    /// depth and request size they were measured to put on the device.
    #[arg(long)]
    reader_depth: Option<u32>,
    /// How fairway's engine submits: thread (its device thread issues
    /// every request) or inline (the submitting thread runs the scheduler
    /// and issues to io_uring itself). Default thread.
    #[arg(long, value_name = "MODE", value_parser = ["thread", "inline"], default_value = "thread")]
    submission: String,
    /// fairway's scheduler in the engine, a catalogue spec (fairway disk
    /// scheds; default bfq:t_max_ms=125,inject=1: T_max as the kernel's
    /// timeout_sync, I/O injection as the kernel does, BFQ's other
    /// defaults). Example: --spec bfq:t_max_ms=20
    #[arg(long, value_name = "SPEC")]
    spec: Option<String>,
    /// Leave the virtual machine's free page reporting on during the run.
    /// By default, where the guest reports freed memory to its hypervisor
    /// (a balloon's reporting_vq in /proc/interrupts), the run raises
    /// /sys/module/page_reporting/parameters/page_reporting_order so no
    /// report is made, and puts it back at the end: each report can pause
    /// the virtual disk for up to ~200 ms, whatever the scheduler.
    #[arg(long)]
    keep_page_reporting: bool,
    /// One JSON object instead of the tables.
    #[arg(long)]
    json: bool,
    /// Also write an SVG chart of the start-up times here.
    #[arg(long, value_name = "PATH.svg")]
    chart: Option<String>,
    /// A short version (16 MiB regions, one replay per cell, 1 s warm-up,
    /// S's pauses around each replay shortened from 3+1, 0.2 and 2 s to
    /// 1, 0.2 and 0.5 s).
    #[arg(long)]
    quick: bool,
}

fn in_range<T: PartialOrd + Copy + std::fmt::Display>(
    flag: &'static str,
    v: T,
    (lo, hi): (T, T),
) -> Result<T, FlagError> {
    if v >= lo && v <= hi {
        Ok(v)
    } else {
        Err(FlagError::ValueOutOfRange {
            flag,
            value: v.to_string(),
            range: format!("{lo}..={hi}"),
        })
    }
}

/// The names of a comma-separated list, each one of `known`, none twice.
fn names<T: Copy>(
    flag: &'static str,
    text: Option<&str>,
    known: &[(&str, T)],
    choices: &'static str,
) -> Result<Vec<T>, FlagError> {
    let Some(text) = text else {
        return Ok(known.iter().map(|k| k.1).collect());
    };
    let unknown = |text: String| FlagError::UnknownEntry {
        flag,
        what: None,
        text,
        choices,
    };
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for n in text.split(',').map(str::trim) {
        let Some(k) = known.iter().find(|k| k.0 == n) else {
            return Err(unknown(n.to_string()));
        };
        if seen.contains(&n) {
            return Err(FlagError::ValueMust {
                flag,
                value: text.to_string(),
                be: "a list naming each entry once",
            });
        }
        seen.push(n);
        out.push(k.1);
    }
    Ok(out)
}

/// The configuration the flags give.
fn config(a: &SBenchArgs) -> Result<SBenchConfig, DiskCmdError> {
    let q = a.quick;
    let cases: Vec<(&str, Case)> = CASES.iter().map(|c| (c.name, *c)).collect();
    let mut scheds: Vec<(&str, &str)> = KERNEL_SCHEDULERS.iter().map(|s| (*s, *s)).collect();
    scheds.push((FAIRWAY, FAIRWAY));
    Ok(SBenchConfig {
        cases: names(
            "--cases",
            a.cases.as_deref(),
            &cases,
            "idle, 5r-seq, 10r-seq, 5r5w-seq, 10r-rand",
        )?,
        schedulers: names(
            "--schedulers",
            a.schedulers.as_deref(),
            &scheds,
            "none, mq-deadline, kyber, bfq, fairway-bfq",
        )?
        .into_iter()
        .map(String::from)
        .collect(),
        realtime: a.realtime,
        keep_page_reporting: a.keep_page_reporting,
        region_mib: in_range(
            "--region-mib",
            a.region_mib.unwrap_or(if q { 16 } else { 256 }),
            REGION_MIB,
        )?,
        reps: in_range("--reps", a.reps.unwrap_or(if q { 1 } else { 3 }), REPS)?,
        warmup_s: in_range(
            "--warmup-s",
            a.warmup_s.unwrap_or(if q { 1 } else { 4 }),
            WARMUP_S,
        )?,
        pauses: if q { QUICK_LOOP } else { S_LOOP },
        max_startup_s: in_range(
            "--max-startup-s",
            a.max_startup_s.unwrap_or(if q { 20 } else { 60 }),
            MAX_STARTUP_S,
        )?,
        in_flight: in_range("--in-flight", a.in_flight, (1, 256))?,
        max_request: a.max_request,
        buffers: if a.buffers == "heap" {
            Buffers::Heap
        } else {
            Buffers::Huge
        },
        reader_depth: a
            .reader_depth
            .map(|d| {
                in_range(
                    "--reader-depth",
                    d,
                    (1, fairway_lab::disk::s_bench::workers::MAX_READER_DEPTH),
                )
            })
            .transpose()?,
        submission: if a.submission == "inline" {
            Submission::Inline
        } else {
            Submission::DeviceThread
        },
        spec: match &a.spec {
            None => S_BENCH_BFQ,
            Some(t) => DiskSchedSpec::parse(t)?,
        },
    })
}

/// The trace the flags name.
fn load_trace(a: &SBenchArgs) -> Result<Trace, DiskCmdError> {
    let path = match (&a.trace, &a.s_checkout) {
        (Some(t), _) => Path::new(t).to_path_buf(),
        (None, Some(dir)) => {
            let app = a.app.as_deref().unwrap_or("gnometerm");
            Path::new(dir)
                .join("comm_startup_lat")
                .join(format!("{app}.trace"))
        }
        (None, None) => return Ok(trace::synthetic()),
    };
    trace::load(&path).map_err(|e| failed(e.into()))
}

/// Runs `fairway disk s-bench`.
pub fn run(a: SBenchArgs) -> Result<(), DiskCmdError> {
    let cfg = config(&a)?;
    if let Some(p) = &a.chart {
        crate::cmd::outputs::check_chart_file("--chart", Path::new(p))?;
    }
    let trace = load_trace(&a)?;
    fairway_runtime::net::install_interrupt_handler().map_err(|e| {
        failed(SBenchError::Io {
            what: "Ctrl-C handler".into(),
            source: e,
        })
    })?;
    let pb = bar(1, a.json);
    let result = s_bench::run(&cfg, trace, &mut |done, total, what| {
        pb.set_length(total as u64);
        pb.set_position(done as u64);
        pb.set_message(what.to_string());
    });
    pb.finish_and_clear();
    let report = match result {
        Ok(r) => r,
        Err(e) if e.is_skip() => skipped(&e)?,
        Err(e) => return Err(failed(e)),
    };
    if a.json {
        json_line(&report)?;
    } else {
        print_tables(&report, cfg.max_startup_s)?;
    }
    chart(&a.chart, chart_spec(&report), &series(&report))
}

/// The command's error for a run that failed (its message, one line).
fn failed(e: SBenchError) -> DiskCmdError {
    DiskCmdError::SBench(e)
}

/// Says why and exits with [`EXIT_SKIPPED`].
fn skipped(e: &SBenchError) -> Result<SReport, DiskCmdError> {
    crate::errln!("fairway disk s-bench: {e}");
    crate::cmd::stdout::flush()?;
    std::process::exit(i32::from(EXIT_SKIPPED));
}

fn secs(c: &s_bench::Cell, limit: u64) -> String {
    match c.startup_s {
        Some(s) => format!("{s:.3}"),
        None => format!(">{limit}"),
    }
}

fn print_tables(r: &SReport, limit: u64) -> Result<(), DiskCmdError> {
    let readers = match r.reads {
        SeqReads::Batch { depth } => format!("sequential readers {depth} direct 128 KiB reads at a time"),
        _ => "sequential readers as S's (4 KiB reads through the page cache; fairway's: direct reads of the depth and size measured)".into(),
    };
    crate::outln!(
        "Replayed start-up of `{}` ({} reads, {} processes), {} replay(s) per cell; greedy workers {} MiB each: {readers}, writers 128 KiB and random readers 4 KiB direct, one at a time; fairway: {} through the engine, {} in flight, requests up to {} KiB, {} submission, kernel at none; direct-I/O buffers: {}:",
        r.trace, r.trace_requests, r.trace_threads, r.reps, r.region_mib, r.fairway_spec, r.in_flight, r.max_request >> 10, r.submission,
        if r.buffers == Buffers::Huge { "huge pages" } else { "heap" }
    );
    crate::outln!(
        "s: mean start-up; MB/s: the workers' over S's loop ({} s, cache dropped, {} s, the replay, {} s after one under 2 s), as S's iostat; start-up MB/s: theirs during the replays only.",
        r.pause_before_s, r.pause_settle_s, r.pause_after_s
    );
    crate::outln!(
        "Free page reporting to the hypervisor: {}.",
        r.page_reporting
    );
    let mut header = vec!["workload".to_string()];
    for s in &r.schedulers {
        header.push(format!("{s} s"));
        header.push(format!("{s} MB/s"));
        header.push(format!("{s} start-up MB/s"));
    }
    let hdr: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = Table::new(&hdr);
    let mut cpu = per_scheduler("CPU µs/request", r, &[]);
    for case in &r.cases {
        let mut row = vec![case.case.clone()];
        let mut crow = vec![case.case.clone()];
        for c in &case.cells {
            row.push(secs(c, limit));
            for mb in [c.throughput_mb_s, c.startup_throughput_mb_s] {
                row.push(if case.readers + case.writers == 0 {
                    "-".into()
                } else {
                    format!("{mb:.1}")
                });
            }
            let us = |x: Option<f64>| x.map_or("-".into(), |x| format!("{x:.1}"));
            crow.push(format!(
                "{} / {}",
                us(c.cpu_us_per_request),
                us(c.process_cpu_us_per_request)
            ));
        }
        t.row(row);
        cpu.row(crow);
    }
    t.print()?;
    crate::outln!();
    print_runs(r)?;
    crate::outln!("CPU µs per device request (fairway-bfq: its engine thread; the kernel's: the process's system time, an approximation; after the slash: the whole process's user and system time, every column):");
    cpu.print()?;
    crate::outln!();
    print_loads(r)?;
    for g in &r.targets {
        let ratio = g.ratio.map_or("-".into(), |x| format!("{x:.3}"));
        let op = if g.name.contains("MB/s") { ">=" } else { "<=" };
        let during = g
            .ratio_during_startup
            .map_or(String::new(), |x| format!(" (during start-up: {x:.3})"));
        crate::outln!(
            "target {}: {ratio} (want {op} {}): {}{during}",
            g.name,
            g.limit,
            if g.met { "met" } else { "NOT met" }
        );
    }
    Ok(())
}

/// A table whose columns are `first`, one per scheduler of the run, then
/// `after`.
fn per_scheduler(first: &str, r: &SReport, after: &[&str]) -> Table {
    let mut h = vec![first];
    h.extend(r.schedulers.iter().map(String::as_str));
    h.extend_from_slice(after);
    Table::new(&h)
}

/// Each replay's start-up time, in the order run: S's figure is their
/// mean, and one far above its cell's others is a pause of the storage
/// rather than the scheduler's doing (docs/io-scheduler.md).
fn print_runs(r: &SReport) -> Result<(), DiskCmdError> {
    if r.reps < 2 {
        return Ok(());
    }
    let mut t = per_scheduler("each replay, s", r, &[]);
    for case in &r.cases {
        let mut row = vec![case.case.clone()];
        row.extend(case.cells.iter().map(replays));
        t.row(row);
    }
    crate::outln!("Each replay's start-up, in the order run (the means above are theirs):");
    t.print()?;
    let cells = || r.cases.iter().flat_map(|c| &c.cells);
    if cells().any(|c| c.host_reports_runs.iter().any(|&n| n > 0)) {
        crate::outln!("* the hypervisor took free page reports during it, pausing the disk");
    }
    crate::outln!();
    Ok(())
}

/// A cell's replays, in seconds, in the order run; `*` marks one during
/// which the hypervisor took free page reports.
fn replays(c: &s_bench::Cell) -> String {
    let runs: Vec<String> = c
        .startup_runs_s
        .iter()
        .enumerate()
        .map(|(i, x)| {
            let disturbed = c.host_reports_runs.get(i).is_some_and(|&n| n > 0);
            format!("{x:.3}{}", if disturbed { "*" } else { "" })
        })
        .collect();
    runs.join(" ")
}

/// The device's load while the workers ran alone, and the shape of
/// fairway's readers that follows from it.
fn print_loads(r: &SReport) -> Result<(), DiskCmdError> {
    let mut t = per_scheduler("device load (workers alone)", r, &["fairway's readers"]);
    for case in r.cases.iter().filter(|c| c.readers + c.writers > 0) {
        let mut row = vec![case.case.clone()];
        for c in &case.cells {
            row.push(c.device_load.map_or("-".into(), |l| {
                format!(
                    "{:.1} reads of {:.0} KiB",
                    l.in_flight_reads,
                    l.read_bytes / 1024.0
                )
            }));
        }
        row.push(case.fairway_readers.as_ref().map_or("-".into(), |s| {
            format!(
                "{} × {} KiB each{}",
                s.depth,
                s.bytes >> 10,
                if s.split {
                    " (split: the engine's largest)"
                } else {
                    ""
                }
            )
        }));
        t.row(row);
    }
    crate::outln!(
        "Reads in flight on the device (mean) and their mean size, while the workers ran alone:"
    );
    t.print()?;
    crate::outln!();
    Ok(())
}

fn chart_spec(r: &SReport) -> ChartSpec {
    let names: Vec<String> = r
        .cases
        .iter()
        .enumerate()
        .map(|(i, c)| format!("{} {}", i + 1, c.case))
        .collect();
    ChartSpec {
        title: format!("Replayed start-up of {} (x: {})", r.trace, names.join(", ")),
        x_label: "workload case".into(),
        y_label: "start-up time [s]".into(),
        log_x: false,
        log_y: false,
    }
}

fn series(r: &SReport) -> Vec<Series> {
    r.schedulers
        .iter()
        .enumerate()
        .map(|(si, s)| Series {
            name: s.clone(),
            points: r
                .cases
                .iter()
                .enumerate()
                .filter_map(|(ci, c)| Some(((ci + 1) as f64, c.cells.get(si)?.startup_s?)))
                .collect(),
            dashed: false,
            color: si,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cells_replays_are_listed_in_the_order_run_those_the_hypervisor_paused_marked() {
        let c = s_bench::Cell {
            scheduler: "fairway-bfq".into(),
            startup_s: Some(0.163),
            startup_runs_s: vec![0.093, 0.295, 0.1],
            timed_out: 0,
            host_reports_runs: Vec::new(),
            throughput_mb_s: 0.0,
            startup_throughput_mb_s: 0.0,
            requests: 0,
            cpu_us_per_request: None,
            cpu_source: "engine thread",
            process_cpu_us_per_request: None,
            device_load: None,
        };
        assert_eq!(replays(&c), "0.093 0.295 0.100");
        let paused = s_bench::Cell {
            host_reports_runs: vec![0, 2, 0],
            ..c
        };
        assert_eq!(replays(&paused), "0.093 0.295* 0.100");
    }
}
