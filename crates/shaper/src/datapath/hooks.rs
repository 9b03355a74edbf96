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
use super::snapshot::{assemble, Snapshot};
use super::snapshot_request::{SnapshotRequests, Taken};
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

    /// The loop's turn: clears the wake-up, rolls a few classes' windows,
    /// and answers the statistics requests made so far with one copy of
    /// the numbers (the askers' threads put names to them).
    pub fn serve_stats(&self, engine: &mut Engine, now_ns: u64) {
        self.wake.clear();
        engine.sweep_stats(now_ns);
        if self.snapshots.pending() {
            let ticket = self.snapshots.take();
            let taken = Taken {
                layout: Arc::clone(engine.layout()),
                raw: engine.raw_stats(now_ns),
            };
            self.snapshots.complete(ticket, Arc::new(taken));
        }
    }
}

impl Shaper for Hooks {
    fn snapshot(&self, timeout: Duration) -> Option<Arc<Snapshot>> {
        let t = self.snapshots.request();
        self.wake.wake();
        let taken = self.snapshots.wait(t, timeout)?;
        Some(Arc::new(assemble(&taken.layout, &taken.raw)))
    }

    fn reload(&self, timeout: Duration) -> Option<ReloadAnswer> {
        let t = self.reloads.request();
        self.wake.wake();
        self.reloads.wait(t, timeout)
    }
}
