//! The replay of a start-up trace, as S's replayer does it: one thread
//! per process of the trace, each reading its own 20 MiB region; the
//! requests are issued strictly in trace order, the thread owning the next
//! one issuing it (control passes between threads as between the
//! application's processes); a sequential request continues where the
//! thread's previous one ended (from the region's start when it would run
//! past the end), a random one lands on a random 4 KiB boundary of the
//! region; read-ahead is issued without waiting, and a thread's next
//! synchronous read first waits for all its read-ahead. The start-up time
//! runs from the first request to the last thread's last completion.

use super::port::{Counters, Op, Port};
use super::trace::{Pattern, Trace};
use super::workers::Rng;
use super::SBenchError;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Each process's region, bytes (S's replayer: a 20 MB file each).
pub const APP_REGION: u64 = 20 << 20;

/// How a replay went.
#[derive(Clone, Copy, Debug)]
pub struct Replayed {
    /// Seconds from the first request to the last completion (up to the
    /// abort, if timed out).
    pub secs: f64,
    /// Stopped at the time limit before the end of the trace.
    pub timed_out: bool,
}

struct Turn {
    next: usize,
    started: bool,
    abort: bool,
}

/// Replays `trace` with one port per trace thread (`ports[i]` for
/// `trace.threads[i]`), regions from `base`, stopping after `limit`.
pub fn replay<P: Port + 'static>(
    trace: &Arc<Trace>,
    ports: Vec<P>,
    base: u64,
    seed: u64,
    limit: Duration,
    counters: &Arc<Counters>,
) -> Result<Replayed, SBenchError> {
    let turn = Arc::new((
        Mutex::new(Turn {
            next: 0,
            started: false,
            abort: false,
        }),
        Condvar::new(),
    ));
    let deadline = Arc::new(Mutex::new(None::<Instant>));
    let mut handles = Vec::new();
    for (me, mut port) in ports.into_iter().enumerate() {
        let (trace, turn, counters, deadline) = (
            trace.clone(),
            turn.clone(),
            counters.clone(),
            deadline.clone(),
        );
        let region = base + me as u64 * APP_REGION;
        let run = move || -> Result<bool, SBenchError> {
            let mut rng = Rng::new(seed ^ (me as u64 + 1) << 32);
            let mut off = 0u64;
            let (lock, cv) = &*turn;
            let mut timed_out = false;
            loop {
                let i = {
                    let mut t = lock.lock().unwrap_or_else(|e| e.into_inner());
                    while !t.abort
                        && (!t.started
                            || (t.next < trace.requests.len()
                                && trace.requests[t.next].thread != me))
                    {
                        t = cv.wait(t).unwrap_or_else(|e| e.into_inner());
                    }
                    if t.abort || t.next == trace.requests.len() {
                        break;
                    }
                    let over = deadline
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .is_some_and(|d| Instant::now() > d);
                    if over || crate::disk::s_bench::interrupted() {
                        t.abort = true;
                        timed_out = over;
                        cv.notify_all();
                        break;
                    }
                    t.next
                };
                let r = trace.requests[i];
                let len = u64::from(r.sectors) * 512;
                let at = match r.pattern {
                    Pattern::Seq => {
                        if off + len > APP_REGION {
                            off = 0;
                        }
                        off
                    }
                    Pattern::Rand => rng.below((APP_REGION - len) / 4096 + 1) * 4096,
                };
                off = at + len;
                // The last request is synchronous, so the end is measured.
                let done = if r.asynchronous && i + 1 < trace.requests.len() {
                    port.read_async(region + at, len as u32)
                } else {
                    port.drain()
                        .and_then(|()| port.sync(Op::Read, region + at, len as u32))
                };
                if let Err(e) = done {
                    lock.lock().unwrap_or_else(|e| e.into_inner()).abort = true;
                    cv.notify_all();
                    return Err(e);
                }
                counters.add(0);
                let mut t = lock.lock().unwrap_or_else(|e| e.into_inner());
                t.next = i + 1;
                cv.notify_all();
            }
            port.drain()?;
            Ok(timed_out)
        };
        handles.push(
            std::thread::Builder::new()
                .name("s-bench-replay".into())
                .spawn(run)
                .map_err(|e| SBenchError::Io {
                    what: "spawning a replay thread".into(),
                    source: e,
                })?,
        );
    }
    let t0 = Instant::now();
    *deadline.lock().unwrap_or_else(|e| e.into_inner()) = Some(t0 + limit);
    {
        let (lock, cv) = &*turn;
        lock.lock().unwrap_or_else(|e| e.into_inner()).started = true;
        cv.notify_all();
    }
    let mut timed_out = false;
    let mut first_err = None;
    for h in handles {
        match h.join() {
            Ok(Ok(t)) => timed_out |= t,
            Ok(Err(e)) => {
                let (lock, cv) = &*turn;
                lock.lock().unwrap_or_else(|e| e.into_inner()).abort = true;
                cv.notify_all();
                first_err.get_or_insert(e);
            }
            Err(_) => {
                first_err.get_or_insert(SBenchError::Panicked("replay"));
            }
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    if let Some(e) = first_err {
        return Err(e);
    }
    if crate::disk::s_bench::interrupted() {
        return Err(SBenchError::Interrupted);
    }
    Ok(Replayed { secs, timed_out })
}
