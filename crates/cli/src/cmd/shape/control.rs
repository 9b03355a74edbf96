//! The running shaper's control socket and metrics endpoint, from the
//! CLI's side: starting both beside the data path (`fairway shape
//! --config F [--control PATH] [--metrics ADDR]`), asking over the socket
//! (`fairway shape stats`, `fairway shape reload`), and their errors.

use fairway_shaper::control::client::{self, ClientError};
use fairway_shaper::control::protocol::{Request, Response};
use fairway_shaper::control::server::{Server, ServerError};
use fairway_shaper::datapath::hooks::Hooks;
use fairway_shaper::metrics::MetricsServer;
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
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

/// The control socket and the metrics endpoint of a running shaper; both
/// stop, and the socket file goes, when this is dropped.
#[derive(Debug)]
pub struct Watching {
    /// The control socket.
    pub server: Server,
    /// The metrics endpoint.
    pub metrics: Option<MetricsServer>,
}

/// Starts the control socket at `socket` and, if asked, the metrics
/// endpoint at `metrics`, both answered by the loop's `hooks`.
pub fn start(
    socket: &Path,
    metrics: Option<SocketAddr>,
    hooks: &Arc<Hooks>,
) -> Result<Watching, ControlFailed> {
    let server = Server::start(socket, hooks.clone()).map_err(ControlFailed::Server)?;
    let metrics = match metrics {
        Some(addr) => Some(
            MetricsServer::start(addr, hooks.clone())
                .map_err(|source| ControlFailed::Metrics { addr, source })?,
        ),
        None => None,
    };
    Ok(Watching { server, metrics })
}
