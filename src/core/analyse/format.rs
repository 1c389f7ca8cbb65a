//! The analysis of a format with its own block layout (a k-quant, an i-quant or ternary
//! type, MXFP4, NVFP4, NF4 with or without double quantization, FP8): its exact encoder runs over the rows, and the result
//! is a [`Report`] like any other, so the panes, the exporters and the exercises read it the
//! same way.
//!
//! What differs from an integer configuration:
//! - codes are the format's stored codes (a k-quant's unsigned code, an E2M1 or NF4 index,
//!   an FP8 byte), `[qmin, qmax]` the range of that code (`0..=2^bits - 1`);
//! - the reconstruction is kept as the encoder's decoder produced it (the grid is not
//!   uniform, and the scales are themselves quantized), so every dequantized value is the
//!   reference decoder's, bit for bit;
//! - blocks are the format's scale blocks (a k-quant's sub-blocks, MXFP4's 32, NVFP4's 16,
//!   NF4's 64, FP8's regions cut along rows): `scale` is the step a grid value is multiplied
//!   by, `offset` what is subtracted after (k-quants with mins), as stored;
//! - levels used count distinct grid values (E2M1's two zeros are one level), utilization is
//!   the span of the grid values used over the grid's span; for a codebook (the i-quant
//!   lattice types) levels are its points, and utilization the points used over those it
//!   has;
//! - the granularity ladder is one rung, the format's own blocks: the format fixes them (the
//!   format ladder, [`crate::core::format_ladder`], compares it with everything else).

use std::borrow::Cow;

use rayon::prelude::*;

use super::AnalyseError;
use crate::core::config::Config;
use crate::core::format::nf4::{self, DoubleQuant};
use crate::core::format::nvfp4_two::{self, Convention};
use crate::core::format::registry::{Coded, coded_grid, format_bits};
use crate::core::format::{Encoded, Format, FormatError, Fp8Formula, Grid, Legacy, Meta, SubBlock};
use crate::core::importance::Importance;
use crate::core::matrix::Matrix;
use crate::core::pages::Pages;
use crate::core::params::{BlockParams, BlockStats};
use crate::core::report::blocks::{Record, record};
use crate::core::report::{
    Blocks, ChannelReport, CodeBuf, Codes, ErrorSums, Layout, Memory, Report,
};
use crate::core::watch::{Watch, watched};

/// Encodes `matrix` in the format `coded` and reports it (see the module documentation),
/// with `weights` (checked to fit the matrix) for a format whose reference reads an
/// importance vector.
pub(super) fn analyse_format(
    matrix: &Matrix,
    config: &Config,
    coded: Coded,
    weights: Option<&Importance>,
    watch: Option<&Watch>,
) -> Result<Report, AnalyseError> {
    let view = matrix.values();
    let (rows, cols) = view.dim();
    let x: Cow<'_, [f32]> = match view.as_slice() {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(view.iter().copied().collect()),
    };
    let mut codes = vec![0u8; rows * cols];
    let mut values = vec![0.0f32; rows * cols];
    let (steps, points) = encode(coded, &view, &x, weights, watch, &mut codes, &mut values)?;
    let grid = coded_grid(coded);
    // A legacy type reported under its integer preset: the preset's zero point (Q4_0's and
    // Q5_0's implicit 8 and 16) and its stored minimum (Q4_1, Q5_1) as the block's offset.
    let (zero_point, always_offset) = match coded {
        Coded::Row(Format::Legacy(l)) => {
            (l.code_offset(), matches!(l, Legacy::Q4_1 | Legacy::Q5_1))
        }
        _ => (0, false),
    };
    let layout = layout_of(&steps, cols);
    // Blocks and channels in parallel, like the encoding (each is on its own values).
    let records: Vec<Record> = steps
        .par_iter()
        .map(|b| {
            let mut st = BlockStats::EMPTY;
            st.extend(&x[b.start..b.start + b.len]);
            let offset = (always_offset || b.min != 0.0).then_some(-b.min);
            let p = BlockParams {
                code_scale: b.step,
                scale: b.step,
                zero_point,
                code_offset: offset,
                offset,
                range: (st.min, st.max),
                degenerate: b.step == 0.0,
                widened: false,
                negative_extreme: false,
                problem: None,
            };
            record(&p, &st, 0)
        })
        .collect();
    let (qmin, qmax) = config.code_range();
    let levels = grid.levels() as u32;
    let grid_span = grid_span(&grid);
    let sums: Vec<ErrorSums> = x
        .par_chunks(cols.max(1))
        .zip(values.par_chunks(cols.max(1)))
        .map(|(a, b)| {
            let mut s = ErrorSums::default();
            for (&p, &q) in a.iter().zip(b) {
                s.push(p, q);
            }
            s
        })
        .collect();
    let channels: Vec<ChannelReport> = (0..rows)
        .into_par_iter()
        .map(|r| {
            let span = r * cols..(r + 1) * cols;
            channel(
                r,
                matrix.labels()[r].clone(),
                &x[span.clone()],
                &codes[span.clone()],
                &values[span],
                &grid,
                (levels, grid_span),
                &sums[r],
                points.as_ref().and_then(|p| p.get(r).copied()),
            )
        })
        .collect();
    let mut total = ErrorSums::default();
    for s in &sums {
        total.merge(s);
    }
    let collapsed = channels.iter().filter(|c| c.collapsed).count();
    Ok(Report {
        config: *config,
        qmin,
        qmax,
        clamp_range: (qmin, qmax),
        shape: (rows, cols),
        memory: memory(coded, config, (rows, cols), steps.len()),
        blocks: Blocks::new(Pages::Heap(records), layout, (rows, cols)),
        channels,
        overall: total.metrics(),
        collapsed_channels: collapsed,
        ladder: Vec::new(),
        quantized_with: None,
        output: None,
        importance: None,
        layout,
        codes: Codes::Stored(CodeBuf::U8(Pages::Heap(codes))),
        values: Some(values),
        fallback: None,
    })
}

/// A codebook's points one row uses, and the points it has.
type Points = (usize, usize);

/// A codebook format's points used by each row, and the points it has.
type RowPoints = Option<Vec<Points>>;

/// One row's sub-blocks, and for a codebook format its points.
type RowBlocks = (Vec<SubBlock>, Option<Points>);

/// Encodes the matrix (`x` its values in row order) into `codes` and `values`; returns
/// each block: where it starts in the matrix, its length along the row, its step (what a
/// grid value is multiplied by) and its min (what is subtracted after); and for a codebook
/// format, each row's points used.
fn encode(
    coded: Coded,
    view: &ndarray::ArrayView2<'_, f32>,
    x: &[f32],
    weights: Option<&Importance>,
    watch: Option<&Watch>,
    codes: &mut [u8],
    values: &mut [f32],
) -> Result<(Vec<SubBlock>, RowPoints), AnalyseError> {
    let (rows, cols) = view.dim();
    Ok(match coded {
        Coded::Row(f) => return row_format(f, x, cols, weights, watch, codes, values),
        Coded::Nf4Dq => (nf4_dq(x, cols, codes, values)?, None),
        Coded::Nvfp4Two(c) => (nvfp4_two_level(c, x, cols, codes, values)?, None),
        Coded::Fp8(s) => {
            let enc = s.encode(view, Some(values));
            codes.copy_from_slice(&enc.codes);
            // Transformer Engine stores amax / max's inverse: codes are x * scale.
            let inverse = s.formula == Fp8Formula::InverseScale;
            let per_row = enc.tiles_per_row();
            let blocks = (0..rows)
                .flat_map(|r| {
                    let enc = &enc;
                    (0..per_row).map(move |t| {
                        let start = t * enc.tile.1;
                        let scale = enc.scale_at(r, start);
                        SubBlock {
                            start: r * cols + start,
                            len: enc.tile.1.min(cols - start),
                            step: if inverse { 1.0 / scale } else { scale },
                            min: 0.0,
                        }
                    })
                })
                .collect();
            (blocks, None)
        }
    })
}

/// Rows encoded in parallel (row `r` with its importance, when given; each checked against
/// `watch`): codes and values written, each row's sub-blocks returned (their starts in the
/// matrix), and for a codebook format each row's points used.
fn row_format(
    f: Format,
    x: &[f32],
    cols: usize,
    weights: Option<&Importance>,
    watch: Option<&Watch>,
    codes: &mut [u8],
    values: &mut [f32],
) -> Result<(Vec<SubBlock>, RowPoints), AnalyseError> {
    f.check_len(cols)?;
    let rows = x.len() / cols.max(1);
    let per_row: Result<Vec<RowBlocks>, AnalyseError> = x
        .par_chunks(cols)
        .zip(codes.par_chunks_mut(cols))
        .zip(values.par_chunks_mut(cols))
        .enumerate()
        .map_init(Encoded::default, |enc, (r, ((row, c), v))| {
            let w = weights.map(|imp| imp.row(r, rows));
            watched(watch, || {
                f.encode_row_weighted(row, w, enc, v)
                    .map_err(|e| AnalyseError::from(e.in_row(r)))
            })?;
            c.copy_from_slice(&enc.codes);
            let blocks = enc
                .sub_blocks()
                .into_iter()
                .map(|b| SubBlock {
                    start: r * cols + b.start,
                    ..b
                })
                .collect();
            Ok((blocks, enc.codebook_usage()))
        })
        .collect();
    let (blocks, points): (Vec<Vec<SubBlock>>, Vec<Option<Points>>) = per_row?.into_iter().unzip();
    let points = f
        .grid_points()
        .map(|_| points.into_iter().flatten().collect());
    Ok((blocks.into_iter().flatten().collect(), points))
}

/// NF4 per row, then every block's absmax (in row order, as bitsandbytes flattens the
/// tensor) double-quantized, and the rows decoded with those.
fn nf4_dq(
    x: &[f32],
    cols: usize,
    codes: &mut [u8],
    values: &mut [f32],
) -> Result<Vec<SubBlock>, AnalyseError> {
    Format::Nf4.check_len(cols)?;
    let absmax: Vec<f32> = x
        .par_chunks(cols)
        .zip(codes.par_chunks_mut(cols))
        .zip(values.par_chunks_mut(cols))
        .map_init(Encoded::default, |enc, ((row, c), v)| {
            // Whole blocks, checked above, so encoding cannot fail.
            let _ = Format::Nf4.encode_row_into(row, enc, v);
            c.copy_from_slice(&enc.codes);
            match &enc.meta {
                Meta::Nf4(a) => a.clone(),
                _ => Vec::new(),
            }
        })
        .flatten()
        .collect();
    let dq = DoubleQuant::new(&absmax);
    if let Some(e) = dq.not_finite(&absmax, cols / nf4::BLOCK) {
        return Err(e.into());
    }
    values
        .par_chunks_mut(nf4::BLOCK)
        .zip(codes.par_chunks(nf4::BLOCK))
        .enumerate()
        .for_each(|(b, (v, c))| nf4::decode_block(dq.absmax(b), c, v));
    Ok((0..absmax.len())
        .map(|b| SubBlock {
            start: b * nf4::BLOCK,
            len: nf4::BLOCK,
            step: dq.absmax(b),
            min: 0.0,
        })
        .collect())
}

/// Two-level NVFP4 over the whole matrix (its tensor scale is the matrix's): codes and
/// values written, one block of 16 per step.
fn nvfp4_two_level(
    c: Convention,
    x: &[f32],
    cols: usize,
    codes: &mut [u8],
    values: &mut [f32],
) -> Result<Vec<SubBlock>, AnalyseError> {
    FormatError::whole_blocks("NVFP4", cols, nvfp4_two::BLOCK)?;
    let enc = nvfp4_two::encode(c, x, values).map_err(FormatError::from)?;
    codes.copy_from_slice(&enc.codes);
    Ok((0..enc.scales.len())
        .map(|b| SubBlock {
            start: b * nvfp4_two::BLOCK,
            len: nvfp4_two::BLOCK,
            step: enc.step(b),
            min: 0.0,
        })
        .collect())
}

/// The layout whose blocks are `steps`, in order: one per row (a block as long as the
/// row), or groups of equal length along each row.
fn layout_of(steps: &[SubBlock], cols: usize) -> Layout {
    match steps.first() {
        Some(b) if b.len >= cols => Layout::Rows,
        Some(b) => Layout::Groups {
            size: b.len,
            per_row: cols.div_ceil(b.len),
        },
        None => Layout::Rows,
    }
}

/// The largest minus the smallest finite grid value.
fn grid_span(grid: &Grid) -> f32 {
    let finite = || grid.values.iter().copied().filter(|v| v.is_finite());
    let lo = finite().fold(f32::INFINITY, f32::min);
    let hi = finite().fold(f32::NEG_INFINITY, f32::max);
    if hi > lo { hi - lo } else { 0.0 }
}

/// One row's report from its values, codes and reconstruction.
#[expect(
    clippy::too_many_arguments,
    reason = "one row's parts, each a slice or number"
)]
fn channel(
    index: usize,
    label: Option<String>,
    x: &[f32],
    codes: &[u8],
    y: &[f32],
    grid: &Grid,
    (levels, span): (u32, f32),
    sums: &ErrorSums,
    points: Option<Points>,
) -> ChannelReport {
    let usage = grid.usage(codes);
    // A codebook's utilization counts its points used of those it has.
    let (levels_used, levels, utilization) = match points {
        Some((used, all)) => (used as u32, all as u32, used as f64 / all.max(1) as f64),
        None => (
            usage.used as u32,
            levels,
            match usage.span {
                Some((lo, hi)) if span > 0.0 => f64::from(hi - lo) / f64::from(span),
                _ => 0.0,
            },
        ),
    };
    let first = x.first().copied().unwrap_or(0.0);
    let constant = x.iter().all(|&v| v == first);
    let y0 = y.first().copied().unwrap_or(0.0);
    let one_value = y.iter().all(|&v| v == y0);
    let min = x.iter().copied().fold(f32::INFINITY, f32::min);
    let max = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    ChannelReport {
        index,
        label,
        metrics: sums.metrics(),
        levels_used,
        levels_available: levels,
        utilization,
        collapsed: !constant && one_value,
        constant,
        min_code: codes.iter().copied().min().map_or(0, i32::from),
        max_code: codes.iter().copied().max().map_or(0, i32::from),
        clipped: 0,
        min: if x.is_empty() { 0.0 } else { min },
        max: if x.is_empty() { 0.0 } else { max },
    }
}

/// The storage of the matrix in the format: its payload, and every level of metadata
/// (sub-block scales, super-block scales, second-level scales) as the format's blocks.
fn memory(coded: Coded, config: &Config, (rows, cols): (usize, usize), blocks: usize) -> Memory {
    let elements = (rows * cols) as u64;
    let payload = elements * u64::from(config.bits);
    let parts = format_bits(coded, rows, cols);
    let total = parts.iter().map(|(_, b)| b).sum::<f64>().round() as u64;
    let memory = Memory::with_metadata(
        elements,
        u32::from(config.bits),
        blocks as u64,
        total.saturating_sub(payload),
    );
    if payload <= total {
        return memory;
    }
    // A codebook (the i-quants): a code per value names a level, but the stored payload is
    // the grid indices of groups of values, fewer bits than a code each.
    let payload = parts.first().map_or(0, |(_, b)| b.round() as u64);
    let metadata = total.saturating_sub(payload);
    let n = elements.max(1) as f64;
    let total_bytes = payload.div_ceil(8) + metadata.div_ceil(8);
    Memory {
        metadata_bits_per_block: if blocks > 0 && metadata.is_multiple_of(blocks as u64) {
            metadata / blocks as u64
        } else {
            0
        },
        metadata_bits: metadata,
        payload_bytes: payload.div_ceil(8),
        metadata_bytes: metadata.div_ceil(8),
        total_bytes,
        bits_per_weight: total as f64 / n,
        ratio_to_f32: total_bytes as f64 / (4.0 * n),
        ratio_to_f16: total_bytes as f64 / (2.0 * n),
        ..memory
    }
}
