//! Line charts of the sweeps as SVG (plotters), with log axes where the
//! papers use them (QFQ paper Fig. 10: cost versus number of flows).
//!
//! The drawing follows a few rules so that a chart reads right without
//! each caller tuning it:
//! - **Log y when one series dwarfs the rest**: if the largest series peaks
//!   [`DWARF_RATIO`] times higher than another, a linear axis would squash
//!   that one flat onto zero; the y axis turns logarithmic (its label says
//!   so). A caller may ask for log y itself.
//! - **Ticks where the data is**: on a log x axis with few distinct x
//!   values (flow counts 1, 2, 4 … 32768), ticks sit on those values (at
//!   most [`MAX_TICKS`], evenly chosen, first and last always), not at
//!   powers of ten that no point has.
//! - **Legends match the lines**: a dashed series has a dashed sample in
//!   the legend; a solid one has its line and its marker. Markers differ
//!   by series (circle, triangle, square, cross, …) so lines of similar
//!   colour stay apart, and are thinned to at most [`MAX_MARKERS`] per
//!   line so a 1000-point CDF is still a line.
//! - **A linear y axis ends at a round value at or just above the data**
//!   (0 to 100 % for a CDF in percent, 0 to 1 for one in fractions), so a
//!   CDF reaches the top of the chart.

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use std::fmt;
use std::path::{Path, PathBuf};

/// Why a chart or a CSV header could not be written.
#[derive(Debug)]
pub enum ChartError {
    /// No series has a finite point.
    NothingToPlot,
    /// A CSV column name given twice.
    ColumnTwice(String),
    /// Drawing or writing the SVG file failed (plotters' message).
    Draw {
        /// The chart's file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

impl fmt::Display for ChartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChartError::NothingToPlot => write!(f, "nothing to plot"),
            ChartError::ColumnTwice(n) => write!(f, "CSV column `{n}` named twice"),
            ChartError::Draw { path, message } => write!(f, "{}: {message}", path.display()),
        }
    }
}

impl std::error::Error for ChartError {}

/// One line of a chart.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// `(x, y)` points, in x order.
    pub points: Vec<(f64, f64)>,
    /// Drawn dashed (reference lines), without markers.
    pub dashed: bool,
    /// Index into the palette, so related lines share a colour; also
    /// picks the marker shape of a solid line.
    pub color: usize,
}

/// Title, labels and axis scales.
#[derive(Clone, Debug)]
pub struct ChartSpec {
    /// Caption on top.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// Logarithmic x axis.
    pub log_x: bool,
    /// Logarithmic y axis (also chosen automatically, see [`dwarfed`]).
    pub log_y: bool,
}

/// A series peaking this many times above another makes the y axis log.
pub const DWARF_RATIO: f64 = 20.0;

/// At most this many ticks placed on the data's own x values.
pub const MAX_TICKS: usize = 9;

/// Distinct x values beyond which the data is not on a grid (a CDF) and
/// the axis keeps plotters' own ticks.
const MAX_GRID_VALUES: usize = 40;

/// At most this many markers drawn on one line.
pub const MAX_MARKERS: usize = 16;

const PALETTE: [RGBColor; 8] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0x17, 0xbe, 0xcf),
    RGBColor(0x7f, 0x7f, 0x7f),
];

/// Marker shape of a solid series.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    /// Filled circle.
    Circle,
    /// Filled triangle.
    Triangle,
    /// Filled square.
    Square,
    /// Diagonal cross.
    Cross,
    /// Hollow circle.
    Ring,
}

/// The marker of a series (by colour index, so a chart's lines of one
/// colour share it). Dashed series have none, unless they have a single
/// point, which no dash could show: then a filled marker.
pub fn marker_of(s: &Series) -> Option<Marker> {
    const FILLED: [Marker; 3] = [Marker::Circle, Marker::Triangle, Marker::Square];
    if s.dashed && s.points.len() < 2 {
        return Some(FILLED[s.color % FILLED.len()]);
    }
    const ALL: [Marker; 5] = [
        Marker::Circle,
        Marker::Triangle,
        Marker::Square,
        Marker::Cross,
        Marker::Ring,
    ];
    (!s.dashed).then(|| ALL[s.color % ALL.len()])
}

fn finite(s: &Series) -> impl Iterator<Item = (f64, f64)> + '_ {
    s.points
        .iter()
        .copied()
        .filter(|p| p.0.is_finite() && p.1.is_finite())
}

/// True if one series dwarfs another: all values are positive and the
/// highest series peak is at least [`DWARF_RATIO`] times the lowest one.
pub fn dwarfed(series: &[Series]) -> bool {
    let peaks: Vec<f64> = series
        .iter()
        .filter_map(|s| finite(s).map(|p| p.1).reduce(f64::max))
        .collect();
    let all_positive = series.iter().all(|s| finite(s).all(|p| p.1 > 0.0));
    let (lo, hi) = peaks
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    all_positive && peaks.len() > 1 && hi >= DWARF_RATIO * lo
}

/// The smallest "round" number (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 × 10^k)
/// at or above `v` (> 0): the top of a linear axis.
pub fn round_up(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return 1.0;
    }
    let scale = 10f64.powf(v.log10().floor());
    for step in [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0] {
        let top = step * scale;
        // Tolerate the rounding of powf: 100 must stay 100.
        if top >= v * (1.0 - 1e-12) {
            return top;
        }
    }
    10.0 * scale
}

/// The y axis: `(logarithmic, low, high)`.
pub fn y_axis(spec: &ChartSpec, series: &[Series]) -> Option<(bool, f64, f64)> {
    let ys: Vec<f64> = series.iter().flat_map(|s| finite(s).map(|p| p.1)).collect();
    let y0 = ys.iter().copied().reduce(f64::min)?;
    let y1 = ys.iter().copied().reduce(f64::max)?;
    let log = spec.log_y || dwarfed(series);
    Some(if log {
        let lo = ys.iter().copied().filter(|&y| y > 0.0).reduce(f64::min);
        let lo = lo.unwrap_or(1e-3);
        (true, lo * 0.8, (y1 * 1.25).max(lo * 2.0))
    } else if y0 >= 0.0 {
        // Measurements are positive: a linear axis starts at 0.
        (false, 0.0, round_up(y1))
    } else {
        (false, -round_up(-y0), round_up(y1.max(0.0)).max(1.0))
    })
}

/// Ticks on the data's x values when they lie on a grid (few distinct
/// values): at most [`MAX_TICKS`], evenly spread, first and last included.
pub fn x_ticks(series: &[Series]) -> Option<Vec<f64>> {
    let mut xs: Vec<f64> = series
        .iter()
        .filter(|s| !s.dashed)
        .flat_map(|s| finite(s).map(|p| p.0))
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    if xs.len() < 2 || xs.len() > MAX_GRID_VALUES {
        return None;
    }
    let step = xs.len().div_ceil(MAX_TICKS).max(1);
    let mut ticks: Vec<f64> = xs.iter().copied().step_by(step).collect();
    let last = xs[xs.len() - 1];
    if ticks.last() != Some(&last) {
        if ticks.len() == MAX_TICKS {
            ticks.pop();
        }
        ticks.push(last);
    }
    Some(ticks)
}

/// The points of a line that get a marker: at most [`MAX_MARKERS`],
/// evenly spread by index, the last one included.
pub fn marker_points(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    if points.len() <= MAX_MARKERS {
        return points.to_vec();
    }
    let step = points.len().div_ceil(MAX_MARKERS - 1);
    let mut v: Vec<(f64, f64)> = points.iter().copied().step_by(step).collect();
    if v.last() != points.last() {
        v.extend(points.last());
    }
    v
}

/// Header line of a CSV file; refuses a name given twice, since a
/// reader keyed by name would silently lose one of the columns.
pub fn csv_header(names: &[&str]) -> Result<String, ChartError> {
    for (i, n) in names.iter().enumerate() {
        if names[..i].contains(n) {
            return Err(ChartError::ColumnTwice(n.to_string()));
        }
    }
    Ok(names.join(","))
}

/// Writes `series` as an 900×560 SVG chart to `path`.
pub fn write_svg(path: &Path, spec: &ChartSpec, series: &[Series]) -> Result<(), ChartError> {
    let xs = series.iter().flat_map(|s| finite(s).map(|p| p.0));
    let (mut x0, mut x1) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    let Some((log_y, y_lo, y_hi)) = y_axis(spec, series) else {
        return Err(ChartError::NothingToPlot);
    };
    if x1 <= x0 {
        // One x value: centre it in a range wide enough that the axis
        // labels differ (2000 gives 1000..3000, not 2000..2001).
        let half = x0.abs().max(1.0) / 2.0;
        (x0, x1) = (x0 - half, x0 + half);
    }
    let mut spec = spec.clone();
    if log_y && !spec.log_y {
        spec.y_label = format!("{}, log scale", spec.y_label);
    }
    let spec = &spec;
    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    let r = if spec.log_x {
        let x = (x0.max(1e-9)..x1).log_scale();
        match (x_ticks(series), log_y) {
            (Some(t), true) => draw(
                &root,
                spec,
                series,
                x.with_key_points(t),
                (y_lo..y_hi).log_scale(),
            ),
            (Some(t), false) => draw(&root, spec, series, x.with_key_points(t), y_lo..y_hi),
            (None, true) => draw(&root, spec, series, x, (y_lo..y_hi).log_scale()),
            (None, false) => draw(&root, spec, series, x, y_lo..y_hi),
        }
    } else if log_y {
        draw(&root, spec, series, x0..x1, (y_lo..y_hi).log_scale())
    } else {
        draw(&root, spec, series, x0..x1, y_lo..y_hi)
    };
    r.and_then(|()| root.present())
        .map_err(|e| ChartError::Draw {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
}

/// An octagon of radius `r` around the origin (a circle at marker size).
fn octagon(r: f64) -> Vec<(i32, i32)> {
    (0..=8)
        .map(|k| {
            let a = std::f64::consts::FRAC_PI_4 * f64::from(k);
            ((r * a.cos()).round() as i32, (r * a.sin()).round() as i32)
        })
        .collect()
}

/// Pixel paths of a legend sample, relative to its left end: a line, a
/// filled polygon and an outline, so that every style is one element type.
/// A dashed series gets three dashes (the middle one a 2-pixel bar); a
/// solid one its line with its marker in the middle.
type Shapes = (Vec<(i32, i32)>, Vec<(i32, i32)>, Vec<(i32, i32)>);

fn legend_shapes(dashed: bool, marker: Option<Marker>) -> Shapes {
    let mid = |v: Vec<(i32, i32)>| v.into_iter().map(|(a, b)| (a + 12, b)).collect();
    if dashed {
        // A dashed line with a marker (a single point) shows it between
        // its outer dashes; only filled markers occur there.
        let middle = match marker {
            None => vec![(10, -1), (16, -1), (16, 1), (10, 1)],
            Some(Marker::Triangle) => mid(vec![(0, -5), (5, 4), (-5, 4)]),
            Some(Marker::Square) => mid(vec![(-4, -4), (4, -4), (4, 4), (-4, 4)]),
            Some(_) => mid(octagon(4.0)),
        };
        return (vec![(0, 0), (6, 0)], middle, vec![(20, 0), (24, 0)]);
    }
    let line = vec![(0, 0), (24, 0)];
    match marker.unwrap_or(Marker::Circle) {
        Marker::Circle => (line, mid(octagon(4.0)), vec![]),
        Marker::Triangle => (line, mid(vec![(0, -5), (5, 4), (-5, 4)]), vec![]),
        Marker::Square => (line, mid(vec![(-4, -4), (4, -4), (4, 4), (-4, 4)]), vec![]),
        Marker::Cross => (
            line,
            vec![],
            mid(vec![(-4, -4), (4, 4), (0, 0), (-4, 4), (4, -4)]),
        ),
        Marker::Ring => (line, vec![], mid(octagon(4.0))),
    }
}

fn draw<DB, X, Y>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    spec: &ChartSpec,
    series: &[Series],
    x: X,
    y: Y,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(root)
        .caption(&spec.title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(65)
        .build_cartesian_2d(x, y)?;
    chart
        .configure_mesh()
        .x_desc(&spec.x_label)
        .y_desc(&spec.y_label)
        .x_label_formatter(&|v| trim_number(*v))
        .y_label_formatter(&|v| trim_number(*v))
        .draw()?;
    for s in series {
        let color = PALETTE[s.color % PALETTE.len()];
        let style = color.stroke_width(2);
        let pts: Vec<(f64, f64)> = finite(s).collect();
        let anno = if s.dashed {
            chart.draw_series(DashedLineSeries::new(pts.iter().copied(), 6, 4, style))?
        } else {
            chart.draw_series(LineSeries::new(pts.iter().copied(), style))?
        };
        let (marker, dashed) = (marker_of(s), s.dashed);
        anno.label(s.name.clone()).legend(move |(x, y)| {
            let (path, fill, outline) = legend_shapes(dashed, marker);
            let line = color.stroke_width(2);
            EmptyElement::at((x, y))
                + PathElement::new(path, line)
                + Polygon::new(fill, color.filled())
                + PathElement::new(outline, line)
        });
        let marks = marker_points(&pts);
        let r = match marker {
            None => Ok(()),
            Some(Marker::Circle) => chart
                .draw_series(marks.iter().map(|&p| Circle::new(p, 4, color.filled())))
                .map(|_| ()),
            Some(Marker::Triangle) => chart
                .draw_series(
                    marks
                        .iter()
                        .map(|&p| TriangleMarker::new(p, 5, color.filled())),
                )
                .map(|_| ()),
            Some(Marker::Square) => chart
                .draw_series(marks.iter().map(|&p| {
                    EmptyElement::at(p) + Rectangle::new([(-4, -4), (4, 4)], color.filled())
                }))
                .map(|_| ()),
            Some(Marker::Cross) => chart
                .draw_series(
                    marks
                        .iter()
                        .map(|&p| Cross::new(p, 4, color.stroke_width(2))),
                )
                .map(|_| ()),
            Some(Marker::Ring) => chart
                .draw_series(
                    marks
                        .iter()
                        .map(|&p| Circle::new(p, 4, color.stroke_width(2))),
                )
                .map(|_| ()),
        };
        r?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
}

/// `1024`, `2.5`, `0.01`: no trailing zeros on axis labels.
fn trim_number(v: f64) -> String {
    if v.abs() >= 100.0 || v.fract().abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(name: &str, points: &[(f64, f64)], dashed: bool, color: usize) -> Series {
        Series {
            name: name.into(),
            points: points.to_vec(),
            dashed,
            color,
        }
    }

    fn spec() -> ChartSpec {
        ChartSpec {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            log_x: true,
            log_y: false,
        }
    }

    #[test]
    fn a_dwarfing_series_makes_the_y_axis_log() {
        let big = line("wf2q+", &[(1.0, 40.0), (32768.0, 900.0)], false, 0);
        let small = line("qfq", &[(1.0, 20.0), (32768.0, 30.0)], false, 1);
        let close = line("drr", &[(1.0, 25.0), (32768.0, 60.0)], false, 2);
        assert!(dwarfed(&[big.clone(), small.clone()]));
        assert!(!dwarfed(&[small.clone(), close.clone()]));
        assert!(
            !dwarfed(std::slice::from_ref(&big)),
            "one series dwarfs nothing"
        );
        let (log, lo, hi) = y_axis(&spec(), &[big, small.clone()]).unwrap();
        assert!(log && lo > 0.0 && hi > 900.0);
        let (log, lo, _) = y_axis(&spec(), &[small, close]).unwrap();
        assert!(!log && lo == 0.0);
        // A zero value cannot go on a log axis: stays linear.
        let zero = line("none", &[(1.0, 0.0), (2.0, 1.0)], false, 0);
        let huge = line("x", &[(1.0, 1000.0)], false, 1);
        assert!(!dwarfed(&[zero, huge]));
    }

    #[test]
    fn a_cdf_reaches_the_top_of_a_linear_axis() {
        let cdf = |top: f64| {
            let pts: Vec<(f64, f64)> = (0..=100)
                .map(|i| (10.0 + i as f64, top * i as f64 / 100.0))
                .collect();
            line("busy", &pts, false, 0)
        };
        assert_eq!(y_axis(&spec(), &[cdf(100.0)]).unwrap(), (false, 0.0, 100.0));
        assert_eq!(y_axis(&spec(), &[cdf(1.0)]).unwrap(), (false, 0.0, 1.0));
        assert_eq!(round_up(123.0), 150.0);
        assert_eq!(round_up(0.37), 0.4);
        assert_eq!(round_up(1000.0), 1000.0);
    }

    #[test]
    fn ticks_sit_on_the_flow_counts() {
        let counts: Vec<(f64, f64)> = (0..=15).map(|k| (f64::from(1u32 << k), 5.0)).collect();
        let t = x_ticks(&[line("drr", &counts, false, 0)]).unwrap();
        assert!(t.len() <= MAX_TICKS, "{t:?}");
        assert_eq!(t.first(), Some(&1.0));
        assert_eq!(t.last(), Some(&32768.0));
        for x in &t {
            assert!(counts.iter().any(|p| p.0 == *x), "tick {x} has no data");
        }
        assert!(t.contains(&1024.0) || t.contains(&64.0), "{t:?}");
        // A CDF has too many x values for ticks of its own.
        let cdf: Vec<(f64, f64)> = (0..1000).map(|i| (f64::from(i), 0.0)).collect();
        assert!(x_ticks(&[line("cdf", &cdf, false, 0)]).is_none());
    }

    #[test]
    fn markers_are_thinned_and_differ_by_series() {
        let pts: Vec<(f64, f64)> = (0..1004).map(|i| (f64::from(i), 1.0)).collect();
        let m = marker_points(&pts);
        assert!(m.len() <= MAX_MARKERS, "{}", m.len());
        assert_eq!(m.last(), pts.last());
        let a = line("a", &pts, false, 1);
        let b = line("b", &pts, false, 2);
        let d = line("d", &pts, true, 2);
        assert_ne!(marker_of(&a), marker_of(&b));
        assert_eq!(marker_of(&d), None, "dashed lines carry no marker");
        let one = line("one", &[(2000.0, 5.0)], true, 1);
        assert!(
            marker_of(&one).is_some(),
            "a single dashed point is still drawn"
        );
    }

    #[test]
    fn csv_headers_refuse_repeated_names() {
        assert_eq!(csv_header(&["a", "b"]).unwrap(), "a,b");
        assert_eq!(
            csv_header(&["series", "flows", "sched", "flows"])
                .unwrap_err()
                .to_string(),
            "CSV column `flows` named twice"
        );
        // The sweeps' CSV files: x is `flows` or `m`, never repeated.
        for x in ["flows", "m"] {
            let text = crate::cost::sweep::to_csv(x, &[]);
            let header: Vec<&str> = text.trim_end().split(',').collect();
            assert!(csv_header(&header).is_ok(), "{x}: {text}");
        }
    }

    #[test]
    fn a_chart_with_every_style_is_written() {
        let dir = std::env::temp_dir().join(format!("fairway-chart-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("all.svg");
        let series: Vec<Series> = (0..6)
            .map(|i| {
                let pts: Vec<(f64, f64)> = (0..8)
                    .map(|k| (f64::from(1u32 << k), (i + 1) as f64 * (k + 1) as f64))
                    .collect();
                line(&format!("s{i}"), &pts, i == 5, i)
            })
            .collect();
        write_svg(&path, &spec(), &series).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.contains("s0") && svg.contains("s5"));
        assert!(svg.contains("\n128\n"), "a tick on the last x value");
        std::fs::remove_dir_all(&dir).ok();
    }
}
