//! `fairway disk bench`: the cost of BFQ's add+dispatch against C-LOOK's
//! (`fairway_disk::cost`).

use super::common::{bar, json_line, parse_list};
use super::error::{DiskCmdError, FlagError};
use crate::cmd::common::Table;
use clap::Args;
use fairway_disk::baseline::MAX_QUEUED;
use fairway_disk::cost::{self, CostError, MAX_APPS, MAX_PAIRS, MAX_ROUNDS, MAX_TOTAL_PAIRS};

/// Arguments of `fairway disk bench`.
#[derive(Args)]
pub struct BenchArgs {
    /// Application counts, comma separated, each 1..=524288 (2^19: two
    /// requests queued each, and C-LOOK holds at most 2^20), at most 64
    /// counts.
    #[arg(long, default_value = "10,1000")]
    apps: String,
    /// Timed add+dispatch pairs per round, 1..=2^30; pairs x rounds x
    /// counts at most 2^31 (minutes to an hour of timing).
    #[arg(long, default_value_t = 200_000)]
    pairs: u64,
    /// Rounds, 1..=1000; the best is reported.
    #[arg(long, default_value_t = 5)]
    rounds: u32,
    /// JSON lines instead of the table.
    #[arg(long)]
    json: bool,
}

/// Runs `fairway disk bench`.
pub fn run(a: BenchArgs) -> Result<(), DiskCmdError> {
    let apps: Vec<u32> = parse_list("--apps", &a.apps)?;
    check(&apps, a.pairs, a.rounds)?;
    let pb = bar(apps.len() as u64, a.json);
    let mut table = Table::new(&["apps", "BFQ ns/pair", "C-LOOK ns/pair", "BFQ / C-LOOK"]);
    for &n in &apps {
        pb.set_message(format!("{n} apps"));
        let r = cost::sweep(&[n], a.pairs, a.rounds)?;
        if a.json {
            for c in &r {
                json_line(c)?;
            }
        }
        table.row(vec![
            n.to_string(),
            format!("{:.1}", r[0].ns_per_pair),
            format!("{:.1}", r[1].ns_per_pair),
            format!("{:.2}", r[0].ns_per_pair / r[1].ns_per_pair),
        ]);
        pb.inc(1);
    }
    pb.finish_and_clear();
    if !a.json {
        crate::outln!(
            "add_request + dispatch + complete, every application backlogged, budgets of one request (worst case for B-WF2Q+), best of {} rounds of {} pairs:",
            a.rounds, a.pairs
        );
        table.print()?;
    }
    Ok(())
}

/// Most application counts in one run.
const MAX_COUNTS: usize = 64;

/// The sizes checked against `fairway_disk::cost`'s limits, each refusal
/// naming its flag, before anything is allocated.
fn check(apps: &[u32], pairs: u64, rounds: u32) -> Result<(), FlagError> {
    if apps.len() > MAX_COUNTS {
        return Err(FlagError::TooLarge {
            flag: "--apps",
            value: format!("{} counts", apps.len()),
            max: format!("{MAX_COUNTS} counts"),
        });
    }
    cost::check(apps, pairs, rounds).map_err(|e| match e {
        CostError::Apps(n) => FlagError::ValueOutOfRange {
            flag: "--apps",
            value: n.to_string(),
            range: format!(
                "1..={MAX_APPS} (two requests queued each, C-LOOK holds at most {MAX_QUEUED})"
            ),
        },
        CostError::Pairs(n) => FlagError::ValueOutOfRange {
            flag: "--pairs",
            value: n.to_string(),
            range: format!("1..={MAX_PAIRS}"),
        },
        CostError::Rounds(n) => FlagError::ValueOutOfRange {
            flag: "--rounds",
            value: n.to_string(),
            range: format!("1..={MAX_ROUNDS}"),
        },
        _ => FlagError::TooLarge {
            flag: "--pairs",
            value: format!("{pairs} x {rounds} rounds x {} counts", apps.len()),
            max: format!(
                "{MAX_TOTAL_PAIRS} timed pairs per scheduler, minutes to an hour of timing"
            ),
        },
    })
}
