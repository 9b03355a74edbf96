//! Start-up I/O traces: what an application reads while it starts, in the
//! order it reads it, and which of its processes reads it.
//!
//! Two text formats, told apart by the first data line's number of
//! whitespace-separated fields:
//!
//! * **S's** (`comm_startup_lat/*.trace` of the S benchmark suite), 10
//!   fields: process, delay, size in sectors, position, `Seq`/`Rand`,
//!   distance, run length, action, time stamp, `C`/`START`. As S's replayer
//!   does, only the process, the size, `Seq`/`Rand` and the action are
//!   used (the recorded positions belong to the recording machine's disk;
//!   delays are not replayed); action `RA` (read-ahead) is an asynchronous
//!   read, every other action (`R`, `RM`, `WS`, ...) a synchronous read.
//! * **fairway's**, 4 fields: `thread sectors seq|rand sync|async`, with
//!   `#` comments and blank lines allowed.
//!
//! [`synthetic`] builds the trace shipped as
//! `examples/disk/startup-synthetic.trace` (see its doc for how).

use std::fmt::Write as _;
use std::path::Path;
use thiserror::Error;

/// Largest trace file read, bytes: S's largest trace is about 110 KB; a
/// limit keeps a wrong path (a disk image) from being read into memory.
pub const MAX_TRACE_BYTES: u64 = 16 << 20;
/// Most processes (threads) in a trace: each gets its own 20 MiB region
/// of the device, as S's replayer gives each its own 20 MB file.
pub const MAX_THREADS: usize = 64;
/// Largest request, sectors: the engine's L_max (128 KiB).
pub const MAX_SECTORS: u32 = 256;

/// Sequential (continues where the thread's previous request ended) or
/// random (anywhere in the thread's region).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Continues the thread's previous request.
    Seq,
    /// At a random place in the thread's region.
    Rand,
}

/// One read of the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceReq {
    /// Index into [`Trace::threads`].
    pub thread: usize,
    /// Size, sectors of 512 bytes, `1..=256`.
    pub sectors: u32,
    /// Where it is.
    pub pattern: Pattern,
    /// Asynchronous (read-ahead): issued without waiting; the thread's
    /// next synchronous read waits for all of them first.
    pub asynchronous: bool,
}

/// A parsed trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    /// Name (the file's stem, or `synthetic`).
    pub name: String,
    /// The processes (threads) in order of first appearance.
    pub threads: Vec<String>,
    /// The reads in trace order.
    pub requests: Vec<TraceReq>,
}

/// Why a trace cannot be used.
#[derive(Debug, Error)]
pub enum TraceError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The reason.
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_TRACE_BYTES`].
    #[error(
        "{path}: {len} bytes is too large for a start-up trace (limit {MAX_TRACE_BYTES} bytes)"
    )]
    TooLarge {
        /// The file.
        path: String,
        /// Its length.
        len: u64,
    },
    /// A line that does not parse.
    #[error("{path}:{line}:{col}: {msg}")]
    Syntax {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// 1-based column of the offending field.
        col: usize,
        /// What is wrong.
        msg: String,
    },
    /// No request in the file.
    #[error("{path}: no request in the trace")]
    Empty {
        /// The file.
        path: String,
    },
}

/// Reads and parses a trace file (either format).
pub fn load(path: &Path) -> Result<Trace, TraceError> {
    let shown = path.display().to_string();
    let io = |source| TraceError::Io {
        path: shown.clone(),
        source,
    };
    let len = std::fs::metadata(path).map_err(io)?.len();
    if len > MAX_TRACE_BYTES {
        return Err(TraceError::TooLarge { path: shown, len });
    }
    let text = std::fs::read_to_string(path).map_err(io)?;
    let name = path
        .file_stem()
        .map_or("trace".into(), |s| s.to_string_lossy().into_owned());
    parse(&text, &shown, &name)
}

/// The fields of a line with their 1-based columns.
fn fields(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line
        .char_indices()
        .chain(std::iter::once((line.len(), ' ')))
    {
        match (c.is_whitespace(), start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                out.push((line[..s].chars().count() + 1, &line[s..i]));
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// Parses `text` (from `path`, for messages) as a trace named `name`.
pub fn parse(text: &str, path: &str, name: &str) -> Result<Trace, TraceError> {
    let mut trace = Trace {
        name: name.to_string(),
        threads: Vec::new(),
        requests: Vec::new(),
    };
    let mut width = None;
    for (n, raw) in text.lines().enumerate() {
        let err = |col: usize, msg: String| TraceError::Syntax {
            path: path.to_string(),
            line: n + 1,
            col,
            msg,
        };
        let line = raw.split('#').next().unwrap_or("");
        let f = fields(line);
        if f.is_empty() {
            continue;
        }
        let w = *width.get_or_insert(f.len());
        if w != 4 && w != 10 {
            return Err(err(1, format!("{} fields: expected 4 (fairway's format: thread sectors seq|rand sync|async) or 10 (S's comm_startup_lat format)", f.len())));
        }
        if f.len() != w {
            return Err(err(
                1,
                format!("{} fields where the trace's first line has {w}", f.len()),
            ));
        }
        let (size, pat, act) = if w == 4 {
            (f[1], f[2], f[3])
        } else {
            (f[2], f[4], f[7])
        };
        let sectors = size
            .1
            .parse::<u32>()
            .ok()
            .filter(|s| (1..=MAX_SECTORS).contains(s))
            .ok_or_else(|| {
                err(
                    size.0,
                    format!(
                        "size `{}` is not a number of sectors in 1..={MAX_SECTORS}",
                        size.1
                    ),
                )
            })?;
        let pattern = match (w, pat.1) {
            (4, "seq") | (10, "Seq") => Pattern::Seq,
            (4, "rand") | (10, "Rand") => Pattern::Rand,
            (4, p) => return Err(err(pat.0, format!("`{p}` is neither `seq` nor `rand`"))),
            (_, p) => return Err(err(pat.0, format!("`{p}` is neither `Seq` nor `Rand`"))),
        };
        let asynchronous = match (w, act.1) {
            (4, "sync") => false,
            (4, "async") => true,
            (4, a) => return Err(err(act.0, format!("`{a}` is neither `sync` nor `async`"))),
            (_, a) if a.chars().all(|c| c.is_ascii_uppercase()) => a == "RA",
            (_, a) => {
                return Err(err(
                    act.0,
                    format!("`{a}` is not an action (RA, R, RM, WS, ...)"),
                ))
            }
        };
        let thread = match trace.threads.iter().position(|t| t == f[0].1) {
            Some(t) => t,
            None if trace.threads.len() < MAX_THREADS => {
                trace.threads.push(f[0].1.to_string());
                trace.threads.len() - 1
            }
            None => {
                return Err(err(
                    1,
                    format!(
                        "a {}th process: at most {MAX_THREADS}, each gets its own 20 MiB region",
                        MAX_THREADS + 1
                    ),
                ))
            }
        };
        trace.requests.push(TraceReq {
            thread,
            sectors,
            pattern,
            asynchronous,
        });
    }
    if trace.requests.is_empty() {
        return Err(TraceError::Empty {
            path: path.to_string(),
        });
    }
    Ok(trace)
}

/// A small deterministic generator (64-bit LCG, Knuth's MMIX constants),
/// so the synthetic trace can be rebuilt bit for bit.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// The synthetic start-up trace, built by rule rather than recorded:
/// three processes (`app`, `app-helper`, `dbus`), 60 episodes. In each,
/// one process (the application two times in three) opens something — a
/// random 4 KiB synchronous read (metadata) — then maps it: 0 to 23
/// sequential asynchronous 4 KiB reads (read-ahead), and, every other
/// episode, a synchronous read of 8 to 256 sectors, sequential or random
/// — the mix S's recorded traces have (mostly 4 KiB reads, read-ahead
/// runs, a few large reads, control passing between processes). Seed 1.
pub fn synthetic() -> Trace {
    let mut rng = Lcg(1);
    let threads = vec!["app".to_string(), "app-helper".into(), "dbus".into()];
    let mut requests = Vec::new();
    for episode in 0..60 {
        let thread = match rng.below(6) {
            0 => 1,
            1 => 2,
            _ => 0,
        };
        let read = |sectors, pattern, asynchronous| TraceReq {
            thread,
            sectors,
            pattern,
            asynchronous,
        };
        requests.push(read(8, Pattern::Rand, false));
        for _ in 0..rng.below(24) {
            requests.push(read(8, Pattern::Seq, true));
        }
        if episode % 2 == 1 {
            let sectors = [8, 16, 32, 64, 128, 256][rng.below(6) as usize];
            let pattern = if rng.below(2) == 0 {
                Pattern::Seq
            } else {
                Pattern::Rand
            };
            requests.push(read(sectors, pattern, false));
        }
    }
    Trace {
        name: "synthetic".into(),
        threads,
        requests,
    }
}

/// `trace` in fairway's format, with a header saying what it is.
pub fn render(trace: &Trace, header: &str) -> String {
    let mut s = String::new();
    for l in header.lines() {
        let _ = writeln!(s, "# {l}");
    }
    let _ = writeln!(s, "# thread sectors seq|rand sync|async");
    for r in &trace.requests {
        let _ = writeln!(
            s,
            "{} {} {} {}",
            trace.threads[r.thread],
            r.sectors,
            if r.pattern == Pattern::Seq {
                "seq"
            } else {
                "rand"
            },
            if r.asynchronous { "async" } else { "sync" }
        );
    }
    s
}

/// The header of the shipped synthetic trace.
pub const SYNTHETIC_HEADER: &str = "A synthetic application start-up, built by rule, not recorded:
fairway_lab::disk::s_bench::trace::synthetic() (see its doc);
a test checks that this file is its output.";

#[cfg(test)]
mod tests {
    use super::*;

    const S_LINES: &str = "\
gnome-terminal-7656        0     8   461778608   Seq         -8      8         R          0   C
gnome-terminal-7656  .000219     8   369101824  Rand     -69008      0        RA    .002599   C
dbus-daemon-6794  .000219   256   369101824  Rand     -69008      0        WS    .002599   START
";

    #[test]
    fn parses_s_format() {
        let t = parse(S_LINES, "g.trace", "g").unwrap();
        assert_eq!(t.threads, ["gnome-terminal-7656", "dbus-daemon-6794"]);
        assert_eq!(
            t.requests,
            [
                TraceReq {
                    thread: 0,
                    sectors: 8,
                    pattern: Pattern::Seq,
                    asynchronous: false
                },
                TraceReq {
                    thread: 0,
                    sectors: 8,
                    pattern: Pattern::Rand,
                    asynchronous: true
                },
                TraceReq {
                    thread: 1,
                    sectors: 256,
                    pattern: Pattern::Rand,
                    asynchronous: false
                },
            ]
        );
    }

    #[test]
    fn parses_fairway_format_with_comments() {
        let t = parse("# c\n\na 8 seq sync # x\nb 16 rand async\n", "f", "f").unwrap();
        assert_eq!(t.threads, ["a", "b"]);
        assert_eq!(t.requests[1].sectors, 16);
        assert!(t.requests[1].asynchronous);
        assert_eq!(t.requests[1].pattern, Pattern::Rand);
    }

    fn msg(text: &str) -> String {
        parse(text, "t.trace", "t").unwrap_err().to_string()
    }

    #[test]
    fn errors_name_file_line_and_column() {
        assert_eq!(
            msg("a 8 seq sync\na 0 seq sync\n"),
            "t.trace:2:3: size `0` is not a number of sectors in 1..=256"
        );
        assert_eq!(
            msg("a 8 seq sync\na 257 seq sync\n").split(": ").next(),
            Some("t.trace:2:3")
        );
        assert_eq!(
            msg("a 8 sideways sync\n"),
            "t.trace:1:5: `sideways` is neither `seq` nor `rand`"
        );
        assert_eq!(
            msg("a 8 seq later\n"),
            "t.trace:1:9: `later` is neither `sync` nor `async`"
        );
        assert!(msg("a 8 seq\n").starts_with("t.trace:1:1: 3 fields: expected 4"));
        assert!(msg("a 8 seq sync\na 8 seq sync x\n").starts_with("t.trace:2:1: 5 fields where"));
        let s = S_LINES.replace("  Seq  ", "  Sq  ");
        assert_eq!(msg(&s), "t.trace:1:50: `Sq` is neither `Seq` nor `Rand`");
        let s = S_LINES.replace("    R    ", "    r?    ");
        assert!(msg(&s).starts_with("t.trace:1:"), "{}", msg(&s));
        assert_eq!(
            msg("# only a comment\n"),
            "t.trace: no request in the trace"
        );
    }

    #[test]
    fn refuses_too_many_threads() {
        let text: String = (0..=MAX_THREADS)
            .map(|i| format!("p{i} 8 seq sync\n"))
            .collect();
        assert!(msg(&text).starts_with("t.trace:65:1: a 65th process"));
        let ok: String = (0..MAX_THREADS)
            .map(|i| format!("p{i} 8 seq sync\n"))
            .collect();
        assert_eq!(parse(&ok, "t", "t").unwrap().threads.len(), MAX_THREADS);
    }

    #[test]
    fn load_refuses_missing_and_names_it() {
        let e = load(Path::new("/nonexistent/x.trace"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("/nonexistent/x.trace: "), "{e}");
    }

    #[test]
    fn shipped_synthetic_trace_is_the_generators_output() {
        let shipped = include_str!("../../../../../examples/disk/startup-synthetic.trace");
        assert_eq!(shipped, render(&synthetic(), SYNTHETIC_HEADER));
        let t = parse(shipped, "s", "synthetic").unwrap();
        assert_eq!(t.requests, synthetic().requests);
        assert!(
            (300..=1000).contains(&t.requests.len()),
            "{}",
            t.requests.len()
        );
    }
}
