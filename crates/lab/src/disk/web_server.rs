//! The web-server-like workload of the BFQ thesis §2.4 on the simulator:
//! processes reading small files (latency matters) and large files
//! (bandwidth matters) from a shared log-structured area, all with weight
//! 1. Deterministic for a given seed.

use super::run_error::DiskRunError;
use super::units::{check_capacity, mb_per_s};
use fairway_disk::catalogue::{DiskSchedKind, DiskSchedSpec};
use fairway_disk::model::DiskModel;
use fairway_disk::sim::Simulation;
use fairway_disk::workload::{App, WebProcess};
use fairway_disk::{AppId, AppSpec, Nanos};
use serde::Serialize;
use std::cell::Cell;
use std::rc::Rc;

/// Result of a web-server run.
#[derive(Clone, Debug, Serialize)]
pub struct WebResult {
    /// The scheduler (its typed identity; the JSON shows its label).
    #[serde(skip)]
    pub spec: DiskSchedSpec,
    /// The scheduler's label.
    pub sched: String,
    /// Mean completion time of small files, s (0 when none completed:
    /// see `small_files`).
    pub small_file_s: f64,
    /// Small files read.
    pub small_files: usize,
    /// Mean bandwidth of large-file reads, MB/s (0 when none completed:
    /// see `large_files`).
    pub large_file_mb_s: f64,
    /// Large files read.
    pub large_files: usize,
    /// Mean aggregate throughput, MB/s.
    pub aggregate_mb_s: f64,
    /// Simulated seconds.
    pub sim_seconds: f64,
}

/// The web-server-like workload (§2.4): `procs` processes for `duration`.
pub fn web_server(
    spec: DiskSchedSpec,
    procs: u32,
    duration: Nanos,
    disk: &DiskModel,
    seed: u64,
) -> Result<WebResult, DiskRunError> {
    check_capacity(disk)?;
    let mut sched = spec.build(procs)?;
    let cap = disk.capacity();
    let log = Rc::new(Cell::new(cap / 4));
    let mut apps = Vec::new();
    for i in 0..procs {
        sched.add_app(AppId(i), AppSpec::weight(1))?;
        let mut p = WebProcess::new(
            AppId(i),
            cap,
            log.clone(),
            seed.wrapping_add(u64::from(i) * 7919),
        );
        p.until = duration;
        apps.push(App::Web(p));
    }
    let mut sim = Simulation::new(sched, disk.clone(), apps);
    sim.run(duration, &mut |_| {});
    let (mut small, mut nsmall, mut large, mut nlarge) = (0.0, 0usize, 0.0, 0usize);
    for a in &sim.apps {
        if let App::Web(w) = a {
            small += w
                .small_latencies
                .iter()
                .map(|&t| t as f64 / 1e9)
                .sum::<f64>();
            nsmall += w.small_latencies.len();
            large += w
                .large_reads
                .iter()
                .map(|&(s, t)| mb_per_s(s, t))
                .sum::<f64>();
            nlarge += w.large_reads.len();
        }
    }
    let total: u64 = sim.totals().sectors.iter().sum();
    Ok(WebResult {
        spec,
        sched: spec.label(),
        small_file_s: small / nsmall.max(1) as f64,
        small_files: nsmall,
        large_file_mb_s: large / nlarge.max(1) as f64,
        large_files: nlarge,
        aggregate_mb_s: mb_per_s(total, duration),
        sim_seconds: duration as f64 / 1e9,
    })
}

/// The first result of a scheduler of kind `kind`.
pub fn of_kind(rows: &[WebResult], kind: DiskSchedKind) -> Option<&WebResult> {
    rows.iter().find(|r| r.spec.kind() == kind)
}

/// BFQ against CFQ, the thesis' headline comparison: how many times lower
/// BFQ's small-file completion time is, and its aggregate throughput's
/// relative difference (`+0.05` = 5 % higher); `None` without a BFQ and a
/// CFQ result, or when either read no small file or nothing at all (a run
/// too short to compare).
pub fn bfq_vs_cfq(rows: &[WebResult]) -> Option<(f64, f64)> {
    let b = of_kind(rows, DiskSchedKind::Bfq)?;
    let c = of_kind(rows, DiskSchedKind::Cfq)?;
    let read = |r: &WebResult| r.small_files > 0 && r.aggregate_mb_s > 0.0;
    if !(read(b) && read(c)) {
        return None;
    }
    Some((
        c.small_file_s / b.small_file_s,
        b.aggregate_mb_s / c.aggregate_mb_s - 1.0,
    ))
}
