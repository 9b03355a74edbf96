//! Why a `fairway disk` command failed: [`DiskCmdError`], each printed as
//! one line.

use fairway_disk::catalogue::DiskSpecError;
use fairway_disk::DiskConfigError;
use fairway_eval::chart::ChartError;
use fairway_lab::disk::DriveError;
use std::fmt;

/// A flag whose value the command cannot take; the message names the flag
/// and what it accepts.
#[derive(Debug)]
pub enum FlagError {
    /// An entry of a comma-separated list is not a number.
    NotANumber {
        /// The flag.
        flag: &'static str,
        /// The entry.
        text: String,
    },
    /// An entry of a list of counts is outside its range.
    CountOutOfRange {
        /// The flag.
        flag: &'static str,
        /// The accepted range.
        range: &'static str,
    },
    /// A value outside its range.
    OutOfRange {
        /// The flag.
        flag: &'static str,
        /// The accepted range.
        range: String,
        /// Why the range is what it is, if the message says.
        why: Option<&'static str>,
    },
    /// A value that is none of the accepted words.
    NotOneOf {
        /// The flag.
        flag: &'static str,
        /// The value given.
        text: String,
        /// The accepted words, comma separated.
        choices: &'static str,
    },
    /// A value the disk library refuses, with its reason.
    Invalid {
        /// The flag.
        flag: &'static str,
        /// The library's reason.
        error: DiskConfigError,
    },
    /// A flag that only applies together with another.
    Needs {
        /// The flag.
        flag: &'static str,
        /// What it needs.
        needs: &'static str,
    },
    /// `--chart` on a command that draws none.
    NoChart {
        /// The command.
        command: &'static str,
    },
    /// `fairway disk bench`'s `--pairs` or `--rounds` outside its range.
    PairsOrRounds,
}

impl fmt::Display for FlagError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotANumber { flag, text } => write!(f, "{flag}: '{text}' is not a valid number"),
            Self::CountOutOfRange { flag, range } => {
                write!(f, "{flag}: each count must be in {range}")
            }
            Self::OutOfRange { flag, range, why } => {
                write!(f, "{flag} must be in {range}")?;
                match why {
                    Some(why) => write!(f, " ({why})"),
                    None => Ok(()),
                }
            }
            Self::NotOneOf {
                flag,
                text,
                choices,
            } => write!(f, "{flag}: '{text}' is not one of {choices}"),
            Self::Invalid { flag, error } => write!(f, "{flag}: {error}"),
            Self::Needs { flag, needs } => write!(f, "{flag} needs {needs}"),
            Self::NoChart { command } => write!(f, "--chart: {command} draws no chart"),
            Self::PairsOrRounds => {
                write!(f, "--pairs must be in 1..=2^30 and --rounds in 1..=1000")
            }
        }
    }
}

/// Why a `fairway disk` command failed.
#[derive(Debug)]
pub enum DiskCmdError {
    /// A flag's value.
    Flag(FlagError),
    /// The drive could not be loaded (`--disk`).
    Drive(DriveError),
    /// A scheduler or an application refused its configuration.
    Sched(DiskSpecError),
    /// An output (the chart file, a JSON line) could not be written.
    Output(String),
    /// The chart file could not be drawn or written.
    Chart(ChartError),
    /// The kernel comparison failed (rather than skipped).
    Kernel(String),
}

impl fmt::Display for DiskCmdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Flag(e) => write!(f, "{e}"),
            Self::Drive(e) => write!(f, "{e}"),
            Self::Sched(e) => write!(f, "{e}"),
            Self::Chart(e) => write!(f, "{e}"),
            Self::Output(e) | Self::Kernel(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for DiskCmdError {}

impl From<FlagError> for DiskCmdError {
    fn from(e: FlagError) -> Self {
        Self::Flag(e)
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
