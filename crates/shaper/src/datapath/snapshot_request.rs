//! Snapshot requests between the threads that want statistics (the
//! control socket, the metrics endpoint) and the data path's loop, which
//! alone reads the engine.
//!
//! The same hand-over as [`super::reload_request`]: an asker takes a
//! ticket ([`Requests::request`]), wakes the loop, and waits
//! ([`Requests::wait`]); the loop sees [`Requests::pending`] (one atomic
//! load a turn), [`Requests::take`]s every request made so far, builds
//! one snapshot and [`Requests::complete`]s them all with it. Askers
//! arriving together share a snapshot, so a burst of scrapes costs the
//! loop one.

use super::snapshot::{Layout, Raw};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

#[derive(Debug)]
struct State<T> {
    requested: u64,
    completed: u64,
    last: Option<T>,
}

/// Requests for a `T` the loop makes, and their answer.
#[derive(Debug)]
pub struct Requests<T> {
    pending: AtomicBool,
    state: Mutex<State<T>>,
    done: Condvar,
}

/// What the loop hands over: its numbers and the names to put to them.
#[derive(Debug)]
pub struct Taken {
    /// The rows' names (shared, not copied).
    pub layout: Arc<Layout>,
    /// The numbers.
    pub raw: Raw,
}

/// Requests for statistics.
pub type SnapshotRequests = Requests<Arc<Taken>>;

impl<T: Clone> Default for Requests<T> {
    fn default() -> Self {
        Requests {
            pending: AtomicBool::new(false),
            state: Mutex::new(State {
                requested: 0,
                completed: 0,
                last: None,
            }),
            done: Condvar::new(),
        }
    }
}

impl<T: Clone> Requests<T> {
    /// No request yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks; returns the ticket to [`wait`](Self::wait) on.
    pub fn request(&self) -> u64 {
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        s.requested += 1;
        self.pending.store(true, Ordering::Release);
        s.requested
    }

    /// Whether a request waits (the loop's cheap check).
    pub fn pending(&self) -> bool {
        self.pending.load(Ordering::Acquire)
    }

    /// The loop starts answering: the highest ticket its answer covers.
    pub fn take(&self) -> u64 {
        let s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        self.pending.store(false, Ordering::Release);
        s.requested
    }

    /// The loop's answer to every request up to `ticket`.
    pub fn complete(&self, ticket: u64, answer: T) {
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        s.completed = s.completed.max(ticket);
        s.last = Some(answer);
        self.done.notify_all();
    }

    /// Waits until an answer covering `ticket` came, at most `timeout`.
    pub fn wait(&self, ticket: u64, timeout: Duration) -> Option<T> {
        let deadline = Instant::now() + timeout;
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        while s.completed < ticket {
            let left = deadline.checked_duration_since(Instant::now())?;
            s = self
                .done
                .wait_timeout(s, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        s.last.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn askers_share_one_answer_and_late_ones_wait_for_the_next() {
        let r = Arc::new(Requests::<u32>::new());
        let (a, b) = (r.request(), r.request());
        let waiter = {
            let r = r.clone();
            std::thread::spawn(move || r.wait(a, Duration::from_secs(60)))
        };
        assert!(r.pending());
        let t = r.take();
        assert!(!r.pending());
        let late = r.request();
        r.complete(t, 7);
        assert_eq!(waiter.join().unwrap(), Some(7));
        assert_eq!(r.wait(b, Duration::ZERO), Some(7));
        assert_eq!(r.wait(late, Duration::from_millis(1)), None);
    }
}
