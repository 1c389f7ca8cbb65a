//! The format ladder's measurement of a format: the same errors, channel by channel, and the
//! same collapsed rows as the format's whole analysis ([`crate::core::analyse()`]), without
//! what the ladder does not show (every code, every block's record, each row's levels and
//! utilization, the matrix-sized buffers they live in).
//!
//! Each row is encoded into buffers of one row, reused by the thread that runs it, and
//! measured at once while it is in cache: `ErrorSums::push` value by value in column order,
//! as the analysis does, and the rows' sums merged in row order, so every figure is the
//! analysis's bit for bit (`tests/it/format_ladder.rs` compares them).

use std::borrow::Cow;

use rayon::prelude::*;

use super::{Coded, Measured};
use crate::core::analyse::AnalyseError;
use crate::core::format::nvfp4_two::{self, Convention, Refused};
use crate::core::format::{Encoded, Format, FormatError, Fp8Scheme, Meta, nf4};
use crate::core::matrix::Matrix;
use crate::core::report::ErrorSums;
use crate::core::watch::{Watch, watched};

/// One row's sums and whether it collapsed (not constant, reconstructed to one value).
struct Row {
    sums: ErrorSums,
    collapsed: bool,
    /// Reconstructions that are not finite (two-level NVFP4 refuses the tensor then).
    infinite: usize,
}

fn row_of(x: &[f32], y: &[f32]) -> Row {
    let mut sums = ErrorSums::default();
    let mut infinite = 0;
    for (&p, &q) in x.iter().zip(y) {
        sums.push(p, q);
        infinite += usize::from(!q.is_finite());
    }
    let first = x.first().copied().unwrap_or(0.0);
    let y0 = y.first().copied().unwrap_or(0.0);
    Row {
        sums,
        collapsed: !x.iter().all(|&v| v == first) && y.iter().all(|&v| v == y0),
        infinite,
    }
}

/// Per-thread scratch: an encoded row and a row of reconstructions.
#[derive(Default)]
struct Scratch {
    enc: Encoded,
    out: Vec<f32>,
    codes: Vec<u8>,
}

impl Scratch {
    fn out(&mut self, cols: usize) -> &mut [f32] {
        self.out.resize(cols, 0.0);
        &mut self.out[..cols]
    }
}

/// Measures `coded` on `matrix` (see the module documentation), each row checked against
/// `watch`.
pub(super) fn measure(
    matrix: &Matrix,
    coded: Coded,
    watch: &Watch,
) -> Result<Measured, AnalyseError> {
    let view = matrix.values();
    let (rows, cols) = view.dim();
    let x: Cow<'_, [f32]> = match view.as_slice() {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(view.iter().copied().collect()),
    };
    let rows_out: Vec<Row> = match coded {
        Coded::Row(f) => {
            f.check_len(cols)?;
            each_row(&x, cols, watch, |_, row, s| {
                let Scratch { enc, out, .. } = s;
                out.resize(cols, 0.0);
                f.encode_row_into(row, enc, &mut out[..cols])
                    .map_err(AnalyseError::from)
            })?
        }
        Coded::Nf4Dq => {
            Format::Nf4.check_len(cols)?;
            // Every block's absmax in row order, as the encoder finds it (the largest
            // magnitude: any order of `max` gives the same value).
            let absmax: Vec<f32> = x
                .par_chunks(nf4::BLOCK)
                .map(|b| b.iter().fold(0.0f32, |m, v| m.max(v.abs())))
                .collect();
            let dq = nf4::DoubleQuant::new(&absmax);
            let per_row = cols / nf4::BLOCK;
            each_row(&x, cols, watch, |r, row, s| {
                let Scratch { enc, out, .. } = s;
                out.resize(cols, 0.0);
                Format::Nf4.encode_row_into(row, enc, &mut out[..cols])?;
                for ((j, c), o) in enc
                    .codes
                    .chunks(nf4::BLOCK)
                    .enumerate()
                    .zip(out.chunks_mut(nf4::BLOCK))
                {
                    nf4::decode_block(dq.absmax(r * per_row + j), c, o);
                }
                debug_assert!(matches!(enc.meta, Meta::Nf4(_)));
                Ok(())
            })?
        }
        Coded::Fp8(scheme) => fp8_rows(&scheme, &view, &x, cols, watch)?,
        Coded::Nvfp4Two(c) => {
            FormatError::whole_blocks("NVFP4", cols, nvfp4_two::BLOCK)?;
            let tensor = c
                .tensor_scale(nvfp4_two::tensor_amax(&x))
                .map_err(FormatError::from)?;
            let table = c.table();
            let out = each_row(&x, cols, watch, |_, row, s| {
                let out = s.out(cols);
                let (xb, _) = row.as_chunks::<{ nvfp4_two::BLOCK }>();
                let (ob, _) = out.as_chunks_mut::<{ nvfp4_two::BLOCK }>();
                let mut codes = [0u8; nvfp4_two::BLOCK];
                for (xs, os) in xb.iter().zip(ob) {
                    let scale = c.encode_block(tensor, xs, &mut codes);
                    Convention::decode_block(&table, c.step(scale, tensor), &codes, os);
                }
                Ok(())
            })?;
            let infinite: usize = out.iter().map(|r| r.infinite).sum();
            if infinite > 0 {
                return Err(FormatError::from(Refused::Infinite {
                    library: c.library(),
                    count: infinite,
                })
                .into());
            }
            out
        }
    };
    let mut total = ErrorSums::default();
    for r in &rows_out {
        total.merge(&r.sums);
    }
    debug_assert_eq!(rows_out.len(), rows);
    Ok(Measured {
        overall: total.metrics(),
        channels: rows_out.iter().map(|r| r.sums.metrics()).collect(),
        collapsed_channels: rows_out.iter().filter(|r| r.collapsed).count(),
        output: None,
        weighted: false,
    })
}

/// Runs `encode(row index, row, scratch)` on every row in parallel (it leaves the row's
/// reconstruction in the scratch's `out`), each checked against `watch`, and measures each
/// row.
fn each_row(
    x: &[f32],
    cols: usize,
    watch: &Watch,
    encode: impl Fn(usize, &[f32], &mut Scratch) -> Result<(), AnalyseError> + Sync,
) -> Result<Vec<Row>, AnalyseError> {
    x.par_chunks(cols.max(1))
        .enumerate()
        .map_init(Scratch::default, |s, (r, row)| {
            watched(Some(watch), || encode(r, row, s))?;
            Ok(row_of(row, &s.out[..cols]))
        })
        .collect()
}

/// FP8: the regions' scales first (a tile spans rows), then each row under its scales.
fn fp8_rows(
    scheme: &Fp8Scheme,
    view: &ndarray::ArrayView2<'_, f32>,
    x: &[f32],
    cols: usize,
    watch: &Watch,
) -> Result<Vec<Row>, AnalyseError> {
    let (rows, _) = view.dim();
    let (th, tw) = scheme.tile(rows, cols);
    let scales = scheme.scales(view);
    let per_row = cols.div_ceil(tw);
    each_row(x, cols, watch, |r, row, s| {
        let Scratch { out, codes, .. } = s;
        out.resize(cols, 0.0);
        codes.resize(cols, 0);
        let band = &scales[(r / th) * per_row..][..per_row];
        scheme.encode_row(row, band, tw, &mut codes[..cols], &mut out[..cols]);
        Ok(())
    })
}
