//! The quantized tensors of a GGUF scan, inspected as stored (written by
//! `io::export::write_scan` as a second section after the floating tensors).

use serde::Serialize;

use super::Failed;
use crate::io::checkpoint::{Checkpoint, Entry};

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
