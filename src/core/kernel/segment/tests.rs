//! The specialised loop against [`Quantizer`], value by value: its codes, clamp flags and
//! errors, the clamp tests, eight blocks prepared at once and a row's collapse to one code.
//! The MSE search's sums are tested in `sums`, the errors formed in `f32` in `exact`.

use proptest::prelude::*;

use super::clamp::{exact, within};
use super::constants::near;
use super::*;
use crate::core::config::{Config, Degenerate, QuantExpr, Rounding, ScaleDtype, SymScale};
use crate::core::params::{BlockParams, BlockStats, PARAM_LANES, RealRange, block_params};
use crate::core::presets::{PRESETS, PresetOptions, preset};
use crate::core::simd::Avx2;

mod exact;
mod sums;

/// A preset by index, with every convention field free to vary.
fn config_strategy() -> impl Strategy<Value = Config> {
    (
        0..PRESETS.len(),
        any::<bool>(),
        prop_oneof![
            Just(QuantExpr::Divide),
            Just(QuantExpr::Reciprocal),
            Just(QuantExpr::ReciprocalAddZero)
        ],
        prop_oneof![
            Just(Rounding::HalfEven),
            Just(Rounding::HalfAway),
            Just(Rounding::HalfUp)
        ],
        prop_oneof![
            Just(ScaleDtype::F32),
            Just(ScaleDtype::F16),
            Just(ScaleDtype::Bf16)
        ],
        prop_oneof![
            Just(Degenerate::One),
            Just(Degenerate::Flat),
            Just(Degenerate::Epsilon),
            Just(Degenerate::Zero)
        ],
        prop_oneof![
            Just(SymScale::MaxCode),
            Just(SymScale::HalfSpan),
            Just(SymScale::SignedExtreme),
            Just(SymScale::SignedMinMax)
        ],
    )
        .prop_map(|(i, flip, expr, rounding, dtype, degenerate, sym_scale)| {
            let base = preset(PRESETS[i].name, PresetOptions::default()).unwrap();
            let mut c = Config {
                rounding,
                scale_dtype: dtype,
                ..base
            };
            c.conventions.quant_expr = expr;
            c.conventions.degenerate = degenerate;
            c.conventions.sym_scale = sym_scale;
            if flip {
                c.scheme = match c.scheme {
                    crate::core::config::Scheme::Symmetric => {
                        crate::core::config::Scheme::Asymmetric
                    }
                    crate::core::config::Scheme::Asymmetric => {
                        crate::core::config::Scheme::Symmetric
                    }
                };
            }
            c
        })
        .prop_filter("valid", |c| c.validate().is_ok())
}

/// Values with ties: multiples of a quarter of a power of two, and ordinary values.
fn values_strategy() -> impl Strategy<Value = Vec<f32>> {
    (
        1usize..600,
        -40i32..40,
        prop::collection::vec((-64i32..64, any::<f32>(), 0u8..4), 600),
    )
        .prop_map(|(n, exp, raw)| {
            let unit = 2f32.powi(exp);
            raw.into_iter()
                .take(n)
                .map(|(k, f, kind)| match kind {
                    0 => k as f32 * unit * 0.25,
                    1 if f.is_finite() && f.abs() < 1e30 => f,
                    2 => 0.0,
                    _ => (k as f32 * 0.37).sin() * unit,
                })
                .collect()
        })
}

fn check_segment(
    config: &Config,
    xs: &[f32],
    range: RealRange,
    start: usize,
) -> Result<(), TestCaseError> {
    let (qmin, qmax) = config.code_range();
    let mut st = BlockStats::EMPTY;
    st.extend(xs);
    let params = block_params(config, range, qmin, qmax);
    if params.problem.is_some() {
        return Ok(());
    }
    let prep = Prepared::new(config, &params, qmin, qmax, &st);
    let q = Quantizer::new(config, &params, qmin, qmax);
    let mut codes = vec![0u16; xs.len()];
    let mut got_lanes = Lanes::ZERO;
    let got_clipped = prep.run::<_, true>(xs, start, &mut codes, &mut got_lanes);
    let mut lanes = Lanes::ZERO;
    let mut clipped = 0;
    for (j, (&x, &got)) in xs.iter().zip(&codes).enumerate() {
        let (code, clamped) = q.code(x);
        prop_assert_eq!(
            i32::from(got) + qmin,
            code,
            "x = {:e}, {:?}, fast {}",
            x,
            q.step(x),
            prep.is_fast()
        );
        clipped += usize::from(clamped);
        lanes.push((start + j) % LANES, x, q.dequantize(code));
    }
    prop_assert_eq!(got_clipped, clipped);
    // Same values into the same lanes in the same order: the sums are equal bit for bit
    // (the largest error may sit in another lane of `max`).
    prop_assert_eq!(got_lanes.abs, lanes.abs);
    prop_assert_eq!(got_lanes.sig, lanes.sig);
    prop_assert_eq!(got_lanes.sq, lanes.sq);
    prop_assert_eq!(got_lanes.totals().max, lanes.totals().max);
    // Offsets that are bytes take their own path (packed four chunks at a time where the
    // clamp is left out): the same codes, clamps and sums.
    if qmax - qmin < 256 {
        let mut bytes = vec![0u8; xs.len()];
        let mut byte_lanes = Lanes::ZERO;
        let byte_clipped = prep.run::<_, true>(xs, start, &mut bytes, &mut byte_lanes);
        let wide: Vec<u16> = bytes.iter().map(|&b| u16::from(b)).collect();
        prop_assert_eq!(wide, codes);
        prop_assert_eq!(byte_clipped, got_clipped);
        prop_assert_eq!(byte_lanes, got_lanes);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    /// The specialised loop gives [`Quantizer`]'s codes, clamps, extremes and errors, for
    /// the block's own range and for a clipped (narrower) range that makes values clamp.
    #[test]
    fn segment_loop_matches_the_per_value_quantizer(
        config in config_strategy(),
        xs in values_strategy(),
        shrink in 0.05f32..1.0,
        start in 0usize..20,
    ) {
        let mut st = BlockStats::EMPTY;
        st.extend(&xs);
        check_segment(&config, &xs, RealRange::of(&st), start)?;
        check_segment(&config, &xs, RealRange::of(&st).shrunk(shrink), start)?;
    }
}

#[test]
fn blocks_beyond_the_bound_take_the_scalar_path() {
    let c = preset("ort-int8", PresetOptions::default()).unwrap();
    let (qmin, qmax) = c.code_range();
    let mut st = BlockStats::EMPTY;
    st.extend(&[1.0, -1.0]);
    let ordinary = block_params(&c, RealRange::of(&st), qmin, qmax);
    assert!(Prepared::new(&c, &ordinary, qmin, qmax, &st).is_fast());
    // A clip range a billion times narrower than the values: ratios reach 1.27e11.
    let narrow = block_params(&c, RealRange::of(&st).shrunk(1e-9), qmin, qmax);
    let prep = Prepared::new(&c, &narrow, qmin, qmax, &st);
    assert!(!prep.is_fast());
    let mut codes = [0u8; 2];
    let mut lanes = Lanes::ZERO;
    let clipped = prep.run::<_, true>(&[1.0, -1.0], 0, &mut codes, &mut lanes);
    assert_eq!((clipped, codes), (2, [254, 0]));
}

#[test]
fn blocks_no_clamp_can_move_leave_the_clamp_out() {
    let xs = [0.3f32, -1.0, 0.7, 0.01];
    let mut st = BlockStats::EMPTY;
    st.extend(&xs);
    for name in ["ort-int8", "int4-g128", "torch-quint8", "q4_1", "q8_0"] {
        let c = preset(name, PresetOptions::default()).unwrap();
        let (qmin, qmax) = c.code_range();
        let own = block_params(&c, RealRange::of(&st), qmin, qmax);
        let prep = Prepared::new(&c, &own, qmin, qmax, &st);
        assert!(
            prep.is_fast() && (prep.clamp() == Clamp::Within),
            "{name}: its own range"
        );
        // A range half as wide clamps the ends: the loop keeps the clamp and counts them.
        let half = block_params(&c, RealRange::of(&st).shrunk(0.5), qmin, qmax);
        let prep = Prepared::new(&c, &half, qmin, qmax, &st);
        assert!(
            prep.is_fast() && prep.clamp() != Clamp::Within,
            "{name}: half the range"
        );
        let mut codes = [0u16; 4];
        let mut lanes = Lanes::ZERO;
        assert!(
            prep.run::<_, true>(&xs, 0, &mut codes, &mut lanes) > 0,
            "{name}"
        );
    }
}

#[test]
fn eight_blocks_no_clamp_can_move_are_tested_at_once() {
    for name in ["ort-int8", "int4-g128", "torch-quint8", "q4_1"] {
        let c = preset(name, PresetOptions::default()).unwrap();
        let (qmin, qmax) = c.code_range();
        let calc = crate::core::params::ParamCalc::new(&c, qmin, qmax);
        let lo: [f32; PARAM_LANES] = std::array::from_fn(|j| -0.5 - j as f32);
        let hi: [f32; PARAM_LANES] = std::array::from_fn(|j| 0.25 + 2.0 * j as f32);
        let ex = std::array::from_fn(|j| if -lo[j] > hi[j] { lo[j] } else { hi[j] });
        let p8 = calc.lanes::<8>(&lo, &hi, &ex);
        let kind = Kind::of(&c);
        let (k, fast) = consts8_lanes(Avx2::detect(), kind, &p8, &lo, &hi, qmin, qmax);
        assert_eq!(fast, [true; PARAM_LANES], "{name}");
        let simd = Avx2::detect();
        assert_eq!(
            k.within_bits(simd, kind, &lo, &hi),
            u8::MAX,
            "{name}: their own ranges"
        );
        // One block's values reaching past its range: its largest code is clamped.
        for j in [0, 5, 7] {
            let mut wide = hi;
            wide[j] *= 3.0;
            let bits = k.within_bits(simd, kind, &lo, &wide);
            assert_eq!(bits, !(1 << j), "{name}: block {j} wider");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Eight blocks' constants and loop choice ([`consts8`]) are each block's own
    /// ([`Prepared::new`]), for ranges of every magnitude: zero, subnormal (scales whose
    /// reciprocal overflows), ordinary and huge.
    #[test]
    fn eight_blocks_prepare_as_one_at_a_time(
        config in config_strategy(),
        ranges in prop::collection::vec((-1.0f32..1.0, 0.0f32..1.0, any::<bool>()), 8),
        unit in prop_oneof![Just(0.0f32), Just(1e-42), Just(1e-30), Just(1.0), Just(1e30)],
    ) {
        let (qmin, qmax) = config.code_range();
        let calc = crate::core::params::ParamCalc::new(&config, qmin, qmax);
        let lo: [f32; PARAM_LANES] = std::array::from_fn(|j| ranges[j].0 * unit);
        let hi: [f32; PARAM_LANES] = std::array::from_fn(|j| (ranges[j].0 + ranges[j].1) * unit);
        let ex: [f32; PARAM_LANES] = std::array::from_fn(|j| {
            if ranges[j].2 { lo[j] } else { hi[j] }
        });
        let p8 = calc.lanes::<8>(&lo, &hi, &ex);
        let (k8, fast) = consts8(Avx2::detect(), Kind::of(&config), &p8, &lo, &hi, qmin, qmax);
        for j in 0..PARAM_LANES {
            let Some(p) = p8.get(j) else {
                prop_assert!(!fast[j], "lane {} has a problem", j);
                continue;
            };
            let st = BlockStats { min: lo[j], max: hi[j], extreme: ex[j], count: 1 };
            let one = Prepared::new(&config, &p, qmin, qmax, &st);
            prop_assert_eq!(fast[j], one.is_fast(), "lane {}", j);
            prop_assert_eq!(k8[j], one.consts(), "lane {}", j);
        }
        // The same constants lane by lane, as the search of eight small blocks reads them.
        let (soa, fast_soa) =
            consts8_lanes(Avx2::detect(), Kind::of(&config), &p8, &lo, &hi, qmin, qmax);
        prop_assert_eq!(fast_soa, fast);
        for j in (0..PARAM_LANES).filter(|&j| fast[j]) {
            prop_assert_eq!(soa.get(j), k8[j], "lane {}", j);
        }
        // Appended in place after other blocks, as the ladder's rows collect them.
        // A buffer whose slots a longer row filled, cleared and refilled over them.
        let mut out = ConstsBuf::default();
        for _ in 0..3 * PARAM_LANES {
            out.push(Consts::default());
        }
        out.clear();
        for _ in 0..3 {
            out.push(Consts::default());
        }
        soa.append_blocks(Avx2::detect(), &mut out);
        prop_assert_eq!(out.len(), 3 + PARAM_LANES);
        prop_assert_eq!(out.as_slice().len(), 3 + PARAM_LANES);
        prop_assert_eq!(&out.as_slice()[3..], &soa.blocks(Avx2::detect())[..]);
        prop_assert_eq!(&out.as_slice()[3..], &k8[..]);
        // Appended past every slot filled so far.
        soa.append_blocks(Avx2::detect(), &mut out);
        soa.append_blocks(Avx2::detect(), &mut out);
        prop_assert_eq!(out.len(), 3 + 3 * PARAM_LANES);
        prop_assert_eq!(&out.as_slice()[3 + 2 * PARAM_LANES..], &k8[..]);
        // Eight blocks tested at once for a code a clamp moves are each block's own test,
        // on their own ranges and on ranges twice as far out.
        if fast == [true; PARAM_LANES] {
            let kind = Kind::of(&config);
            for far in [1.0f32, 2.0] {
                let (l, h) = (lo.map(|v| v * far), hi.map(|v| v * far));
                let each = (0..PARAM_LANES).fold(0u8, |bits, j| {
                    bits | u8::from(within(kind, &k8[j], l[j], h[j])) << j
                });
                let bits = soa.within_bits(Avx2::detect(), kind, &l, &h);
                prop_assert_eq!(bits, each, "{} times as far", far);
                // And for errors exact in f32 with the clamp, under the kinds that form them.
                let each = (0..PARAM_LANES).fold(0u8, |bits, j| {
                    bits | u8::from(kind.exact_errors() && exact(kind, &k8[j], l[j], h[j])) << j
                });
                prop_assert_eq!(soa.exact_bits(kind, &l, &h), each, "{} times as far", far);
                prop_assert_eq!(each & bits, if kind.exact_errors() { bits } else { 0 });
            }
        }
        // Prepared at once in registers from the ends alone (each block's extreme the end
        // of larger magnitude): the constants and clamp tests of the steps above, or none
        // where a block's ends leave its extreme to its values, the configuration's
        // parameters are not formed in registers, or a block is not for the loop.
        let simd = Avx2::detect();
        let kind = Kind::of(&config);
        let ex: [f32; PARAM_LANES] =
            std::array::from_fn(|j| if -lo[j] > hi[j] { lo[j] } else { hi[j] });
        let p8 = calc.lanes::<8>(&lo, &hi, &ex);
        let (k8, fast) = consts8(simd, kind, &p8, &lo, &hi, qmin, qmax);
        let undecided = (0..PARAM_LANES).any(|j| lo[j] == 0.0 || hi[j] == 0.0 || -lo[j] == hi[j]);
        let avx2 = cfg!(target_arch = "x86_64") && is_x86_feature_detected!("avx2");
        let taken = avx2 && calc.in_registers() && !undecided && fast == [true; PARAM_LANES];
        for magnitudes in [false, true] {
            let got = prepare8(simd, kind, &calc, (&lo, &hi), (qmin, qmax), magnitudes);
            prop_assert_eq!(got.is_some(), taken, "magnitudes {}", magnitudes);
            let Some(e) = got else { continue };
            prop_assert_eq!(e.consts.blocks(simd), k8);
            let m: [f32; PARAM_LANES] = std::array::from_fn(|j| (-lo[j]).max(hi[j]));
            let (tl, th) = if magnitudes { (m.map(|m| -m), m) } else { (lo, hi) };
            let each = (0..PARAM_LANES).fold(0u8, |bits, j| {
                bits | u8::from(within(kind, &k8[j], tl[j], th[j])) << j
            });
            prop_assert_eq!(e.within, each, "magnitudes {}", magnitudes);
            let (scale, offset) = e.stored();
            prop_assert_eq!(*scale, p8.scale);
            prop_assert_eq!(offset.copied(), p8.float_min.then_some(p8.offset));
        }
    }

    /// Eight zero points' test in one register is the test of each, around `2^23` and at
    /// `i32`'s ends.
    #[test]
    fn eight_zero_points_near_as_each(
        points in prop::array::uniform8(prop_oneof![
            Just(0i32), Just(1 << 23), Just(-(1 << 23)), Just((1 << 23) + 1),
            Just(-(1 << 23) - 1), Just(i32::MIN), Just(i32::MAX), -300i32..300,
        ]),
        (qmin, qmax) in prop_oneof![Just((-128, 127)), Just((0, 255)), Just((0, 1 << 24)), Just((-8, 7))],
    ) {
        #[cfg(target_arch = "x86_64")]
        if let Some(v3) = pulp::x86::V3::try_new() {
            prop_assert_eq!(avx2::near8(v3, pulp::cast(points), qmin, qmax), near(&points, qmin, qmax));
        }
        let each = points.iter().all(|z| z.unsigned_abs() <= 1 << 23)
            && i64::from(qmin.abs().max(qmax.abs())) + (1 << 23) <= 1 << 24;
        prop_assert_eq!(near(&points, qmin, qmax), each);
    }
}

/// `x` moved `d` floats up (or down, for a negative `d`).
fn ulps(x: f32, d: i32) -> f32 {
    (0..d.unsigned_abs()).fold(x, |x, _| if d > 0 { x.next_up() } else { x.next_down() })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    /// [`one_code`], from each chunk's smallest and largest value, tells whether a row of
    /// blocks has one code exactly when [`Quantizer`]'s codes of all its values are equal:
    /// rows of one value with some values a few floats away and a few ordinary ones (so that
    /// they collapse or nearly do), blocks of one to four chunks with a shorter last block
    /// and chunk, under each block's own range or a narrower one that clamps.
    #[test]
    fn one_code_from_the_ends_is_the_codes(
        config in config_strategy(),
        base in prop_oneof![Just(0.0f32), Just(1e-40f32), -1e3f32..1e3],
        steps in prop::collection::vec((0u8..12, -3i32..4), 1..300),
        per in 1usize..5,
        shrink in prop_oneof![Just(1.0f32), 0.05f32..1.0],
    ) {
        let xs: Vec<f32> = steps
            .iter()
            .map(|&(k, d)| match k {
                0 | 1 => ulps(base, d),
                2 => base + d as f32,
                _ => base,
            })
            .collect();
        let kind = Kind::of(&config);
        let (qmin, qmax) = config.code_range();
        let (cmin, cmax) = config.clamp_range();
        let mut consts = Vec::new();
        let mut codes = Vec::new();
        for block in xs.chunks(per * LANES) {
            let mut st = BlockStats::EMPTY;
            st.extend(block);
            let p = block_params(&config, RealRange::of(&st).shrunk(shrink), qmin, qmax);
            if p.problem.is_some() {
                return Ok(());
            }
            let prep = Prepared::new(&config, &p, cmin, cmax, &st);
            if !prep.is_fast() {
                return Ok(());
            }
            consts.push(prep.consts());
            let q = Quantizer::new(&config, &p, cmin, cmax);
            codes.extend(block.iter().map(|&x| q.code(x).0));
        }
        let ends = |f: fn(f32, f32) -> f32, start: f32| -> Vec<f32> {
            xs.chunks(LANES).map(|c| c.iter().copied().fold(start, f)).collect()
        };
        let (lo, hi) = (ends(f32::min, f32::INFINITY), ends(f32::max, f32::NEG_INFINITY));
        let want = codes.iter().all(|&c| c == codes[0]);
        prop_assert_eq!(one_code(kind, &consts, per, &lo, &hi), want, "codes {:?}", codes);
    }
}
