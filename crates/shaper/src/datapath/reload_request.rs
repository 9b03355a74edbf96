//! Requests to reload the running shaper's configuration, and their
//! answers: the meeting point of whoever asks (the control socket's
//! `reload` verb) and the data path's loop, which alone may change the
//! tree.
//!
//! The loop checks [`ReloadRequests::pending`] (one atomic load) each
//! turn; when set it calls [`ReloadRequests::take`], reloads, and hands
//! the outcome to [`ReloadRequests::complete`], which wakes every caller
//! waiting in [`ReloadRequests::wait`]. Requests made while one reload
//! runs are served by the next one, so a reload always reads the file as
//! it is after the request. SIGHUP cannot take a lock inside a signal
//! handler: it sets its own flag, which the loop treats like a request.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The outcome of one reload, as reported to whoever asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReloadAnswer {
    /// Whether the new configuration now runs (false: it was refused and
    /// the old one keeps running).
    pub ok: bool,
    /// What happened, one line per fact or problem.
    pub text: String,
}

#[derive(Debug, Default)]
struct State {
    /// Tickets handed out.
    requested: u64,
    /// The highest ticket a finished reload covered.
    completed: u64,
    /// The answer of the last finished reload.
    last: Option<ReloadAnswer>,
}

/// Reload requests between their askers and the loop. Shared by `Arc`.
#[derive(Debug, Default)]
pub struct ReloadRequests {
    pending: AtomicBool,
    state: Mutex<State>,
    done: Condvar,
}

impl ReloadRequests {
    /// No request yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks for a reload; returns the ticket to [`wait`](Self::wait) on.
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

    /// The loop starts a reload: returns the highest ticket it covers
    /// (0 when it was started by SIGHUP alone, with no request).
    pub fn take(&self) -> u64 {
        let s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        self.pending.store(false, Ordering::Release);
        s.requested
    }

    /// The loop finished the reload started by [`take`](Self::take),
    /// which returned `ticket`.
    pub fn complete(&self, ticket: u64, answer: ReloadAnswer) {
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        s.completed = s.completed.max(ticket);
        s.last = Some(answer);
        self.done.notify_all();
    }

    /// Waits until a reload covering `ticket` finished, at most
    /// `timeout`; `None` if none did in time.
    pub fn wait(&self, ticket: u64, timeout: Duration) -> Option<ReloadAnswer> {
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
    use std::sync::Arc;

    #[test]
    fn a_request_is_answered_by_the_reload_that_takes_it() {
        let r = Arc::new(ReloadRequests::new());
        assert!(!r.pending());
        let t = r.request();
        assert!(r.pending());
        let asker = {
            let r = r.clone();
            std::thread::spawn(move || r.wait(t, Duration::from_secs(60)))
        };
        let covered = r.take();
        assert!(!r.pending());
        assert_eq!(covered, t);
        let answer = ReloadAnswer {
            ok: true,
            text: "reloaded".into(),
        };
        r.complete(covered, answer.clone());
        assert_eq!(asker.join().unwrap(), Some(answer));
    }

    #[test]
    fn a_request_after_the_take_waits_for_the_next_reload() {
        let r = ReloadRequests::new();
        let first = r.request();
        let covered = r.take();
        let second = r.request();
        r.complete(
            covered,
            ReloadAnswer {
                ok: true,
                text: String::new(),
            },
        );
        assert_eq!(r.wait(first, Duration::ZERO).map(|a| a.ok), Some(true));
        assert!(r.pending());
        assert_eq!(r.wait(second, Duration::from_millis(1)), None);
    }
}
