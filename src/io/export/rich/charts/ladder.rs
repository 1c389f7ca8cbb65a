//! Each channel's MAE and RMSE at every granularity of the ladder; the distributions when
//! the matrix is summarised.

use super::{SERIES, SMALL, Scale, WIDTH, caption, frame_with_ticks, x_ends};
use crate::core::Metrics;
use crate::core::Report;
use crate::core::figures::{Figures, RungSpread, Spread};
use crate::io::export::doc::Align::{Left, Right};
use crate::io::export::doc::{Figure, Grid};
use crate::io::export::num::{error, sig};
use crate::io::export::svg::{Anchor, Svg, ink};

/// Reads one error of a channel's metrics.
type Metric = fn(&Metrics) -> f64;
/// Reads one error's spread of a rung.
type SpreadOf = fn(&RungSpread) -> Spread;

/// Each listed channel's MAE and RMSE at every granularity of the ladder; boxes of the
/// distribution when the matrix is summarised. `None` without a ladder.
pub(in crate::io::export::rich) fn ladder_errors(
    report: &Report,
    figures: &Figures,
) -> Option<Figure> {
    if report.ladder.is_empty() {
        return None;
    }
    if figures.summarised {
        return Some(ladder_spreads(report, figures));
    }
    let panel = 150.0;
    let (left, right, top, gap) = (70.0, 10.0, 34.0, 26.0);
    let height = top + 2.0 * panel + gap + 20.0;
    let mut svg = Svg::new(WIDTH, height);
    let rows = &figures.listed;
    let n = rows.len().max(1) as f64;
    let x = |k: usize| left + (k as f64 + 0.5) * (WIDTH - left - right) / n;
    legend(&mut svg, report, left);
    let metrics: [(&str, Metric); 2] = [("MAE", |m| m.mae), ("RMSE", |m| m.rmse)];
    for (p, (name, get)) in metrics.iter().enumerate() {
        let y0 = top + p as f64 * (panel + gap);
        let all = report
            .ladder
            .iter()
            .flat_map(|r| rows.iter().filter_map(|&i| r.channels.get(i)).map(get));
        let y = Scale::errors(&all.collect::<Vec<_>>(), y0 + panel, y0);
        frame_with_ticks(&mut svg, (left, y0, WIDTH - left - right, panel), &y, 3);
        let scale = if y.log { "log scale" } else { "linear" };
        svg.text(
            left + 4.0,
            y0 + 12.0,
            SMALL,
            Anchor::Start,
            ink::TEXT,
            &format!("{name} per channel ({scale})"),
        );
        for (j, r) in report.ladder.iter().enumerate() {
            let color = SERIES[j % SERIES.len()];
            let points: Vec<(f64, f64)> = rows
                .iter()
                .enumerate()
                .filter_map(|(k, &i)| r.channels.get(i).map(|m| (x(k), y.at(get(m)))))
                .collect();
            if points.len() > 1 {
                svg.polyline(&points, color, if r.active { 1.8 } else { 0.9 });
            }
            for &(px, py) in &points {
                svg.dot(px, py, if r.active { 2.2 } else { 1.5 }, color);
            }
        }
    }
    let last = rows.last().copied().unwrap_or(0);
    let (first, last) = (
        format!("#{}", rows.first().copied().unwrap_or(0)),
        format!("#{last}"),
    );
    let last = (rows.len() > 1).then_some((WIDTH - right, last.as_str()));
    x_ends(&mut svg, height, (x(0), Anchor::Middle, &first), last);
    let medians: Vec<String> = figures
        .ladder
        .iter()
        .filter_map(|s| report.ladder.get(s.rung).map(|r| (r, s)))
        .map(|(r, s)| {
            format!(
                "{}: median MAE {}, median RMSE {}",
                r.granularity,
                error(s.mae.median),
                error(s.rmse.median)
            )
        })
        .collect();
    let labels = report.channels.iter().any(|c| c.label.is_some());
    let mut table = crate::io::export::doc::channel_columns(labels);
    for r in &report.ladder {
        table = table.column(&format!("RMSE {}", r.granularity), Right, None);
    }
    for &i in rows {
        let Some(c) = report.channels.get(i) else {
            continue;
        };
        let mut row = crate::io::export::doc::channel_cells(labels, c);
        for r in &report.ladder {
            row.push(
                r.channels
                    .get(i)
                    .map_or_else(|| "-".into(), |m| error(m.rmse)),
            );
        }
        table.rows.push(row);
    }
    Some(Figure {
        title: "Error per channel at each granularity".to_string(),
        svg,
        caption: format!(
            "Each channel's MAE (top) and RMSE (bottom) under the same scheme at every granularity; the thick line is the active one. {}. The Ladder section lists each channel's MAE; the table lists RMSE.",
            medians.join("; ")
        ),
        table: Some(table),
    })
}

/// The ladder's granularities as a colour key across the top.
fn legend(svg: &mut Svg, report: &Report, left: f64) {
    let mut x = left;
    for (j, r) in report.ladder.iter().enumerate() {
        let color = SERIES[j % SERIES.len()];
        let name = format!(
            "{}{}",
            r.granularity,
            if r.active { " (active)" } else { "" }
        );
        svg.rect(x, 8.0, 10.0, 10.0, color);
        svg.text(x + 14.0, 17.0, SMALL, Anchor::Start, ink::TEXT, &name);
        x += 24.0 + name.chars().count() as f64 * SMALL * 0.6;
    }
}

fn ladder_spreads(report: &Report, figures: &Figures) -> Figure {
    let row_h = 18.0;
    let (left, right, top) = (90.0, 10.0, 30.0);
    let rungs = report.ladder.len() as f64;
    let panel = rungs * row_h + 8.0;
    let height = top + 2.0 * (panel + 22.0);
    let mut svg = Svg::new(WIDTH, height);
    caption(
        &mut svg,
        left,
        &format!(
            "{} channels: whiskers min-max, box 25th-90th percentile, bar median",
            report.channels.len()
        ),
    );
    let metrics: [(&str, SpreadOf); 2] = [("MAE", |s| s.mae), ("RMSE", |s| s.rmse)];
    for (p, (name, get)) in metrics.iter().enumerate() {
        let y0 = top + p as f64 * (panel + 22.0);
        let all: Vec<f64> = figures
            .ladder
            .iter()
            .flat_map(|s| [get(s).min, get(s).max])
            .collect();
        let x = Scale::errors(&all, left, WIDTH - right);
        svg.text(
            left,
            y0 + 4.0,
            SMALL,
            Anchor::Start,
            ink::TEXT,
            &format!("{name} ({})", if x.log { "log scale" } else { "linear" }),
        );
        for (k, s) in figures.ladder.iter().enumerate() {
            let Some(r) = report.ladder.get(s.rung) else {
                continue;
            };
            let d = get(s);
            let y = y0 + 10.0 + row_h * k as f64;
            let mid = y + row_h / 2.0;
            let color = if r.active { ink::SECOND } else { ink::MAIN };
            svg.text(
                left - 6.0,
                mid + 3.0,
                SMALL,
                Anchor::End,
                ink::TEXT,
                &r.granularity.to_string(),
            );
            svg.line((x.at(d.min), mid), (x.at(d.max), mid), ink::TEXT, 1.0);
            svg.rect(
                x.at(d.p25),
                y + 3.0,
                x.at(d.p90) - x.at(d.p25),
                row_h - 6.0,
                color,
            );
            svg.line(
                (x.at(d.median), y + 1.0),
                (x.at(d.median), y + row_h - 1.0),
                ink::TEXT,
                2.0,
            );
        }
        for t in x.ticks() {
            svg.text(
                x.at(t),
                y0 + 10.0 + panel + 2.0,
                SMALL,
                Anchor::Middle,
                ink::TEXT,
                &sig(t, 3),
            );
        }
    }
    let mut table = Grid::new(&[("granularity", Left), ("metric", Left)]);
    for name in ["min", "25%", "median", "90%", "max"] {
        table = table.column(name, Right, None);
    }
    for s in &figures.ladder {
        let Some(r) = report.ladder.get(s.rung) else {
            continue;
        };
        for (metric, d) in [("MAE", s.mae), ("RMSE", s.rmse)] {
            let mut row = vec![r.granularity.to_string(), metric.to_string()];
            row.extend([d.min, d.p25, d.median, d.p90, d.max].map(error));
            table.rows.push(row);
        }
    }
    Figure {
        title: "Error per channel at each granularity, distribution".to_string(),
        svg,
        caption: format!(
            "The distribution of channel MAE and RMSE over all {} channels at each granularity; the table gives the numbers.",
            report.channels.len()
        ),
        table: Some(table),
    }
}
