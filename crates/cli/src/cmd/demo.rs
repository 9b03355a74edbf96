//! `fairway demo`: the default job. Compares every scheduler on a built-in
//! scenario, the skewed `1k-highw` flow set of the QFQ+ paper §6/§8.3 behind
//! a one-packet transmit queue: first how late the heavy flow's packets can
//! be against the fluid (GPS) ideal and the analytical bound, then what each
//! scheduler costs per packet on the same flow set (a short run of the
//! `fairway bench` harness).

use super::error::CliError;
use super::guarantees::{measure, print_table, GuaranteesArgs};
use clap::Args;
use fairway_core::SchedKind;
use fairway_eval::cost::{
    self, CostError, CostPattern, CostReport, CostSetup, MeasureOptions, PerfCounters, Subject,
};
use fairway_eval::guarantees::GuaranteeReport;
use fairway_eval::workload::FlowSet;

/// Seed of the demo, shared by bare `fairway` and `fairway demo`.
pub const DEMO_SEED: u64 = 1;
/// Enqueue/dequeue pairs per timed cost run: short, so the demo stays a
/// few seconds; `fairway bench` runs 2 000 000.
const COST_PAIRS: u64 = 200_000;
/// Timed cost runs per scheduler (the median is shown).
const COST_REPEAT: usize = 3;

/// Arguments of `fairway demo`.
#[derive(Args)]
#[command(after_help = "Examples:\n  fairway demo\n  fairway demo --json")]
pub struct DemoArgs {
    /// Random seed of the traffic (bare `fairway` uses the default).
    /// Example: --seed 7
    #[arg(long, default_value_t = DEMO_SEED)]
    pub seed: u64,
    /// One JSON object on stdout (`guarantees`, `cost`, `verdict`) instead
    /// of the explained tables.
    #[arg(long)]
    pub json: bool,
}

impl Default for DemoArgs {
    fn default() -> Self {
        Self {
            seed: DEMO_SEED,
            json: false,
        }
    }
}

/// How one scheduler did against its guarantee.
#[derive(serde::Serialize)]
struct Verdict {
    sched: String,
    /// `within`, `exceeded` or `none` (no analytical guarantee).
    status: &'static str,
    /// Measured T-WFI over the bound, when there is a bound.
    twfi_over_bound: Option<f64>,
}

fn verdicts(reports: &[GuaranteeReport]) -> Vec<Verdict> {
    reports
        .iter()
        .map(|r| match r.twfi_bound_max_weight_flow {
            None => Verdict {
                sched: r.sched.clone(),
                status: "none",
                twfi_over_bound: None,
            },
            Some(b) => {
                let ok = r.twfi_max_weight_flow <= b && r.bound_violations == 0;
                Verdict {
                    sched: r.sched.clone(),
                    status: if ok { "within" } else { "exceeded" },
                    twfi_over_bound: (b > 0.0).then(|| r.twfi_max_weight_flow / b),
                }
            }
        })
        .collect()
}

fn verdict_line(reports: &[GuaranteeReport], v: &[Verdict]) -> String {
    let within: Vec<String> = v
        .iter()
        .filter(|v| v.status == "within")
        .map(|v| match v.twfi_over_bound {
            Some(x) => format!("{} (T-WFI at {:.0}% of its bound)", v.sched, x * 100.0),
            None => v.sched.clone(),
        })
        .collect();
    let exceeded: Vec<String> = v
        .iter()
        .zip(reports)
        .filter(|(v, _)| v.status == "exceeded")
        .map(|(v, r)| match v.twfi_over_bound {
            Some(x) if x > 1.0 => format!(
                "{} (T-WFI {:.0}% over its bound)",
                v.sched,
                (x - 1.0) * 100.0
            ),
            _ => format!("{} ({} flows over a bound)", v.sched, r.bound_violations),
        })
        .collect();
    let none: Vec<String> = v
        .iter()
        .filter(|v| v.status == "none")
        .map(|v| v.sched.clone())
        .collect();
    let list = |l: &[String]| {
        if l.is_empty() {
            "none".to_string()
        } else {
            l.join(", ")
        }
    };
    format!(
        "Verdict: within their guarantee: {}; exceeded: {}; no guarantee to check: {}.",
        list(&within),
        list(&exceeded),
        list(&none)
    )
}

fn measure_cost(scheds: &[&str]) -> Result<Vec<CostReport>, CostError> {
    let subjects = Subject::parse_list(Some(&scheds.join(",")))?;
    let set = FlowSet::parse("1k-highw")?;
    let pattern = CostPattern::Smooth;
    let n = set.len() as u32;
    let warmup = pattern.thresholds(n).high.min(COST_PAIRS);
    let setup = CostSetup::new(set, pattern, warmup);
    let opts = MeasureOptions {
        pairs: COST_PAIRS,
        repeat: COST_REPEAT,
        counters: false,
    };
    let mut counters: Result<PerfCounters, &str> = Err("not used by the demo");
    cost::measure(&subjects, &setup, &opts, &mut counters, &mut |_| {})
}

fn print_cost(reports: &[CostReport]) -> Result<(), crate::cmd::stdout::StdoutError> {
    let mut t = super::common::Table::new(&["sched", "ns/pair", "net ns/pair"]);
    for r in reports {
        t.row(vec![
            r.sched.clone(),
            format!("{:.1}", r.ns_per_pair),
            format!("{:.1}", r.ns_per_pair_net),
        ]);
    }
    t.print()
}

/// Runs the demo.
pub fn run(args: DemoArgs) -> Result<(), CliError> {
    let scheds: Vec<&str> = SchedKind::ALL.iter().map(|k| k.name()).collect();
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
        // Only hides the progress display: the demo prints its own output.
        json: args.json,
    };
    let reports = measure(&g)?;
    let v = verdicts(&reports);
    let costs = measure_cost(&scheds)?;
    if args.json {
        let out = serde_json::json!({
            "scenario": "1k-highw: one flow with 1/4 of a 10 Gb/s link among 1000, transmit queue 1 packet",
            "guarantees": reports,
            "verdict": v,
            "cost": costs,
        });
        return super::json::print_line(&out);
    }
    crate::outln!("fairway demo: one flow with 1/4 of a 10 Gb/s link among 1000 (flow set 1k-highw, QFQ+ paper §8.3).");
    crate::outln!("How late can its packets be compared with a perfectly fair link?\n");
    print_table(&reports)?;
    crate::outln!();
    crate::outln!(
        "Columns (times in packet service times of the heavy flow: 1500 B at 2.5 Gb/s = 4.8 us):"
    );
    crate::outln!(
        "  T-WFI       worst lateness of the heavy flow versus its guaranteed share of the link"
    );
    crate::outln!(
        "              (time worst-case fair index, QFQ+ paper Eq. 1); T-WFI us: the same in us."
    );
    crate::outln!(
        "  B-WFI       the same lateness in bytes of service owed (bit worst-case fair index)."
    );
    crate::outln!(
        "  bound       the paper's analytical worst case for that index; '-': no guarantee."
    );
    crate::outln!(
        "  vs GPS      worst lateness versus the ideal fluid system (GPS). Negative: every packet"
    );
    crate::outln!(
        "              left earlier than GPS would finish it, which happens because a packet"
    );
    crate::outln!(
        "              scheduler sends whole packets at full link rate while GPS serves all"
    );
    crate::outln!("              backlogged flows at once, each slower.");
    crate::outln!(
        "  worst flow  the largest T-WFI of any flow, each in its own packet service times."
    );
    crate::outln!(
        "  violations  flows whose T-WFI or B-WFI exceeded their bound (0 is the guarantee)."
    );
    crate::outln!("{}", verdict_line(&reports, &v));
    crate::outln!();
    crate::outln!(
        "Cost per packet, same flow set ({} enqueue+dequeue pairs x {} runs, median; net = minus the bare FIFO list):",
        COST_PAIRS, COST_REPEAT
    );
    print_cost(&costs)?;
    crate::outln!("\nMore: `fairway guarantees --help`, `fairway bench --help`, `fairway scheds`.");
    Ok(())
}
