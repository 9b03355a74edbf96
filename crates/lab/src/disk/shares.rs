//! The bandwidth distribution of the BFQ thesis §2.4: sequential readers
//! ([`super::sequential`]) with equal weights (2 and 5 readers) under
//! every scheduler of the share table, BFQ with the weights 2:1,
//! 2:2:2:1:1, 10:1 and 10:2:2:1:1, and SCAN-EDF and YFQ at 10:1; each beside
//! the thesis' MB/s per reader.

use super::sequential::SeqResult;
use super::thesis::{find, EQUAL_SHARES, SHARE_SPECS, WEIGHTED_10_1, WEIGHTED_SHARES};
use fairway_disk::catalogue::DiskSchedSpec;

/// One run of the bandwidth distribution.
#[derive(Clone, Debug, PartialEq)]
pub struct ShareJob {
    /// The scheduler.
    pub spec: DiskSchedSpec,
    /// The readers' weights.
    pub weights: Vec<u32>,
    /// The largest reader's file, MB.
    pub file_mb: u64,
    /// The thesis' MB/s per reader, where it reports them.
    pub thesis: Option<Vec<f64>>,
}

/// The runs in the order the table prints them. The thesis' file sizes
/// are 128 MB for equal weights, 256 MB for the largest weight and 1 GB at
/// weight 10; `quick` takes 32 MB and 128 MB.
pub fn share_jobs(quick: bool) -> Vec<ShareJob> {
    let equal_mb = if quick { 32 } else { 128 };
    let mut jobs = Vec::new();
    for spec in SHARE_SPECS {
        let th = find(EQUAL_SHARES, &spec, |r| r.0);
        for (n, per_reader) in [(2, th.map(|r| r.1.to_vec())), (5, th.map(|r| r.2.to_vec()))] {
            jobs.push(ShareJob {
                spec,
                weights: vec![1; n],
                file_mb: equal_mb,
                thesis: per_reader,
            });
        }
    }
    for (w, mbs) in WEIGHTED_SHARES {
        let max = *w.iter().max().unwrap_or(&1);
        let file_mb = match (max, quick) {
            (10, false) => 1024,
            (_, false) => 256,
            (_, true) => 128,
        };
        jobs.push(ShareJob {
            spec: DiskSchedSpec::bfq(4096),
            weights: w.to_vec(),
            file_mb,
            thesis: Some(mbs.to_vec()),
        });
    }
    for (spec, mbs) in WEIGHTED_10_1 {
        jobs.push(ShareJob {
            spec: *spec,
            weights: vec![10, 1],
            file_mb: if quick { 128 } else { 1024 },
            thesis: Some(mbs.to_vec()),
        });
    }
    jobs
}

/// The worst reader's share error, `(its MB/s / aggregate MB/s) /
/// (its weight / weight sum) − 1`, the one largest in magnitude (0 for no
/// readers).
pub fn worst_share_error(r: &SeqResult) -> f64 {
    let wsum: f64 = r.weights.iter().map(|&x| f64::from(x)).sum();
    r.per_app_mb_s
        .iter()
        .zip(&r.weights)
        .map(|(v, &x)| (v / r.aggregate_mb_s) / (f64::from(x) / wsum) - 1.0)
        .fold(0.0f64, |m, e| if e.abs() > m.abs() { e } else { m })
}
