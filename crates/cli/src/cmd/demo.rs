//! `fairway demo`: the default job. Compares every scheduler on a built-in
//! scenario: the skewed `1k-highw` flow set of seed 000 §6/§8.3 behind a
//! one-packet transmit queue.

use super::guarantees::{measure, print_table, GuaranteesArgs};
use clap::Args;
use fairway_core::SchedKind;

/// Arguments of `fairway demo`.
#[derive(Args, Default)]
#[command(after_help = "Example:\n  fairway demo")]
pub struct DemoArgs {
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Runs the demo.
pub fn run(args: DemoArgs) -> Result<(), String> {
    let scheds: Vec<&str> = SchedKind::ALL.iter().map(|k| k.name()).collect();
    println!("fairway demo: one flow with 1/4 of a 10 Gb/s link among 1000 (flow set 1k-highw, seed 000 §8.3).");
    println!("How late can its packets be compared with a perfectly fair (fluid GPS) link?\n");
    let g = GuaranteesArgs {
        sched: scheds.join(","),
        flows: "1k-highw".into(),
        queue: 1,
        packets: Some(60_000),
        pattern: "smooth".into(),
        sizes: "fixed".into(),
        switch_prob: 0.5,
        rate: 10_000_000_000,
        seed: args.seed,
        json: false,
    };
    let reports = measure(&g)?;
    print_table(&reports);
    println!("\nT-WFI: worst lateness versus the flow's guaranteed share (seed 000 Eq. 1), in packet service");
    println!("times of that flow (1500 B at 2.5 Gb/s = 4.8 us); bound: the paper's analytical worst case;");
    println!(
        "vs GPS: worst lateness versus the ideal fluid system. Try `fairway guarantees --help`."
    );
    Ok(())
}
