//! Utilization of the code range per channel, collapsed channels marked; a histogram when
//! the matrix is summarised.

use super::{SMALL, Scale, WIDTH, channel_name};
use crate::core::Report;
use crate::core::figures::{BINS, Figures};
use crate::io::export::doc::Figure;
use crate::io::export::svg::{Anchor, Svg, ink};

/// Utilization of the code range per listed channel, collapsed ones marked; a histogram
/// when the matrix is summarised.
pub(in crate::io::export::rich) fn utilization(report: &Report, figures: &Figures) -> Figure {
    let collapsed = if report.collapsed_channels == 0 {
        "no channel collapsed".to_string()
    } else {
        let rows: Vec<String> = figures.collapsed.iter().map(|r| format!("#{r}")).collect();
        let more = report
            .collapsed_channels
            .saturating_sub(figures.collapsed.len());
        format!(
            "{} collapsed: {}{}",
            crate::io::export::num::count(report.collapsed_channels, "channel"),
            rows.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        )
    };
    if figures.summarised {
        return utilization_histogram(report, figures, &collapsed);
    }
    let rows = &figures.listed;
    let row_h = if rows.len() > 32 { 9.0 } else { 14.0 };
    let (left, top) = (90.0, 8.0);
    let bar_w = WIDTH - left - 130.0;
    let height = top + row_h * rows.len() as f64 + 8.0;
    let mut svg = Svg::new(WIDTH, height);
    let size = (row_h - 1.0).min(SMALL);
    for (k, &row) in rows.iter().enumerate() {
        let Some(c) = report.channels.get(row) else {
            continue;
        };
        let y = top + row_h * k as f64;
        let color = if c.collapsed { ink::ALERT } else { ink::MAIN };
        svg.text(
            left - 6.0,
            y + row_h - 2.5,
            size,
            Anchor::End,
            ink::TEXT,
            &channel_name(report, row),
        );
        svg.frame(left, y + 1.0, bar_w, row_h - 2.0, ink::FAINT);
        svg.rect(
            left,
            y + 1.0,
            bar_w * c.utilization.clamp(0.0, 1.0),
            row_h - 2.0,
            color,
        );
        let note = if c.collapsed { " COLLAPSED" } else { "" };
        svg.text(
            left + bar_w + 6.0,
            y + row_h - 2.5,
            size,
            Anchor::Start,
            color,
            &format!("{:.0}%{note}", c.utilization * 100.0),
        );
    }
    Figure {
        title: "Utilization of the code range per channel".to_string(),
        svg,
        caption: format!(
            "Each bar is the share of the code range [{}, {}] a channel spans; {collapsed}. The Channels table lists every number.",
            report.qmin, report.qmax
        ),
        table: None,
    }
}

fn utilization_histogram(report: &Report, figures: &Figures, collapsed: &str) -> Figure {
    let (left, top, bottom) = (50.0, 20.0, 26.0);
    let height = 180.0;
    let mut svg = Svg::new(WIDTH, height);
    let most = figures
        .utilization
        .iter()
        .copied()
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let slot = (WIDTH - left - 10.0) / BINS as f64;
    let y = Scale::linear(0.0, most, height - bottom, top);
    let mut words = Vec::new();
    for (i, &count) in figures.utilization.iter().enumerate() {
        let x = left + slot * i as f64;
        let label = bin_label(i);
        svg.rect(
            x + 3.0,
            y.at(count as f64),
            slot - 6.0,
            y.at(0.0) - y.at(count as f64),
            ink::MAIN,
        );
        svg.text(
            x + slot / 2.0,
            y.at(count as f64) - 3.0,
            SMALL,
            Anchor::Middle,
            ink::TEXT,
            &count.to_string(),
        );
        svg.text(
            x + slot / 2.0,
            height - 8.0,
            SMALL,
            Anchor::Middle,
            ink::TEXT,
            &label,
        );
        words.push(format!("{label}: {count}"));
    }
    svg.line((left, y.at(0.0)), (WIDTH - 10.0, y.at(0.0)), ink::TEXT, 1.0);
    svg.text(
        left,
        12.0,
        SMALL,
        Anchor::Start,
        ink::TEXT,
        "channels by utilization of the code range",
    );
    Figure {
        title: "Utilization of the code range, all channels".to_string(),
        svg,
        caption: format!(
            "{} channels by the share of the code range [{}, {}] they span: {}; {collapsed}.",
            report.channels.len(),
            report.qmin,
            report.qmax,
            words.join(", ")
        ),
        table: None,
    }
}

/// `0-10%`, …, `90%+`.
fn bin_label(i: usize) -> String {
    let step = 100 / BINS;
    if i + 1 == BINS {
        format!("{}%+", i * step)
    } else {
        format!("{}-{}%", i * step, (i + 1) * step)
    }
}
