//! Why a cost measurement or a sweep could not run.

use super::plan::Plan;
use crate::chart::ChartError;
use crate::limits::{MemoryError, MAX_WORK};
use crate::traffic::ControllerError;
use crate::workload::FlowSetError;
use fairway_core::registry::SpecError;
use fairway_core::ConfigError;
use std::fmt;
use std::path::PathBuf;

/// Why a cost measurement or a sweep could not run.
#[derive(Debug)]
pub enum CostError {
    /// A scheduler spec that does not parse.
    Spec(SpecError),
    /// `--sched` names no scheduler.
    NoScheduler,
    /// `--sched` names a scheduler twice.
    DuplicateSubject(String),
    /// The flow set is empty.
    EmptyFlowSet,
    /// A flow set that does not parse.
    FlowSet(FlowSetError),
    /// The controller refused the pattern's thresholds.
    Controller {
        /// The subject (`none`, `drr`, `qfq+:m=4`, …).
        subject: String,
        /// Why.
        error: ControllerError,
    },
    /// The scheduler refused a flow.
    Flow {
        /// The subject.
        subject: String,
        /// The flow's index.
        flow: usize,
        /// Why.
        error: ConfigError,
    },
    /// The target refused packets or ran empty too early: the pattern the
    /// controller meant to run is not the one that ran.
    LostTrack {
        /// The subject.
        subject: String,
        /// Packets the target refused.
        refused: u64,
        /// Dequeue phases that found the target empty before `low`.
        underruns: u64,
    },
    /// A report label the `m` sweep cannot read M from.
    BadLabel(String),
    /// Writing an output file failed.
    Io {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// Drawing a chart failed.
    Chart(ChartError),
    /// A count that must be at least one is zero.
    Zero {
        /// The parameter (`--pairs`, `--repeat`).
        param: &'static str,
    },
    /// A plan of more pairs than [`MAX_WORK`].
    TooMuchWork {
        /// The plan.
        plan: Plan,
        /// Its pairs in all (`None`: beyond `u128`).
        total: Option<u128>,
    },
    /// The runners or samples would need more memory than the limit.
    Memory(MemoryError),
}

impl fmt::Display for CostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CostError::Spec(e) => e.fmt(f),
            CostError::NoScheduler => write!(f, "--sched needs at least one scheduler"),
            CostError::DuplicateSubject(label) => {
                write!(
                    f,
                    "--sched: {label} is named twice (each scheduler runs once)"
                )
            }
            CostError::EmptyFlowSet => write!(f, "the flow set is empty"),
            CostError::FlowSet(e) => e.fmt(f),
            CostError::Controller { subject, error } => write!(f, "{subject}: {error}"),
            CostError::Flow {
                subject,
                flow,
                error,
            } => write!(f, "{subject}: flow {flow}: {error}"),
            CostError::LostTrack {
                subject,
                refused,
                underruns,
            } => write!(
                f,
                "{subject}: the controller lost track ({refused} refused, {underruns} underruns)"
            ),
            CostError::BadLabel(label) => write!(f, "bad label {label}"),
            CostError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            CostError::Chart(e) => e.fmt(f),
            CostError::Zero { param } => write!(f, "{param} must be at least 1"),
            CostError::TooMuchWork { plan, total } => {
                write!(
                    f,
                    "(--pairs {} × --repeat {} + --warmup {}) × {} schedulers (the none baseline included) × {} setups (flow sets × patterns) is ",
                    plan.pairs, plan.repeat, plan.warmup, plan.subjects, plan.setups
                )?;
                match total {
                    Some(t) => write!(f, "{t} pairs")?,
                    None => write!(f, "more than 2^128 pairs")?,
                }
                write!(
                    f,
                    "; the limit is {MAX_WORK} (2^40, about a day of measuring at tens of ns per pair)"
                )
            }
            CostError::Memory(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for CostError {}

impl From<ChartError> for CostError {
    fn from(e: ChartError) -> Self {
        CostError::Chart(e)
    }
}

impl From<FlowSetError> for CostError {
    fn from(e: FlowSetError) -> Self {
        CostError::FlowSet(e)
    }
}

impl From<SpecError> for CostError {
    fn from(e: SpecError) -> Self {
        CostError::Spec(e)
    }
}
