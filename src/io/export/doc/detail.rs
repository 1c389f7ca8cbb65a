//! The sections about individual blocks and channels: Blocks, Channels and Values.

use crate::core::{Block, Report};
use crate::io::export::doc::Align::{Left, Right};
use crate::io::export::doc::{
    Grid, Listing, MAX_BLOCKS, MAX_VALUES, Part, Section, channel_cells, channel_columns,
    has_labels, plural,
};
use crate::io::export::num::{error, sqnr, value};

/// Width of the utilization bar, brackets excluded.
const BAR: usize = 10;

/// The first blocks with their parameters, and how many more there are.
pub(super) fn blocks(report: &Report) -> Section {
    let shown: Vec<Block> = report.blocks.iter().take(MAX_BLOCKS).collect();
    let offsets = shown.iter().any(|b| b.offset.is_some());
    let code_scales = shown.iter().any(|b| b.code_scale != b.scale);
    let degenerate = shown.iter().any(|b| b.degenerate);
    let mut grid = Grid::new(&[
        ("block", Right),
        ("rows", Left),
        ("cols", Left),
        ("scale", Right),
    ]);
    if code_scales {
        grid = grid.column("code scale", Right, None);
    }
    grid = grid.column("zero point", Right, None);
    if offsets {
        grid = grid.column("offset", Right, None);
    }
    for (name, align) in [
        ("range", Left),
        ("min", Right),
        ("max", Right),
        ("clipped", Right),
    ] {
        grid = grid.column(name, align, None);
    }
    if degenerate {
        grid = grid.column("note", Left, None);
    }
    for (i, b) in shown.iter().enumerate() {
        grid.rows
            .push(block_row(i, b, code_scales, offsets, degenerate));
    }
    let count = report.blocks.len();
    let mut parts = vec![
        Part::Text(format!(
            "{count} block{}, one scale each; rows and cols are [start, end).",
            plural(count)
        )),
        Part::Grid(grid),
    ];
    if count > shown.len() {
        let more = count - shown.len();
        parts.push(Part::Text(format!(
            "… {more} more block{} (the JSON export lists every block).",
            plural(more)
        )));
    }
    Section {
        title: "Blocks",
        parts,
    }
}

fn block_row(
    i: usize,
    b: &Block,
    code_scales: bool,
    offsets: bool,
    degenerate: bool,
) -> Vec<String> {
    let mut row = vec![
        i.to_string(),
        format!("{}..{}", b.rows.0, b.rows.1),
        format!("{}..{}", b.cols.0, b.cols.1),
        value(b.scale),
    ];
    if code_scales {
        row.push(value(b.code_scale));
    }
    row.push(b.zero_point.to_string());
    if offsets {
        row.push(b.offset.map_or_else(|| "-".to_string(), value));
    }
    row.extend([
        format!("[{}, {}]", value(b.range.0), value(b.range.1)),
        value(b.min),
        value(b.max),
        b.clipped.to_string(),
    ]);
    if degenerate {
        row.push(if b.degenerate {
            "degenerate".to_string()
        } else {
            String::new()
        });
    }
    row
}

/// Every channel: errors, levels, utilization and the `COLLAPSED` mark.
pub(super) fn channels(report: &Report, listing: &Listing<'_>) -> Section {
    let labels = has_labels(report);
    let mut grid = channel_columns(labels);
    for (name, align) in [
        ("MAE", Right),
        ("RMSE", Right),
        ("max err", Right),
        ("SQNR dB", Right),
        ("levels", Right),
        ("utilization", Left),
        ("clipped", Right),
        ("note", Left),
    ] {
        grid = grid.column(name, align, None);
    }
    for c in listing.rows.iter().filter_map(|&i| report.channels.get(i)) {
        let mut row = channel_cells(labels, c);
        let note = if c.collapsed {
            "COLLAPSED"
        } else if c.constant {
            "constant"
        } else {
            ""
        };
        row.extend([
            error(c.metrics.mae),
            error(c.metrics.rmse),
            error(c.metrics.max_error),
            sqnr(c.metrics.sqnr_db),
            format!("{}/{}", c.levels_used, c.levels_available),
            utilization(c.utilization),
            c.clipped.to_string(),
            note.to_string(),
        ]);
        grid.rows.push(row);
    }
    let mut parts = Vec::new();
    if let Some(note) = &listing.note {
        parts.push(Part::Text(note.clone()));
    }
    parts.extend([
            Part::Text("levels: distinct codes used / codes available.".to_string()),
            Part::Text(
                "utilization: the share of the code range [qmin, qmax] the channel spans."
                    .to_string(),
            ),
            Part::Text(
                "COLLAPSED: the channel's values differ but all got one code, or every scale it has is stored as 0."
                    .to_string(),
            ),
            Part::Grid(grid),
    ]);
    Section {
        title: "Channels",
        parts,
    }
}

/// `43% [####......]`.
fn utilization(u: f64) -> String {
    let filled = ((u * BAR as f64).round().max(0.0) as usize).min(BAR);
    format!(
        "{:>3.0}% [{}{}]",
        u * 100.0,
        "#".repeat(filled),
        ".".repeat(BAR - filled)
    )
}

/// Each channel's first codes and dequantized values.
pub(super) fn values(report: &Report, listing: &Listing<'_>) -> Section {
    let (_, cols) = report.shape;
    let code_width = report
        .qmin
        .to_string()
        .len()
        .max(report.qmax.to_string().len());
    let shown = cols.min(MAX_VALUES);
    let tail = if cols > shown { " …" } else { "" };
    let labels = has_labels(report);
    let mut cells: Vec<(Vec<String>, String, Vec<String>)> = Vec::with_capacity(listing.rows.len());
    let mut value_width = 0;
    for c in listing.rows.iter().filter_map(|&i| report.channels.get(i)) {
        let codes = (0..shown)
            .map(|j| format!("{:>code_width$}", report.code(c.index, j)))
            .collect::<Vec<_>>();
        let deq: Vec<String> = (0..shown)
            .map(|j| value(report.dequantized(c.index, j)))
            .collect();
        value_width = deq.iter().map(String::len).fold(value_width, usize::max);
        cells.push((channel_cells(labels, c), codes.join(" "), deq));
    }
    let mut grid =
        channel_columns(labels)
            .column("codes", Left, None)
            .column("dequantized", Left, None);
    for (mut row, codes, deq) in cells {
        let deq: Vec<String> = deq.iter().map(|v| format!("{v:>value_width$}")).collect();
        row.push(format!("{codes}{tail}"));
        row.push(format!("{}{tail}", deq.join(" ")));
        grid.rows.push(row);
    }
    let mut parts = vec![Part::Grid(grid)];
    if cols > shown {
        parts.insert(
            0,
            Part::Text(format!(
                "The first {shown} of {cols} values of each channel."
            )),
        );
    }
    Section {
        title: "Values",
        parts,
    }
}
