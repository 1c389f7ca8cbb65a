//! The Formats section: every preset and format on the matrix, by bits per weight, with
//! the Pareto front marked and each one's bits per weight broken into its parts.

use crate::core::format_ladder::FormatLadder;
use crate::core::importance::OutputErrors;
use crate::io::export::doc::Align::{Left, Right};
use crate::io::export::doc::{Grid, Part, Section};
use crate::io::export::num::{VALUE_DIGITS, error, sig, sqnr};

/// Ranking changes a section names before counting the rest.
const CHANGES_SHOWN: usize = 5;

/// The format ladder of `format_ladder`, with output-error columns when the report has them
/// (`output`).
pub(super) fn section(format_ladder: &FormatLadder, output: Option<&OutputErrors>) -> Section {
    let mut grid = Grid::new(&[
        ("", Left),
        ("format", Left),
        ("bits/weight", Right),
        ("bytes", Right),
        ("MAE", Right),
        ("RMSE", Right),
        ("SQNR dB", Right),
        ("collapsed", Right),
    ]);
    if let Some(o) = output {
        for n in super::importance::columns(o) {
            grid = grid.column(n, Right, None);
        }
        grid = grid.column("weighted", Left, None);
    }
    let mut skipped = Vec::new();
    let mut arithmetic = Vec::new();
    let width = format_ladder
        .entries
        .iter()
        .map(|e| e.name.len())
        .max()
        .unwrap_or(0);
    for e in &format_ladder.entries {
        let mark = match (e.pareto, e.active) {
            (true, true) => "*>",
            (true, false) => "*",
            (false, true) => ">",
            (false, false) => "",
        };
        // An entry that could not be measured has its reason, and no figure.
        let (Ok(m), Some(bits), Some(bytes)) = (&e.result, e.bits_per_weight, e.total_bytes) else {
            let why = e.result.as_ref().err().map_or("no cost", String::as_str);
            skipped.push(format!("{}: {why}", e.name));
            continue;
        };
        let bpw = sig(bits, VALUE_DIGITS);
        let parts: Vec<String> = e
            .parts
            .iter()
            .map(|p| format!("{} ({})", sig(p.bits_per_weight, VALUE_DIGITS), p.name))
            .collect();
        arithmetic.push(format!("{:width$}  {} = {bpw}", e.name, parts.join(" + ")));
        let mut row = vec![
            mark.to_string(),
            e.name.clone(),
            bpw,
            bytes.to_string(),
            error(m.overall.mae),
            error(m.overall.rmse),
            sqnr(m.overall.sqnr_db),
            m.collapsed_channels.to_string(),
        ];
        if let Some(o) = output {
            row.extend(super::importance::cells(
                o,
                m.output.as_ref().map(|x| x.overall),
            ));
            row.push(if m.weighted { "yes" } else { "-" }.to_string());
        }
        grid.rows.push(row);
    }
    let mut parts = vec![
        Part::Text(
            "Every preset and format on this matrix, by bits per weight. * marks the Pareto \
             front (no other entry is both smaller and more accurate by RMSE); > marks the \
             active configuration."
                .to_string(),
        ),
        Part::Grid(grid),
    ];
    if output.is_some() {
        parts.extend(output_notes(format_ladder));
    }
    if !skipped.is_empty() {
        parts.push(Part::Text(format!(
            "Not measured, so without a cost: {}.",
            skipped.join("; ")
        )));
    }
    parts.push(Part::Text(
        "Bits per weight, payload first, then each level of metadata:".to_string(),
    ));
    parts.push(Part::Formula(arithmetic));
    Section {
        title: "Formats",
        parts,
    }
}

/// The lines under the grid with output errors: what "weighted" means, the front on the
/// output error, and the rankings that change.
fn output_notes(format_ladder: &FormatLadder) -> Vec<Part> {
    let mut notes = Vec::new();
    notes.push(Part::Text(
        "weighted: quantized with the importance (llama.cpp's formats and presets, as \
             llama-quantize --imatrix). Front on the output error: "
            .to_string()
            + &front(format_ladder),
    ));
    if !format_ladder.changes.is_empty() {
        let mut lines: Vec<String> = format_ladder
            .changes
            .iter()
            .take(CHANGES_SHOWN)
            .map(|c| format!("{}.", c.sentence))
            .collect();
        if format_ladder.changes.len() > CHANGES_SHOWN {
            lines.push(format!(
                "... and {} more reversals.",
                format_ladder.changes.len() - CHANGES_SHOWN
            ));
        }
        notes.push(Part::Text("Rankings that change:".to_string()));
        notes.push(Part::Formula(lines));
    }
    notes
}

/// The entries on the front drawn on the output error, by name.
fn front(format_ladder: &FormatLadder) -> String {
    let names: Vec<&str> = format_ladder
        .entries
        .iter()
        .filter(|e| e.pareto_output)
        .map(|e| e.name.as_str())
        .collect();
    if names.is_empty() {
        "none measured.".to_string()
    } else {
        format!("{}.", names.join(", "))
    }
}
