//! The per-value quantize and dequantize expressions, in `f32` and in the order each
//! library evaluates them.
//!
//! [`Quantizer`] is the reference, one value at a time. The analysis runs whole rows through
//! a specialised loop (the private `segment` module) that gives the same codes, clamp flags
//! and reconstructions bit for bit; `tests/it/kernels.rs` checks the two against each other.
//!
//! # Adding a convention
//!
//! 1. Its variant in [`crate::core::config`] (a new convention: a field of
//!    [`Conventions`](crate::core::config::Conventions)) and its name in
//!    [`crate::core::names`]; the command line and the explorer's Settings follow (see
//!    `app/setting.rs`). A preset that uses it in [`crate::core::presets`].
//! 2. Block parameters: decide what the configuration fixes in
//!    [`ParamCalc::new`](crate::core::params::ParamCalc::new) (a [`ScaleRule`] for a scale
//!    formula), and write the per-block step once, in `params/formula/lanes.rs`, without a
//!    branch on the configuration inside the lanes.
//! 3. Per value: a rounding rule is one arm in `core/round.rs`; a quantize
//!    expression is one arm in [`Quantizer`] and one instance in `segment`'s `dispatch!`
//!    and `simd` (`Kind` selects it).
//! 4. [`crate::core::explain`] names a new formula (`ScaleFormula`, `ZeroPointFormula`)
//!    from the `ParamCalc`, and `io/export/doc/worked.rs` prints it.
//! 5. Tests: the convention among the knobs of `params/formula/tests.rs` and
//!    `tests/it/core_props.rs`, and a golden fixture from the library that uses it
//!    (`tests/golden/generate.py`).
//!
//! # Adding a format
//!
//! A format with its own block layout (k-quants, FP4, NF4, FP8) is not a convention: it is
//! a variant of [`Format`](crate::core::format::Format) with its encoder and decoder in a
//! module of [`crate::core::format`], its [`Layout`](crate::core::format::Layout), its
//! `pack`/`unpack` to the bytes its files store, a row of
//! [`FORMATS`](crate::core::format_ladder::FORMATS) (the format ladder, `--list-presets` and
//! `report --formats` read it), and golden fixtures from its reference implementation
//! (`tests/golden/generate_formats.py`, `tests/it/golden_formats.rs`).
//!
//! [`ScaleRule`]: crate::core::params::ScaleRule

use crate::core::config::{Config, NonFinite, QuantExpr, Rounding};
use crate::core::params::BlockParams;
use crate::core::round::Round;

pub(crate) mod segment;

/// A block's parameters prepared for the inner loop.
#[derive(Debug, Clone, Copy)]
pub struct Quantizer {
    expr: QuantExpr,
    rounding: Rounding,
    non_finite: NonFinite,
    code_scale: f32,
    recip: f32,
    zero: i32,
    zero_f: f32,
    code_offset: f32,
    has_offset: bool,
    qmin: f32,
    qmax: f32,
    scale: f32,
    offset: f32,
}

/// One value's trip through the quantizer, for worked arithmetic.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    /// The ratio before rounding (`x / s`, `x * (1/s)`, or with the zero point already added
    /// for [`QuantExpr::ReciprocalAddZero`]; with the float offset subtracted first).
    pub ratio: f32,
    /// The code before clamping.
    pub unclamped: f32,
    /// The ratio was exactly halfway between two integers.
    pub tie: bool,
    /// The final code.
    pub code: i32,
    /// The code was clamped into `[qmin, qmax]` (the quantizer's range).
    pub clamped: bool,
    /// The reconstruction.
    pub dequantized: f32,
}

impl Quantizer {
    /// Prepares `params` for `[qmin, qmax]` under `config`.
    #[must_use]
    pub fn new(config: &Config, params: &BlockParams, qmin: i32, qmax: i32) -> Self {
        let s = params.code_scale;
        Self {
            expr: config.conventions.quant_expr,
            rounding: config.rounding,
            non_finite: config.conventions.non_finite,
            code_scale: s,
            recip: if s == 0.0 { 0.0 } else { 1.0 / s },
            zero: params.zero_point,
            zero_f: params.zero_point as f32,
            code_offset: params.code_offset.unwrap_or(0.0),
            has_offset: params.code_offset.is_some(),
            qmin: qmin as f32,
            qmax: qmax as f32,
            scale: params.scale,
            offset: params.offset.unwrap_or(0.0),
        }
    }

    /// The unclamped code of `x` and the ratio it was rounded from.
    #[inline]
    fn raw(&self, x: f32) -> (f32, f32) {
        let x = if self.has_offset {
            x - self.code_offset
        } else {
            x
        };
        match self.expr {
            QuantExpr::Divide => {
                if self.code_scale == 0.0 {
                    return (0.0, self.zero_f);
                }
                let t = x / self.code_scale;
                (t, t.round_by(self.rounding) + self.zero_f)
            }
            QuantExpr::Reciprocal => {
                let t = x * self.recip;
                (t, t.round_by(self.rounding) + self.zero_f)
            }
            QuantExpr::ReciprocalAddZero => {
                let t = x * self.recip;
                match self.rounding {
                    // GGUF adds `z + 0.5` in one f32 addition, then truncates.
                    Rounding::HalfUp => (t + self.zero_f, (t + (self.zero_f + 0.5)).floor()),
                    r => {
                        let y = t + self.zero_f;
                        (y, y.round_by(r))
                    }
                }
            }
        }
    }

    /// The code of `x` and whether it was clamped.
    ///
    /// A ratio that is not a finite number (a subnormal scale: `x · (1/s)` with `1/s = ∞`)
    /// gets the code [`NonFinite`] says; a code it forces is not a clamp, unless it had to
    /// be clamped into the range.
    #[inline]
    #[must_use]
    pub fn code(&self, x: f32) -> (i32, bool) {
        let (_, q) = self.raw(x);
        if q.is_nan() || (q.is_infinite() && self.non_finite == NonFinite::Zero) {
            // NaN is 0 times an infinite reciprocal: the value is the block's zero.
            let forced = match self.non_finite {
                NonFinite::ZeroPoint => self.zero,
                NonFinite::NanToZero | NonFinite::Zero => 0,
            };
            let c = forced.clamp(self.qmin as i32, self.qmax as i32);
            return (c, c != forced);
        }
        if q < self.qmin {
            (self.qmin as i32, true)
        } else if q > self.qmax {
            (self.qmax as i32, true)
        } else {
            (q as i32, false)
        }
    }

    /// The reconstruction of code `q`.
    #[inline]
    #[must_use]
    pub fn dequantize(&self, q: i32) -> f32 {
        if self.has_offset {
            self.scale * q as f32 + self.offset
        } else {
            (i64::from(q) - i64::from(self.zero)) as f32 * self.scale
        }
    }

    /// Every intermediate of quantizing `x`.
    #[must_use]
    pub fn step(&self, x: f32) -> Step {
        let (ratio, unclamped) = self.raw(x);
        let (code, clamped) = self.code(x);
        Step {
            ratio,
            unclamped,
            tie: (ratio - ratio.floor()) == 0.5,
            code,
            clamped,
            dequantized: self.dequantize(code),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::params::{BlockStats, RealRange, block_params};
    use crate::core::presets::{PresetOptions, preset};

    fn quantizer(name: &str, scheme: Option<crate::core::config::Scheme>, xs: &[f32]) -> Quantizer {
        let c = preset(
            name,
            PresetOptions {
                scheme,
                reduce_range: false,
            },
        )
        .unwrap();
        let (qmin, qmax) = c.code_range();
        let mut st = BlockStats::EMPTY;
        st.extend(xs);
        Quantizer::new(
            &c,
            &block_params(&c, RealRange::of(&st), qmin, qmax),
            qmin,
            qmax,
        )
    }

    #[test]
    fn divide_and_reciprocal_differ_on_the_conventions_tie() {
        // CONVENTIONS §3: int4 [-8, 7] symmetric, row A: -0.15 / s is exactly -7.5 with
        // ORT's divide, -7.4999995 with PyTorch's reciprocal multiply.
        use crate::core::config::Scheme::Symmetric;
        let row = [0.05f32, -0.08, 0.12, -0.15];
        let q = quantizer("ort-int4", Some(Symmetric), &row);
        assert_eq!(q.code(-0.15), (-8, false));
        assert!(q.step(-0.15).tie);
        let c = crate::core::config::Config {
            conventions: crate::core::config::Conventions {
                quant_expr: QuantExpr::Reciprocal,
                ..preset("ort-int4", PresetOptions::default())
                    .unwrap()
                    .conventions
            },
            ..preset("ort-int4", PresetOptions::default()).unwrap()
        };
        let mut st = BlockStats::EMPTY;
        st.extend(&row);
        let t = Quantizer::new(&c, &block_params(&c, RealRange::of(&st), -8, 7), -8, 7);
        assert_eq!(t.code(-0.15), (-7, false));
    }

    #[test]
    fn gguf_q4_0_maps_the_extreme_to_the_bottom_nibble() {
        let q = quantizer("q4_0", None, &[0.1, -0.4, 0.4, 0.0]);
        // First extreme is -0.4: d = -0.4 / -8 = 0.05, so -0.4 -> nibble 0 and 0.4 -> 16 -> 15.
        assert_eq!(q.code(-0.4), (0, false));
        assert_eq!(q.code(0.4), (15, true));
        assert_eq!(q.code(0.0), (8, false));
        assert_eq!(q.dequantize(8), 0.0);
    }

    #[test]
    fn non_finite_ratios_get_the_code_their_rule_says() {
        use crate::core::config::{Conventions, NonFinite};
        // int4-g128 (MLAS) on [-1e-40, 1e-40]: s = 2e-40 / 15 is subnormal and 1/s = inf.
        let mlas = preset("int4-g128", PresetOptions::default()).unwrap();
        let with = |rule| crate::core::config::Config {
            conventions: Conventions {
                non_finite: rule,
                ..mlas.conventions
            },
            ..mlas
        };
        let mut st = BlockStats::EMPTY;
        st.extend(&[-1e-40, 1e-40]);
        let q = |rule, qmin, qmax| {
            let c = with(rule);
            Quantizer::new(&c, &block_params(&c, RealRange::of(&st), 0, 15), qmin, qmax)
        };
        let zp = q(NonFinite::ZeroPoint, 0, 15);
        let z = block_params(&mlas, RealRange::of(&st), 0, 15).zero_point;
        assert!(z > 0);
        assert_eq!(zp.code(0.0), (z, false));
        assert_eq!((zp.code(1e-40), zp.code(-1e-40)), ((15, true), (0, true)));
        let nan = q(NonFinite::NanToZero, 0, 15);
        assert_eq!(nan.code(0.0), (0, false));
        assert_eq!((nan.code(1e-40), nan.code(-1e-40)), ((15, true), (0, true)));
        let zero = q(NonFinite::Zero, 0, 15);
        assert_eq!([zero.code(0.0), zero.code(1e-40)], [(0, false), (0, false)]);
        // A forced 0 outside the range is clamped into it, and says so.
        assert_eq!(q(NonFinite::Zero, 2, 15).code(1e-40), (2, true));
    }

    #[test]
    fn zero_scale_reconstructs_zero() {
        let q = quantizer("q8_0", None, &[0.0, 0.0]);
        assert_eq!(q.code(0.0), (0, false));
        assert_eq!(q.dequantize(0), 0.0);
    }
}
