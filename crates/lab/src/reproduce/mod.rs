//! `fairway reproduce`: the seeds' tables and figures that the project can
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
pub mod pspat;
pub mod qfq;
pub mod qfq_plus;

pub use error::ReproduceError;
use fairway_eval::chart::{write_svg, ChartSpec, Series};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

/// A paper whose results can be reproduced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Paper {
    /// The QFQ+ paper: QFQ+ / SCHED+ (Checconi, Rizzo, Valente 2013).
    QfqPlus,
    /// The QFQ paper: QFQ (Checconi, Rizzo, Valente 2012/13).
    Qfq,
    /// The Eiffel paper: Eiffel (Saeed et al., NSDI 2019).
    Eiffel,
    /// The BFQ thesis, ch. 2: BFQ (Checconi's PhD thesis).
    Bfq,
    /// The PSPAT paper: PSPAT (Rizzo, Valente, Lettieri, Maffione 2018).
    Pspat,
}

impl Paper {
    /// Every paper, in report order.
    pub const ALL: [Paper; 5] = [
        Paper::QfqPlus,
        Paper::Qfq,
        Paper::Eiffel,
        Paper::Bfq,
        Paper::Pspat,
    ];

    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Paper::QfqPlus => "qfq-plus",
            Paper::Qfq => "qfq",
            Paper::Eiffel => "eiffel",
            Paper::Bfq => "bfq",
            Paper::Pspat => "pspat",
        }
    }

    /// The paper's title as it names itself, with its seed number.
    pub fn title(self) -> &'static str {
        match self {
            Paper::QfqPlus => "QFQ+ / SCHED+: reducing the cost of fair queueing",
            Paper::Qfq => "QFQ: efficient packet scheduling with tight guarantees",
            Paper::Eiffel => "Eiffel: efficient and flexible software packet scheduling",
            Paper::Bfq => "BFQ: proportional-share disk scheduling (Checconi's thesis, ch. 2)",
            Paper::Pspat => "PSPAT: software packet scheduling at hardware speed",
        }
    }

    /// Parses `qfq-plus` (or `000`), `qfq` (`003`), `eiffel` (`002`),
    /// `bfq` (`004`), `pspat` (`001`) or `all`.
    pub fn parse_list(text: &str) -> Result<Vec<Paper>, ReproduceError> {
        match text.trim() {
            "all" => Ok(Paper::ALL.to_vec()),
            "qfq-plus" | "qfq+" | "000" => Ok(vec![Paper::QfqPlus]),
            "qfq" | "003" => Ok(vec![Paper::Qfq]),
            "eiffel" | "002" => Ok(vec![Paper::Eiffel]),
            "bfq" | "004" => Ok(vec![Paper::Bfq]),
            "pspat" | "001" => Ok(vec![Paper::Pspat]),
            other => Err(ReproduceError::UnknownPaper(other.to_string())),
        }
    }

    /// Progress steps [`run`] reports for this paper.
    pub fn steps(self, opts: &RunOptions) -> u64 {
        match self {
            Paper::QfqPlus => qfq_plus::STEPS,
            Paper::Qfq => qfq::STEPS,
            Paper::Eiffel => eiffel::STEPS,
            Paper::Bfq => bfq::STEPS,
            Paper::Pspat => pspat::steps(opts),
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
    /// Whether it holds on this run (false when skipped).
    pub holds: bool,
    /// A claim about measured speed (a cost ratio, a throughput or latency
    /// ordering): other load on the machine can flip it, so a test suite
    /// on shared cores lists it rather than requiring it.
    pub timing: bool,
    /// Why the claim was not checked on this machine (e.g. `needs root`);
    /// `None` when it was.
    pub skipped: Option<String>,
}

impl Claim {
    /// A deterministic claim (a simulation's or a bound's).
    pub fn new(id: &str, claim: impl Into<String>, holds: bool) -> Self {
        Self {
            id: id.into(),
            claim: claim.into(),
            holds,
            timing: false,
            skipped: None,
        }
    }

    /// A claim about measured speed (see [`Claim::timing`]).
    pub fn timing(id: &str, claim: impl Into<String>, holds: bool) -> Self {
        Self {
            timing: true,
            ..Self::new(id, claim, holds)
        }
    }

    /// A claim not checked on this machine, and why.
    pub fn skipped(id: &str, claim: impl Into<String>, timing: bool, reason: &str) -> Self {
        Self {
            timing,
            skipped: Some(reason.into()),
            ..Self::new(id, claim, false)
        }
    }

    /// Checked and does not hold.
    pub fn failed(&self) -> bool {
        !self.holds && self.skipped.is_none()
    }
}

/// A line of a [`ChartFile`].
#[derive(Clone, Debug, Serialize)]
pub struct ChartLine {
    /// Legend text.
    pub name: String,
    /// `(x, y)` points in x order.
    pub points: Vec<(f64, f64)>,
    /// Dashed (the paper's numbers, reference levels).
    pub dashed: bool,
    /// Palette index: a paper's line and ours share one.
    pub color: usize,
}

/// An SVG chart of a section, written beside `report.md` by
/// [`write_charts`] and linked from it.
#[derive(Clone, Debug, Serialize)]
pub struct ChartFile {
    /// File name (no directory), e.g. `qfq-fig10-cost.svg`.
    pub file: String,
    /// Caption.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// Logarithmic x axis.
    pub log_x: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// The lines.
    pub lines: Vec<ChartLine>,
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
    /// Charts of the experiments the paper shows as a figure.
    pub charts: Vec<ChartFile>,
    /// Seconds the experiment took.
    pub seconds: f64,
}

/// The whole report (`report.json`).
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// CPU model and core count ([`fairway_eval::machine::describe`]).
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
    /// Claims that were checked and do not hold.
    pub failed: usize,
    /// Claims not checked on this machine ([`Claim::skipped`]).
    pub skipped: usize,
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

/// What [`run`] runs.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    /// The reduced versions of every experiment (what CI runs).
    pub quick: bool,
    /// Skip the experiments that need root and network namespaces (seed
    /// 001's real-packet runs), listing their claims as skipped.
    pub no_net: bool,
}

/// Runs the experiments of `papers` (reduced ones if `quick`).
pub fn run(
    papers: &[Paper],
    opts: RunOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<Report, ReproduceError> {
    let quick = opts.quick;
    let start = Instant::now();
    let total = papers.iter().map(|p| p.steps(&opts)).sum();
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
            Paper::Bfq => bfq::run(quick, &mut t)?,
            Paper::Pspat => pspat::run(&opts, &mut t)?,
        };
        sections.extend(s);
    }
    (t.progress)(Progress {
        done: total,
        total,
        message: "done",
    });
    let claims = || sections.iter().flat_map(|s| &s.claims);
    let passed = claims().filter(|c| c.holds).count();
    let failed = claims().filter(|c| c.failed()).count();
    let skipped = claims().filter(|c| c.skipped.is_some()).count();
    Ok(Report {
        machine: fairway_eval::machine::describe(),
        quick,
        debug_build: cfg!(debug_assertions),
        seconds: start.elapsed().as_secs_f64(),
        passed,
        failed,
        skipped,
        sections,
    })
}

/// Times `f`, storing the seconds in the section it returns.
pub(crate) fn timed(
    f: impl FnOnce() -> Result<Section, ReproduceError>,
) -> Result<Section, ReproduceError> {
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
        "Machine: {}. {} run, {:.1} s in total. Claims: {} hold, {} fail, {} skipped.\n",
        r.machine,
        if r.quick {
            "Reduced (`--quick`)"
        } else {
            "Full"
        },
        r.seconds,
        r.passed,
        r.failed,
        r.skipped
    );
    let _ = writeln!(
        s,
        "Absolute numbers depend on the machine; the claims checked are orderings, bounds and ratios. \
         Claims marked *timing* are about measured speed, which other load on the machine can flip.\n"
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
            let verdict = match (&c.skipped, c.holds) {
                (Some(why), _) => format!("skipped: {why}"),
                (None, true) => "yes".into(),
                (None, false) => "**NO**".into(),
            };
            let kind = if c.timing { " (*timing*)" } else { "" };
            let _ = writeln!(s, "| {}{kind} | {verdict} |", c.claim);
        }
        let _ = writeln!(s);
        for ch in &sec.charts {
            let _ = writeln!(s, "![{}]({})\n", ch.title, ch.file);
        }
    }
    s
}

/// Writes every section's charts into `dir` (beside `report.md`, whose
/// image links name them); returns the paths written.
pub fn write_charts(dir: &Path, r: &Report) -> Result<Vec<std::path::PathBuf>, ReproduceError> {
    let mut written = Vec::new();
    for ch in r.sections.iter().flat_map(|s| &s.charts) {
        let path = dir.join(&ch.file);
        let spec = ChartSpec {
            title: ch.title.clone(),
            x_label: ch.x_label.clone(),
            y_label: ch.y_label.clone(),
            log_x: ch.log_x,
            log_y: ch.log_y,
        };
        let series: Vec<Series> = ch
            .lines
            .iter()
            .map(|l| Series {
                name: l.name.clone(),
                points: l.points.clone(),
                dashed: l.dashed,
                color: l.color,
            })
            .collect();
        write_svg(&path, &spec, &series).map_err(ReproduceError::Chart)?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_papers_and_rejects_unknown_names() {
        assert_eq!(Paper::parse_list("all").unwrap(), Paper::ALL.to_vec());
        assert_eq!(Paper::parse_list("003").unwrap(), vec![Paper::Qfq]);
        assert_eq!(Paper::parse_list("004").unwrap(), vec![Paper::Bfq]);
        assert_eq!(Paper::parse_list("pspat").unwrap(), vec![Paper::Pspat]);
        assert!(Paper::parse_list("gps")
            .unwrap_err()
            .to_string()
            .contains("'gps'"));
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
                Claim::skipped("c", "not run", true, "needs root"),
            ],
            charts: vec![ChartFile {
                file: "x.svg".into(),
                title: "X against Y".into(),
                x_label: "y".into(),
                y_label: "x".into(),
                log_x: false,
                log_y: false,
                lines: vec![ChartLine {
                    name: "ours".into(),
                    points: vec![(1.0, 1.0), (2.0, 3.0)],
                    dashed: false,
                    color: 0,
                }],
            }],
            seconds: 0.0,
        };
        let r = Report {
            machine: "m".into(),
            quick: true,
            debug_build: false,
            seconds: 0.0,
            passed: 1,
            failed: 1,
            skipped: 1,
            sections: vec![sec],
        };
        let md = to_markdown(&r);
        assert!(md.contains("| fails | **NO** |"));
        assert!(md.contains("| not run (*timing*) | skipped: needs root |"));
        assert!(md.contains("1 hold, 1 fail, 1 skipped"));
        assert!(md.contains("| x | Mpps | 2 | 1.000 | 0.5000 |"));
        assert!(md.contains("![X against Y](x.svg)"));
        assert!(!r.sections[0].claims[2].failed(), "skipped is not failed");
        let dir = std::env::temp_dir().join(format!("fairway-repro-chart-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let paths = write_charts(&dir, &r).unwrap();
        let svg = std::fs::read_to_string(&paths[0]).unwrap();
        assert!(svg.contains("<svg") && svg.contains("X against Y"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
