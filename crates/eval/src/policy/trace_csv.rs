//! Trace files for [`super::trace::replay`]: arrivals from a CSV file,
//! departures to one.
//!
//! Arrivals: a header `time,flow,len`, then one packet a line — `time` in
//! integer nanoseconds, non-decreasing; `flow` a flow name of the policy
//! file (`flow0#1` for the second flow of an unnamed counted table);
//! `len` bytes, `1..=` the policy's `max_packet_len`. Blank lines and
//! lines starting with `#` are skipped. The file is streamed: memory does
//! not grow with its length, and a line is at most [`MAX_LINE`] bytes.
//!
//! Departures: a header `time,flow,len,queueing_delay`, then every
//! departure in order (ns, flow name, bytes, ns).

use super::trace::{replay, Arrival, Departure, TraceError, TraceSummary};
use fairway_policy_file::PolicyFile;
use std::collections::HashMap;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::Path;

/// Longest line of an arrivals file, bytes: a line is read whole before
/// it is parsed, so a file without newlines cannot take the memory.
pub const MAX_LINE: u64 = 4096;

/// Why a trace replay stopped: the file, the line (1-based; 0 when the
/// error is not about a line) and the reason.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceFileError {
    /// The file.
    pub path: String,
    /// Its line, 1-based; 0 for the whole file.
    pub line: u64,
    /// Why.
    pub reason: String,
}

impl fmt::Display for TraceFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.path, self.reason)
        } else {
            write!(f, "{}:{}: {}", self.path, self.line, self.reason)
        }
    }
}

impl std::error::Error for TraceFileError {}

/// Replays the arrivals of the CSV file `trace` through `policy` on a
/// link of `link` bytes/s, writing every departure to `departures` if
/// given.
pub fn replay_csv(
    policy: &PolicyFile,
    link: u64,
    trace: &Path,
    departures: Option<&Path>,
) -> Result<TraceSummary, TraceFileError> {
    let tname = trace.display().to_string();
    let file = File::open(trace).map_err(|e| file_error(&tname, e))?;
    let names: HashMap<&str, u32> = (policy.flow_names.iter().enumerate())
        .map(|(i, n)| (n.as_str(), i as u32))
        .collect();
    let mut reader = Reader {
        input: BufReader::new(file),
        line: 0,
        buf: Vec::new(),
        previous: 0,
        names,
        max_len: policy.spec.max_packet_len,
        error: None,
    };
    let result = replay_into(
        policy,
        link,
        &tname,
        std::iter::from_fn(|| reader.next()),
        departures,
    );
    match reader.error {
        Some(e) => Err(TraceFileError { path: tname, ..e }),
        None => result,
    }
}

/// An error about the whole file `path`.
pub(super) fn file_error(path: &str, e: impl fmt::Display) -> TraceFileError {
    TraceFileError {
        path: path.to_string(),
        line: 0,
        reason: e.to_string(),
    }
}

/// Replays `arrivals` (read from `tname`) and writes the departures to
/// `departures` if given. A reader refuses what the replay would (order,
/// flow, length) at its place, so a replay error left is about the link
/// or the policy.
pub(super) fn replay_into(
    policy: &PolicyFile,
    link: u64,
    tname: &str,
    arrivals: impl Iterator<Item = Arrival>,
    departures: Option<&Path>,
) -> Result<TraceSummary, TraceFileError> {
    let mut out = match departures {
        Some(p) => {
            let name = p.display().to_string();
            let f = File::create(p).map_err(|e| file_error(&name, e))?;
            let mut w = BufWriter::new(f);
            writeln!(w, "time,flow,len,queueing_delay").map_err(|e| file_error(&name, e))?;
            Some((name, w))
        }
        None => None,
    };
    let mut write_error = None;
    let result = replay(policy, link, arrivals, |d| {
        if let (Some((_, w)), None) = (&mut out, &write_error) {
            if let Err(e) = write_departure(w, policy, d) {
                write_error = Some(e);
            }
        }
    });
    let sum = result.map_err(|e: TraceError| file_error(tname, e))?;
    if let Some((name, mut w)) = out {
        if let Some(e) = write_error {
            return Err(file_error(&name, e));
        }
        w.flush().map_err(|e| file_error(&name, e))?;
    }
    Ok(sum)
}

fn write_departure(w: &mut impl Write, policy: &PolicyFile, d: Departure) -> std::io::Result<()> {
    let name = &policy.flow_names[d.flow as usize];
    writeln!(w, "{},{name},{},{}", d.time_ns, d.len, d.queueing_delay_ns)
}

/// The arrivals of a CSV file, checked line by line; the first error
/// ends the iteration and is kept.
struct Reader<'a, R> {
    input: BufReader<R>,
    line: u64,
    buf: Vec<u8>,
    previous: u64,
    names: HashMap<&'a str, u32>,
    max_len: u32,
    error: Option<TraceFileError>,
}

impl<R: Read> Reader<'_, R> {
    fn next(&mut self) -> Option<Arrival> {
        match self.next_arrival() {
            Ok(a) => a,
            Err(reason) => {
                self.error = Some(TraceFileError {
                    path: String::new(),
                    line: self.line,
                    reason,
                });
                None
            }
        }
    }

    fn next_arrival(&mut self) -> Result<Option<Arrival>, String> {
        loop {
            self.buf.clear();
            let n = (&mut self.input)
                .take(MAX_LINE + 1)
                .read_until(b'\n', &mut self.buf)
                .map_err(|e| e.to_string())?;
            if n == 0 {
                if self.line == 0 {
                    return Err("empty: the header `time,flow,len` is missing".into());
                }
                return Ok(None);
            }
            self.line += 1;
            if n as u64 > MAX_LINE {
                return Err(format!(
                    "line longer than {MAX_LINE} bytes (the reader's limit)"
                ));
            }
            let text = std::str::from_utf8(&self.buf).map_err(|_| "not UTF-8".to_string())?;
            let text = text.trim();
            if self.line == 1 {
                if text.split(',').map(str::trim).ne(["time", "flow", "len"]) {
                    return Err(format!("header {text:?}: expected `time,flow,len`"));
                }
                continue;
            }
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            let a = parse(text, &self.names, self.max_len, self.previous)?;
            self.previous = a.time_ns;
            return Ok(Some(a));
        }
    }
}

/// One line of arrivals, after the header; `previous` the time of the
/// line before.
fn parse(
    text: &str,
    names: &HashMap<&str, u32>,
    max_len: u32,
    previous: u64,
) -> Result<Arrival, String> {
    let f: Vec<&str> = text.split(',').map(str::trim).collect();
    let [time, flow, len] = f[..] else {
        return Err(format!("{} fields: expected 3 (time,flow,len)", f.len()));
    };
    let time_ns: u64 = time
        .parse()
        .map_err(|_| format!("time {time:?}: expected integer nanoseconds 0..=2^64-1"))?;
    if time_ns < previous {
        return Err(format!(
                "time {time_ns} before the previous line's {}: arrivals must be in non-decreasing time order",
                previous
            ));
    }
    let flow = *names.get(flow).ok_or_else(|| {
        let mut known: Vec<&str> = names.keys().copied().collect();
        known.sort_unstable();
        known.truncate(8);
        format!(
            "flow {flow:?} is not a flow of the policy (e.g. {})",
            known.join(", ")
        )
    })?;
    let len: u32 = len
            .parse()
            .ok()
            .filter(|l| (1..=max_len).contains(l))
            .ok_or_else(|| {
                format!(
                    "len {len:?} outside 1..={} (the policy's max_packet_len: the tree refuses longer packets)",
                    max_len
                )
            })?;
    Ok(Arrival { time_ns, flow, len })
}
