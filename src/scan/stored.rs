//! The quantized tensors of a GGUF scan, inspected as stored, and how each format writes
//! them (a second section after the floating tensors).

use std::io::{self, Write};

use serde::Serialize;

use super::Failed;
use crate::io::checkpoint::{Checkpoint, Entry};
use crate::io::printable;
use crate::io::safetensors::format_shape;

/// A quantized tensor as stored: what its codes use, and what collapsed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredRow {
    /// The tensor's name.
    pub name: String,
    /// Its ggml type.
    pub dtype: String,
    /// Its shape, rows first.
    pub shape: Vec<usize>,
    /// Distinct values the type's grid has.
    pub levels: usize,
    /// Mean over rows of the grid values used.
    pub mean_used: f64,
    /// Fewest grid values a row uses.
    pub min_used: usize,
    /// Rows collapsed as stored (one value, or every scale 0).
    pub collapsed_rows: usize,
    /// Blocks collapsed as stored.
    pub collapsed_blocks: u64,
    /// Blocks in the tensor.
    pub blocks: u64,
    /// Sub-block scales that are 0.
    pub zero_scales: u64,
    /// Bits per weight of the stored layout.
    pub bits_per_weight: f64,
}

/// Inspects one quantized tensor of a GGUF checkpoint.
pub(super) fn scan_stored(file: &Checkpoint, t: &Entry) -> Result<StoredRow, Failed> {
    let fail = |error: String| Failed {
        name: t.name.clone(),
        error,
    };
    let Checkpoint::Gguf(g) = file else {
        return Err(fail("only GGUF tensors are stored quantized".to_owned()));
    };
    let info = g.info(&t.name).map_err(|e| fail(e.to_string()))?;
    let s = crate::io::stored::inspect(g, info).map_err(|e| fail(e.to_string()))?;
    Ok(StoredRow {
        name: t.name.clone(),
        dtype: t.dtype.clone(),
        shape: t.shape.clone(),
        levels: s.levels,
        mean_used: s.mean_used(),
        min_used: s.min_used(),
        collapsed_rows: s.collapsed_rows,
        collapsed_blocks: s.collapsed_blocks,
        blocks: s.blocks,
        zero_scales: s.scales.zero,
        bits_per_weight: s.bits_per_weight,
    })
}

/// Column names of the stored section.
pub(super) const COLUMNS: [&str; 8] = [
    "tensor",
    "type",
    "shape",
    "levels used (mean)",
    "fewest",
    "collapsed rows",
    "collapsed blocks",
    "bits/w",
];

fn cells(r: &StoredRow) -> [String; 8] {
    [
        printable(&r.name).into_owned(),
        r.dtype.clone(),
        format_shape(&r.shape),
        format!("{:.1} of {}", r.mean_used, r.levels),
        r.min_used.to_string(),
        r.collapsed_rows.to_string(),
        format!("{} of {}", r.collapsed_blocks, r.blocks),
        crate::io::export::num::sig(r.bits_per_weight, 5),
    ]
}

/// Writes the stored section as an aligned table, or a GitHub table with `esc` applied to
/// every cell; nothing when there are no stored tensors.
pub(super) fn write_section(
    out: &mut impl Write,
    rows: &[StoredRow],
    markdown: bool,
    esc: &dyn Fn(&str) -> String,
) -> io::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let title = "quantized tensors, as stored (the original weights are not in the file: levels used and collapse of the stored codes, no error)";
    let cells: Vec<[String; 8]> = rows.iter().map(cells).collect();
    if markdown {
        writeln!(out, "\n{}\n", esc(title))?;
        writeln!(out, "| {} |", COLUMNS.join(" | "))?;
        writeln!(out, "|---|---|---|--:|--:|--:|--:|--:|")?;
        for c in &cells {
            let c: Vec<String> = c.iter().map(|s| esc(s)).collect();
            writeln!(out, "| {} |", c.join(" | "))?;
        }
        return Ok(());
    }
    writeln!(out, "\n{title}\n")?;
    let widths: Vec<usize> = (0..COLUMNS.len())
        .map(|i| {
            cells
                .iter()
                .map(|r| r[i].chars().count())
                .chain([COLUMNS[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |row: &[&str]| -> String {
        let parts: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (s, &w))| {
                if i < 3 {
                    format!("{s:<w$}")
                } else {
                    format!("{s:>w$}")
                }
            })
            .collect();
        parts.join("  ").trim_end().to_owned()
    };
    writeln!(out, "{}", line(&COLUMNS))?;
    for c in &cells {
        let refs: Vec<&str> = c.iter().map(String::as_str).collect();
        writeln!(out, "{}", line(&refs))?;
    }
    Ok(())
}

/// The CSV columns appended when a scan has stored tensors.
pub(super) const CSV_COLUMNS: &str = "stored_levels,stored_mean_used,stored_min_used,stored_collapsed_rows,stored_collapsed_blocks,stored_blocks,stored_zero_scales,stored_bits_per_weight";

/// A stored tensor's CSV fields for [`CSV_COLUMNS`].
pub(super) fn csv_fields(r: &StoredRow) -> [String; 8] {
    [
        r.levels.to_string(),
        r.mean_used.to_string(),
        r.min_used.to_string(),
        r.collapsed_rows.to_string(),
        r.collapsed_blocks.to_string(),
        r.blocks.to_string(),
        r.zero_scales.to_string(),
        r.bits_per_weight.to_string(),
    ]
}
