//! The BFQ thesis' disk experiments: §2.4's four experiments on the
//! simulated IBM-DTLA-307030 (aggregate throughput against B_max, the
//! bandwidth distribution, the web server, streaming) beside the thesis'
//! numbers, App. C.5.1's validation of the real-time emulated disk, and a
//! side-by-side comparison with Linux's BFQ on a loop device. The
//! schedulers, the disk model, the simulator and the devices are
//! `fairway_disk`'s; a scheduler is chosen by its catalogue spec
//! ([`DiskSchedSpec`]), and every result carries that spec, so results are
//! matched to the thesis' rows and to each other by type.
//!
//! * [`sequential`]: sequential readers, run by [`throughput`] (Fig. 5)
//!   and [`shares`] (the bandwidth distribution);
//! * [`mod@web_server`], [`mod@streaming`]: the other two workloads;
//! * [`thesis`]: the thesis' numbers and the configurations its tables
//!   compare; [`drive`]: the drive to run on;
//! * [`validate`]: App. C.5.1; [`kernel_bfq`]: the kernel comparison,
//!   [`kernel_error`]: why it failed; [`run_error`]: why a simulated
//!   experiment refused to run.

pub mod drive;
pub mod kernel_bfq;
pub mod kernel_error;
pub mod run_error;
#[cfg(target_os = "linux")]
pub mod s_bench;
pub mod sequential;
pub mod shares;
pub mod streaming;
pub mod thesis;
pub mod throughput;
pub mod units;
pub mod validate;
pub mod web_server;

pub use drive::{load_drive, DriveError, MAX_DRIVE_FILE_BYTES};
pub use fairway_disk::catalogue::{DiskSchedKind, DiskSchedSpec, DiskSpecError};
pub use run_error::DiskRunError;
pub use sequential::{max_file_mb, seq_readers, SeqResult};
pub use shares::{share_jobs, worst_share_error, ShareJob};
pub use streaming::{streaming, StreamResult, StreamSetup};
pub use thesis::{SHARE_SPECS, STREAM_SPECS};
pub use throughput::{thesis_throughput, throughput_specs, ThroughputRun};
pub use units::SEC;
pub use web_server::{web_server, WebResult};
