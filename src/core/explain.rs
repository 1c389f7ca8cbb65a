//! Worked arithmetic for one channel, as data: how each scale and zero point touching the
//! row was formed, then every value's trip `x → ratio → rounded → clamped → code → x̂`.
//!
//! [`explain_channel`] reads a [`Report`] (its blocks and the kernel's [`Step`]s) and
//! computes nothing the report does not already decide: the scale, zero point, codes and
//! reconstructions are the report's. It adds the intermediates a person needs to follow the
//! arithmetic (the absmax or `lo`/`hi`, the denominators, the unrounded zero point) and the
//! error `x̂ − x`, taking the formula and its denominator from the [`ParamCalc`] the analysis
//! prepared rather than deciding them again. Formatting into text is the exporters' and the
//! panes' job.
//!
//! [`Step`]: crate::core::kernel::Step

use crate::core::config::{
    Arith, AsymZeroPoint, Clipping, Config, Degenerate, Granularity, QuantExpr, Rounding,
    ScaleDtype, Scheme, SymZeroPoint,
};
use crate::core::params::{ParamCalc, ScaleRule, asymmetric_zero_f64};
use crate::core::{Block, Matrix, Metrics, Report};

mod format;

pub use format::{FormatBlock, FormatWork, SearchWeights};

/// The worked arithmetic of one channel (matrix row) under a report's configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelExplanation {
    /// 0-based row.
    pub row: usize,
    /// The row's label, if it has one.
    pub label: Option<String>,
    /// Smallest code.
    pub qmin: i32,
    /// Largest code.
    pub qmax: i32,
    /// The range codes are clamped into ([`Report::clamp_range`]).
    pub clamp_range: (i32, i32),
    /// How ratios are rounded (the rule that decides ties).
    pub rounding: Rounding,
    /// How a value becomes a ratio (`x / s`, `x × (1/s)`, `x × (1/s) + z`).
    pub quant_expr: QuantExpr,
    /// The granularity the blocks come from.
    pub granularity: Granularity,
    /// Each block the row touches, in column order.
    pub blocks: Vec<BlockExplanation>,
    /// Each value of the row, in column order.
    pub values: Vec<ValueExplanation>,
    /// The row's error, as the report measured it.
    pub metrics: Metrics,
    /// For a format with its own block layout: how its blocks' scales were formed (then
    /// [`ChannelExplanation::blocks`] is empty and each value's `block` indexes these, its
    /// `rounded` is the grid value chosen).
    pub format: Option<FormatWork>,
}

/// How one block's scale and zero point were formed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockExplanation {
    /// The block's index in [`Report::blocks`].
    pub index: usize,
    /// Rows `[start, end)` of the block.
    pub rows: (usize, usize),
    /// Columns `[start, end)` of the block.
    pub cols: (usize, usize),
    /// Smallest value in the block.
    pub min: f32,
    /// Largest value in the block.
    pub max: f32,
    /// The real range `[lo, hi]` the scale was formed from.
    pub range: (f32, f32),
    /// The range was widened to include 0 (it did not contain 0).
    pub widened_to_zero: bool,
    /// The clipping that cut the range, when the configuration clips.
    pub clipping: Option<Clipping>,
    /// The formula of the scale and its inputs.
    pub scale: ScaleFormula,
    /// The formula's value in `f64`, before a degenerate policy replaced it (equal to
    /// `computed_scale` up to the rounding of the arithmetic otherwise).
    pub formula_value: f64,
    /// The scale the codes were computed with.
    pub computed_scale: f32,
    /// The scale as stored, when scales are stored in a 16-bit type.
    pub stored_scale: Option<StoredScale>,
    /// How the zero point (or GGUF float minimum) was formed.
    pub zero_point: ZeroPointFormula,
    /// The computed scale was zero or tiny and this policy replaced it.
    pub degenerate: Option<Degenerate>,
}

/// A scale rounded to its storage type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StoredScale {
    /// The storage type.
    pub dtype: ScaleDtype,
    /// The stored value (used to dequantize).
    pub value: f32,
}

/// Which formula formed a scale, with its inputs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ScaleFormula {
    /// Symmetric max-code: `absmax / max(|qmin|, |qmax|)`.
    MaxCode {
        /// The range's largest magnitude.
        absmax: f32,
        /// `max(|qmin|, |qmax|)`.
        denominator: u32,
    },
    /// Symmetric half-span: `2·absmax / (qmax − qmin)`.
    HalfSpan {
        /// The range's largest magnitude.
        absmax: f32,
        /// `qmax − qmin`.
        span: i32,
    },
    /// Signed extreme: `v / (qmin − z)`, `v` the value of largest magnitude with its sign
    /// (GGUF Q4_0/Q5_0, MLAS symmetric); `v` lands exactly on `qmin`.
    SignedExtreme {
        /// The signed extreme `v`.
        extreme: f32,
        /// `qmin − z`.
        denominator: i32,
        /// `v` was chosen as MLAS does (the larger of `|max|` and `|min|`, `min` on ties)
        /// rather than the first element of largest magnitude.
        min_max: bool,
    },
    /// Asymmetric: `(hi − lo) / (qmax − qmin)`.
    Asymmetric {
        /// Lower end of the range.
        lo: f32,
        /// Upper end of the range.
        hi: f32,
        /// `qmax − qmin`.
        span: i32,
    },
}

/// How a zero point was formed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ZeroPointFormula {
    /// A symmetric scheme's fixed zero point.
    Fixed {
        /// The rule.
        rule: SymZeroPoint,
        /// The zero point.
        value: i32,
    },
    /// `round(qmin − lo / s)`.
    RoundOfShift {
        /// Lower end of the range.
        lo: f32,
        /// `qmin − lo / s` before rounding.
        unrounded: f64,
        /// Rounded, before clamping.
        rounded: f64,
        /// The zero point was clamped into `[qmin, qmax]`.
        clamped: bool,
        /// The zero point.
        value: i32,
    },
    /// `qmin − round(lo / s)`.
    ShiftOfRound {
        /// Lower end of the range.
        lo: f32,
        /// `lo / s` before rounding.
        ratio: f64,
        /// `qmin − round(lo / s)`, before clamping.
        rounded: f64,
        /// The zero point was clamped into `[qmin, qmax]`.
        clamped: bool,
        /// The zero point.
        value: i32,
    },
    /// No integer zero point: the minimum is stored and `x̂ = q·s + min` (GGUF Q4_1/Q5_1).
    FloatMin {
        /// The minimum codes are computed from (`x − min`).
        min: f32,
        /// The minimum as stored (used to dequantize).
        stored: f32,
    },
    /// The degenerate policy set the zero point (the scale was replaced).
    Degenerate {
        /// The zero point.
        value: i32,
    },
}

impl ZeroPointFormula {
    /// The integer zero point (0 for [`ZeroPointFormula::FloatMin`]).
    #[must_use]
    pub fn value(&self) -> i32 {
        match *self {
            Self::Fixed { value, .. }
            | Self::RoundOfShift { value, .. }
            | Self::ShiftOfRound { value, .. }
            | Self::Degenerate { value } => value,
            Self::FloatMin { .. } => 0,
        }
    }
}

/// Which end of the code range a value was clamped to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clamp {
    /// Clamped up to `qmin`.
    ToMin(i32),
    /// Clamped down to `qmax`.
    ToMax(i32),
}

/// One value's trip through the quantizer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValueExplanation {
    /// 0-based column.
    pub col: usize,
    /// Index into [`ChannelExplanation::blocks`].
    pub block: usize,
    /// The value.
    pub x: f32,
    /// The ratio before rounding: `x / s` or `x × (1/s)`; for
    /// [`QuantExpr::ReciprocalAddZero`] with the zero point already added, and for a float
    /// minimum computed from `x − min`.
    pub ratio: f32,
    /// The ratio rounded to an integer (before the zero point is added, when it is added
    /// after rounding).
    pub rounded: f32,
    /// The ratio was exactly halfway between two integers; the rule that decided it.
    pub tie: Option<Rounding>,
    /// The code before clamping (the rounded ratio plus the zero point).
    pub unclamped: f32,
    /// The code was clamped into `[qmin, qmax]`, and to which end.
    pub clamp: Option<Clamp>,
    /// The final code.
    pub code: i32,
    /// The reconstruction `x̂`.
    pub dequantized: f32,
    /// `x̂ − x`, in `f64`.
    pub error: f64,
}

/// The zero point is added after rounding (`round(x / s) + z`).
#[must_use]
pub fn zero_added_after_rounding(expr: QuantExpr) -> bool {
    !matches!(expr, QuantExpr::ReciprocalAddZero)
}

/// The worked arithmetic of row `row` of `matrix` under `report`.
///
/// `report` must be the analysis of `matrix` (it holds the codes; the matrix the values).
///
/// # Panics
/// If `row` is not a row of the report, or the report is not of this matrix's shape.
#[must_use]
pub fn explain_channel(matrix: &Matrix, report: &Report, row: usize) -> ChannelExplanation {
    let config = &report.config;
    let values = matrix.values();
    // What every explanation of the row says, whatever formed its blocks.
    let of_row = |blocks, values, format| ChannelExplanation {
        row,
        label: matrix.labels()[row].clone(),
        qmin: report.qmin,
        qmax: report.qmax,
        clamp_range: report.clamp_range,
        rounding: config.rounding,
        quant_expr: config.conventions.quant_expr,
        granularity: config.granularity,
        blocks,
        values,
        metrics: report.channels[row].metrics,
        format,
    };
    // A format, or a legacy preset quantized with an importance (ggml's weighted search
    // chose its blocks, not the preset's formula).
    let coded = config
        .format
        .map(|info| (info.name, info.coded))
        .or_else(|| {
            report.importance()?;
            let l = crate::core::presets::legacy_type(config)?;
            Some((
                l.name(),
                crate::core::format::registry::Coded::Row(crate::core::format::Format::Legacy(l)),
            ))
        });
    if let Some(coded) = coded {
        let x: Vec<f32> = values.row(row).to_vec();
        let work = format::work(coded, report, matrix, row, &x);
        let explained = format::values(&work, report, row, &x);
        return of_row(Vec::new(), explained, Some(work));
    }
    let mut blocks: Vec<BlockExplanation> = Vec::new();
    let mut explained = Vec::with_capacity(report.shape.1);
    for (col, &x) in values.row(row).iter().enumerate() {
        let index = report.block_index(row, col);
        let at = if let Some(at) = blocks.iter().position(|b| b.index == index) {
            at
        } else {
            blocks.push(explain_block(config, report, index));
            blocks.len() - 1
        };
        let zero = blocks[at].zero_point.value();
        let step = report.step(row, col, x);
        let rounded = if zero_added_after_rounding(config.conventions.quant_expr) {
            step.unclamped - zero as f32
        } else {
            step.unclamped
        };
        let clamp = step
            .clamped
            .then_some(if step.code == report.clamp_range.0 {
                Clamp::ToMin(step.code)
            } else {
                Clamp::ToMax(step.code)
            });
        explained.push(ValueExplanation {
            col,
            block: at,
            x,
            ratio: step.ratio,
            rounded,
            tie: step.tie.then_some(config.rounding),
            unclamped: step.unclamped,
            clamp,
            code: step.code,
            dequantized: step.dequantized,
            error: f64::from(step.dequantized) - f64::from(x),
        });
    }
    of_row(blocks, explained, None)
}

fn explain_block(config: &Config, report: &Report, index: usize) -> BlockExplanation {
    let b: &Block = &report.blocks.at(index);
    // The choices the analysis made for this configuration, from the formulas it used.
    let calc = ParamCalc::new(config, report.qmin, report.qmax);
    let (lo, hi) = b.range;
    let absmax = lo.abs().max(hi.abs());
    let zero_imposed = b.degenerate && calc.imposes_zero();
    let scale = match calc.rule() {
        ScaleRule::MaxCode { denominator } => ScaleFormula::MaxCode {
            absmax,
            denominator,
        },
        ScaleRule::HalfSpan { span } => ScaleFormula::HalfSpan { absmax, span },
        ScaleRule::SignedExtreme {
            denominator,
            min_max,
        } => {
            // The sign of v as the analysis recorded it.
            let extreme = if b.negative_extreme { -absmax } else { absmax };
            ScaleFormula::SignedExtreme {
                extreme,
                denominator,
                min_max,
            }
        }
        ScaleRule::Asymmetric { span } => ScaleFormula::Asymmetric { lo, hi, span },
    };
    let v = match scale {
        ScaleFormula::SignedExtreme { extreme, .. } => extreme,
        _ => absmax,
    };
    // The formula in exact (f64) arithmetic.
    let [formula_value] = calc.rule().scales(Arith::F64, &[v], &[lo], &[hi]);
    let degenerate = b.degenerate.then_some(config.conventions.degenerate);
    let zero_point = if calc.float_min() {
        ZeroPointFormula::FloatMin {
            min: lo,
            stored: b.offset.unwrap_or(lo),
        }
    } else if zero_imposed || b.code_scale == 0.0 {
        ZeroPointFormula::Degenerate {
            value: b.zero_point,
        }
    } else if config.scheme == Scheme::Symmetric {
        ZeroPointFormula::Fixed {
            rule: config.conventions.sym_zero_point,
            value: b.zero_point,
        }
    } else {
        asymmetric_zero_point(config, b, report.qmin, report.qmax)
    };
    BlockExplanation {
        index,
        rows: b.rows,
        cols: b.cols,
        min: b.min,
        max: b.max,
        range: b.range,
        widened_to_zero: b.widened_to_zero,
        clipping: (config.clipping != Clipping::None).then_some(config.clipping),
        scale,
        formula_value,
        computed_scale: b.code_scale,
        stored_scale: (config.scale_dtype != ScaleDtype::F32).then_some(StoredScale {
            dtype: config.scale_dtype,
            value: b.scale,
        }),
        zero_point,
        degenerate,
    }
}

/// The intermediates of an asymmetric zero point, by the formula the analysis uses in f64
/// arithmetic; the value itself is the block's.
fn asymmetric_zero_point(config: &Config, b: &Block, qmin: i32, qmax: i32) -> ZeroPointFormula {
    let lo = b.range.0;
    let rule = config.conventions.asym_zero_point;
    let ([unrounded], [rounded]) = asymmetric_zero_f64(
        rule,
        config.rounding,
        qmin,
        &[lo],
        &[f64::from(b.code_scale)],
    );
    let outside = rounded < f64::from(qmin) || rounded > f64::from(qmax);
    let clamped = config.conventions.clamp_zero_point && outside;
    let value = b.zero_point;
    if rule == AsymZeroPoint::ShiftOfRound {
        ZeroPointFormula::ShiftOfRound {
            lo,
            ratio: unrounded,
            rounded,
            clamped,
            value,
        }
    } else {
        ZeroPointFormula::RoundOfShift {
            lo,
            unrounded,
            rounded,
            clamped,
            value,
        }
    }
}
