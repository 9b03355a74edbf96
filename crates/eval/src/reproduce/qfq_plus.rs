//! Seed 000 (QFQ+ / SCHED+) reproduced:
//! * §8.3, the service-guarantee table: T-WFI of the highest-weight flow on
//!   `1k-highw` (one flow of weight 1000 among 1000 of weight 1), in its
//!   packet service times, for DRR, QFQ, QFQ+ and WF2Q+
//!   ([`crate::guarantees::run_guarantees`]). Claims: no flow of QFQ, QFQ+
//!   or WF2Q+ exceeds its analytical bound, and DRR's T-WFI is at least ten
//!   times QFQ's (the paper: 249.0 against 1.244); a T-WFI below one packet
//!   service time counts as one there, as our QFQ often measures 0.
//! * §8.2, the cost claim QFQ+ ≤ QFQ per enqueue/dequeue pair
//!   ([`crate::cost::measure`], smooth arrivals, `1k-w1`, fastest repeat).

use super::{timed, Claim, Figure, Paper, Section, Ticker};
use crate::cost::sweep::warmup_for;
use crate::cost::{measure, CostPattern, CostSetup, MeasureOptions, PerfCounters, Subject};
use crate::guarantees::{run_guarantees, GuaranteeOptions};
use crate::workload::FlowSet;
use fairway_core::SchedSpec;

/// Progress steps of [`run`].
pub const STEPS: u64 = 5;

/// The paper's T-WFI on `1k-highw` (§8.3), in packet service times.
const PAPER_TWFI: [(&str, f64); 3] = [("drr", 249.0), ("qfq", 1.244), ("qfq+", 2.744)];

/// Runs both experiments.
pub fn run(quick: bool, t: &mut Ticker) -> Result<Vec<Section>, String> {
    Ok(vec![
        timed(|| guarantees(quick, t))?,
        timed(|| cost(quick, t))?,
    ])
}

fn guarantees(quick: bool, t: &mut Ticker) -> Result<Section, String> {
    let flows = FlowSet::parse("1k-highw").map_err(|e| e.to_string())?;
    let mut o = GuaranteeOptions::paper(flows);
    if quick {
        o.packets = 20_000;
    }
    let packets = o.packets;
    let mut figures = Vec::new();
    let mut claims = Vec::new();
    let mut twfi = std::collections::HashMap::new();
    for name in ["drr", "qfq", "qfq+", "wf2q+"] {
        t.step(&format!("seed 000 §8.3 guarantees: {name}"));
        let spec = SchedSpec::parse(name).map_err(|e| e.to_string())?;
        let (r, _) = run_guarantees(&spec, &o)?;
        let paper = PAPER_TWFI.iter().find(|p| p.0 == name).map(|p| p.1);
        let what = format!("T-WFI of the weight-1000 flow, {name}");
        figures.push(match paper {
            Some(p) => Figure::vs(what, "packet service times", p, r.twfi_max_weight_flow),
            None => Figure::vs_text(
                what,
                "packet service times",
                "not given",
                r.twfi_max_weight_flow,
            ),
        });
        if let Some(b) = r.twfi_bound_max_weight_flow {
            figures.push(Figure::vs_text(
                format!("T-WFI bound, {name}"),
                "packet service times",
                "Eqs. (2)/(6)",
                b,
            ));
            claims.push(Claim::new(
                &format!("000/guarantees/{name}-within-bounds"),
                format!(
                    "{name}: every flow within its T-WFI and B-WFI bounds ({} violations; weight-1000 flow {:.3} <= {:.3})",
                    r.bound_violations, r.twfi_max_weight_flow, b
                ),
                r.bound_violations == 0 && r.twfi_max_weight_flow <= b * (1.0 + 1e-9),
            ));
        }
        twfi.insert(name, r.twfi_max_weight_flow);
    }
    let (drr, qfq) = (twfi["drr"], twfi["qfq"]);
    claims.push(Claim::new(
        "000/guarantees/drr-much-worse-than-qfq",
        format!(
            "DRR's T-WFI {drr:.3} >= 10 x max(QFQ's {qfq:.3}, 1) on 1k-highw (paper: 249.0 against 1.244)"
        ),
        drr >= 10.0 * qfq.max(1.0),
    ));
    Ok(Section {
        paper: Paper::QfqPlus,
        title: format!("§8.3 service guarantees, 1k-highw, transmit queue 1 packet, smooth arrivals, {packets} packets"),
        command: format!(
            "fairway guarantees --sched drr,qfq,qfq+,wf2q+ --flows 1k-highw --queue 1 --packets {packets}"
        ),
        figures,
        claims,
        charts: Vec::new(),
        seconds: 0.0,
    })
}

fn cost(quick: bool, t: &mut Ticker) -> Result<Section, String> {
    t.step("seed 000 §8.2 cost: qfq, qfq+");
    let flows = FlowSet::parse("1k-w1").map_err(|e| e.to_string())?;
    let (pairs, repeat) = if quick {
        (1_000_000, 5)
    } else {
        (4_000_000, 7)
    };
    let pattern = CostPattern::Smooth;
    let n = flows.len() as u32;
    let setup = CostSetup::new(flows, pattern, warmup_for(pattern, n, pairs));
    let subjects: Vec<Subject> = ["qfq", "qfq+"]
        .iter()
        .map(|n| SchedSpec::parse(n).map(Subject::Sched))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let opts = MeasureOptions {
        pairs,
        repeat,
        counters: false,
    };
    let mut counters: Result<PerfCounters, String> = Err("not used".into());
    let reports = measure(&subjects, &setup, &opts, &mut counters, &mut |_| {})?;
    let ns = |n: &str| {
        reports
            .iter()
            .find(|r| r.sched == n)
            .map(|r| r.ns_per_pair_min)
            .ok_or_else(|| format!("no cost report for {n}"))
    };
    let (q, qp) = (ns("qfq")?, ns("qfq+")?);
    let ratio = qp / q;
    Ok(Section {
        paper: Paper::QfqPlus,
        title: format!(
            "§8.2 cost per enqueue/dequeue pair, 1k-w1, smooth arrivals, {pairs} pairs, fastest of {repeat}"
        ),
        command: format!(
            "fairway bench --sched qfq,qfq+ --flows 1k-w1 --pattern smooth --pairs {pairs} --repeat {repeat}"
        ),
        figures: vec![
            Figure::vs_text("QFQ", "ns per pair", "machine-specific", q),
            Figure::vs_text("QFQ+ (M = 8)", "ns per pair", "machine-specific", qp),
            Figure::vs_text("QFQ+ / QFQ", "ratio", "0.3-0.9", ratio),
        ],
        claims: vec![Claim::timing(
            "000/cost/qfq-plus-not-costlier",
            format!("QFQ+ costs no more than QFQ: {qp:.1} <= {q:.1} ns per pair (ratio {ratio:.2}, paper 0.3-0.9)"),
            qp <= q,
        )],
        charts: Vec::new(),
        seconds: 0.0,
    })
}
