//! Units and the disk layout the BFQ thesis' §2.4 experiments share: the
//! disk split into [`SLICES`] equal slices, slice 0 outermost (fastest),
//! and throughput in MB/s.

use super::run_error::DiskRunError;
use fairway_disk::model::DiskModel;
use fairway_disk::{Nanos, SECTOR_BYTES};

/// Number of disk slices (§2.4).
pub const SLICES: u64 = 30;
/// The least sectors per slice the experiments run on (32 MiB: a web
/// server's large files and a stream's region fit with room to spare).
pub const MIN_SLICE_SECTORS: u64 = 1 << 16;
/// The least capacity the experiments run on, sectors.
pub const MIN_CAPACITY_SECTORS: u64 = SLICES * MIN_SLICE_SECTORS;

/// Refuses a disk smaller than [`MIN_CAPACITY_SECTORS`].
pub fn check_capacity(disk: &DiskModel) -> Result<(), DiskRunError> {
    if disk.capacity() < MIN_CAPACITY_SECTORS {
        return Err(DiskRunError::DiskTooSmall {
            capacity: disk.capacity(),
            min: MIN_CAPACITY_SECTORS,
        });
    }
    Ok(())
}
/// One second in ns.
pub const SEC: Nanos = 1_000_000_000;

/// `sectors` transferred in `t` ns, in MB/s (0 for no time).
pub fn mb_per_s(sectors: u64, t: Nanos) -> f64 {
    if t == 0 {
        return 0.0;
    }
    (sectors * SECTOR_BYTES) as f64 / 1e6 / (t as f64 / 1e9)
}
