//! The BFQ thesis' weighted bandwidth distribution on the simulated drive,
//! through the experiment `fairway disk shares` runs.

use fairway_disk::catalogue::DiskSchedSpec;
use fairway_disk::model::DiskModel;
use fairway_disk::readahead::ReadAhead;
use fairway_lab::disk::seq_readers;

/// The thesis' weighted bandwidth distribution (largest file 256 MB for
/// 1:2, 1 GB for 1:2:10, as in §2.4): shares within 3 % of the weights
/// (relative), on the simulated drive.
#[test]
fn bfq_shares_follow_the_weights() {
    let disk = DiskModel::dtla_307030();
    for (w, mb) in [(vec![1, 2], 256), (vec![1, 2, 10], 1024)] {
        let r = seq_readers(DiskSchedSpec::bfq(4096), &w, mb, ReadAhead::NONE, &disk).unwrap();
        let sum: f64 = w.iter().map(|&x| f64::from(x)).sum();
        for (i, &x) in w.iter().enumerate() {
            let want = f64::from(x) / sum;
            let got = r.per_app_mb_s[i] / r.aggregate_mb_s;
            assert!(
                (got / want - 1.0).abs() < 0.03,
                "weights {w:?}: app {i} share {got:.4}, want {want:.4}"
            );
        }
    }
}
