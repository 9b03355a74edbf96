//! Why a network simulation could not run.

use crate::limits::MemoryError;
use fairway_core::registry::SpecError;
use fairway_core::ConfigError;
use std::fmt;

/// Why a network simulation could not run: a bad scheduler spec, or
/// parameters of the network or of the experiment out of range.
#[derive(Clone, Debug, PartialEq)]
pub enum NetsimError {
    /// A scheduler spec that does not parse.
    Spec(SpecError),
    /// `per_flow_buffer` is 0.
    NoBuffer,
    /// A link names a node that does not exist.
    UnknownNode {
        /// The link's index.
        link: usize,
    },
    /// A link of 0 bit/s.
    LinkRate {
        /// The link's index.
        link: usize,
    },
    /// A flow whose path has fewer than two nodes.
    ShortPath {
        /// The flow's name.
        flow: String,
    },
    /// A flow's packet length outside `1..=max_len`.
    PacketLen {
        /// The flow's name.
        flow: String,
        /// The packet length.
        len: u32,
        /// The flow's maximum.
        max_len: u32,
    },
    /// A source of 0 bit/s.
    FlowRate {
        /// The flow's name.
        flow: String,
    },
    /// A greedy source with a window of 0.
    Window {
        /// The flow's name.
        flow: String,
    },
    /// A Pareto source whose shape is not above 1 (infinite mean).
    ParetoShape {
        /// The flow's name.
        flow: String,
    },
    /// Two consecutive nodes of a flow's path with no link between them.
    NoLink {
        /// The flow's name.
        flow: String,
        /// The first node's name (`?` if it does not exist).
        from: String,
        /// The second node's name.
        to: String,
    },
    /// A link's scheduler refused a flow.
    AddFlow {
        /// The flow's name.
        flow: String,
        /// The link's index.
        link: usize,
        /// Why.
        error: ConfigError,
    },
    /// Warm-up and duration out of order (`0 <= warmup < duration`).
    Times {
        /// Seconds discarded.
        warmup_s: f64,
        /// Seconds simulated.
        duration_s: f64,
    },
    /// No seed to run.
    NoSeeds,
    /// Seeds `seed..seed+seeds` pass `2^64 − 1`.
    SeedOverflow {
        /// The first seed.
        seed: u64,
        /// Seeds run.
        seeds: u64,
    },
    /// More simulated seconds in all than [`MAX_SIMULATED_S`].
    TooLong {
        /// Schedulers.
        schedulers: usize,
        /// Seeds per scheduler.
        seeds: u64,
        /// Seconds per run.
        duration_s: f64,
    },
    /// The link queues would need more memory than the limit.
    Memory(MemoryError),
    /// A link's output queue (`per_flow_buffer` × its flows) beyond
    /// `2^32 − 1` packets.
    QueueTooLong {
        /// The link's index.
        link: usize,
        /// Packets per flow.
        per_flow: u32,
        /// Flows crossing it.
        flows: usize,
    },
}

/// Most simulated seconds a run of several schedulers and seeds may add up
/// to: ten simulated hours, minutes to hours of computing.
pub const MAX_SIMULATED_S: f64 = 36_000.0;

impl fmt::Display for NetsimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NetsimError::Spec(e) => e.fmt(f),
            NetsimError::NoBuffer => write!(f, "per-flow buffer must be at least 1 packet"),
            NetsimError::UnknownNode { link } => write!(f, "link {link} names an unknown node"),
            NetsimError::LinkRate { link } => {
                write!(f, "link {link}: rate must be at least 1 bit/s")
            }
            NetsimError::ShortPath { flow } => {
                write!(f, "flow {flow}: path needs at least 2 nodes")
            }
            NetsimError::PacketLen { flow, len, max_len } => {
                write!(
                    f,
                    "flow {flow}: packet length {len} must be in 1..={max_len}"
                )
            }
            NetsimError::FlowRate { flow } => {
                write!(f, "flow {flow}: rate must be at least 1 bit/s")
            }
            NetsimError::Window { flow } => write!(f, "flow {flow}: window must be at least 1"),
            NetsimError::ParetoShape { flow } => {
                write!(f, "flow {flow}: Pareto shape must be > 1")
            }
            NetsimError::NoLink { flow, from, to } => {
                write!(f, "flow {flow}: no link {from} -> {to}")
            }
            NetsimError::AddFlow { flow, link, error } => {
                write!(f, "flow {flow} on link {link}: {error}")
            }
            NetsimError::Times {
                warmup_s,
                duration_s,
            } => write!(f, "need 0 <= warmup ({warmup_s}) < duration ({duration_s})"),
            NetsimError::NoSeeds => write!(f, "seeds must be at least 1"),
            NetsimError::SeedOverflow { seed, seeds } => write!(
                f,
                "--seed {seed} with --seeds {seeds}: the seeds run from --seed to --seed + --seeds − 1, \
                 which must stay within 2^64 − 1"
            ),
            NetsimError::TooLong {
                schedulers,
                seeds,
                duration_s,
            } => write!(
                f,
                "{schedulers} schedulers (--sched) × --seeds {seeds} × --duration {duration_s} s \
                 is {} simulated seconds; the limit is {MAX_SIMULATED_S} (ten simulated hours, \
                 minutes to hours of computing)",
                *schedulers as f64 * *seeds as f64 * duration_s
            ),
            NetsimError::Memory(e) => e.fmt(f),
            NetsimError::QueueTooLong {
                link,
                per_flow,
                flows,
            } => write!(
                f,
                "link {link}: {per_flow} packets per flow (--buffer) × {flows} flows is more than \
                 2^32 − 1 packets"
            ),
        }
    }
}

impl std::error::Error for NetsimError {}

impl From<SpecError> for NetsimError {
    fn from(e: SpecError) -> Self {
        NetsimError::Spec(e)
    }
}
