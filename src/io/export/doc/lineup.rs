//! The Formats section: every preset and format on the matrix, by bits per weight, with
//! the Pareto front marked and each one's bits per weight broken into its parts.

use crate::core::lineup::Lineup;
use crate::io::export::doc::Align::{Left, Right};
use crate::io::export::doc::{Grid, Part, Section};
use crate::io::export::num::{VALUE_DIGITS, error, sig, sqnr};

/// The format ladder of `lineup`.
pub(super) fn section(lineup: &Lineup) -> Section {
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
    let mut skipped = Vec::new();
    let mut arithmetic = Vec::new();
    let width = lineup
        .entries
        .iter()
        .map(|e| e.name.len())
        .max()
        .unwrap_or(0);
    for e in &lineup.entries {
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
        grid.rows.push(vec![
            mark.to_string(),
            e.name.clone(),
            bpw,
            bytes.to_string(),
            error(m.overall.mae),
            error(m.overall.rmse),
            sqnr(m.overall.sqnr_db),
            m.collapsed_channels.to_string(),
        ]);
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
