//! Why a real-packet run could not be made: a parameter out of its range
//! ([`ConfigError`]), a trial that failed ([`TrialError`]), or the run as a
//! whole ([`BenchError`]); and why its report could not be written
//! ([`ReportError`]). Each message is one line naming what failed.

use super::spec::Mode;
use crate::testbed::TestbedError;
use fairway_eval::chart::ChartError;
use fairway_runtime::RuntimeError;
use std::io;
use std::path::PathBuf;

/// A [`BenchConfig`](super::BenchConfig) parameter outside its range.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A numeric option outside its range: the option, its value, the range.
    #[error("{option} {value} outside {range}")]
    OutOfRange {
        /// The command-line option (`--seconds`).
        option: &'static str,
        /// The value given.
        value: String,
        /// The accepted range.
        range: String,
    },
    /// A client count of the throughput experiment outside 1..=256.
    #[error("--clients: each count must be in 1..=256")]
    ClientCount,
    /// No configuration to measure.
    #[error("--modes: at least one of none, tc, fairway, fairway-dispatch")]
    NoModes,
    /// A configuration listed twice.
    #[error("--modes: `{}` given twice", .0.name())]
    ModeTwice(Mode),
    /// `--qdisc-bypass` with UDP sockets.
    #[error("--qdisc-bypass needs raw frames (--transport af-packet or af-packet-ring)")]
    BypassNeedsRawFrames,
    /// A target weight of 0.
    #[error("--target-weight must be at least 1")]
    ZeroTargetWeight,
    /// A link rate outside 100..=`max` packets/s.
    #[error("link rate {pps} pps outside 100..={max}")]
    LinkRate {
        /// The rate given, packets/s.
        pps: u64,
        /// The fastest rate the emulated link has, packets/s.
        max: u64,
    },
    /// A batch larger than the transmit ring.
    #[error("--batch {batch} outside 1..={ring} (the af-packet-ring transport's ring slots)")]
    BatchOverRing {
        /// The batch given.
        batch: usize,
        /// The ring's slots.
        ring: usize,
    },
}

/// Why a trial failed.
#[derive(Debug, thiserror::Error)]
pub enum TrialError {
    /// A client count outside 1..=4096.
    #[error("clients {0} outside 1..=4096")]
    ClientCount(usize),
    /// The ingress drop keeps one flow, and more were watched.
    #[error("receive path ingress-drop keeps one watched flow, not {0}")]
    IngressDropWatched(usize),
    /// The testbed could not be built, driven or read.
    #[error(transparent)]
    Testbed(#[from] TestbedError),
    /// The machine-wide trial lock could not be opened or taken.
    #[error("{path}: {source}")]
    Lock {
        /// The lock file.
        path: &'static str,
        /// What failed.
        source: io::Error,
    },
    /// Another process's trial held the lock for too long.
    #[error("another process held {path} (a udp-bench trial) for more than {seconds} s")]
    LockTimeout {
        /// The lock file.
        path: &'static str,
        /// How long this one waited, s.
        seconds: u64,
    },
    /// Ctrl-C.
    #[error("interrupted")]
    Interrupted,
    /// The receiver's sockets could not be bound.
    #[error("receiver sockets: {0}")]
    ReceiverSockets(io::Error),
    /// The senders' sockets could not be opened.
    #[error("sender sockets: {0}")]
    SenderSockets(io::Error),
    /// The receiver thread could not be started or failed.
    #[error("receiver: {0}")]
    Receiver(io::Error),
    /// The runtime could not be built, started or stopped.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// A thread could not be started.
    #[error("{what}: {source}")]
    Spawn {
        /// Which thread.
        what: &'static str,
        /// Why.
        source: io::Error,
    },
    /// A thread panicked.
    #[error("{0} panicked")]
    Panicked(&'static str),
    /// The link's counters could not be read.
    #[error("link counters: {0}")]
    LinkCounters(io::Error),
}

/// Why a run of the experiments failed.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A parameter outside its range.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A trial failed.
    #[error(transparent)]
    Trial(#[from] TrialError),
    /// The idle-CPU spinners could not be started.
    #[error("idle spinners (--no-idle-spin turns them off): {0}")]
    IdleSpinners(io::Error),
}

/// Why a report file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A directory or file could not be created or written.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The directory or file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A chart could not be drawn or written.
    #[error(transparent)]
    Chart(#[from] ChartError),
}
