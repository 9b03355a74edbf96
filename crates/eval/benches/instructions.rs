//! Instruction-count benchmark, stable on noisy machines: run under
//! `valgrind --tool=callgrind` by `scripts/callgrind.sh`, which counts the
//! instructions executed inside [`counted`] only (warm-up and setup are
//! excluded with `--toggle-collect`) and divides by the pairs printed here.
//!
//! Usage: `instructions SCHED FLOWS PATTERN PAIRS` (e.g. `drr 1x64 smooth
//! 200000`; SCHED may be `none`). Without arguments (as `cargo bench` runs
//! it) it runs a short self-check of every scheduler and prints how to get
//! the counts.

use fairway_core::{SchedKind, SchedSpec};
use fairway_eval::cost::{build_runner, CostPattern, CostRunner, CostSetup, Subject};
use fairway_eval::workload::FlowSet;
use std::process::ExitCode;

/// The region callgrind counts: exactly one measured run.
#[inline(never)]
fn counted(runner: &mut dyn CostRunner, pairs: u64) -> u64 {
    runner.run(pairs, None).pairs
}

fn run(sched: &str, flows: &str, pattern: &str, pairs: u64) -> Result<u64, String> {
    let subject = if sched == "none" {
        Subject::None
    } else {
        Subject::Sched(SchedSpec::parse(sched).map_err(|e| e.to_string())?)
    };
    let flows = FlowSet::parse(flows).map_err(|e| e.to_string())?;
    let pattern = CostPattern::parse(pattern).ok_or(format!("unknown pattern {pattern}"))?;
    let warmup = pattern.thresholds(flows.len() as u32).high;
    let setup = CostSetup::new(flows, pattern, warmup);
    let mut runner = build_runner(&subject, &setup).map_err(|e| e.to_string())?;
    Ok(counted(runner.as_mut(), pairs))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let result = match args.as_slice() {
        [sched, flows, pattern, pairs] => pairs
            .parse::<u64>()
            .map_err(|e| format!("PAIRS: {e}"))
            .and_then(|p| run(sched, flows, pattern, p))
            .map(|done| println!("pairs {done}")),
        [] => {
            for kind in SchedKind::ALL {
                if let Err(e) = run(kind.name(), "1x64", "smooth", 10_000) {
                    eprintln!("{}: {e}", kind.name());
                    return ExitCode::FAILURE;
                }
            }
            println!("instructions: self-check passed; run scripts/callgrind.sh for instruction counts per pair");
            Ok(())
        }
        _ => Err("usage: instructions SCHED FLOWS PATTERN PAIRS".into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("instructions: {e}");
            ExitCode::FAILURE
        }
    }
}
