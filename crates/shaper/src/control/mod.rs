//! # The control socket of a running shaper
//!
//! A Unix stream socket (default [`DEFAULT_SOCKET`], mode 0660) on which
//! a running `fairway shape` answers requests, one JSON object a line
//! each way ([`protocol`]): `{"verb":"stats"}` returns the statistics
//! ([`crate::datapath::snapshot::Snapshot`]), `{"verb":"reload"}` asks
//! the shaper to re-read its file and returns whether the new
//! configuration runs. [`server`] owns the socket file (refusing to start
//! when another live shaper holds it, removing it on exit); [`client`] is
//! the side `fairway shape stats` and `fairway shape reload` use.
//!
//! The server asks a [`Shaper`] for its answers: the data path's loop
//! ([`crate::datapath::hooks::Hooks`]) in a running shaper, anything else
//! in tests.

pub mod client;
pub mod protocol;
pub mod server;

use crate::datapath::reload_request::ReloadAnswer;
use crate::datapath::snapshot::Snapshot;
use std::sync::Arc;
use std::time::Duration;

/// Where a shaper listens unless told otherwise.
pub const DEFAULT_SOCKET: &str = "/run/fairway/shape.sock";

/// What the control socket and the metrics endpoint ask of the shaper.
pub trait Shaper: Send + Sync {
    /// The statistics now; `None` if none came within `timeout`.
    fn snapshot(&self, timeout: Duration) -> Option<Arc<Snapshot>>;
    /// Re-reads the configuration; `None` if no answer came within
    /// `timeout`.
    fn reload(&self, timeout: Duration) -> Option<ReloadAnswer>;
}
