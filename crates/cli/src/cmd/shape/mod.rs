//! `fairway shape`: the shaper an operator runs in front of real
//! subscribers. It reads a shaper file (`--config`) or, with `--check`,
//! LibreQoS's files directly (`--shaped-devices`, `--network`), and checks
//! them (`fairway_shaper::validate`): problems are printed each on its own
//! line `file:line[:col]: message` and it exits 1. With `--check` it
//! prints a summary and stops; without, it shapes between the shaper
//! file's two interfaces (`fairway_shaper::datapath`) until SIGINT or
//! SIGTERM, then prints every class's totals and exits 0. While it runs
//! it answers on its control socket (`--control`, [`stats`], [`reload`])
//! and, with `--metrics ADDR`, serves Prometheus scrapes.

pub mod bench;
pub mod control;
pub mod reload;
pub mod stats;

use super::error::CliError;
use clap::{ArgGroup, Args, Subcommand};
use fairway_shaper::summary::Summary;
use fairway_shaper::Source;
use std::fmt;
use std::path::PathBuf;

/// Arguments of `fairway shape`.
#[derive(Args)]
#[command(
    group(ArgGroup::new("source").required(true).args(["config", "shaped_devices"])),
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    after_help = "Examples:\n  fairway shape --check --config examples/shaper/shaper.toml\n  \
fairway shape --config shaper.toml   (root: shapes between its [interfaces] until Ctrl-C)\n  \
fairway shape --check --shaped-devices examples/shaper/ShapedDevices.csv --network examples/shaper/network.json"
)]
pub struct ShapeArgs {
    /// What to do to a running shaper, or a benchmark; without one, check
    /// or run a configuration.
    #[command(subcommand)]
    pub command: Option<ShapeCommand>,
    /// Check the configuration, print a summary and stop; without it the
    /// shaper runs (needs --config, a shaper file naming two interfaces).
    #[arg(long)]
    pub check: bool,
    /// The shaper file (TOML), e.g. examples/shaper/shaper.toml.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// LibreQoS's ShapedDevices.csv, read without a shaper file (with
    /// --check only: shaping needs the shaper file's interfaces).
    #[arg(
        long,
        value_name = "CSV",
        conflicts_with = "config",
        requires = "check"
    )]
    pub shaped_devices: Option<PathBuf>,
    /// LibreQoS's network.json; without it the network is flat.
    #[arg(
        long,
        value_name = "JSON",
        requires = "shaped_devices",
        conflicts_with = "config"
    )]
    pub network: Option<PathBuf>,
    /// The control socket `fairway shape stats` and `reload` talk to
    /// (default /run/fairway/shape.sock; created mode 0660; refused if
    /// another shaper listens on it).
    #[arg(long, value_name = "PATH", conflicts_with = "check")]
    pub control: Option<PathBuf>,
    /// Serve Prometheus metrics at http://ADDR/metrics (e.g. 127.0.0.1:9100).
    #[arg(long, value_name = "ADDR", conflicts_with = "check")]
    pub metrics: Option<std::net::SocketAddr>,
    /// Run the shaping loop under SCHED_FIFO at this priority, 1..=99, so
    /// that it never waits behind other processes for a core (the other
    /// threads stay normal); needs CAP_SYS_NICE. Default: the normal policy.
    #[arg(long, value_name = "N", conflicts_with = "check")]
    pub rt_priority: Option<u8>,
}

/// `fairway shape SUBCOMMAND`.
#[derive(Subcommand)]
pub enum ShapeCommand {
    /// Statistics of a running shaper, per node and circuit (like `tc -s class show`).
    Stats(stats::StatsArgs),
    /// Apply a changed configuration to a running shaper, without losing a frame.
    Reload(reload::ReloadArgs),
    /// The shaper side by side with the kernel's HTB on the same namespaces (root).
    Bench(bench::BenchArgs),
}

/// A configuration with problems, each already printed on its own line.
#[derive(Debug)]
pub struct ShapeCheckFailed {
    /// How many.
    pub problems: usize,
}

impl fmt::Display for ShapeCheckFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = if self.problems == 1 { "" } else { "s" };
        write!(
            f,
            "{} problem{s} in the configuration (above, one a line)",
            self.problems
        )
    }
}

impl std::error::Error for ShapeCheckFailed {}

/// Runs `fairway shape`.
pub fn run(args: ShapeArgs) -> Result<(), CliError> {
    match args.command {
        Some(ShapeCommand::Stats(a)) => return stats::run(a),
        Some(ShapeCommand::Reload(a)) => return reload::run(a),
        Some(ShapeCommand::Bench(a)) => return bench::run(a),
        None => {}
    }
    let (source, label) = match (args.config, args.shaped_devices) {
        (Some(config), _) => {
            let label = config.display().to_string();
            (Source::ShaperFile(config), label)
        }
        (None, Some(csv)) => {
            let label = match &args.network {
                Some(n) => format!("{} + {}", csv.display(), n.display()),
                None => csv.display().to_string(),
            };
            let network = args.network;
            (
                Source::Libreqos {
                    shaped_devices: csv,
                    network,
                },
                label,
            )
        }
        // clap's group requires one of the two; kept as an error, not a
        // panic, should the group ever change.
        (None, None) => {
            return Err(CliError::Needs {
                command: "fairway shape",
                what: "--config FILE or --shaped-devices CSV",
            })
        }
    };
    if !args.check && !matches!(source, Source::ShaperFile(_)) {
        return Err(CliError::Needs {
            command: "fairway shape (without --check)",
            what: "--config FILE, a shaper file whose [interfaces] names the two interfaces",
        });
    }
    match fairway_shaper::load(&source) {
        Ok(checked) if args.check => {
            crate::outln!("{label}: ok");
            crate::out!("{}", Summary::of(&checked));
            Ok(())
        }
        Ok(checked) => {
            let socket = args
                .control
                .unwrap_or_else(|| fairway_shaper::control::DEFAULT_SOCKET.into());
            if let Some(p) = args.rt_priority {
                realtime(p)?;
            }
            shape(&checked, &source, &label, &socket, args.metrics)
        }
        Err(problems) => {
            for p in &problems {
                crate::errln!("{p}");
            }
            Err(ShapeCheckFailed {
                problems: problems.len(),
            }
            .into())
        }
    }
}

/// The shaper could not run.
#[derive(Debug)]
pub struct ShapeRunFailed(pub fairway_shaper::datapath::run::RunError);

impl fmt::Display for ShapeRunFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for ShapeRunFailed {}

/// `--rt-priority`: the calling thread, which runs the loop, under
/// SCHED_FIFO.
fn realtime(priority: u8) -> Result<(), CliError> {
    use fairway_shaper::datapath::run::{self, RT_PRIORITIES};
    if !RT_PRIORITIES.contains(&priority) {
        return Err(crate::cmd::flag::FlagError::ValueOutside {
            flag: "--rt-priority",
            value: priority.to_string(),
            range: "1..=99 (SCHED_FIFO's priorities)".into(),
        }
        .into());
    }
    run::realtime(priority).map_err(|e| CliError::CannotRun {
        command: "fairway shape",
        why: format!(
            "--rt-priority {priority}: SCHED_FIFO refused: {e} (needs CAP_SYS_NICE or an \
             RLIMIT_RTPRIO of at least {priority})"
        ),
    })
}

/// Shapes until SIGINT or SIGTERM, answering on the control socket (and
/// the metrics endpoint) and reloading `source` on SIGHUP or the socket's
/// `reload`; prints the start lines, a line per reload, then the totals
/// (what was still queued included).
fn shape(
    checked: &fairway_shaper::validate::Checked,
    source: &Source,
    label: &str,
    socket: &std::path::Path,
    metrics: Option<std::net::SocketAddr>,
) -> Result<(), CliError> {
    use fairway_shaper::datapath::{hooks::Hooks, reload_request::ReloadRequests, run};
    use std::sync::Arc;
    let stop = run::stop_on_signals().map_err(ShapeRunFailed)?;
    // SIGHUP and the control socket's `reload` verb share these requests.
    let requests = Arc::new(ReloadRequests::new());
    let mut reload_printed = Ok(());
    let mut on_outcome = |a: &fairway_shaper::datapath::reload_request::ReloadAnswer| {
        for line in a.text.lines() {
            if reload_printed.is_ok() {
                reload_printed =
                    crate::cmd::stdout::write(format_args!("fairway shape: reload: {line}\n"))
                        .and_then(|()| crate::cmd::stdout::flush());
            }
        }
    };
    let reload = run::Reload {
        source: source.clone(),
        requests: Arc::clone(&requests),
        on_outcome: &mut on_outcome,
    };
    let Some(ifs) = checked.plan.interfaces.as_ref() else {
        return Err(ShapeRunFailed(run::RunError::NoInterfaces).into());
    };
    let hooks = Arc::new(Hooks::new(requests).map_err(control::ControlFailed::Wake)?);
    // The socket and the endpoint start once the interfaces are open (an
    // interface problem is reported first) and stop, the socket file
    // removed, when `watching` is dropped at the end of this function,
    // however the run ends. If they cannot start, the loop is stopped
    // before its first turn.
    let mut watching = None;
    let mut failed = None;
    let mut printed = Ok(());
    let outcome = run::run(checked, &stop, Some(&hooks), Some(reload), || {
        let w = match control::start(socket, metrics, &hooks) {
            Ok(w) => w,
            Err(e) => {
                failed = Some(e);
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                return;
            }
        };
        let line = format!(
            "fairway shape: {label}: shaping {} -> {} (download {}), {} -> {} (upload {}), {} circuits; \
             SIGINT or SIGTERM stops",
            ifs.internet,
            ifs.subscribers,
            fairway_shaper::rate::show(ifs.download),
            ifs.subscribers,
            ifs.internet,
            fairway_shaper::rate::show(ifs.upload),
            checked.plan.circuits.len()
        );
        let metrics = match &w.metrics {
            Some(m) => format!("; metrics at http://{}/metrics", m.addr()),
            None => String::new(),
        };
        let watch = format!(
            "fairway shape: control socket {} (fairway shape stats|reload --socket PATH){metrics}",
            w.server.path().display()
        );
        watching = Some(w);
        // Flushed at once: whoever started the shaper waits for this line.
        printed = crate::cmd::stdout::write(format_args!("{line}\n{watch}\n"))
            .and_then(|()| crate::cmd::stdout::flush());
    })
    .map_err(ShapeRunFailed)?;
    if let Some(e) = failed {
        return Err(e.into());
    }
    printed?;
    reload_printed?;
    crate::outln!("fairway shape: stopped; totals per class (frames; queued: still queued at the stop, not sent):");
    crate::out!("{}", outcome.report);
    for (interface, drops) in &outcome.kernel_drops {
        if *drops > 0 {
            crate::outln!(
                "{interface}: {drops} frames dropped by the kernel before the shaper read them"
            );
        }
    }
    // The socket file goes after the totals are out.
    drop(watching);
    Ok(())
}
