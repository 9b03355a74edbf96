//! Why the bench could not run or finish.

use super::{MAX_CIRCUITS, MIN_CIRCUITS};
use crate::testbed::TestbedError;
use std::path::PathBuf;

/// Why `fairway shape bench` stopped.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// `--circuits` outside its range.
    #[error(
        "--circuits {0} outside {min}..={max} (at least the change's 2,100 circuits and the 5 \
         that carry traffic; at most what HTB's 16-bit class ids and the bench's 10.78.0.0/16 \
         addresses hold)",
        min = MIN_CIRCUITS,
        max = MAX_CIRCUITS
    )]
    Circuits(usize),
    /// `--shaper-rt-priority` outside SCHED_FIFO's priorities.
    #[error("--shaper-rt-priority {0} outside 1..=99 (SCHED_FIFO's priorities)")]
    RtPriority(u8),
    /// The namespaces, links, `tc` or traffic.
    #[error("{0}")]
    Testbed(#[from] TestbedError),
    /// The `fairway shape` subprocess.
    #[error("fairway shape: {0}")]
    Shaper(String),
    /// The generated shaper file.
    #[error("{}: {error}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// The file system's reason.
        error: std::io::Error,
    },
    /// SIGINT or SIGTERM.
    #[error("interrupted by SIGINT or SIGTERM; its namespaces and the shaper are removed")]
    Interrupted,
}
