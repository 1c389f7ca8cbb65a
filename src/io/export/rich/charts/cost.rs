//! Bits per weight against RMSE: the granularity ladder and, given one, the format ladder.

use super::{SMALL, Scale, WIDTH, caption, frame_with_ticks};
use crate::core::Report;
use crate::core::format_ladder::FormatLadder;
use crate::io::export::doc::Figure;
use crate::io::export::num::{VALUE_DIGITS, error, sig};
use crate::io::export::svg::{Anchor, Svg, ink};

/// Bits per weight against RMSE: the granularity ladder's rungs and, with a format ladder, every
/// measured format. `None` when there is neither.
#[expect(
    clippy::too_many_lines,
    reason = "a chart reads top to bottom (scales, axes, marks, labels, caption) in one place"
)]
pub(in crate::io::export::rich) fn cost_against_error(
    report: &Report,
    format_ladder: Option<&FormatLadder>,
) -> Option<Figure> {
    struct Point {
        name: String,
        bpw: f64,
        rmse: f64,
        format: bool,
        active: bool,
    }
    let mut points: Vec<Point> = report
        .ladder
        .iter()
        .map(|r| Point {
            name: r.granularity.to_string(),
            bpw: r.memory.bits_per_weight,
            rmse: r.overall.rmse,
            format: false,
            active: r.active,
        })
        .collect();
    if let Some(l) = format_ladder {
        points.extend(l.entries.iter().filter_map(|e| {
            Some(Point {
                name: e.name.clone(),
                bpw: e.bits_per_weight?,
                rmse: e.measured()?.overall.rmse,
                format: true,
                active: e.active,
            })
        }));
    }
    if points.is_empty() {
        return None;
    }
    let (left, right, top, bottom) = (70.0, 20.0, 26.0, 30.0);
    let height = 300.0;
    let mut svg = Svg::new(WIDTH, height);
    let lo = points.iter().map(|p| p.bpw).fold(f64::INFINITY, f64::min);
    let hi = points.iter().map(|p| p.bpw).fold(0.0, f64::max);
    let x = Scale::linear(lo.min(0.0), hi * 1.08, left, WIDTH - right - 60.0);
    let y = Scale::errors(
        &points.iter().map(|p| p.rmse).collect::<Vec<_>>(),
        height - bottom,
        top,
    );
    frame_with_ticks(
        &mut svg,
        (left, top, WIDTH - left - right, height - top - bottom),
        &y,
        3,
    );
    for t in x.ticks() {
        svg.text(
            x.at(t),
            height - bottom + 12.0,
            SMALL,
            Anchor::Middle,
            ink::TEXT,
            &sig(t, 3),
        );
    }
    svg.text(
        (left + WIDTH - right) / 2.0,
        height - 4.0,
        SMALL,
        Anchor::Middle,
        ink::TEXT,
        "bits per weight",
    );
    let scale = if y.log { "RMSE, log scale" } else { "RMSE" };
    let key = if format_ladder.is_some() {
        "; dots granularities, squares formats"
    } else {
        ""
    };
    caption(&mut svg, left, &format!("{scale}{key}; ringed: active"));
    let mut words = Vec::new();
    // Points closer than a label's height share one label.
    let mut labels: Vec<(f64, f64, Vec<&str>)> = Vec::new();
    for p in &points {
        let (px, py) = (x.at(p.bpw), y.at(p.rmse));
        match labels
            .iter_mut()
            .find(|(lx, ly, _)| (lx - px).abs() < 8.0 && (ly - py).abs() < 9.0)
        {
            Some((_, _, names)) => names.push(&p.name),
            None => labels.push((px, py, vec![&p.name])),
        }
    }
    for (px, py, names) in &labels {
        svg.text(
            px + 6.0,
            py - 5.0,
            SMALL * 0.9,
            Anchor::Start,
            ink::TEXT,
            &names.join(", "),
        );
    }
    for p in &points {
        let (px, py) = (x.at(p.bpw), y.at(p.rmse));
        let color = if p.format { ink::SECOND } else { ink::MAIN };
        if p.format {
            svg.rect(px - 3.0, py - 3.0, 6.0, 6.0, color);
        } else {
            svg.dot(px, py, 3.5, color);
        }
        if p.active {
            svg.ring(px, py, 7.0, ink::ALERT);
        }
        words.push(format!(
            "{}{} {} bits/weight, RMSE {}",
            p.name,
            if p.active { " (active)" } else { "" },
            sig(p.bpw, VALUE_DIGITS),
            error(p.rmse)
        ));
    }
    Some(Figure {
        title: "Bits per weight against RMSE".to_string(),
        svg,
        caption: format!("Storage cost against error: {}.", words.join("; ")),
        table: None,
    })
}
