//! The BFQ thesis' weighted bandwidth distribution on the simulated drive,
//! through the experiment `fairway disk shares` runs.

use fairway_disk::catalogue::DiskSchedSpec;
use fairway_disk::model::DiskModel;
use fairway_disk::readahead::ReadAhead;
use fairway_lab::disk::units::MIN_CAPACITY_SECTORS;
use fairway_lab::disk::{seq_readers, DiskRunError};

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

/// A file larger than its slice (1/30 of the disk, 1024 MB on the
/// simulated drive) is refused, not cut to the slice; a disk too small for
/// the slices is refused before anything runs.
#[test]
fn a_file_larger_than_its_slice_or_a_tiny_disk_is_refused() {
    let disk = DiskModel::dtla_307030();
    let run = |mb, disk: &DiskModel| {
        seq_readers(DiskSchedSpec::bfq(4096), &[1, 2], mb, ReadAhead::NONE, disk)
    };
    assert_eq!(
        run(1025, &disk).unwrap_err(),
        DiskRunError::FileTooLarge {
            file_mb: 1025,
            slice_mb: 1024
        }
    );
    assert!(matches!(
        run(u64::MAX, &disk),
        Err(DiskRunError::FileTooLarge { .. })
    ));
    let mut p = disk.params().clone();
    p.zones.truncate(1);
    p.zones[0].cylinders = 2;
    let tiny = DiskModel::new(p).unwrap();
    assert!(tiny.capacity() < MIN_CAPACITY_SECTORS);
    assert!(matches!(
        run(1, &tiny),
        Err(DiskRunError::DiskTooSmall { .. })
    ));
}
