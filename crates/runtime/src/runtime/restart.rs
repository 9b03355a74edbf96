//! Pausing the arbiter and starting another from where it stopped:
//! [`ArbiterHandle::pause`] takes the scheduler's backlog back into a
//! [`PausedRuntime`], whose `spawn` continues with the same or another
//! scheduler while the clients keep running.

use super::config::ArbiterMode;
use super::error::RuntimeError;
use super::handle::{ArbiterHandle, Stopped};
use super::start::Start;
use crate::accounts::RuntimeAccounts;
use crate::arbiter::ArbiterStats;
use crate::wakeup::KickMode;
use fairway_core::{Capacity, Limits, Scheduler};
use std::fmt;

impl ArbiterHandle {
    /// Stops the arbiter but keeps the client queues: the scheduler's
    /// backlog is taken back, each client's in its order, and
    /// [`PausedRuntime::spawn`] starts a new arbiter, with any scheduler,
    /// that continues from it. The clients keep running meanwhile (their
    /// submits queue up until the queue is full).
    ///
    /// Refused ([`RuntimeError::PauseNeedsNotifyKick`]), with the arbiter
    /// left running and handed back, for a sleeping arbiter with the
    /// client-scan kick: its clients may run the scheduler themselves.
    pub fn pause(mut self) -> Result<PausedRuntime, (RuntimeError, ArbiterHandle)> {
        let cfg = self.kept.cfg;
        if cfg.mode == ArbiterMode::Sleep && matches!(cfg.kick, KickMode::ClientScan { .. }) {
            return Err((RuntimeError::PauseNeedsNotifyKick, self));
        }
        self.wake.request_stop();
        let Some(thread) = self.thread.take() else {
            return Err((RuntimeError::Thread("arbiter already stopped".into()), self));
        };
        match thread.join() {
            Ok(Stopped {
                parts: Some(parts), ..
            }) => {
                let k = &self.kept;
                Ok(PausedRuntime {
                    start: Box::new(Start {
                        cfg: k.cfg,
                        wake: self.wake.clone(),
                        clock: k.clock.clone(),
                        flows: k.flows.clone(),
                        cap: k.cap,
                        parts,
                    }),
                })
            }
            Ok(Stopped { parts: None, .. }) => Err((RuntimeError::PauseNeedsNotifyKick, self)),
            Err(_) => Err((RuntimeError::Thread("arbiter thread panicked".into()), self)),
        }
    }
}

/// A stopped arbiter whose clients still run: holds their queues, each
/// client's packets taken but not granted (in order), and the counters, so
/// that a new arbiter, with the same or another scheduler, continues where
/// it stopped: nothing lost, nothing granted twice, each flow's order kept.
/// Dropping it drops the queues' arbiter ends (as [`ArbiterHandle::stop`]).
///
/// ```
/// use fairway_core::{Drr, Qfq};
/// use fairway_runtime::*;
///
/// let mut b = RuntimeBuilder::new(RuntimeConfig { rate_bps: 1_000_000, ..Default::default() }).unwrap();
/// let mut client = b.add_client::<u32>(ClientConfig::default()).unwrap();
/// let arbiter = b.spawn_send(|c, l| Box::new(Drr::<u32>::with_options(c, l, None))).unwrap();
/// for _ in 0..10 { client.submit(1000).unwrap(); }   // 1 Mbit/s: 8 ms each
/// let paused = arbiter.pause().map_err(|(e, _)| e).unwrap();
/// let queued = paused.backlog(0).len();               // not granted yet
/// let arbiter = paused.spawn_send(|c, l| Box::new(Qfq::<u32>::with_limits(c, l))).map_err(|e| e.error).unwrap();
/// let a = arbiter.accounts().total();
/// assert_eq!(a.submitted, a.rejected + a.granted + a.queued + a.reclaimed);
/// assert!(queued <= 10);
/// ```
pub struct PausedRuntime {
    start: Box<Start>,
}

/// A restart that failed: why, and the paused runtime to try again with
/// (`None` only if the arbiter thread could not be started at all).
#[derive(Debug)]
pub struct RestartError {
    /// Why.
    pub error: RuntimeError,
    /// The runtime, unchanged.
    pub paused: Option<PausedRuntime>,
}

impl fmt::Display for RestartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "restarting the arbiter: {}", self.error)
    }
}

impl std::error::Error for RestartError {}

impl fmt::Debug for PausedRuntime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PausedRuntime")
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl PausedRuntime {
    /// The arbiter's counters so far.
    pub fn stats(&self) -> ArbiterStats {
        self.start.parts.stats
    }

    /// Where every client's packets are (see [`ArbiterHandle::accounts`]).
    pub fn accounts(&self) -> RuntimeAccounts {
        RuntimeAccounts::read(&self.start.parts.ledgers)
    }

    /// Client `i`'s packets taken from its queue but not granted, oldest
    /// first (their lengths): what the next arbiter enqueues first.
    pub fn backlog(&self, client: usize) -> &[u32] {
        self.start
            .parts
            .backlog
            .get(client)
            .map_or(&[], Vec::as_slice)
    }

    /// Starts a new arbiter thread, as [`RuntimeBuilder::spawn`](crate::RuntimeBuilder::spawn), with the
    /// backlog enqueued first.
    pub fn spawn<S, F>(self, make_scheduler: F) -> Result<ArbiterHandle, RestartError>
    where
        S: Scheduler<u32> + ?Sized + 'static,
        F: FnOnce(Capacity, Limits) -> Box<S> + Send + 'static,
    {
        self.start
            .spawn(make_scheduler)
            .map_err(|(error, start)| RestartError {
                error,
                paused: start.map(|start| PausedRuntime { start }),
            })
    }

    /// Starts a new arbiter thread, as [`RuntimeBuilder::spawn_send`](crate::RuntimeBuilder::spawn_send), with
    /// the backlog enqueued first.
    pub fn spawn_send<S, F>(self, make_scheduler: F) -> Result<ArbiterHandle, RestartError>
    where
        S: Scheduler<u32> + Send + ?Sized + 'static,
        F: FnOnce(Capacity, Limits) -> Box<S>,
    {
        self.start
            .spawn_send(make_scheduler)
            .map_err(|(error, start)| RestartError {
                error,
                paused: start.map(|start| PausedRuntime { start }),
            })
    }
}
