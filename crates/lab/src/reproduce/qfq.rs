//! The QFQ paper reproduced:
//! * §7, Table 4 and Fig. 10: cost per enqueue/dequeue pair against the
//!   number of flows (weight 1, "large" pattern) for QFQ, S-KPS and WF2Q+,
//!   measured in one interleaved run ([`fairway_eval::cost::measure_many`]),
//!   fastest repeat, harness included as in the paper's table. Claims: QFQ
//!   is flat in N (at most 2x from 64 flows to the largest set; paper
//!   155 → 234 ns from 64 to 32768 flows), WF2Q+ grows more than QFQ
//!   (O(log N); paper 530 → 1880 ns), S-KPS costs more than QFQ (paper:
//!   2–3.5x; the ratio is reported beside it).
//! * §6, Fig. 8 and Tables 2–3: the network simulation
//!   ([`fairway_eval::netsim::fig8`]), end-to-end delays of f0 and f1 beside the
//!   paper's, and its orderings as [`fairway_eval::netsim::fig8::claims`] checks
//!   them.

use super::error::ReproduceError;
use super::paper::Paper;
use super::progress::{timed, Ticker};
use super::report::{ChartFile, ChartLine, Claim, Figure, Section};
use fairway_core::SchedSpec;
use fairway_eval::cost::sweep::warmup_for;
use fairway_eval::cost::{
    measure_many, CostPattern, CostSetup, MeasureOptions, PerfCounters, Subject,
};
use fairway_eval::netsim::fig8::{claims, run_fig8, Fig8Params};
use fairway_eval::netsim::SchedChoice;
use fairway_eval::workload::FlowSet;

/// Progress steps of [`run`].
pub const STEPS: u64 = 5;

/// The QFQ paper's Table 4, "large" row: (flows, QFQ, S-KPS, WF2Q+) in ns per pair.
const PAPER_TABLE4: [(u32, f64, f64, f64); 4] = [
    (64, 155.0, 532.0, 530.0),
    (512, 172.0, 550.0, 730.0),
    (4096, 195.0, 570.0, 1090.0),
    (32768, 234.0, 603.0, 1880.0),
];

/// Runs both experiments.
pub fn run(quick: bool, t: &mut Ticker) -> Result<Vec<Section>, ReproduceError> {
    Ok(vec![timed(|| cost(quick, t))?, timed(|| fig8(quick, t))?])
}

/// The schedulers of Table 4, in its column order.
const TABLE4_SCHEDS: [&str; 3] = ["qfq", "s-kps", "wf2q+"];

/// What the cost experiment runs: the flow counts, pairs per repeat and
/// repeats.
struct CostRun {
    counts: &'static [u32],
    pairs: u64,
    repeat: usize,
}

impl CostRun {
    fn new(quick: bool) -> Self {
        if quick {
            Self {
                counts: &[64, 4096],
                pairs: 1_000_000,
                repeat: 5,
            }
        } else {
            Self {
                counts: &[64, 512, 4096, 32768],
                pairs: 4_000_000,
                repeat: 7,
            }
        }
    }
}

fn cost(quick: bool, t: &mut Ticker) -> Result<Section, ReproduceError> {
    t.step("QFQ paper Table 4: cost against flows");
    let run = CostRun::new(quick);
    let ns = measure_table4(&run)?;
    let mut figures = Vec::new();
    let mut claims = Vec::new();
    per_flow_count(run.counts, &ns, &mut figures, &mut claims);
    growth(run.counts, &ns, &mut figures, &mut claims);
    let (pairs, repeat) = (run.pairs, run.repeat);
    let list: Vec<String> = run.counts.iter().map(|n| format!("1x{n}")).collect();
    Ok(Section {
        paper: Paper::Qfq,
        title: format!(
            "Table 4 / Fig. 10: cost per pair against flows, weight 1, large pattern, {pairs} pairs, fastest of {repeat}"
        ),
        command: format!(
            "fairway bench --sched qfq,s-kps,wf2q+ --flows {} --pattern large --pairs {pairs} --repeat {repeat}",
            list.join(",")
        ),
        figures,
        claims,
        charts: vec![fig10_chart(run.counts, &ns)],
        seconds: 0.0,
    })
}

/// ns per pair, fastest repeat: `ns[count index][scheduler index]` in
/// [`TABLE4_SCHEDS`] order, measured in one interleaved run.
fn measure_table4(run: &CostRun) -> Result<Vec<[f64; 3]>, ReproduceError> {
    let pattern = CostPattern::Large;
    let setups = run
        .counts
        .iter()
        .map(|&n| {
            let flows = FlowSet::parse(&format!("1x{n}"))?;
            Ok(CostSetup::new(
                flows,
                pattern,
                warmup_for(pattern, n, run.pairs),
            ))
        })
        .collect::<Result<Vec<_>, ReproduceError>>()?;
    let subjects: Vec<Subject> = TABLE4_SCHEDS
        .iter()
        .map(|n| SchedSpec::parse(n).map(Subject::Sched))
        .collect::<Result<_, _>>()
        .map_err(ReproduceError::Spec)?;
    let opts = MeasureOptions {
        pairs: run.pairs,
        repeat: run.repeat,
        counters: false,
    };
    // No hardware counters: the reproduction reports time per pair only.
    let mut counters: Result<PerfCounters, &str> = Err("not used");
    let all = measure_many(&subjects, &setups, &opts, &mut counters, &mut |_| {})?;
    all.iter()
        .map(|reports| {
            let mut row = [0.0f64; 3];
            for (ni, name) in TABLE4_SCHEDS.iter().enumerate() {
                let r = reports
                    .iter()
                    .find(|r| r.sched == *name)
                    .ok_or_else(|| ReproduceError::NoCostReport(name.to_string()))?;
                row[ni] = r.ns_per_pair_min;
            }
            Ok(row)
        })
        .collect()
}

/// Each flow count's costs beside the paper's, and the claim that S-KPS
/// costs more than QFQ.
fn per_flow_count(
    counts: &[u32],
    ns: &[[f64; 3]],
    figures: &mut Vec<Figure>,
    claims: &mut Vec<Claim>,
) {
    for (&n, row) in counts.iter().zip(ns) {
        let paper = PAPER_TABLE4.iter().find(|p| p.0 == n);
        for (ni, name) in TABLE4_SCHEDS.iter().enumerate() {
            let p = paper.map(|p| [p.1, p.2, p.3][ni]);
            let what = format!("{name}, {n} flows");
            figures.push(match p {
                Some(p) => Figure::vs(what, "ns per pair", p, row[ni]),
                None => Figure::vs_text(what, "ns per pair", "-", row[ni]),
            });
        }
        let ratio = row[1] / row[0];
        let paper_ratio = paper.map(|p| p.2 / p.1);
        figures.push(match paper_ratio {
            Some(p) => Figure::vs(format!("S-KPS / QFQ, {n} flows"), "ratio", p, ratio),
            None => Figure::vs_text(format!("S-KPS / QFQ, {n} flows"), "ratio", "2-3.5", ratio),
        });
        claims.push(Claim::timing(
            &format!("qfq/table4/s-kps-costlier-{n}"),
            format!(
                "{n} flows: S-KPS costs more than QFQ ({:.1} > {:.1} ns, ratio {ratio:.2}; paper 2-3.5)",
                row[1], row[0]
            ),
            ratio > 1.0,
        ));
    }
}

/// Each scheduler's growth from the fewest flows to the most, beside the
/// paper's, and the claims that QFQ is flat and WF2Q+ grows more.
fn growth(counts: &[u32], ns: &[[f64; 3]], figures: &mut Vec<Figure>, claims: &mut Vec<Claim>) {
    let (first, last) = (0, counts.len() - 1);
    let (n0, n1) = (counts[first], counts[last]);
    let growth = |ni: usize| ns[last][ni] / ns[first][ni];
    let paper_growth = |col: usize| {
        let a = PAPER_TABLE4.iter().find(|p| p.0 == n0);
        let b = PAPER_TABLE4.iter().find(|p| p.0 == n1);
        match (a, b) {
            (Some(a), Some(b)) => [b.1 / a.1, b.2 / a.2, b.3 / a.3][col],
            _ => f64::NAN,
        }
    };
    for (ni, name) in TABLE4_SCHEDS.iter().enumerate() {
        figures.push(Figure::vs(
            format!("{name}: cost at {n1} flows / at {n0} flows"),
            "ratio",
            paper_growth(ni),
            growth(ni),
        ));
    }
    claims.push(Claim::timing(
        "qfq/table4/qfq-flat",
        format!(
            "QFQ is flat in N: {n1} flows cost {:.2}x {n0} flows (at most 2; paper {:.2})",
            growth(0),
            paper_growth(0)
        ),
        growth(0) <= 2.0,
    ));
    claims.push(Claim::timing(
        "qfq/table4/wf2q-plus-grows",
        format!(
            "WF2Q+ grows with N more than QFQ: {:.2}x against {:.2}x from {n0} to {n1} flows (paper {:.2}x against {:.2}x)",
            growth(2),
            growth(0),
            paper_growth(2),
            paper_growth(0)
        ),
        growth(2) > growth(0),
    ));
}

/// Fig. 10: our cost against flows beside the paper's Table 4.
fn fig10_chart(counts: &[u32], ns: &[[f64; 3]]) -> ChartFile {
    let mut lines = Vec::new();
    for (ni, name) in TABLE4_SCHEDS.iter().enumerate() {
        lines.push(ChartLine {
            name: format!("{name} (ours)"),
            points: counts
                .iter()
                .zip(ns)
                .map(|(&n, row)| (f64::from(n), row[ni]))
                .collect(),
            dashed: false,
            color: ni,
        });
        lines.push(ChartLine {
            name: format!("{name} (paper, Table 4)"),
            points: PAPER_TABLE4
                .iter()
                .map(|p| (f64::from(p.0), [p.1, p.2, p.3][ni]))
                .collect(),
            dashed: true,
            color: ni,
        });
    }
    ChartFile {
        file: "qfq-fig10-cost-vs-flows.svg".into(),
        title: "QFQ paper Fig. 10: ns per enqueue/dequeue pair, large pattern".into(),
        x_label: "flows".into(),
        y_label: "ns per pair".into(),
        log_x: true,
        log_y: true,
        lines,
    }
}

fn fig8(quick: bool, t: &mut Ticker) -> Result<Section, ReproduceError> {
    let p = if quick {
        Fig8Params::quick()
    } else {
        Fig8Params::paper()
    };
    let specs = ["drr:quantum=250", "qfq", "s-kps", "wf2q+"];
    let mut rows = Vec::new();
    for s in specs {
        t.step(&format!("QFQ paper Fig. 8 network simulation: {s}"));
        let c = SchedChoice::parse(s)?;
        rows.extend(run_fig8(&[c], &p, &mut |_, _| {})?);
    }
    let mut figures = Vec::new();
    for r in &rows {
        let Some(pr) = r.paper else { continue };
        let name = pr.sched;
        for (flow, ours, paper) in [("f0", &r.f0, pr.f0), ("f1", &r.f1, pr.f1)] {
            figures.push(Figure::vs(
                format!("{name} {flow} average delay (Table 2)"),
                "ms",
                paper.0,
                ours.mean_delay_ms,
            ));
            figures.push(Figure::vs(
                format!("{name} {flow} maximum delay (Table 3)"),
                "ms",
                paper.2,
                ours.max_delay_ms,
            ));
        }
    }
    let claims = claims(&rows)
        .into_iter()
        .enumerate()
        .map(|(i, c)| Claim::new(&format!("qfq/fig8/{i}"), c.claim, c.holds))
        .collect();
    Ok(Section {
        paper: Paper::Qfq,
        title: format!(
            "§6 Fig. 8, Tables 2-3: end-to-end delays, {} s simulated, first {} s discarded, {} seed(s)",
            p.duration_s, p.warmup_s, p.seeds
        ),
        command: format!(
            "fairway netsim{}",
            if quick { " --quick" } else { "" }
        ),
        figures,
        claims,
        charts: Vec::new(),
        seconds: 0.0,
    })
}
