//! The running shaper's control socket and metrics endpoint, from the
//! CLI's side: starting both beside the data path (`fairway shape
//! --config F [--control PATH] [--metrics ADDR]`), asking over the socket
//! (`fairway shape stats`, `fairway shape reload`), and their errors.

use fairway_shaper::control::client::{self, ClientError};
use fairway_shaper::control::protocol::{Request, Response};
use fairway_shaper::control::server::ServerError;
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

/// Why talking to, or serving as, a running shaper failed.
#[derive(Debug)]
pub enum ControlFailed {
    /// No answer from the socket.
    Client(ClientError),
    /// The shaper answered that the request failed.
    Shaper(String),
    /// The shaper refused the new configuration (its answer printed).
    Refused,
    /// The control socket could not be set up.
    Server(ServerError),
    /// The metrics endpoint could not listen.
    Metrics {
        /// Its address.
        addr: SocketAddr,
        /// The system's error.
        source: io::Error,
    },
    /// The loop's wake-up could not be made.
    Wake(io::Error),
}

impl fmt::Display for ControlFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Client(e) => e.fmt(f),
            Self::Shaper(e) => write!(f, "the shaper answered: {e}"),
            Self::Refused => write!(
                f,
                "the shaper refused the new configuration (above); the old one keeps running"
            ),
            Self::Server(e) => e.fmt(f),
            Self::Metrics { addr, source } => write!(f, "--metrics {addr}: {source}"),
            Self::Wake(e) => write!(f, "cannot make the data path's wake-up (eventfd): {e}"),
        }
    }
}

impl std::error::Error for ControlFailed {}

/// Asks the shaper at `socket`; a response with `ok: false` is an error.
pub fn ask(socket: &Path, request: &Request, timeout: Duration) -> Result<Response, ControlFailed> {
    let r = client::ask(socket, request, timeout).map_err(ControlFailed::Client)?;
    if !r.ok {
        let e = r.error.unwrap_or_else(|| "failed, without a reason".into());
        return Err(ControlFailed::Shaper(e));
    }
    Ok(r)
}
