//! `fairway shape --config FILE` as a subprocess in the middle namespace
//! (`ip netns exec`, which execs it: the child's pid is the shaper's).
//! Its output lines are collected by two threads with their arrival
//! times, so a reload's report line can be waited for; its exit table is
//! read back per circuit.
//!
//! What the running binary supports is found out, not assumed: live
//! reload by whether the process catches SIGHUP (`SigCgt` in
//! `/proc/PID/status`; SIGHUP would kill one that does not), the
//! statistics endpoint by whether `fairway shape --help` lists
//! `--metrics`. Where it lists `--control`, the shaper gets its own
//! control socket beside its file, so that a shaper already running on
//! the machine (on the default socket) neither blocks nor meets it.

use super::error::BenchError;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

/// How long the shaper may take to print its start line.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a reload may take to report.
pub const RELOAD_TIMEOUT: Duration = Duration::from_secs(10);

/// A running shaper.
#[derive(Debug)]
pub struct Shaper {
    child: Child,
    lines: Receiver<(Instant, String)>,
    /// Everything it printed so far (stdout and stderr, interleaved).
    pub output: Vec<String>,
    /// How long from spawn to the start line.
    pub started_in: Duration,
}

/// One circuit's row of the exit table (download).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CircuitTotals {
    /// Frames the shaper read.
    pub received: u64,
    /// Frames it sent.
    pub sent: u64,
    /// Frames it dropped, every reason.
    pub dropped: u64,
    /// Frames still queued at the stop.
    pub queued: u64,
}

/// True when `exe shape --help` lists `flag`.
pub fn supports(exe: &Path, flag: &str) -> bool {
    Command::new(exe)
        .args(["shape", "--help"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains(flag))
        .unwrap_or(false)
}

impl Shaper {
    /// Starts `exe shape --config config [extra]` in namespace `ns` and
    /// waits for its start line.
    pub fn start(exe: &Path, ns: &str, config: &Path, extra: &[&str]) -> Result<Self, BenchError> {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", ns])
            .arg(exe)
            .args(["shape", "--config"])
            .arg(config)
            .args(extra);
        if supports(exe, "--control") {
            cmd.arg("--control").arg(config.with_extension("sock"));
        }
        let t0 = Instant::now();
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| BenchError::Shaper(format!("cannot start {}: {e}", exe.display())))?;
        let (tx, lines) = mpsc::channel();
        let out: Box<dyn Read + Send> = match (child.stdout.take(), child.stderr.take()) {
            (Some(o), Some(e)) => {
                let tx2 = tx.clone();
                std::thread::spawn(move || forward(e, &tx2));
                Box::new(o)
            }
            _ => return Err(BenchError::Shaper("no pipes to the shaper".into())),
        };
        std::thread::spawn(move || forward(out, &tx));
        let mut s = Shaper {
            child,
            lines,
            output: Vec::new(),
            started_in: Duration::ZERO,
        };
        match s.wait_line(|l| l.contains("shaping"), START_TIMEOUT) {
            Some(_) => {
                s.started_in = t0.elapsed();
                Ok(s)
            }
            None => {
                let _ = s.child.kill();
                let _ = s.child.wait();
                s.drain(Duration::from_millis(200));
                Err(BenchError::Shaper(format!(
                    "did not start: {}",
                    s.output.join(" | ")
                )))
            }
        }
    }

    /// The shaper's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits up to `timeout` for a line `want` accepts; when it came.
    fn wait_line(&mut self, want: impl Fn(&str) -> bool, timeout: Duration) -> Option<Instant> {
        let end = Instant::now() + timeout;
        loop {
            let left = end.checked_duration_since(Instant::now())?;
            let (at, line) = self.lines.recv_timeout(left).ok()?;
            let hit = want(&line);
            self.output.push(line);
            if hit {
                return Some(at);
            }
        }
    }

    fn drain(&mut self, wait: Duration) {
        while let Ok((_, l)) = self.lines.recv_timeout(wait) {
            self.output.push(l);
        }
    }

    /// True when the process catches SIGHUP (a live reload is built in).
    pub fn catches_sighup(&self) -> bool {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()));
        status.ok().is_some_and(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("SigCgt:"))
                .and_then(|h| u64::from_str_radix(h.trim(), 16).ok())
                .is_some_and(|mask| mask & (1 << (libc::SIGHUP - 1)) != 0)
        })
    }

    /// Sends SIGHUP and waits for the shaper's line that ends a reload
    /// (`fairway shape: reload: …` with its pause, or its refusal; not the
    /// start line, which names `fairway shape stats|reload`): how long that
    /// took, and the line (`None`: no such line in [`RELOAD_TIMEOUT`]).
    pub fn reload(&mut self) -> Option<(Duration, String)> {
        let t0 = Instant::now();
        // SAFETY: the shaper's pid, a child of ours not yet waited for.
        unsafe { libc::kill(self.pid() as i32, libc::SIGHUP) };
        let ends_reload = |l: &str| {
            l.starts_with("fairway shape: reload:")
                && (l.contains("pause") || l.contains("reload refused"))
        };
        let at = self.wait_line(ends_reload, RELOAD_TIMEOUT)?;
        let line = self.output.last().cloned().unwrap_or_default();
        Some((at.saturating_duration_since(t0), line))
    }

    /// CPU time the shaper has used so far.
    pub fn cpu(&self) -> Duration {
        process_cpu(self.pid()).unwrap_or_default()
    }

    /// Stops it (SIGTERM) and returns everything it printed.
    pub fn stop(mut self) -> Result<String, BenchError> {
        // SAFETY: as in `reload`.
        unsafe { libc::kill(self.pid() as i32, libc::SIGTERM) };
        let status = self
            .child
            .wait()
            .map_err(|e| BenchError::Shaper(e.to_string()))?;
        self.drain(Duration::from_millis(300));
        let text = self.output.join("\n");
        if !status.success() {
            return Err(BenchError::Shaper(format!("exited with {status}: {text}")));
        }
        Ok(text)
    }
}

impl Drop for Shaper {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn forward(from: impl Read, tx: &mpsc::Sender<(Instant, String)>) {
    for line in BufReader::new(from).lines() {
        let Ok(line) = line else { return };
        if tx.send((Instant::now(), line)).is_err() {
            return;
        }
    }
}

/// utime + stime of process `pid`.
pub fn process_cpu(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name's closing parenthesis; utime and
    // stime are fields 14 and 15 of the whole line.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Some(Duration::from_nanos(ticks * 1_000_000_000 / hz))
}

/// The download row of circuit `id` in the shaper's exit table.
pub fn circuit_totals(text: &str, id: &str) -> Option<CircuitTotals> {
    let want = format!("circuit {id}");
    let row: Vec<u64> = text
        .lines()
        .find(|l| {
            l.starts_with("download") && l.contains(&want) && {
                // `circuit c1` must not match `circuit c10`.
                l.split_whitespace().nth(2) == Some(id)
            }
        })?
        .split_whitespace()
        .skip(3)
        .map(|v| v.parse().ok())
        .collect::<Option<_>>()?;
    // received, bytes, sent, bytes, drops by reason (5), queued.
    (row.len() >= 10).then(|| CircuitTotals {
        received: row[0],
        sent: row[2],
        dropped: row[4..9].iter().sum(),
        queued: row[9],
    })
}

/// Writes `text` to `path` through a temporary file and a rename, so a
/// reader (the shaper reloading) never sees half a file.
pub fn write_atomically(path: &Path, text: &str) -> Result<(), BenchError> {
    let tmp: PathBuf = path.with_extension("toml.tmp");
    let io = |e: std::io::Error| BenchError::File {
        path: path.to_path_buf(),
        error: e,
    };
    let mut f = std::fs::File::create(&tmp).map_err(io)?;
    f.write_all(text.as_bytes()).map_err(io)?;
    f.sync_all().map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
}

/// Fetches `http://addr/metrics` from inside namespace `ns`: the time and
/// the bytes of the answer.
pub fn scrape(ns: &str, addr: &str) -> Result<(Duration, usize), BenchError> {
    let addr = addr.to_string();
    super::topology::Topology::in_ns(ns, move || -> std::io::Result<(Duration, usize)> {
        // The endpoint may take a moment to listen after the start line.
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut stream = loop {
            match std::net::TcpStream::connect(&addr) {
                Ok(s) => break s,
                Err(e) if Instant::now() > deadline => return Err(e),
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        };
        let t0 = Instant::now();
        write!(stream, "GET /metrics HTTP/1.0\r\nHost: {addr}\r\n\r\n")?;
        let mut body = Vec::new();
        stream.read_to_end(&mut body)?;
        Ok((t0.elapsed(), body.len()))
    })?
    .map_err(|e| BenchError::Shaper(format!("scraping the metrics endpoint: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_circuits_row() {
        let t = "download circuit c1   10 1000 8 800 1 1 0 0 0 0\n\
                 download circuit c10  5 500 5 500 0 0 0 0 0 0\n";
        let c = circuit_totals(t, "c1").unwrap();
        assert_eq!((c.received, c.sent, c.dropped, c.queued), (10, 8, 2, 0));
        assert_eq!(circuit_totals(t, "c10").unwrap().received, 5);
        assert_eq!(circuit_totals(t, "c2"), None);
    }
}
