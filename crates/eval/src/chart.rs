//! Line charts of the sweeps as SVG (plotters), with log axes where the
//! papers use them (seed 003 Fig. 10: cost versus number of flows).

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use std::path::Path;

/// One line of a chart.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// `(x, y)` points, in x order.
    pub points: Vec<(f64, f64)>,
    /// Drawn dashed (reference lines).
    pub dashed: bool,
    /// Index into the palette, so related lines share a colour.
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
    /// Logarithmic y axis.
    pub log_y: bool,
}

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

/// Writes `series` as an 900×560 SVG chart to `path`.
pub fn write_svg(path: &Path, spec: &ChartSpec, series: &[Series]) -> Result<(), String> {
    let pts = series.iter().flat_map(|s| s.points.iter().copied());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for (x, y) in pts.filter(|p| p.0.is_finite() && p.1.is_finite()) {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if x0 > x1 {
        return Err("nothing to plot".into());
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    // Room above and below the data; log axes need positive bounds.
    let (y_lo, y_hi) = if spec.log_y {
        ((y0 * 0.8).max(1e-3), (y1 * 1.25).max(y0 * 2.0))
    } else {
        // Costs are positive: a linear axis starts at 0.
        (0.0, y1 * 1.1 + 1.0)
    };
    let (x_lo, x_hi) = if spec.log_x {
        (x0.max(1e-9), x1)
    } else {
        (x0, x1)
    };
    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    let r = match (spec.log_x, spec.log_y) {
        (true, true) => draw(
            &root,
            spec,
            series,
            (x_lo..x_hi).log_scale(),
            (y_lo..y_hi).log_scale(),
        ),
        (true, false) => draw(&root, spec, series, (x_lo..x_hi).log_scale(), y_lo..y_hi),
        (false, true) => draw(&root, spec, series, x_lo..x_hi, (y_lo..y_hi).log_scale()),
        (false, false) => draw(&root, spec, series, x_lo..x_hi, y_lo..y_hi),
    };
    r.and_then(|()| root.present().map_err(|e| e.to_string()))
        .map_err(|e| format!("{}: {e}", path.display()))
}

fn draw<DB, X, Y>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    spec: &ChartSpec,
    series: &[Series],
    x: X,
    y: Y,
) -> Result<(), String>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let err = |e: &dyn std::fmt::Display| e.to_string();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(root)
        .caption(&spec.title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(65)
        .build_cartesian_2d(x, y)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc(&spec.x_label)
        .y_desc(&spec.y_label)
        .x_label_formatter(&|v| trim_number(*v))
        .y_label_formatter(&|v| trim_number(*v))
        .draw()
        .map_err(|e| err(&e))?;
    for s in series {
        let color = PALETTE[s.color % PALETTE.len()];
        let style = color.stroke_width(2);
        let anno = if s.dashed {
            chart
                .draw_series(DashedLineSeries::new(s.points.iter().copied(), 6, 4, style))
                .map_err(|e| err(&e))?
        } else {
            chart
                .draw_series(LineSeries::new(s.points.iter().copied(), style))
                .map_err(|e| err(&e))?;
            chart
                .draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(|e| err(&e))?
        };
        anno.label(s.name.clone()).legend(move |(x, y)| {
            PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
        });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))
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
