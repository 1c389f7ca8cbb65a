//! The quantized tensors of a GGUF scan, inspected as stored (written by
//! `io::export::write_scan` as a second section after the floating tensors).

use super::{Failed, StoredRow};
use crate::io::checkpoint::{Checkpoint, Entry};

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
