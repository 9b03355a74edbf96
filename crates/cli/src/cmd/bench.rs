//! `fairway bench`: ns per enqueue/dequeue pair of each scheduler, total and
//! net of the `none` baseline, as the QFQ paper §7 (Table 4) and the QFQ+ paper §8.2
//! measure it; `--sweep flows|m` runs the scaling experiments (the QFQ paper
//! Fig. 10, the QFQ+ paper Fig. 2) and writes CSV + SVG. The measuring itself is
//! `fairway_eval::cost`.

use super::common::Table;
use super::error::CliError;
use super::flag::FlagError;
use clap::{Args, ValueEnum};
use fairway_eval::cost::sweep::{
    flow_counts, m_values, sweep_flows, sweep_m, write_flows_outputs, write_m_outputs, SweepRow,
};
use fairway_eval::cost::{
    measure, parse_patterns, CostPattern, CostReport, CostSetup, CounterError, MeasureOptions,
    PerfCounters, Plan, Progress, Subject,
};
use fairway_eval::workload::FlowSet;
use std::fmt;
use std::path::PathBuf;

/// Which scaling experiment `--sweep` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SweepKind {
    /// 1 … 32768 flows of weight 1 (QFQ paper Fig. 10).
    Flows,
    /// QFQ+ aggregate size M = 1 … 16 (QFQ+ paper Fig. 2).
    M,
}

/// Arguments of `fairway bench`.
#[derive(Args)]
#[command(after_help = "Examples:
  fairway bench
  fairway bench --sched fifo,drr,qfq,qfq+,wf2q+ --flows 32k-wmix --pattern smooth --repeat 5
  fairway bench --flows 1k-w1,32k-wmix --pattern smooth,bursty --json
  fairway bench --sched drr,qfq,wf2q+ --pattern alternate --flows 1x1024
  fairway bench --sweep flows --sched drr,qfq,qfq+,wf2q+ --out /tmp/fairway-bench
  fairway bench --sweep m")]
pub struct BenchArgs {
    /// Schedulers, comma separated, with optional parameters (`qfq+:m=4`);
    /// `none` adds the baseline's own row. Default: every registry scheduler.
    #[arg(long)]
    pub sched: Option<String>,
    /// Flow sets, the grammar of every `--flows`: a preset (1k-w1, 1k-wmix,
    /// 32k-w1, 32k-wmix, 1k-highw) or `WEIGHTxCOUNT[@MAXLEN]` groups joined
    /// by `,` into one set (`1x500,8x125@9000`); several sets separated by
    /// `;` (`1x64;1x4096`) or a `,` list of presets (`1k-w1,32k-w1`).
    /// Default: 1k-w1 (the `m` sweep: the four QFQ+ paper §8 presets).
    #[arg(long)]
    pub flows: Option<String>,
    /// Patterns, comma separated: small, large, full (QFQ paper §7.1),
    /// smooth, bursty (QFQ+ paper §8), alternate (dummynet's harness:
    /// backlog between N and N+1).
    #[arg(long, default_value = "smooth")]
    pub pattern: String,
    /// Enqueue/dequeue pairs per timed run (rounded up to whole cycles of
    /// the pattern). Default: 2000000, sweeps 1000000. A command plans at
    /// most 2^40 pairs in all (timed and warm-up, every scheduler, flow
    /// set and pattern).
    #[arg(long, value_name = "N", value_parser = super::units::count_u64)]
    pub pairs: Option<u64>,
    /// Timed runs per scheduler (interleaved); min/median/max are reported.
    #[arg(long, default_value_t = 3, value_name = "N", value_parser = super::units::count_usize)]
    pub repeat: usize,
    /// One JSON object per (sched, flows, pattern) on stdout.
    #[arg(long)]
    pub json: bool,
    /// Run a scaling experiment instead: `flows` or `m`.
    #[arg(long, value_enum)]
    pub sweep: Option<SweepKind>,
    /// Directory for the sweeps' CSV and SVG files (only with --sweep);
    /// default: fairway-results/bench (under $FAIRWAY_RESULTS if set).
    /// Example: --out /tmp/sweep
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Untimed pairs each scheduler runs before its first timed run.
    /// Default: one fill of the pattern (its `high` backlog, at most
    /// --pairs). Raise it to measure a scheduler's steady state where the
    /// report says it drifts; 0 times from a cold start. Not with --sweep.
    #[arg(long, value_name = "N", value_parser = super::units::count_or_zero_u64)]
    pub warmup: Option<u64>,
    /// Do not try to open hardware counters.
    #[arg(long)]
    pub no_counters: bool,
}

/// Why a run has no hardware counters (the reports say so).
enum NoCounters {
    /// `--no-counters`.
    Disabled,
    /// The kernel or the machine refused them.
    Unavailable(CounterError),
}

impl fmt::Display for NoCounters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoCounters::Disabled => write!(f, "disabled by --no-counters"),
            NoCounters::Unavailable(e) => e.fmt(f),
        }
    }
}

fn open_counters(args: &BenchArgs) -> Result<PerfCounters, NoCounters> {
    if args.no_counters {
        Err(NoCounters::Disabled)
    } else {
        PerfCounters::open().map_err(NoCounters::Unavailable)
    }
}

fn fmt_opt(v: Option<f64>, prec: usize) -> String {
    v.map_or("-".into(), |v| format!("{v:.prec$}"))
}

fn print_table(reports: &[CostReport]) -> Result<(), crate::cmd::stdout::StdoutError> {
    let find = |name: &str| {
        reports
            .iter()
            .find(|r| r.sched == name)
            .map(|r| r.ns_per_pair)
    };
    let refs: Vec<(&str, f64)> = ["drr", "qfq"]
        .into_iter()
        .filter_map(|n| find(n).map(|v| (n, v)))
        .collect();
    let mut header = vec!["sched", "ns/pair", "min", "max", "net"];
    let ratio_names: Vec<String> = refs.iter().map(|(n, _)| format!("x{n}")).collect();
    header.extend(ratio_names.iter().map(String::as_str));
    header.extend(["instr/pair", "misses/pair"]);
    let mut t = Table::new(&header);
    for r in reports {
        let mut row = vec![
            r.sched.clone(),
            format!("{:.1}", r.ns_per_pair),
            format!("{:.1}", r.ns_per_pair_min),
            format!("{:.1}", r.ns_per_pair_max),
            format!("{:.1}", r.ns_per_pair_net),
        ];
        row.extend(
            refs.iter()
                .map(|(_, v)| format!("{:.2}", r.ns_per_pair / v)),
        );
        row.push(fmt_opt(r.instructions_per_pair, 0));
        row.push(fmt_opt(r.cache_misses_per_pair, 2));
        t.row(row);
    }
    t.print()
}

/// A footnote for each scheduler whose repeats kept getting slower than the
/// baseline's: its median is then a matter of how long it ran.
fn print_drift(reports: &[CostReport]) -> Result<(), crate::cmd::stdout::StdoutError> {
    for r in reports.iter().filter(|r| r.drifting()) {
        let runs: Vec<String> = r
            .ns_per_pair_runs
            .iter()
            .map(|v| format!("{v:.1}"))
            .collect();
        crate::outln!(
            "note: {} is not stationary here: its repeats took {} ns per pair in turn \
             (drift x{:.1} against the baseline); the median depends on how long it ran. \
             Its steady state: --warmup with tens of millions of pairs (docs/bench.md, \"Drift\").",
            r.sched,
            runs.join(", "),
            r.drift.unwrap_or(0.0)
        );
    }
    Ok(())
}

fn run_table(args: &BenchArgs) -> Result<(), CliError> {
    let subjects = Subject::parse_list(args.sched.as_deref())?;
    let sets = FlowSet::parse_list(args.flows.as_deref().unwrap_or("1k-w1"))?;
    let patterns = parse_patterns(&args.pattern)?;
    let opts = MeasureOptions {
        pairs: args.pairs.unwrap_or(2_000_000),
        repeat: args.repeat,
        counters: true,
    };
    let warmup_of = |set: &FlowSet, pattern: CostPattern| {
        args.warmup
            .unwrap_or_else(|| pattern.thresholds(set.len() as u32).high.min(opts.pairs))
    };
    let measured = 1 + subjects.iter().filter(|s| **s != Subject::None).count() as u64;
    // The whole command's pairs, before the first runner is built.
    Plan {
        pairs: opts.pairs,
        repeat: opts.repeat as u64,
        warmup: sets
            .iter()
            .flat_map(|set| patterns.iter().map(|&p| warmup_of(set, p)))
            .max()
            .unwrap_or(0),
        subjects: measured,
        setups: (sets.len() * patterns.len()) as u64,
    }
    .check()?;
    let mut counters = open_counters(args);
    let runs_per = opts.repeat as u64 * measured;
    let total = (sets.len() * patterns.len()) as u64 * runs_per;
    let mut bar = super::progress::Progress::counted(total, "runs", args.json);
    let mut step = 0u64;
    let machine = fairway_eval::machine::describe();
    for set in &sets {
        for &pattern in &patterns {
            let setup = CostSetup::new(set.clone(), pattern, warmup_of(set, pattern));
            let label = format!("{} {}", set.name, pattern);
            bar.set(step, &label);
            let reports = measure(
                &subjects,
                &setup,
                &opts,
                &mut counters,
                &mut |p: Progress| bar.set(step + p.done as u64, &label),
            )?;
            step += runs_per;
            if args.json {
                for r in &reports {
                    super::json::print_line(r)?;
                }
            } else {
                bar.suspend(|| -> Result<(), crate::cmd::stdout::StdoutError> {
                    let first = &reports[0];
                    crate::outln!(
                        "flows {} ({} flows), pattern {}, {} pairs x {} repeats; ns per enqueue+dequeue pair incl. harness (median; net = minus none {:.1} ns); {}",
                        set.name,
                        set.len(),
                        pattern,
                        first.pairs,
                        first.repeat,
                        first.none_ns_per_pair.unwrap_or(0.0),
                        machine
                    );
                    print_table(&reports)?;
                    print_drift(&reports)?;
                    crate::outln!();
                    Ok(())
                })?;
            }
        }
    }
    bar.finish();
    note_counters(&counters, args.json || args.no_counters);
    Ok(())
}

/// A diagnostic, so on stderr, once, and not with `--json`: the tables and
/// JSON on stdout stay the same whether or not counters could be opened.
fn note_counters(counters: &Result<PerfCounters, NoCounters>, json: bool) {
    if let (Err(e), false) = (counters, json) {
        crate::errln!(
            "note: hardware counters unavailable ({e}); instr/pair and misses/pair show '-'"
        );
    }
}

fn print_rows(rows: &[SweepRow], json: bool, x_name: &str) -> Result<(), CliError> {
    if json {
        for r in rows {
            super::json::print_line(&r.report)?;
        }
        return Ok(());
    }
    let mut t = Table::new(&["series", x_name, "ns/pair", "min", "max", "net"]);
    for r in rows {
        t.row(vec![
            r.series.clone(),
            r.x.to_string(),
            format!("{:.1}", r.report.ns_per_pair),
            format!("{:.1}", r.report.ns_per_pair_min),
            format!("{:.1}", r.report.ns_per_pair_max),
            format!("{:.1}", r.report.ns_per_pair_net),
        ]);
    }
    t.print()?;
    Ok(())
}

fn run_sweep(args: &BenchArgs, kind: SweepKind) -> Result<(), CliError> {
    let patterns = parse_patterns(&args.pattern)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| super::outputs::results_dir("bench"));
    super::outputs::check_out_dir("--out", &out)?;
    let opts = MeasureOptions {
        pairs: args.pairs.unwrap_or(1_000_000),
        repeat: args.repeat,
        counters: true,
    };
    let counts = flow_counts();
    let ms = m_values();
    // Subjects and setups of one pattern: the flows sweep runs the listed
    // schedulers and `none` on every flow count, the M sweep QFQ+ at each
    // M, QFQ, DRR and `none` on every flow set. Warm-ups are at most
    // --pairs.
    let (subjects, sets) = match kind {
        SweepKind::Flows => {
            let mut subjects = Subject::parse_list(args.sched.as_deref())?;
            if !subjects.contains(&Subject::None) {
                subjects.insert(0, Subject::None);
            }
            (subjects, Vec::new())
        }
        SweepKind::M => {
            let sets = FlowSet::parse_list(
                args.flows
                    .as_deref()
                    .unwrap_or("1k-w1,1k-wmix,32k-w1,32k-wmix"),
            )?;
            (Vec::new(), sets)
        }
    };
    let (measured, points) = match kind {
        SweepKind::Flows => (subjects.len(), counts.len()),
        SweepKind::M => (ms.len() + 3, sets.len()),
    };
    Plan {
        pairs: opts.pairs,
        repeat: opts.repeat as u64,
        warmup: opts.pairs,
        subjects: measured as u64,
        setups: (points * patterns.len()) as u64,
    }
    .check()?;
    let per = opts.repeat as u64 * measured as u64;
    let mut counters = open_counters(args);
    let machine = fairway_eval::machine::describe();
    for &pattern in &patterns {
        let (rows, files) = match kind {
            SweepKind::Flows => {
                let mut bar = super::progress::Progress::counted(
                    per * counts.len() as u64,
                    "runs",
                    args.json,
                );
                let rows = sweep_flows(
                    &subjects,
                    pattern,
                    &counts,
                    &opts,
                    &mut counters,
                    &mut |p| bar.set(p.done as u64, "flows sweep"),
                )?;
                bar.finish();
                let files = write_flows_outputs(&out, pattern, &rows, &machine)?;
                (rows, files)
            }
            SweepKind::M => {
                let mut bar =
                    super::progress::Progress::counted(per * sets.len() as u64, "runs", args.json);
                let rows = sweep_m(&sets, pattern, &ms, &opts, &mut counters, &mut |p| {
                    bar.set(p.done as u64, "M sweep")
                })?;
                bar.finish();
                let files = write_m_outputs(&out, pattern, &rows, &machine)?;
                (rows, files)
            }
        };
        let x_name = if kind == SweepKind::Flows {
            "flows"
        } else {
            "m"
        };
        if !args.json {
            crate::outln!(
                "sweep {x_name}, pattern {pattern}, {} pairs x {} repeats; {machine}",
                opts.pairs,
                opts.repeat
            );
        }
        print_rows(&rows, args.json, x_name)?;
        if !args.json {
            for f in files {
                crate::errln!("wrote {}", f.display());
            }
        }
    }
    note_counters(&counters, args.json || args.no_counters);
    Ok(())
}

/// Runs `fairway bench`.
pub fn run(args: BenchArgs) -> Result<(), CliError> {
    if args.out.is_some() && args.sweep.is_none() {
        return Err(FlagError::OnlyWith {
            flag: "--out",
            condition: "with --sweep",
            why: "the table goes to stdout",
        }
        .into());
    }
    if args.warmup.is_some() && args.sweep.is_some() {
        return Err(FlagError::OnlyWith {
            flag: "--warmup",
            condition: "without --sweep",
            why: "sweeps warm up one fill per point",
        }
        .into());
    }
    match args.sweep {
        Some(kind) => run_sweep(&args, kind),
        None => run_table(&args),
    }
}
