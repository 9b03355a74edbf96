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

/// The outcome of one reload, as reported to whoever asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReloadAnswer {
    /// Whether the new configuration now runs (false: it was refused and
    /// the old one keeps running).
    pub ok: bool,
    /// What happened, one line per fact or problem.
    pub text: String,
}

/// Reload requests between their askers and the loop (shared by `Arc`):
/// the same hand-over as the statistics' snapshots.
pub type ReloadRequests = super::snapshot_request::Requests<ReloadAnswer>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

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
