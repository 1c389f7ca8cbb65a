//! What the formulas guarantee, checked without restating them: the scale puts the range's
//! ends on the codes its rule names, the zero point puts `lo` on `qmin`, the degenerate
//! policies do what they say, and scaling or negating a range scales or negates its scale
//! exactly. The formulas over eight lanes (compiled for the vector instructions the analysis
//! uses) are checked against one block at a time. The libraries' own outputs are the golden
//! fixtures (`tests/it/golden.rs`), run through the whole analysis.

use proptest::prelude::*;

use super::*;
use crate::core::config::{Degenerate, RangeSource, Rounding, SymZeroPoint};
use crate::core::params::{BlockParams, RealRange};
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

/// The lanes' parameters, bit for bit: whether each has a problem, and every field of those
/// that have none.
fn same_lanes(a: &Params8, b: &Params8) -> bool {
    let bits = |x: &[f32; 8]| x.map(f32::to_bits);
    a.ok == b.ok
        && a.float_min == b.float_min
        && (0..8).filter(|&j| a.ok[j]).all(|j| {
            let pick = |x: &[f32; 8]| bits(x)[j];
            pick(&a.code_scale) == pick(&b.code_scale)
                && pick(&a.scale) == pick(&b.scale)
                && pick(&a.lo) == pick(&b.lo)
                && pick(&a.hi) == pick(&b.hi)
                && pick(&a.offset) == pick(&b.offset)
                && a.zero_point[j] == b.zero_point[j]
                && a.zero[j].to_bits() == b.zero[j].to_bits()
                && a.zero_ok[j] == b.zero_ok[j]
                && a.degenerate[j] == b.degenerate[j]
                && a.widened[j] == b.widened[j]
                && a.negative_extreme[j] == b.negative_extreme[j]
        })
}

proptest! {
    #![proptest_config(ProptestConfig {
        max_global_rejects: 100_000,
        ..ProptestConfig::with_cases(20_000)
    })]

    /// Eight blocks in AVX2 registers (where the machine has it and the configuration is
    /// one that path covers) have the parameters of the plain lanes, bit for bit.
    #[test]
    fn eight_blocks_in_registers_equal_the_lanes(
        knobs in knobs(),
        ends in prop::array::uniform8((magnitude(), magnitude(), magnitude())),
        point in any::<bool>(),
    ) {
        let c = config(knobs);
        prop_assume!(c.validate().is_ok());
        let (qmin, qmax) = c.code_range();
        let calc = ParamCalc::new(&c, qmin, qmax);
        // Half the cases have single-point ranges in some lanes (widened, or degenerate).
        let lo = ends.map(|(a, b, _)| a.min(b));
        let hi = std::array::from_fn(|j| {
            if point && j % 2 == 0 { lo[j] } else { ends[j].0.max(ends[j].1) }
        });
        let ex = ends.map(|(_, _, e)| e);
        let simd = crate::core::simd::Avx2::detect();
        let (got, want) = pulp::Arch::new().dispatch(
            #[inline(always)]
            || (calc.lanes8::<false>(simd, &lo, &hi, &ex), calc.lanes_with::<8, false>(&lo, &hi, &ex)),
        );
        prop_assert!(same_lanes(&got, &want), "{:?}\n{:?}\n{:?}", c, got, want);
    }
}

/// The formulas of a valid [`config`], and a block's range whose ends and extreme are
/// [`magnitude`]s.
fn calc_and_range() -> impl Strategy<Value = (ParamCalc, RealRange)> {
    (knobs(), (magnitude(), magnitude(), magnitude()))
        .prop_map(|(k, (a, b, e))| {
            let range = RealRange {
                lo: a.min(b),
                hi: a.max(b),
                extreme: e,
            };
            (config(k), range)
        })
        .prop_filter("a valid configuration", |(c, _)| c.validate().is_ok())
        .prop_map(|(c, range)| {
            let (qmin, qmax) = c.code_range();
            (ParamCalc::new(&c, qmin, qmax), range)
        })
}

/// `a` and `b` differ by at most `rel` of the larger magnitude.
fn near(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs())
}

/// An f32 that is 0 or normal (not subnormal, not infinite).
fn normal_or_zero(x: f32) -> bool {
    x == 0.0 || x.is_normal()
}

/// The relative error two f32 roundings of the scale may add (the f32 arithmetic's division
/// or subtraction, and the cast of the result to f32).
const SCALE_REL: f64 = 1.0 / (1u64 << 22) as f64;

/// The ends of `range` after widening are its own ends or 0, and contain 0 under
/// `include-zero`; nothing is widened where the configuration widens nothing.
fn check_range(calc: &ParamCalc, range: RealRange, p: &BlockParams) -> Result<(), TestCaseError> {
    let (lo, hi) = p.range;
    prop_assert!(lo == range.lo || lo == 0.0, "lo {} from {:?}", lo, range);
    prop_assert!(hi == range.hi || hi == 0.0, "hi {} from {:?}", hi, range);
    prop_assert!(lo <= hi);
    if calc.config.range_source == RangeSource::IncludeZero {
        prop_assert!(lo <= 0.0 && hi >= 0.0, "{:?} does not include 0", p.range);
    }
    if !calc.may_widen() {
        prop_assert_eq!(lo.to_bits(), range.lo.to_bits());
        prop_assert_eq!(hi.to_bits(), range.hi.to_bits());
    }
    Ok(())
}

/// The scale puts the ends its rule names on their codes: the largest magnitude on the
/// outermost code, `v` on `qmin`, or `lo..=hi` across the whole code range.
fn check_scale(calc: &ParamCalc, range: RealRange, p: &BlockParams) -> Result<(), TestCaseError> {
    let s = f64::from(p.code_scale);
    let (lo, hi) = (f64::from(p.range.0), f64::from(p.range.1));
    let absmax = lo.abs().max(hi.abs());
    let (landed, code) = match calc.rule() {
        ScaleRule::MaxCode { denominator } => (absmax / s, f64::from(denominator)),
        ScaleRule::HalfSpan { span } => (2.0 * absmax / s, f64::from(span)),
        ScaleRule::SignedExtreme {
            denominator,
            min_max,
        } => {
            let v = if !min_max {
                range.extreme
            } else if range.hi.abs() > range.lo.abs() {
                range.hi
            } else {
                range.lo
            };
            (f64::from(v) / s, f64::from(denominator))
        }
        ScaleRule::Asymmetric { span } => ((hi - lo) / s, f64::from(span)),
    };
    prop_assert!(
        near(landed, code, SCALE_REL),
        "{} lands on {} not {}",
        s,
        landed,
        code
    );
    Ok(())
}

/// The zero point: the symmetric one, or the rounded `qmin − lo / s` (clamped when the
/// configuration clamps), or none under a float minimum, which stores `lo`.
fn check_zero_point(calc: &ParamCalc, p: &BlockParams) -> Result<(), TestCaseError> {
    let c = &calc.config;
    let dtype = c.scale_dtype;
    if calc.float_min() {
        prop_assert_eq!(p.zero_point, 0);
        prop_assert_eq!(p.code_offset.map(f32::to_bits), Some(p.range.0.to_bits()));
        prop_assert_eq!(
            p.offset.map(f32::to_bits),
            Some(dtype.round(p.range.0).to_bits())
        );
        return Ok(());
    }
    prop_assert!(p.code_offset.is_none() && p.offset.is_none());
    if c.scheme == Scheme::Symmetric {
        prop_assert_eq!(p.zero_point, calc.sym_zero());
        return Ok(());
    }
    let (qmin, qmax) = (f64::from(calc.qmin), f64::from(calc.qmax));
    let lo = f64::from(p.range.0);
    let z = f64::from(p.zero_point);
    if c.conventions.clamp_zero_point {
        prop_assert!(qmin <= z && z <= qmax, "zero point {} outside the codes", z);
    }
    let fit = |x: f64| {
        if c.conventions.clamp_zero_point {
            x.clamp(qmin, qmax)
        } else {
            x
        }
    };
    if p.code_scale == 0.0 {
        // MLAS: the rounded minimum when the scale is 0.
        prop_assert_eq!(z, fit(f64::from(p.range.0.round_by(c.rounding))));
    } else {
        let ratio = lo / f64::from(p.code_scale);
        let real = qmin - ratio;
        // Rounding moves by at most a half; f32 arithmetic adds its own rounding. Under f64
        // arithmetic the zero point comes from the unrounded scale, which a subnormal f32
        // `code_scale` may miss by up to half its spacing (2^-150): a relative error far
        // above 2^-24 when the scale is tiny.
        let subnormal = 2f64.powi(-149) / f64::from(p.code_scale).abs();
        let slack = 0.5 + (qmin.abs() + ratio.abs()) * 2f64.powi(-21) + ratio.abs() * subnormal;
        prop_assert!(
            (z - fit(real)).abs() <= slack,
            "zero point {} for {}",
            z,
            real
        );
    }
    Ok(())
}

/// A degenerate scale is what its policy says, and a kept scale is not degenerate.
fn check_degenerate(calc: &ParamCalc, p: &BlockParams) -> Result<(), TestCaseError> {
    let s = p.code_scale;
    match calc.config.conventions.degenerate {
        Degenerate::One | Degenerate::Flat if p.degenerate => {
            prop_assert_eq!((s, p.zero_point), (1.0, 0));
        }
        Degenerate::One => prop_assert!(s.abs() >= f32::MIN_POSITIVE, "kept {}", s),
        Degenerate::Flat => prop_assert!(s != 0.0, "kept 0"),
        Degenerate::Epsilon if p.degenerate => prop_assert_eq!(s.abs(), f32::EPSILON),
        Degenerate::Epsilon => prop_assert!(s.abs() >= f32::EPSILON, "kept {}", s),
        // A kept scale may still underflow to 0 as f32.
        Degenerate::Zero => prop_assert!(!p.degenerate || s == 0.0, "degenerate {}", s),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        max_global_rejects: 100_000,
        ..ProptestConfig::with_cases(20_000)
    })]

    /// Every preset with every convention overridden, on ranges with ties, zeros,
    /// subnormals and values near the overflow of each storage type: the parameters do what
    /// each formula is for, and the stored scale is the computed one in its storage type.
    #[test]
    fn parameters_do_what_their_formulas_say((calc, range) in calc_and_range()) {
        let p = calc.params(range);
        prop_assume!(p.problem.is_none());
        let dtype = calc.config.scale_dtype;
        prop_assert_eq!(p.scale.to_bits(), dtype.round(p.code_scale).to_bits());
        check_range(&calc, range, &p)?;
        check_degenerate(&calc, &p)?;
        if p.degenerate && calc.imposes_zero() {
            return Ok(());
        }
        check_zero_point(&calc, &p)?;
        if !p.degenerate && p.code_scale.is_normal() {
            check_scale(&calc, range, &p)?;
        }
    }

    /// A range scaled by a power of two has its scale scaled by the same power, exactly, and
    /// the same zero point (away from subnormals, overflow and the degenerate policies).
    #[test]
    fn scaling_a_range_by_a_power_of_two_scales_its_scale(
        (calc, range) in calc_and_range(),
        k in -20i32..20,
    ) {
        let f = 2f32.powi(k);
        let scaled = RealRange { lo: range.lo * f, hi: range.hi * f, extreme: range.extreme * f };
        let ends = |r: RealRange| [r.lo, r.hi, r.extreme];
        prop_assume!(ends(range).into_iter().chain(ends(scaled)).all(normal_or_zero));
        let (p, q) = (calc.params(range), calc.params(scaled));
        prop_assume!(p.problem.is_none() && q.problem.is_none());
        prop_assume!(!p.degenerate && !q.degenerate);
        prop_assume!(p.code_scale.is_normal() && q.code_scale.is_normal());
        prop_assert_eq!(q.code_scale.to_bits(), (p.code_scale * f).to_bits());
        prop_assert_eq!(q.zero_point, p.zero_point);
        prop_assert_eq!(q.range, (p.range.0 * f, p.range.1 * f));
    }

    /// A symmetric scale depends on the magnitudes alone, except the signed-extreme rules,
    /// whose scale changes sign with the range; an asymmetric scale depends on the width.
    #[test]
    fn negating_a_range_keeps_or_negates_its_scale((calc, range) in calc_and_range()) {
        let negated = RealRange { lo: -range.hi, hi: -range.lo, extreme: -range.extreme };
        let (p, q) = (calc.params(range), calc.params(negated));
        prop_assume!(p.problem.is_none() && q.problem.is_none());
        prop_assume!(!p.degenerate && !q.degenerate);
        let want = match calc.rule() {
            // MLAS picks `lo` on a tie of magnitudes, which negation does not move.
            ScaleRule::SignedExtreme { min_max: true, .. } if range.lo.abs() == range.hi.abs() => {
                return Ok(());
            }
            ScaleRule::SignedExtreme { .. } => -p.code_scale,
            _ => p.code_scale,
        };
        prop_assert_eq!(q.code_scale.to_bits(), want.to_bits());
    }
}

#[test]
fn symmetric_zero_points_are_the_code_ranges_midpoints() {
    for bits in 1..=16u32 {
        for (qmin, qmax) in [
            (0, (1 << bits) - 1),
            (-(1 << (bits - 1)), (1 << (bits - 1)) - 1),
        ] {
            let sum = qmin + qmax;
            assert_eq!(SymZeroPoint::Zero.of_codes(qmin, qmax), 0);
            let floor = SymZeroPoint::MidFloor.of_codes(qmin, qmax);
            assert!(
                2 * floor <= sum && sum <= 2 * floor + 1,
                "{qmin}..={qmax}: {floor}"
            );
            let even = SymZeroPoint::MidHalfEven.of_codes(qmin, qmax);
            assert!((2 * even - sum).abs() <= 1, "{qmin}..={qmax}: {even}");
            assert!(sum % 2 == 0 || even % 2 == 0, "{qmin}..={qmax}: {even}");
        }
    }
    // ONNX Runtime's uint8 and uint4, and the floor of [-8, 7].
    assert_eq!(SymZeroPoint::MidHalfEven.of_codes(0, 255), 128);
    assert_eq!(SymZeroPoint::MidHalfEven.of_codes(0, 15), 8);
    assert_eq!(SymZeroPoint::MidFloor.of_codes(-8, 7), -1);
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
