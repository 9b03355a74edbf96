//! Sequential readers on the simulator (the BFQ thesis §2.4): readers of
//! files placed in slices at the maximum distance from each other, each
//! file's size proportional to its reader's weight, so with exact shares
//! all finish together. The aggregate-throughput sweep (Fig. 5 and its
//! table, [`super::throughput`]) and the bandwidth distribution
//! ([`super::shares`]) both run it. Deterministic.

use super::run_error::DiskRunError;
use super::units::{check_capacity, mb_per_s, SLICES};
use fairway_disk::catalogue::DiskSchedSpec;
use fairway_disk::model::DiskModel;
use fairway_disk::readahead::ReadAhead;
use fairway_disk::sim::Simulation;
use fairway_disk::workload::{App, SeqReader};
use fairway_disk::{AppId, AppSpec, Nanos, SECTOR_BYTES};
use serde::Serialize;

/// Result of a sequential-readers run.
#[derive(Clone, Debug, Serialize)]
pub struct SeqResult {
    /// The scheduler (its typed identity; the JSON shows its label).
    #[serde(skip)]
    pub spec: DiskSchedSpec,
    /// The scheduler's label.
    pub sched: String,
    /// Weights.
    pub weights: Vec<u32>,
    /// Aggregate throughput: all files' bytes over the time the last one
    /// finished, MB/s.
    pub aggregate_mb_s: f64,
    /// Per-reader throughput: its file's bytes over the time it finished
    /// (all start at 0), MB/s.
    pub per_app_mb_s: Vec<f64>,
    /// Simulated seconds.
    pub sim_seconds: f64,
}

/// The largest file, MB (10^6 bytes), a slice of `disk` holds.
pub fn max_file_mb(disk: &DiskModel) -> u64 {
    disk.capacity() / SLICES * SECTOR_BYTES / 1_000_000
}

/// `weights.len()` sequential readers of files placed in slices at the
/// maximum distance from each other, each with the kernel read-ahead
/// `readahead` ([`ReadAhead::NONE`]: strictly synchronous); the file of
/// reader i is `w_i / max w · file_mb` MB, so with exact shares all finish
/// together (as in §2.4). A file larger than its slice is refused
/// ([`DiskRunError::FileTooLarge`]), not cut to it.
pub fn seq_readers(
    spec: DiskSchedSpec,
    weights: &[u32],
    file_mb: u64,
    readahead: ReadAhead,
    disk: &DiskModel,
) -> Result<SeqResult, DiskRunError> {
    check_capacity(disk)?;
    let n = weights.len() as u64;
    let slice = disk.capacity() / SLICES;
    if file_mb > max_file_mb(disk) {
        return Err(DiskRunError::FileTooLarge {
            file_mb,
            slice_mb: max_file_mb(disk),
        });
    }
    let mut sched = spec.build(n as u32)?;
    let wmax = u64::from(*weights.iter().max().unwrap_or(&1));
    let mut apps = Vec::new();
    for (i, &w) in weights.iter().enumerate() {
        let id = AppId(i as u32);
        sched.add_app(id, AppSpec::weight(w))?;
        let s = if n > 1 {
            i as u64 * (SLICES - 1) / (n - 1)
        } else {
            0
        };
        let len = file_mb * 1_000_000 / SECTOR_BYTES * u64::from(w) / wmax;
        apps.push(App::Seq(
            SeqReader::new(id, s * slice, len).with_readahead(readahead),
        ));
    }
    let lens: Vec<u64> = apps
        .iter()
        .map(|a| match a {
            App::Seq(s) => s.len,
            _ => 0,
        })
        .collect();
    let mut sim = Simulation::new(sched, disk.clone(), apps);
    sim.run(Nanos::MAX, &mut |_| {});
    let finish: Vec<Nanos> = sim
        .apps
        .iter()
        .map(|a| match a {
            App::Seq(s) => s.finished.unwrap_or(sim.now()),
            _ => sim.now(),
        })
        .collect();
    let end = finish.iter().copied().max().unwrap_or(0);
    Ok(SeqResult {
        spec,
        sched: spec.label(),
        weights: weights.to_vec(),
        aggregate_mb_s: mb_per_s(lens.iter().sum(), end),
        per_app_mb_s: lens
            .iter()
            .zip(&finish)
            .map(|(&l, &t)| mb_per_s(l, t))
            .collect(),
        sim_seconds: end as f64 / 1e9,
    })
}
