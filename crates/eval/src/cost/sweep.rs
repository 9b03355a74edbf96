//! The two scaling experiments, as CSV plus an SVG chart:
//! * `flows`: cost per pair versus the number of flows, 1 … 32768 flows of
//!   weight 1 (the QFQ paper §7.2, Fig. 10; log x axis, so O(log N) is a
//!   straight line), `none` included;
//! * `m`: QFQ+ cost versus the aggregate size M = 1 … 16 (the QFQ+ paper §8.1,
//!   Fig. 2), one line per flow set, QFQ dashed as the M-independent
//!   reference (QFQ+ with M = 1 should cost about as much).
//!
//! Charts plot the fastest of the K repeats (the least disturbed by other
//! load on a shared machine); the CSV has min, median and max.

use super::{
    measure_many, CostError, CostPattern, CostReport, CostSetup, MeasureOptions, PerfCounters,
    Progress, Subject,
};
use crate::chart::{write_svg, ChartSpec, Series};
use crate::workload::FlowSet;
use fairway_core::{SchedKind, SchedSpec};
use std::fmt;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Numbers of flows of the `flows` sweep: powers of two up to 32768.
pub fn flow_counts() -> Vec<u32> {
    (0..=15).map(|k| 1u32 << k).collect()
}

/// Aggregate sizes of the `m` sweep.
pub fn m_values() -> Vec<u32> {
    (1..=16).collect()
}

/// One point of a sweep.
#[derive(Clone, Debug)]
pub struct SweepRow {
    /// The line the point belongs to (scheduler, or flow set for `m`).
    pub series: String,
    /// The swept value (flows or M).
    pub x: u32,
    /// The measurement.
    pub report: CostReport,
}

/// Warm-up pairs for a setup: one whole cycle of the pattern, at most
/// `pairs` (the pairs of one timed run).
pub fn warmup_for(pattern: CostPattern, n_flows: u32, pairs: u64) -> u64 {
    pattern.thresholds(n_flows).high.min(pairs)
}

/// Cost versus number of flows for `subjects` (the QFQ paper Fig. 10); the
/// repeats are interleaved across all flow counts ([`measure_many`]).
pub fn sweep_flows(
    subjects: &[Subject],
    pattern: CostPattern,
    counts: &[u32],
    opts: &MeasureOptions,
    counters: &mut Result<PerfCounters, impl fmt::Display>,
    progress: &mut dyn FnMut(Progress),
) -> Result<Vec<SweepRow>, CostError> {
    let setups = counts
        .iter()
        .map(|&n| {
            let flows = FlowSet::parse(&format!("1x{n}"))?;
            Ok(CostSetup::new(
                flows,
                pattern,
                warmup_for(pattern, n, opts.pairs),
            ))
        })
        .collect::<Result<Vec<_>, CostError>>()?;
    let all = measure_many(subjects, &setups, opts, counters, progress)?;
    let mut rows = Vec::new();
    for (&n, reports) in counts.iter().zip(all) {
        rows.extend(reports.into_iter().map(|r| SweepRow {
            series: r.sched.clone(),
            x: n,
            report: r,
        }));
    }
    Ok(rows)
}

/// QFQ+ cost versus M on each flow set (the QFQ+ paper Fig. 2), plus QFQ and DRR
/// measured in the same runs as references.
pub fn sweep_m(
    flow_sets: &[FlowSet],
    pattern: CostPattern,
    ms: &[u32],
    opts: &MeasureOptions,
    counters: &mut Result<PerfCounters, impl fmt::Display>,
    progress: &mut dyn FnMut(Progress),
) -> Result<Vec<SweepRow>, CostError> {
    let mut subjects: Vec<Subject> = ms
        .iter()
        .map(|m| SchedSpec::parse(&format!("qfq+:m={m}")).map(Subject::Sched))
        .collect::<Result<_, _>>()?;
    subjects.push(Subject::Sched(SchedSpec::new(SchedKind::Qfq)));
    subjects.push(Subject::Sched(SchedSpec::new(SchedKind::Drr)));
    let setups: Vec<CostSetup> = flow_sets
        .iter()
        .map(|f| {
            let n = f.len() as u32;
            CostSetup::new(f.clone(), pattern, warmup_for(pattern, n, opts.pairs))
        })
        .collect();
    let all = measure_many(&subjects, &setups, opts, counters, progress)?;
    let mut rows = Vec::new();
    for (flows, reports) in flow_sets.iter().zip(all) {
        for r in reports {
            let (series, x) = match r.sched.strip_prefix("qfq+:m=") {
                Some(m) => (
                    format!("qfq+ {}", flows.name),
                    m.parse()
                        .map_err(|_| CostError::BadLabel(r.sched.clone()))?,
                ),
                None => (format!("{} {}", r.sched, flows.name), 0),
            };
            rows.push(SweepRow {
                series,
                x,
                report: r,
            });
        }
    }
    Ok(rows)
}

fn opt(v: Option<f64>) -> String {
    v.map_or(String::new(), |v| format!("{v:.2}"))
}

/// The rows as CSV text (one header line).
pub fn to_csv(x_name: &str, rows: &[SweepRow]) -> String {
    // The flow set's name is `flow_set`: the swept x may be `flows`.
    let names = [
        "series",
        x_name,
        "sched",
        "flow_set",
        "n_flows",
        "pattern",
        "pairs",
        "repeat",
        "ns_per_pair",
        "ns_per_pair_min",
        "ns_per_pair_max",
        "ns_per_pair_net",
        "none_ns_per_pair",
        "instructions_per_pair",
        "cache_misses_per_pair",
    ];
    let mut s = crate::chart::csv_header(&names).unwrap_or_else(|_| names.join(","));
    s.push('\n');
    for r in rows {
        let p = &r.report;
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{:.2},{:.2},{:.2},{:.2},{},{},{}",
            r.series,
            r.x,
            p.sched,
            p.flows,
            p.n_flows,
            p.pattern,
            p.pairs,
            p.repeat,
            p.ns_per_pair,
            p.ns_per_pair_min,
            p.ns_per_pair_max,
            p.ns_per_pair_net,
            opt(p.none_ns_per_pair),
            opt(p.instructions_per_pair),
            opt(p.cache_misses_per_pair),
        );
    }
    s
}

/// `dir` and its parents, created if missing.
fn create_dir(dir: &Path) -> Result<(), CostError> {
    std::fs::create_dir_all(dir).map_err(|error| CostError::Io {
        path: dir.to_path_buf(),
        error,
    })
}

/// Writes `text` to `path`.
fn write_file(path: &Path, text: String) -> Result<(), CostError> {
    std::fs::write(path, text).map_err(|error| CostError::Io {
        path: path.to_path_buf(),
        error,
    })
}

/// Writes `<stem>.csv` and `<stem>.svg` into `dir`; returns their paths.
pub fn write_flows_outputs(
    dir: &Path,
    pattern: CostPattern,
    rows: &[SweepRow],
    machine: &str,
) -> Result<Vec<PathBuf>, CostError> {
    create_dir(dir)?;
    let csv = dir.join(format!("sweep-flows-{pattern}.csv"));
    write_file(&csv, to_csv("flows", rows))?;
    let mut names: Vec<&str> = Vec::new();
    for r in rows {
        if !names.contains(&r.series.as_str()) {
            names.push(&r.series);
        }
    }
    let series: Vec<Series> = names
        .iter()
        .enumerate()
        .map(|(i, name)| Series {
            name: name.to_string(),
            points: rows
                .iter()
                .filter(|r| r.series == *name)
                .map(|r| (f64::from(r.x), r.report.ns_per_pair_min))
                .collect(),
            dashed: *name == "none",
            color: if *name == "none" { 7 } else { i },
        })
        .collect();
    let svg = dir.join(format!("sweep-flows-{pattern}.svg"));
    let spec = ChartSpec {
        title: format!("ns per enqueue/dequeue pair vs number of flows ({pattern})"),
        x_label: format!("flows (weight 1, 1500 B), log scale; {machine}"),
        y_label: "ns per pair, harness included (fastest repeat)".into(),
        // Log x, linear y: O(log N) is a straight line, O(1) a flat one.
        log_x: true,
        log_y: false,
    };
    write_svg(&svg, &spec, &series)?;
    Ok(vec![csv, svg])
}

/// Writes the `m` sweep's CSV and SVG into `dir`; returns their paths.
pub fn write_m_outputs(
    dir: &Path,
    pattern: CostPattern,
    rows: &[SweepRow],
    machine: &str,
) -> Result<Vec<PathBuf>, CostError> {
    create_dir(dir)?;
    let csv = dir.join(format!("sweep-m-{pattern}.csv"));
    write_file(&csv, to_csv("m", rows))?;
    let mut sets: Vec<&str> = Vec::new();
    for r in rows {
        if !sets.contains(&r.report.flows.as_str()) {
            sets.push(&r.report.flows);
        }
    }
    let (x_lo, x_hi) = rows
        .iter()
        .filter(|r| r.x > 0)
        .fold((u32::MAX, 0), |(a, b), r| (a.min(r.x), b.max(r.x)));
    let mut series = Vec::new();
    for (i, set) in sets.iter().enumerate() {
        let plus: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| r.report.flows == *set && r.x > 0)
            .map(|r| (f64::from(r.x), r.report.ns_per_pair_min))
            .collect();
        series.push(Series {
            name: format!("qfq+ {set}"),
            points: plus,
            dashed: false,
            color: i,
        });
        // Every measured baseline as a flat dashed line: qfq in the set's
        // colour, drr in a second colour of its own.
        for (sched, color) in [("qfq", i), ("drr", i + 4)] {
            if let Some(q) = rows
                .iter()
                .find(|r| r.report.flows == *set && r.report.sched == sched)
            {
                let y = q.report.ns_per_pair_min;
                series.push(Series {
                    name: format!("{sched} {set}"),
                    points: vec![(f64::from(x_lo), y), (f64::from(x_hi), y)],
                    dashed: true,
                    color,
                });
            }
        }
    }
    let svg = dir.join(format!("sweep-m-{pattern}.svg"));
    let spec = ChartSpec {
        title: format!("QFQ+ ns per pair vs aggregate size M ({pattern})"),
        x_label: format!("M (flows per aggregate); {machine}"),
        y_label: "ns per pair, harness included (fastest repeat)".into(),
        log_x: false,
        log_y: false,
    };
    write_svg(&svg, &spec, &series)?;
    Ok(vec![csv, svg])
}
