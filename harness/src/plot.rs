//! Line plots as SVG (plotters' SVG backend only: text is emitted as SVG
//! `<text>`, so no font files or system libraries are needed).

use plotters::prelude::*;

pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

impl Series {
    pub fn new(label: &str, points: Vec<(f64, f64)>) -> Self {
        Self {
            label: label.to_string(),
            points,
        }
    }
}

const COLORS: [RGBColor; 8] = [
    RGBColor(0xD6, 0x27, 0x28),
    RGBColor(0x1F, 0x77, 0xB4),
    RGBColor(0x2C, 0xA0, 0x2C),
    RGBColor(0xFF, 0x7F, 0x0E),
    RGBColor(0x94, 0x67, 0xBD),
    RGBColor(0x8C, 0x56, 0x4B),
    RGBColor(0xE3, 0x77, 0xC2),
    RGBColor(0x17, 0xBE, 0xCF),
];

/// Writes a line plot of `series` to `path`.
pub fn lines(
    path: &str,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let x_max = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(0.0f64, f64::max)
        .max(1.0);
    let y_max = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0f64, f64::max)
        * 1.1;
    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max.max(1.0))
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(|e| err(&e))?;
    for (i, s) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let style = ShapeStyle {
            color: color.to_rgba(),
            filled: true,
            stroke_width: 2,
        };
        chart
            .draw_series(LineSeries::new(s.points.iter().copied(), style))
            .map_err(|e| err(&e))?
            .label(s.label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        chart
            .draw_series(s.points.iter().map(|&p| Circle::new(p, 3, style)))
            .map_err(|e| err(&e))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
