//! The numbers the BFQ thesis reports in §2.4 (Linux 2.6.21 on an
//! IBM-DTLA-307030, mean of 20 runs), printed beside the simulator's, and
//! the scheduler configurations its tables compare. Every row is keyed by
//! its configuration's [`DiskSchedSpec`], so a result finds its row by
//! type ([`find`]), not by its printed label.

use fairway_disk::catalogue::DiskSchedSpec;

/// The schedulers of the thesis' equal-share table and web-server table.
pub const SHARE_SPECS: [DiskSchedSpec; 6] = [
    DiskSchedSpec::bfq(4096),
    DiskSchedSpec::scan_edf(80, 4),
    DiskSchedSpec::yfq(4, 4),
    DiskSchedSpec::cfq(100),
    DiskSchedSpec::CLook,
    DiskSchedSpec::anticipatory(),
];

/// The schedulers of the thesis' streaming table.
pub const STREAM_SPECS: [DiskSchedSpec; 8] = [
    DiskSchedSpec::bfq(4096),
    DiskSchedSpec::bfq(8192),
    DiskSchedSpec::bfq(16384),
    DiskSchedSpec::scan_edf(20, 4),
    DiskSchedSpec::yfq(4, 4),
    DiskSchedSpec::cfq(20),
    DiskSchedSpec::CLook,
    DiskSchedSpec::anticipatory(),
];

/// Aggregate throughput of 2 readers of 128 MB files, the best
/// configuration of each scheduler, MB/s (first table of §2.4).
pub const THROUGHPUT_2_FILES: &[(DiskSchedSpec, f64)] = &[
    (DiskSchedSpec::bfq(16384), 22.46),
    (DiskSchedSpec::scan_edf(640, 0), 21.18),
    (DiskSchedSpec::scan_edf(640, 4), 23.39),
    (DiskSchedSpec::yfq(16, 0), 10.64),
    (DiskSchedSpec::yfq(16, 4), 10.80),
    (DiskSchedSpec::cfq(100), 16.91),
    (DiskSchedSpec::CLook, 20.59),
    (DiskSchedSpec::anticipatory(), 32.97),
];

/// Per-reader throughput, equal weights, 128 MB files, MB/s (§2.4):
/// scheduler, 2 files (first, last), 5 files.
pub const EQUAL_SHARES: &[(DiskSchedSpec, [f64; 2], [f64; 5])] = &[
    (
        DiskSchedSpec::bfq(4096),
        [9.95, 9.81],
        [4.29, 4.30, 4.30, 4.29, 4.31],
    ),
    (
        DiskSchedSpec::scan_edf(80, 4),
        [10.72, 9.62],
        [2.17, 2.17, 2.17, 2.17, 2.19],
    ),
    (
        DiskSchedSpec::yfq(4, 4),
        [5.44, 5.44],
        [1.39, 1.39, 1.39, 1.39, 1.39],
    ),
    (
        DiskSchedSpec::cfq(100),
        [11.92, 8.61],
        [5.24, 4.91, 4.66, 4.37, 4.01],
    ),
    (
        DiskSchedSpec::CLook,
        [11.52, 10.57],
        [5.56, 5.14, 5.05, 4.95, 4.83],
    ),
    (
        DiskSchedSpec::anticipatory(),
        [32.41, 17.78],
        [32.83, 31.72, 29.80, 12.56, 18.29],
    ),
];

/// BFQ (B_max 4096) per-reader throughput with weights, MB/s (§2.4's two
/// weighted tables): weights, MB/s per reader.
pub const WEIGHTED_SHARES: &[(&[u32], &[f64])] = &[
    (&[2, 1], &[14.62, 7.31]),
    (&[2, 2, 2, 1, 1], &[5.60, 5.60, 5.60, 2.81, 2.81]),
    (&[10, 1], &[26.81, 2.77]),
    (&[10, 2, 2, 1, 1], &[16.06, 3.25, 3.25, 1.64, 1.65]),
];

/// The 10:1 weighted run of the other weighted schedulers (§2.4): scheduler,
/// MB/s of the weight-10 and the weight-1 reader.
pub const WEIGHTED_10_1: &[(DiskSchedSpec, [f64; 2])] = &[
    (DiskSchedSpec::scan_edf(80, 4), [26.58, 6.92]),
    (DiskSchedSpec::yfq(4, 4), [22.70, 5.41]),
];

/// Web-server workload (§2.4): scheduler, small-file completion time s,
/// large-file bandwidth MB/s, aggregate throughput MB/s.
pub const WEB_SERVER: &[(DiskSchedSpec, f64, f64, f64)] = &[
    (DiskSchedSpec::bfq(4096), 1.74, 2.26, 17.13),
    (DiskSchedSpec::scan_edf(80, 4), 7.68, 3.29, 8.71),
    (DiskSchedSpec::yfq(4, 4), 0.40, 1.36, 6.87),
    (DiskSchedSpec::cfq(100), 3.86, 2.97, 18.20),
    (DiskSchedSpec::CLook, 7.78, 9.65, 19.47),
    (DiskSchedSpec::anticipatory(), 7.69, 16.61, 20.60),
];

/// Streaming workload (§2.4): scheduler, streams sustained, aggregate MB/s.
pub const STREAMING: &[(DiskSchedSpec, f64, f64)] = &[
    (DiskSchedSpec::bfq(4096), 24.00, 7.56),
    (DiskSchedSpec::bfq(8192), 23.95, 8.15),
    (DiskSchedSpec::bfq(16384), 18.70, 12.78),
    (DiskSchedSpec::scan_edf(20, 4), 12.00, 8.93),
    (DiskSchedSpec::yfq(4, 4), 19.00, 5.85),
    (DiskSchedSpec::cfq(20), 14.35, 12.59),
    (DiskSchedSpec::CLook, 1.8, 22.66),
    (DiskSchedSpec::anticipatory(), 1.1, 28.39),
];

/// The row of `spec` in a table whose rows `key` gives the scheduler of.
pub fn find<'a, T>(
    table: &'a [T],
    spec: &DiskSchedSpec,
    key: impl Fn(&T) -> DiskSchedSpec,
) -> Option<&'a T> {
    table.iter().find(|r| key(r) == *spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every table's configurations are in the catalogue's ranges and
    /// print as the thesis' rows do.
    #[test]
    fn every_configuration_is_a_valid_spec_with_the_thesis_label() {
        let specs = SHARE_SPECS
            .iter()
            .chain(&STREAM_SPECS)
            .chain(THROUGHPUT_2_FILES.iter().map(|r| &r.0))
            .chain(WEIGHTED_10_1.iter().map(|r| &r.0));
        for s in specs {
            assert_eq!(s.check(), Ok(()), "{s:?}");
        }
        let labels: Vec<String> = STREAM_SPECS.iter().map(|s| s.label()).collect();
        assert_eq!(
            labels,
            [
                "BFQ 4096 sect",
                "BFQ 8192 sect",
                "BFQ 16384 sect",
                "SCAN-EDF Δ 20 ms, T_wait 4 ms",
                "YFQ 4 reqs, T_wait 4 ms",
                "CFQ 20 ms",
                "C-LOOK",
                "AS"
            ]
        );
        // The share and web-server tables list exactly the share schedulers.
        for s in SHARE_SPECS {
            assert!(find(EQUAL_SHARES, &s, |r| r.0).is_some(), "{s:?}");
            assert!(find(WEB_SERVER, &s, |r| r.0).is_some(), "{s:?}");
        }
        assert!(find(STREAMING, &DiskSchedSpec::cfq(100), |r| r.0).is_none());
    }
}
