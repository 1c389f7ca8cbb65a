//! The A/B line: what differs between the pinned configuration A and the active one B, and
//! their errors, collapsed channels and bits per weight side by side. It takes the status
//! line's place while a configuration is pinned (a status message still comes first).
//!
//! ```text
//!  A→B  RMSE 0.0645→0.0387 · collapsed 5→0 · bits/w 4.02→4.12 · granularity tensor→channel
//! ```

use std::fmt::Write as _;

use crate::core::compare::Comparison;
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
    if c.differences.is_empty() {
        let _ = write!(line, " {sep} the same configuration");
    }
    for d in &c.differences {
        let _ = write!(line, " {sep} {} {}{arrow}{}", d.key, d.a, d.b);
    }
    line
}
