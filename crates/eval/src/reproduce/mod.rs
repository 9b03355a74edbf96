//! `fairway reproduce`: the seeds' tables and figures that the project can
//! reproduce, each result beside the paper's number, and the paper's claims
//! (an ordering, a bound, a ratio) checked on our run.
//!
//! One module per paper, each calling the library's existing experiments
//! (nothing here measures anything itself):
//! * [`qfq_plus`] (seed 000, QFQ+ / SCHED+): the §8.3 service-guarantee
//!   table on `1k-highw` and the §8.2 cost claim QFQ+ ≤ QFQ;
//! * [`qfq`] (seed 003, QFQ): Table 4 / Fig. 10 (QFQ flat in the number of
//!   flows, WF2Q+ growing, S-KPS's cost ratio to QFQ) and the network
//!   simulation of §6 (Fig. 8, Tables 2–3);
//! * [`eiffel`] (seed 002, Eiffel): §5.2, bucketed queues against a binary
//!   heap at one element per bucket.
//!
//! Absolute numbers depend on the machine (the papers ran on 2012–2019
//! hardware); the claims checked are therefore orderings, bounds and ratios,
//! never absolute times. `quick` runs reduced versions of every experiment
//! (fewer packets, pairs, simulated seconds) with the same claims.

pub mod eiffel;
pub mod qfq;
pub mod qfq_plus;

use serde::Serialize;
use std::fmt::Write as _;
use std::time::Instant;

/// A paper whose results can be reproduced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Paper {
    /// Seed 000: QFQ+ / SCHED+ (Checconi, Rizzo, Valente 2013).
    QfqPlus,
    /// Seed 003: QFQ (Checconi, Rizzo, Valente 2012/13).
    Qfq,
    /// Seed 002: Eiffel (Saeed et al., NSDI 2019).
    Eiffel,
}

impl Paper {
    /// Every paper, in report order.
    pub const ALL: [Paper; 3] = [Paper::QfqPlus, Paper::Qfq, Paper::Eiffel];

    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Paper::QfqPlus => "qfq-plus",
            Paper::Qfq => "qfq",
            Paper::Eiffel => "eiffel",
        }
    }

    /// The paper's title as it names itself, with its seed number.
    pub fn title(self) -> &'static str {
        match self {
            Paper::QfqPlus => "QFQ+ / SCHED+: reducing the cost of fair queueing (seed 000)",
            Paper::Qfq => "QFQ: efficient packet scheduling with tight guarantees (seed 003)",
            Paper::Eiffel => "Eiffel: efficient and flexible software packet scheduling (seed 002)",
        }
    }

    /// Parses `qfq-plus` (or `000`), `qfq` (`003`), `eiffel` (`002`) or
    /// `all`.
    pub fn parse_list(text: &str) -> Result<Vec<Paper>, String> {
        match text.trim() {
            "all" => Ok(Paper::ALL.to_vec()),
            "qfq-plus" | "qfq+" | "000" => Ok(vec![Paper::QfqPlus]),
            "qfq" | "003" => Ok(vec![Paper::Qfq]),
            "eiffel" | "002" => Ok(vec![Paper::Eiffel]),
            other => Err(format!(
                "unknown paper '{other}' (expected one of all, qfq-plus, qfq, eiffel, or 000, 003, 002)"
            )),
        }
    }

    /// Progress steps [`run`] reports for this paper.
    pub fn steps(self) -> u64 {
        match self {
            Paper::QfqPlus => qfq_plus::STEPS,
            Paper::Qfq => qfq::STEPS,
            Paper::Eiffel => eiffel::STEPS,
        }
    }
}

/// One number of a table or figure: the paper's and ours.
#[derive(Clone, Debug, Serialize)]
pub struct Figure {
    /// What is measured (table, row, column).
    pub what: String,
    /// Unit of both numbers.
    pub unit: String,
    /// The paper's number, where it gives one.
    pub paper: Option<f64>,
    /// The paper's number as it states it (a range, or a note).
    pub paper_text: String,
    /// Our number.
    pub ours: f64,
    /// `ours / paper`, where the paper gives a single non-zero number.
    pub ratio: Option<f64>,
}

impl Figure {
    /// A figure with a single paper number (the ratio computed).
    pub fn vs(what: impl Into<String>, unit: &str, paper: f64, ours: f64) -> Self {
        Self {
            what: what.into(),
            unit: unit.into(),
            paper: Some(paper),
            paper_text: {
                // The paper's digits as printed; computed ratios rounded.
                let t = format!("{paper}");
                if t.len() <= 7 {
                    t
                } else {
                    num(paper)
                }
            },
            ours,
            ratio: (paper != 0.0).then(|| ours / paper),
        }
    }

    /// A figure where the paper states a range or a note, not one number.
    pub fn vs_text(what: impl Into<String>, unit: &str, paper_text: &str, ours: f64) -> Self {
        Self {
            what: what.into(),
            unit: unit.into(),
            paper: None,
            paper_text: paper_text.into(),
            ours,
            ratio: None,
        }
    }
}

/// A claim of a paper, checked on our numbers.
#[derive(Clone, Debug, Serialize)]
pub struct Claim {
    /// Short identifier, stable across runs (e.g. `000/guarantees/drr-vs-qfq`).
    pub id: String,
    /// The claim, with our numbers.
    pub claim: String,
    /// Whether it holds on this run.
    pub holds: bool,
}

impl Claim {
    /// A claim.
    pub fn new(id: &str, claim: impl Into<String>, holds: bool) -> Self {
        Self {
            id: id.into(),
            claim: claim.into(),
            holds,
        }
    }
}

/// One experiment of a paper: its figures and claims.
#[derive(Clone, Debug, Serialize)]
pub struct Section {
    /// The paper.
    pub paper: Paper,
    /// Table or figure reproduced, and how it was run.
    pub title: String,
    /// The equivalent `fairway` command, for a closer look.
    pub command: String,
    /// Paper's numbers against ours.
    pub figures: Vec<Figure>,
    /// The paper's claims checked.
    pub claims: Vec<Claim>,
    /// Seconds the experiment took.
    pub seconds: f64,
}

/// The whole report (`report.json`).
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// CPU model and core count ([`crate::machine::describe`]).
    pub machine: String,
    /// Whether the reduced (`--quick`) versions ran.
    pub quick: bool,
    /// Whether the measuring code was built with debug assertions (the
    /// `dev` and `test` profiles): its cost figures are then not those of
    /// a release build.
    pub debug_build: bool,
    /// Wall-clock seconds of the whole run.
    pub seconds: f64,
    /// Claims that hold.
    pub passed: usize,
    /// Claims that do not.
    pub failed: usize,
    /// Every experiment.
    pub sections: Vec<Section>,
}

impl Report {
    /// Every claim, in report order.
    pub fn claims(&self) -> impl Iterator<Item = &Claim> {
        self.sections.iter().flat_map(|s| s.claims.iter())
    }
}

/// Progress of [`run`]: the step just started, of how many.
#[derive(Clone, Debug)]
pub struct Progress<'a> {
    /// Steps finished.
    pub done: u64,
    /// Steps in total.
    pub total: u64,
    /// What runs now.
    pub message: &'a str,
}

/// Counts steps across papers for the progress callback.
pub struct Ticker<'a> {
    done: u64,
    total: u64,
    progress: &'a mut dyn FnMut(Progress),
}

impl Ticker<'_> {
    /// Announces the next step (`message`), counting the previous one done.
    pub fn step(&mut self, message: &str) {
        (self.progress)(Progress {
            done: self.done,
            total: self.total,
            message,
        });
        self.done += 1;
    }
}

/// Runs the experiments of `papers` (reduced ones if `quick`).
pub fn run(
    papers: &[Paper],
    quick: bool,
    progress: &mut dyn FnMut(Progress),
) -> Result<Report, String> {
    let start = Instant::now();
    let total = papers.iter().map(|p| p.steps()).sum();
    let mut t = Ticker {
        done: 0,
        total,
        progress,
    };
    let mut sections = Vec::new();
    for &p in papers {
        let s = match p {
            Paper::QfqPlus => qfq_plus::run(quick, &mut t)?,
            Paper::Qfq => qfq::run(quick, &mut t)?,
            Paper::Eiffel => eiffel::run(quick, &mut t)?,
        };
        sections.extend(s);
    }
    (t.progress)(Progress {
        done: total,
        total,
        message: "done",
    });
    let passed = sections
        .iter()
        .flat_map(|s| &s.claims)
        .filter(|c| c.holds)
        .count();
    let failed = sections.iter().map(|s| s.claims.len()).sum::<usize>() - passed;
    Ok(Report {
        machine: crate::machine::describe(),
        quick,
        debug_build: cfg!(debug_assertions),
        seconds: start.elapsed().as_secs_f64(),
        passed,
        failed,
        sections,
    })
}

/// Times `f`, storing the seconds in the section it returns.
pub(crate) fn timed(f: impl FnOnce() -> Result<Section, String>) -> Result<Section, String> {
    let start = Instant::now();
    let mut s = f()?;
    s.seconds = start.elapsed().as_secs_f64();
    Ok(s)
}

fn num(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else if v.abs() >= 1.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.4}")
    }
}

/// The report as Markdown (`report.md`).
pub fn to_markdown(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# fairway: the papers' results reproduced\n");
    let _ = writeln!(
        s,
        "Machine: {}. {} run, {:.1} s in total. Claims: {} hold, {} fail.\n",
        r.machine,
        if r.quick {
            "Reduced (`--quick`)"
        } else {
            "Full"
        },
        r.seconds,
        r.passed,
        r.failed
    );
    let _ = writeln!(
        s,
        "Absolute numbers depend on the machine; the claims checked are orderings, bounds and ratios.\n"
    );
    if r.debug_build {
        let _ = writeln!(
            s,
            "Built with debug assertions: cost figures are not those of a release build (`cargo run --release -- reproduce`).\n"
        );
    }
    let mut last = None;
    for sec in &r.sections {
        if last != Some(sec.paper) {
            let _ = writeln!(s, "## {}\n", sec.paper.title());
            last = Some(sec.paper);
        }
        let _ = writeln!(s, "### {}\n", sec.title);
        let _ = writeln!(
            s,
            "`{}` ({:.1} s)\n\n| result | unit | paper | ours | ours / paper |\n|---|---|---:|---:|---:|",
            sec.command, sec.seconds
        );
        for f in &sec.figures {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                f.what,
                f.unit,
                f.paper_text,
                num(f.ours),
                f.ratio.map_or("-".into(), num)
            );
        }
        let _ = writeln!(s, "\n| claim | holds |\n|---|---|");
        for c in &sec.claims {
            let _ = writeln!(
                s,
                "| {} | {} |",
                c.claim,
                if c.holds { "yes" } else { "**NO**" }
            );
        }
        let _ = writeln!(s);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_papers_and_rejects_unknown_names() {
        assert_eq!(Paper::parse_list("all").unwrap(), Paper::ALL.to_vec());
        assert_eq!(Paper::parse_list("003").unwrap(), vec![Paper::Qfq]);
        assert!(Paper::parse_list("pspat").unwrap_err().contains("pspat"));
    }

    #[test]
    fn a_failed_claim_is_counted_and_marked() {
        let sec = Section {
            paper: Paper::Eiffel,
            title: "t".into(),
            command: "c".into(),
            figures: vec![Figure::vs("x", "Mpps", 2.0, 1.0)],
            claims: vec![
                Claim::new("a", "holds", true),
                Claim::new("b", "fails", false),
            ],
            seconds: 0.0,
        };
        let r = Report {
            machine: "m".into(),
            quick: true,
            debug_build: false,
            seconds: 0.0,
            passed: 1,
            failed: 1,
            sections: vec![sec],
        };
        let md = to_markdown(&r);
        assert!(md.contains("| fails | **NO** |"));
        assert!(md.contains("| x | Mpps | 2 | 1.000 | 0.5000 |"));
    }
}
