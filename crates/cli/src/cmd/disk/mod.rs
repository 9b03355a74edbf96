//! `fairway disk`: BFQ and the baseline disk schedulers on the simulated
//! IBM-DTLA-307030 (the BFQ thesis §2.4, App. C). The experiments live in
//! `fairway_lab::disk`, the schedulers and their catalogue in
//! `fairway_disk`; each subcommand here parses its flags, calls them and
//! prints.

mod bench;
mod common;
pub(crate) mod error;
mod kernel;
mod s_bench;
mod scheds;
mod shares;
mod streaming;
mod throughput;
mod validate;
mod web;

use clap::{Args, Subcommand};
pub use error::DiskCmdError;

/// Arguments of `fairway disk`.
#[derive(Args)]
pub struct DiskArgs {
    #[command(subcommand)]
    cmd: DiskCmd,
}

#[derive(Subcommand)]
enum DiskCmd {
    /// Aggregate throughput of 2 and 5 sequential readers vs B_max (Fig. 5).
    #[command(
        after_help = "Examples:\n  fairway disk throughput\n  fairway disk throughput --quick --chart fig5.svg\n  fairway disk throughput --files 2 --file-mb 256 --json"
    )]
    Throughput(throughput::ThroughputArgs),
    /// Bandwidth distribution: equal weights (2, 5 readers) and 1:2, 1:2:10.
    #[command(
        after_help = "Examples:\n  fairway disk shares\n  fairway disk shares --quick --json"
    )]
    Shares(shares::SharesArgs),
    /// Web-server workload: small-file latency, large-file bandwidth.
    #[command(
        after_help = "Examples:\n  fairway disk web\n  fairway disk web --seconds 600 --procs 50\n  fairway disk web --quick --chart web.svg"
    )]
    Web(web::WebArgs),
    /// Streaming workload: streams sustained below 1 % loss.
    #[command(
        after_help = "Examples:\n  fairway disk streaming\n  fairway disk streaming --quick --json"
    )]
    Streaming(streaming::StreamingArgs),
    /// Replay a synthetic trace through the real-time emulated disk and
    /// report its error against the simulator (App. C.5.1).
    #[command(
        after_help = "Examples:\n  fairway disk validate\n  fairway disk validate --trace mixed --requests 500 --max-gap-ms 500\n  fairway disk validate --quick --json"
    )]
    Validate(validate::ValidateArgs),
    /// Share accuracy of the kernel's BFQ (fio) and fairway's (real reads)
    /// on the same loop device; needs root, fio, losetup (util-linux) and a
    /// kernel with bfq (else exit status 3).
    #[command(
        after_help = "Examples:\n  fairway disk kernel\n  fairway disk kernel --seconds 10 --json\n  fairway disk kernel --backend io-uring --in-flight 1"
    )]
    Kernel(kernel::KernelArgs),
    /// The S suite's start-up latency test: a replayed application start-up
    /// under greedy readers/writers, kernel schedulers vs fairway's BFQ
    /// (engine) on a loop device; needs root and losetup.
    #[command(
        after_help = "Exit status: 0 measured, 1 failed, 2 bad arguments, 3 skipped (the measurement could not run here: not root, no losetup, a scheduler or io_uring missing).\n\nExamples:\n  fairway disk s-bench\n  fairway disk s-bench --quick --json\n  fairway disk s-bench --s-checkout ~/S --app xterm --chart startup.svg"
    )]
    SBench(s_bench::SBenchArgs),
    /// Nanoseconds per add+dispatch of BFQ at 10 and 1000 applications.
    #[command(
        after_help = "Examples:\n  fairway disk bench\n  fairway disk bench --apps 10,100,1000,10000 --pairs 500000"
    )]
    Bench(bench::BenchArgs),
    /// The catalogue of disk schedulers: spec names, parameters and ranges.
    #[command(after_help = "Examples:\n  fairway disk scheds\n  fairway disk scheds --json")]
    Scheds(scheds::DiskSchedsArgs),
}

/// Runs `fairway disk`.
pub fn run(args: DiskArgs) -> Result<(), DiskCmdError> {
    match args.cmd {
        DiskCmd::Throughput(a) => throughput::run(a),
        DiskCmd::Shares(a) => shares::run(a),
        DiskCmd::Web(a) => web::run(a),
        DiskCmd::Streaming(a) => streaming::run(a),
        DiskCmd::Validate(a) => validate::run(a),
        DiskCmd::Kernel(a) => kernel::run(a),
        DiskCmd::SBench(a) => s_bench::run(a),
        DiskCmd::Bench(a) => bench::run(a),
        DiskCmd::Scheds(a) => scheds::run(a),
    }
}
