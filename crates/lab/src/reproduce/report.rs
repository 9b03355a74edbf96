//! The report of a reproduction: each experiment's numbers beside the
//! paper's, its claims checked, its charts; as Markdown (`report.md`),
//! JSON (`report.json`, through `Serialize`) and SVG files.

use super::error::ReproduceError;
use super::paper::Paper;
use fairway_eval::chart::{write_svg, ChartSpec, Series};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

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
    /// `ours / paper`, where the paper gives a single number and the ratio
    /// means something ([`ratio_or_why_not`]).
    pub ratio: Option<f64>,
    /// Why there is no ratio although the paper gives a single number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_ratio: Option<&'static str>,
}

/// A paper's figure this close to zero is no baseline to divide by.
const NEAR_ZERO: f64 = 1e-9;

/// `ours / paper`, or why that quotient would mean nothing: a paper's
/// figure of (about) zero, or two figures of opposite signs (a negative
/// lateness against a positive one is "earlier", not a fraction of it).
pub fn ratio_or_why_not(paper: f64, ours: f64) -> Result<f64, &'static str> {
    if !paper.is_finite() || !ours.is_finite() {
        return Err("not a finite number");
    }
    if paper.abs() < NEAR_ZERO {
        return Err("the paper's figure is 0");
    }
    if ours.abs() >= NEAR_ZERO && (ours < 0.0) != (paper < 0.0) {
        return Err("opposite signs");
    }
    Ok(ours / paper)
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
            ratio: ratio_or_why_not(paper, ours).ok(),
            no_ratio: ratio_or_why_not(paper, ours).err(),
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
            no_ratio: None,
        }
    }
}

/// A claim of a paper, checked on our numbers.
#[derive(Clone, Debug, Serialize)]
pub struct Claim {
    /// Short identifier, stable across runs (e.g.
    /// `qfq-plus/guarantees/drr-much-worse-than-qfq`).
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
    /// The UTC date the run started, `YYYY-MM-DD`: dated results say when
    /// they were measured.
    pub date: String,
    /// The command line that produced the report, so it can be run again.
    pub command: String,
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
        "Machine: {}. Date: {}. Command: `{}`.\n",
        r.machine, r.date, r.command
    );
    let _ = writeln!(
        s,
        "{} run, {:.1} s in total. Claims: {} hold, {} fail, {} skipped.\n",
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
                match (f.ratio, f.no_ratio) {
                    (Some(r), _) => num(r),
                    (None, Some(why)) => format!("n/a ({why})"),
                    (None, None) => "-".into(),
                }
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
        write_svg(&path, &spec, &series)?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ratio_that_means_nothing_is_na_with_its_reason() {
        assert_eq!(ratio_or_why_not(2.0, 1.0), Ok(0.5));
        assert_eq!(ratio_or_why_not(-2.0, -1.0), Ok(0.5));
        assert_eq!(ratio_or_why_not(2.0, 0.0), Ok(0.0));
        assert_eq!(ratio_or_why_not(1.244, -0.746), Err("opposite signs"));
        assert_eq!(ratio_or_why_not(0.0, 3.0), Err("the paper's figure is 0"));
        let f = Figure::vs("T-WFI", "packets", 1.244, -0.746);
        assert!(f.ratio.is_none());
        let sec = Section {
            paper: Paper::QfqPlus,
            title: "t".into(),
            command: "c".into(),
            figures: vec![f],
            claims: vec![],
            charts: vec![],
            seconds: 0.0,
        };
        let md = to_markdown(&Report {
            machine: "m".into(),
            date: "d".into(),
            command: "c".into(),
            quick: true,
            debug_build: false,
            seconds: 0.0,
            passed: 0,
            failed: 0,
            skipped: 0,
            sections: vec![sec],
        });
        assert!(md.contains("| -0.7460 | n/a (opposite signs) |"), "{md}");
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
            date: "2000-01-01".into(),
            command: "fairway reproduce".into(),
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
