//! What the data path's loop shares with the other threads of a running
//! shaper: the statistics and reload requests and the [`Wake`] that ends
//! the loop's sleep when one arrives. The control socket and the metrics
//! endpoint hold [`Hooks`] as their [`Shaper`]; the loop calls
//! [`Hooks::serve_stats`] once a turn.
//!
//! Reload requests ([`ReloadRequests`]) are only carried here: the loop's
//! side of a reload (`pending`, `take`, the reload itself, `complete`)
//! belongs to the reload's own code.

use super::engine::Engine;
use super::reload_request::{ReloadAnswer, ReloadRequests};
use super::snapshot::Snapshot;
use super::snapshot_request::SnapshotRequests;
use super::wake::Wake;
use crate::control::Shaper;
use std::io;
use std::sync::Arc;
use std::time::Duration;

/// The loop's side of the control socket and the metrics endpoint.
#[derive(Debug)]
pub struct Hooks {
    /// Statistics requests.
    pub snapshots: Arc<SnapshotRequests>,
    /// Reload requests.
    pub reloads: Arc<ReloadRequests>,
    /// Ends the loop's sleep.
    pub wake: Arc<Wake>,
}

impl Hooks {
    /// New hooks sharing `reloads` (SIGHUP's and the socket's requests).
    pub fn new(reloads: Arc<ReloadRequests>) -> io::Result<Self> {
        Ok(Hooks {
            snapshots: Arc::new(SnapshotRequests::new()),
            reloads,
            wake: Arc::new(Wake::new()?),
        })
    }

    /// The loop's turn: clears the wake-up and answers the statistics
    /// requests made so far with one snapshot.
    pub fn serve_stats(&self, engine: &Engine, now_ns: u64) {
        self.wake.clear();
        if self.snapshots.pending() {
            let ticket = self.snapshots.take();
            self.snapshots
                .complete(ticket, Arc::new(engine.snapshot(now_ns)));
        }
    }
}

impl Shaper for Hooks {
    fn snapshot(&self, timeout: Duration) -> Option<Arc<Snapshot>> {
        let t = self.snapshots.request();
        self.wake.wake();
        self.snapshots.wait(t, timeout)
    }

    fn reload(&self, timeout: Duration) -> Option<ReloadAnswer> {
        let t = self.reloads.request();
        self.wake.wake();
        self.reloads.wait(t, timeout)
    }
}
