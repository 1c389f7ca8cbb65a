//! The one result of an analysis: block parameters, codes, per-channel and overall metrics,
//! memory cost and the granularity ladder. Panes, exporters and exercises read it; none of
//! them computes a number of its own.

use serde::Serialize;

use crate::core::config::{Axis, Config, Granularity};
use crate::core::fallback::Fallback;
use crate::core::importance::{Importance, ImportanceSource, OutputErrors};
use crate::core::kernel::{Quantizer, Step};
use crate::core::matrix::Shared;
use crate::core::pages::Pages;
use crate::core::params::BlockParams;

pub(crate) mod blocks;
pub use blocks::{Blocks, Iter as BlockIter};
pub(crate) use blocks::{Record, record, set_clipped};

/// One block: a rectangle of the matrix sharing a scale and zero point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Block {
    /// Rows `[start, end)`.
    pub rows: (usize, usize),
    /// Columns `[start, end)`.
    pub cols: (usize, usize),
    /// The scale as stored (used to dequantize).
    pub scale: f32,
    /// The scale the codes were computed with (differs from `scale` when scales are stored
    /// as f16 or bf16).
    pub code_scale: f32,
    /// Integer zero point (0 for formats that store a float offset instead).
    pub zero_point: i32,
    /// Stored float offset (GGUF Q4_1/Q5_1 `min`), if the format has one.
    pub offset: Option<f32>,
    /// Smallest value in the block.
    pub min: f32,
    /// Largest value in the block.
    pub max: f32,
    /// The real range the scale was formed from (after widening to 0 and clipping).
    pub range: (f32, f32),
    /// Values whose code was clamped (into `[qmin, qmax]`, or the range of
    /// [`Report::clamp_range`]).
    pub clipped: usize,
    /// The computed scale was zero or tiny and the degenerate policy replaced it.
    pub degenerate: bool,
    /// The range was widened to include 0 (the block's values lay on one side of 0).
    #[serde(skip)]
    pub widened_to_zero: bool,
    /// The scale was formed from a negative value (the signed-extreme rules: the value of
    /// largest magnitude with its sign).
    #[serde(skip)]
    pub negative_extreme: bool,
}

impl Block {
    /// Number of values in the block.
    #[must_use]
    pub fn len(&self) -> usize {
        (self.rows.1 - self.rows.0) * (self.cols.1 - self.cols.0)
    }

    /// True for a block with no values (never produced by the core).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(crate) fn params(&self) -> BlockParams {
        BlockParams {
            code_scale: self.code_scale,
            scale: self.scale,
            zero_point: self.zero_point,
            code_offset: self.offset.map(|_| self.range.0),
            offset: self.offset,
            range: self.range,
            degenerate: self.degenerate,
            widened: self.widened_to_zero,
            negative_extreme: self.negative_extreme,
            problem: None,
        }
    }
}

/// Reconstruction error of a set of values, accumulated in `f64`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
pub struct Metrics {
    /// Mean absolute error.
    pub mae: f64,
    /// Root-mean-square error.
    pub rmse: f64,
    /// Largest absolute error.
    pub max_error: f64,
    /// Signal-to-quantization-noise ratio `20·log10(‖x‖ / ‖x − x̂‖)` in dB; `None` when the
    /// error is zero (infinitely good) or the signal is zero.
    pub sqnr_db: Option<f64>,
}

/// Sums from which [`Metrics`] are formed.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ErrorSums {
    /// Σ|e|.
    pub abs: f64,
    /// Σe².
    pub sq: f64,
    /// max |e|.
    pub max: f64,
    /// Σx².
    pub signal: f64,
    /// Number of values.
    pub count: usize,
}

impl ErrorSums {
    /// Adds one value and its reconstruction.
    #[inline]
    pub fn push(&mut self, x: f32, x_hat: f32) {
        let x = f64::from(x);
        let e = f64::from(x_hat) - x;
        let a = e.abs();
        self.abs += a;
        self.sq += e * e;
        if a > self.max {
            self.max = a;
        }
        self.signal += x * x;
        self.count += 1;
    }

    /// Adds another set of sums.
    pub fn merge(&mut self, other: &Self) {
        self.abs += other.abs;
        self.sq += other.sq;
        self.max = self.max.max(other.max);
        self.signal += other.signal;
        self.count += other.count;
    }

    /// The metrics these sums describe.
    #[must_use]
    pub fn metrics(&self) -> Metrics {
        if self.count == 0 {
            return Metrics::default();
        }
        let n = self.count as f64;
        let sqnr_db =
            (self.sq > 0.0 && self.signal > 0.0).then(|| 10.0 * (self.signal / self.sq).log10());
        Metrics {
            mae: self.abs / n,
            rmse: (self.sq / n).sqrt(),
            max_error: self.max,
            sqnr_db,
        }
    }
}

/// One channel (row) of the matrix under the active configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChannelReport {
    /// 0-based row index.
    pub index: usize,
    /// The row's label, if the input named it.
    pub label: Option<String>,
    /// Reconstruction error of the row.
    #[serde(flatten)]
    pub metrics: Metrics,
    /// Distinct codes the row uses.
    pub levels_used: u32,
    /// Codes in `[qmin, qmax]`.
    pub levels_available: u32,
    /// `(max code − min code) / (qmax − qmin)`: the fraction of the code range the row spans.
    /// It can exceed 1 when codes are clamped to a wider range than `[qmin, qmax]` (see
    /// [`Report::clamp_range`]).
    pub utilization: f64,
    /// A non-constant row whose codes are all one value, or whose blocks all store a scale
    /// of 0 with one offset, so that it reconstructs to one value whatever its codes (a GGUF
    /// f16 `d` that rounds to 0).
    pub collapsed: bool,
    /// All the row's values are equal.
    pub constant: bool,
    /// Smallest code in the row.
    pub min_code: i32,
    /// Largest code in the row.
    pub max_code: i32,
    /// Values of the row whose code was clamped.
    pub clipped: usize,
    /// Smallest value of the row.
    pub min: f32,
    /// Largest value of the row.
    pub max: f32,
}

/// Storage cost of the quantized matrix.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Memory {
    /// Number of values.
    pub elements: u64,
    /// Code width.
    pub bits: u32,
    /// Number of blocks (scales).
    pub blocks: u64,
    /// Metadata bits per block (scale + zero point or float offset); for a format whose
    /// metadata does not divide evenly among its blocks (second-level scales), 0, and
    /// [`Memory::metadata_bits`] holds the total.
    pub metadata_bits_per_block: u64,
    /// Every metadata bit of the matrix: `blocks * metadata_bits_per_block` for an integer
    /// configuration; a format's scales at every level.
    #[serde(skip)]
    pub metadata_bits: u64,
    /// Codes, packed: `ceil(elements * bits / 8)`.
    pub payload_bytes: u64,
    /// Scales and zero points, packed: `ceil(blocks * metadata_bits_per_block / 8)`.
    pub metadata_bytes: u64,
    /// Payload plus metadata.
    pub total_bytes: u64,
    /// `(elements * bits + blocks * metadata_bits_per_block) / elements`.
    pub bits_per_weight: f64,
    /// `total_bytes / (4 * elements)`.
    pub ratio_to_f32: f64,
    /// `total_bytes / (2 * elements)`.
    pub ratio_to_f16: f64,
}

impl Memory {
    /// The cost of `elements` values of `bits` bits in `blocks` blocks.
    #[must_use]
    pub fn new(elements: u64, bits: u32, blocks: u64, metadata_bits_per_block: u64) -> Self {
        Self::with_metadata(elements, bits, blocks, blocks * metadata_bits_per_block)
    }

    /// The cost of `elements` values of `bits` bits in `blocks` blocks with
    /// `metadata_bits` of metadata in all.
    #[must_use]
    pub fn with_metadata(elements: u64, bits: u32, blocks: u64, metadata_bits: u64) -> Self {
        let payload_bits = elements * u64::from(bits);
        let metadata_bits_per_block = if blocks > 0 && metadata_bits.is_multiple_of(blocks) {
            metadata_bits / blocks
        } else {
            0
        };
        let payload_bytes = payload_bits.div_ceil(8);
        let metadata_bytes = metadata_bits.div_ceil(8);
        let total_bytes = payload_bytes + metadata_bytes;
        let n = elements.max(1) as f64;
        Self {
            elements,
            bits,
            blocks,
            metadata_bits_per_block,
            metadata_bits,
            payload_bytes,
            metadata_bytes,
            total_bytes,
            bits_per_weight: (payload_bits + metadata_bits) as f64 / n,
            ratio_to_f32: total_bytes as f64 / (4.0 * n),
            ratio_to_f16: total_bytes as f64 / (2.0 * n),
        }
    }
}

/// One rung of the granularity ladder: the active scheme at another granularity.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rung {
    /// `tensor`, `channel` or `group:G`.
    pub granularity: Granularity,
    /// Number of scales.
    pub scales: u64,
    /// Storage cost.
    pub memory: Memory,
    /// Error over the whole matrix.
    pub overall: Metrics,
    /// Error of each row.
    pub channels: Vec<Metrics>,
    /// Rows that collapse (see [`ChannelReport::collapsed`]).
    pub collapsed_channels: usize,
    /// This rung is the active configuration's granularity.
    pub active: bool,
    /// Its output and importance-weighted errors, once computed (see [`Report::output`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<OutputErrors>,
}

/// A report's codes.
///
/// The analysis computes every code (the levels used, the clamp counts and the errors are
/// counted from them) but does not keep them: a 4096 x 4096 matrix's codes would be 16 MiB
/// written to memory the process has never touched, and most readers of a report (its
/// panes, `report`'s summary) never look at a code. [`Report::code`] recomputes a code from
/// the matrix and its block's parameters on request, with the reference [`Quantizer`] that
/// `tests/it/kernels.rs` checks the analysis's own loops against, bit for bit.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Codes {
    /// The codes as computed (a format's encoder, or [`crate::core::Options::keep_codes`]).
    Stored(CodeBuf),
    /// Recomputed from these values on request. Two reports with equal values, configuration
    /// and blocks have equal codes; a stored and a derived set compare unequal.
    Derived(Shared),
}

/// Integer codes stored compactly as offsets from the low end of [`Report::clamp_range`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum CodeBuf {
    /// Up to 256 levels.
    U8(Pages<u8>),
    /// Up to 65 536 levels.
    U16(Pages<u16>),
}

/// How block indices map to matrix positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    Tensor,
    Rows,
    Columns,
    Groups { size: usize, per_row: usize },
}

impl Layout {
    pub(crate) fn new(granularity: Granularity, axis: Axis, cols: usize) -> Self {
        match (granularity, axis) {
            (Granularity::Tensor, _) => Self::Tensor,
            (Granularity::Channel, Axis::Rows) => Self::Rows,
            (Granularity::Channel, Axis::Columns) => Self::Columns,
            (Granularity::Group(g), _) => Self::Groups {
                size: g,
                per_row: cols.div_ceil(g.max(1)),
            },
        }
    }

    #[inline]
    pub(crate) fn block_of(self, r: usize, c: usize) -> usize {
        match self {
            Self::Tensor => 0,
            Self::Rows => r,
            Self::Columns => c,
            Self::Groups { size, per_row } => r * per_row + c / size,
        }
    }

    pub(crate) fn block_count(self, rows: usize, cols: usize) -> usize {
        match self {
            Self::Tensor => 1,
            Self::Rows => rows,
            Self::Columns => cols,
            Self::Groups { per_row, .. } => rows * per_row,
        }
    }

    /// The rectangle of block `b`: rows `[r0, r1)`, columns `[c0, c1)`.
    pub(crate) fn rect(
        self,
        b: usize,
        rows: usize,
        cols: usize,
    ) -> ((usize, usize), (usize, usize)) {
        match self {
            Self::Tensor => ((0, rows), (0, cols)),
            Self::Rows => ((b, b + 1), (0, cols)),
            Self::Columns => ((0, rows), (b, b + 1)),
            Self::Groups { size, per_row } => {
                let r = b / per_row;
                let c0 = (b % per_row) * size;
                ((r, r + 1), (c0, (c0 + size).min(cols)))
            }
        }
    }
}

/// Everything an analysis found. Built by [`crate::core::analyse()`].
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The configuration analysed.
    pub config: Config,
    /// Smallest code of the range the scales are formed for.
    pub qmin: i32,
    /// Largest code of the range the scales are formed for.
    pub qmax: i32,
    /// The range codes are clamped into ([`Config::clamp_range`]): `(qmin, qmax)`, or the
    /// whole integer type under [`crate::core::config::CodeClamp::Type`], where a code can
    /// land just outside `[qmin, qmax]`.
    pub clamp_range: (i32, i32),
    /// `(rows, columns)`.
    pub shape: (usize, usize),
    /// Every block, in row-major block order.
    pub blocks: Blocks,
    /// One entry per row.
    pub channels: Vec<ChannelReport>,
    /// Error over the whole matrix.
    pub overall: Metrics,
    /// Rows that collapse (see [`ChannelReport::collapsed`]).
    pub collapsed_channels: usize,
    /// Storage cost.
    pub memory: Memory,
    /// The same scheme at every granularity, coarse to fine (empty when not requested).
    pub ladder: Vec<Rung>,
    /// The importance the codes were quantized with (a llama.cpp format with an importance
    /// vector, as `llama-quantize --imatrix`); `None` for the reference quantization.
    pub quantized_with: Option<ImportanceSource>,
    /// The error of the layer's output and the importance-weighted error, once computed (a
    /// stage after the report, [`crate::core::output::OutputStage`]); `None` before, or
    /// without importance and activations.
    pub output: Option<OutputErrors>,
    /// The importance the codes were quantized with (for the worked arithmetic, which
    /// encodes a row again).
    pub(crate) importance: Option<std::sync::Arc<Importance>>,
    pub(crate) layout: Layout,
    pub(crate) codes: Codes,
    /// A format's reconstruction, as its decoder produced it (`None` for integer
    /// configurations, whose values follow from the codes and the blocks).
    pub(crate) values: Option<Vec<f32>>,
    /// The format asked for, when its blocks do not divide the rows and llama.cpp's
    /// fallback was applied instead ([`Report::config`] is then the fallback's).
    pub fallback: Option<Fallback>,
}

/// How badly a channel is reconstructed, for [`Report::worst_of`]: collapsed first, then
/// the lowest SQNR (error without signal lowest, no error highest).
fn badness(c: &ChannelReport) -> (bool, f64) {
    let sqnr = match c.metrics.sqnr_db {
        Some(db) => db,
        None if c.metrics.mae > 0.0 => f64::NEG_INFINITY,
        None => f64::INFINITY,
    };
    (c.collapsed, -sqnr)
}

impl Report {
    /// What was applied, in one line: the configuration's summary, after
    /// `q4_k -> q5_0 (rows of 384): ` when a llama.cpp fallback was.
    #[must_use]
    pub fn applied(&self) -> String {
        match &self.fallback {
            Some(f) => format!("{}: {}", f.label(), self.config.summary()),
            None => self.config.summary(),
        }
    }

    /// The index of the block holding `(row, col)`.
    #[must_use]
    pub fn block_index(&self, row: usize, col: usize) -> usize {
        self.layout.block_of(row, col)
    }

    /// The code of `(row, col)`. Panics if out of bounds.
    #[must_use]
    pub fn code(&self, row: usize, col: usize) -> i32 {
        let i = row * self.shape.1 + col;
        let off = match &self.codes {
            Codes::Stored(CodeBuf::U8(v)) => i32::from(v[i]),
            Codes::Stored(CodeBuf::U16(v)) => i32::from(v[i]),
            Codes::Derived(values) => {
                let x = values.view()[(row, col)];
                let b = self.blocks.at(self.block_index(row, col));
                return self.quantizer(&b).code(x).0;
            }
        };
        self.clamp_range.0 + off
    }

    /// The reconstruction of `(row, col)`. Panics if out of bounds.
    #[must_use]
    pub fn dequantized(&self, row: usize, col: usize) -> f32 {
        if let Some(v) = &self.values {
            return v[row * self.shape.1 + col];
        }
        let b = self.blocks.at(self.block_index(row, col));
        self.quantizer(&b).dequantize(self.code(row, col))
    }

    /// The codes of one row.
    #[must_use]
    pub fn row_codes(&self, row: usize) -> Vec<i32> {
        (0..self.shape.1).map(|c| self.code(row, c)).collect()
    }

    /// The reconstruction of one row.
    #[must_use]
    pub fn row_dequantized(&self, row: usize) -> Vec<f32> {
        (0..self.shape.1)
            .map(|c| self.dequantized(row, c))
            .collect()
    }

    /// Every intermediate of quantizing the value `x` found at `(row, col)`.
    #[must_use]
    pub fn step(&self, row: usize, col: usize, x: f32) -> Step {
        let b = self.blocks.at(self.block_index(row, col));
        if self.values.is_some() {
            // A format: the value against its block's step, and the grid point chosen.
            let ratio = if b.scale == 0.0 { 0.0 } else { x / b.scale };
            return Step {
                ratio,
                unclamped: ratio,
                tie: false,
                code: self.code(row, col),
                clamped: false,
                dequantized: self.dequantized(row, col),
            };
        }
        self.quantizer(&b).step(x)
    }

    /// The reconstruction of every code `qmin..=qmax` in block `block`: the quantization
    /// grid the block's values snap to.
    #[must_use]
    pub fn levels(&self, block: usize) -> Vec<f32> {
        let b = self.blocks.at(block);
        if let Some(f) = self.config.format {
            // A format's grid under the block's step and offset, code by code.
            let offset = b.offset.unwrap_or(0.0);
            return crate::core::format::registry::grid_of(f)
                .values
                .iter()
                .map(|&g| g * b.scale + offset)
                .collect();
        }
        let q = self.quantizer(&b);
        (self.qmin..=self.qmax)
            .map(|code| q.dequantize(code))
            .collect()
    }

    /// The worst-reconstructed row relative to its own size: a collapsed row first, then the
    /// lowest SQNR (a row with error but no signal counts as the lowest, one without error
    /// as the highest); the first on ties. A quiet row that collapses has a small absolute
    /// error but has lost its shape, so it comes before a loud row with a larger MAE.
    #[must_use]
    pub fn worst_channel(&self) -> Option<usize> {
        self.worst_of(0..self.channels.len())
    }

    /// [`Report::worst_channel`] among `rows` (indices out of range are skipped).
    #[must_use]
    pub fn worst_of(&self, rows: impl IntoIterator<Item = usize>) -> Option<usize> {
        rows.into_iter()
            .filter_map(|i| self.channels.get(i).map(|c| (i, badness(c))))
            .fold(
                None,
                |best: Option<(usize, (bool, f64))>, (i, b)| match best {
                    Some((_, top)) if top >= b => best,
                    _ => Some((i, b)),
                },
            )
            .map(|(i, _)| i)
    }

    /// The `n` worst channels in the order of [`Report::worst_channel`], worst first (the
    /// lower index first on ties).
    #[must_use]
    pub fn worst_channels(&self, n: usize) -> Vec<usize> {
        let mut ranked: Vec<(usize, (bool, f64))> = self
            .channels
            .iter()
            .enumerate()
            .map(|(i, c)| (i, badness(c)))
            .collect();
        // A total order (NaN badness from non-finite values sorts consistently), so the
        // sort cannot panic on an inconsistent comparison.
        ranked.sort_by(|(i, a), (j, b)| b.0.cmp(&a.0).then(b.1.total_cmp(&a.1)).then(i.cmp(j)));
        ranked.into_iter().take(n).map(|(i, _)| i).collect()
    }

    /// The importance vector the codes were quantized with, if any (see
    /// [`Report::quantized_with`]).
    #[must_use]
    pub fn importance(&self) -> Option<&Importance> {
        self.importance.as_deref()
    }

    /// The rung of the ladder with this granularity, if the ladder has one.
    #[must_use]
    pub fn rung(&self, granularity: Granularity) -> Option<&Rung> {
        self.ladder.iter().find(|r| r.granularity == granularity)
    }

    pub(crate) fn quantizer(&self, b: &Block) -> Quantizer {
        Quantizer::new(
            &self.config,
            &b.params(),
            self.clamp_range.0,
            self.clamp_range.1,
        )
    }
}
