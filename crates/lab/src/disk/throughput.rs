//! The aggregate-throughput sweep of the BFQ thesis §2.4 (Fig. 5 and the
//! first table): equal-weight sequential readers ([`super::sequential`])
//! under BFQ at growing B_max and under each baseline, beside the thesis'
//! best figure per scheduler.

use super::thesis::{find, THROUGHPUT_2_FILES};
use fairway_disk::catalogue::DiskSchedSpec;

/// The configurations of the thesis' throughput sweep (Fig. 5 and the
/// first table of §2.4); `quick` keeps one per scheduler family plus the
/// B_max sweep's ends.
pub fn throughput_specs(quick: bool) -> Vec<DiskSchedSpec> {
    let mut v = Vec::new();
    let bmax: &[u32] = if quick {
        &[512, 4096, 16384]
    } else {
        &[512, 1024, 2048, 4096, 8192, 16384]
    };
    v.extend(bmax.iter().map(|&b_max| DiskSchedSpec::bfq(b_max)));
    let deltas: &[u64] = if quick {
        &[640]
    } else {
        &[20, 40, 80, 160, 320, 640]
    };
    for &t_wait_ms in &[0, 4] {
        v.extend(
            deltas
                .iter()
                .map(|&delta_ms| DiskSchedSpec::scan_edf(delta_ms, t_wait_ms)),
        );
    }
    let batches: &[u32] = if quick { &[16] } else { &[4, 8, 16] };
    for &t_wait_ms in &[0, 4] {
        v.extend(
            batches
                .iter()
                .map(|&batch| DiskSchedSpec::yfq(batch, t_wait_ms)),
        );
    }
    v.extend(CHART_BASELINES);
    v
}

/// The baselines without a parameter sweep, drawn as flat lines beside
/// BFQ's curve: CFQ (100 ms slices), C-LOOK and AS.
pub const CHART_BASELINES: [DiskSchedSpec; 3] = [
    DiskSchedSpec::cfq(100),
    DiskSchedSpec::CLook,
    DiskSchedSpec::anticipatory(),
];

/// The thesis' best aggregate throughput of 2 readers (MB/s) for the
/// configuration its table names; `None` for a configuration the table
/// does not list.
pub fn thesis_throughput(spec: &DiskSchedSpec) -> Option<f64> {
    find(THROUGHPUT_2_FILES, spec, |r| r.0).map(|r| r.1)
}

/// One run of the sweep.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ThroughputRun {
    /// The scheduler.
    pub spec: DiskSchedSpec,
    /// Concurrent readers.
    pub files: usize,
    /// Aggregate throughput, MB/s.
    pub aggregate_mb_s: f64,
}

/// BFQ's curve for `files` readers: (B_max in sectors, MB/s) in run order.
pub fn bfq_curve(runs: &[ThroughputRun], files: usize) -> Vec<(f64, f64)> {
    runs.iter()
        .filter_map(|r| match r.spec {
            DiskSchedSpec::Bfq { b_max, .. } if r.files == files => {
                Some((f64::from(b_max), r.aggregate_mb_s))
            }
            _ => None,
        })
        .collect()
}

/// The aggregate throughput of `spec` with `files` readers, if it ran.
pub fn run_of(runs: &[ThroughputRun], spec: &DiskSchedSpec, files: usize) -> Option<f64> {
    runs.iter()
        .find(|r| r.spec == *spec && r.files == files)
        .map(|r| r.aggregate_mb_s)
}
