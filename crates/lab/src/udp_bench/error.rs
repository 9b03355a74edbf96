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
    /// A numeric option outside its range: the option, its value, the
    /// range, and why the range is what it is where that is not obvious.
    #[error("{option} {value} outside {range}{}", why_suffix(*.why))]
    OutOfRange {
        /// The command-line option (`--seconds`).
        option: &'static str,
        /// The value given.
        value: String,
        /// The accepted range.
        range: String,
        /// Why the range ends where it does.
        why: Option<&'static str>,
    },
    /// A list given with no entry.
    #[error("{option}: an empty list; give at least one value")]
    EmptyList {
        /// The command-line option (`--rates`).
        option: &'static str,
    },
    /// No configuration to measure.
    #[error("--modes: at least one of none, tc, fairway, fairway-dispatch")]
    NoModes,
    /// A configuration listed twice.
    #[error("--modes: `{}` given twice", .0.name())]
    ModeTwice(Mode),
    /// `--qdisc-bypass` with UDP sockets.
    #[error("--qdisc-bypass needs raw frames (--transport af-packet or af-packet-ring)")]
    BypassNeedsRawFrames,
    /// A link rate outside `min..=max` packets/s.
    #[error("{option} {pps} pps outside {min}..={max} (the emulated link's range)")]
    LinkRate {
        /// `--link-pps` or `--rates`.
        option: &'static str,
        /// The rate given, packets/s.
        pps: u64,
        /// The slowest rate, packets/s.
        min: u64,
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
    /// The client queues of one trial would hold too many packets.
    #[error(
        "{clients} clients × --queue-len {queue_len} = {total} queued packets, over the \
         {max} one trial's queues may hold (each packet takes a slot in its client's ring and \
         in the scheduler)"
    )]
    QueuedPackets {
        /// The most clients of any trial.
        clients: usize,
        /// The queue length given.
        queue_len: usize,
        /// Their product.
        total: u64,
        /// The limit.
        max: u64,
    },
    /// An HTB class of the `tc` configuration would get less than HTB can
    /// shape.
    #[error(
        "{option} {pps} pps with --target-weight and --interferers gives each interferer's \
         HTB class {share} bit/s, below the {min} bit/s HTB can shape (it counts bytes/s)"
    )]
    HtbClassTooSlow {
        /// `--link-pps` or `--rates`.
        option: &'static str,
        /// The link rate, packets/s.
        pps: u64,
        /// An interferer's share of it, bit/s.
        share: u64,
        /// The slowest class HTB shapes, bit/s.
        min: u64,
    },
    /// The run would take longer than a run may.
    #[error(
        "the run plans {trials} trials of {seconds} s and a {cooldown_ms} ms pause between \
         them, {hours:.1} h, over the {max_hours} h a run may take (--clients, --rates, the \
         repeats and --modes multiply; split the campaign into several runs)"
    )]
    RunTooLong {
        /// Trials planned.
        trials: usize,
        /// Seconds per trial.
        seconds: f64,
        /// Pause between trials, ms.
        cooldown_ms: u64,
        /// The planned time, hours.
        hours: f64,
        /// The limit, hours.
        max_hours: f64,
    },
}

/// ` (why)`, or nothing.
fn why_suffix(why: Option<&str>) -> String {
    why.map(|w| format!(" ({w})")).unwrap_or_default()
}

/// Why a trial failed.
#[derive(Debug, thiserror::Error)]
pub enum TrialError {
    /// A client count outside 1..=4096.
    #[error("clients {0} outside 1..=4096")]
    ClientCount(usize),
    /// A parameter of the trial outside its range.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A real-time priority with none above it for the target and the
    /// receiver.
    #[error(
        "real-time priority {0} outside 1..=98 (the target and the receiver run one above it)"
    )]
    RtPriority(u8),
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
