//! A quantized GGUF tensor inspected as stored: its blocks decoded by [`crate::core::format`]
//! (the stored codes, scales and mins, and the dequantized values, bit for bit as gguf-py's
//! `dequantize`), and what the codes say about the tensor.
//!
//! [`inspect`] reads the tensor a few rows at a time (about [`CHUNK_BYTES`] of stored bytes)
//! and hands each decoded row to [`crate::core::stored`], which computes what they say and
//! keeps only counts, so its memory does not grow with the tensor:
//!
//! - per row, the distinct values of the grid its codes use ([`RowStats::used`] of
//!   [`Stored::levels`]): a row that uses 3 of Q4_K's 16 levels is barely resolved;
//! - **collapsed blocks and rows, as stored**: every code of the block (or row) stands for
//!   one grid value, or every scale that multiplies them is 0, so its values carry no
//!   variation at all (a row whose blocks all store a scale of 0 is collapsed whatever its
//!   codes);
//! - the distribution of the effective scales (one per sub-block: k-quants `d * scale`,
//!   legacy types `d`, MXFP4 and NVFP4 the decoded block scale);
//! - the memory layout: the parts of a block and the bits per weight they make.
//!
//! The original weights are not in the file, so no error against them can be measured here;
//! [`dequantize`] gives the values the codes reconstruct to, which other configurations can
//! then be analysed on.

use std::ops::Range;

use rayon::prelude::*;

use crate::core::format::{Format, FormatError, IQuant, KQuant, Legacy, Ternary};
use crate::core::pages::Pages;
use crate::core::stored::Inspection;
pub use crate::core::stored::{LayoutPart, RowStats, Scales, Stored};
use crate::core::{Matrix, MatrixError, first_not_finite_in};
use crate::io::gguf::{GgmlType, Gguf, GgufError, TensorInfo};

/// Stored bytes decoded at a time.
pub const CHUNK_BYTES: usize = 1 << 20;

/// The decoder of a ggml type, if there is one.
#[must_use]
pub fn format_of(ty: GgmlType) -> Option<Format> {
    Some(match ty.name {
        "Q4_0" => Format::Legacy(Legacy::Q4_0),
        "Q4_1" => Format::Legacy(Legacy::Q4_1),
        "Q5_0" => Format::Legacy(Legacy::Q5_0),
        "Q5_1" => Format::Legacy(Legacy::Q5_1),
        "Q8_0" => Format::Legacy(Legacy::Q8_0),
        "Q2_K" => Format::K(KQuant::Q2K),
        "Q3_K" => Format::K(KQuant::Q3K),
        "Q4_K" => Format::K(KQuant::Q4K),
        "Q5_K" => Format::K(KQuant::Q5K),
        "Q6_K" => Format::K(KQuant::Q6K),
        "MXFP4" => Format::Mxfp4,
        "NVFP4" => Format::Nvfp4,
        name => {
            let i = IQuant::ALL.into_iter().find(|q| q.name() == name);
            let t = Ternary::ALL.into_iter().find(|t| t.name() == name);
            return i.map(Format::I).or(t.map(Format::T));
        }
    })
}

/// True when the blocks of `ty` can be decoded.
#[must_use]
pub fn decodes(ty: GgmlType) -> bool {
    format_of(ty).is_some()
}

/// Why a stored tensor could not be inspected.
fn unsupported(g: &Gguf, t: &TensorInfo) -> GgufError {
    GgufError::Unsupported {
        file: g.path().display().to_string(),
        tensor: t.name.clone(),
        ggml_type: t.ggml_type,
    }
}

/// The bytes of one stored row of `t`.
fn row_bytes(t: &TensorInfo) -> usize {
    usize::try_from(t.row_bytes()).unwrap_or(usize::MAX).max(1)
}

/// Reads rows `rows` of `t` about [`CHUNK_BYTES`] of stored bytes at a time and hands each
/// read's rows and bytes to `each`.
fn for_reads(
    g: &Gguf,
    t: &TensorInfo,
    rows: Range<usize>,
    mut each: impl FnMut(Range<usize>, &[u8]) -> Result<(), GgufError>,
) -> Result<(), GgufError> {
    let per_chunk = (CHUNK_BYTES / row_bytes(t)).max(1);
    let mut at = rows.start;
    while at < rows.end {
        let end = (at + per_chunk).min(rows.end);
        each(at..end, &g.read_rows(t, at..end)?)?;
        at = end;
    }
    Ok(())
}

/// Decodes rows `rows` of `t` and hands each decoded row to `each`.
fn for_rows(
    g: &Gguf,
    t: &TensorInfo,
    rows: Range<usize>,
    mut each: impl FnMut(usize, &crate::core::format::Encoded),
) -> Result<(), GgufError> {
    let format = format_of(t.ggml_type).ok_or_else(|| unsupported(g, t))?;
    let cols = t.row_len();
    for_reads(g, t, rows, |read, bytes| {
        for (i, row) in bytes.chunks_exact(row_bytes(t)).enumerate() {
            // The header check made every row whole blocks of the right size.
            let enc = format.unpack(row, cols).map_err(|_| unsupported(g, t))?;
            each(read.start + i, &enc);
        }
        Ok(())
    })
}

/// The dequantized values of quantized tensor `t`, as a matrix (rows as in the file),
/// read about [`CHUNK_BYTES`] of stored rows at a time and decoded straight into the
/// matrix's memory (fresh memory: no pass of zeros), the rows of each read in parallel. A
/// tensor whose values as `f32` cannot be allocated is refused as too large.
pub fn dequantize(g: &Gguf, t: &TensorInfo) -> Result<Matrix, GgufError> {
    let (rows, cols) = (t.rows(), t.row_len());
    let file = g.path().display().to_string();
    let too_large = || GgufError::TooLarge {
        file: file.clone(),
        tensor: t.name.clone(),
        bytes: t.elements().saturating_mul(4),
    };
    let count = rows.checked_mul(cols).ok_or_else(too_large)?;
    let mut values = Pages::<f32>::try_zeroed(count).ok_or_else(too_large)?;
    let format = format_of(t.ggml_type).ok_or_else(|| unsupported(g, t))?;
    let mut first_bad = None;
    for_reads(g, t, 0..rows, |read, bytes| {
        let out = &mut values[read.start * cols..read.end * cols];
        // The read's rows decoded in parallel, each checked for values that are not finite
        // while it is in cache. The header check made every row whole blocks of the right
        // size, so `unpack` does not fail.
        let bad: Result<Vec<Option<usize>>, FormatError> = out
            .par_chunks_mut(cols.max(1))
            .zip(bytes.par_chunks_exact(row_bytes(t)))
            .map(|(row, raw)| {
                format.unpack(raw, cols)?.decode_into(row);
                Ok(first_not_finite_in(row))
            })
            .collect();
        let bad = bad.map_err(|_| unsupported(g, t))?;
        if first_bad.is_none() {
            first_bad =
                (bad.iter().enumerate()).find_map(|(r, c)| c.map(|c| (read.start + r) * cols + c));
        }
        Ok(())
    })?;
    Matrix::from_flat(values, rows, cols, first_bad).map_err(|e| match e {
        MatrixError::NotFinite { row, col, value } => GgufError::NotFinite {
            file,
            tensor: t.name.clone(),
            row,
            col,
            value: f64::from(value),
        },
        _ => GgufError::Empty {
            file,
            tensor: t.name.clone(),
            shape: t.shape.clone(),
        },
    })
}

/// The stored codes, block metadata and dequantized values of row `row` of `t`.
pub fn decode_row(
    g: &Gguf,
    t: &TensorInfo,
    row: usize,
) -> Result<(crate::core::format::Encoded, Vec<f32>), GgufError> {
    let mut out = None;
    for_rows(g, t, row..row + 1, |_, enc| {
        out = Some((enc.clone(), enc.decode()));
    })?;
    out.ok_or_else(|| unsupported(g, t))
}

/// Inspects quantized tensor `t` as stored (see the [module documentation](self)): its rows
/// decoded a few at a time into [`crate::core::stored::Inspection`].
pub fn inspect(g: &Gguf, t: &TensorInfo) -> Result<Stored, GgufError> {
    let format = format_of(t.ggml_type).ok_or_else(|| unsupported(g, t))?;
    let mut inspection = Inspection::new(format, t.row_len(), t.rows());
    for_rows(g, t, 0..t.rows(), |_, enc| inspection.add_row(enc))?;
    Ok(inspection.finish(t.name.clone(), t.ggml_type.name))
}
