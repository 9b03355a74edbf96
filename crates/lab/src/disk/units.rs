//! Units and the disk layout the BFQ thesis' §2.4 experiments share: the
//! disk split into [`SLICES`] equal slices, slice 0 outermost (fastest),
//! and throughput in MB/s.

use fairway_disk::{Nanos, SECTOR_BYTES};

/// Number of disk slices (§2.4).
pub const SLICES: u64 = 30;
/// One second in ns.
pub const SEC: Nanos = 1_000_000_000;

/// `sectors` transferred in `t` ns, in MB/s (0 for no time).
pub fn mb_per_s(sectors: u64, t: Nanos) -> f64 {
    if t == 0 {
        return 0.0;
    }
    (sectors * SECTOR_BYTES) as f64 / 1e6 / (t as f64 / 1e9)
}
