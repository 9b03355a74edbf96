//! `fairway reproduce`: runs the experiments behind the seeds' tables and
//! figures that fairway reproduces, writes one report (`report.md` and
//! `report.json`) with the paper's number, ours and the ratio, and checks
//! each paper's claims; exits non-zero if one fails.

use clap::Args;
use fairway_eval::reproduce::{run as run_all, to_markdown, Paper, Report};
use std::path::PathBuf;

/// Arguments of `fairway reproduce`.
#[derive(Args)]
#[command(
    after_help = "Examples:\n  fairway reproduce\n  fairway reproduce all --quick --out /tmp/repro\n  \
                  fairway reproduce qfq --json"
)]
pub struct ReproduceArgs {
    /// Which paper: `all`, `qfq-plus` (seed 000), `qfq` (seed 003) or
    /// `eiffel` (seed 002), e.g. `fairway reproduce qfq`.
    #[arg(default_value = "all")]
    pub paper: String,
    /// Reduced experiments (fewer packets, pairs, simulated seconds), the
    /// same claims checked; what CI runs. Example: `--quick`.
    #[arg(long)]
    pub quick: bool,
    /// Directory for report.md and report.json (created if missing),
    /// e.g. `--out /tmp/repro`.
    #[arg(long, default_value = "target/fairway-reproduce")]
    pub out: PathBuf,
    /// The report as JSON on stdout instead of the pass/fail list.
    #[arg(long)]
    pub json: bool,
}

/// Runs the experiments, writes the report, prints the claims.
pub fn run(args: ReproduceArgs) -> Result<(), String> {
    let papers = Paper::parse_list(&args.paper)?;
    std::fs::create_dir_all(&args.out).map_err(|e| format!("--out {}: {e}", args.out.display()))?;
    let bar = super::progress::bar(Some(1), super::progress::COUNTED, args.json);
    let report = run_all(&papers, args.quick, &mut |p| {
        bar.set_length(p.total);
        bar.set_position(p.done);
        bar.set_message(p.message.to_string());
    });
    bar.finish_and_clear();
    let report = report?;
    write(&args.out, &report)?;
    if args.json {
        super::json::print_pretty(&report)?;
    } else {
        for c in report.claims() {
            println!(
                "{} {}: {}",
                if c.holds { "pass" } else { "FAIL" },
                c.id,
                c.claim
            );
        }
        println!(
            "{} passed, {} failed in {:.1} s on {}; report in {}",
            report.passed,
            report.failed,
            report.seconds,
            report.machine,
            args.out.join("report.md").display()
        );
    }
    verdict(&report, &args.out)
}

/// `Err` (hence a non-zero exit) when any claim fails.
fn verdict(report: &Report, out: &std::path::Path) -> Result<(), String> {
    let failed = report.claims().filter(|c| !c.holds).count();
    if failed > 0 {
        return Err(format!(
            "{failed} of {} claims do not hold (see {})",
            report.claims().count(),
            out.join("report.md").display()
        ));
    }
    Ok(())
}

fn write(dir: &std::path::Path, report: &Report) -> Result<(), String> {
    let put = |name: &str, text: String| {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| format!("writing {}: {e}", p.display()))
    };
    put("report.md", to_markdown(report))?;
    put("report.json", super::json::pretty(report)?)
}

#[cfg(test)]
mod tests {
    use super::verdict;
    use fairway_eval::reproduce::{Claim, Paper, Report, Section};
    use std::path::Path;

    fn report(holds: &[bool]) -> Report {
        Report {
            machine: "m".into(),
            quick: true,
            debug_build: true,
            seconds: 0.0,
            passed: 0,
            failed: 0,
            sections: vec![Section {
                paper: Paper::Qfq,
                title: "t".into(),
                command: "c".into(),
                figures: vec![],
                claims: holds
                    .iter()
                    .enumerate()
                    .map(|(i, &h)| Claim::new(&i.to_string(), "c", h))
                    .collect(),
                seconds: 0.0,
            }],
        }
    }

    #[test]
    fn one_failed_claim_fails_the_command() {
        assert!(verdict(&report(&[true, true]), Path::new("d")).is_ok());
        let e = verdict(&report(&[true, false]), Path::new("d")).unwrap_err();
        assert!(e.starts_with("1 of 2 claims do not hold"), "{e}");
    }
}
