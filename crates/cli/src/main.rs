//! `fairway`: the command-line front end. Thin by design: parse arguments,
//! call a library crate, print. Each subcommand lives in `cmd/<name>.rs`.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod cmd;

/// Fast, provably fair packet scheduling: compare schedulers, measure their
/// guarantees and costs.
#[derive(Parser)]
#[command(name = "fairway", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Compare the schedulers on a built-in scenario (the default command).
    Demo(cmd::demo::DemoArgs),
    /// Measure T-WFI / B-WFI against an ideal fluid (GPS) system (seed 000 §8.3).
    Guarantees(cmd::guarantees::GuaranteesArgs),
    /// PSPAT runtime: decisions/s and submit->transmit latency (seed 001 §5.4-5.5).
    ArbiterBench(cmd::arbiter_bench::ArbiterBenchArgs),
    /// Cost per enqueue/dequeue pair, sweeps and charts (seed 003 §7, seed 000 §8).
    Bench(cmd::bench::BenchArgs),
    /// Fill-drain throughput of the integer priority queues (seed 002 §5.2).
    BenchPq(cmd::bench_pq::BenchPqArgs),
    /// The catalogue of schedulers: spec names, parameters and ranges, guarantees.
    Scheds(cmd::scheds::SchedsArgs),
    /// Network simulation of seed 003 §6 (Fig. 8): end-to-end delays, Tables 2-3.
    Netsim(cmd::netsim::NetsimArgs),
    /// Real UDP packets: none / tc (HTB) / fairway side by side (seed 001 §5.4-5.5).
    UdpBench(cmd::udp_bench::UdpBenchArgs),
    /// BFQ disk scheduling on a simulated disk: the thesis' experiments (seed 004 §2.4).
    Disk(cmd::disk::DiskArgs),
    /// Programmable policies: check, run and benchmark scheduling trees (seed 002 §3.2, §5.1).
    Policy(cmd::policy::PolicyArgs),
    /// Reproduce the papers' tables and figures, check their claims, write a report.
    Reproduce(cmd::reproduce::ReproduceArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command.unwrap_or(Command::Demo(Default::default())) {
        Command::Demo(args) => cmd::demo::run(args),
        Command::Guarantees(args) => cmd::guarantees::run(args),
        Command::ArbiterBench(args) => cmd::arbiter_bench::run(args),
        Command::Bench(args) => cmd::bench::run(args),
        Command::BenchPq(args) => cmd::bench_pq::run(args),
        Command::Scheds(args) => cmd::scheds::run(args),
        Command::Netsim(args) => cmd::netsim::run(args),
        Command::UdpBench(args) => cmd::udp_bench::run(args),
        Command::Disk(args) => cmd::disk::run(args),
        Command::Policy(args) => cmd::policy::run(args),
        Command::Reproduce(args) => cmd::reproduce::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("fairway: error: {msg}");
            ExitCode::FAILURE
        }
    }
}
