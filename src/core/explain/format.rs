//! Worked arithmetic for a format with its own block layout: how its scales were formed
//! (a k-quant's integer sub-block scale and min under the super-block's f16 `d` and
//! `dmin`, MXFP4's shared exponent from the block's largest magnitude, NVFP4's UE4M3 scale,
//! NF4's absmax, FP8's scale), then every value's trip to the grid point chosen.
//!
//! The row is encoded again by the same encoder for the integers a report's blocks do not
//! keep (a k-quant's 6-bit scale, MXFP4's exponent byte); the codes and reconstructions
//! shown are the report's.

use crate::core::format::kquant::QK_K;
use crate::core::format::nf4::{self, DoubleQuant};
use crate::core::format::registry::Coded;
use crate::core::format::{Encoded, Format, Fp8Layout, KQuant, Meta};
use crate::core::{Matrix, Report};

use super::ValueExplanation;

/// How one of the format's scale blocks was formed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FormatBlock {
    /// A k-quant sub-block: `step = d × scale`, `min = dmin × min_code`; values are
    /// `(x + min) / step` rounded, clamped to the code range, then shifted by the code
    /// offset (Q3_K, Q6_K).
    KQuant {
        /// The super-block (256 values) the sub-block is in.
        super_block: usize,
        /// Columns `[start, end)`.
        cols: (usize, usize),
        /// The super-block's f16 `d`, as f32.
        d: f32,
        /// The super-block's f16 `dmin`, as f32 (0 for Q3_K and Q6_K).
        dmin: f32,
        /// The sub-block's integer scale.
        scale: i32,
        /// The sub-block's integer min (0 for Q3_K and Q6_K).
        min_code: i32,
        /// Bits of the integer scale and min (4, 6 or 8).
        bits: u32,
        /// `d × scale`.
        step: f32,
        /// `dmin × min_code`.
        min: f32,
    },
    /// An MXFP4 block of 32: the shared exponent from the largest magnitude.
    Mxfp4 {
        /// Columns `[start, end)`.
        cols: (usize, usize),
        /// The block's largest magnitude.
        amax: f32,
        /// `floor(log2(amax))` (0 for an all-zero block).
        floor_log2: i32,
        /// The stored E8M0 byte: `floor(log2(amax)) − 2 + 127` (0 for an all-zero block).
        exponent: u8,
        /// The scale it stands for, `2^(exponent − 127)`.
        scale: f32,
    },
    /// An NF4 block of 64 whose absmax is double-quantized: the absmax less the tensor's
    /// mean absmax (`offset`), divided by its block of 256 absmax values' largest magnitude
    /// (`second_scale`), placed on the 8-bit dynamic map (`code`, `map_value`); stored as
    /// `map_value × second_scale + offset`.
    Nf4Dq {
        /// Columns `[start, end)`.
        cols: (usize, usize),
        /// The block's absmax (its largest magnitude).
        amax: f32,
        /// The mean of every block's absmax in the tensor (one f32).
        offset: f32,
        /// Which block of 256 absmax values (in the tensor's block order) it is in.
        dq_block: usize,
        /// That block's largest `|absmax − offset|`: the second-level scale (one f32).
        second_scale: f32,
        /// The 8-bit code of `(absmax − offset) / second_scale`.
        code: u8,
        /// The dynamic map's value for `code`.
        map_value: f32,
        /// The stored absmax, `map_value × second_scale + offset`: what a grid value is
        /// multiplied by.
        scale: f32,
    },
    /// One scale per block (NVFP4's UE4M3 per 16, NF4's absmax per 64, FP8's per region).
    Scaled {
        /// Columns `[start, end)`.
        cols: (usize, usize),
        /// The largest magnitude of the row's values in the block (an FP8 region spans
        /// more rows: its scale comes from all of them).
        amax: f32,
        /// What the scale is, in words (`UE4M3 scale (amax / 6, rounded)`).
        what: &'static str,
        /// What a grid value is multiplied by.
        scale: f32,
    },
}

impl FormatBlock {
    /// The columns of the row the block covers.
    #[must_use]
    pub fn cols(&self) -> (usize, usize) {
        match *self {
            Self::KQuant { cols, .. }
            | Self::Mxfp4 { cols, .. }
            | Self::Nf4Dq { cols, .. }
            | Self::Scaled { cols, .. } => cols,
        }
    }
}

/// The worked arithmetic of a format.
#[derive(Debug, Clone, PartialEq)]
pub struct FormatWork {
    /// The format's name (`q4_k`).
    pub name: &'static str,
    /// The values the codes stand for (index = stored code), before the block's scale.
    pub grid: Vec<f32>,
    /// Each scale block of the row, in column order.
    pub blocks: Vec<FormatBlock>,
    /// A k-quant's per-value weights in its sub-block searches (`None` for other formats).
    pub weights: Option<SearchWeights>,
}

/// The weight of each value in a k-quant's sub-block search: what its scale (and min)
/// were chosen to minimise the weighted squared (Q2_K without importance: absolute) error
/// of.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchWeights {
    /// The rule, in words (`w = a · sqrt(σ² + x²), σ² = 2·Σx²/256 over the super-block`).
    pub rule: &'static str,
    /// One per column of the row.
    pub values: Vec<f32>,
    /// Each super-block's `σ²` (empty when the rule has none).
    pub sigma2: Vec<f32>,
    /// The row was quantized with an importance vector.
    pub weighted: bool,
}

/// The blocks of row `row` of `x` under format `info`, from `report`'s blocks and, for
/// the integers they do not keep, the row encoded again (for NF4 with double
/// quantization, every block's absmax of `matrix`: the offset and the second-level scales
/// span rows).
pub(super) fn work(
    (name, coded): (&'static str, Coded),
    report: &Report,
    matrix: &Matrix,
    row: usize,
    x: &[f32],
) -> FormatWork {
    let (rows, cols) = report.shape;
    let amax = |c: (usize, usize)| x[c.0..c.1].iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let mut enc = Encoded::default();
    let mut scratch = vec![0.0f32; cols];
    // The importance the report was quantized with, this row's vector.
    let qw = report.importance().map(|i| i.row(row, rows));
    let meta = match coded {
        Coded::Row(f @ (Format::K(_) | Format::Mxfp4)) => f
            .encode_row_weighted(x, qw, &mut enc, &mut scratch)
            .ok()
            .map(|()| enc.meta.clone()),
        _ => None,
    };
    let weights = match coded {
        Coded::Row(Format::K(k)) => Some(search_weights(k, x, qw)),
        _ => None,
    };
    let blocks = match (coded, meta) {
        (Coded::Row(Format::K(k)), Some(Meta::K(sbs))) => {
            let len = k.sub_len();
            let bits = match k.code_bits() {
                2 => 4,
                6 => 8,
                _ => 6,
            };
            sbs.iter()
                .enumerate()
                .flat_map(|(s, sb)| {
                    (0..k.sub_blocks()).map(move |j| {
                        let start = s * 256 + j * len;
                        FormatBlock::KQuant {
                            super_block: s,
                            cols: (start, start + len),
                            d: sb.d(),
                            dmin: sb.dmin(),
                            scale: i32::from(sb.scales[j]),
                            min_code: i32::from(sb.mins[j]),
                            bits,
                            step: sb.step(j),
                            min: sb.min(j),
                        }
                    })
                })
                .collect()
        }
        (Coded::Nf4Dq, _) => nf4_dq_blocks(matrix, row),
        (Coded::Row(Format::Mxfp4), Some(Meta::Mxfp4(es))) => es
            .iter()
            .enumerate()
            .map(|(b, &e)| {
                let c = (b * 32, b * 32 + 32);
                let a = amax(c);
                FormatBlock::Mxfp4 {
                    cols: c,
                    amax: a,
                    floor_log2: if a > 0.0 { a.log2().floor() as i32 } else { 0 },
                    exponent: e,
                    scale: report.blocks.at(report.block_index(row, c.0)).scale,
                }
            })
            .collect(),
        _ => {
            let what = match coded {
                Coded::Row(Format::Legacy(_)) => {
                    "d, from ggml's importance-weighted search (as llama-quantize --imatrix)"
                }
                Coded::Row(Format::Nvfp4) => "UE4M3 scale (amax / 6, rounded to UE4M3)",
                Coded::Row(Format::Nf4) => "absmax",
                Coded::Fp8(s) => match s.layout {
                    Fp8Layout::Tensor => {
                        "step: the whole tensor's scale (its amax / the format's largest value)"
                    }
                    Fp8Layout::Tiles { .. } => {
                        "step: its tile's scale (the tile's amax / the format's largest value)"
                    }
                    Fp8Layout::Channel => "step (amax / the format's largest value)",
                },
                Coded::Row(_) | Coded::Nf4Dq => "scale",
            };
            let mut out = Vec::new();
            let mut col = 0;
            while col < cols {
                let b = report.blocks.at(report.block_index(row, col));
                let c = (col, b.cols.1.min(cols).max(col + 1));
                out.push(FormatBlock::Scaled {
                    cols: c,
                    amax: amax(c),
                    what,
                    scale: b.scale,
                });
                col = c.1;
            }
            out
        }
    };
    FormatWork {
        name,
        grid: crate::core::format::registry::coded_grid(coded).values,
        blocks,
        weights,
    }
}

/// A k-quant row's search weights, super-block by super-block.
fn search_weights(k: KQuant, x: &[f32], qw: Option<&[f32]>) -> SearchWeights {
    let mut values = Vec::with_capacity(x.len());
    let mut sigma2 = Vec::new();
    let (xs, _) = x.as_chunks::<QK_K>();
    for (s, xb) in xs.iter().enumerate() {
        let wb = qw.and_then(|w| {
            w.get(s * QK_K..(s + 1) * QK_K)?
                .as_chunks::<QK_K>()
                .0
                .first()
        });
        let (w, s2) = k.search_weights(xb, wb);
        values.extend(w);
        sigma2.extend(s2);
    }
    SearchWeights {
        rule: k.search_weights_rule(qw.is_some()),
        values,
        sigma2,
        weighted: qw.is_some(),
    }
}

/// NF4 blocks of row `row` with their double quantization: every NF4 block's absmax of
/// `matrix` (in row-major block order, as the encoder lists them), quantized again by the
/// same [`DoubleQuant`] the analysis uses.
fn nf4_dq_blocks(matrix: &Matrix, row: usize) -> Vec<FormatBlock> {
    let values = matrix.values();
    let cols = values.ncols();
    let per_row = cols.div_ceil(nf4::BLOCK);
    let absmax: Vec<f32> = values
        .rows()
        .into_iter()
        .flat_map(|r| {
            r.to_vec()
                .chunks(nf4::BLOCK)
                .map(|b| b.iter().fold(0.0f32, |m, v| m.max(v.abs())))
                .collect::<Vec<_>>()
        })
        .collect();
    let dq = DoubleQuant::new(&absmax);
    (0..per_row)
        .map(|j| {
            let b = row * per_row + j;
            let code = dq.codes[b];
            FormatBlock::Nf4Dq {
                cols: (j * nf4::BLOCK, ((j + 1) * nf4::BLOCK).min(cols)),
                amax: absmax[b],
                offset: dq.offset,
                dq_block: b / nf4::DQ_BLOCK,
                second_scale: dq.scales[b / nf4::DQ_BLOCK],
                code,
                map_value: nf4::DYNAMIC_MAP[usize::from(code)],
                scale: dq.absmax(b),
            }
        })
        .collect()
}

/// Every value of the row: its ratio to its block's step, the code chosen, `x̂`.
pub(super) fn values(
    work: &FormatWork,
    report: &Report,
    row: usize,
    x: &[f32],
) -> Vec<ValueExplanation> {
    x.iter()
        .enumerate()
        .map(|(col, &v)| {
            let block = work
                .blocks
                .iter()
                .position(|b| (b.cols().0..b.cols().1).contains(&col))
                .unwrap_or(0);
            let ratio = match work.blocks.get(block) {
                Some(FormatBlock::KQuant { step, min, .. }) if *step != 0.0 => (v + min) / step,
                Some(FormatBlock::Mxfp4 { scale, .. } | FormatBlock::Nf4Dq { scale, .. })
                    if *scale != 0.0 =>
                {
                    v / scale
                }
                // A block with a stored minimum (Q4_1, Q5_1) counts from it.
                Some(FormatBlock::Scaled { scale, .. }) if *scale != 0.0 => {
                    let b = report.blocks.at(report.block_index(row, col));
                    (v - b.offset.unwrap_or(0.0)) / scale
                }
                _ => 0.0,
            };
            let code = report.code(row, col);
            let dequantized = report.dequantized(row, col);
            let grid = usize::try_from(code)
                .ok()
                .and_then(|c| work.grid.get(c))
                .copied()
                .unwrap_or(0.0);
            ValueExplanation {
                col,
                block,
                x: v,
                ratio,
                rounded: grid,
                tie: None,
                unclamped: grid,
                clamp: None,
                code,
                dequantized,
                error: f64::from(dequantized) - f64::from(v),
            }
        })
        .collect()
}
