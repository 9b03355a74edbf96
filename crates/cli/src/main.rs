//! `fairway`: the command-line front end. Thin by design: parse arguments,
//! call a library crate, print. Each subcommand lives in `cmd/<name>.rs`.

use clap::error::ErrorKind;
use clap::{Command as ClapCommand, CommandFactory, FromArgMatches, Parser, Subcommand};
use std::io::Write;
use std::process::ExitCode;

mod cmd;

/// Fast, provably fair packet scheduling: compare schedulers, measure their
/// guarantees and costs.
#[derive(Parser)]
#[command(name = "fairway", version, about, long_about = None, after_help = AFTER_HELP)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

/// What `fairway --help` prints under the commands: what a command needs
/// beyond fairway, where files go, and the exit statuses.
const AFTER_HELP: &str = "\
Needs beyond fairway: `udp-bench` and `reproduce pspat` root and iproute2 (ip, tc);
`disk kernel` root, fio and losetup (util-linux), a kernel with bfq; the rest nothing.

Files: a command that writes files without being told where puts them under
./fairway-results/ (or $FAIRWAY_RESULTS) and prints the path.

Exit status:
  0  done (every claim held)
  1  an error, or a claim that does not hold
  2  a usage error (a flag or its value)
  3  a measurement asked for could not run here (not root, a tool missing); stderr names it";

#[derive(Subcommand)]
enum Command {
    /// Compare the schedulers on a built-in scenario (the default command).
    Demo(cmd::demo::DemoArgs),
    /// Measure T-WFI / B-WFI against an ideal fluid (GPS) system (QFQ+ paper §8.3).
    Guarantees(cmd::guarantees::GuaranteesArgs),
    /// PSPAT runtime: decisions/s and submit->transmit latency (PSPAT paper §5.4-5.5).
    ArbiterBench(cmd::arbiter_bench::ArbiterBenchArgs),
    /// Cost per enqueue/dequeue pair, sweeps and charts (QFQ paper §7, QFQ+ paper §8).
    Bench(cmd::bench::BenchArgs),
    /// Fill-drain throughput of the integer priority queues (Eiffel paper §5.2).
    BenchPq(cmd::bench_pq::BenchPqArgs),
    /// The catalogue of schedulers: spec names, parameters and ranges, guarantees.
    Scheds(cmd::scheds::SchedsArgs),
    /// Network simulation of QFQ paper §6 (Fig. 8): end-to-end delays, Tables 2-3.
    Netsim(cmd::netsim::NetsimArgs),
    /// Real UDP packets: none / tc (HTB) / fairway side by side (PSPAT paper §5.4-5.5); needs root and iproute2.
    UdpBench(cmd::udp_bench::UdpBenchArgs),
    /// BFQ disk scheduling on a simulated disk: the thesis' experiments (BFQ thesis §2.4).
    Disk(cmd::disk::DiskArgs),
    /// Programmable policies: check, run and benchmark scheduling trees (Eiffel paper §3.2, §5.1).
    Policy(cmd::policy::PolicyArgs),
    /// Reproduce the papers' tables and figures, check their claims, write a report.
    Reproduce(cmd::reproduce::ReproduceArgs),
    /// Shaper for real subscribers: run it between two interfaces, or check its configuration (fairway's TOML or LibreQoS's files).
    Shape(cmd::shape::ShapeArgs),
}

/// Lets every option that takes a value accept a leading `-`, so that
/// `--pairs -3` reaches the value parser and is refused as negative instead
/// of clap reporting a missing value.
fn negative_numbers_reach_parsers(cmd: ClapCommand) -> ClapCommand {
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    let mut cmd = cmd.mut_args(|a| {
        if a.get_action().takes_values() && !a.is_positional() {
            a.allow_negative_numbers(true)
        } else {
            a
        }
    });
    for name in names {
        cmd = cmd.mut_subcommand(name, negative_numbers_reach_parsers);
    }
    cmd
}

/// clap's own integer parsers call `-1` "not in 0..=N"; say what is wrong.
fn say_negative(line: &str) -> String {
    let negative = line
        .split_once("invalid value '-")
        .is_some_and(|(_, rest)| rest.starts_with(|c: char| c.is_ascii_digit()));
    match line.rsplit_once("': ") {
        Some((head, why)) if negative && !why.contains("negative") => {
            format!("{head}': negative numbers are not allowed")
        }
        _ => line.to_string(),
    }
}

/// Parses the command line; usage errors print one line (clap's first) and
/// exit with status 2, help and version print as usual.
fn parse() -> Result<Cli, ExitCode> {
    let parsed = negative_numbers_reach_parsers(Cli::command())
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m));
    parsed.map_err(|e| match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
        _ => {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("bad arguments");
            let first = first.strip_prefix("error: ").unwrap_or(first);
            // clap names missing arguments on the lines after the first.
            let missing: Vec<&str> = text
                .lines()
                .skip(1)
                .take_while(|l| l.starts_with("  "))
                .map(str::trim)
                .collect();
            let first = match e.kind() {
                ErrorKind::MissingRequiredArgument if !missing.is_empty() => {
                    format!("{first} {}", missing.join(", "))
                }
                _ => first.to_string(),
            };
            crate::errln!("fairway: error: {}", say_negative(&first));
            ExitCode::from(2)
        }
    })
}

fn main() -> ExitCode {
    let cli = match parse() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let result = match cli
        .command
        .unwrap_or_else(|| Command::Demo(cmd::demo::DemoArgs::default()))
    {
        Command::Demo(args) => cmd::demo::run(args),
        Command::Guarantees(args) => cmd::guarantees::run(args),
        Command::ArbiterBench(args) => cmd::arbiter_bench::run(args),
        Command::Bench(args) => cmd::bench::run(args),
        Command::BenchPq(args) => cmd::bench_pq::run(args),
        Command::Scheds(args) => cmd::scheds::run(args),
        Command::Netsim(args) => cmd::netsim::run(args),
        Command::UdpBench(args) => cmd::udp_bench::run(args),
        Command::Disk(args) => cmd::disk::run(args).map_err(cmd::error::CliError::from),
        Command::Policy(args) => cmd::policy::run(args),
        Command::Reproduce(args) => cmd::reproduce::run(args),
        Command::Shape(args) => cmd::shape::run(args),
    };
    let result = result.and_then(|()| cmd::stdout::flush().map_err(cmd::error::CliError::from));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Not `eprintln!`: it panics when standard error is itself full.
            let _ = writeln!(std::io::stderr(), "fairway: error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
