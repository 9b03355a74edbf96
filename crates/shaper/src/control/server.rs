//! The control socket's server: owns the socket file, accepts
//! connections, answers each request line.
//!
//! The socket file: if one exists where the shaper is to listen, a
//! connection is tried; one that succeeds means another shaper is live
//! there, and this one refuses to start; one that is refused means a
//! stale file from a shaper that did not exit cleanly, which is removed.
//! A path that exists but is not a socket is refused, never removed. The
//! socket is made mode 0660 (its owner and group may ask for statistics
//! and reloads). When the [`Server`] is dropped — the shaper's normal
//! exit, SIGINT and SIGTERM included, as these end its loop — the socket
//! file and the directory it created for it (if empty) are removed.
//!
//! Each connection is served by its own thread, at most [`MAX_CLIENTS`]
//! at once (a reload waits for the data path, which should not hold up a
//! scrape); a connection idle for [`IDLE`] is closed.

use super::protocol::{
    ReloadReply, Request, ResponseOut, DEFAULT_RELOAD_TIMEOUT_MS, MAX_RELOAD_TIMEOUT_MS,
    MAX_REQUEST_BYTES,
};
use super::Shaper;
use std::fmt;
use std::io::{self, BufRead, BufReader, BufWriter, ErrorKind, Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Connections served at once; more are answered with an error.
pub const MAX_CLIENTS: usize = 16;
/// A connection without a request for this long is closed.
pub const IDLE: Duration = Duration::from_secs(30);
/// How long a `stats` request waits for the data path.
pub const STATS_TIMEOUT: Duration = Duration::from_secs(5);
/// The socket's mode.
pub const SOCKET_MODE: u32 = 0o660;

/// Why the control socket could not be set up.
#[derive(Debug)]
pub enum ServerError {
    /// Another shaper answers on the socket.
    Busy(PathBuf),
    /// The path exists and is not a socket.
    NotASocket(PathBuf),
    /// A system call failed.
    Io {
        /// The socket's path.
        path: PathBuf,
        /// What was being done.
        doing: &'static str,
        /// The system's error.
        source: io::Error,
    },
}

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerError::Busy(p) => write!(
                f,
                "control socket {}: another shaper is running and listens on it \
                 (stop it, or give this one another --control PATH)",
                p.display()
            ),
            ServerError::NotASocket(p) => write!(
                f,
                "control socket {}: the path exists and is not a socket (not removed; \
                 give another --control PATH)",
                p.display()
            ),
            ServerError::Io {
                path,
                doing,
                source,
            } => {
                write!(f, "control socket {}: {doing}: {source}", path.display())
            }
        }
    }
}

impl std::error::Error for ServerError {}

/// A listening control socket; dropping it stops listening and removes
/// the socket file.
pub struct Server {
    path: PathBuf,
    created_dir: Option<PathBuf>,
    inode: (u64, u64),
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server").field("path", &self.path).finish()
    }
}

fn io_err<'a>(path: &'a Path, doing: &'static str) -> impl FnOnce(io::Error) -> ServerError + 'a {
    move |source| ServerError::Io {
        path: path.to_path_buf(),
        doing,
        source,
    }
}

/// Removes a stale socket at `path`, or refuses a live one or a
/// non-socket.
fn clear_stale(path: &Path) -> Result<(), ServerError> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_err(path, "reading it")(e)),
    };
    if !meta.file_type().is_socket() {
        return Err(ServerError::NotASocket(path.to_path_buf()));
    }
    match UnixStream::connect(path) {
        Ok(_) => Err(ServerError::Busy(path.to_path_buf())),
        Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
            std::fs::remove_file(path).map_err(io_err(path, "removing the stale socket"))
        }
        Err(e) => Err(io_err(path, "checking whether a shaper listens")(e)),
    }
}

impl Server {
    /// Listens on `path` for requests answered by `shaper`.
    pub fn start(path: &Path, shaper: Arc<dyn Shaper>) -> Result<Server, ServerError> {
        let mut created_dir = None;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !dir.exists() {
                std::fs::create_dir_all(dir).map_err(io_err(path, "creating its directory"))?;
                created_dir = Some(dir.to_path_buf());
            }
        }
        clear_stale(path)?;
        let listener = UnixListener::bind(path).map_err(io_err(path, "binding"))?;
        let perms = std::fs::Permissions::from_mode(SOCKET_MODE);
        std::fs::set_permissions(path, perms).map_err(io_err(path, "setting its mode 0660"))?;
        let meta = std::fs::symlink_metadata(path).map_err(io_err(path, "reading it"))?;
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = Arc::clone(&stop);
            std::thread::Builder::new()
                .name("fairway-control".into())
                .spawn(move || accept(listener, shaper, &stop))
                .map_err(io_err(path, "starting its thread"))?
        };
        Ok(Server {
            path: path.to_path_buf(),
            created_dir,
            inode: (meta.dev(), meta.ino()),
            stop,
            thread: Some(thread),
        })
    }

    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        // Ends the accept thread's wait.
        let _ = UnixStream::connect(&self.path);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        // Only the socket this server made: another may have replaced it.
        let ours =
            std::fs::symlink_metadata(&self.path).is_ok_and(|m| (m.dev(), m.ino()) == self.inode);
        if ours {
            let _ = std::fs::remove_file(&self.path);
        }
        if let Some(dir) = &self.created_dir {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

fn accept(listener: UnixListener, shaper: Arc<dyn Shaper>, stop: &AtomicBool) {
    let clients = Arc::new(AtomicUsize::new(0));
    for conn in listener.incoming() {
        if stop.load(Ordering::Acquire) {
            return;
        }
        let Ok(mut stream) = conn else { continue };
        if clients.fetch_add(1, Ordering::AcqRel) >= MAX_CLIENTS {
            clients.fetch_sub(1, Ordering::AcqRel);
            let e = ResponseOut::error(format!(
                "busy: {MAX_CLIENTS} connections are being served; try again"
            ));
            let _ = write_response(&mut stream, &e);
            continue;
        }
        let shaper = Arc::clone(&shaper);
        let count = Arc::clone(&clients);
        let spawned = std::thread::Builder::new()
            .name("fairway-control-client".into())
            .spawn(move || {
                let _ = serve(stream, shaper.as_ref());
                count.fetch_sub(1, Ordering::AcqRel);
            });
        if spawned.is_err() {
            clients.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

fn write_response(w: &mut impl Write, r: &ResponseOut<'_>) -> io::Result<()> {
    let mut out = BufWriter::new(w);
    serde_json::to_writer(&mut out, r).map_err(io::Error::other)?;
    out.write_all(b"\n")?;
    out.flush()
}

/// Serves one connection until it closes, idles or sends a bad line.
fn serve(stream: UnixStream, shaper: &dyn Shaper) -> io::Result<()> {
    stream.set_read_timeout(Some(IDLE))?;
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    loop {
        line.clear();
        let limit = MAX_REQUEST_BYTES as u64 + 1;
        let n = reader.by_ref().take(limit).read_line(&mut line)?;
        if n == 0 {
            return Ok(());
        }
        if !line.ends_with('\n') && n as u64 == limit {
            let e = format!("a request line is at most {MAX_REQUEST_BYTES} bytes");
            return write_response(&mut writer, &ResponseOut::error(e));
        }
        answer(line.trim(), shaper, &mut writer)?;
    }
}

/// Answers one request line.
pub fn answer(line: &str, shaper: &dyn Shaper, w: &mut impl Write) -> io::Result<()> {
    let request: Request = match serde_json::from_str(line) {
        Ok(r) => r,
        Err(e) => {
            let e = format!(
                "not a request ({e}); one JSON object a line: {{\"verb\":\"stats\"}} or \
                 {{\"verb\":\"reload\",\"timeout_ms\":N}}"
            );
            return write_response(w, &ResponseOut::error(e));
        }
    };
    match request {
        Request::Stats => match shaper.snapshot(STATS_TIMEOUT) {
            Some(s) => write_response(
                w,
                &ResponseOut {
                    ok: true,
                    stats: Some(&s),
                    reload: None,
                    error: None,
                },
            ),
            None => write_response(
                w,
                &ResponseOut::error(format!(
                    "the data path did not answer within {} s",
                    STATS_TIMEOUT.as_secs()
                )),
            ),
        },
        Request::Reload { timeout_ms } => {
            let ms = timeout_ms.unwrap_or(DEFAULT_RELOAD_TIMEOUT_MS);
            if ms == 0 || ms > MAX_RELOAD_TIMEOUT_MS {
                let e =
                    format!("timeout_ms {ms} is out of range: 1..={MAX_RELOAD_TIMEOUT_MS} (ms)");
                return write_response(w, &ResponseOut::error(e));
            }
            let out = match shaper.reload(Duration::from_millis(ms)) {
                Some(a) => ResponseOut {
                    ok: true,
                    stats: None,
                    reload: Some(ReloadReply {
                        applied: a.ok,
                        text: a.text,
                    }),
                    error: None,
                },
                None => ResponseOut::error(format!(
                    "no reload finished within {ms} ms (one may still be running; \
                     the shaper reports it when done)"
                )),
            };
            write_response(w, &out)
        }
    }
}
