//! The control socket's protocol: one request a line, one response a
//! line, both JSON objects. A connection may carry several requests, one
//! after the other.
//!
//! ```text
//! → {"verb":"stats"}
//! ← {"ok":true,"stats":{"uptime_ms":…,"classes":[…]}}
//! → {"verb":"reload","timeout_ms":10000}
//! ← {"ok":true,"reload":{"applied":true,"text":"…"}}
//! ← {"ok":false,"error":"…"}            (a request that failed)
//! ```

use crate::datapath::snapshot::Snapshot;
use serde::{Deserialize, Serialize};

/// The longest request line, bytes (a request is a few dozen).
pub const MAX_REQUEST_BYTES: usize = 4096;
/// How long a reload is waited for unless the request says.
pub const DEFAULT_RELOAD_TIMEOUT_MS: u64 = 10_000;
/// The longest reload wait a request may ask for, ms.
pub const MAX_RELOAD_TIMEOUT_MS: u64 = 600_000;

/// A request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verb", rename_all = "lowercase", deny_unknown_fields)]
pub enum Request {
    /// The statistics.
    Stats,
    /// Re-read the configuration file.
    Reload {
        /// How long to wait for the outcome, ms (default
        /// [`DEFAULT_RELOAD_TIMEOUT_MS`], at most
        /// [`MAX_RELOAD_TIMEOUT_MS`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
}

/// A reload's outcome.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReloadReply {
    /// The new configuration runs (false: refused, the old one runs).
    pub applied: bool,
    /// What happened, one line per fact or problem.
    pub text: String,
}

/// A response, as received.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Response {
    /// The request was served.
    pub ok: bool,
    /// The statistics (`stats`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats: Option<Snapshot>,
    /// The reload's outcome (`reload`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reload: Option<ReloadReply>,
    /// Why the request failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A response as sent: borrows the snapshot the loop shared.
#[derive(Serialize)]
pub struct ResponseOut<'a> {
    /// See [`Response::ok`].
    pub ok: bool,
    /// See [`Response::stats`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<&'a Snapshot>,
    /// See [`Response::reload`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reload: Option<ReloadReply>,
    /// See [`Response::error`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl<'a> ResponseOut<'a> {
    /// A failure.
    pub fn error(e: impl Into<String>) -> Self {
        ResponseOut {
            ok: false,
            stats: None,
            reload: None,
            error: Some(e.into()),
        }
    }
}
