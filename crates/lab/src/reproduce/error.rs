//! Why `fairway reproduce` could not run a paper's experiments or write its
//! report. Each message is one line naming what failed; the experiments'
//! own errors are passed on as they are.

use fairway_core::registry::SpecError;
use fairway_disk::{DiskConfigError, DiskSpecError};
use fairway_eval::chart::ChartError;
use fairway_eval::cost::CostError;
use fairway_eval::guarantees::GuaranteeError;
use fairway_eval::netsim::NetsimError;
use fairway_eval::pq_bench::PqBenchError;
use fairway_eval::workload::FlowSetError;

/// Why a reproduction failed.
#[derive(Debug, thiserror::Error)]
pub enum ReproduceError {
    /// A paper name that is not one of [`Paper::ALL`](super::paper::Paper::ALL)'s.
    #[error("unknown paper '{0}' (expected one of all, qfq-plus, qfq, eiffel, bfq, pspat)")]
    UnknownPaper(String),
    /// A scheduler spec of an experiment did not parse.
    #[error("{0}")]
    Spec(SpecError),
    /// A flow set of an experiment did not parse.
    #[error(transparent)]
    FlowSet(#[from] FlowSetError),
    /// The priority-queue benchmark refused its configuration.
    #[error(transparent)]
    PqBench(#[from] PqBenchError),
    /// The cost harness refused its configuration.
    #[error(transparent)]
    Cost(#[from] CostError),
    /// The network simulation refused its configuration.
    #[error(transparent)]
    Netsim(#[from] NetsimError),
    /// The guarantee experiment refused its configuration.
    #[error(transparent)]
    Guarantee(#[from] GuaranteeError),
    /// A measurement returned no result for a scheduler it was given.
    #[error("no cost report for {0}")]
    NoCostReport(String),
    /// The approximate queue's fill/drain run reported no error rate.
    #[error("the approximate queue reported no error rate")]
    NoApproxErrorRate,
    /// A disk experiment was refused its configuration.
    #[error(transparent)]
    Disk(#[from] DiskConfigError),
    /// A disk scheduler's spec was refused by the disk catalogue.
    #[error(transparent)]
    DiskSpec(#[from] DiskSpecError),
    /// A simulated disk experiment refused to run.
    #[error(transparent)]
    DiskRun(#[from] crate::disk::DiskRunError),
    /// The real-packet experiments failed.
    #[cfg(target_os = "linux")]
    #[error(transparent)]
    RealPackets(#[from] crate::udp_bench::BenchError),
    /// A chart could not be drawn or written.
    #[error(transparent)]
    Chart(#[from] ChartError),
}
