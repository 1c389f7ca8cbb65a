//! A quantized GGUF tensor inspected as stored: its blocks decoded by [`crate::core::format`]
//! (the stored codes, scales and mins, and the dequantized values, bit for bit as gguf-py's
//! `dequantize`), and what the codes say about the tensor.
//!
//! [`inspect`] reads the tensor a few rows at a time (about [`CHUNK_BYTES`] of stored bytes)
//! and keeps only counts, so its memory does not grow with the tensor:
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

use serde::Serialize;

use crate::core::format::{Format, KQuant, Legacy};
use crate::core::{Matrix, MatrixError};
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
        _ => return None,
    })
}

/// True when the blocks of `ty` can be decoded.
#[must_use]
pub fn decodes(ty: GgmlType) -> bool {
    format_of(ty).is_some()
}

/// One row of a stored tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RowStats {
    /// Distinct grid values its codes use.
    pub used: usize,
    /// Blocks whose codes all stand for one value, or whose scales are all 0.
    pub collapsed_blocks: usize,
    /// Whether the whole row is collapsed (one grid value throughout, or every scale 0).
    pub collapsed: bool,
}

/// The effective scales of a tensor's sub-blocks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scales {
    /// Sub-blocks (one scale each).
    pub count: u64,
    /// Scales that are exactly 0.
    pub zero: u64,
    /// Negative scales (Q4_0/Q5_0 store the sign of the block's extreme value in `d`).
    pub negative: u64,
    /// Quantiles of |scale| over the non-zero scales: min, 1 %, 50 %, 99 %, max.
    pub quantiles: Option<[f32; 5]>,
    /// Counts of |scale| per power of two, `(exponent, count)`: `e` counts scales in
    /// `[2^e, 2^(e+1))` (of a sample of every other scale, repeatedly, past 4M scales).
    pub log2_histogram: Vec<(i32, u64)>,
}

/// One part of the block layout.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LayoutPart {
    /// What the part is.
    pub name: &'static str,
    /// Bits per block.
    pub bits: u32,
    /// Bits per weight.
    pub bits_per_weight: f64,
}

/// What the stored codes of a quantized tensor say.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stored {
    /// The tensor's name.
    pub name: String,
    /// Its ggml type.
    pub ggml_type: &'static str,
    /// Rows and values per row.
    pub shape: (usize, usize),
    /// Values per block.
    pub block_len: usize,
    /// Distinct finite values the type's grid has.
    pub levels: usize,
    /// Bits per weight of the block layout.
    pub bits_per_weight: f64,
    /// The block's parts.
    pub layout: Vec<LayoutPart>,
    /// Every row, in order.
    pub rows: Vec<RowStats>,
    /// Blocks in the tensor.
    pub blocks: u64,
    /// Blocks collapsed as stored.
    pub collapsed_blocks: u64,
    /// Rows collapsed as stored.
    pub collapsed_rows: usize,
    /// The effective scales.
    pub scales: Scales,
}

impl Stored {
    /// Mean over rows of the grid values used.
    #[must_use]
    pub fn mean_used(&self) -> f64 {
        if self.rows.is_empty() {
            return 0.0;
        }
        self.rows.iter().map(|r| r.used as f64).sum::<f64>() / self.rows.len() as f64
    }

    /// Fewest grid values any row uses.
    #[must_use]
    pub fn min_used(&self) -> usize {
        self.rows.iter().map(|r| r.used).min().unwrap_or(0)
    }
}

/// Why a stored tensor could not be inspected.
fn unsupported(g: &Gguf, t: &TensorInfo) -> GgufError {
    GgufError::Unsupported {
        file: g.path().display().to_string(),
        tensor: t.name.clone(),
        ggml_type: t.ggml_type,
    }
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
    let row_bytes = usize::try_from(t.row_bytes()).unwrap_or(usize::MAX).max(1);
    let per_chunk = (CHUNK_BYTES / row_bytes).max(1);
    let mut at = rows.start;
    while at < rows.end {
        let end = (at + per_chunk).min(rows.end);
        let bytes = g.read_rows(t, at..end)?;
        for (i, row) in bytes.chunks_exact(row_bytes).enumerate() {
            // The header check made every row whole blocks of the right size.
            let enc = format.unpack(row, cols).map_err(|_| unsupported(g, t))?;
            each(at + i, &enc);
        }
        at = end;
    }
    Ok(())
}

/// The dequantized values of quantized tensor `t`, as a matrix (rows as in the file).
pub fn dequantize(g: &Gguf, t: &TensorInfo) -> Result<Matrix, GgufError> {
    let (rows, cols) = (t.rows(), t.row_len());
    let file = g.path().display().to_string();
    let too_large = || GgufError::TooLarge {
        file: file.clone(),
        tensor: t.name.clone(),
        bytes: t.elements().saturating_mul(4),
    };
    let count = rows.checked_mul(cols).ok_or_else(too_large)?;
    let mut values = Vec::new();
    values.try_reserve_exact(count).map_err(|_| too_large())?;
    values.resize(count, 0.0_f32);
    for_rows(g, t, 0..rows, |r, enc| {
        enc.decode_into(&mut values[r * cols..(r + 1) * cols]);
    })?;
    let values = ndarray::Array2::from_shape_vec((rows, cols), values).map_err(|_| too_large())?;
    Matrix::new(values).map_err(|e| match e {
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

/// Inspects quantized tensor `t` as stored (see the [module documentation](self)).
pub fn inspect(g: &Gguf, t: &TensorInfo) -> Result<Stored, GgufError> {
    let format = format_of(t.ggml_type).ok_or_else(|| unsupported(g, t))?;
    let grid = format.grid();
    let block_len = format.block_len();
    let (n_rows, cols) = (t.rows(), t.row_len());
    let mut rows = Vec::with_capacity(n_rows);
    let mut steps: Vec<f32> = Vec::new();
    let mut zero = 0_u64;
    let mut negative = 0_u64;
    let mut nonzero = 0_u64;
    for_rows(g, t, 0..n_rows, |_, enc| {
        let subs = enc.sub_blocks();
        let mut block_zero = vec![true; cols.div_ceil(block_len)];
        for s in &subs {
            if s.step == 0.0 {
                zero += 1;
                continue;
            }
            if let Some(b) = block_zero.get_mut(s.start / block_len) {
                *b = false;
            }
            steps.push(s.step.abs());
            nonzero += 1;
            if s.step < 0.0 {
                negative += 1;
            }
        }
        let value = |c: u8| grid.values.get(usize::from(c)).copied().unwrap_or(f32::NAN);
        let one_value = |codes: &[u8]| {
            codes
                .first()
                .is_none_or(|&c0| codes.iter().all(|&c| value(c) == value(c0)))
        };
        let collapsed_blocks = enc
            .codes
            .chunks(block_len)
            .zip(&block_zero)
            .filter(|(codes, zero)| **zero || one_value(codes))
            .count();
        rows.push(RowStats {
            used: grid.usage(&enc.codes).used,
            collapsed_blocks,
            collapsed: block_zero.iter().all(|z| *z) || one_value(&enc.codes),
        });
        // Quantiles of millions of scales: keep memory bounded by sampling past 4M.
        if steps.len() > 1 << 22 {
            steps = steps.iter().step_by(2).copied().collect();
        }
    })?;
    let layout = format.layout();
    let blocks = (n_rows * cols.div_ceil(block_len)) as u64;
    Ok(Stored {
        name: t.name.clone(),
        ggml_type: t.ggml_type.name,
        shape: (n_rows, cols),
        block_len,
        levels: grid.levels(),
        bits_per_weight: layout.bits_per_weight(),
        layout: layout
            .parts
            .iter()
            .map(|p| LayoutPart {
                name: p.name,
                bits: p.bits,
                bits_per_weight: f64::from(p.bits) / layout.block_len as f64,
            })
            .collect(),
        blocks,
        collapsed_blocks: rows.iter().map(|r| r.collapsed_blocks as u64).sum(),
        collapsed_rows: rows.iter().filter(|r| r.collapsed).count(),
        rows,
        scales: scales(steps, nonzero + zero, zero, negative),
    })
}

/// The distribution of the non-zero |scales| in `steps`.
/// (`steps` may be a sample of them: `count` is the true number of sub-blocks).
fn scales(mut steps: Vec<f32>, count: u64, zero: u64, negative: u64) -> Scales {
    steps.sort_by(f32::total_cmp);
    let q = |p: f64| steps[((steps.len() - 1) as f64 * p).round() as usize];
    let quantiles = (!steps.is_empty()).then(|| [q(0.0), q(0.01), q(0.5), q(0.99), q(1.0)]);
    let mut histogram: Vec<(i32, u64)> = Vec::new();
    for s in steps.iter().filter(|s| s.is_finite() && **s > 0.0) {
        let e = s.log2().floor() as i32;
        match histogram.last_mut() {
            Some((last, n)) if *last == e => *n += 1,
            _ => histogram.push((e, 1)),
        }
    }
    Scales {
        count,
        zero,
        negative,
        quantiles,
        log2_histogram: histogram,
    }
}
