//! Elo charts as SVG (plotters' SVG backend, no font files: about 3 s of extra build time): a
//! line with 95% error bars per series of networks (the promoted networks of a run by
//! generation; or several runs by CPU hours, as `atomzero gauntlet` draws them), and one
//! horizontal line per fixed baseline.

use crate::rating::RatingList;
use plotters::prelude::*;
use std::fmt;

/// Colours of the baseline lines, in order.
const BASELINE_COLORS: [RGBColor; 6] = [
    RGBColor(200, 30, 30),
    RGBColor(0, 140, 60),
    RGBColor(150, 60, 170),
    RGBColor(220, 120, 0),
    RGBColor(0, 150, 170),
    RGBColor(110, 110, 110),
];

/// One network on the chart.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct PlotPoint {
    /// Generation (x axis).
    pub x: f64,
    /// Elo.
    pub elo: f64,
    /// Half-width of the 95% interval (not drawn if not finite).
    pub error: f64,
}

/// The chart could not be drawn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlotError(pub String);

impl fmt::Display for PlotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot draw the chart: {}", self.0)
    }
}

impl std::error::Error for PlotError {}

/// The generation number in a network's player name: the file stem of the path (after a
/// `net:`/`policy:` prefix, before any `,options`), optionally prefixed `gen`/`gen-`, must be
/// all digits: `000012`, `gen-12`, `net:runs/a/models/000012.safetensors,nodes=800` are
/// generation 12; `random` and `alphabeta:depth=2` have none.
pub fn generation_of(name: &str) -> Option<u32> {
    let path = name.strip_prefix("net:").or_else(|| name.strip_prefix("policy:")).unwrap_or(name);
    let path = path.split(',').next().unwrap_or(path);
    let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let stem = file.split('.').next().unwrap_or(file);
    let digits = stem.strip_prefix("gen-").or_else(|| stem.strip_prefix("gen")).unwrap_or(stem);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Splits a rating list into network points (players with a generation, in generation order)
/// and baselines (the rest).
pub fn generation_series(
    list: &RatingList,
    generation: impl Fn(&str) -> Option<u32>,
) -> (Vec<PlotPoint>, Vec<(String, f64)>) {
    let mut points = Vec::new();
    let mut baselines = Vec::new();
    for r in &list.ratings {
        match generation(&r.name) {
            Some(g) => points.push(PlotPoint { x: g as f64, elo: r.elo, error: r.error }),
            None => baselines.push((r.name.clone(), r.elo)),
        }
    }
    points.sort_by(|a, b| a.x.total_cmp(&b.x));
    (points, baselines)
}

/// Draws the Elo-over-generations chart (one series, "network") and returns the SVG text.
pub fn elo_plot_svg(
    title: &str,
    points: &[PlotPoint],
    baselines: &[(String, f64)],
) -> Result<String, PlotError> {
    let series = [("network".to_string(), points.to_vec())];
    elo_chart_svg(title, "generation", true, &series, baselines)
}

/// Colours of the network series, in order.
const SERIES_COLORS: [RGBColor; 4] =
    [RGBColor(20, 60, 200), RGBColor(230, 100, 20), RGBColor(20, 150, 20), RGBColor(150, 20, 150)];

/// Draws an Elo chart with one line (points with 95% error bars) per named series, one
/// horizontal line per fixed baseline, `x_label` under the x axis (whole-number ticks only if
/// `integer_x`), and returns the SVG text.
pub fn elo_chart_svg(
    title: &str,
    x_label: &str,
    integer_x: bool,
    series: &[(String, Vec<PlotPoint>)],
    baselines: &[(String, f64)],
) -> Result<String, PlotError> {
    let err = |e: &dyn fmt::Display| PlotError(e.to_string());
    let points = || series.iter().flat_map(|(_, points)| points.iter());
    let (mut x0, mut x1) =
        points().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| (lo.min(p.x), hi.max(p.x)));
    if !x0.is_finite() {
        (x0, x1) = (0.0, 1.0);
    }
    let x_pad = if integer_x { 0.5 } else { ((x1 - x0) * 0.04).max(1e-3) };
    let (x0, x1) = (x0 - x_pad, x1 + x_pad);
    let mut ys: Vec<f64> = baselines.iter().map(|b| b.1).collect();
    for p in points() {
        ys.push(p.elo);
        if p.error.is_finite() {
            ys.push(p.elo - p.error);
            ys.push(p.elo + p.error);
        }
    }
    ys.retain(|y| y.is_finite());
    let (mut y0, mut y1) =
        ys.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &y| (lo.min(y), hi.max(y)));
    if !y0.is_finite() {
        (y0, y1) = (0.0, 0.0);
    }
    if y1 - y0 < 100.0 {
        let mid = (y0 + y1) / 2.0;
        (y0, y1) = (mid - 50.0, mid + 50.0);
    }
    let pad = (y1 - y0) * 0.08;
    let (y0, y1) = (y0 - pad, y1 + pad);

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 540)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(|e| err(&e))?;
        let integer_labels = |x: &f64| {
            if (x - x.round()).abs() < 1e-9 {
                format!("{}", x.round() as i64)
            } else {
                String::new()
            }
        };
        let decimal_labels = |x: &f64| format!("{x:.2}");
        let x_formatter: &dyn Fn(&f64) -> String =
            if integer_x { &integer_labels } else { &decimal_labels };
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc("Elo")
            .x_labels(12)
            .light_line_style(RGBColor(238, 238, 238))
            .x_label_formatter(x_formatter)
            .y_label_formatter(&|y| format!("{y:.0}"))
            .draw()
            .map_err(|e| err(&e))?;
        for (i, (name, elo)) in baselines.iter().enumerate() {
            let color = BASELINE_COLORS[i % BASELINE_COLORS.len()].to_rgba();
            chart
                .draw_series(LineSeries::new(vec![(x0, *elo), (x1, *elo)], color.stroke_width(2)))
                .map_err(|e| err(&e))?
                .label(name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        }
        for (i, (name, points)) in series.iter().enumerate() {
            let color = SERIES_COLORS[i % SERIES_COLORS.len()];
            let line = color.stroke_width(2);
            chart
                .draw_series(LineSeries::new(points.iter().map(|p| (p.x, p.elo)), line))
                .map_err(|e| err(&e))?
                .label(name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], line));
            chart
                .draw_series(points.iter().filter(|p| p.error.is_finite()).map(|p| {
                    PathElement::new(vec![(p.x, p.elo - p.error), (p.x, p.elo + p.error)], color)
                }))
                .map_err(|e| err(&e))?;
            chart
                .draw_series(points.iter().map(|p| Circle::new((p.x, p.elo), 3, color.filled())))
                .map_err(|e| err(&e))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generations_come_from_file_stems() {
        assert_eq!(generation_of("000012"), Some(12));
        assert_eq!(generation_of("gen-3"), Some(3));
        assert_eq!(generation_of("net:runs/a/models/000012.safetensors,nodes=800"), Some(12));
        assert_eq!(generation_of("policy:models/7.safetensors"), Some(7));
        assert_eq!(generation_of("random"), None);
        assert_eq!(generation_of("alphabeta:depth=2"), None);
        assert_eq!(generation_of("uci:stockfish"), None);
    }

    #[test]
    fn draws_a_chart() {
        let points = [
            PlotPoint { x: 0.0, elo: 10.0, error: 40.0 },
            PlotPoint { x: 1.0, elo: 150.0, error: 35.0 },
            PlotPoint { x: 2.0, elo: 260.0, error: f64::INFINITY },
        ];
        let baselines = [("random".to_string(), 0.0), ("greedy".to_string(), 120.0)];
        let svg = elo_plot_svg("Elo over generations", &points, &baselines).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..80.min(svg.len())]);
        assert!(svg.trim_end().ends_with("</svg>"));
        for text in ["Elo over generations", "random", "greedy", "network", "generation"] {
            assert!(svg.contains(text), "missing {text}");
        }
        // Deterministic output.
        assert_eq!(svg, elo_plot_svg("Elo over generations", &points, &baselines).unwrap());
        // An empty chart still draws.
        assert!(elo_plot_svg("empty", &[], &[]).unwrap().contains("</svg>"));
        // Several runs over CPU hours: one named line each.
        let series = [
            ("run-a".to_string(), points.to_vec()),
            ("run-b".to_string(), vec![PlotPoint { x: 0.25, elo: 90.0, error: 30.0 }]),
        ];
        let svg =
            elo_chart_svg("Elo over CPU time", "CPU hours", false, &series, &baselines).unwrap();
        for text in ["Elo over CPU time", "run-a", "run-b", "CPU hours", "random"] {
            assert!(svg.contains(text), "missing {text}");
        }
    }
}
