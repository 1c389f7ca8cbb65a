//! Original against reconstructed values on the quantization grid (the seed calculator's
//! plot), one chart per plotted channel.

use super::{Scale, WIDTH, caption, channel_name, frame_with_ticks, x_ends};
use crate::core::Report;
use crate::core::figures::{Figures, MAX_LEVELS, ValuePlot};
use crate::io::export::doc::Align::Right;
use crate::io::export::doc::{Figure, Grid};
use crate::io::export::num::{error, value};
use crate::io::export::svg::{Anchor, Svg, ink};

/// Pairs the caption of a value plot spells out.
const CAPTION_PAIRS: usize = 8;

/// One plot per channel of `figures.values`: original against reconstructed values on the
/// quantization grid.
pub(in crate::io::export::rich) fn value_plots(report: &Report, figures: &Figures) -> Vec<Figure> {
    figures
        .values
        .iter()
        .map(|p| value_plot(report, p))
        .collect()
}

#[expect(
    clippy::too_many_lines,
    reason = "a chart reads top to bottom (scales, axes, marks, labels, caption) in one place"
)]
fn value_plot(report: &Report, p: &ValuePlot) -> Figure {
    let (left, right, top, bottom) = (70.0, 10.0, 24.0, 22.0);
    let height = 190.0;
    let mut svg = Svg::new(WIDTH, height);
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for &(_, x, xh) in &p.samples {
        for v in [f64::from(x), f64::from(xh)] {
            if v.is_finite() {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
    }
    if !lo.is_finite() {
        (lo, hi) = (0.0, 0.0);
    }
    // Out to the nearest level beyond each end, so the grid's step shows.
    if let Some(levels) = &p.levels {
        let below = levels
            .iter()
            .map(|&l| f64::from(l))
            .filter(|&l| l < lo)
            .fold(lo, |m, l| if m == lo { l } else { m.max(l) });
        let above = levels
            .iter()
            .map(|&l| f64::from(l))
            .filter(|&l| l > hi)
            .fold(hi, |m, l| if m == hi { l } else { m.min(l) });
        (lo, hi) = (below, above);
    }
    // A margin, so the marks at either end are not cut by the frame.
    let pad = (hi - lo) * 0.06;
    let y = Scale::linear(lo - pad, hi + pad, height - bottom, top);
    let n = p.samples.len().max(1) as f64;
    let x = |i: usize| left + (i as f64 + 0.5) * (WIDTH - left - right) / n;
    if let Some(levels) = &p.levels {
        for &l in levels {
            let l = f64::from(l);
            if l >= y.lo && l <= y.hi {
                svg.line((left, y.at(l)), (WIDTH - right, y.at(l)), ink::FAINT, 0.6);
            }
        }
    }
    frame_with_ticks(
        &mut svg,
        (left, top, WIDTH - left - right, height - top - bottom),
        &y,
        4,
    );
    let r = (0.35 * (WIDTH - left - right) / n).clamp(1.2, 4.0);
    for (i, &(_, orig, rec)) in p.samples.iter().enumerate() {
        let (yo, yr) = (y.at(f64::from(orig)), y.at(f64::from(rec)));
        svg.line((x(i), yo), (x(i), yr), ink::ALERT, 1.0);
        svg.dot(x(i), yr, r, ink::MAIN);
        svg.ring(x(i), yo, r, ink::TEXT);
    }
    let first = p.samples.first().map_or(0, |s| s.0);
    let last = p.samples.last().map_or(0, |s| s.0);
    let (first, last) = (format!("col {first}"), format!("col {last}"));
    let last = (p.samples.len() > 1).then_some((WIDTH - right, last.as_str()));
    x_ends(&mut svg, height, (left, Anchor::Start, &first), last);
    let grid = match &p.levels {
        Some(_) => format!("grid lines: the {} levels", p.level_count),
        None if p.level_count > MAX_LEVELS => {
            format!("{} levels, too dense to draw", p.level_count)
        }
        None => "each value has its own scale".to_string(),
    };
    let name = channel_name(report, p.channel);
    caption(
        &mut svg,
        left,
        &format!("channel {name}: rings original, dots reconstructed; {grid}"),
    );
    let span = p.cols.1 - p.cols.0;
    let max_err = p
        .samples
        .iter()
        .map(|&(_, a, b)| (f64::from(b) - f64::from(a)).abs())
        .fold(0.0, f64::max);
    let pairs: Vec<String> = p
        .samples
        .iter()
        .take(CAPTION_PAIRS)
        .map(|&(_, a, b)| format!("{} -> {}", value(a), value(b)))
        .collect();
    let step = p
        .levels
        .as_ref()
        .filter(|l| l.len() > 1)
        .map(|l| format!(", grid step {}", value(l[1] - l[0])))
        .unwrap_or_default();
    let caption = format!(
        "Channel {name}, columns {}..{} ({} of {span} values shown){step}; largest error shown {}. Original -> reconstructed: {}{}",
        p.cols.0,
        p.cols.1,
        p.samples.len(),
        error(max_err),
        pairs.join(", "),
        if p.samples.len() > CAPTION_PAIRS {
            ", … (the table has them all)."
        } else {
            "."
        }
    );
    let mut table = Grid::new(&[
        ("column", Right),
        ("original", Right),
        ("reconstructed", Right),
        ("error", Right),
    ]);
    for &(c, a, b) in &p.samples {
        table.rows.push(vec![
            c.to_string(),
            value(a),
            value(b),
            error(f64::from(b) - f64::from(a)),
        ]);
    }
    Figure {
        title: format!("Values of channel {name} on the quantization grid"),
        svg,
        caption,
        table: Some(table),
    }
}
