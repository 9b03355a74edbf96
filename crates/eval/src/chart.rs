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
//! - **Log axes are readable and say so**: labels at the powers of ten,
//!   with the 2 and 5 multiples when fewer than four powers fall inside
//!   (see [`log_ticks`]); the axis description ends in "(log scale)".
//! - **The legend covers nothing**: it sits in a framed grid below the
//!   plot; the image grows by its rows.
//! - **No line hides another unannounced**: a series with the very same
//!   points as an earlier one says "(same as …)" in the legend, and
//!   dashed lines take turns over [`DASHES`], so two on the same values
//!   still show both colours.
//! - **Every label fits**: the right margin leaves room for half the last
//!   x label, which is centred on the axis end.

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
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

/// Labels of a logarithmic axis from `lo` to `hi` (both > 0): every
/// power of ten inside, and when the range spans less than two decades
/// fewer than four powers (too few to read a value off), also the 2 and 5
/// multiples, and if still fewer than three labels, every integer multiple. Over many decades
/// every other power (or sparser), so labels never crowd.
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    if !(lo > 0.0 && hi > lo && hi.is_finite()) {
        return Vec::new();
    }
    let (k0, k1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let stride = usize::try_from((k1 - k0) / 12 + 1).unwrap_or(1);
    let within = |steps: &[f64], stride: usize| {
        let mut t = Vec::new();
        for k in (k0..=k1).step_by(stride) {
            for m in steps {
                // From the decimal text, so 0.3 is 0.3, not 0.30000000000000004.
                let v: f64 = format!("{m}e{k}").parse().unwrap_or(f64::NAN);
                if v >= lo * (1.0 - 1e-12) && v <= hi * (1.0 + 1e-12) {
                    t.push(v);
                }
            }
        }
        t
    };
    let decades = within(&[1.0], stride);
    if decades.len() >= 4 {
        return decades;
    }
    let fives = within(&[1.0, 2.0, 5.0], 1);
    if fives.len() >= 3 {
        return fives;
    }
    within(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0], 1)
}

/// For each series, the first earlier series with the very same finite
/// points (same x, y equal to 1e-9 relative): drawn on top of it, the
/// later line would hide the earlier one without a word.
pub fn same_as(series: &[Series]) -> Vec<Option<usize>> {
    let eq = |a: &Series, b: &Series| {
        let (pa, pb): (Vec<_>, Vec<_>) = (finite(a).collect(), finite(b).collect());
        !pa.is_empty()
            && pa.len() == pb.len()
            && pa
                .iter()
                .zip(&pb)
                .all(|(p, q)| p.0 == q.0 && (p.1 - q.1).abs() <= 1e-9 * p.1.abs().max(q.1.abs()))
    };
    (0..series.len())
        .map(|i| (0..i).find(|&j| eq(&series[i], &series[j])))
        .collect()
}

/// An axis description with " (log scale)" appended when the axis is
/// logarithmic and the caller's text does not say so already.
fn log_desc(label: &str, log: bool) -> String {
    if log && !label.to_lowercase().contains("log scale") {
        format!("{label} (log scale)")
    } else {
        label.to_string()
    }
}

/// Approximate width in pixels of `text` in a sans-serif font of `size`
/// pixels (digits and average letters are about 0.64 em wide).
fn text_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * 0.64 * size
}

/// Pixel size of the tick labels plotters draws (its default font).
const TICK_FONT: f64 = 10.0;
/// Pixel size of the legend text.
const LEGEND_FONT: f64 = 13.0;
/// Height of one legend row, pixels.
const LEGEND_ROW: i32 = 20;
/// Width of the chart; its plot area is 560 pixels high, the legend below.
const WIDTH: u32 = 900;
const PLOT_HEIGHT: u32 = 560;

/// The right margin: room for half of the last x label, which is centred
/// on the right end of the axis and would otherwise run off the image.
fn right_margin(last_label: &str) -> i32 {
    (text_width(last_label, TICK_FONT) / 2.0 + 8.0)
        .max(15.0)
        .ceil() as i32
}

/// The legend's grid below the plot: `(columns, rows, column width)`,
/// as many columns as the longest entry allows.
pub fn legend_grid(names: &[String]) -> (usize, usize, i32) {
    let widest = names
        .iter()
        .map(|n| text_width(n, LEGEND_FONT))
        .fold(0.0, f64::max);
    let col_w = (widest + 50.0).ceil() as i32;
    let usable = WIDTH as i32 - 30;
    let cols = usize::try_from(usable / col_w.max(1))
        .unwrap_or(1)
        .clamp(1, names.len().max(1));
    let rows = names.len().div_ceil(cols);
    (cols, rows, col_w)
}

/// Everything [`draw`] needs besides the coordinates.
struct Layout {
    x_desc: String,
    y_desc: String,
    right: i32,
    /// Labels on a linear x axis (plotters picks round values, at most this many).
    x_labels: usize,
    /// Legend text per series (with "(same as …)" notes).
    names: Vec<String>,
}

/// Writes `series` as an SVG chart to `path`: a 900×560 plot with the
/// legend in rows below it, where it covers no data.
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
    let x_keys = spec.log_x.then(|| log_x_keys(series, x0.max(1e-9), x1));
    let last_x = x_keys
        .as_ref()
        .and_then(|t| t.last().copied())
        .unwrap_or(x1);
    let same = same_as(series);
    let names: Vec<String> = series
        .iter()
        .zip(&same)
        .map(|(s, d)| match d {
            Some(j) => format!("{} (same as {})", s.name, series[*j].name),
            None => s.name.clone(),
        })
        .collect();
    let layout = Layout {
        x_desc: log_desc(&spec.x_label, spec.log_x),
        y_desc: log_desc(&spec.y_label, log_y),
        right: right_margin(&trim_number(last_x)),
        x_labels: integer_grid(series).unwrap_or(10),
        names,
    };
    let (_, rows, _) = legend_grid(&layout.names);
    let legend_h = u32::try_from(rows).unwrap_or(0) * LEGEND_ROW as u32 + 20;
    let root = SVGBackend::new(path, (WIDTH, PLOT_HEIGHT + legend_h)).into_drawing_area();
    let y_keys = log_ticks(y_lo, y_hi);
    let r = match (x_keys, log_y) {
        (Some(t), true) => draw(
            &root,
            &layout,
            spec,
            series,
            (x0.max(1e-9)..x1).log_scale().with_key_points(t),
            (y_lo..y_hi).log_scale().with_key_points(y_keys),
        ),
        (Some(t), false) => draw(
            &root,
            &layout,
            spec,
            series,
            (x0.max(1e-9)..x1).log_scale().with_key_points(t),
            y_lo..y_hi,
        ),
        (None, true) => draw(
            &root,
            &layout,
            spec,
            series,
            x0..x1,
            (y_lo..y_hi).log_scale().with_key_points(y_keys),
        ),
        (None, false) => draw(&root, &layout, spec, series, x0..x1, y_lo..y_hi),
    };
    r.and_then(|()| root.present())
        .map_err(|e| ChartError::Draw {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
}

/// Labels of a log x axis: the data's own x values when they lie on a
/// grid of at least three, else those few values plus the labels of
/// [`log_ticks`] that keep clear of the labels already placed.
fn log_x_keys(series: &[Series], lo: f64, hi: f64) -> Vec<f64> {
    let grid = x_ticks(series).unwrap_or_default();
    if grid.len() >= 3 {
        return grid;
    }
    // About 70 pixels between labels on the 800-pixel axis.
    let gap = (hi / lo).log10() * 70.0 / 800.0;
    let mut t = grid;
    for v in log_ticks(lo, hi) {
        if t.iter().all(|g| (g.log10() - v.log10()).abs() > gap) {
            t.push(v);
        }
    }
    t.sort_by(f64::total_cmp);
    t
}

/// When every x value is an integer and they span at most a dozen
/// steps (scheduler numbers, reader numbers), one label per integer, so
/// the axis shows no 1.5 that names no point.
fn integer_grid(series: &[Series]) -> Option<usize> {
    let xs: Vec<f64> = series.iter().flat_map(|s| finite(s).map(|p| p.0)).collect();
    let lo = xs.iter().copied().reduce(f64::min)?;
    let hi = xs.iter().copied().reduce(f64::max)?;
    let whole = xs.iter().all(|x| x.fract() == 0.0);
    (whole && hi > lo && hi - lo <= 12.0).then(|| (hi - lo) as usize + 1)
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
    layout: &Layout,
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
    let (plot, legend) = root.split_vertically(PLOT_HEIGHT);
    let mut chart = ChartBuilder::on(&plot)
        .caption(&spec.title, ("sans-serif", 20))
        .margin_top(15)
        .margin_left(15)
        .margin_bottom(15)
        .margin_right(layout.right)
        .x_label_area_size(45)
        .y_label_area_size(65)
        .build_cartesian_2d(x, y)?;
    chart
        .configure_mesh()
        .x_desc(&layout.x_desc)
        .y_desc(&layout.y_desc)
        .x_labels(layout.x_labels)
        .x_label_formatter(&|v| trim_number(*v))
        .y_label_formatter(&|v| trim_number(*v))
        .draw()?;
    for (s, dash) in series.iter().zip(dashes(series)) {
        let color = PALETTE[s.color % PALETTE.len()];
        let style = color.stroke_width(2);
        let pts: Vec<(f64, f64)> = finite(s).collect();
        if let Some((on, off)) = dash {
            chart.draw_series(DashedLineSeries::new(pts.iter().copied(), on, off, style))?;
        } else {
            chart.draw_series(LineSeries::new(pts.iter().copied(), style))?;
        }
        draw_markers(&mut chart, marker_of(s), color, &marker_points(&pts))?;
    }
    draw_legend(&legend, layout, series)
}

/// Dash patterns (dash, gap in pixels) of the dashed lines, in turn, so
/// that two dashed lines on the same values still show both colours.
pub const DASHES: [(u32, u32); 4] = [(6, 4), (14, 5), (3, 3), (10, 3)];

/// Each series' dash pattern: the k-th dashed series gets `DASHES[k]`
/// (cyclically); solid ones none.
pub fn dashes(series: &[Series]) -> Vec<Option<(u32, u32)>> {
    let mut k = 0;
    series
        .iter()
        .map(|s| {
            s.dashed.then(|| {
                k += 1;
                DASHES[(k - 1) % DASHES.len()]
            })
        })
        .collect()
}

/// The markers of one line.
fn draw_markers<DB, X, Y>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    marker: Option<Marker>,
    color: RGBColor,
    marks: &[(f64, f64)],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB: DrawingBackend,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let _ =
        match marker {
            None => return Ok(()),
            Some(Marker::Circle) => {
                chart.draw_series(marks.iter().map(|&p| Circle::new(p, 4, color.filled())))?
            }
            Some(Marker::Triangle) => chart.draw_series(
                marks
                    .iter()
                    .map(|&p| TriangleMarker::new(p, 5, color.filled())),
            )?,
            Some(Marker::Square) => chart.draw_series(marks.iter().map(|&p| {
                EmptyElement::at(p) + Rectangle::new([(-4, -4), (4, 4)], color.filled())
            }))?,
            Some(Marker::Cross) => chart.draw_series(
                marks
                    .iter()
                    .map(|&p| Cross::new(p, 4, color.stroke_width(2))),
            )?,
            Some(Marker::Ring) => chart.draw_series(
                marks
                    .iter()
                    .map(|&p| Circle::new(p, 4, color.stroke_width(2))),
            )?,
        };
    Ok(())
}

/// The legend, in a framed grid below the plot (column by column, in
/// series order): outside the plot area, it never covers a point.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    layout: &Layout,
    series: &[Series],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (cols, rows, col_w) = legend_grid(&layout.names);
    let rows_i = i32::try_from(rows).unwrap_or(0);
    let cols_i = i32::try_from(cols).unwrap_or(1);
    let (left, top) = (15, 5);
    let frame = [
        (left, top),
        (left + cols_i * col_w, top + rows_i * LEGEND_ROW + 10),
    ];
    area.draw(&Rectangle::new(frame, BLACK.stroke_width(1)))?;
    let text = TextStyle::from(("sans-serif", LEGEND_FONT).into_font())
        .pos(Pos::new(HPos::Left, VPos::Center));
    let dash = dashes(series);
    for (i, (s, name)) in series.iter().zip(&layout.names).enumerate() {
        let (c, r) = (i / rows.max(1), i % rows.max(1));
        let x = left + 10 + i32::try_from(c).unwrap_or(0) * col_w;
        let y = top + 5 + LEGEND_ROW / 2 + i32::try_from(r).unwrap_or(0) * LEGEND_ROW;
        let color = PALETTE[s.color % PALETTE.len()];
        let line = color.stroke_width(2);
        if let (Some((on, off)), None) = (dash[i], marker_of(s)) {
            // The line's own dash pattern, so two dashed lines tell apart.
            let sample = DashedPathElement::new(vec![(x, y), (x + 24, y)], on, off, line);
            area.draw(&sample)?;
            area.draw(&Text::new(name.clone(), (x + 32, y), text.clone()))?;
            continue;
        }
        let (path, fill, outline) = legend_shapes(s.dashed, marker_of(s));
        area.draw(
            &(EmptyElement::at((x, y))
                + PathElement::new(path, line)
                + Polygon::new(fill, color.filled())
                + PathElement::new(outline, line)),
        )?;
        area.draw(&Text::new(name.clone(), (x + 32, y), text.clone()))?;
    }
    Ok(())
}

/// `1024`, `2.5`, `0.01`: no trailing zeros on axis labels.
fn trim_number(v: f64) -> String {
    if v.abs() >= 100.0 || v.fract().abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        // Two significant decimals at least: a log axis's 0.002 must not read 0.
        let digits = (2.0 - v.abs().log10().floor()).clamp(2.0, 12.0) as usize;
        let s = format!("{v:.digits$}");
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

    /// Writes a chart and returns its SVG text.
    fn render(name: &str, spec: &ChartSpec, series: &[Series]) -> String {
        let dir = std::env::temp_dir().join(format!("fairway-chart-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.svg");
        write_svg(&path, spec, series).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_dir_all(&dir).ok();
        svg
    }

    /// The value of attribute `name` in one SVG element's text.
    fn attr(elem: &str, name: &str) -> Option<f64> {
        let elem = format!(" {elem}");
        let at = elem.find(&format!(" {name}=\""))? + name.len() + 3;
        elem[at..].split('"').next()?.parse().ok()
    }

    /// Every `<text>` of an SVG: `(x, font size, content)`.
    fn texts(svg: &str) -> Vec<(f64, f64, String)> {
        svg.split("<text ")
            .skip(1)
            .filter_map(|t| {
                let (head, rest) = t.split_once('>')?;
                let body = rest.split("</text>").next()?.trim().to_string();
                Some((attr(head, "x")?, attr(head, "font-size")?, body))
            })
            .collect()
    }

    fn image_width(svg: &str) -> f64 {
        let head = svg.split("<svg").nth(1).unwrap().split('>').next().unwrap();
        attr(head, "width").unwrap()
    }

    #[test]
    fn the_last_x_label_is_not_clipped() {
        let pts: Vec<(f64, f64)> = [50e3, 100e3, 200e3, 400e3, 800e3, 1600e3]
            .iter()
            .map(|&x| (x, x / 1e5))
            .collect();
        let s = ChartSpec {
            log_x: false,
            ..spec()
        };
        for log_x in [false, true] {
            let svg = render(
                "clip",
                &ChartSpec { log_x, ..s.clone() },
                &[line("p98", &pts, false, 0)],
            );
            let (x, size, text) = texts(&svg)
                .into_iter()
                .find(|t| t.2 == "1600000")
                .unwrap_or_else(|| panic!("no 1600000 label (log x {log_x}): {:?}", texts(&svg)));
            let right = x + text_width(&text, size) / 2.0;
            assert!(
                right <= image_width(&svg),
                "label ends at {right} (log x {log_x})"
            );
        }
    }

    #[test]
    fn log_axes_have_enough_labels_and_say_so() {
        assert!(log_ticks(1.0, 1e6).len() >= 5, "{:?}", log_ticks(1.0, 1e6));
        assert_eq!(
            log_ticks(0.35, 60.0),
            [0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0]
        );
        assert_eq!(log_ticks(1000.0, 2500.0), [1000.0, 2000.0]);
        // Two measured rates: both labelled, with others in between, apart.
        let rates = [line("p98", &[(5e4, 1.0), (4e5, 2.0)], false, 0)];
        let k = log_x_keys(&rates, 5e4, 4e5);
        assert!(
            k.len() >= 3 && k.contains(&5e4) && k.contains(&4e5),
            "{k:?}"
        );
        let gap = (8f64).log10() * 70.0 / 800.0;
        assert!(k.windows(2).all(|w| (w[1] / w[0]).log10() >= gap), "{k:?}");
        // A CDF on a log x axis (no grid) and a log y axis within 0.4..60.
        let pts: Vec<(f64, f64)> = (0..=600)
            .map(|i| (10f64.powf(f64::from(i) / 100.0), 0.4 + f64::from(i) / 10.0))
            .collect();
        let s = ChartSpec {
            log_y: true,
            ..spec()
        };
        let svg = render("log", &s, &[line("cdf", &pts, false, 0)]);
        let labels: Vec<String> = texts(&svg).into_iter().map(|t| t.2).collect();
        for want in ["1", "10", "100", "1000", "10000", "100000", "1000000"] {
            assert!(
                labels.iter().any(|l| l == want),
                "x label {want}: {labels:?}"
            );
        }
        for want in ["0.5", "2", "5", "20", "50"] {
            assert!(
                labels.iter().any(|l| l == want),
                "y label {want}: {labels:?}"
            );
        }
        assert!(labels.contains(&"x (log scale)".to_string()), "{labels:?}");
        assert!(labels.contains(&"y (log scale)".to_string()), "{labels:?}");
    }

    #[test]
    fn identical_series_are_named_in_the_legend() {
        let pts = [(60.0, 1.0), (70.0, 1.02), (80.0, 1.05)];
        let exact = line("exact", &pts, false, 0);
        let approx = line("approx", &pts, false, 1);
        let other = line(
            "one-bucket",
            &[(60.0, 2.0), (70.0, 3.0), (80.0, 4.0)],
            false,
            2,
        );
        let series = [exact, other, approx];
        assert_eq!(same_as(&series), [None, None, Some(0)]);
        // Dashed lines on top of each other differ in their dashes.
        let dashed: Vec<Series> = series
            .iter()
            .map(|s| Series {
                dashed: true,
                ..s.clone()
            })
            .collect();
        let d = dashes(&dashed);
        assert!(d[0].is_some() && d[0] != d[2], "{d:?}");
        let svg = render(
            "same",
            &ChartSpec {
                log_x: false,
                ..spec()
            },
            &series,
        );
        assert!(svg.contains("approx (same as exact)"), "{svg}");
    }

    #[test]
    fn the_legend_covers_no_point() {
        // Points in every corner, and one where an in-plot legend sat.
        let pts = [
            (0.0, 100.0),
            (1.0, 95.0),
            (5.0, 50.0),
            (10.0, 100.0),
            (10.0, 0.0),
        ];
        let names = ["busy-polling arbiter, a long legend entry", "b", "c", "d"];
        let series: Vec<Series> = names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let p: Vec<(f64, f64)> = pts.iter().map(|&(x, y)| (x, y - i as f64)).collect();
                line(n, &p, false, 0)
            })
            .collect();
        let svg = render(
            "legend",
            &ChartSpec {
                log_x: false,
                ..spec()
            },
            &series,
        );
        let frame = svg
            .split("<rect ")
            .skip(1)
            .filter(|r| r.contains("fill=\"none\" stroke=\"#000000\""))
            .last()
            .expect("a framed legend");
        let (x, y) = (attr(frame, "x").unwrap(), attr(frame, "y").unwrap());
        let (w, h) = (
            attr(frame, "width").unwrap(),
            attr(frame, "height").unwrap(),
        );
        let circles: Vec<(f64, f64)> = svg
            .split("<circle ")
            .skip(1)
            .map(|c| (attr(c, "cx").unwrap(), attr(c, "cy").unwrap()))
            .collect();
        assert_eq!(circles.len(), pts.len() * names.len());
        for (cx, cy) in circles {
            let inside = cx + 4.0 >= x && cx - 4.0 <= x + w && cy + 4.0 >= y && cy - 4.0 <= y + h;
            assert!(
                !inside,
                "point ({cx}, {cy}) under the legend {x},{y} {w}x{h}"
            );
        }
    }
}
