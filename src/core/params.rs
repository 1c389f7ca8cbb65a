//! From a block's statistics to its scale, zero point and (GGUF-style) float offset, in the
//! precision and order of the chosen conventions.

use crate::core::config::{
    Arith, AsymZeroPoint, Config, Degenerate, RangeSource, Rounding, Scheme, SymScale, SymZeroPoint,
};

/// What the statistics pass records of one block.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockStats {
    /// Smallest value.
    pub min: f32,
    /// Largest value.
    pub max: f32,
    /// The first element of largest magnitude, with its sign.
    pub extreme: f32,
    /// Number of values.
    pub count: usize,
}

impl BlockStats {
    /// Stats of an empty block; [`BlockStats::push`] fills it.
    pub const EMPTY: Self = Self {
        min: f32::INFINITY,
        max: f32::NEG_INFINITY,
        extreme: 0.0,
        count: 0,
    };

    /// Adds one value.
    #[inline]
    pub fn push(&mut self, x: f32) {
        self.min = self.min.min(x);
        self.max = self.max.max(x);
        if x.abs() > self.extreme.abs() {
            self.extreme = x;
        }
        self.count += 1;
    }

    /// Adds every value of a slice.
    pub fn extend(&mut self, xs: &[f32]) {
        for &x in xs {
            self.push(x);
        }
    }

    /// The largest magnitude.
    #[must_use]
    pub fn absmax(&self) -> f32 {
        self.extreme.abs()
    }
}

/// The real range a block's scale is formed from, after clipping (or the min-max range).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RealRange {
    /// Lower end.
    pub lo: f32,
    /// Upper end.
    pub hi: f32,
    /// Signed extreme for [`SymScale::SignedExtreme`].
    pub extreme: f32,
}

impl RealRange {
    /// The min-max range of the statistics.
    #[must_use]
    pub fn of(stats: &BlockStats) -> Self {
        Self {
            lo: stats.min,
            hi: stats.max,
            extreme: stats.extreme,
        }
    }

    /// The range shrunk by `alpha` (0 < alpha ≤ 1) toward zero.
    #[must_use]
    pub fn shrunk(self, alpha: f32) -> Self {
        Self {
            lo: self.lo * alpha,
            hi: self.hi * alpha,
            extreme: self.extreme * alpha,
        }
    }
}

/// Why a block's parameters cannot represent its values (finite input that overflows a
/// storage type or the arithmetic).
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum ParamProblem {
    /// The scale is not finite in the arithmetic precision (the range is too wide).
    #[error("the range [{lo}, {hi}] is too wide for {arith} scale arithmetic")]
    RangeOverflow {
        /// Lower end.
        lo: f32,
        /// Upper end.
        hi: f32,
        /// The arithmetic precision.
        arith: &'static str,
    },
    /// The scale overflows its storage type.
    #[error(
        "the scale {scale:e} does not fit {dtype} (it would be stored as infinity); store scales as f32"
    )]
    ScaleOverflow {
        /// The scale before storage.
        scale: f32,
        /// The storage type.
        dtype: &'static str,
    },
    /// The float offset overflows its storage type.
    #[error("the offset {offset:e} does not fit {dtype}; store scales as f32")]
    OffsetOverflow {
        /// The offset before storage.
        offset: f32,
        /// The storage type.
        dtype: &'static str,
    },
    /// An unclamped zero point is beyond any integer the report can hold.
    #[error(
        "the zero point {zero:e} is beyond the 32-bit range (clamp it, or widen the range to include 0)"
    )]
    ZeroPointOverflow {
        /// The unrounded zero point.
        zero: f64,
    },
}

/// Everything the quantize kernel needs of one block.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockParams {
    /// The scale codes are computed with (f32, before storage rounding).
    pub code_scale: f32,
    /// The stored scale, used to dequantize.
    pub scale: f32,
    /// Integer zero point.
    pub zero_point: i32,
    /// The float offset codes are computed with (GGUF `min`), if any.
    pub code_offset: Option<f32>,
    /// The stored float offset, used to dequantize.
    pub offset: Option<f32>,
    /// The range the scale was formed from (after widening and clipping).
    pub range: (f32, f32),
    /// The computed scale was degenerate and the policy replaced it.
    pub degenerate: bool,
    /// The parameters cannot represent the block (see [`ParamProblem`]).
    pub problem: Option<ParamProblem>,
}

fn round_f64(x: f64, rounding: Rounding) -> f64 {
    match rounding {
        Rounding::HalfEven => x.round_ties_even(),
        Rounding::HalfAway => x.round(),
        Rounding::HalfUp => (x + 0.5).floor(),
    }
}

fn round_f32(x: f32, rounding: Rounding) -> f32 {
    match rounding {
        Rounding::HalfEven => x.round_ties_even(),
        Rounding::HalfAway => x.round(),
        Rounding::HalfUp => (x + 0.5).floor(),
    }
}

/// A rounded real zero point as i32 (it may leave the code range when not clamped), or
/// `None` when it does not fit.
fn to_i32(x: f64) -> Option<i32> {
    (x >= f64::from(i32::MIN) && x <= f64::from(i32::MAX)).then_some(x as i32)
}

/// Forms the block parameters for `range` under `config`, whose code range is `[qmin, qmax]`.
#[must_use]
#[expect(
    clippy::too_many_lines,
    reason = "one formula table: each convention is a short arm, kept together to compare"
)]
pub fn block_params(config: &Config, range: RealRange, qmin: i32, qmax: i32) -> BlockParams {
    let conv = &config.conventions;
    let mut lo = range.lo;
    let mut hi = range.hi;
    let widen = config.range_source == RangeSource::IncludeZero
        || (conv.degenerate == Degenerate::One && config.scheme == Scheme::Asymmetric && lo == hi);
    if widen {
        lo = lo.min(0.0);
        hi = hi.max(0.0);
    }
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

    let mut degenerate = false;
    let mut scale64 = raw;
    let mut zero_override = None;
    match conv.degenerate {
        Degenerate::One => {
            if raw.abs() < f64::from(f32::MIN_POSITIVE) {
                scale64 = 1.0;
                zero_override = Some(0);
                degenerate = true;
            }
        }
        Degenerate::Epsilon => {
            // Only the magnitude is floored: a sign-carrying scale keeps its sign.
            let eps = f64::from(f32::EPSILON);
            if raw.abs() < eps {
                scale64 = eps.copysign(raw);
                degenerate = true;
            }
        }
        Degenerate::Zero => degenerate = raw == 0.0,
    }
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
                    f64::from(round_f32(lo, config.rounding))
                } else {
                    match (conv.asym_zero_point, conv.arith) {
                        (AsymZeroPoint::ShiftOfRound, Arith::F32) => {
                            f64::from(qmin) - f64::from(round_f32(lo / code_scale, config.rounding))
                        }
                        (AsymZeroPoint::ShiftOfRound, Arith::F64) => {
                            f64::from(qmin) - round_f64(f64::from(lo) / scale64, config.rounding)
                        }
                        (_, Arith::F32) => {
                            f64::from(round_f32(qmin as f32 - lo / code_scale, config.rounding))
                        }
                        (_, Arith::F64) => {
                            round_f64(f64::from(qmin) - f64::from(lo) / scale64, config.rounding)
                        }
                    }
                };
                let z = if conv.clamp_zero_point {
                    z.clamp(f64::from(qmin), f64::from(qmax))
                } else {
                    z
                };
                to_i32(z).unwrap_or_else(|| {
                    problem = Some(ParamProblem::ZeroPointOverflow { zero: z });
                    0
                })
            }
        }
    };

    let (code_offset, offset) = if float_min {
        (Some(lo), Some(config.scale_dtype.round(lo)))
    } else {
        (None, None)
    };
    let scale = config.scale_dtype.round(code_scale);
    let dtype = config.scale_dtype.name();
    if !code_scale.is_finite() {
        let arith = if conv.arith == Arith::F32 {
            "f32"
        } else {
            "f64"
        };
        problem = Some(ParamProblem::RangeOverflow { lo, hi, arith });
    } else if !scale.is_finite() {
        problem = Some(ParamProblem::ScaleOverflow {
            scale: code_scale,
            dtype,
        });
    } else if offset.is_some_and(|o| !o.is_finite()) {
        problem = Some(ParamProblem::OffsetOverflow { offset: lo, dtype });
    }
    BlockParams {
        code_scale,
        scale,
        zero_point,
        code_offset,
        offset,
        range: (lo, hi),
        degenerate,
        problem,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::presets::{PresetOptions, lesson, preset};

    fn stats(xs: &[f32]) -> BlockStats {
        let mut s = BlockStats::EMPTY;
        s.extend(xs);
        s
    }

    #[test]
    fn lesson_scales_are_absmax_over_seven() {
        let c = lesson();
        let p = block_params(
            &c,
            RealRange::of(&stats(&[0.05, -0.08, 0.12, -0.15])),
            -7,
            7,
        );
        assert_eq!(p.scale, (0.15f64 as f32 as f64 / 7.0) as f32);
        assert_eq!(p.zero_point, 0);
    }

    #[test]
    fn ort_symmetric_uint_zero_points_are_midpoints() {
        let sym = PresetOptions {
            scheme: Some(Scheme::Symmetric),
            reduce_range: false,
        };
        let c = preset("ort-uint8", sym).unwrap();
        let p = block_params(&c, RealRange::of(&stats(&[-1.0, 0.5])), 0, 255);
        assert_eq!(p.zero_point, 128);
        assert_eq!(p.scale, (2.0 / 255.0f64) as f32);
        let c4 = preset("ort-uint4", sym).unwrap();
        assert_eq!(
            block_params(&c4, RealRange::of(&stats(&[1.0])), 0, 15).zero_point,
            8
        );
        let i4 = preset("ort-int4", sym).unwrap();
        assert_eq!(
            block_params(&i4, RealRange::of(&stats(&[-0.15, 0.1])), -8, 7).scale,
            0.020_000_001
        );
    }

    #[test]
    fn degenerate_blocks_follow_their_policy() {
        let ort = preset("ort-uint8", PresetOptions::default()).unwrap();
        let p = block_params(&ort, RealRange::of(&stats(&[0.0, 0.0])), 0, 255);
        assert_eq!((p.scale, p.zero_point, p.degenerate), (1.0, 0, true));
        let torch = preset("torch-quint8", PresetOptions::default()).unwrap();
        let p = block_params(&torch, RealRange::of(&stats(&[0.0])), 0, 255);
        assert_eq!((p.scale, p.zero_point), (f32::EPSILON, 0));
        let q4 = preset("q4_0", PresetOptions::default()).unwrap();
        let p = block_params(&q4, RealRange::of(&stats(&[0.0; 4])), 0, 15);
        assert_eq!((p.scale, p.zero_point), (0.0, 8));
        // A tight constant row under the app's own policy keeps its value.
        let calc = preset("calculator", PresetOptions::default()).unwrap();
        let p = block_params(&calc, RealRange::of(&stats(&[0.37, 0.37])), -128, 127);
        assert_eq!(p.range, (0.0, 0.37));
        assert!(!p.degenerate);
    }

    #[test]
    fn q4_0_scale_carries_the_sign_of_the_extreme() {
        let c = preset("q4_0", PresetOptions::default()).unwrap();
        let p = block_params(&c, RealRange::of(&stats(&[0.1, 0.8, -0.8])), 0, 15);
        assert_eq!(p.code_scale, 0.8 / -8.0);
        assert_eq!(p.scale, half::f16::from_f32(-0.1).to_f32());
    }

    #[test]
    fn calculator_zero_point_may_leave_the_type() {
        // Seed calculator, channel 2: 0.88..1.44 int8 asymmetric on the tight range.
        let c = preset("calculator", PresetOptions::default()).unwrap();
        let p = block_params(
            &c,
            RealRange::of(&stats(&[1.20, 0.95, 1.44, 1.10, 0.88])),
            -128,
            127,
        );
        assert_eq!(p.zero_point, -529);
    }
}

#[cfg(test)]
mod problem_tests {
    use super::*;
    use crate::core::config::ScaleDtype;
    use crate::core::presets::{PresetOptions, preset};

    fn params(config: &Config, xs: &[f32]) -> BlockParams {
        let mut st = BlockStats::EMPTY;
        st.extend(xs);
        let (qmin, qmax) = config.code_range();
        block_params(config, RealRange::of(&st), qmin, qmax)
    }

    #[test]
    fn overflowing_storage_or_arithmetic_is_a_problem_not_an_infinity() {
        let f16 = Config {
            scale_dtype: ScaleDtype::F16,
            ..preset("ort-int8", PresetOptions::default()).unwrap()
        };
        assert!(matches!(
            params(&f16, &[1e30, -1e30]).problem,
            Some(ParamProblem::ScaleOverflow { .. })
        ));
        let q41 = preset("q4_1", PresetOptions::default()).unwrap();
        assert!(matches!(
            params(&q41, &[-1e5, 1.0]).problem,
            Some(ParamProblem::OffsetOverflow { .. })
        ));
        let torch = preset("torch-quint8", PresetOptions::default()).unwrap();
        assert!(matches!(
            params(&torch, &[3e38, -3e38]).problem,
            Some(ParamProblem::RangeOverflow { .. })
        ));
        let calc = preset("calculator", PresetOptions::default()).unwrap();
        assert!(matches!(
            params(&calc, &[1.5, 1.500_000_1]).problem,
            Some(ParamProblem::ZeroPointOverflow { .. })
        ));
        assert_eq!(params(&calc, &[1.5, 2.5]).problem, None);
    }

    #[test]
    fn epsilon_floor_keeps_the_sign_of_a_signed_extreme_scale() {
        let torch = preset("torch-qint8", PresetOptions::default()).unwrap();
        let c = Config {
            conventions: crate::core::config::Conventions {
                sym_scale: SymScale::SignedExtreme,
                ..torch.conventions
            },
            ..torch
        };
        let p = params(&c, &[1.0, -0.5]);
        assert!(!p.degenerate);
        assert_eq!(p.scale, -1.0 / 128.0);
        assert_eq!(params(&c, &[0.0]).scale.abs(), f32::EPSILON);
    }
}
