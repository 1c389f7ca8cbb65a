//! [`ParamCalc`]: the block-parameter formulas with everything that depends only on the
//! configuration computed once, for the millions of blocks a ladder of small groups has.
//!
//! The arithmetic per block is [`super::block_params`]'s, operation for operation; only the
//! constants are hoisted.

use crate::core::config::{Arith, AsymZeroPoint, Config, Scheme, SymScale, SymZeroPoint};
use crate::core::round::Round;

use super::{BlockParams, RealRange, assemble, degenerate_policy, integer_zero_point, widened};

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
                        f64::from((lo).round_by(r))
                    } else {
                        match (conv.asym_zero_point, conv.arith) {
                            (AsymZeroPoint::ShiftOfRound, Arith::F32) => {
                                f64::from(qmin) - f64::from((lo / code_scale).round_by(r))
                            }
                            (AsymZeroPoint::ShiftOfRound, Arith::F64) => {
                                f64::from(qmin) - (f64::from(lo) / scale64).round_by(r)
                            }
                            (_, Arith::F32) => {
                                f64::from((qmin as f32 - lo / code_scale).round_by(r))
                            }
                            (_, Arith::F64) => {
                                (f64::from(qmin) - f64::from(lo) / scale64).round_by(r)
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
