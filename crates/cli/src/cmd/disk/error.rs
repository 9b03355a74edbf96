//! Why a `fairway disk` command failed: [`DiskCmdError`], each printed as
//! one line.

pub use crate::cmd::flag::FlagError;
use crate::cmd::json::JsonError;
use crate::cmd::outputs::OutputError;
use crate::cmd::stdout::StdoutError;
use fairway_disk::catalogue::DiskSpecError;
use fairway_disk::cost::CostError;
use fairway_eval::chart::ChartError;
use fairway_lab::disk::kernel_bfq::KernelError;
use fairway_lab::disk::{DiskRunError, DriveError};
use std::fmt;

/// Why a `fairway disk` command failed.
#[derive(Debug)]
pub enum DiskCmdError {
    /// A flag's value.
    Flag(FlagError),
    /// Standard output could not be written.
    Stdout(StdoutError),
    /// The drive could not be loaded (`--disk`).
    Drive(DriveError),
    /// A scheduler or an application refused its configuration.
    Sched(DiskSpecError),
    /// The chart file cannot be written.
    Output(OutputError),
    /// A JSON line could not be made.
    Json(JsonError),
    /// The chart file could not be drawn or written.
    Chart(ChartError),
    /// A simulated experiment refused to run.
    Run(DiskRunError),
    /// The drive of `--disk` is too small for an experiment's files.
    DiskTooSmallFor {
        /// The drive's file.
        path: String,
        /// The experiment.
        experiment: &'static str,
        /// Why.
        error: DiskRunError,
    },
    /// The add+dispatch benchmark failed.
    Bench(CostError),
    /// The kernel comparison failed once started.
    Kernel(KernelError),
    /// The S-suite benchmark failed (rather than skipped).
    #[cfg(target_os = "linux")]
    SBench(fairway_lab::disk::s_bench::SBenchError),
    /// The kernel comparison cannot run on this machine or as this user:
    /// what it lacks (exit status 3).
    CannotRun(String),
}

impl fmt::Display for DiskCmdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Flag(e) => write!(f, "{e}"),
            Self::Stdout(e) => write!(f, "{e}"),
            Self::Drive(e) => write!(f, "{e}"),
            Self::Sched(e) => write!(f, "{e}"),
            Self::Chart(e) => write!(f, "{e}"),
            Self::Output(e) => write!(f, "{e}"),
            Self::Json(e) => write!(f, "{e}"),
            Self::Run(e) => write!(f, "{e}"),
            Self::DiskTooSmallFor {
                path,
                experiment,
                error,
            } => write!(f, "{path}: {experiment}: {error}"),
            Self::Bench(e) => write!(f, "{e}"),
            Self::Kernel(e) => write!(f, "{e}"),
            #[cfg(target_os = "linux")]
            Self::SBench(e) => write!(f, "{e}"),
            Self::CannotRun(why) => write!(f, "disk kernel cannot run here: {why}"),
        }
    }
}

impl std::error::Error for DiskCmdError {}

impl From<FlagError> for DiskCmdError {
    fn from(e: FlagError) -> Self {
        Self::Flag(e)
    }
}

impl From<StdoutError> for DiskCmdError {
    fn from(e: StdoutError) -> Self {
        Self::Stdout(e)
    }
}

impl From<DriveError> for DiskCmdError {
    fn from(e: DriveError) -> Self {
        Self::Drive(e)
    }
}

impl From<ChartError> for DiskCmdError {
    fn from(e: ChartError) -> Self {
        Self::Chart(e)
    }
}

impl From<DiskSpecError> for DiskCmdError {
    fn from(e: DiskSpecError) -> Self {
        Self::Sched(e)
    }
}

impl From<OutputError> for DiskCmdError {
    fn from(e: OutputError) -> Self {
        Self::Output(e)
    }
}

impl From<JsonError> for DiskCmdError {
    fn from(e: JsonError) -> Self {
        Self::Json(e)
    }
}

impl From<KernelError> for DiskCmdError {
    fn from(e: KernelError) -> Self {
        Self::Kernel(e)
    }
}

impl From<CostError> for DiskCmdError {
    fn from(e: CostError) -> Self {
        Self::Bench(e)
    }
}

impl From<DiskRunError> for DiskCmdError {
    fn from(e: DiskRunError) -> Self {
        Self::Run(e)
    }
}
