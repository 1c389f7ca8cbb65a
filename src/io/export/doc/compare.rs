//! The "Comparison" section: the report written (B) against another configuration of the
//! same matrix (A, `report --compare SPEC`): what differs, the whole matrix under both, and
//! every channel's RMSE under both with the change.

use super::{Align, Grid, Part, Section, channel_cells, channel_columns, has_labels};
use crate::core::Report;
use crate::core::compare::Comparison;
use crate::io::export::num::{error, sqnr};

/// The section for `b` (the report written) against `a`.
pub(super) fn section(a: &Report, b: &Report, c: &Comparison, rows: &[usize]) -> Section {
    let mut parts = vec![
        Part::Text(format!("A: {}", a.config.summary())),
        Part::Text(format!("B: {} (the report above)", b.config.summary())),
    ];
    parts.push(Part::Text(if c.differences.is_empty() {
        "A and B are the same configuration.".to_string()
    } else {
        let d: Vec<String> = c
            .differences
            .iter()
            .map(|d| format!("{}: {} -> {}", d.key, d.a, d.b))
            .collect();
        format!("What differs: {}.", d.join("; "))
    }));
    let mut overall = Grid::new(&[
        ("", Align::Left),
        ("MAE", Align::Right),
        ("RMSE", Align::Right),
        ("SQNR dB", Align::Right),
        ("collapsed", Align::Right),
        ("bits/w", Align::Right),
    ]);
    let (ma, mb) = &c.overall;
    let (ca, cb) = c.collapsed;
    let (wa, wb) = (&c.memory.0, &c.memory.1);
    for (name, m, collapsed, w) in [("A", ma, ca, wa), ("B", mb, cb, wb)] {
        overall.rows.push(vec![
            name.to_string(),
            error(m.mae),
            error(m.rmse),
            sqnr(m.sqnr_db),
            collapsed.to_string(),
            error(w.bits_per_weight),
        ]);
    }
    parts.push(Part::Grid(overall));
    if let (Some((oa, ob)), Some(o)) = (c.output, b.output.as_ref()) {
        let mut grid = Grid::new(&[("", Align::Left)]);
        for n in super::importance::columns(o) {
            grid = grid.column(n, Align::Right, None);
        }
        for (name, m) in [("A", oa), ("B", ob)] {
            let mut row = vec![name.to_string()];
            row.extend(super::importance::cells(o, Some(m)));
            grid.rows.push(row);
        }
        parts.push(Part::Grid(grid));
        if let Some(change) = &c.change {
            parts.push(Part::Text(format!("{}.", change.sentence)));
        }
    }
    let labels = has_labels(b);
    let mut channels = channel_columns(labels)
        .column("RMSE A", Align::Right, None)
        .column("RMSE B", Align::Right, None)
        .column("B - A", Align::Right, None)
        .column("collapsed A/B", Align::Left, None);
    let listed = rows
        .iter()
        .filter_map(|&i| b.channels.get(i).zip(c.channels.get(i)));
    for (ch, pair) in listed {
        let mut row = channel_cells(labels, ch);
        let flag = |x: bool| if x { "COLLAPSED" } else { "-" };
        row.extend([
            error(pair.a.rmse),
            error(pair.b.rmse),
            error(pair.rmse_change),
            format!("{} / {}", flag(pair.collapsed.0), flag(pair.collapsed.1)),
        ]);
        channels.rows.push(row);
    }
    parts.push(Part::Grid(channels));
    Section {
        title: "Comparison",
        parts,
    }
}
