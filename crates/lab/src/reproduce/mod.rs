//! `fairway reproduce`: the papers' tables and figures that the project can
//! reproduce, each result beside the paper's number, and the paper's claims
//! (an ordering, a bound, a ratio) checked on our run.
//!
//! One module per paper, each calling the library's existing experiments
//! (nothing here measures anything itself):
//! * [`qfq_plus`] (the QFQ+ paper, QFQ+ / SCHED+): the §8.3 service-guarantee
//!   table on `1k-highw`, the §8.2 cost claim QFQ+ ≤ QFQ and Fig. 4's
//!   QFQ+ below DRR on `32k-wmix`;
//! * [`qfq`] (the QFQ paper): Table 4 / Fig. 10 (QFQ flat in the number of
//!   flows, WF2Q+ growing, S-KPS's cost ratio to QFQ) and the network
//!   simulation of §6 (Fig. 8, Tables 2–3);
//! * [`eiffel`] (the Eiffel paper): §5.2, bucketed queues against a binary
//!   heap at one element per bucket;
//! * [`bfq`] (the BFQ thesis, ch. 2): §2.4's disk experiments on
//!   the simulated drive (throughput against B_max, weighted shares, the
//!   web server, streaming);
//! * [`pspat`] (the PSPAT paper): Figs. 6–7 (throughput against clients)
//!   and Fig. 9 (98th-percentile latency against the link rate) with real
//!   UDP packets, where the machine allows it (root and `ip netns`);
//!   otherwise its claims are listed as skipped, with the reason.
//!
//! Each claim is checked by a pure function of the experiment's results
//! (so a test can feed it a fabricated bad result and see it fail). Claims
//! about measured speed are *timing* claims: measured and listed, but a
//! shared machine can flip them. Each experiment with a figure in its paper
//! also gets an SVG chart ([`write_charts`]) beside `report.md`.
//!
//! Absolute numbers depend on the machine (the papers ran on 2012–2019
//! hardware); the claims checked are therefore orderings, bounds and ratios,
//! never absolute times. `quick` runs reduced versions of every experiment
//! (fewer packets, pairs, simulated seconds) with the same claims.

pub mod bfq;
pub mod eiffel;
pub mod error;
pub mod options;
pub mod paper;
pub mod progress;
pub mod pspat;
pub mod qfq;
pub mod qfq_plus;
pub mod report;

pub use error::ReproduceError;
pub use options::RunOptions;
pub use paper::Paper;
pub use progress::{Progress, Ticker};
pub use report::{to_markdown, write_charts, ChartFile, ChartLine, Claim, Figure, Report, Section};
use std::time::Instant;

/// Runs the experiments of `papers` (reduced ones if `quick`).
pub fn run(
    papers: &[Paper],
    opts: RunOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<Report, ReproduceError> {
    let quick = opts.quick;
    let start = Instant::now();
    let total = papers.iter().map(|&p| steps(p, &opts)).sum();
    let mut t = Ticker::new(total, progress);
    let mut sections = Vec::new();
    for &p in papers {
        let s = match p {
            Paper::QfqPlus => qfq_plus::run(quick, &mut t)?,
            Paper::Qfq => qfq::run(quick, &mut t)?,
            Paper::Eiffel => eiffel::run(quick, &mut t)?,
            Paper::Bfq => bfq::run(quick, &mut t)?,
            Paper::Pspat => pspat::run(&opts, &mut t)?,
        };
        sections.extend(s);
    }
    t.finish();
    let claims = || sections.iter().flat_map(|s| &s.claims);
    let passed = claims().filter(|c| c.holds).count();
    let failed = claims().filter(|c| c.failed()).count();
    let skipped = claims().filter(|c| c.skipped.is_some()).count();
    Ok(Report {
        machine: fairway_eval::machine::describe(),
        date: utc_date(std::time::SystemTime::now()),
        command: std::env::args().collect::<Vec<_>>().join(" "),
        quick,
        debug_build: cfg!(debug_assertions),
        seconds: start.elapsed().as_secs_f64(),
        passed,
        failed,
        skipped,
        sections,
    })
}

/// `YYYY-MM-DD` of `t` in UTC (the proleptic Gregorian calendar, from the
/// days since 1970-01-01 by Howard Hinnant's `civil_from_days`).
fn utc_date(t: std::time::SystemTime) -> String {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// Progress steps [`run`] reports for `paper`.
fn steps(paper: Paper, opts: &RunOptions) -> u64 {
    match paper {
        Paper::QfqPlus => qfq_plus::STEPS,
        Paper::Qfq => qfq::STEPS,
        Paper::Eiffel => eiffel::STEPS,
        Paper::Bfq => bfq::STEPS,
        Paper::Pspat => pspat::steps(opts),
    }
}

#[cfg(test)]
mod tests {
    use super::utc_date;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn utc_dates() {
        assert_eq!(utc_date(UNIX_EPOCH), "1970-01-01");
        // 2000-02-29: a leap day of a century divisible by 400.
        assert_eq!(
            utc_date(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000-02-29"
        );
        assert_eq!(
            utc_date(UNIX_EPOCH + Duration::from_secs(1_795_910_400)),
            "2026-11-29"
        );
    }
}
