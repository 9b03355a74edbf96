//! How a device thread ([`crate::uring_device`]'s or the engine's) takes
//! the commands sent to it: first, if it has nothing else to do, it waits
//! for one ([`Wait`]: not at all, until the scheduler's idling deadline, or
//! for as long as it takes), then it takes every other command already
//! sent, so a burst of submissions is handled in one pass.

use crate::request::Nanos;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

/// How long a device thread waits on its channel for the first command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// Not at all: something else (a transfer in flight, a request the
    /// scheduler can dispatch, an idling deadline already past) needs it.
    None,
    /// At most this long: the scheduler idles until then.
    Until(Duration),
    /// Until a command comes: nothing is queued or in flight.
    Forever,
}

impl Wait {
    /// The wait of a device with transfers in flight or not, at `now`,
    /// whose scheduler holds `queued` requests and asked to idle until
    /// `wake` (if it did).
    pub(crate) fn for_commands(
        in_flight: bool,
        wake: Option<Nanos>,
        now: Nanos,
        queued: usize,
    ) -> Self {
        match wake {
            _ if in_flight => Self::None,
            Some(w) if w > now => Self::Until(Duration::from_nanos(w - now)),
            Some(_) => Self::None,
            None if queued == 0 => Self::Forever,
            None => Self::None,
        }
    }
}

/// Appends to `out` the commands sent on `rx`, waiting first as `wait`
/// says unless `out` already holds one; a channel whose senders are all
/// gone yields `closed()` (the device's shutdown).
pub(crate) fn receive<C>(rx: &Receiver<C>, wait: Wait, out: &mut Vec<C>, closed: impl Fn() -> C) {
    let wait = if out.is_empty() { wait } else { Wait::None };
    match wait {
        Wait::None => {}
        Wait::Until(d) => match rx.recv_timeout(d) {
            Ok(c) => out.push(c),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => out.push(closed()),
        },
        Wait::Forever => out.push(rx.recv().unwrap_or_else(|_| closed())),
    }
    out.extend(rx.try_iter());
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;
    use std::time::Instant;

    #[test]
    fn wait_follows_the_device_state() {
        assert_eq!(Wait::for_commands(true, None, 0, 0), Wait::None);
        assert_eq!(Wait::for_commands(true, Some(9), 0, 0), Wait::None);
        assert_eq!(
            Wait::for_commands(false, Some(9), 4, 1),
            Wait::Until(Duration::from_nanos(5))
        );
        assert_eq!(Wait::for_commands(false, Some(4), 4, 1), Wait::None);
        assert_eq!(Wait::for_commands(false, None, 4, 0), Wait::Forever);
        assert_eq!(Wait::for_commands(false, None, 4, 3), Wait::None);
    }

    #[test]
    fn receive_takes_everything_sent_and_reports_a_closed_channel() {
        let (tx, rx) = channel();
        let mut out = Vec::new();
        receive(&rx, Wait::None, &mut out, || 0);
        assert!(out.is_empty());
        for c in 1..=3 {
            tx.send(c).unwrap();
        }
        receive(&rx, Wait::Forever, &mut out, || 0);
        assert_eq!(out, [1, 2, 3]);
        // A command already held means no wait, even "forever".
        receive(&rx, Wait::Forever, &mut out, || 0);
        assert_eq!(out, [1, 2, 3]);
        out.clear();
        let t = Instant::now();
        receive(&rx, Wait::Until(Duration::from_millis(20)), &mut out, || 0);
        assert!(out.is_empty() && t.elapsed() >= Duration::from_millis(20));
        drop(tx);
        receive(&rx, Wait::Forever, &mut out, || 0);
        assert_eq!(out, [0]);
    }
}
