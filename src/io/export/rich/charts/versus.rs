//! Each listed channel's RMSE under configuration A and under B, on one axis.

use super::{Scale, WIDTH, caption, frame_with_ticks, x_ends};
use crate::core::compare::Comparison;
use crate::io::export::doc::Figure;
use crate::io::export::num::error;
use crate::io::export::svg::{Anchor, Svg, ink};

/// Rings for A, dots for B, a line between, for each of `rows`.
pub(in crate::io::export::rich) fn rmse_a_b(c: &Comparison, rows: &[usize]) -> Option<Figure> {
    let pairs: Vec<_> = rows.iter().filter_map(|&i| c.channels.get(i)).collect();
    if pairs.is_empty() {
        return None;
    }
    let (left, right, top, bottom) = (70.0, 10.0, 24.0, 22.0);
    let height = 200.0;
    let mut svg = Svg::new(WIDTH, height);
    let all: Vec<f64> = pairs.iter().flat_map(|p| [p.a.rmse, p.b.rmse]).collect();
    let y = Scale::errors(&all, height - bottom, top);
    let n = pairs.len() as f64;
    let x = |k: usize| left + (k as f64 + 0.5) * (WIDTH - left - right) / n;
    frame_with_ticks(
        &mut svg,
        (left, top, WIDTH - left - right, height - top - bottom),
        &y,
        3,
    );
    let r = (0.3 * (WIDTH - left - right) / n).clamp(1.2, 4.0);
    for (k, p) in pairs.iter().enumerate() {
        let (ya, yb) = (y.at(p.a.rmse), y.at(p.b.rmse));
        svg.line((x(k), ya), (x(k), yb), ink::FAINT, 1.0);
        svg.ring(x(k), ya, r, ink::TEXT);
        svg.dot(x(k), yb, r, ink::MAIN);
    }
    let scale = if y.log { "log scale" } else { "linear" };
    caption(
        &mut svg,
        left,
        &format!("RMSE per channel ({scale}): rings A, dots B"),
    );
    if let (Some(first), Some(last)) = (pairs.first(), pairs.last()) {
        let (first, last) = (format!("#{}", first.index), format!("#{}", last.index));
        x_ends(
            &mut svg,
            height,
            (left, Anchor::Start, &first),
            Some((WIDTH - right, &last)),
        );
    }
    Some(Figure {
        title: "RMSE per channel, A against B".to_string(),
        svg,
        caption: format!(
            "Each listed channel's RMSE under A (rings) and B (dots); overall RMSE {} under A and {} under B, {} and {} channels collapsed. The table below gives every channel's numbers.",
            error(c.overall.0.rmse),
            error(c.overall.1.rmse),
            c.collapsed.0,
            c.collapsed.1
        ),
        table: None,
    })
}
