//! Starting the arbiter thread, for a new runtime or a paused one: build
//! the scheduler (on the arbiter thread, or before it for a `Send` one),
//! add the live clients' flows, run the busy-polling or sleeping loop of
//! [`crate::wakeup`], and hand everything back when the thread ends, or
//! when the start fails, so that a failed restart loses nothing.

use super::clocked::ClockedArbiter;
use super::config::{nanos, ArbiterMode, RuntimeConfig};
use super::error::RuntimeError;
use super::handle::{ArbiterHandle, Kept, Stopped};
use crate::arbiter::{Arbiter, ArbiterParts, ScanGapWindow};
use crate::clock::MonotonicClock;
use crate::dispatch::Dispatch;
use crate::wakeup::{ClientScanTarget, KickMode, LockedCore, Wakeup};
use fairway_core::{Capacity, FlowConfig, FlowId, Limits, Scheduler};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Everything an arbiter thread starts from: a new runtime's, or a paused
/// one's (then `parts` carries the client queues' cursors and backlog).
pub(super) struct Start {
    pub(super) cfg: RuntimeConfig,
    pub(super) wake: Arc<Wakeup>,
    pub(super) clock: MonotonicClock,
    pub(super) flows: Vec<FlowConfig>,
    pub(super) cap: Capacity,
    pub(super) parts: ArbiterParts,
}

/// What a failed start hands back: the error, and the start (so a failed
/// restart loses nothing) unless the thread lost it.
pub(super) type StartError = (RuntimeError, Option<Box<Start>>);

impl Start {
    pub(super) fn kept(&self) -> Kept {
        Kept {
            cfg: self.cfg,
            clock: self.clock.clone(),
            flows: self.flows.clone(),
            cap: self.cap,
            ledgers: self.parts.ledgers.clone(),
            round_gap: ScanGapWindow(self.parts.round_gap.clone()),
        }
    }

    pub(super) fn spawn<S, F>(self, make_scheduler: F) -> Result<ArbiterHandle, StartError>
    where
        S: Scheduler<u32> + ?Sized + 'static,
        F: FnOnce(Capacity, Limits) -> Box<S> + Send + 'static,
    {
        self.spawn_with(make_scheduler, (), None)
    }

    /// [`Start::spawn`] with a dispatcher the arbiter thread calls after
    /// every scan, sent back through `back` when the thread ends.
    pub(super) fn spawn_with<S, F, D>(
        self,
        make_scheduler: F,
        mut dispatch: D,
        back: Option<std::sync::mpsc::Sender<D>>,
    ) -> Result<ArbiterHandle, StartError>
    where
        S: Scheduler<u32> + ?Sized + 'static,
        F: FnOnce(Capacity, Limits) -> Box<S> + Send + 'static,
        D: Dispatch + 'static,
    {
        if self.cfg.mode == ArbiterMode::Sleep
            && matches!(self.cfg.kick, KickMode::ClientScan { .. })
        {
            return Err((
                RuntimeError::ClientScanNeedsSendScheduler,
                Some(Box::new(self)),
            ));
        }
        let kept = self.kept();
        let Start {
            cfg,
            wake,
            clock,
            flows,
            cap,
            parts,
        } = self;
        wake.clear_stop();
        let (tx, rx) = std::sync::mpsc::channel::<Result<(), RuntimeError>>();
        let wake2 = wake.clone();
        let thread = std::thread::Builder::new()
            .name("fairway-arbiter".into())
            .spawn(move || {
                let failed = |parts: ArbiterParts| Stopped {
                    stats: parts.stats,
                    parts: Some(parts),
                };
                if let Err(e) = realtime(&cfg) {
                    let _ = tx.send(Err(e));
                    return failed(parts);
                }
                // A panicking constructor must not take the client queues
                // with it: they go back to the caller with the error.
                let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    make_scheduler(cap, Limits::default())
                }));
                let Ok(sched) = made else {
                    let _ = tx.send(Err(RuntimeError::Thread(
                        "the scheduler constructor panicked".into(),
                    )));
                    return failed(parts);
                };
                let core = match prepare(&cfg, sched, flows, parts, clock) {
                    Ok(c) => c,
                    Err(failure) => {
                        let (e, parts) = *failure;
                        let _ = tx.send(Err(e));
                        return failed(parts);
                    }
                };
                let _ = tx.send(Ok(()));
                run_arbiter_shared(&cfg, &wake2, &core, &mut dispatch);
                if let Some(back) = back {
                    let _ = back.send(dispatch);
                }
                let parts = core.into_inner().arbiter.into_parts();
                Stopped {
                    stats: parts.stats,
                    parts: Some(parts),
                }
            });
        match thread {
            Ok(thread) => finish_spawn(rx, thread, wake, kept),
            Err(e) => Err((RuntimeError::Thread(e.to_string()), None)),
        }
    }

    pub(super) fn spawn_send<S, F>(self, make_scheduler: F) -> Result<ArbiterHandle, StartError>
    where
        S: Scheduler<u32> + Send + ?Sized + 'static,
        F: FnOnce(Capacity, Limits) -> Box<S>,
    {
        let kept = self.kept();
        let Start {
            cfg,
            wake,
            clock,
            flows,
            cap,
            parts,
        } = self;
        let sched = make_scheduler(cap, Limits::default());
        let core = match prepare(&cfg, sched, flows.clone(), parts, clock.clone()) {
            Ok(c) => Arc::new(c),
            Err(failure) => {
                let (e, parts) = *failure;
                let start = Start {
                    cfg,
                    wake,
                    clock,
                    flows,
                    cap,
                    parts,
                };
                return Err((e, Some(Box::new(start))));
            }
        };
        if cfg.mode == ArbiterMode::Sleep && matches!(cfg.kick, KickMode::ClientScan { .. }) {
            let target: Arc<dyn ClientScanTarget> = core.clone();
            let _ = wake.scan_target.set(target);
        }
        wake.clear_stop();
        let (tx, rx) = std::sync::mpsc::channel::<Result<(), RuntimeError>>();
        let wake2 = wake.clone();
        let thread = std::thread::Builder::new()
            .name("fairway-arbiter".into())
            .spawn(move || {
                if let Err(e) = realtime(&cfg) {
                    let _ = tx.send(Err(e));
                    return finish_shared(core);
                }
                let _ = tx.send(Ok(()));
                run_arbiter_shared(&cfg, &wake2, &core, &mut ());
                finish_shared(core)
            });
        match thread {
            Ok(thread) => finish_spawn(rx, thread, wake, kept),
            Err(e) => Err((RuntimeError::Thread(e.to_string()), None)),
        }
    }
}

/// The end of a `spawn_send` arbiter thread: the parts come back unless the
/// clients still share the core (client-scan kick).
fn finish_shared<S: Scheduler<u32> + ?Sized>(core: Arc<LockedCore<ClockedArbiter<S>>>) -> Stopped {
    match Arc::try_unwrap(core) {
        Ok(core) => {
            let parts = core.into_inner().arbiter.into_parts();
            Stopped {
                stats: parts.stats,
                parts: Some(parts),
            }
        }
        Err(core) => {
            core.lock();
            let stats = core.with(|c| c.arbiter.stats());
            core.unlock();
            Stopped { stats, parts: None }
        }
    }
}

/// Adds the live clients' flows to `sched` and builds the arbiter from
/// `parts`; on a refused flow, hands `parts` back untouched.
fn prepare<S: Scheduler<u32> + ?Sized>(
    cfg: &RuntimeConfig,
    mut sched: Box<S>,
    flows: Vec<FlowConfig>,
    mut parts: ArbiterParts,
    clock: MonotonicClock,
) -> Result<LockedCore<ClockedArbiter<S>>, Box<(RuntimeError, ArbiterParts)>> {
    for (i, f) in flows.into_iter().enumerate() {
        if !parts.clients[i].live {
            continue; // departed: its share was reclaimed
        }
        if let Err(error) = sched.add_flow(FlowId(i as u32), f) {
            return Err(Box::new((RuntimeError::Flow { client: i, error }, parts)));
        }
    }
    // Start idle now, not at the epoch (or the pause): no catch-up burst.
    parts.link.set_idle_at(clock.now_ns());
    let arbiter = Arbiter::from_parts(sched, parts, nanos(cfg.delta_a));
    Ok(LockedCore::new(ClockedArbiter {
        clock,
        last_scan_ns: 0,
        arbiter,
    }))
}

/// Gives the calling (arbiter) thread the configured real-time priority.
fn realtime(cfg: &RuntimeConfig) -> Result<(), RuntimeError> {
    match cfg.realtime_priority {
        Some(p) => crate::affinity::set_realtime_priority(p).map_err(RuntimeError::Realtime),
        None => Ok(()),
    }
}

fn pin(cfg: &RuntimeConfig) {
    if let Some(cpu) = cfg.arbiter_cpu {
        // Best effort: an unpinned arbiter still works, only noisier.
        let _ = crate::affinity::pin_current_thread(cpu);
    }
}

fn run_arbiter_shared<S: Scheduler<u32> + ?Sized, D: Dispatch>(
    cfg: &RuntimeConfig,
    wake: &Wakeup,
    core: &LockedCore<ClockedArbiter<S>>,
    dispatch: &mut D,
) {
    pin(cfg);
    match cfg.mode {
        ArbiterMode::BusyPoll => wake.run_busy_dispatching(core, dispatch),
        ArbiterMode::Sleep => wake.run_sleeping_dispatching(core, nanos(cfg.min_awake), dispatch),
    }
}

fn finish_spawn(
    rx: std::sync::mpsc::Receiver<Result<(), RuntimeError>>,
    thread: JoinHandle<Stopped>,
    wake: Arc<Wakeup>,
    kept: Kept,
) -> Result<ArbiterHandle, StartError> {
    match rx.recv() {
        Ok(Ok(())) => Ok(ArbiterHandle {
            thread: Some(thread),
            wake,
            kept: Box::new(kept),
        }),
        Ok(Err(e)) => {
            let start = thread.join().ok().and_then(|s| s.parts).map(|parts| {
                Box::new(Start {
                    cfg: kept.cfg,
                    wake,
                    clock: kept.clock,
                    flows: kept.flows,
                    cap: kept.cap,
                    parts,
                })
            });
            Err((e, start))
        }
        Err(_) => Err((
            RuntimeError::Thread("arbiter thread exited during start-up".into()),
            None,
        )),
    }
}
