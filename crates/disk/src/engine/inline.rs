//! Inline submission ([`super::Submission::Inline`]): the thread that
//! submits a request runs the scheduler itself, under the core's lock, and
//! hands what it dispatched to the ring itself; completions are reaped by
//! whichever thread holds the core next — a submitter, or the engine
//! thread. A request thus costs no hand-off to another thread on its way
//! in, and none on its way out when the device completes it within the
//! submission (a cached read, `/dev/zero`) or while another submitter is
//! inside.
//!
//! The engine thread remains for what no submitter may be there to do:
//! BFQ's idling deadline (T_wait passes with nobody submitting), the
//! completion of a transfer still in flight when the submitters have left,
//! the commands other than submission (clients, groups, shutdown, sent as
//! in the device-thread mode), and its callbacks. It sleeps on the
//! doorbell, and on the ring as well while transfers are in flight; a
//! submitter wakes it only when it leaves a transfer in flight that the
//! engine thread is not watching, or an idling deadline earlier than the
//! one it sleeps until ([`Sleeper`], read and written under the core's
//! lock, so no wake-up is lost). While requests complete inline and no new
//! deadline comes earlier, it is not woken at all.
//!
//! While idle it keeps watching the ring too, so that the next transfer's
//! submitter need not wake it to watch, unless the last [`WITHIN`] passes'
//! transfers all completed within their submission (`/dev/zero`, cached
//! reads), where watching would wake it for every completion.
//!
//! A submitter does at most [`PASSES`] rounds of reaping and dispatching,
//! so a thread that submits is never kept serving the others for long;
//! what remains is the engine thread's.
//!
//! A thread in [`super::Engine::wait`] reaps the ring itself too: it
//! sleeps on the ring, so a transfer completing while nobody submits
//! wakes it directly rather than the engine thread, which would then have
//! to wake it.

// `ppoll` on the ring's and the waiters' descriptors.
#![allow(unsafe_code)]

use super::deliver::Deliverer;
use super::device::{lock, post, Core};
use super::error::SubmitError;
use super::request::RequestId;
use super::ring::Doorbell;
use super::shared::{Cmd, Pending, Shared, State};
use crate::request::Nanos;
use std::os::fd::RawFd;
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Rounds of reaping, dispatching and submitting a submitter does at most.
pub(crate) const PASSES: usize = 4;

/// Passes in a row whose transfers all completed within them after which
/// the idle engine thread stops watching the ring. One such pass is not
/// enough: a fast device completes some transfers within their submission
/// and not others, and each of those would then need the thread woken to
/// watch it.
pub(crate) const WITHIN: u32 = 64;

/// What the engine thread sleeps for (under the core's lock).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Sleeper {
    /// It sleeps, or is about to: a wake-up it needs must be written.
    pub(crate) asleep: bool,
    /// It watches the ring too (transfers were in flight).
    pub(crate) ring: bool,
    /// Until the scheduler's idling deadline (`None`: no deadline).
    pub(crate) until: Option<Nanos>,
}

impl Sleeper {
    /// Whether a core left with `in_flight` transfers and idling deadline
    /// `wake` needs the engine thread woken.
    fn needs_waking(&self, in_flight: usize, wake: Option<Nanos>) -> bool {
        let earlier = match (wake, self.until) {
            (Some(w), Some(u)) => w < u,
            (Some(_), None) => true,
            (None, _) => false,
        };
        self.asleep && ((in_flight > 0 && !self.ring) || earlier)
    }
}

/// The engine's inline side, shared by the engine and its thread.
#[derive(Clone)]
pub(crate) struct Inline {
    pub(crate) core: Arc<Mutex<Core>>,
    pub(crate) deliverer: Arc<Deliverer>,
    pub(crate) bell: Arc<Doorbell>,
    pub(crate) ring_fd: RawFd,
    pub(crate) epoch: Instant,
}

impl Inline {
    /// Admits a request (`admit`, under the registry's lock, which the core's
    /// lock is taken before, so the core accepts requests in the order of
    /// their ids) and runs the scheduler for it on this thread.
    pub(crate) fn submit(
        &self,
        admit: impl FnOnce(&mut State) -> Result<Pending, SubmitError>,
    ) -> Result<RequestId, SubmitError> {
        let mut core = lock(&self.core);
        let p = {
            let shared = core.shared.clone();
            let mut st = shared.lock();
            admit(&mut st)?
        };
        let id = RequestId(p.id);
        core.accept(p);
        // A failed submission leaves the transfers pushed: in flight for
        // the engine thread, which is woken for them and stops the engine
        // if the ring keeps failing.
        let _ = pass(&mut core);
        let sleeper = core.sleeper;
        if sleeper.needs_waking(core.unwatched(), core.wake) {
            core.sleeper.asleep = false;
            self.bell.wake();
        }
        self.deliver(core);
        Ok(id)
    }

    /// Posts what the core collected, lets the core go, then delivers.
    fn deliver(&self, mut core: MutexGuard<'_, Core>) {
        post(&mut core, &self.deliverer);
        drop(core);
        self.deliverer.flush();
    }

    /// The engine thread's loop, until shutdown (or a failed ring); then
    /// every request is answered.
    pub(crate) fn run(self, rx: Receiver<Cmd>) {
        let mut cmds: Vec<Cmd> = Vec::new();
        loop {
            let mut core = lock(&self.core);
            cmds.extend(rx.try_iter());
            if core.commands(&mut cmds) || pass(&mut core).is_err() {
                core.stop(&rx, cmds);
                self.deliver(core);
                self.deliverer.shutdown_notify();
                return;
            }
            let sleeper = Sleeper {
                asleep: true,
                // Also while idle if transfers outlive their submission
                // (a real device): the next one's submitter then need not
                // wake this thread to watch it.
                // Not while a thread in `Engine::wait` watches it: that
                // thread reaps, and wakes this one if it leaves transfers
                // in flight unwatched.
                ring: (core.in_flight() > 0 || core.within < WITHIN) && core.ring_watchers == 0,
                until: core.wake,
            };
            core.sleeper = sleeper;
            self.deliver(core);
            let now = self.epoch.elapsed().as_nanos() as Nanos;
            let wait = sleeper
                .until
                .map(|u| Duration::from_nanos(u.saturating_sub(now).max(1)));
            let ring = sleeper.ring.then_some(self.ring_fd);
            self.bell.sleep(ring, wait, || match rx.try_recv() {
                Ok(c) => {
                    cmds.push(c);
                    true
                }
                Err(_) => false,
            });
        }
    }
}

impl Inline {
    /// [`super::Engine::wait`] of an inline engine: takes what is queued;
    /// if nothing is, reaps the ring itself, then sleeps on the ring and on
    /// the waiters' doorbell until a completion is posted to either (or
    /// `deadline`). Registered as a sleeper under the shared lock after
    /// finding the queue empty, so a completion another thread queues
    /// meanwhile rings the doorbell; one the kernel posts meanwhile leaves
    /// the ring readable: no wake-up is lost. The doorbell is cleared by
    /// the last sleeper to leave, so every sleeper sees it rung.
    pub(crate) fn wait(
        &self,
        out: &mut Vec<super::Completion>,
        deadline: Option<Instant>,
    ) -> usize {
        let shared = self.deliverer.shared();
        let take = |out: &mut Vec<super::Completion>, st: &mut State| {
            let n = st.queue.len();
            out.extend(st.queue.drain(..));
            n
        };
        loop {
            {
                let mut st = shared.lock();
                if !st.queue.is_empty() || st.queue_pending == 0 {
                    return take(out, &mut st);
                }
            }
            {
                let mut core = lock(&self.core);
                let before = core.reaped_total;
                let _ = pass(&mut core);
                core.waits_reaped += core.reaped_total - before;
                core.ring_watchers += 1;
                if core.sleeper.needs_waking(core.unwatched(), core.wake) {
                    core.sleeper.asleep = false;
                    self.bell.wake();
                }
                self.deliver(core);
            }
            let done = self.sleep(shared, deadline);
            {
                let mut core = lock(&self.core);
                core.ring_watchers -= 1;
                if core.sleeper.needs_waking(core.unwatched(), core.wake) {
                    core.sleeper.asleep = false;
                    self.bell.wake();
                }
            }
            if done {
                return take(out, &mut shared.lock());
            }
        }
    }

    /// One sleep of [`Inline::wait`] on the ring and the waiters' doorbell;
    /// whether the wait is over instead (something queued, nothing routed
    /// to the queue outstanding, or `deadline` passed).
    fn sleep(&self, shared: &Shared, deadline: Option<Instant>) -> bool {
        let left = match deadline {
            None => None,
            Some(d) => match d.checked_duration_since(Instant::now()) {
                Some(l) if !l.is_zero() => Some(l),
                _ => return true,
            },
        };
        {
            let mut st = shared.lock();
            if !st.queue.is_empty() || st.queue_pending == 0 {
                return true;
            }
            st.waiters += 1;
        }
        let bell = shared.waiters.as_ref().map_or(-1, |b| b.fd());
        super::ring::poll_two([self.ring_fd, bell], left);
        let mut st = shared.lock();
        st.waiters -= 1;
        if st.waiters == 0 {
            if let Some(b) = &shared.waiters {
                b.clear();
            }
        }
        false
    }
}

/// Up to [`PASSES`] rounds: reap, dispatch, submit. The submission's error
/// (the transfers stay pushed). When it started transfers, counts whether
/// they all completed within it ([`Core::within`]).
fn pass(core: &mut Core) -> std::io::Result<()> {
    let mut started = 0;
    for _ in 0..PASSES {
        core.reaped_total += core.reap() as u64;
        let n = core.dispatch();
        if n == 0 {
            break;
        }
        started += n;
        core.ring.submit()?;
    }
    // What the last round started is the engine thread's to reap: it
    // watches the ring while transfers are in flight.
    if started > 0 {
        core.within = if core.in_flight() > 0 {
            0
        } else {
            core.within.saturating_add(1)
        };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{
        AlignedBuf, ClientOptions, Engine, EngineConfig, EngineError, IoRequest, Submission,
        TargetOptions,
    };
    use std::io::Write;
    use std::os::fd::FromRawFd;
    use std::time::{Duration, Instant};

    /// This thread's CPU time.
    fn thread_cpu() -> Duration {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: fills a live timespec.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
        Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
    }

    /// A pipe: reads of its read end stay in flight until the test writes.
    fn pipe() -> (std::fs::File, std::fs::File) {
        let mut fds = [0; 2];
        // SAFETY: fills two descriptors, owned by the files below.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: just created, owned by nothing else.
        unsafe {
            (
                std::fs::File::from_raw_fd(fds[0]),
                std::fs::File::from_raw_fd(fds[1]),
            )
        }
    }

    fn inline_engine() -> Option<Engine> {
        match Engine::new(EngineConfig {
            submission: Submission::Inline,
            ..EngineConfig::default()
        }) {
            Ok(e) => Some(e),
            Err(EngineError::Unavailable(e)) => {
                eprintln!("io_uring unavailable ({e}): test skipped");
                None
            }
            Err(e) => panic!("{e}"),
        }
    }

    /// A thread in `Engine::wait` sleeps on the ring (no busy loop: its CPU
    /// time while a read stays in flight is a small part of the wait) and
    /// reaps completions itself; a completion of another thread's request
    /// reaches it too (no lost wake-up).
    #[test]
    fn an_inline_wait_reaps_the_ring_itself_without_spinning() {
        let Some(engine) = inline_engine() else {
            return;
        };
        let (rd, wr) = pipe();
        let t = engine.register_file(rd, TargetOptions::buffered()).unwrap();
        let c = engine.add_client(ClientOptions::weight(1)).unwrap();
        let read = || IoRequest::read(c, t, 0, AlignedBuf::new(512).unwrap()).with_len(8);
        let rounds = 20u32;
        let hold = Duration::from_millis(20);
        let (mut cpu, mut out) = (Duration::ZERO, Vec::new());
        for _ in 0..rounds {
            engine.submit(read()).unwrap();
            let mut w = wr.try_clone().unwrap();
            let feeder = std::thread::spawn(move || {
                std::thread::sleep(hold);
                w.write_all(&[7u8; 8]).unwrap();
            });
            let (c0, t0) = (thread_cpu(), Instant::now());
            let mut got = 0;
            while got == 0 {
                got = engine.wait(&mut out, Some(Duration::from_secs(10)));
                assert!(t0.elapsed() < Duration::from_secs(10), "completion lost");
            }
            cpu += thread_cpu() - c0;
            feeder.join().unwrap();
        }
        assert_eq!(out.len(), rounds as usize);
        assert!(out.iter().all(|c| c.result.is_ok()));
        // 20 waits of 20 ms: a thread spinning would spend most of 400 ms.
        assert!(
            cpu < Duration::from_millis(100),
            "waiting took {cpu:?} of CPU"
        );
        let core = super::lock(&engine.inline.as_ref().unwrap().core);
        // The engine thread is woken by the same completion and may reap it
        // first; the waiter gets some of them.
        assert!(core.waits_reaped > 0, "the waiting thread reaped nothing");
        drop(core);
        engine.shutdown();
    }

    /// While one thread waits, another submits: the waiter gets both
    /// completions, the other's without waiting for its own deadline.
    #[test]
    fn an_inline_wait_sees_another_threads_request() {
        let Some(engine) = inline_engine() else {
            return;
        };
        let (rd, mut wr) = pipe();
        let t = engine.register_file(rd, TargetOptions::buffered()).unwrap();
        let a = engine.add_client(ClientOptions::weight(1)).unwrap();
        let b = engine.add_client(ClientOptions::weight(1)).unwrap();
        let read = |c| {
            IoRequest::read(c, t, 0, AlignedBuf::new(512).unwrap())
                .with_len(8)
                .asynchronous()
        };
        engine.submit(read(a)).unwrap();
        let t0 = Instant::now();
        let mut out = Vec::new();
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(50));
                engine.submit(read(b)).unwrap();
                std::thread::sleep(Duration::from_millis(50));
                wr.write_all(&[1u8; 16]).unwrap();
            });
            while out.len() < 2 {
                engine.wait(&mut out, Some(Duration::from_secs(20)));
                assert!(t0.elapsed() < Duration::from_secs(20), "completion lost");
            }
        });
        assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
        assert!(out.iter().all(|c| c.result.is_ok()));
        engine.shutdown();
    }
}
