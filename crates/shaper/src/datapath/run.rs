//! The shaper's loop: receive from both interfaces, shape, send, sleep
//! until the next frame may go or a frame arrives; stop on SIGINT or
//! SIGTERM (or when the caller's flag is set) and report every frame;
//! reload on SIGHUP or a [`ReloadRequests`] request ([`Reload`]).
//!
//! One thread does everything: receiving drains each socket up to
//! [`BATCH`] frames per turn, so neither direction starves the other;
//! sending hands each port up to [`BATCH`] frames at a time;
//! the sleep is a `ppoll` on both sockets with a nanosecond timeout up to
//! the earliest time a queued frame may go (at most [`IDLE_NS`], so that
//! a stop request is seen promptly). With [`Hooks`] (the control socket
//! and the metrics endpoint), the sleep also ends when another thread
//! asks for statistics or a reload, which the loop serves at the end of
//! its turn.
//!
//! A reload reads and prepares the new configuration on a thread of its
//! own, started with the loop and parked until a reload is asked for
//! (`reload_worker.rs`), while the loop goes on
//! shaping with the old one; the loop applies it between two frames
//! ([`Engine::apply`]) and hands the outcome to [`Reload::on_outcome`]
//! and to the askers. Requests that arrive meanwhile are served by the
//! next reload. Nothing waits on a polling interval: SIGHUP's handler
//! and the reload's thread, once its work is prepared, each end the
//! loop's sleep through an eventfd of the reloads ([`Wake`]), whichever
//! thread the signal is delivered to and even when it comes between the
//! loop's last look and its sleep. The reload's *applied in* runs from
//! the signal (its handler reads the clock) or from the loop taking a
//! socket's request.

use super::engine::{Engine, EngineError, Out, POOL_SLOTS};
use super::hooks::Hooks;
use super::pool::Pool;
use super::port::{self, Port, PortError};
use super::reload::refused;
use super::reload_request::{ReloadAnswer, ReloadRequests};
use super::reload_worker::{Ask, Taken, Worker};
use super::stats::Report;
use super::wake::Wake;
use crate::load::Source;
use crate::plan::Dir;
use crate::validate::Checked;
use std::fmt;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Frames received from one socket before the loop turns to the other
/// and to sending; frames handed to a port at once.
pub const BATCH: usize = 64;
/// The longest sleep, ns.
pub const IDLE_NS: u64 = 100_000_000;

/// How a running shaper reloads: where from, who asks, who hears.
pub struct Reload<'a> {
    /// The configuration the shaper was started with, read again at
    /// every reload.
    pub source: Source,
    /// Requests (the control socket's `reload` verb); SIGHUP counts as
    /// one.
    pub requests: Arc<ReloadRequests>,
    /// Told every outcome, applied or refused (the CLI prints it).
    pub on_outcome: &'a mut dyn FnMut(&ReloadAnswer),
}

/// Why the shaper could not run.
#[derive(Debug)]
pub enum RunError {
    /// The configuration names no interfaces (`[interfaces]`).
    NoInterfaces,
    /// An interface could not be opened.
    Port(PortError),
    /// The queues could not be built.
    Engine(EngineError),
    /// A socket failed while shaping.
    Io {
        /// The interface.
        interface: String,
        /// The system's error.
        source: io::Error,
    },
    /// The stop signals could not be handled.
    Signals(io::Error),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::NoInterfaces => write!(
                f,
                "the configuration names no interfaces: shaping needs a shaper file with \
                 [interfaces] (internet, subscribers, rate)"
            ),
            RunError::Port(e) => e.fmt(f),
            RunError::Engine(e) => e.fmt(f),
            RunError::Io { interface, source } => write!(f, "interface {interface:?}: {source}"),
            RunError::Signals(e) => write!(f, "cannot handle SIGINT, SIGTERM and SIGHUP: {e}"),
        }
    }
}

impl std::error::Error for RunError {}

/// What a run did.
#[derive(Debug)]
pub struct Outcome {
    /// Every class's counters at the stop (frames still queued included).
    pub report: Report,
    /// Frames the kernel dropped before the shaper read them, per
    /// interface (internet, subscribers).
    pub kernel_drops: [(String, u64); 2],
}

/// A flag set by SIGINT and SIGTERM.
pub fn stop_on_signals() -> Result<Arc<AtomicBool>, RunError> {
    let flag = Arc::new(AtomicBool::new(false));
    for s in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(s, Arc::clone(&flag)).map_err(RunError::Signals)?;
    }
    Ok(flag)
}

/// The real-time priorities [`realtime`] accepts: SCHED_FIFO's range on
/// Linux.
pub const RT_PRIORITIES: std::ops::RangeInclusive<u8> = 1..=99;

/// Puts the calling thread under `SCHED_FIFO` at `priority`, and every
/// thread it starts afterwards back under the normal policy
/// (`SCHED_RESET_ON_FORK`: the control socket, the metrics endpoint and a
/// reload's preparation run as before). Called on the thread that then
/// calls [`run`], whose loop then no longer waits behind other processes
/// for a core: on a machine whose cores are all busy, a normal thread
/// woken for the next frame can wait for a core for milliseconds (tens
/// under heavy load), and every frame of every circuit waits with it;
/// the kernel's own forwarding runs in softirq context and never waits
/// so. The loop sleeps whenever nothing is due, so it takes only the
/// CPU the traffic needs (and the kernel's real-time throttling bounds
/// it). Needs `CAP_SYS_NICE` or an `RLIMIT_RTPRIO` of at least
/// `priority`; a priority outside [`RT_PRIORITIES`] is refused.
pub fn realtime(priority: u8) -> io::Result<()> {
    if !RT_PRIORITIES.contains(&priority) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("priority {priority} outside 1..=99"),
        ));
    }
    let param = libc::sched_param {
        sched_priority: libc::c_int::from(priority),
    };
    // SAFETY: pid 0 is the calling thread; `param` is live.
    let rc = unsafe {
        libc::sched_setscheduler(0, libc::SCHED_FIFO | libc::SCHED_RESET_ON_FORK, &param)
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// CLOCK_MONOTONIC, ns.
pub fn now_ns() -> u64 {
    // SAFETY: all-zero is a valid timespec; clock_gettime writes it.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: a valid clock id and a live timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A reload being prepared off the loop.
struct Job {
    ticket: u64,
    started_ns: u64,
}

/// The loop's side of reloads: SIGHUP's flag and time, the requests,
/// the job, and the eventfd that ends the loop's sleep for them.
struct Reloader<'a> {
    hooks: Reload<'a>,
    hup: Arc<AtomicBool>,
    /// When the last SIGHUP came ([`now_ns`]).
    hup_ns: Arc<AtomicU64>,
    wake: Arc<Wake>,
    /// The reload's thread, started with the loop (`None` if it could
    /// not start; tried again at the next request).
    worker: Option<Worker>,
    job: Option<Job>,
}

impl<'a> Reloader<'a> {
    /// `running` is the plan the shaper starts with: the reload's thread
    /// warms up on it (`reload_worker.rs`).
    fn new(hooks: Reload<'a>, running: Arc<Checked>) -> Result<Self, RunError> {
        let hup = Arc::new(AtomicBool::new(false));
        let hup_ns = Arc::new(AtomicU64::new(0));
        let wake = Arc::new(Wake::new().map_err(RunError::Signals)?);
        let (flag, at, woken) = (Arc::clone(&hup), Arc::clone(&hup_ns), Arc::clone(&wake));
        let action = move || {
            at.store(now_ns(), Ordering::Relaxed);
            flag.store(true, Ordering::Release);
            woken.wake();
        };
        // SAFETY: the action only reads the clock (clock_gettime), stores
        // to atomics and writes to an eventfd: all async-signal-safe; it
        // neither allocates nor locks.
        unsafe { signal_hook::low_level::register(signal_hook::consts::SIGHUP, action) }
            .map_err(RunError::Signals)?;
        // A thread that cannot start now is tried again at the signal,
        // whose reload is refused if it still cannot.
        let warm = Ask {
            source: hooks.source.clone(),
            old: running,
            now_ns: now_ns(),
        };
        let worker = Worker::start(Arc::clone(&wake), Some(warm)).ok();
        Ok(Reloader {
            hooks,
            hup,
            hup_ns,
            wake,
            worker,
            job: None,
        })
    }

    /// The descriptor that ends the loop's sleep for a reload.
    fn raw_fd(&self) -> i32 {
        self.wake.raw_fd()
    }

    /// Starts a reload if one is asked for and none runs; applies a
    /// prepared one.
    fn turn(&mut self, engine: &mut Engine) {
        self.wake.clear();
        let signalled = self.job.is_none() && self.hup.swap(false, Ordering::Acquire);
        if signalled || (self.job.is_none() && self.hooks.requests.pending()) {
            let ticket = self.hooks.requests.take();
            let now = now_ns();
            // From the signal when one asked (it may have waited for a
            // reload before it to end), else from now.
            let started_ns = if signalled {
                self.hup_ns.load(Ordering::Relaxed).min(now)
            } else {
                now
            };
            let ask = Ask {
                source: self.hooks.source.clone(),
                old: Arc::clone(engine.plan()),
                now_ns: now,
            };
            match self.hand_over(ask) {
                Ok(()) => self.job = Some(Job { ticket, started_ns }),
                Err(e) => self.answer(
                    ticket,
                    refused(&format!("cannot start the reload's thread: {e}")),
                ),
            }
        }
        let Some(job) = &self.job else { return };
        let Some(worker) = self.worker.as_mut() else {
            return;
        };
        let outcome = match worker.take() {
            Taken::Nothing => return,
            Taken::Gone => {
                self.worker = None;
                Err(refused(&"the reload's thread ended without an answer"))
            }
            Taken::Done(outcome) => Ok(*outcome),
        };
        let answer = match outcome {
            Err(gone) => gone,
            Ok(Err(e)) => refused(&e),
            Ok(Ok(prepared)) => {
                let t0 = now_ns();
                let applied = engine.apply(prepared, t0);
                let t1 = now_ns();
                match applied {
                    Ok(a) => {
                        let answer = a.answer(t1 - t0, t1.saturating_sub(job.started_ns));
                        let retired = a.retired;
                        // Freed off the loop; if no thread can start, here.
                        let _ = std::thread::Builder::new().spawn(move || drop(retired));
                        answer
                    }
                    Err(stale) => refused(&stale),
                }
            }
        };
        let ticket = job.ticket;
        self.job = None;
        self.answer(ticket, answer);
    }

    /// Hands `ask` to the reload's thread, started again if it never
    /// started or has died.
    fn hand_over(&mut self, ask: Ask) -> io::Result<()> {
        let ask = match self.worker.as_mut() {
            Some(w) => match w.ask(ask) {
                Ok(()) => return Ok(()),
                Err(ask) => ask,
            },
            None => ask,
        };
        let mut w = Worker::start(Arc::clone(&self.wake), None)?;
        let sent = w.ask(ask).map_err(|_| io::Error::other("it ended at once"));
        self.worker = Some(w);
        sent
    }

    fn answer(&mut self, ticket: u64, answer: ReloadAnswer) {
        (self.hooks.on_outcome)(&answer);
        self.hooks.requests.complete(ticket, answer);
    }

    /// The loop stops: a reload still being prepared is not applied.
    fn stop(&mut self) {
        if let Some(job) = self.job.take() {
            let answer = refused(&"the shaper stopped before the reload could be applied");
            self.answer(job.ticket, answer);
        }
        // Its thread ends: at once if parked, else after its work.
        self.worker = None;
    }
}

/// Opens both interfaces and builds the queues; `started` is called once
/// everything is ready, then the loop runs until `stop` is set, serving
/// the statistics requests of `hooks`. With `reload`, SIGHUP and its
/// requests reload the configuration.
pub fn run(
    c: &Checked,
    stop: &AtomicBool,
    hooks: Option<&Hooks>,
    reload: Option<Reload<'_>>,
    started: impl FnOnce(),
) -> Result<Outcome, RunError> {
    let ifs = c.plan.interfaces.as_ref().ok_or(RunError::NoInterfaces)?;
    // A reload's memory is reused by the next one, not faulted in anew.
    super::memory::keep_freed_memory();
    let mut internet = port::open(&ifs.internet, ifs.io).map_err(RunError::Port)?;
    let mut subscribers = port::open(&ifs.subscribers, ifs.io).map_err(RunError::Port)?;
    // Slots for the larger MTU: a frame that fits it fits a slot.
    let mtu = internet.mtu().max(subscribers.mtu());
    let pool = Pool::new(POOL_SLOTS, mtu).map_err(|e| RunError::Engine(EngineError::Pool(e)))?;
    let mut engine = Engine::with_pool(c, now_ns(), pool).map_err(RunError::Engine)?;
    let mut outs: [Vec<Out>; 2] = [Vec::with_capacity(BATCH), Vec::with_capacity(BATCH)];
    let mut reloader = reload
        .map(|r| Reloader::new(r, Arc::clone(engine.plan())))
        .transpose()?;
    // Drops counted so far were before the shaper ran: reset.
    internet.kernel_drops();
    subscribers.kernel_drops();
    started();
    let mut kernel = [0u64; 2];
    while !stop.load(Ordering::Relaxed) {
        if let Some(r) = reloader.as_mut() {
            r.turn(&mut engine);
        }
        let mut got = 0;
        for (port, dir) in [
            (&mut internet, Dir::Download),
            (&mut subscribers, Dir::Upload),
        ] {
            // One clock reading per batch: a batch is read in
            // microseconds, far below CoDel's 5 ms target.
            let now = now_ns();
            for _ in 0..BATCH {
                let mut failed = None;
                let received = engine.receive(dir, now, |buf| match port.recv(buf) {
                    Ok(n) => n,
                    Err(e) => {
                        failed = Some(e);
                        None
                    }
                });
                if let Some(source) = failed {
                    let interface = port.name().to_string();
                    if let Some(r) = reloader.as_mut() {
                        r.stop();
                    }
                    return Err(RunError::Io { interface, source });
                }
                if !received {
                    break;
                }
                got += 1;
            }
        }
        let now = now_ns();
        // outs[0] leave by the subscribers' side (download), outs[1] by
        // the Internet's.
        while let Some(out) = engine.next(now) {
            let k = usize::from(out.dir == Dir::Upload);
            outs[k].push(out);
            if outs[k].len() == BATCH {
                let port = if k == 0 {
                    &mut subscribers
                } else {
                    &mut internet
                };
                send(&mut engine, port.as_mut(), &mut outs[k]);
            }
        }
        send(&mut engine, subscribers.as_mut(), &mut outs[0]);
        send(&mut engine, internet.as_mut(), &mut outs[1]);
        kernel[0] += internet.kernel_drops();
        kernel[1] += subscribers.kernel_drops();
        if let Some(h) = hooks {
            h.serve_stats(&mut engine, now);
        }
        if got > 0 {
            continue;
        }
        let wait = engine
            .ready_at()
            .map_or(IDLE_NS, |t| t.saturating_sub(now))
            .min(IDLE_NS);
        if wait > 0 {
            let woken = hooks.map_or(-1, |h| h.wake.raw_fd());
            let reload = reloader.as_ref().map_or(-1, Reloader::raw_fd);
            sleep_on(
                &[internet.raw_fd(), subscribers.raw_fd(), woken, reload],
                wait,
            );
        }
    }
    if let Some(r) = reloader.as_mut() {
        r.stop();
    }
    Ok(Outcome {
        report: engine.report(),
        kernel_drops: [
            (internet.name().to_string(), kernel[0]),
            (subscribers.name().to_string(), kernel[1]),
        ],
    })
}

/// Hands `outs` (at most [`BATCH`]) to `port` and reports each to the
/// engine as sent or failed.
fn send(engine: &mut Engine, port: &mut dyn Port, outs: &mut Vec<Out>) {
    if outs.is_empty() {
        return;
    }
    let mut frames: [&[u8]; BATCH] = [&[]; BATCH];
    let mut ok = [false; BATCH];
    for (f, o) in frames.iter_mut().zip(outs.iter()) {
        *f = engine.frame(o.frame);
    }
    let n = outs.len();
    port.send(&frames[..n], &mut ok[..n]);
    for (o, ok) in outs.drain(..).zip(ok) {
        engine.sent(o, ok);
    }
}

/// Waits until a descriptor is readable (negative ones are ignored), `ns`
/// pass, or a signal arrives.
fn sleep_on(fds: &[i32; 4], ns: u64) {
    let mut p = fds.map(|fd| libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    });
    let ts = libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: `p` holds four live pollfds; `ts` is live; no signal
    // mask. An error (EINTR on a signal) just ends the sleep.
    unsafe { libc::ppoll(p.as_mut_ptr(), 4, &ts, std::ptr::null()) };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// True if `fd` becomes readable within `ms`.
    fn readable(fd: i32, ms: i32) -> bool {
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one live pollfd.
        unsafe { libc::poll(&mut p, 1, ms) == 1 }
    }

    #[test]
    fn sighup_and_the_prepared_reload_each_end_the_loops_sleep_at_once() {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples/shaper/shaper.toml");
        let source = Source::ShaperFile(file);
        let c = crate::load::load(&source).unwrap_or_else(|e| panic!("{}", e[0]));
        let mut engine = Engine::new(&c, now_ns()).unwrap();
        let mut answers = Vec::new();
        let mut on = |a: &ReloadAnswer| answers.push(a.clone());
        let running = Arc::clone(engine.plan());
        let mut r = Reloader::new(
            Reload {
                source,
                requests: Arc::new(ReloadRequests::new()),
                on_outcome: &mut on,
            },
            running,
        )
        .unwrap();
        assert!(
            r.worker.is_some(),
            "the reload's thread waits before any signal"
        );
        let fd = r.raw_fd();
        assert!(!readable(fd, 0));
        let before = now_ns();
        // SAFETY: plain system call; the handler is registered above and
        // runs on this thread before `raise` returns.
        assert_eq!(unsafe { libc::raise(libc::SIGHUP) }, 0);
        assert!(readable(fd, 0), "the signal ends the sleep");
        let signalled = r.hup_ns.load(Ordering::Relaxed);
        assert!(
            (before..=now_ns()).contains(&signalled),
            "the signal's time noted"
        );
        r.turn(&mut engine);
        // The reload of the small example file may be prepared before
        // this turn looks, and then it is applied in the same turn.
        if let Some(job) = r.job.as_ref() {
            assert_eq!(job.started_ns, signalled, "timed from the signal");
            assert!(readable(fd, 60_000), "the prepared reload ends the sleep");
            r.turn(&mut engine);
        } else {
            // Its thread wakes the loop after handing the work over, so
            // the wake-up still comes: the next turn takes it.
            assert!(readable(fd, 60_000), "the prepared reload ends the sleep");
            r.turn(&mut engine);
        }
        assert!(r.job.is_none());
        // Nothing keeps the loop awake afterwards. A wake-up written just
        // before the turn may be left for the next one (`Wake::clear`
        // reads the eventfd once the writer has armed it): a turn or two
        // takes it.
        for _ in 0..100 {
            if !readable(fd, 0) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
            r.turn(&mut engine);
        }
        assert!(!readable(fd, 0));
        assert!(r.worker.is_some(), "the same thread waits for the next one");
        r.stop();
        assert!(r.worker.is_none(), "a stop ends the reload's thread");
        drop(r);
        assert_eq!(answers.len(), 1);
        assert!(answers[0].ok, "{}", answers[0].text);
    }

    #[test]
    fn a_priority_outside_fifos_range_is_refused_and_nothing_changes() {
        for p in [0, 100, 255] {
            let e = realtime(p).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{p}");
            assert!(e.to_string().contains("outside 1..=99"), "{e}");
        }
        // SAFETY: pid 0, the calling thread.
        assert_eq!(unsafe { libc::sched_getscheduler(0) }, libc::SCHED_OTHER);
    }
}
