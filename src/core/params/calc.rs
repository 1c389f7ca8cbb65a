//! [`ParamCalc`]: the block-parameter formulas with everything that depends only on the
//! configuration computed once, for the millions of blocks a ladder of small groups has.
//!
//! The arithmetic per block is [`super::block_params`]'s, operation for operation; only the
//! constants are hoisted, and rounding avoids libm's `rint`/`round`/`floor` (calls on
//! baseline x86-64) with the exact add-and-subtract trick of
//! [`crate::core::kernel::segment::rint`], falling back to the std methods beyond its range.

#![expect(
    clippy::inline_always,
    reason = "the rounding helpers are a few instructions, called per block of every rung"
)]

use crate::core::config::{Arith, AsymZeroPoint, Config, Rounding, Scheme, SymScale, SymZeroPoint};
use crate::core::kernel::segment;

use super::{BlockParams, RealRange, assemble, degenerate_policy, integer_zero_point, widened};

/// `1.5 · 2^52`: adding and subtracting it rounds an f64 to an integer, ties to even, for
/// `|x| < 2^51`.
const MAGIC64: f64 = 6_755_399_441_055_744.0;
const SMALL64: f64 = 2_251_799_813_685_248.0;
const SMALL32: f32 = 4_194_304.0;

/// `x.round_ties_even()`, `x.round()` or `(x + 0.5).floor()` in f64.
#[inline(always)]
fn round_f64(x: f64, rounding: Rounding) -> f64 {
    let rint = |x: f64| (x + MAGIC64) - MAGIC64;
    match rounding {
        Rounding::HalfEven if x.abs() < SMALL64 => rint(x),
        Rounding::HalfEven => x.round_ties_even(),
        Rounding::HalfAway if x.abs() < SMALL64 => {
            let r = rint(x);
            if (x - r).abs() == 0.5 {
                x + 0.5f64.copysign(x)
            } else {
                r
            }
        }
        Rounding::HalfAway => x.round(),
        Rounding::HalfUp => {
            let y = x + 0.5;
            if y.abs() < SMALL64 {
                let r = rint(y);
                if r > y { r - 1.0 } else { r }
            } else {
                y.floor()
            }
        }
    }
}

/// `x.round_ties_even()`, `x.round()` or `(x + 0.5).floor()` in f32.
#[inline(always)]
fn round_f32(x: f32, rounding: Rounding) -> f32 {
    match rounding {
        Rounding::HalfEven if x.abs() < SMALL32 => segment::rint(x),
        Rounding::HalfEven => x.round_ties_even(),
        Rounding::HalfAway if x.abs() < SMALL32 => segment::round_away(x),
        Rounding::HalfAway => x.round(),
        Rounding::HalfUp => {
            let y = x + 0.5;
            if y.abs() < SMALL32 {
                segment::floor(y)
            } else {
                y.floor()
            }
        }
    }
}

/// [`super::block_params`] for one configuration and code range, prepared.
#[derive(Debug, Clone, Copy)]
pub struct ParamCalc {
    config: Config,
    qmin: i32,
    qmax: i32,
    /// `qmax - qmin` in f64.
    span: f64,
    /// The symmetric zero point.
    sym_zero: i32,
    /// The symmetric scale's denominator (f64), per [`SymScale`].
    sym_denom: f64,
    /// The same denominator as the f32 the f32 arithmetic divides by.
    sym_denom32: f32,
    /// `span` as f32, for asymmetric f32 arithmetic.
    span32: f32,
    /// Asymmetric with a float minimum instead of an integer zero point.
    float_min: bool,
}

impl ParamCalc {
    /// Prepares the formulas of `config` for the code range `[qmin, qmax]`.
    #[must_use]
    pub fn new(config: &Config, qmin: i32, qmax: i32) -> Self {
        let conv = &config.conventions;
        let span = f64::from(qmax) - f64::from(qmin);
        let sym_zero = match conv.sym_zero_point {
            SymZeroPoint::Zero => 0,
            SymZeroPoint::MidHalfEven => {
                f64::midpoint(f64::from(qmin), f64::from(qmax)).round_ties_even() as i32
            }
            SymZeroPoint::MidFloor => (qmin + qmax).div_euclid(2),
        };
        let (sym_denom, sym_denom32) = match conv.sym_scale {
            SymScale::MaxCode => {
                let d = f64::from(qmin.unsigned_abs().max(qmax.unsigned_abs()));
                (d, d as f32)
            }
            SymScale::HalfSpan => (span, (span / 2.0) as f32),
            SymScale::SignedExtreme | SymScale::SignedMinMax => {
                let d = f64::from(qmin - sym_zero);
                (d, d as f32)
            }
        };
        Self {
            config: *config,
            qmin,
            qmax,
            span,
            sym_zero,
            sym_denom,
            sym_denom32,
            span32: span as f32,
            float_min: config.scheme == Scheme::Asymmetric
                && conv.asym_zero_point == AsymZeroPoint::FloatMin,
        }
    }

    /// The block parameters for `range`.
    #[must_use]
    #[inline(always)]
    pub fn params(&self, range: RealRange) -> BlockParams {
        let config = &self.config;
        let conv = &config.conventions;
        let (qmin, qmax, span, sym_zero) = (self.qmin, self.qmax, self.span, self.sym_zero);
        let (lo, hi) = widened(config, range);

        // The raw scale, in the arithmetic precision of the conventions.
        let raw: f64 = match config.scheme {
            Scheme::Symmetric => {
                let absmax = lo.abs().max(hi.abs());
                match conv.sym_scale {
                    SymScale::MaxCode => match conv.arith {
                        Arith::F64 => f64::from(absmax) / self.sym_denom,
                        Arith::F32 => f64::from(absmax / self.sym_denom32),
                    },
                    SymScale::HalfSpan => match conv.arith {
                        Arith::F64 => 2.0 * f64::from(absmax) / span,
                        Arith::F32 => f64::from(absmax / self.sym_denom32),
                    },
                    SymScale::SignedExtreme | SymScale::SignedMinMax => {
                        let v = if conv.sym_scale == SymScale::SignedExtreme {
                            range.extreme
                        } else if range.hi.abs() > range.lo.abs() {
                            range.hi
                        } else {
                            range.lo
                        };
                        if self.sym_denom == 0.0 {
                            0.0
                        } else {
                            match conv.arith {
                                Arith::F64 => f64::from(v) / self.sym_denom,
                                Arith::F32 => f64::from(v / self.sym_denom32),
                            }
                        }
                    }
                }
            }
            Scheme::Asymmetric => match conv.arith {
                Arith::F64 => (f64::from(hi) - f64::from(lo)) / span,
                Arith::F32 => f64::from((hi - lo) / self.span32),
            },
        };

        let (scale64, zero_override, degenerate) = degenerate_policy(conv.degenerate, raw);
        let code_scale = scale64 as f32;

        let mut problem = None;
        let zero_point = if let Some(z) = zero_override {
            z
        } else if self.float_min {
            0
        } else {
            match config.scheme {
                Scheme::Symmetric => sym_zero,
                Scheme::Asymmetric => {
                    let r = config.rounding;
                    let z = if code_scale == 0.0 {
                        // MLAS: zero_point_fp = min when the scale is 0.
                        f64::from(round_f32(lo, r))
                    } else {
                        match (conv.asym_zero_point, conv.arith) {
                            (AsymZeroPoint::ShiftOfRound, Arith::F32) => {
                                f64::from(qmin) - f64::from(round_f32(lo / code_scale, r))
                            }
                            (AsymZeroPoint::ShiftOfRound, Arith::F64) => {
                                f64::from(qmin) - round_f64(f64::from(lo) / scale64, r)
                            }
                            (_, Arith::F32) => {
                                f64::from(round_f32(qmin as f32 - lo / code_scale, r))
                            }
                            (_, Arith::F64) => {
                                round_f64(f64::from(qmin) - f64::from(lo) / scale64, r)
                            }
                        }
                    };
                    integer_zero_point(z, conv.clamp_zero_point, qmin, qmax).unwrap_or_else(|p| {
                        problem = Some(p);
                        0
                    })
                }
            }
        };

        assemble(
            config,
            code_scale,
            zero_point,
            (lo, hi),
            self.float_min,
            degenerate,
            problem,
        )
    }
}

mod batch;

pub(crate) use batch::{BLOCKS, Params8};

#[cfg(test)]
mod tests;
