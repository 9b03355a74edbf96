//! Why a simulated disk experiment ([`super::seq_readers()`],
//! [`super::web_server()`], [`super::streaming()`]) refused to run:
//! [`DiskRunError`].

use fairway_disk::catalogue::DiskSpecError;
use fairway_disk::DiskConfigError;

/// Why a simulated disk experiment refused to run.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum DiskRunError {
    /// A scheduler refused its configuration or an application.
    #[error(transparent)]
    Sched(#[from] DiskSpecError),
    /// A reader's file is larger than its slice of the disk (1/30 of it):
    /// it is refused, not cut to the slice.
    #[error("a file of {file_mb} MB does not fit a slice of this disk ({slice_mb} MB, 1/30 of its capacity)")]
    FileTooLarge {
        /// The file asked for, MB (10^6 bytes).
        file_mb: u64,
        /// The largest file a slice holds, MB.
        slice_mb: u64,
    },
    /// The disk is smaller than the experiments' layout needs.
    #[error("the disk holds {capacity} sectors, fewer than the {min} the experiments need (30 slices of 32 MiB)")]
    DiskTooSmall {
        /// The disk's capacity, sectors.
        capacity: u64,
        /// The least capacity, sectors.
        min: u64,
    },
}

impl From<DiskConfigError> for DiskRunError {
    fn from(e: DiskConfigError) -> Self {
        Self::Sched(DiskSpecError::Refused(e))
    }
}
