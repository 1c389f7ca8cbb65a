//! The Comparison section: configuration A against the report written (B), as
//! [`crate::core::compare::Comparison`] holds them.

use crate::core::Report;
use crate::io::export::doc::Align::{Left, Right};
use crate::io::export::doc::{Grid, Part, Section};
use crate::io::export::num::{VALUE_DIGITS, error, sig, sqnr};
use crate::io::export::rich::Versus;

/// What differs, both overall, and each of `rows` under both.
pub(super) fn section(report: &Report, versus: Versus<'_>, rows: &[usize]) -> Section {
    let c = versus.comparison;
    let mut parts = vec![Part::Text(format!(
        "A: {}. B (this report): {}. What differs: {}.",
        versus.a.config.summary(),
        report.config.summary(),
        c.summary()
    ))];
    let mut overall = Grid::new(&[
        ("", Left),
        ("MAE", Right),
        ("RMSE", Right),
        ("max err", Right),
        ("SQNR dB", Right),
        ("collapsed", Right),
        ("bits/weight", Right),
        ("bytes", Right),
    ]);
    for (name, m, collapsed, memory) in [
        ("A", &c.overall.0, c.collapsed.0, &c.memory.0),
        ("B", &c.overall.1, c.collapsed.1, &c.memory.1),
    ] {
        overall.rows.push(vec![
            name.to_string(),
            error(m.mae),
            error(m.rmse),
            error(m.max_error),
            sqnr(m.sqnr_db),
            collapsed.to_string(),
            sig(memory.bits_per_weight, VALUE_DIGITS),
            memory.total_bytes.to_string(),
        ]);
    }
    parts.push(Part::Grid(overall));
    let mut channels = Grid::new(&[
        ("#", Right),
        ("MAE A", Right),
        ("MAE B", Right),
        ("B - A", Right),
        ("RMSE A", Right),
        ("RMSE B", Right),
        ("B - A", Right),
        ("collapsed", Left),
    ]);
    for pair in rows.iter().filter_map(|&i| c.channels.get(i)) {
        let collapsed = match pair.collapsed {
            (true, true) => "A and B",
            (true, false) => "A",
            (false, true) => "B",
            (false, false) => "",
        };
        channels.rows.push(vec![
            pair.index.to_string(),
            error(pair.a.mae),
            error(pair.b.mae),
            error(pair.mae_change),
            error(pair.a.rmse),
            error(pair.b.rmse),
            error(pair.rmse_change),
            collapsed.to_string(),
        ]);
    }
    if let Some(figure) = super::charts::rmse_a_b(c, rows) {
        parts.push(Part::Figure(Box::new(figure)));
    }
    parts.push(Part::Text(
        "Each channel under A and B (a negative change: B reconstructs it better):".to_string(),
    ));
    parts.push(Part::Grid(channels));
    Section {
        title: "Comparison",
        parts,
    }
}
