//! `fairway shape bench`: the shaper beside the kernel's HTB, in one run
//! on one topology (`fairway_lab::shape_bench`). Prints the table (or
//! JSON), writes report.txt, report.json and the generated shaper file
//! to the results directory, progress on stderr.

use crate::cmd::error::CliError;
use crate::cmd::flag::FlagError;
use crate::cmd::outputs::{OutputError, OutputProblem};
use clap::Args;
use std::path::PathBuf;

/// Arguments of `fairway shape bench`.
#[derive(Args)]
#[command(after_help = "Examples:\n  sudo fairway shape bench --quick\n  \
sudo fairway shape bench --circuits 20000 --json\n  \
sudo fairway shape bench --circuits 2200 --phases delay")]
pub struct BenchArgs {
    /// Circuits in the tree, 2200..=50000 (the change touches 2,100 of them).
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    pub circuits: usize,
    /// Shorter traffic phases (about half as long).
    #[arg(long)]
    pub quick: bool,
    /// The phases to measure, comma-separated, of rates, delay,
    /// forwarding, statistics, change; default all. Both sides measure the
    /// same ones.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub phases: Vec<String>,
    /// Run the shaper's loop under SCHED_FIFO at this priority, 1..=99
    /// (`fairway shape --rt-priority`): it then never waits behind other
    /// processes for a core, as the kernel's forwarding, in softirq
    /// context, never does. Default: the normal policy.
    #[arg(long, value_name = "N")]
    pub shaper_rt_priority: Option<u8>,
    /// The report as JSON on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Directory for report.txt, report.json and the generated shaper file
    /// (created if missing); default fairway-results/shape-bench (under
    /// $FAIRWAY_RESULTS if set).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Runs `fairway shape bench`.
#[cfg(target_os = "linux")]
pub fn run(args: BenchArgs) -> Result<(), CliError> {
    use fairway_lab::shape_bench::{self as sb, Config};
    if !(sb::MIN_CIRCUITS..=sb::MAX_CIRCUITS).contains(&args.circuits) {
        return Err(FlagError::ValueOutside {
            flag: "--circuits",
            value: args.circuits.to_string(),
            range: format!(
                "{}..={} (the change touches 2,100 circuits; HTB class ids and the bench's \
                 10.78.0.0/16 addresses hold no more)",
                sb::MIN_CIRCUITS,
                sb::MAX_CIRCUITS
            ),
        }
        .into());
    }
    let phases = phases(&args.phases)?;
    if let Some(p) = args.shaper_rt_priority.filter(|p| !(1..=99).contains(p)) {
        return Err(FlagError::ValueOutside {
            flag: "--shaper-rt-priority",
            value: p.to_string(),
            range: "1..=99 (SCHED_FIFO's priorities)".into(),
        }
        .into());
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| crate::cmd::outputs::results_dir("shape-bench"));
    crate::cmd::prereq::check(
        "fairway shape bench",
        Some("CAP_NET_ADMIN, to create its network namespaces; skipped, needs root"),
        &crate::cmd::prereq::IPROUTE2,
    )?;
    std::fs::create_dir_all(&out)
        .map_err(|e| OutputError::new("--out", &out, OutputProblem::Io(e)))?;
    let shaper_exe = std::env::current_exe().map_err(|e| CliError::CannotRun {
        command: "fairway shape bench",
        why: format!("cannot find its own binary to run as the shaper: {e}"),
    })?;
    fairway_runtime::net::install_interrupt_handler().map_err(CliError::Interrupt)?;
    let cfg = Config {
        circuits: args.circuits,
        quick: args.quick,
        phases,
        shaper_rt_priority: args.shaper_rt_priority,
        shaper_exe,
        work_dir: out.clone(),
    };
    let mut spinner = crate::cmd::progress::Progress::spinner("shape bench", args.json).ticking();
    let result = sb::run(&cfg, &mut |what| spinner.set(0, what));
    spinner.finish();
    let report = result.map_err(CliError::ShapeBench)?;
    let text = report.to_string();
    let json = crate::cmd::json::pretty(&report)?;
    for (name, body) in [("report.txt", &text), ("report.json", &json)] {
        let path = out.join(name);
        std::fs::write(&path, body).map_err(|error| CliError::Write { path, error })?;
    }
    if args.json {
        crate::outln!("{json}");
    } else {
        crate::out!("{text}");
        crate::outln!("written: {}", out.join("report.txt").display());
    }
    Ok(())
}

/// The phases of `--phases`: every one when none is named.
#[cfg(target_os = "linux")]
fn phases(names: &[String]) -> Result<fairway_lab::shape_bench::Phases, CliError> {
    use fairway_lab::shape_bench::{Phase, Phases};
    if names.is_empty() {
        return Ok(Phases::ALL);
    }
    let list = names
        .iter()
        .map(|n| {
            Phase::from_name(n).ok_or_else(|| FlagError::UnknownName {
                flag: "--phases",
                text: n.clone(),
                expected: Phase::names(),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Phases::of(&list))
}

/// Namespaces and HTB need Linux.
#[cfg(not(target_os = "linux"))]
pub fn run(_args: BenchArgs) -> Result<(), CliError> {
    Err(CliError::CannotRun {
        command: "fairway shape bench",
        why: "needs Linux (network namespaces, tc)".into(),
    })
}
