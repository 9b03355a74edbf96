//! `fairway shape stats`: the statistics of a running shaper, asked over
//! its control socket, printed like `tc -s class show`: a block per node
//! and circuit (and the default class and unshaped frames, once they saw
//! a frame) and direction. `--json` prints the snapshot itself (one JSON
//! object a line), `--watch SECS` prints again every SECS seconds until
//! SIGINT or SIGTERM.

use super::control::{ask, ControlFailed};
use crate::cmd::error::CliError;
use crate::cmd::flag::FlagError;
use clap::Args;
use fairway_shaper::control::protocol::Request;
use fairway_shaper::control::DEFAULT_SOCKET;
use fairway_shaper::datapath::snapshot::{ClassStats, DirStats, Kind, Snapshot};
use fairway_shaper::plan::Dir;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The shortest and longest `--watch` period, seconds.
const WATCH_RANGE: (f64, f64) = (0.1, 86_400.0);
/// How long an answer is waited for (the shaper's own wait for its data
/// path, 5 s, and a margin).
const ANSWER: Duration = Duration::from_secs(10);

/// Arguments of `fairway shape stats`.
#[derive(Args)]
#[command(after_help = "Examples:\n  fairway shape stats\n  \
fairway shape stats --watch 1\n  fairway shape stats --json --socket /tmp/shape.sock")]
pub struct StatsArgs {
    /// The running shaper's control socket (its --control).
    #[arg(long, value_name = "PATH", default_value = DEFAULT_SOCKET)]
    pub socket: PathBuf,
    /// Print the snapshot as JSON, one object a line.
    #[arg(long)]
    pub json: bool,
    /// Print again every SECS seconds (0.1..=86400) until Ctrl-C.
    #[arg(long, value_name = "SECS")]
    pub watch: Option<f64>,
}

/// Runs `fairway shape stats`.
pub fn run(args: StatsArgs) -> Result<(), CliError> {
    let period = match args.watch {
        None => None,
        Some(s) if (WATCH_RANGE.0..=WATCH_RANGE.1).contains(&s) => Some(Duration::from_secs_f64(s)),
        Some(s) => {
            return Err(FlagError::ValueOutOfRange {
                flag: "--watch",
                value: s.to_string(),
                range: format!("{}..={} (seconds)", WATCH_RANGE.0, WATCH_RANGE.1),
            }
            .into())
        }
    };
    let stop = match period {
        Some(_) => {
            Some(fairway_shaper::datapath::run::stop_on_signals().map_err(super::ShapeRunFailed)?)
        }
        None => None,
    };
    loop {
        let started = Instant::now();
        let response = ask(&args.socket, &Request::Stats, ANSWER)?;
        let Some(snapshot) = response.stats else {
            return Err(ControlFailed::Shaper("a response without statistics".into()).into());
        };
        if args.json {
            let line = serde_json::to_string(&snapshot).map_err(crate::cmd::json::JsonError)?;
            crate::outln!("{line}");
        } else {
            crate::out!("{}", text(&snapshot));
        }
        crate::cmd::stdout::flush()?;
        let (Some(period), Some(stop)) = (period, stop.as_ref()) else {
            return Ok(());
        };
        // A plain reprint each period; a signal ends the wait at once.
        while started.elapsed() < period {
            if stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(20).min(period));
        }
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        crate::outln!();
    }
}

/// A rate as `tc` shows it.
fn rate(bps: u64) -> String {
    match bps {
        b if b >= 1_000_000_000 => format!("{:.2}Gbit", b as f64 / 1e9),
        b if b >= 1_000_000 => format!("{:.2}Mbit", b as f64 / 1e6),
        b if b >= 1_000 => format!("{:.1}Kbit", b as f64 / 1e3),
        b => format!("{b}bit"),
    }
}

/// A delay in µs.
fn delay(us: u64) -> String {
    match us {
        u if u >= 1_000_000 => format!("{:.2}s", u as f64 / 1e6),
        u if u >= 1_000 => format!("{:.1}ms", u as f64 / 1e3),
        u => format!("{u}us"),
    }
}

fn block(out: &mut String, c: &ClassStats, d: Dir, s: &DirStats, window_s: u64) {
    let parent = c.parent.as_deref().unwrap_or("root");
    let name = if c.name != c.id {
        format!(" {:?}", c.name)
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "{} {}{name} parent {parent} {}",
        c.kind.name(),
        c.id,
        d.name()
    );
    let drops: Vec<String> = s
        .drops
        .by_reason()
        .iter()
        .filter(|(_, n)| n.packets > 0)
        .map(|(r, n)| format!("{r} {}", n.packets))
        .collect();
    let dropped: u64 = s.drops.by_reason().iter().map(|(_, n)| n.packets).sum();
    let why = if drops.is_empty() {
        String::new()
    } else {
        format!(": {}", drops.join(", "))
    };
    let _ = writeln!(
        out,
        " Sent {} bytes {} pkt (dropped {dropped}{why}) received {} bytes {} pkt",
        s.sent.bytes, s.sent.packets, s.received.bytes, s.received.packets
    );
    let _ = writeln!(
        out,
        " rate {} backlog {}b {}p collisions {}",
        rate(s.rate_bps),
        s.backlog.bytes,
        s.backlog.packets,
        s.collisions
    );
    let q = &s.delay;
    if q.samples == 0 {
        let _ = writeln!(out, " delay - (nothing sent in the last {window_s} s)");
    } else {
        let _ = writeln!(
            out,
            " delay p50 {} p90 {} p99 {} max {} ({} pkt in the last {window_s} s)",
            delay(q.p50_us),
            delay(q.p90_us),
            delay(q.p99_us),
            delay(q.max_us),
            q.samples
        );
    }
}

/// The snapshot as `fairway shape stats` prints it.
pub fn text(s: &Snapshot) -> String {
    let mut out = String::new();
    let window_s = s.delay_window_ms / 1000;
    let _ = writeln!(
        out,
        "uptime {:.1} s; rate over the last complete {} s, delay over the last complete {window_s} s",
        s.uptime_ms as f64 / 1e3,
        s.rate_window_ms as f64 / 1e3
    );
    for c in &s.classes {
        let quiet = matches!(c.kind, Kind::Default | Kind::Unshaped)
            && c.download.received.packets == 0
            && c.upload.received.packets == 0;
        if quiet {
            continue;
        }
        for d in Dir::BOTH {
            block(&mut out, c, d, c.get(d), window_s);
        }
    }
    out
}
