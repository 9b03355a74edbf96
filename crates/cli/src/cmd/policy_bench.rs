//! `fairway policy bench`: the Eiffel paper's §5.1 benchmarks of the policy model
//! (pFabric cFFS vs binary heap, pacing 20k flows through one shaper,
//! hClock, approximate queue in pFabric), CSV + SVG from one run. The logic
//! lives in `fairway_eval::policy::bench`.

use super::error::CliError;
use super::flag::FlagError;
use super::outputs::{OutputError, OutputProblem};
use clap::Args;
use fairway_eval::cost::chart::{write_svg, ChartError, ChartSpec, Series};
use fairway_eval::policy::bench::{run_all, BenchConfig, BenchReport};
use std::path::Path;

/// Arguments of `fairway policy bench`.
#[derive(Args)]
#[command(
    after_help = "Examples:\n  fairway policy bench --out results/policy-bench\n  \
fairway policy bench --quick --json\n  fairway policy bench --pfabric-flows 1000,10000,100000 --target-mpps 2"
)]
pub struct BenchArgs {
    /// A few-second run (small sweeps), as CI runs it. Its sizes are too
    /// small to test the targets: the ratios print beside them as "not
    /// tested at --quick sizes".
    #[arg(long)]
    pub quick: bool,
    /// Directory for policy-bench.csv and the SVG charts, e.g. results/pb
    /// [default: ./fairway-results/policy-bench, or
    /// $FAIRWAY_RESULTS/policy-bench].
    #[arg(long)]
    pub out: Option<String>,
    /// pFabric flow counts, comma separated, e.g. 1000,16000,256000.
    #[arg(long)]
    pub pfabric_flows: Option<String>,
    /// Packet rate (Mpps) at which flows sustained are read, e.g. 1.0.
    #[arg(long)]
    pub target_mpps: Option<f64>,
    /// Paced flows, e.g. 20000.
    #[arg(long)]
    pub pacing_flows: Option<u32>,
    /// Timed batches per point, best kept, e.g. 5.
    #[arg(long)]
    pub batches: Option<u32>,
    /// Only these experiments, comma separated: pfabric, pacing, hclock,
    /// fct, e.g. `pfabric,pacing`.
    #[arg(long)]
    pub only: Option<String>,
    /// Seed, e.g. 3.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// JSON (points and ratios) on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// Runs `fairway policy bench`.
pub fn run(a: BenchArgs) -> Result<(), CliError> {
    let mut cfg = if a.quick {
        BenchConfig::quick()
    } else {
        BenchConfig::full()
    };
    if let Some(s) = &a.pfabric_flows {
        cfg.pfabric_flows = s
            .split(',')
            .map(|x| {
                x.trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|&n| (1..=4_000_000).contains(&n))
                    .ok_or_else(|| FlagError::EntryNotIn {
                        flag: "--pfabric-flows",
                        text: x.to_string(),
                        range: "1..=4000000",
                    })
            })
            .collect::<Result<_, _>>()?;
    }
    if let Some(t) = a.target_mpps {
        if !(t > 0.0 && t.is_finite()) {
            return Err(FlagError::ValueMust {
                flag: "--target-mpps",
                value: t.to_string(),
                be: "> 0",
            }
            .into());
        }
        cfg.target_mpps = t;
    }
    if let Some(n) = a.pacing_flows {
        if !(1..=1_000_000).contains(&n) {
            return Err(FlagError::ValueMust {
                flag: "--pacing-flows",
                value: n.to_string(),
                be: "1..=1000000",
            }
            .into());
        }
        cfg.pacing_flows = n;
    }
    if let Some(b) = a.batches {
        if b == 0 {
            return Err(FlagError::Must {
                flag: "--batches",
                be: ">= 1",
            }
            .into());
        }
        cfg.batches = b;
    }
    cfg.seed = a.seed;
    if let Some(o) = &a.only {
        for e in o.split(',') {
            if !["pfabric", "pacing", "hclock", "fct"].contains(&e) {
                return Err(FlagError::UnknownEntry {
                    flag: "--only",
                    what: Some("experiment"),
                    text: e.to_string(),
                    choices: "pfabric, pacing, hclock, fct",
                }
                .into());
            }
            cfg.only.push(e.to_string());
        }
    }
    let bar = super::progress::bar(None, "{spinner} [{elapsed_precise}] {msg}", a.json);
    let out_dir = a
        .out
        .as_ref()
        .map_or_else(|| super::outputs::results_dir("policy-bench"), Into::into);
    super::outputs::check_out_dir("--out", &out_dir)?;
    let rep = run_all(&cfg, &mut |m| {
        bar.set_message(m.to_string());
        bar.tick();
    });
    bar.finish_and_clear();
    // The flags were checked above; a preset outside a range (a bug) is
    // reported under the field's flag, or its name when it has none.
    let rep = rep.map_err(|e| FlagError::ValueOutside {
        flag: match e.field {
            "pfabric_flows" => "--pfabric-flows",
            "pacing_flows" => "--pacing-flows",
            "target_mpps" => "--target-mpps",
            "batches" => "--batches",
            field => field,
        },
        value: e.value,
        range: e.range.to_string(),
    })?;
    let out = out_dir.as_path();
    let out_error = |e| OutputError::new("--out", out, OutputProblem::Io(e));
    std::fs::create_dir_all(out).map_err(out_error)?;
    std::fs::write(out.join("policy-bench.csv"), rep.csv()).map_err(out_error)?;
    let quick_fct_flows = a.quick.then_some(cfg.fct_flows);
    charts(&rep, out, quick_fct_flows)?;
    if a.json {
        super::json::print_pretty(&rep)?;
        return Ok(());
    }
    print(&rep, a.quick)?;
    if let Some(flows) = quick_fct_flows {
        crate::outln!("  {}", quick_fct_note(flows));
    }
    crate::outln!(
        "\nwrote {}/policy-bench.csv and policy-{{pfabric,pacing,hclock,fct}}.svg",
        out.display()
    );
    Ok(())
}

/// The table and the ratios; with `quick`, each target is marked as not
/// tested, since quick sizes cannot meet or miss it meaningfully.
fn print(rep: &BenchReport, quick: bool) -> Result<(), crate::cmd::stdout::StdoutError> {
    crate::outln!(
        "{:<12} {:<14} {:>10} {:<20} {:>12}",
        "experiment",
        "variant",
        "x",
        "metric",
        "value"
    );
    for p in &rep.points {
        crate::outln!(
            "{:<12} {:<14} {:>10} {:<20} {:>12.4}",
            p.experiment,
            p.variant,
            p.x,
            p.metric,
            p.value
        );
    }
    crate::outln!("\nratios (same run):");
    for r in &rep.ratios {
        crate::outln!(
            "{}",
            ratio_line(r.value, &r.what, r.target.as_deref(), quick)
        );
    }
    Ok(())
}

/// One ratio: its value, what it compares and its target, which quick sizes
/// do not test.
fn ratio_line(value: f64, what: &str, target: Option<&str>, quick: bool) -> String {
    let untested = if quick {
        ": not tested at --quick sizes"
    } else {
        ""
    };
    let target = target.map_or(String::new(), |t| format!("   [target {t}{untested}]"));
    format!("  {value:>8.2}  {what}{target}")
}

/// Why a quick run's FCT figures say less than a full run's: each load
/// point simulates few flows, so few of them are large.
fn quick_fct_note(flows: u32) -> String {
    format!(
        "--quick: each FCT point simulates {flows} flows (a full run: {}); about 5 % are above 10 MB, so the large-flow figures rest on the counts each FCT line names",
        fairway_eval::policy::bench::BenchConfig::full().fct_flows
    )
}

/// The charts; a quick run's FCT flows per point go into the FCT chart's
/// title.
fn charts(rep: &BenchReport, out: &Path, quick_fct_flows: Option<u32>) -> Result<(), ChartError> {
    // Every (experiment, metric) given is plotted; with more than one, the
    // legend names it. Each line its own colour and marker; lines after
    // the first pair dashed.
    let draw = |file: &str, title: &str, x: &str, y: &str, log_x: bool, lines: &[(&str, &str)]| {
        let mut series: Vec<Series> = Vec::new();
        for (mi, (experiment, m)) in lines.iter().enumerate() {
            for (name, points) in rep.series(experiment, m) {
                let name = match lines.len() {
                    1 => name,
                    _ if lines.iter().all(|l| l.0 == *experiment) => format!("{name} {m}"),
                    _ => format!("{name} ({experiment})"),
                };
                let color = series.len();
                series.push(Series {
                    name,
                    points,
                    dashed: mi > 0,
                    color,
                });
            }
        }
        if series.is_empty() {
            return Ok(());
        }
        write_svg(
            &out.join(file),
            &ChartSpec {
                title: title.into(),
                x_label: x.into(),
                y_label: y.into(),
                log_x,
                log_y: false,
            },
            &series,
        )
    };
    draw(
        "policy-pfabric.svg",
        "pFabric (Eiffel paper Fig. 11)",
        "flows",
        "Mpps",
        true,
        &[("pfabric", "mpps")],
    )?;
    draw(
        "policy-hclock.svg",
        "hClock",
        "children",
        "Mpps",
        true,
        &[("hclock", "mpps")],
    )?;
    draw(
        "policy-pacing.svg",
        "Pacing: shaper alone, and the whole pacing tree (dashed)",
        "flows",
        "ns per packet",
        false,
        &[
            ("pacing", "ns_per_packet"),
            ("pacing-tree", "ns_per_packet"),
        ],
    )?;
    let fct_title = match quick_fct_flows {
        Some(flows) => format!(
            "pFabric FCT, exact vs approx vs one-bucket (Eiffel paper Fig. 15); --quick: {flows} flows a point"
        ),
        None => "pFabric FCT, exact vs approximate vs one-bucket queue (Eiffel paper Fig. 15)".into(),
    };
    draw(
        "policy-fct.svg",
        &fct_title,
        "load %",
        "normalised FCT",
        false,
        &[
            ("fct", "small_avg_norm"),
            ("fct", "small_p99_norm"),
            ("fct", "large_avg_norm"),
        ],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{quick_fct_note, ratio_line};

    #[test]
    fn quick_runs_say_their_targets_are_not_tested() {
        let full = ratio_line(3.5, "pfabric approx / exact", Some(">= 5"), false);
        assert_eq!(full, "      3.50  pfabric approx / exact   [target >= 5]");
        let quick = ratio_line(3.5, "pfabric approx / exact", Some(">= 5"), true);
        assert!(
            quick.ends_with("[target >= 5: not tested at --quick sizes]"),
            "{quick}"
        );
        assert!(!ratio_line(1.0, "x", None, true).contains("target"));
    }

    #[test]
    fn quick_runs_say_why_their_fct_figures_say_less() {
        let n = quick_fct_note(1000);
        assert!(
            n.starts_with("--quick: each FCT point simulates 1000 flows (a full run: 20000)"),
            "{n}"
        );
    }
}
