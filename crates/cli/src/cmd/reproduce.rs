//! `fairway reproduce`: runs the experiments behind the papers' tables and
//! figures that fairway reproduces, writes one report (`report.md` and
//! `report.json`, and an SVG chart beside them for each experiment the
//! paper shows as a figure) with the paper's number, ours and the ratio,
//! and checks each paper's claims; exits non-zero if one fails (a skipped
//! claim is listed, not failed).

use super::error::CliError;
use super::outputs::{OutputError, OutputProblem};
use clap::Args;
use fairway_lab::reproduce::{
    run as run_all, to_markdown, write_charts, Paper, Report, RunOptions,
};
use std::path::PathBuf;

/// Arguments of `fairway reproduce`.
#[derive(Args)]
#[command(
    after_help = "Examples:\n  fairway reproduce\n  fairway reproduce all --quick --out /tmp/repro\n  \
                  fairway reproduce qfq --json\n  fairway reproduce bfq --quick\n  fairway reproduce pspat --quick --no-net"
)]
pub struct ReproduceArgs {
    /// Which paper: `all`, `qfq-plus` (the QFQ+ paper), `qfq` (the QFQ paper),
    /// `eiffel` (the Eiffel paper), `bfq` (the BFQ thesis' disk experiments)
    /// or `pspat` (the PSPAT paper, real UDP packets; needs root and
    /// iproute2, else exit status 3 unless `--no-net`), e.g.
    /// `fairway reproduce qfq`.
    #[arg(default_value = "all")]
    pub paper: String,
    /// Reduced experiments (fewer packets, pairs, simulated seconds), the
    /// same claims checked; what CI runs. Example: `--quick`.
    #[arg(long)]
    pub quick: bool,
    /// Skip the experiments that need root and network namespaces (the
    /// PSPAT paper's real packets); their claims are listed as skipped. Example:
    /// `--no-net`.
    #[arg(long)]
    pub no_net: bool,
    /// Directory for report.md, report.json and the SVG charts (created if
    /// missing); default fairway-results/reproduce (under $FAIRWAY_RESULTS
    /// if set), e.g. `--out /tmp/repro`.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The report as JSON on stdout instead of the pass/fail list.
    #[arg(long)]
    pub json: bool,
}

/// Runs the experiments, writes the report, prints the claims.
pub fn run(args: ReproduceArgs) -> Result<(), CliError> {
    let papers = Paper::parse_list(&args.paper)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| super::outputs::results_dir("reproduce"));
    std::fs::create_dir_all(&out)
        .map_err(|e| OutputError::new("--out", &out, OutputProblem::Io(e)))?;
    let bar = super::progress::bar(Some(1), super::progress::COUNTED, args.json);
    let opts = RunOptions {
        quick: args.quick,
        no_net: args.no_net,
    };
    // The real packets were asked for (no `--no-net`) but cannot run here.
    let cannot_run = if papers.contains(&Paper::Pspat) && !args.no_net {
        fairway_lab::reproduce::pspat::unavailable(&opts)
    } else {
        None
    };
    let report = run_all(&papers, opts, &mut |p| {
        bar.set_length(p.total);
        bar.set_position(p.done);
        bar.set_message(p.message.to_string());
    });
    bar.finish_and_clear();
    let report = report?;
    write(&out, &report)?;
    if args.json {
        super::json::print_pretty(&report)?;
    } else {
        for c in report.claims() {
            match &c.skipped {
                Some(why) => crate::outln!("skip {}: {} ({why})", c.id, c.claim),
                None => crate::outln!(
                    "{} {}: {}",
                    if c.holds { "pass" } else { "FAIL" },
                    c.id,
                    c.claim
                ),
            }
        }
        crate::outln!(
            "{} passed, {} failed, {} skipped in {:.1} s on {}; report in {}",
            report.passed,
            report.failed,
            report.skipped,
            report.seconds,
            report.machine,
            out.join("report.md").display()
        );
    }
    verdict(&report, &out, cannot_run)
}

/// `Err` (hence a non-zero exit) when any claim fails (status 1), or else
/// when the real-packet experiments were asked for and could not run here
/// (status 3, `cannot_run` saying why; `--no-net` leaves them out).
fn verdict(
    report: &Report,
    out: &std::path::Path,
    cannot_run: Option<String>,
) -> Result<(), CliError> {
    let failed = report.claims().filter(|c| c.failed()).count();
    if failed > 0 {
        return Err(CliError::ClaimsFailed {
            failed,
            total: report.claims().count(),
            report: out.join("report.md"),
        });
    }
    match cannot_run {
        Some(why) => Err(CliError::CannotRun {
            command: "reproduce (the PSPAT paper's real packets; --no-net leaves them out)",
            why,
        }),
        None => Ok(()),
    }
}

fn write(dir: &std::path::Path, report: &Report) -> Result<(), CliError> {
    let put = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|error| CliError::Write { path, error })
    };
    write_charts(dir, report)?;
    put("report.md", to_markdown(report))?;
    put("report.json", super::json::pretty(report)?)
}

#[cfg(test)]
mod tests {
    use super::verdict;
    use fairway_lab::reproduce::{Claim, Paper, Report, Section};
    use std::path::Path;

    fn report(holds: &[bool]) -> Report {
        Report {
            machine: "m".into(),
            date: "2000-01-01".into(),
            command: "fairway reproduce".into(),
            quick: true,
            debug_build: true,
            seconds: 0.0,
            passed: 0,
            failed: 0,
            skipped: 0,
            sections: vec![Section {
                paper: Paper::Qfq,
                title: "t".into(),
                command: "c".into(),
                figures: vec![],
                claims: holds
                    .iter()
                    .enumerate()
                    .map(|(i, &h)| Claim::new(&i.to_string(), "c", h))
                    .chain([Claim::skipped("s", "c", true, "needs root")])
                    .collect(),
                charts: vec![],
                seconds: 0.0,
            }],
        }
    }

    #[test]
    fn one_failed_claim_fails_the_command() {
        assert!(verdict(&report(&[true, true]), Path::new("d"), None).is_ok());
        let e = verdict(&report(&[true, false]), Path::new("d"), None)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("1 of 3 claims do not hold"), "{e}");
    }

    #[test]
    fn real_packets_that_could_not_run_exit_3_unless_a_claim_failed() {
        let why = || Some("needs root (network namespaces)".to_string());
        let e = verdict(&report(&[true, true]), Path::new("d"), why()).unwrap_err();
        assert_eq!(e.exit_code(), 3);
        assert!(e.to_string().contains("needs root"), "{e}");
        let e = verdict(&report(&[false]), Path::new("d"), why()).unwrap_err();
        assert_eq!(e.exit_code(), 1);
    }
}
