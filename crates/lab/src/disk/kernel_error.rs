//! Why the kernel comparison ([`super::kernel_bfq`]) failed once it had
//! started (as opposed to being skipped for want of root, a tool or a
//! kernel feature): [`KernelError`], one line each, naming the command,
//! file or setting that failed.

use fairway_disk::catalogue::DiskSpecError;
use fairway_disk::file_device::FileIoError;
use fairway_disk::uring_device::UringError;
use fairway_disk::DiskConfigError;

/// Why the kernel comparison failed.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    /// A tool could not be started.
    #[error("cannot run {cmd}: {error}")]
    Spawn {
        /// The tool.
        cmd: &'static str,
        /// The operating system's error.
        error: std::io::Error,
    },
    /// A tool exited with a failure; `stderr` is its error output on one
    /// line.
    #[error("{cmd} {args}: {stderr}")]
    Command {
        /// The tool.
        cmd: &'static str,
        /// Its arguments, space separated.
        args: String,
        /// What it wrote on standard error, lines joined.
        stderr: String,
    },
    /// A file (the loop device's image, the device) could not be created,
    /// written, opened or read.
    #[error("{path}: {error}")]
    File {
        /// The file.
        path: String,
        /// The operating system's error.
        error: std::io::Error,
    },
    /// A block-queue setting could not be written.
    #[error("{setting} = {value}: {error}")]
    Setting {
        /// The sysfs file under the device's `queue/`.
        setting: &'static str,
        /// The value written.
        value: &'static str,
        /// The operating system's error.
        error: std::io::Error,
    },
    /// fio's report is not JSON.
    #[error("fio output: {0}")]
    FioJson(serde_json::Error),
    /// fio's report lacks a reader's bandwidth.
    #[error("fio output: no read bandwidth for job {job}")]
    FioBandwidth {
        /// The job's index.
        job: usize,
    },
    /// fio's report has not one job per reader.
    #[error("fio output: {found} jobs, expected {expected}")]
    FioJobs {
        /// Jobs reported.
        found: usize,
        /// Readers run.
        expected: usize,
    },
    /// fairway's BFQ refused its configuration.
    #[error("fairway BFQ: {0}")]
    Sched(#[from] DiskSpecError),
    /// fairway's BFQ refused a reader's weight.
    #[error("fairway BFQ: {0}")]
    Admit(#[from] DiskConfigError),
    /// The `pread` device thread could not start.
    #[error("device thread: {0}")]
    Device(std::io::Error),
    /// The io_uring device could not start.
    #[error("io_uring device: {0}")]
    Uring(UringError),
    /// A reader's transfer failed.
    #[error("reader {reader}: {error}")]
    Read {
        /// The reader's index.
        reader: usize,
        /// Why the transfer failed.
        error: FileIoError,
    },
    /// A reader's thread ended without a result.
    #[error("reader {reader}: its thread panicked")]
    ReaderPanicked {
        /// The reader's index.
        reader: usize,
    },
}
