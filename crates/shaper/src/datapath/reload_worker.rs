//! The reload's thread: started with the shaper's loop and parked on a
//! channel until the loop hands it a reload to read and prepare
//! ([`super::reload::load_and_prepare`]), so that a signal does not wait
//! for a thread to be created. It hands the prepared work back on a
//! second channel and wakes the loop through its eventfd ([`Wake`]).
//!
//! It ends when the loop's side ([`Worker`]) is dropped: the shaper
//! stopped (SIGTERM, SIGINT, a failed socket) or was dropped. Dropped
//! while idle, the thread is joined (it is parked: it ends at once);
//! dropped while it prepares (or warms up), it is left to end once that
//! work is done, which nobody then takes (a stop does not wait for a
//! preparation).
//! A thread that died (a panic) is noticed at the next request and
//! started again.
//!
//! **Warm-up.** Started with the running configuration, the thread first
//! prepares it once and throws the result away ([`super::warm_up`]), so
//! that the first reload finds its memory ready; a reload asked for
//! meanwhile waits for it.

use super::reload::{load_and_prepare, Prepared, ReloadError};
use super::wake::Wake;
use super::warm_up::warm_up;
use crate::load::Source;
use crate::validate::Checked;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::sync::Arc;
use std::thread::JoinHandle;

/// What the loop asks the thread to prepare.
pub(super) struct Ask {
    /// Where the configuration is read from.
    pub source: Source,
    /// The running plan, prepared against.
    pub old: Arc<Checked>,
    /// When it was asked ([`super::run::now_ns`]).
    pub now_ns: u64,
}

/// A preparation's outcome.
pub(super) type Outcome = Result<Prepared, ReloadError>;

/// What [`Worker::take`] finds.
pub(super) enum Taken {
    /// Nothing yet.
    Nothing,
    /// The work asked for (boxed: it is large, and moves twice).
    Done(Box<Outcome>),
    /// The thread ended without an answer (it panicked).
    Gone,
}

/// The loop's side of the reload's thread.
pub(super) struct Worker {
    /// `None` once dropping: the thread's `recv` then fails and it ends.
    ask: Option<Sender<Ask>>,
    prepared: Receiver<Box<Outcome>>,
    thread: Option<JoinHandle<()>>,
    /// Asked and not yet taken.
    busy: bool,
    /// The warm-up still runs (the thread is not parked yet).
    warming: Arc<AtomicBool>,
}

impl Worker {
    /// Starts the thread (under the normal policy even when the loop runs
    /// under `SCHED_FIFO`: [`super::run::realtime`] resets it for the
    /// threads the loop starts); it wakes `wake` after each preparation.
    /// With `warm` (the running configuration), it first warms up on it
    /// ([`warm_up`]).
    pub fn start(wake: Arc<Wake>, warm: Option<Ask>) -> io::Result<Worker> {
        let (ask, asked) = mpsc::channel::<Ask>();
        let (done, prepared) = mpsc::channel();
        let warming = Arc::new(AtomicBool::new(warm.is_some()));
        let warmed = Arc::clone(&warming);
        let thread = std::thread::Builder::new()
            .name("fairway-reload".into())
            .spawn(move || {
                if let Some(a) = warm {
                    // Its outcome, an error included, is nobody's: a
                    // reload reads the file again and reports.
                    drop(warm_up(&a.source, &a.old, a.now_ns));
                    warmed.store(false, Ordering::Release);
                }
                while let Ok(a) = asked.recv() {
                    let outcome = Box::new(load_and_prepare(&a.source, &a.old, a.now_ns));
                    // Nobody left to take it: the loop stopped.
                    if done.send(outcome).is_err() {
                        break;
                    }
                    wake.wake();
                }
            })?;
        Ok(Worker {
            ask: Some(ask),
            prepared,
            thread: Some(thread),
            busy: false,
            warming,
        })
    }

    /// Hands `a` to the thread; it comes back if the thread has ended.
    pub fn ask(&mut self, a: Ask) -> Result<(), Ask> {
        let sent = match &self.ask {
            Some(tx) => tx.send(a).map_err(|e| e.0),
            None => Err(a),
        };
        self.busy = sent.is_ok();
        sent
    }

    /// The outcome of the work asked for, if it is ready.
    pub fn take(&mut self) -> Taken {
        let taken = match self.prepared.try_recv() {
            Err(TryRecvError::Empty) => return Taken::Nothing,
            Err(TryRecvError::Disconnected) => Taken::Gone,
            Ok(outcome) => Taken::Done(outcome),
        };
        self.busy = false;
        taken
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.ask = None;
        if let Some(t) = self.thread.take() {
            if !self.busy && !self.warming.load(Ordering::Acquire) {
                // Parked in `recv`, which now fails: it ends at once.
                let _ = t.join();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    use crate::datapath::test_plan::example_source as example;

    /// Waits up to a minute for the thread to let go of `wake`.
    fn ended(wake: &Arc<Wake>) -> bool {
        let t0 = Instant::now();
        while Arc::strong_count(wake) > 1 {
            if t0.elapsed() > Duration::from_secs(60) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        true
    }

    /// Waits up to a minute for the work asked of `w`.
    fn outcome_of(w: &mut Worker) -> Box<Outcome> {
        let t0 = Instant::now();
        loop {
            match w.take() {
                Taken::Nothing => {
                    assert!(t0.elapsed() < Duration::from_secs(60));
                    std::thread::sleep(Duration::from_millis(1));
                }
                Taken::Done(o) => return o,
                Taken::Gone => panic!("the thread ended"),
            }
        }
    }

    #[test]
    fn the_thread_serves_reload_after_reload_and_ends_when_dropped_idle() {
        let (source, old) = example();
        let wake = Arc::new(Wake::new().unwrap());
        let mut w = Worker::start(Arc::clone(&wake), None).unwrap();
        assert_eq!(Arc::strong_count(&wake), 2, "the thread holds the wake");
        for _ in 0..2 {
            let a = Ask {
                source: source.clone(),
                old: Arc::clone(&old),
                now_ns: 0,
            };
            assert!(w.ask(a).is_ok());
            let outcome = outcome_of(&mut w);
            assert!(outcome.is_ok(), "the same file prepares");
        }
        drop(w);
        assert_eq!(Arc::strong_count(&wake), 1, "joined: the thread ended");
    }

    #[test]
    fn dropped_while_it_prepares_the_thread_ends_after_that_work() {
        let (source, old) = example();
        let wake = Arc::new(Wake::new().unwrap());
        let mut w = Worker::start(Arc::clone(&wake), None).unwrap();
        let a = Ask {
            source,
            old,
            now_ns: 0,
        };
        assert!(w.ask(a).is_ok());
        drop(w);
        assert!(ended(&wake), "the thread ends once its work is done");
    }

    #[test]
    fn the_warm_up_answers_nobody_and_a_reload_after_it_is_served() {
        let (source, old) = example();
        let wake = Arc::new(Wake::new().unwrap());
        let warm = Ask {
            source: source.clone(),
            old: Arc::clone(&old),
            now_ns: 0,
        };
        let mut w = Worker::start(Arc::clone(&wake), Some(warm)).unwrap();
        let t0 = Instant::now();
        while w.warming.load(Ordering::Acquire) {
            assert!(t0.elapsed() < Duration::from_secs(60), "the warm-up ends");
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(
            matches!(w.take(), Taken::Nothing),
            "no outcome for the warm-up"
        );
        let mut p = libc::pollfd {
            fd: wake.raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one live pollfd.
        let woken = unsafe { libc::poll(&mut p, 1, 0) } == 1;
        assert!(!woken, "the warm-up does not wake the loop");
        let a = Ask {
            source,
            old,
            now_ns: 0,
        };
        assert!(w.ask(a).is_ok());
        let outcome = outcome_of(&mut w);
        assert!(outcome.is_ok());
        drop(w);
        assert_eq!(Arc::strong_count(&wake), 1, "joined: the thread ended");
    }

    #[test]
    fn dropped_while_it_warms_up_the_thread_ends_after_that_work() {
        let (source, old) = example();
        let wake = Arc::new(Wake::new().unwrap());
        let warm = Ask {
            source,
            old,
            now_ns: 0,
        };
        let w = Worker::start(Arc::clone(&wake), Some(warm)).unwrap();
        drop(w);
        assert!(ended(&wake), "the thread ends once its warm-up is done");
    }
}
