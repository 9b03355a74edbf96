//! The running arbiter thread: [`ArbiterHandle`] stops it and reads the
//! accounts; [`DispatchingHandle`] is the same for an arbiter thread that
//! also dispatches ([`crate::dispatch`]).

use super::config::RuntimeConfig;
use super::error::RuntimeError;
use crate::accounts::{ClientLedger, RuntimeAccounts};
use crate::arbiter::{ArbiterParts, ArbiterStats, ScanGapWindow};
use crate::clock::MonotonicClock;
use crate::wakeup::Wakeup;
use fairway_core::{Capacity, FlowConfig};
use std::fmt;
use std::sync::Arc;
use std::thread::JoinHandle;

/// What the arbiter thread hands back when it ends: its counters, and the
/// parts a restart continues from (`None` only if they could not be taken
/// back, see [`ArbiterHandle::pause`]).
pub(super) struct Stopped {
    pub(super) stats: ArbiterStats,
    pub(super) parts: Option<ArbiterParts>,
}

/// What [`ArbiterHandle`] keeps to pause and restart the arbiter.
pub(super) struct Kept {
    pub(super) cfg: RuntimeConfig,
    pub(super) clock: MonotonicClock,
    pub(super) flows: Vec<FlowConfig>,
    pub(super) cap: Capacity,
    pub(super) ledgers: Vec<Arc<ClientLedger>>,
    pub(super) round_gap: ScanGapWindow,
}

/// The running arbiter thread. Dropping it stops the thread.
pub struct ArbiterHandle {
    pub(super) thread: Option<JoinHandle<Stopped>>,
    pub(super) wake: Arc<Wakeup>,
    pub(super) kept: Box<Kept>,
}

impl ArbiterHandle {
    /// Stops the arbiter and returns its counters.
    pub fn stop(mut self) -> Result<ArbiterStats, RuntimeError> {
        self.wake.request_stop();
        match self.thread.take() {
            Some(t) => t
                .join()
                .map(|s| s.stats)
                .map_err(|_| RuntimeError::Thread("arbiter thread panicked".into())),
            None => Ok(ArbiterStats::default()),
        }
    }

    /// A window onto the arbiter's round gaps (also across restarts).
    pub fn scan_gap_window(&self) -> ScanGapWindow {
        self.kept.round_gap.clone()
    }

    /// Where every client's packets are, now: submitted, rejected, granted,
    /// queued, reclaimed, transmitted, failed to send. Counts of clients
    /// whose threads have ended stay here.
    pub fn accounts(&self) -> RuntimeAccounts {
        RuntimeAccounts::read(&self.kept.ledgers)
    }
}

impl fmt::Debug for ArbiterHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArbiterHandle")
            .field("running", &self.thread.is_some())
            .finish_non_exhaustive()
    }
}

impl Drop for ArbiterHandle {
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            self.wake.request_stop();
            let _ = t.join();
        }
    }
}

/// An arbiter thread that also dispatches (from
/// [`RuntimeBuilder::spawn_dispatching`](crate::RuntimeBuilder::spawn_dispatching)). Dropping it stops the
/// thread (and drops the dispatcher).
#[derive(Debug)]
pub struct DispatchingHandle<D> {
    pub(super) arbiter: ArbiterHandle,
    pub(super) back: std::sync::mpsc::Receiver<D>,
}

impl<D> DispatchingHandle<D> {
    /// See [`ArbiterHandle::scan_gap_window`].
    pub fn scan_gap_window(&self) -> ScanGapWindow {
        self.arbiter.scan_gap_window()
    }

    /// Stops the arbiter; returns its counters and the dispatcher (with
    /// whatever it counted). The dispatcher is `None` only if the arbiter
    /// thread panicked.
    pub fn stop(self) -> Result<(ArbiterStats, Option<D>), RuntimeError> {
        let stats = self.arbiter.stop()?;
        Ok((stats, self.back.try_recv().ok()))
    }

    /// Where every client's packets are, now (see
    /// [`ArbiterHandle::accounts`]).
    pub fn accounts(&self) -> RuntimeAccounts {
        self.arbiter.accounts()
    }
}
