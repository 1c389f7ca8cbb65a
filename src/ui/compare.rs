//! The A/B line: what differs between the pinned configuration A and the active one B, and
//! their errors, collapsed channels and bits per weight side by side. It takes the status
//! line's place while a configuration is pinned (a status message still comes first).
//!
//! ```text
//!  A→B  RMSE 0.0645→0.0387 · collapsed 5→0 · bits/w 4.02→4.12 · granularity tensor→channel
//! ```

use std::fmt::Write as _;

use crate::core::compare::{Comparison, Difference};
use crate::ui::utilization::sig;

/// The line for `comparison`, or for a pin whose comparison has not arrived (`None`); `arrow`
/// is `→`, or `->` in ASCII.
#[must_use]
pub fn summary(comparison: Option<&Comparison>, sep: &str, arrow: &str) -> String {
    let Some(c) = comparison else {
        return "A pinned: change a setting to compare B with it (Alt-p unpins)".to_string();
    };
    let (a, b) = &c.overall;
    let (ma, mb) = &c.memory;
    let mut line = format!(
        "A{arrow}B  RMSE {}{arrow}{} {sep} collapsed {}{arrow}{} {sep} bits/w {}{arrow}{}",
        sig(a.rmse, 3),
        sig(b.rmse, 3),
        c.collapsed.0,
        c.collapsed.1,
        sig(ma.bits_per_weight, 3),
        sig(mb.bits_per_weight, 3),
    );
    if let Some((oa, ob)) = &c.output {
        let pick = |o: &crate::core::importance::OutputMetrics| {
            o.output_mse
                .map(|v| ("out MSE", v))
                .or_else(|| o.imatrix_mse.map(|v| ("imat MSE", v)))
        };
        if let (Some((name, va)), Some((_, vb))) = (pick(oa), pick(ob)) {
            let _ = write!(line, " {sep} {name} {}{arrow}{}", sig(va, 3), sig(vb, 3));
        }
    }
    if c.differences.is_empty() {
        let _ = write!(line, " {sep} the same configuration");
    }
    for d in &c.differences {
        let _ = write!(line, " {sep} {} {}{arrow}{}", d.key, d.a, d.b);
    }
    // A ranking the output error reverses comes first: it is the news.
    if let Some(change) = &c.change {
        line = format!("{} {sep} {line}", change.sentence);
    }
    line
}

/// One difference as one side has it: the value alone for settings whose values name
/// themselves (`group:32`, `q4_k`), else `key value` (`bits 4`).
#[must_use]
pub fn side_value(d: &Difference, value: &str) -> String {
    match d.key {
        "granularity" | "format" => value.to_string(),
        key => format!("{key} {value}"),
    }
}

/// The title line's part that says what differs: `B: group:32 vs A: channel`,
/// `B: bits 5, channel vs A: bits 4, tensor`; when that is longer than `room` cells, how
/// many settings differ (the status line lists them).
#[must_use]
pub fn header(c: &Comparison, room: usize) -> String {
    if c.differences.is_empty() {
        return "A/B: the same configuration".to_string();
    }
    let side = |b: bool| {
        c.differences
            .iter()
            .map(|d| side_value(d, if b { &d.b } else { &d.a }))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let full = format!("B: {} vs A: {}", side(true), side(false));
    if crate::ui::utilization::text_width(&full) <= room {
        full
    } else if let [d] = c.differences.as_slice() {
        format!("B vs A: {} differs", d.key)
    } else {
        format!("B vs A: {} settings differ", c.differences.len())
    }
}
