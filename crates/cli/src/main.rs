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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command.unwrap_or(Command::Demo(Default::default())) {
        Command::Demo(args) => cmd::demo::run(args),
        Command::Guarantees(args) => cmd::guarantees::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("fairway: error: {msg}");
            ExitCode::FAILURE
        }
    }
}
