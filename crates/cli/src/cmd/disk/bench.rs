//! `fairway disk bench`: the cost of BFQ's add+dispatch against C-LOOK's
//! (`fairway_disk::cost`).

use super::common::{bar, json_line, parse_list};
use super::error::{DiskCmdError, FlagError};
use crate::cmd::common::Table;
use clap::Args;
use fairway_disk::cost;

/// Arguments of `fairway disk bench`.
#[derive(Args)]
pub struct BenchArgs {
    /// Application counts, comma separated.
    #[arg(long, default_value = "10,1000")]
    apps: String,
    /// Timed add+dispatch pairs per round.
    #[arg(long, default_value_t = 200_000)]
    pairs: u64,
    /// Rounds; the best is reported.
    #[arg(long, default_value_t = 5)]
    rounds: u32,
    /// JSON lines instead of the table.
    #[arg(long)]
    json: bool,
}

/// Runs `fairway disk bench`.
pub fn run(a: BenchArgs) -> Result<(), DiskCmdError> {
    let apps: Vec<u32> = parse_list("--apps", &a.apps)?;
    if apps.iter().any(|&n| !(1..=1 << 20).contains(&n)) {
        return Err(FlagError::CountOutOfRange {
            flag: "--apps",
            range: "1..=1048576",
        }
        .into());
    }
    if !(1..=1 << 30).contains(&a.pairs) || !(1..=1000).contains(&a.rounds) {
        return Err(FlagError::PairsOrRounds.into());
    }
    let pb = bar(apps.len() as u64, a.json);
    let mut table = Table::new(&["apps", "BFQ ns/pair", "C-LOOK ns/pair", "BFQ / C-LOOK"]);
    for &n in &apps {
        pb.set_message(format!("{n} apps"));
        let r = cost::sweep(&[n], a.pairs, a.rounds);
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
