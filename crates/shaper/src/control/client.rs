//! The control socket's client: one request, one response.

use super::protocol::{Request, Response};
use std::fmt;
use std::io::{self, BufRead, BufReader, ErrorKind, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why a request got no response.
#[derive(Debug)]
pub enum ClientError {
    /// Nothing listens on the socket (no file, or a stale one).
    NoShaper {
        /// The socket.
        path: PathBuf,
        /// The system's error.
        source: io::Error,
    },
    /// The connection failed while asking or reading.
    Io {
        /// The socket.
        path: PathBuf,
        /// The system's error.
        source: io::Error,
    },
    /// The response was not one.
    BadResponse {
        /// The socket.
        path: PathBuf,
        /// Why.
        why: String,
    },
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::NoShaper { path, source } => write!(
                f,
                "no shaper listens on {} ({source}); is `fairway shape --config FILE` running \
                 with this --control path?",
                path.display()
            ),
            ClientError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            ClientError::BadResponse { path, why } => {
                write!(f, "{}: not a shaper's response: {why}", path.display())
            }
        }
    }
}

impl std::error::Error for ClientError {}

/// Sends `request` to the shaper at `path` and reads its response,
/// waiting at most `timeout` for it.
pub fn ask(path: &Path, request: &Request, timeout: Duration) -> Result<Response, ClientError> {
    let io = |source| ClientError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut stream = UnixStream::connect(path).map_err(|source| match source.kind() {
        ErrorKind::NotFound | ErrorKind::ConnectionRefused => ClientError::NoShaper {
            path: path.to_path_buf(),
            source,
        },
        _ => io(source),
    })?;
    stream.set_read_timeout(Some(timeout)).map_err(io)?;
    let mut line = serde_json::to_string(request).map_err(|e| io(io::Error::other(e)))?;
    line.push('\n');
    stream.write_all(line.as_bytes()).map_err(io)?;
    let mut reply = String::new();
    BufReader::new(stream).read_line(&mut reply).map_err(io)?;
    if reply.is_empty() {
        return Err(ClientError::BadResponse {
            path: path.to_path_buf(),
            why: "the connection closed without one".into(),
        });
    }
    serde_json::from_str(&reply).map_err(|e| ClientError::BadResponse {
        path: path.to_path_buf(),
        why: e.to_string(),
    })
}
