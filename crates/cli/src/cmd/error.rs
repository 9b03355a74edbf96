//! Why a `fairway` command failed: [`CliError`], printed by `main` as one
//! line after `fairway: error: `. It wraps the libraries' own errors, whose
//! messages it prints unchanged, and the command line's: flags
//! ([`FlagError`]), output paths ([`OutputError`]) and JSON ([`JsonError`]).

use super::disk::error::DiskCmdError;
use super::flag::FlagError;
use super::json::JsonError;
use super::outputs::OutputError;
use super::shape::control::ControlFailed;
use super::shape::{ShapeCheckFailed, ShapeRunFailed};
use super::stdout::StdoutError;
use fairway_core::SpecError;
use fairway_eval::chart::ChartError;
use fairway_eval::cost::CostError;
use fairway_eval::guarantees::GuaranteeError;
use fairway_eval::netsim::NetsimError;
use fairway_eval::policy::run::RunError;
use fairway_eval::pq_bench::PqBenchError;
use fairway_eval::traffic::PatternError;
use fairway_eval::workload::FlowSetError;
use fairway_lab::arbiter_bench::ArbiterBenchError;
use fairway_lab::reproduce::ReproduceError;
use fairway_policy_file::PolicyFileError;
use std::fmt;
use std::io;
use std::path::PathBuf;

/// Why a command failed.
#[derive(Debug)]
pub enum CliError {
    /// A flag's value.
    Flag(FlagError),
    /// Standard output could not be written (a closed pipe, a full disk).
    Stdout(StdoutError),
    /// An output path a flag names.
    Output(OutputError),
    /// A report that could not be turned into JSON.
    Json(JsonError),
    /// A report file that could not be written.
    Write {
        /// The file.
        path: PathBuf,
        /// The file system's reason.
        error: io::Error,
    },
    /// A scheduler spec.
    Spec(SpecError),
    /// A flow set or packet-size distribution.
    FlowSet(FlowSetError),
    /// An enqueue pattern.
    Pattern(PatternError),
    /// The guarantee experiment.
    Guarantee(GuaranteeError),
    /// The cost measurement.
    Cost(CostError),
    /// The priority-queue benchmark.
    PqBench(PqBenchError),
    /// A chart.
    Chart(ChartError),
    /// The network simulation.
    Netsim(NetsimError),
    /// A policy file.
    PolicyFile(PolicyFileError),
    /// A policy run.
    PolicyRun(RunError),
    /// The reproduction of the papers.
    Reproduce(ReproduceError),
    /// The arbiter benchmark.
    ArbiterBench(ArbiterBenchError),
    /// The UDP benchmark's configuration.
    #[cfg(target_os = "linux")]
    UdpConfig(fairway_lab::udp_bench::ConfigError),
    /// The UDP benchmark's run.
    #[cfg(target_os = "linux")]
    UdpBench(fairway_lab::udp_bench::BenchError),
    /// The UDP benchmark's CSV files or charts.
    #[cfg(target_os = "linux")]
    UdpReport(fairway_lab::udp_bench::ReportError),
    /// The interrupt handler could not be installed.
    Interrupt(io::Error),
    /// A real-packet run stopped by SIGINT or SIGTERM.
    #[cfg(target_os = "linux")]
    Interrupted(super::udp_bench::Interrupted),
    /// A `fairway disk` command.
    Disk(DiskCmdError),
    /// A shaper configuration with problems (`fairway shape --check`).
    Shape(ShapeCheckFailed),
    /// The shaper could not run (`fairway shape`).
    ShapeRun(ShapeRunFailed),
    /// A running shaper's control socket or metrics endpoint.
    ShapeControl(ControlFailed),
    /// `fairway shape bench`.
    #[cfg(target_os = "linux")]
    ShapeBench(fairway_lab::shape_bench::BenchError),
    /// A command that needs what this machine or user lacks.
    Needs {
        /// The command.
        command: &'static str,
        /// What it needs, and why.
        what: &'static str,
    },
    /// A measurement the user asked for cannot run on this machine or as
    /// this user (a missing tool, not root): exit status
    /// [`EXIT_CANNOT_RUN`], not 1, so that a script can tell "not measured
    /// here" from "measured and failed".
    CannotRun {
        /// The command.
        command: &'static str,
        /// What it lacks, naming the prerequisite.
        why: String,
    },
    /// Claims of the papers that do not hold (`fairway reproduce`).
    ClaimsFailed {
        /// Claims that failed.
        failed: usize,
        /// Claims checked, skipped ones included.
        total: usize,
        /// The report to read.
        report: PathBuf,
    },
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Flag(e) => e.fmt(f),
            Self::Stdout(e) => e.fmt(f),
            Self::Output(e) => e.fmt(f),
            Self::Json(e) => e.fmt(f),
            Self::Write { path, error } => write!(f, "writing {}: {error}", path.display()),
            Self::Spec(e) => e.fmt(f),
            Self::FlowSet(e) => e.fmt(f),
            Self::Pattern(e) => e.fmt(f),
            Self::Guarantee(e) => e.fmt(f),
            Self::Cost(e) => e.fmt(f),
            Self::PqBench(e) => e.fmt(f),
            Self::Chart(e) => e.fmt(f),
            Self::Netsim(e) => e.fmt(f),
            Self::PolicyFile(e) => e.fmt(f),
            Self::PolicyRun(e) => e.fmt(f),
            Self::Reproduce(e) => e.fmt(f),
            Self::ArbiterBench(e) => e.fmt(f),
            #[cfg(target_os = "linux")]
            Self::UdpConfig(e) => e.fmt(f),
            #[cfg(target_os = "linux")]
            Self::UdpBench(e) => e.fmt(f),
            #[cfg(target_os = "linux")]
            Self::UdpReport(e) => e.fmt(f),
            Self::Interrupt(e) => write!(f, "cannot handle SIGINT and SIGTERM: {e}"),
            #[cfg(target_os = "linux")]
            Self::Interrupted(e) => e.fmt(f),
            Self::Disk(e) => e.fmt(f),
            Self::Shape(e) => e.fmt(f),
            Self::ShapeRun(e) => e.fmt(f),
            Self::ShapeControl(e) => e.fmt(f),
            #[cfg(target_os = "linux")]
            Self::ShapeBench(e) => e.fmt(f),
            Self::Needs { command, what } => write!(f, "{command} needs {what}"),
            Self::CannotRun { command, why } => write!(f, "{command} cannot run here: {why}"),
            Self::ClaimsFailed {
                failed,
                total,
                report,
            } => write!(
                f,
                "{failed} of {total} claims do not hold (see {})",
                report.display()
            ),
        }
    }
}

impl std::error::Error for CliError {}

/// Exit status of a measurement that could not run here (see
/// [`CliError::CannotRun`]); 1 is any other error, 2 a usage error.
pub const EXIT_CANNOT_RUN: u8 = 3;

impl CliError {
    /// The process's exit status for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::CannotRun { .. } | Self::Disk(DiskCmdError::CannotRun(_)) => EXIT_CANNOT_RUN,
            _ => 1,
        }
    }
}

/// `From` for each wrapped error, so that `?` converts.
macro_rules! from {
    ($($variant:ident($ty:ty)),* $(,)?) => {
        $(impl From<$ty> for CliError {
            fn from(e: $ty) -> Self {
                Self::$variant(e)
            }
        })*
    };
}

from!(
    Flag(FlagError),
    Stdout(StdoutError),
    Output(OutputError),
    Json(JsonError),
    Spec(SpecError),
    FlowSet(FlowSetError),
    Pattern(PatternError),
    Guarantee(GuaranteeError),
    Cost(CostError),
    PqBench(PqBenchError),
    Chart(ChartError),
    Netsim(NetsimError),
    PolicyFile(PolicyFileError),
    PolicyRun(RunError),
    Reproduce(ReproduceError),
    ArbiterBench(ArbiterBenchError),
    Disk(DiskCmdError),
    Shape(ShapeCheckFailed),
    ShapeRun(ShapeRunFailed),
    ShapeControl(ControlFailed),
);

#[cfg(target_os = "linux")]
from!(
    UdpConfig(fairway_lab::udp_bench::ConfigError),
    UdpBench(fairway_lab::udp_bench::BenchError),
    UdpReport(fairway_lab::udp_bench::ReportError),
    Interrupted(super::udp_bench::Interrupted),
);
