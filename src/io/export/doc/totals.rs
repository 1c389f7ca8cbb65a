//! The sections about the whole matrix: Overall, Memory and Ladder.

use crate::core::Report;
use crate::io::export::doc::Align::{Left, Right};
use crate::io::export::doc::{
    Grid, Listing, Part, Section, channel_cells, channel_columns, has_labels,
};
use crate::io::export::num::{VALUE_DIGITS, error, sig, sqnr};

/// Errors over the whole matrix.
pub(super) fn overall(report: &Report) -> Section {
    let mut grid = Grid::new(&[
        ("MAE", Right),
        ("RMSE", Right),
        ("max err", Right),
        ("SQNR dB", Right),
        ("collapsed channels", Right),
    ]);
    let m = &report.overall;
    grid.rows.push(vec![
        error(m.mae),
        error(m.rmse),
        error(m.max_error),
        sqnr(m.sqnr_db),
        format!("{} of {}", report.collapsed_channels, report.channels.len()),
    ]);
    Section {
        title: "Overall",
        parts: vec![Part::Grid(grid)],
    }
}

/// Storage cost and the arithmetic of bits per weight.
pub(super) fn memory(report: &Report) -> Section {
    let m = &report.memory;
    let mut grid = Grid::new(&[("quantity", Left), ("value", Right)]);
    for (name, v) in [
        ("elements", m.elements.to_string()),
        ("bits per code", m.bits.to_string()),
        ("blocks", m.blocks.to_string()),
        (
            "metadata bits per block",
            m.metadata_bits_per_block.to_string(),
        ),
        ("payload bytes", m.payload_bytes.to_string()),
        ("metadata bytes", m.metadata_bytes.to_string()),
        ("total bytes", m.total_bytes.to_string()),
        ("bits per weight", sig(m.bits_per_weight, VALUE_DIGITS)),
        ("ratio to f32", error(m.ratio_to_f32)),
        ("ratio to f16", error(m.ratio_to_f16)),
    ] {
        grid.rows.push(vec![name.to_string(), v]);
    }
    let formula = vec![
        "bits/weight = (elements x bits + blocks x metadata bits) / elements".to_string(),
        format!(
            "            = ({} x {} + {} x {}) / {} = {}",
            m.elements,
            m.bits,
            m.blocks,
            m.metadata_bits_per_block,
            m.elements,
            sig(m.bits_per_weight, VALUE_DIGITS),
        ),
    ];
    Section {
        title: "Memory",
        parts: vec![Part::Grid(grid), Part::Formula(formula)],
    }
}

/// Every rung of the ladder, then each channel's MAE at every rung.
pub(super) fn ladder(report: &Report, listing: &Listing<'_>) -> Section {
    let mut rungs = Grid::new(&[
        ("", Left),
        ("granularity", Left),
        ("scales", Right),
        ("metadata bytes", Right),
        ("bits/weight", Right),
        ("MAE", Right),
        ("RMSE", Right),
        ("SQNR dB", Right),
        ("collapsed", Right),
    ]);
    if let Some(o) = &report.output {
        for n in super::importance::columns(o) {
            rungs = rungs.column(n, Right, None);
        }
    }
    for r in &report.ladder {
        let mut row = vec![
            if r.active { "*" } else { "" }.to_string(),
            r.granularity.to_string(),
            r.scales.to_string(),
            r.memory.metadata_bytes.to_string(),
            sig(r.memory.bits_per_weight, VALUE_DIGITS),
            error(r.overall.mae),
            error(r.overall.rmse),
            sqnr(r.overall.sqnr_db),
            r.collapsed_channels.to_string(),
        ];
        if let Some(o) = &report.output {
            row.extend(super::importance::cells(
                o,
                r.output.as_ref().map(|x| x.overall),
            ));
        }
        rungs.rows.push(row);
    }
    let labels = has_labels(report);
    let mut by_channel = channel_columns(labels);
    for r in &report.ladder {
        let name = format!("{}{}", r.granularity, if r.active { " *" } else { "" });
        by_channel = by_channel.column(&name, Right, None);
    }
    for c in listing.rows.iter().filter_map(|&i| report.channels.get(i)) {
        let mut row = channel_cells(labels, c);
        for r in &report.ladder {
            row.push(
                r.channels
                    .get(c.index)
                    .map_or_else(|| "-".to_string(), |m| error(m.mae)),
            );
        }
        by_channel.rows.push(row);
    }
    Section {
        title: "Ladder",
        parts: vec![
            Part::Text("The same scheme at every granularity; * marks the active one.".to_string()),
            Part::Grid(rungs),
            Part::Text("MAE of each channel at each granularity:".to_string()),
            Part::Grid(by_channel),
        ],
    }
}
