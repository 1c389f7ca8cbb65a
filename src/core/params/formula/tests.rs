//! [`ParamCalc`] against the reference formulas ([`block_params`]).

use proptest::prelude::*;

use super::*;
use crate::core::config::{Degenerate, RangeSource, Rounding};
use crate::core::params::{BlockParams, RealRange, block_params};
use crate::core::presets::{PRESETS, PresetOptions, preset};

fn same(a: &BlockParams, b: &BlockParams) -> bool {
    let bits = |x: Option<f32>| x.map(f32::to_bits);
    a.code_scale.to_bits() == b.code_scale.to_bits()
        && a.scale.to_bits() == b.scale.to_bits()
        && a.zero_point == b.zero_point
        && bits(a.code_offset) == bits(b.code_offset)
        && bits(a.offset) == bits(b.offset)
        && a.range.0.to_bits() == b.range.0.to_bits()
        && a.range.1.to_bits() == b.range.1.to_bits()
        && a.degenerate == b.degenerate
        && a.problem == b.problem
}

fn magnitude() -> impl Strategy<Value = f32> {
    prop_oneof![
        (-40i32..40).prop_map(|k| k as f32 * 0.25),
        -1.0f32..1.0,
        (-1.0f32..1.0, -40i32..40).prop_map(|(x, e)| x * 2f32.powi(e)),
        prop::sample::select(vec![0.0, -0.0, 1e-41, 1e-38, 3e38, -3e38, 65504.0, 1e30]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        max_global_rejects: 100_000,
        ..ProptestConfig::with_cases(20_000)
    })]

    /// Every preset with every convention overridden, on ranges with ties, zeros,
    /// subnormals and values near the overflow of each storage type.
    #[test]
    fn prepared_formulas_equal_the_original(
        knobs in knobs(),
        (a, b, e) in (magnitude(), magnitude(), magnitude()),
    ) {
        let c = config(knobs);
        prop_assume!(c.validate().is_ok());
        let (qmin, qmax) = c.code_range();
        let range = RealRange { lo: a.min(b), hi: a.max(b), extreme: e };
        let want = block_params(&c, range, qmin, qmax);
        let got = ParamCalc::new(&c, qmin, qmax).params(range);
        prop_assert!(same(&got, &want), "{:?}\n{:?}\n{:?}", c, got, want);
    }

    /// Eight blocks at a time (compiled for the vector instructions the analysis uses):
    /// each lane has the parameters of `params`, or is flagged when they have a problem.
    #[test]
    fn eight_blocks_equal_one_at_a_time(
        knobs in knobs(),
        ends in prop::array::uniform8((magnitude(), magnitude(), magnitude())),
    ) {
        let c = config(knobs);
        prop_assume!(c.validate().is_ok());
        let (qmin, qmax) = c.code_range();
        let calc = ParamCalc::new(&c, qmin, qmax);
        let ranges = ends.map(|(a, b, e)| RealRange { lo: a.min(b), hi: a.max(b), extreme: e });
        let lo = ranges.map(|r| r.lo);
        let hi = ranges.map(|r| r.hi);
        let ex = ranges.map(|r| r.extreme);
        let got = pulp::Arch::new().dispatch(
            #[inline(always)]
            || calc.lanes::<8>(&lo, &hi, &ex),
        );
        for (j, range) in ranges.iter().enumerate() {
            let want = calc.params(*range);
            match got.get(j) {
                Some(p) => prop_assert!(
                    want.problem.is_none() && same(&p, &want),
                    "lane {}: {:?}\n{:?}\n{:?}", j, c, p, want
                ),
                None => prop_assert!(want.problem.is_some(), "lane {}: {:?}\n{:?}", j, c, want),
            }
        }
    }
}

/// The knobs of [`config`].
type Knobs = (
    usize,
    bool,
    (u8, u8, u8, bool, u8, bool, u8),
    u8,
    u8,
    bool,
    Option<(u8, bool)>,
);

fn knobs() -> impl Strategy<Value = Knobs> {
    (
        0..PRESETS.len(),
        any::<bool>(),
        (
            0u8..4,
            0u8..3,
            0u8..3,
            any::<bool>(),
            0u8..3,
            any::<bool>(),
            0u8..4,
        ),
        0u8..3,
        0u8..3,
        any::<bool>(),
        prop::option::of((1u8..=16, any::<bool>())),
    )
}

/// A preset with its scheme possibly flipped, its width possibly changed, and every
/// convention, rounding, scale type and range source overridden.
fn config((i, flip, conv, rounding, dtype, source, bits): Knobs) -> Config {
    use crate::core::config::{QuantExpr, ScaleDtype};
    let mut c = preset(PRESETS[i].name, PresetOptions::default()).unwrap();
    if flip {
        c.scheme = match c.scheme {
            Scheme::Symmetric => Scheme::Asymmetric,
            Scheme::Asymmetric => Scheme::Symmetric,
        };
    }
    if let Some((b, s)) = bits {
        c.bits = b;
        c.signed = s;
        c.range = crate::core::config::RangeKind::Full;
    }
    let k = &mut c.conventions;
    k.sym_scale = [
        SymScale::MaxCode,
        SymScale::HalfSpan,
        SymScale::SignedExtreme,
        SymScale::SignedMinMax,
    ][usize::from(conv.0)];
    k.sym_zero_point = [
        SymZeroPoint::Zero,
        SymZeroPoint::MidHalfEven,
        SymZeroPoint::MidFloor,
    ][usize::from(conv.1)];
    k.asym_zero_point = [
        AsymZeroPoint::RoundOfShift,
        AsymZeroPoint::ShiftOfRound,
        AsymZeroPoint::FloatMin,
    ][usize::from(conv.2)];
    k.clamp_zero_point = conv.3;
    k.quant_expr = [
        QuantExpr::Divide,
        QuantExpr::Reciprocal,
        QuantExpr::ReciprocalAddZero,
    ][usize::from(conv.4)];
    k.arith = if conv.5 { Arith::F64 } else { Arith::F32 };
    k.degenerate = [
        Degenerate::One,
        Degenerate::Flat,
        Degenerate::Epsilon,
        Degenerate::Zero,
    ][usize::from(conv.6)];
    c.rounding = [Rounding::HalfEven, Rounding::HalfAway, Rounding::HalfUp][usize::from(rounding)];
    c.scale_dtype = [ScaleDtype::F32, ScaleDtype::F16, ScaleDtype::Bf16][usize::from(dtype)];
    c.range_source = if source {
        RangeSource::Tight
    } else {
        RangeSource::IncludeZero
    };
    c
}
