//! What the stored codes of a quantized tensor say, from its decoded rows: the numbers
//! `report`, `scan` and the explorer's stored view all read.
//!
//! [`Inspection`] takes the tensor one decoded row ([`Encoded`]) at a time and keeps only
//! counts, so its memory does not grow with the tensor (the reader, `io::stored`, decodes a
//! few rows at a time):
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

use serde::Serialize;

use crate::core::format::{Encoded, Format, Grid};

/// Scales kept for the quantiles before they are sampled (every other one, repeatedly).
const MAX_SCALES_KEPT: usize = 1 << 22;

/// Added to a finite `f32`'s binary exponent (-149 ..= 127) to index the histogram.
const EXPONENT_OFFSET: i32 = 149;
/// Histogram bins: every binary exponent of a finite non-zero `f32`, and 128 (the `log2` of
/// the largest rounds up to it).
const BINS: usize = 149 + 129;

/// The histogram bin of a non-zero finite |scale|.
fn bin_of(x: f32) -> Option<usize> {
    (x.is_finite() && x > 0.0)
        .then(|| usize::try_from(x.log2().floor() as i32 + EXPONENT_OFFSET).ok())
        .flatten()
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
    /// Counts of |scale| per power of two, `(exponent, count)`: `e` counts the non-zero
    /// scales in `[2^e, 2^(e+1))`, every one of them (the quantiles come from a sample of
    /// every other scale, repeatedly, past 4M scales).
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
    /// Rows with at least one collapsed block.
    pub rows_with_collapsed_blocks: usize,
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

    /// Blocks per row.
    #[must_use]
    pub fn blocks_per_row(&self) -> usize {
        self.shape.1.div_ceil(self.block_len.max(1))
    }

    /// The share of the grid's levels row `row` uses, in `[0, 1]` (0 for no such row).
    #[must_use]
    pub fn utilization(&self, row: usize) -> f64 {
        match self.rows.get(row) {
            Some(r) if self.levels > 0 => r.used as f64 / self.levels as f64,
            _ => 0.0,
        }
    }

    /// The rows in the order `order` lists them (see [`RowOrder`]).
    #[must_use]
    pub fn row_order(&self, order: RowOrder) -> Vec<usize> {
        let mut rows: Vec<usize> = (0..self.rows.len())
            .filter(|&i| {
                !order.collapsed_only || {
                    let r = self.rows[i];
                    r.collapsed || r.collapsed_blocks > 0
                }
            })
            .collect();
        if order.fewest_first {
            rows.sort_by_key(|&i| (self.rows[i].used, i));
        }
        rows
    }
}

/// How the rows of a stored tensor are listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RowOrder {
    /// Fewest levels used first (ties by index), else by index.
    pub fewest_first: bool,
    /// Only the rows that are collapsed or have a collapsed block.
    pub collapsed_only: bool,
}

/// A stored tensor being inspected, one decoded row at a time.
#[derive(Debug)]
pub struct Inspection {
    format: Format,
    grid: Grid,
    cols: usize,
    rows: Vec<RowStats>,
    steps: Vec<f32>,
    /// Non-zero |scales| per power of two, indexed by exponent + [`EXPONENT_OFFSET`].
    bins: Vec<u64>,
    zero: u64,
    negative: u64,
    nonzero: u64,
}

impl Inspection {
    /// An inspection of rows of `cols` values in `format`; `rows` is a capacity hint.
    #[must_use]
    pub fn new(format: Format, cols: usize, rows: usize) -> Self {
        Self {
            format,
            grid: format.grid(),
            cols,
            rows: Vec::with_capacity(rows),
            steps: Vec::new(),
            bins: vec![0; BINS],
            zero: 0,
            negative: 0,
            nonzero: 0,
        }
    }

    /// Takes in the next row, decoded.
    pub fn add_row(&mut self, enc: &Encoded) {
        let block_len = self.format.block_len().max(1);
        let mut block_zero = vec![true; self.cols.div_ceil(block_len)];
        for s in enc.sub_blocks() {
            if s.step == 0.0 {
                self.zero += 1;
                continue;
            }
            if let Some(b) = block_zero.get_mut(s.start / block_len) {
                *b = false;
            }
            self.steps.push(s.step.abs());
            if let Some(bin) = bin_of(s.step.abs()).and_then(|b| self.bins.get_mut(b)) {
                *bin += 1;
            }
            self.nonzero += 1;
            if s.step < 0.0 {
                self.negative += 1;
            }
        }
        let grid = &self.grid;
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
        self.rows.push(RowStats {
            used: enc
                .codebook_usage()
                .map_or_else(|| grid.usage(&enc.codes).used, |(used, _)| used),
            collapsed_blocks,
            collapsed: block_zero.iter().all(|z| *z) || one_value(&enc.codes),
        });
        // Quantiles of millions of scales: keep memory bounded by sampling.
        if self.steps.len() > MAX_SCALES_KEPT {
            self.steps = self.steps.iter().step_by(2).copied().collect();
        }
    }

    /// What the rows taken in say, for the tensor `name` of ggml type `ggml_type`.
    #[must_use]
    pub fn finish(self, name: String, ggml_type: &'static str) -> Stored {
        let block_len = self.format.block_len();
        let layout = self.format.layout();
        let n_rows = self.rows.len();
        let blocks = (n_rows * self.cols.div_ceil(block_len.max(1))) as u64;
        let rows = self.rows;
        Stored {
            name,
            ggml_type,
            shape: (n_rows, self.cols),
            block_len,
            levels: self
                .format
                .grid_points()
                .unwrap_or_else(|| self.grid.levels()),
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
            rows_with_collapsed_blocks: rows.iter().filter(|r| r.collapsed_blocks > 0).count(),
            rows,
            scales: scales(
                self.steps,
                &self.bins,
                self.nonzero + self.zero,
                self.zero,
                self.negative,
            ),
        }
    }
}

/// The distribution of the non-zero |scales|: quantiles of `steps` (which may be a sample of
/// them: `count` is the true number of sub-blocks) and the histogram `bins`.
fn scales(mut steps: Vec<f32>, bins: &[u64], count: u64, zero: u64, negative: u64) -> Scales {
    steps.sort_by(f32::total_cmp);
    let q = |p: f64| {
        let last = steps.len().saturating_sub(1);
        steps
            .get(((last as f64) * p).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    let quantiles = (!steps.is_empty()).then(|| [q(0.0), q(0.01), q(0.5), q(0.99), q(1.0)]);
    let histogram: Vec<(i32, u64)> = bins
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .filter_map(|(i, &n)| Some((i32::try_from(i).ok()? - EXPONENT_OFFSET, n)))
        .collect();
    Scales {
        count,
        zero,
        negative,
        quantiles,
        log2_histogram: histogram,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::format::KQuant;

    /// A row of `values` encoded in `format` by the reference encoder.
    fn encoded(format: Format, values: &[f32]) -> Encoded {
        format.encode_row(values).unwrap()
    }

    #[test]
    fn a_zero_row_is_collapsed_with_every_block_and_a_ramp_is_not() {
        let format = Format::K(KQuant::Q4K);
        let mut i = Inspection::new(format, 512, 2);
        let ramp: Vec<f32> = (0..512).map(|v| (v % 64) as f32 - 32.0).collect();
        i.add_row(&encoded(format, &ramp));
        i.add_row(&encoded(format, &[0.0; 512]));
        let s = i.finish("t".into(), "Q4_K");
        assert_eq!(s.shape, (2, 512));
        assert_eq!(s.blocks, 4);
        assert_eq!(s.blocks_per_row(), 2);
        assert!(!s.rows[0].collapsed && s.rows[0].used > 8, "{:?}", s.rows);
        assert_eq!(
            s.rows[1],
            RowStats {
                used: 1,
                collapsed_blocks: 2,
                collapsed: true
            }
        );
        assert_eq!((s.collapsed_rows, s.collapsed_blocks), (1, 2));
        assert_eq!(s.rows_with_collapsed_blocks, 1);
        // Eight sub-block scales per block; the zero row's are all 0.
        assert_eq!(s.scales.count, 32);
        assert_eq!(s.scales.zero, 16);
        let binned: u64 = s.scales.log2_histogram.iter().map(|(_, n)| n).sum();
        assert_eq!(binned, 16);
        assert_eq!(bin_of(1.0), Some(149));
        assert_eq!(bin_of(f32::MAX), Some(BINS - 1));
        assert_eq!(bin_of(f32::from_bits(1)), Some(0));
        assert_eq!(bin_of(0.0), None);
        assert_eq!(s.bits_per_weight, 4.5);
        assert_eq!(s.utilization(1), 1.0 / 16.0);
        assert_eq!(s.utilization(9), 0.0);
        assert_eq!(
            s.row_order(RowOrder {
                fewest_first: true,
                collapsed_only: false
            }),
            [1, 0]
        );
        assert_eq!(
            s.row_order(RowOrder {
                fewest_first: false,
                collapsed_only: true
            }),
            [1]
        );
    }

    #[test]
    fn no_rows_give_empty_statistics() {
        let s = Inspection::new(Format::K(KQuant::Q4K), 256, 0).finish("e".into(), "Q4_K");
        assert_eq!((s.mean_used(), s.min_used(), s.blocks), (0.0, 0, 0));
        assert!(s.scales.quantiles.is_none() && s.scales.log2_histogram.is_empty());
        assert_eq!(s.bits_per_weight, 4.5);
    }
}
