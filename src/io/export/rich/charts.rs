//! The charts of the HTML and PDF reports, each an [`Svg`](crate::io::export::svg::Svg) with a caption (and, where the
//! caption cannot hold every number, a table) that says the same in words. They draw what
//! [`Figures`](crate::core::figures::Figures), the [`Report`] and the [`FormatLadder`](crate::core::format_ladder::FormatLadder) hold and compute nothing but positions.

mod channels;
mod cost;
mod ladder;
mod values;
mod versus;

pub(super) use channels::utilization;
pub(super) use cost::cost_against_error;
pub(super) use ladder::ladder_errors;
pub(super) use values::value_plots;
pub(super) use versus::rmse_a_b;

use crate::core::Report;
use crate::io::export::svg::ink;

/// Width of every chart, in user units (the PDF's text width is about 510 pt).
const WIDTH: f64 = 640.0;
/// Size of axis and label text.
const SMALL: f64 = 10.0;
/// Series colours, in the ladder's order.
const SERIES: [&str; 6] = [
    ink::MAIN,
    ink::SECOND,
    "#2e7d32",
    "#6a1b9a",
    "#00838f",
    ink::ALERT,
];

/// Maps a value range onto a pixel range, linearly or on a log scale.
#[derive(Clone, Copy)]
struct Scale {
    lo: f64,
    hi: f64,
    from: f64,
    to: f64,
    log: bool,
}

impl Scale {
    fn linear(lo: f64, hi: f64, from: f64, to: f64) -> Self {
        let (lo, hi) = if hi > lo {
            (lo, hi)
        } else {
            let pad = lo.abs().max(1e-6) * 0.1;
            (lo - pad, hi + pad)
        };
        Self {
            lo,
            hi,
            from,
            to,
            log: false,
        }
    }

    /// A log scale over the positive values of `values` (zeros sit at the low end); linear
    /// when there are none or they span less than a factor of 20.
    fn errors(values: &[f64], from: f64, to: f64) -> Self {
        let positive = || values.iter().copied().filter(|v| *v > 0.0 && v.is_finite());
        let lo = positive().fold(f64::INFINITY, f64::min);
        let hi = positive().fold(0.0, f64::max);
        if hi <= 0.0 || hi / lo < 20.0 {
            let hi = values
                .iter()
                .copied()
                .filter(|v| v.is_finite())
                .fold(0.0, f64::max);
            return Self::linear(0.0, hi, from, to);
        }
        Self {
            lo: (lo / 1.5).log10(),
            hi: (hi * 1.2).log10(),
            from,
            to,
            log: true,
        }
    }

    fn at(&self, v: f64) -> f64 {
        let v = if self.log {
            if v > 0.0 {
                v.log10().max(self.lo)
            } else {
                self.lo
            }
        } else {
            v
        };
        self.from + (v - self.lo) / (self.hi - self.lo) * (self.to - self.from)
    }

    /// Tick values: the ends, and 0 in between on a linear scale.
    fn ticks(&self) -> Vec<f64> {
        if self.log {
            let mut t: Vec<f64> = (self.lo.ceil() as i32..=self.hi.floor() as i32)
                .map(|e| 10f64.powi(e))
                .collect();
            if t.is_empty() {
                t = vec![10f64.powf(self.lo), 10f64.powf(self.hi)];
            }
            t
        } else {
            // About five round steps: 1, 2 or 5 times a power of ten.
            let raw = (self.hi - self.lo) / 5.0;
            let power = 10f64.powf(raw.log10().floor());
            let step = [1.0, 2.0, 5.0, 10.0]
                .into_iter()
                .map(|m| m * power)
                .find(|s| *s >= raw)
                .unwrap_or(raw);
            if step.is_nan() || step <= 0.0 {
                return vec![self.lo];
            }
            let first = (self.lo / step).ceil() as i64;
            let last = (self.hi / step).floor() as i64;
            (first..=last).map(|k| k as f64 * step).collect()
        }
    }
}

/// A channel's name: `#3` or `#3 (label)`.
fn channel_name(report: &Report, row: usize) -> String {
    match report.channels.get(row).and_then(|c| c.label.as_deref()) {
        Some(l) => format!("#{row} ({l})"),
        None => format!("#{row}"),
    }
}

/// The chart's caption, on its first line from `left`.
fn caption(svg: &mut crate::io::export::svg::Svg, left: f64, text: &str) {
    use crate::io::export::svg::Anchor;
    svg.text(left, 14.0, SMALL, Anchor::Start, ink::TEXT, text);
}

/// The labels of the x axis's ends under a chart `height` high: `first` at `x`, anchored by
/// `anchor`, and `last` (when given) ending at `right`.
fn x_ends(
    svg: &mut crate::io::export::svg::Svg,
    height: f64,
    (x, anchor, first): (f64, crate::io::export::svg::Anchor, &str),
    last: Option<(f64, &str)>,
) {
    use crate::io::export::svg::Anchor;
    svg.text(x, height - 6.0, SMALL, anchor, ink::TEXT, first);
    if let Some((right, last)) = last {
        svg.text(right, height - 6.0, SMALL, Anchor::End, ink::TEXT, last);
    }
}

/// A plot's frame, `(left, top, width, height)`, and the tick labels of its y axis `y`
/// (with `digits` significant digits) to the left of it.
fn frame_with_ticks(
    svg: &mut crate::io::export::svg::Svg,
    (left, top, width, height): (f64, f64, f64, f64),
    y: &Scale,
    digits: usize,
) {
    use crate::io::export::svg::Anchor;
    svg.frame(left, top, width, height, ink::FAINT);
    for t in y.ticks() {
        svg.text(
            left - 4.0,
            y.at(t) + 3.0,
            SMALL,
            Anchor::End,
            ink::TEXT,
            &crate::io::export::num::sig(t, digits),
        );
    }
}
