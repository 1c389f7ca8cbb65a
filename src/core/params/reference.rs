//! [`block_params`]: the block-parameter formulas as each library writes them.

use crate::core::config::{Arith, AsymZeroPoint, Config, Scheme, SymScale, SymZeroPoint};
use crate::core::round::Round;

#[cfg(doc)]
use super::ParamCalc;
use super::{BlockParams, RealRange, assemble, degenerate_policy, integer_zero_point, widened};

/// Forms the block parameters for `range` under `config`, whose code range is `[qmin, qmax]`.
///
/// This is the reference: each convention written out as its library states it, computed
/// from scratch for every block. The analysis uses [`ParamCalc`], the same arithmetic with
/// everything that depends only on the configuration computed once; a property test keeps
/// the two equal bit for bit.
#[must_use]
pub fn block_params(config: &Config, range: RealRange, qmin: i32, qmax: i32) -> BlockParams {
    let conv = &config.conventions;
    let (lo, hi) = widened(config, range);
    let span = f64::from(qmax) - f64::from(qmin);
    let sym_zero = match conv.sym_zero_point {
        SymZeroPoint::Zero => 0,
        SymZeroPoint::MidHalfEven => {
            f64::midpoint(f64::from(qmin), f64::from(qmax)).round_ties_even() as i32
        }
        SymZeroPoint::MidFloor => (qmin + qmax).div_euclid(2),
    };
    let float_min =
        config.scheme == Scheme::Asymmetric && conv.asym_zero_point == AsymZeroPoint::FloatMin;

    // The raw scale, in the arithmetic precision of the conventions.
    let raw: f64 = match config.scheme {
        Scheme::Symmetric => {
            let absmax = lo.abs().max(hi.abs());
            match conv.sym_scale {
                SymScale::MaxCode => {
                    let denom = f64::from(qmin.unsigned_abs().max(qmax.unsigned_abs()));
                    match conv.arith {
                        Arith::F64 => f64::from(absmax) / denom,
                        Arith::F32 => f64::from(absmax / denom as f32),
                    }
                }
                SymScale::HalfSpan => match conv.arith {
                    Arith::F64 => 2.0 * f64::from(absmax) / span,
                    Arith::F32 => f64::from(absmax / (span / 2.0) as f32),
                },
                SymScale::SignedExtreme | SymScale::SignedMinMax => {
                    let v = if conv.sym_scale == SymScale::SignedExtreme {
                        range.extreme
                    } else if range.hi.abs() > range.lo.abs() {
                        range.hi
                    } else {
                        range.lo
                    };
                    let denom = f64::from(qmin - sym_zero);
                    if denom == 0.0 {
                        0.0
                    } else {
                        match conv.arith {
                            Arith::F64 => f64::from(v) / denom,
                            Arith::F32 => f64::from(v / denom as f32),
                        }
                    }
                }
            }
        }
        Scheme::Asymmetric => match conv.arith {
            Arith::F64 => (f64::from(hi) - f64::from(lo)) / span,
            Arith::F32 => f64::from((hi - lo) / span as f32),
        },
    };

    let (scale64, zero_override, degenerate) = degenerate_policy(conv.degenerate, raw);
    let code_scale = scale64 as f32;

    let mut problem = None;
    let zero_point = if let Some(z) = zero_override {
        z
    } else if float_min {
        0
    } else {
        match config.scheme {
            Scheme::Symmetric => sym_zero,
            Scheme::Asymmetric => {
                let z = if code_scale == 0.0 {
                    // MLAS: zero_point_fp = min when the scale is 0.
                    f64::from((lo).round_by(config.rounding))
                } else {
                    match (conv.asym_zero_point, conv.arith) {
                        (AsymZeroPoint::ShiftOfRound, Arith::F32) => {
                            f64::from(qmin) - f64::from((lo / code_scale).round_by(config.rounding))
                        }
                        (AsymZeroPoint::ShiftOfRound, Arith::F64) => {
                            f64::from(qmin) - (f64::from(lo) / scale64).round_by(config.rounding)
                        }
                        (_, Arith::F32) => {
                            f64::from((qmin as f32 - lo / code_scale).round_by(config.rounding))
                        }
                        (_, Arith::F64) => {
                            (f64::from(qmin) - f64::from(lo) / scale64).round_by(config.rounding)
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
        float_min,
        degenerate,
        problem,
    )
}
