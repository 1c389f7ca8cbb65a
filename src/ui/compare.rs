//! The A/B line: what differs between the pinned configuration A and the active one B, and
//! their errors, collapsed channels and bits per weight side by side. It takes the status
//! line's place while a configuration is pinned (a status message still comes first).
//!
//! ```text
//!  B vs A: granularity channel vs tensor │ RMSE 0.0305 vs 0.0645 │ collapsed 0 vs 5 │ 4.06 vs 4.02 bits/w
//! ```

use crate::core::compare::Comparison;
use crate::ui::utilization::sig;

/// The line for `comparison`, or for a pin whose comparison has not arrived (`None`).
#[must_use]
pub fn summary(comparison: Option<&Comparison>, sep: &str) -> String {
    let Some(c) = comparison else {
        return "A pinned: change a setting to compare B with it (Alt-p unpins)".to_string();
    };
    let what = if c.differences.is_empty() {
        "B is A (change a setting)".to_string()
    } else {
        let d: Vec<String> = c
            .differences
            .iter()
            .map(|d| format!("{} {} vs {}", d.key, d.b, d.a))
            .collect();
        format!("B vs A: {}", d.join(", "))
    };
    let (a, b) = &c.overall;
    let (ma, mb) = &c.memory;
    format!(
        "{what} {sep} RMSE {} vs {} {sep} collapsed {} vs {} {sep} {} vs {} bits/w",
        sig(b.rmse, 3),
        sig(a.rmse, 3),
        c.collapsed.1,
        c.collapsed.0,
        sig(mb.bits_per_weight, 3),
        sig(ma.bits_per_weight, 3),
    )
}
