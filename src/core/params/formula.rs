//! [`ParamCalc`]: the block-parameter formulas of one configuration and code range, each
//! stated once.
//!
//! What depends only on the configuration is decided in [`ParamCalc::new`]: which scale
//! formula applies and its denominator ([`ScaleRule`]), the symmetric zero point, whether
//! ranges are widened to include 0, and whether a degenerate scale imposes zero point 0. The
//! per-block arithmetic (the private `lanes` module) is written once over `N` blocks side by
//! side: one block ([`ParamCalc::params`]) wherever blocks are prepared one at a time, and
//! eight at a time for rows of groups, where the lanes vectorise because every branch on the
//! configuration is taken outside them. The worked arithmetic of
//! [`crate::core::explain`] reads the same choices and formulas from here.

#![expect(
    clippy::inline_always,
    reason = "inlined into the eight-block preparation, which must vectorise"
)]

use std::array::from_fn;

use crate::core::config::{
    Arith, AsymZeroPoint, Config, Degenerate, RangeSource, Rounding, Scheme, SymScale,
};
use crate::core::round::Round;

#[cfg(target_arch = "x86_64")]
mod avx2;
mod lanes;

#[cfg(target_arch = "x86_64")]
pub(crate) use avx2::ParamRegs;
pub(crate) use lanes::{BLOCKS, ParamLanes, Params8};

/// Which formula forms a block's raw scale (before the degenerate-scale policy), with what
/// it divides by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaleRule {
    /// Symmetric max-code: `absmax / max(|qmin|, |qmax|)` (the documents).
    MaxCode {
        /// `max(|qmin|, |qmax|)`.
        denominator: u32,
    },
    /// Symmetric half-span: `2·absmax / (qmax − qmin)` (ONNX Runtime), in f32 arithmetic
    /// `absmax / ((qmax − qmin) / 2)` (PyTorch).
    HalfSpan {
        /// `qmax − qmin`.
        span: i32,
    },
    /// Signed extreme: `v / (qmin − z)`, `v` the value of largest magnitude with its sign
    /// (GGUF Q4_0/Q5_0, MLAS symmetric), so that `v` lands exactly on `qmin`; 0 when
    /// `qmin = z`.
    SignedExtreme {
        /// `qmin − z`.
        denominator: i32,
        /// `v` is the larger of `|max|` and `|min|` (`min` on ties), as MLAS picks it,
        /// rather than the first element of largest magnitude.
        min_max: bool,
    },
    /// Asymmetric: `(hi − lo) / (qmax − qmin)`.
    Asymmetric {
        /// `qmax − qmin`.
        span: i32,
    },
}

impl ScaleRule {
    /// The rule of `config` for the code range `[qmin, qmax]`, whose symmetric zero point is
    /// `sym_zero`.
    fn of(config: &Config, qmin: i32, qmax: i32, sym_zero: i32) -> Self {
        match config.scheme {
            Scheme::Symmetric => match config.conventions.sym_scale {
                SymScale::MaxCode => Self::MaxCode {
                    denominator: qmin.unsigned_abs().max(qmax.unsigned_abs()),
                },
                SymScale::HalfSpan => Self::HalfSpan { span: qmax - qmin },
                SymScale::SignedExtreme | SymScale::SignedMinMax => Self::SignedExtreme {
                    denominator: qmin - sym_zero,
                    min_max: config.conventions.sym_scale == SymScale::SignedMinMax,
                },
            },
            Scheme::Asymmetric => Self::Asymmetric { span: qmax - qmin },
        }
    }

    /// The signed values `v` of [`ScaleRule::SignedExtreme`] for blocks whose (unwidened)
    /// ranges are `lo[j]..=hi[j]` with first extreme `extreme[j]` (unused by other rules).
    #[inline(always)]
    pub(crate) fn signed_values<const N: usize>(
        self,
        lo: &[f32; N],
        hi: &[f32; N],
        extreme: &[f32; N],
    ) -> [f32; N] {
        match self {
            Self::SignedExtreme { min_max: true, .. } => from_fn(|j| {
                if hi[j].abs() > lo[j].abs() {
                    hi[j]
                } else {
                    lo[j]
                }
            }),
            _ => *extreme,
        }
    }

    /// The raw scales of `N` blocks in `arith`, from their signed values `v` (see
    /// [`ScaleRule::signed_values`]) and the ends `lo`, `hi` of their widened ranges (whose
    /// larger magnitude is `absmax`). [`Arith::F64`] is the formula in exact arithmetic.
    #[inline(always)]
    pub(crate) fn scales<const N: usize>(
        self,
        arith: Arith,
        v: &[f32; N],
        lo: &[f32; N],
        hi: &[f32; N],
    ) -> [f64; N] {
        let absmax = || -> [f32; N] { from_fn(|j| lo[j].abs().max(hi[j].abs())) };
        match (self, arith) {
            (Self::MaxCode { denominator }, Arith::F64) => {
                let (a, d) = (absmax(), f64::from(denominator));
                from_fn(|j| f64::from(a[j]) / d)
            }
            (Self::MaxCode { denominator }, Arith::F32) => {
                let (a, d) = (absmax(), f64::from(denominator) as f32);
                from_fn(|j| f64::from(a[j] / d))
            }
            (Self::HalfSpan { span }, Arith::F64) => {
                let (a, s) = (absmax(), f64::from(span));
                from_fn(|j| 2.0 * f64::from(a[j]) / s)
            }
            (Self::HalfSpan { span }, Arith::F32) => {
                let (a, d) = (absmax(), (f64::from(span) / 2.0) as f32);
                from_fn(|j| f64::from(a[j] / d))
            }
            (Self::SignedExtreme { denominator: 0, .. }, _) => [0.0; N],
            (Self::SignedExtreme { denominator, .. }, Arith::F64) => {
                let d = f64::from(denominator);
                from_fn(|j| f64::from(v[j]) / d)
            }
            (Self::SignedExtreme { denominator, .. }, Arith::F32) => {
                let d = f64::from(denominator) as f32;
                from_fn(|j| f64::from(v[j] / d))
            }
            (Self::Asymmetric { span }, Arith::F64) => {
                let s = f64::from(span);
                from_fn(|j| (f64::from(hi[j]) - f64::from(lo[j])) / s)
            }
            (Self::Asymmetric { span }, Arith::F32) => {
                let s = f64::from(span) as f32;
                from_fn(|j| f64::from((hi[j] - lo[j]) / s))
            }
        }
    }
}

/// An asymmetric integer zero point in f64 arithmetic, from the low ends `lo` of widened
/// ranges and scales `s`: the value that is rounded (`lo / s` for
/// [`AsymZeroPoint::ShiftOfRound`], `qmin − lo / s` otherwise) and the zero point before
/// clamping (`qmin − round(lo / s)` or `round(qmin − lo / s)`).
#[inline(always)]
pub(crate) fn asymmetric_zero_f64<const N: usize>(
    rule: AsymZeroPoint,
    rounding: Rounding,
    qmin: i32,
    lo: &[f32; N],
    s: &[f64; N],
) -> ([f64; N], [f64; N]) {
    let q = f64::from(qmin);
    if rule == AsymZeroPoint::ShiftOfRound {
        let ratio: [f64; N] = from_fn(|j| f64::from(lo[j]) / s[j]);
        (ratio, from_fn(|j| q - ratio[j].round_by(rounding)))
    } else {
        let shifted: [f64; N] = from_fn(|j| q - f64::from(lo[j]) / s[j]);
        (shifted, from_fn(|j| shifted[j].round_by(rounding)))
    }
}

/// The block-parameter formulas of one configuration and code range, prepared.
#[derive(Debug, Clone, Copy)]
pub struct ParamCalc {
    config: Config,
    qmin: i32,
    qmax: i32,
    rule: ScaleRule,
    /// The symmetric zero point.
    sym_zero: i32,
    /// Every range is widened to include 0.
    widen_all: bool,
    /// A range that is a single point is widened to include 0 (asymmetric, under
    /// [`Degenerate::One`] and [`Degenerate::Flat`]).
    widen_point: bool,
    /// A degenerate scale also sets the zero point to 0.
    imposes_zero: bool,
    /// Asymmetric with a float minimum instead of an integer zero point.
    float_min: bool,
}

impl ParamCalc {
    /// Prepares the formulas of `config` for the code range `[qmin, qmax]`.
    #[must_use]
    pub fn new(config: &Config, qmin: i32, qmax: i32) -> Self {
        let conv = &config.conventions;
        let sym_zero = conv.sym_zero_point.of_codes(qmin, qmax);
        let asymmetric = config.scheme == Scheme::Asymmetric;
        let imposes_zero = matches!(conv.degenerate, Degenerate::One | Degenerate::Flat);
        Self {
            config: *config,
            qmin,
            qmax,
            rule: ScaleRule::of(config, qmin, qmax, sym_zero),
            sym_zero,
            widen_all: config.range_source == RangeSource::IncludeZero,
            widen_point: imposes_zero && asymmetric,
            imposes_zero,
            float_min: asymmetric && conv.asym_zero_point == AsymZeroPoint::FloatMin,
        }
    }

    /// The scale formula.
    #[must_use]
    pub fn rule(&self) -> ScaleRule {
        self.rule
    }

    /// The zero point of the symmetric scheme (whatever the scheme).
    #[must_use]
    pub fn sym_zero(&self) -> i32 {
        self.sym_zero
    }

    /// Some range may be widened to include 0: every range (`include-zero`), or an
    /// asymmetric range that is a single point under the `one` and `flat` degenerate
    /// policies.
    #[must_use]
    pub fn may_widen(&self) -> bool {
        self.widen_all || self.widen_point
    }

    /// A degenerate scale also sets the zero point to 0 (the `one` and `flat` policies).
    #[must_use]
    pub fn imposes_zero(&self) -> bool {
        self.imposes_zero
    }

    /// A degenerate scale is replaced by 1 (the `one` and `flat` policies), a larger scale,
    /// rather than kept or raised to a floor.
    #[must_use]
    pub fn degenerate_is_one(&self) -> bool {
        matches!(
            self.config.conventions.degenerate,
            Degenerate::One | Degenerate::Flat
        )
    }

    /// Blocks store a float minimum instead of an integer zero point (GGUF Q4_1/Q5_1).
    #[must_use]
    pub fn float_min(&self) -> bool {
        self.float_min
    }

    /// A block's parameters depend on its values only through its extreme, the value of
    /// largest magnitude (with its sign under [`ScaleRule::SignedExtreme`]): symmetric rules
    /// without a float minimum, whose scale is formed from that value alone and whose zero
    /// point is fixed (or imposed by a degenerate scale, itself formed from the scale). A
    /// block made of two blocks whose largest magnitudes differ then has the parameters of
    /// the one holding the larger (if equal, both halves' extremes are one value, unless
    /// they differ in sign, when the block's ends are of one magnitude).
    #[must_use]
    pub(crate) fn nested(&self) -> bool {
        self.config.scheme == Scheme::Symmetric
            && !self.float_min
            && !matches!(self.rule, ScaleRule::Asymmetric { .. })
    }

    /// Whether a range is widened to include 0 (`point`: its ends are equal).
    #[inline(always)]
    fn widens(&self, point: bool) -> bool {
        self.widen_all || (self.widen_point && point)
    }
}

#[cfg(test)]
mod tests;
