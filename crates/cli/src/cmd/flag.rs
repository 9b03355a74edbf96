//! Why a flag's value was refused: [`FlagError`], one line that names the
//! flag and what it accepts. Every subcommand reports its flags through it.

use super::units::UnitError;
use fairway_core::SpecError;
use fairway_disk::DiskConfigError;
use fairway_eval::workload::FlowSetError;
use std::fmt;

/// A library's reason for refusing a flag's value.
#[derive(Debug)]
pub enum ValueError {
    /// A disk setting (`--readahead-kb`).
    Disk(DiskConfigError),
    /// A scheduler spec (`--sched`).
    Spec(SpecError),
    /// A packet-size distribution (`--sizes`).
    Sizes(FlowSetError),
    /// A count or a rate (`--rate`, `--buckets`).
    Unit(UnitError),
}

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Disk(e) => e.fmt(f),
            Self::Spec(e) => e.fmt(f),
            Self::Sizes(e) => e.fmt(f),
            Self::Unit(e) => e.fmt(f),
        }
    }
}

impl From<DiskConfigError> for ValueError {
    fn from(e: DiskConfigError) -> Self {
        Self::Disk(e)
    }
}

impl From<SpecError> for ValueError {
    fn from(e: SpecError) -> Self {
        Self::Spec(e)
    }
}

impl From<FlowSetError> for ValueError {
    fn from(e: FlowSetError) -> Self {
        Self::Sizes(e)
    }
}

impl From<UnitError> for ValueError {
    fn from(e: UnitError) -> Self {
        Self::Unit(e)
    }
}

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
    /// An entry of a comma-separated list is not a number (the wording of
    /// the network commands).
    EntryNotANumber {
        /// The flag.
        flag: &'static str,
        /// The entry.
        text: String,
    },
    /// An entry of a comma-separated list is outside its range.
    EntryNotIn {
        /// The flag.
        flag: &'static str,
        /// The entry.
        text: String,
        /// The accepted range.
        range: &'static str,
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
    /// A value, shown, outside its range (`--seeds 0 must be in 1..=100`).
    ValueOutOfRange {
        /// The flag.
        flag: &'static str,
        /// The value given.
        value: String,
        /// The accepted range.
        range: String,
    },
    /// A value, shown, outside its range (`--arbiter-cpu 9 outside 0..2`).
    ValueOutside {
        /// The flag.
        flag: &'static str,
        /// The value given.
        value: String,
        /// The accepted range.
        range: String,
    },
    /// A value that must be something it is not (`--load must be a
    /// positive fraction of the link rate`).
    Must {
        /// The flag.
        flag: &'static str,
        /// What it must be.
        be: &'static str,
    },
    /// A value, shown, that must be something it is not
    /// (`--target-mpps 0: must be > 0`).
    ValueMust {
        /// The flag.
        flag: &'static str,
        /// The value given.
        value: String,
        /// What it must be.
        be: &'static str,
    },
    /// A value, shown, of the wrong kind (`--arbiter-cpu x: expected a CPU
    /// index or 'none'`, with backticks around none).
    ValueExpected {
        /// The flag.
        flag: &'static str,
        /// The value given.
        value: String,
        /// What was expected.
        expected: &'static str,
    },
    /// A value beyond the largest the command takes.
    TooLarge {
        /// The flag.
        flag: &'static str,
        /// The value given, with its unit.
        value: String,
        /// The largest value, with its unit.
        max: String,
    },
    /// A probability outside [0, 1].
    NotAProbability {
        /// The flag.
        flag: &'static str,
        /// The value given.
        value: f64,
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
    /// A name that is none of the accepted names (`unknown --pattern 'x'
    /// (expected one of ...)`).
    UnknownName {
        /// The flag.
        flag: &'static str,
        /// The name given.
        text: String,
        /// The accepted names, comma separated.
        expected: String,
    },
    /// An entry of a comma-separated list that is none of the accepted
    /// words (`--modes: unknown 'x' (none, tc, ...)`, with backticks
    /// around x).
    UnknownEntry {
        /// The flag.
        flag: &'static str,
        /// What an entry is (`experiment`), if the message says.
        what: Option<&'static str>,
        /// The entry.
        text: String,
        /// The accepted words, comma separated.
        choices: &'static str,
    },
    /// A value a library refuses, with its reason.
    Invalid {
        /// The flag.
        flag: &'static str,
        /// The library's reason.
        error: ValueError,
    },
    /// A flag that only applies together with another.
    Needs {
        /// The flag.
        flag: &'static str,
        /// What it needs.
        needs: &'static str,
    },
    /// A flag that only applies with (or without) another.
    OnlyWith {
        /// The flag.
        flag: &'static str,
        /// `with --sweep`, `without --sweep`, ...
        condition: &'static str,
        /// Why.
        why: &'static str,
    },
    /// An entry given twice in a comma-separated list.
    Duplicate {
        /// The flag.
        flag: &'static str,
        /// The entry.
        text: String,
    },
    /// `--chart` on a command that draws none.
    NoChart {
        /// The command.
        command: &'static str,
    },
}

impl fmt::Display for FlagError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotANumber { flag, text } => write!(f, "{flag}: '{text}' is not a valid number"),
            Self::EntryNotANumber { flag, text } => write!(f, "{flag}: `{text}` is not a number"),
            Self::EntryNotIn { flag, text, range } => write!(f, "{flag}: `{text}` is not {range}"),
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
            Self::ValueOutOfRange { flag, value, range } => {
                write!(f, "{flag} {value} must be in {range}")
            }
            Self::ValueOutside { flag, value, range } => {
                write!(f, "{flag} {value} outside {range}")
            }
            Self::Must { flag, be } => write!(f, "{flag} must be {be}"),
            Self::ValueMust { flag, value, be } => write!(f, "{flag} {value}: must be {be}"),
            Self::ValueExpected {
                flag,
                value,
                expected,
            } => write!(f, "{flag} {value}: expected {expected}"),
            Self::TooLarge { flag, value, max } => {
                write!(f, "{flag}: {value} is too large (at most {max})")
            }
            Self::NotAProbability { flag, value } => {
                write!(f, "{flag} {value} is not a probability")
            }
            Self::NotOneOf {
                flag,
                text,
                choices,
            } => write!(f, "{flag}: '{text}' is not one of {choices}"),
            Self::UnknownName {
                flag,
                text,
                expected,
            } => write!(f, "unknown {flag} '{text}' (expected one of {expected})"),
            Self::UnknownEntry {
                flag,
                what,
                text,
                choices,
            } => {
                write!(f, "{flag}: unknown ")?;
                if let Some(what) = what {
                    write!(f, "{what} ")?;
                }
                write!(f, "`{text}` ({choices})")
            }
            Self::Invalid { flag, error } => write!(f, "{flag}: {error}"),
            Self::Needs { flag, needs } => write!(f, "{flag} needs {needs}"),
            Self::OnlyWith {
                flag,
                condition,
                why,
            } => write!(f, "{flag} applies only {condition} ({why})"),
            Self::Duplicate { flag, text } => {
                write!(f, "{flag}: {text} is given twice (each value runs once)")
            }
            Self::NoChart { command } => write!(f, "--chart: {command} draws no chart"),
        }
    }
}

impl std::error::Error for FlagError {}
