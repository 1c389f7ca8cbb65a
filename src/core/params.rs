//! From a block's statistics to its scale, zero point and (GGUF-style) float offset, in the
//! precision and order of the chosen conventions.
//!
//! The formulas are stated once, in [`ParamCalc`] (`params/formula.rs` decides what the
//! configuration fixes; `params/formula/lanes.rs` is the per-block arithmetic, over one or
//! eight blocks side by side). For one block:
//!
//! | step | what it does |
//! |---|---|
//! | range | the block's min and max ([`BlockStats`]), or the clipped range ([`crate::core::clip`]), widened to include 0 under `include-zero` (and, for an asymmetric single point, under the `one` and `flat` policies) |
//! | raw scale | [`ScaleRule`]: `absmax / max(|qmin|, |qmax|)`, `2·absmax / (qmax − qmin)`, `v / (qmin − z)` or `(hi − lo) / (qmax − qmin)`, in f32 or f64 arithmetic |
//! | degenerate scale | `one`: below the smallest normal f32, scale 1 and zero point 0; `flat`: 0 as f32, the same; `epsilon`: magnitude floored to 2^-23, sign kept; `zero`: kept |
//! | zero point | symmetric: [`SymZeroPoint::of_codes`](crate::core::config::SymZeroPoint::of_codes); asymmetric: `round(qmin − lo / s)` or `qmin − round(lo / s)`, clamped into `[qmin, qmax]` or not; float minimum: none, `lo` is stored |
//! | storage | the scale and float minimum rounded to the scale type; a value that overflows it, or the arithmetic, is a [`ParamProblem`] |

use crate::core::config::Config;

mod formula;

#[cfg(target_arch = "x86_64")]
pub(crate) use formula::ParamRegs;
pub(crate) use formula::{BLOCKS as PARAM_LANES, ParamLanes, Params8, asymmetric_zero_f64};
pub use formula::{ParamCalc, ScaleRule};

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
    /// Signed extreme for [`SymScale::SignedExtreme`](crate::core::config::SymScale::SignedExtreme).
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
    /// The range was widened to include 0 (it lay wholly on one side of 0).
    pub widened: bool,
    /// The signed value the scale was formed from was negative
    /// ([`SymScale::SignedExtreme`](crate::core::config::SymScale::SignedExtreme) and
    /// `SignedMinMax` only: the value of largest magnitude, with its sign).
    pub negative_extreme: bool,
    /// The parameters cannot represent the block (see [`ParamProblem`]).
    pub problem: Option<ParamProblem>,
}

/// Forms the block parameters for `range` under `config`, whose code range is `[qmin, qmax]`
/// (a [`ParamCalc`] prepared for one block; prepare it once for many).
#[must_use]
pub fn block_params(config: &Config, range: RealRange, qmin: i32, qmax: i32) -> BlockParams {
    ParamCalc::new(config, qmin, qmax).params(range)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::config::Scheme;
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
    fn each_preset_applies_its_own_libraries_degenerate_rule() {
        // A row near 1e-38: absmax / 7 is a (subnormal) f32, so the lesson's rule (only a
        // scale of exactly 0 is degenerate) keeps it; ONNX Runtime's (below the smallest
        // normal f32) replaces it with 1; PyTorch's raises it to 2^-23; GGUF's keeps it.
        let row = stats(&[1e-38, -2e-38, 5e-39]);
        let range = RealRange::of(&row);
        let lesson = lesson();
        let p = block_params(&lesson, range, -7, 7);
        assert!(!p.degenerate);
        assert_eq!(p.code_scale, (f64::from(2e-38f32) / 7.0) as f32);
        let ort = preset("ort-int8", PresetOptions::default()).unwrap();
        let p = block_params(&ort, range, -127, 127);
        assert_eq!((p.scale, p.zero_point, p.degenerate), (1.0, 0, true));
        let torch = preset("torch-qint8", PresetOptions::default()).unwrap();
        let p = block_params(&torch, range, -128, 127);
        assert_eq!((p.scale, p.degenerate), (f32::EPSILON, true));
        let q8 = preset("q8_0", PresetOptions::default()).unwrap();
        assert!(!block_params(&q8, range, -127, 127).degenerate);
        // All zero is degenerate under every rule; the lesson's gets scale 1, zero point 0.
        let zeros = RealRange::of(&stats(&[0.0, 0.0]));
        let p = block_params(&lesson, zeros, -7, 7);
        assert_eq!((p.scale, p.zero_point, p.degenerate), (1.0, 0, true));
        // A scale that underflows f32 is exactly 0 in f32, so flat too.
        let p = block_params(&lesson, RealRange::of(&stats(&[1e-45])), -7, 7);
        assert_eq!((p.scale, p.degenerate), (1.0, true));
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
    use crate::core::config::{Config, ScaleDtype, SymScale};
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
