//! `fairway netsim`: the packet-level network simulation of the QFQ paper §6
//! (Fig. 8): end-to-end delays of flows f0 and f1 through two 10 Mbit/s
//! bottlenecks, Tables 2 (average ± std) and 3 (maximum) beside the
//! paper's numbers, and the paper's orderings checked.

use super::common::Table;
use super::error::CliError;
use super::flag::FlagError;
use clap::Args;
use fairway_eval::netsim::fig8::{check_params, claims, run_fig8, Claim, Fig8Params, Fig8Row};
use fairway_eval::netsim::SchedChoice;
use std::time::Instant;

/// Arguments of `fairway netsim`.
#[derive(Args)]
#[command(
    after_help = "Examples:\n  fairway netsim\n  fairway netsim --quick --json\n  \
                  fairway netsim --sched qfq,s-kps --seeds 5 --cbr-len 200"
)]
pub struct NetsimArgs {
    /// Schedulers run by every router, comma separated: registry specs
    /// (e.g. `drr:quantum=250`, `qfq`, `s-kps`, `wf2q+`, `qfq+:m=4`).
    #[arg(long, default_value = "drr:quantum=250,qfq,s-kps,wf2q+")]
    pub sched: String,
    /// Reduced run for CI: 8 s simulated, 2 s discarded, one seed
    /// (overridden by explicit --duration/--warmup/--seeds).
    #[arg(long)]
    pub quick: bool,
    /// Simulated seconds (paper: 20), in (0, 3600]; schedulers × seeds ×
    /// duration at most 36000. Example: `--duration 20`.
    #[arg(long)]
    pub duration: Option<f64>,
    /// Seconds discarded at the start (paper: 5), e.g. `--warmup 5`.
    #[arg(long)]
    pub warmup: Option<f64>,
    /// Runs pooled per scheduler, with seeds SEED.. (default 3), e.g. `--seeds 5`.
    #[arg(long)]
    pub seeds: Option<u64>,
    /// First random seed (CBR phases, Pareto bursts), e.g. `--seed 7`.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Packet length of the CBR flows in bytes (our choice: 50), e.g. `--cbr-len 200`.
    #[arg(long, default_value_t = 50)]
    pub cbr_len: u32,
    /// Packet length of the two best-effort flows in bytes, e.g. `--be-len 1500`.
    #[arg(long, default_value_t = 1000)]
    pub be_len: u32,
    /// Packets per flow per router output queue, e.g. `--buffer 128`.
    #[arg(long, default_value_t = 256)]
    pub buffer: u32,
    /// One JSON object on stdout (rows, claims) instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// The `--sched` list: registry specs, in the grammar every subcommand uses.
fn parse_choices(text: &str) -> Result<Vec<SchedChoice>, CliError> {
    let specs = super::common::parse_scheds(text)?;
    Ok(specs.into_iter().map(SchedChoice::Spec).collect())
}

/// `flag value must be in range`.
fn out_of_range(flag: &'static str, value: impl ToString, range: impl ToString) -> FlagError {
    FlagError::ValueOutOfRange {
        flag,
        value: value.to_string(),
        range: range.to_string(),
    }
}

fn params(args: &NetsimArgs) -> Result<Fig8Params, FlagError> {
    let mut p = if args.quick {
        Fig8Params::quick()
    } else {
        Fig8Params::paper()
    };
    if let Some(d) = args.duration {
        p.duration_s = d;
    }
    if let Some(w) = args.warmup {
        p.warmup_s = w;
    }
    if let Some(s) = args.seeds {
        p.seeds = s;
    }
    if !(p.duration_s.is_finite() && p.duration_s > 0.0 && p.duration_s <= 3600.0) {
        return Err(out_of_range("--duration", p.duration_s, "(0, 3600] s"));
    }
    if !(p.warmup_s >= 0.0 && p.warmup_s < p.duration_s) {
        return Err(out_of_range(
            "--warmup",
            p.warmup_s,
            format!("[0, duration {})", p.duration_s),
        ));
    }
    if !(1..=100).contains(&p.seeds) {
        return Err(out_of_range("--seeds", p.seeds, "1..=100"));
    }
    if !(1..=65536).contains(&args.cbr_len) {
        return Err(out_of_range("--cbr-len", args.cbr_len, "1..=65536"));
    }
    if !(1..=65536).contains(&args.be_len) {
        return Err(out_of_range("--be-len", args.be_len, "1..=65536"));
    }
    if !(1..=1_000_000).contains(&args.buffer) {
        return Err(out_of_range("--buffer", args.buffer, "1..=1000000"));
    }
    p.seed = args.seed;
    p.cbr_len = args.cbr_len;
    p.best_effort_len = args.be_len;
    p.per_flow_buffer = args.buffer;
    Ok(p)
}

/// Runs the simulation and prints the tables (or JSON).
pub fn run(args: NetsimArgs) -> Result<(), CliError> {
    let choices = parse_choices(&args.sched)?;
    let p = params(&args)?;
    // The seeds' range and the simulated seconds in all, before the first run.
    check_params(choices.len(), &p)?;
    let mut bar = super::progress::Progress::percent(args.json);
    let runs = format!("{} runs", choices.len() as u64 * p.seeds);
    let started = Instant::now();
    let rows = run_fig8(&choices, &p, &mut |done, total| {
        bar.set_fraction(done / total, &runs);
    })?;
    bar.finish();
    let elapsed = started.elapsed().as_secs_f64();
    let checked = claims(&rows);
    if args.json {
        let v = serde_json::json!({
            "experiment": "QFQ paper §6 Fig. 8, Tables 2-3",
            "duration_s": p.duration_s,
            "warmup_s": p.warmup_s,
            "seeds": p.seeds,
            "seed": p.seed,
            "cbr_len": p.cbr_len,
            "best_effort_len": p.best_effort_len,
            "per_flow_buffer": p.per_flow_buffer,
            "elapsed_s": elapsed,
            "rows": rows,
            "claims": checked,
        });
        return super::json::print_line(&v);
    }
    print_tables(&rows, &checked, &p, elapsed)?;
    Ok(())
}

fn print_tables(
    rows: &[Fig8Row],
    checked: &[Claim],
    p: &Fig8Params,
    elapsed: f64,
) -> Result<(), crate::cmd::stdout::StdoutError> {
    crate::outln!(
        "QFQ paper Fig. 8: {} s simulated, first {} s discarded, {} seed(s) from {}; CBR {} B, best effort {} B, {} pkt/flow buffers ({:.1} s)",
        p.duration_s,
        p.warmup_s,
        p.seeds,
        p.seed,
        p.cbr_len,
        p.best_effort_len,
        p.per_flow_buffer,
        elapsed
    );
    crate::outln!("\nTable 2: average ± std end-to-end delay, ms (paper beside)");
    let mut t = Table::new(&[
        "sched", "f0", "paper f0", "f1", "paper f1", "f0 pkts", "f1 pkts",
    ]);
    let paper =
        |v: Option<(f64, f64, f64)>| v.map_or("-".into(), |v| format!("{:.2} ± {:.2}", v.0, v.1));
    for r in rows {
        t.row(vec![
            r.sched.clone(),
            format!("{:.2} ± {:.2}", r.f0.mean_delay_ms, r.f0.std_delay_ms),
            paper(r.paper.map(|p| p.f0)),
            format!("{:.2} ± {:.2}", r.f1.mean_delay_ms, r.f1.std_delay_ms),
            paper(r.paper.map(|p| p.f1)),
            r.f0.received.to_string(),
            r.f1.received.to_string(),
        ]);
    }
    t.print()?;
    crate::outln!("\nTable 3: maximum end-to-end delay, ms (paper beside)");
    let mut t = Table::new(&[
        "sched",
        "f0",
        "paper f0",
        "f1",
        "paper f1",
        "drops (all flows)",
    ]);
    let max = |v: Option<(f64, f64, f64)>| v.map_or("-".into(), |v| format!("{:.2}", v.2));
    for r in rows {
        t.row(vec![
            r.sched.clone(),
            format!("{:.2}", r.f0.max_delay_ms),
            max(r.paper.map(|p| p.f0)),
            format!("{:.2}", r.f1.max_delay_ms),
            max(r.paper.map(|p| p.f1)),
            r.dropped.to_string(),
        ]);
    }
    t.print()?;
    if !checked.is_empty() {
        crate::outln!("\nThe paper's orderings:");
        for c in checked {
            crate::outln!("  {}  {}", if c.holds { "pass" } else { "FAIL" }, c.claim);
        }
    }
    Ok(())
}
