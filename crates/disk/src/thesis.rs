//! The numbers seed 004 §2.4 reports (Linux 2.6.21 on an IBM-DTLA-307030,
//! mean of 20 runs), printed beside the simulator's.

/// Aggregate throughput of 2 readers of 128 MB files, best configuration
/// of each scheduler, MB/s (first table of §2.4): (label, MB/s, parameter).
pub const THROUGHPUT_2_FILES: &[(&str, f64, &str)] = &[
    ("BFQ", 22.46, "16384 sect"),
    ("SCAN-EDF T_wait 0", 21.18, "640 ms"),
    ("SCAN-EDF T_wait 4", 23.39, "640 ms"),
    ("YFQ T_wait 0", 10.64, "16 reqs"),
    ("YFQ T_wait 4", 10.80, "16 reqs"),
    ("CFQ", 16.91, "100 ms"),
    ("C-LOOK", 20.59, ""),
    ("AS", 32.97, ""),
];

/// Per-reader throughput, equal weights, 128 MB files, MB/s (§2.4): label,
/// 2 files (first, last), 5 files.
pub const EQUAL_SHARES: &[(&str, [f64; 2], [f64; 5])] = &[
    (
        "BFQ 4096 sect",
        [9.95, 9.81],
        [4.29, 4.30, 4.30, 4.29, 4.31],
    ),
    (
        "SCAN-EDF Δ 80 ms, T_wait 4 ms",
        [10.72, 9.62],
        [2.17, 2.17, 2.17, 2.17, 2.19],
    ),
    (
        "YFQ 4 reqs, T_wait 4 ms",
        [5.44, 5.44],
        [1.39, 1.39, 1.39, 1.39, 1.39],
    ),
    ("CFQ 100 ms", [11.92, 8.61], [5.24, 4.91, 4.66, 4.37, 4.01]),
    ("C-LOOK", [11.52, 10.57], [5.56, 5.14, 5.05, 4.95, 4.83]),
    ("AS", [32.41, 17.78], [32.83, 31.72, 29.80, 12.56, 18.29]),
];

/// BFQ (B_max 4096) per-reader throughput with weights, MB/s (§2.4's two
/// weighted tables): weights, MB/s per reader.
pub const WEIGHTED_SHARES: &[(&[u32], &[f64])] = &[
    (&[2, 1], &[14.62, 7.31]),
    (&[2, 2, 2, 1, 1], &[5.60, 5.60, 5.60, 2.81, 2.81]),
    (&[10, 1], &[26.81, 2.77]),
    (&[10, 2, 2, 1, 1], &[16.06, 3.25, 3.25, 1.64, 1.65]),
];

/// Web-server workload (§2.4): label, small-file completion time s,
/// large-file bandwidth MB/s, aggregate throughput MB/s.
pub const WEB_SERVER: &[(&str, f64, f64, f64)] = &[
    ("BFQ 4096 sect", 1.74, 2.26, 17.13),
    ("SCAN-EDF Δ 80 ms, T_wait 4 ms", 7.68, 3.29, 8.71),
    ("YFQ 4 reqs, T_wait 4 ms", 0.40, 1.36, 6.87),
    ("CFQ 100 ms", 3.86, 2.97, 18.20),
    ("C-LOOK", 7.78, 9.65, 19.47),
    ("AS", 7.69, 16.61, 20.60),
];

/// Streaming workload (§2.4): label, streams sustained, aggregate MB/s.
pub const STREAMING: &[(&str, f64, f64)] = &[
    ("BFQ 4096 sect", 24.00, 7.56),
    ("BFQ 8192 sect", 23.95, 8.15),
    ("BFQ 16384 sect", 18.70, 12.78),
    ("SCAN-EDF Δ 20 ms, T_wait 4 ms", 12.00, 8.93),
    ("YFQ 4 reqs, T_wait 4 ms", 19.00, 5.85),
    ("CFQ 20 ms", 14.35, 12.59),
    ("C-LOOK", 1.8, 22.66),
    ("AS", 1.1, 28.39),
];

/// Looks a label up in a table of (label, ...) rows.
pub fn find<'a, T>(table: &'a [T], label: &str, key: impl Fn(&T) -> &str) -> Option<&'a T> {
    table.iter().find(|r| key(r) == label)
}
