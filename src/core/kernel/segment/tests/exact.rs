//! Errors formed in `f32` (the loop's faster arithmetic where it is exact) against the
//! `f64` errors the reference forms.

use proptest::prelude::*;

use super::*;

/// Each block of `size` values of `xs` prepared from its own range under `config`; `None`
/// when the loop does not take a block or a clamp can move one of its codes.
fn blocks_within(config: &Config, xs: &[f32], size: usize) -> Option<Vec<(Consts, Quantizer)>> {
    let (qmin, qmax) = config.code_range();
    xs.chunks(size)
        .map(|b| {
            let mut st = BlockStats::EMPTY;
            st.extend(b);
            let p = block_params(config, RealRange::of(&st), qmin, qmax);
            if p.problem.is_some() {
                return None;
            }
            let prep = Prepared::new(config, &p, qmin, qmax, &st);
            (prep.is_fast() && (prep.clamp() == Clamp::Within))
                .then(|| (prep.consts(), Quantizer::new(config, &p, qmin, qmax)))
        })
        .collect()
}

/// A row's errors through [`run_prepared`] without clamp counts or codes, its blocks known
/// to be `clamp` against the clamp.
fn row_lanes(kind: Kind, blocks: &[Consts], size: usize, xs: &[f32], clamp: Clamp) -> Lanes {
    let mut none = vec![(); xs.len()];
    let mut lanes = Lanes::ZERO;
    run_prepared(
        kind,
        blocks,
        size,
        xs,
        &mut none,
        &mut lanes,
        &[],
        None,
        clamp,
        &[],
    );
    lanes
}

/// Rows whose errors are formed in `f32` (division by scales stored in f32, no float
/// offset, no clamp) against the same rows with errors formed in `f64`, and against the
/// quantizer value by value: the same sums and largest error, bit for bit.
fn check_exact_errors(config: &Config, xs: &[f32], size: usize) -> Result<bool, TestCaseError> {
    let Some(blocks) = blocks_within(config, xs, size) else {
        return Ok(false);
    };
    check_row(config, xs, size, &blocks, Clamp::Within)?;
    Ok(Kind::of(config).exact_errors())
}

/// A row of `blocks` (constants and quantizers) known to be `clamp`, its errors formed in
/// `f32` where the kind does, against the same row with errors formed in `f64` (and the
/// clamp), and against the quantizer value by value.
fn check_row(
    config: &Config,
    xs: &[f32],
    size: usize,
    blocks: &[(Consts, Quantizer)],
    clamp: Clamp,
) -> Result<(), TestCaseError> {
    let kind = Kind::of(config);
    let consts: Vec<Consts> = blocks.iter().map(|(k, _)| *k).collect();
    let got = row_lanes(kind, &consts, size, xs, clamp);
    let in_f64 = Kind {
        stored: false,
        ..kind
    };
    let in_f64 = row_lanes(in_f64, &consts, size, xs, Clamp::Any);
    let mut want = Lanes::ZERO;
    for (i, (b, (_, q))) in xs.chunks(size).zip(blocks).enumerate() {
        for (j, &x) in b.iter().enumerate() {
            let (code, _) = q.code(x);
            want.push((i * size + j) % LANES, x, q.dequantize(code));
        }
    }
    for other in [&in_f64, &want] {
        prop_assert_eq!(got.abs.map(f64::to_bits), other.abs.map(f64::to_bits));
        prop_assert_eq!(got.sq.map(f64::to_bits), other.sq.map(f64::to_bits));
        prop_assert_eq!(got.max.map(f64::to_bits), other.max.map(f64::to_bits));
    }
    Ok(())
}

/// Each block of `size` values of `xs` with parameters from its range shrunk by `alpha`
/// (as clipping narrows it, so that a clamp moves codes), prepared with its own ends; and
/// what the row is against the clamp (every block within, or every one's errors exact in
/// `f32`). `None` when the loop does not take a block or some block is neither.
fn blocks_shrunk(
    config: &Config,
    xs: &[f32],
    size: usize,
    alpha: f32,
) -> Option<(Vec<(Consts, Quantizer)>, Clamp)> {
    let (qmin, qmax) = config.code_range();
    let mut row = Clamp::Within;
    let blocks = xs
        .chunks(size)
        .map(|b| {
            let mut st = BlockStats::EMPTY;
            st.extend(b);
            let p = block_params(config, RealRange::of(&st).shrunk(alpha), qmin, qmax);
            if p.problem.is_some() {
                return None;
            }
            let prep = Prepared::new(config, &p, qmin, qmax, &st);
            match prep.clamp() {
                _ if !prep.is_fast() => return None,
                Clamp::Any => return None,
                Clamp::Exact => row = Clamp::Exact,
                Clamp::Within => {}
            }
            Some((prep.consts(), Quantizer::new(config, &p, qmin, qmax)))
        })
        .collect::<Option<Vec<_>>>()?;
    Some((blocks, row))
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        ..ProptestConfig::default()
    })]
    #[test]
    fn errors_formed_in_f32_are_the_f64_errors(
        config in config_strategy(),
        xs in values_strategy(),
        // 1024: the whole row as one block (the ladder's tensor rung).
        size in prop_oneof![Just(8usize), Just(16), Just(32), Just(64), Just(1024)],
    ) {
        let mut c = config;
        c.conventions.quant_expr = QuantExpr::Divide;
        c.scale_dtype = ScaleDtype::F32;
        if c.validate().is_ok() {
            check_exact_errors(&c, &xs, size)?;
        }
    }
}

/// Preset `name` with `rounding`, dividing by the scale, and its parameters for a block
/// whose values run from `lo` to `hi`.
fn divided(name: &str, rounding: Rounding, (lo, hi): (f32, f32)) -> (Config, BlockParams) {
    let mut c = preset(name, PresetOptions::default()).unwrap();
    c.rounding = rounding;
    c.conventions.quant_expr = QuantExpr::Divide;
    let (qmin, qmax) = c.code_range();
    let mut st = BlockStats::EMPTY;
    st.extend(&[lo, hi]);
    let p = block_params(&c, RealRange::of(&st), qmin, qmax);
    (c, p)
}

/// Values a few floats either side of every half step (where a code flips between 0 and
/// ±1, the edge of the argument that the error is exact in f32) and of every step, in rows
/// of groups of 8 and 32.
#[test]
fn errors_formed_in_f32_near_half_steps_are_the_f64_errors() {
    let moves = [-64, -3, -2, -1, 0, 1, 2, 3, 64];
    let mut taken = 0;
    for name in ["ort-int8", "ort-int4", "ort-uint8", "torch-qint8"] {
        for rounding in [Rounding::HalfEven, Rounding::HalfAway, Rounding::HalfUp] {
            for (lo, hi) in [(-1.0f32, 0.5), (-2.9, 0.37), (-3e-5, 1.1e-5), (-7e18, 2e18)] {
                let (c, p) = divided(name, rounding, (lo, hi));
                let (qmin, qmax) = c.code_range();
                let (s, z) = (p.code_scale, p.zero_point as f32);
                let mut near = Vec::new();
                for k in qmin..qmax {
                    for at in [k as f32 - z, k as f32 - z + 0.5] {
                        near.extend(
                            moves
                                .iter()
                                .map(|&d| ulps(at * s, d))
                                .filter(|x| (lo..=hi).contains(x)),
                        );
                    }
                }
                // Each group holds both ends, so its range (and scale) is the block's.
                for size in [8, 32] {
                    let mut xs = Vec::new();
                    for g in near.chunks(size - 2) {
                        xs.extend([lo, hi]);
                        xs.extend(g);
                        xs.resize(xs.len().next_multiple_of(size), 0.0);
                    }
                    let exact = check_exact_errors(&c, &xs, size)
                        .unwrap_or_else(|e| panic!("{name} {rounding:?} {lo}..{hi}: {e}"));
                    taken += usize::from(exact);
                }
            }
        }
    }
    // Every case divides by a scale stored in f32 without a float offset.
    assert_eq!(taken, 4 * 3 * 4 * 2);
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        ..ProptestConfig::default()
    })]
    /// Rows whose blocks' parameters come from narrowed ranges, so that codes are clamped:
    /// where every block passes the test of errors exact in `f32` ([`Prepared::clamp`]),
    /// the errors formed there with the clamp are the `f64` loop's and the quantizer's.
    #[test]
    fn clamped_errors_formed_in_f32_are_the_f64_errors(
        config in config_strategy(),
        xs in values_strategy(),
        size in prop_oneof![Just(8usize), Just(16), Just(32), Just(1024)],
        alpha in prop_oneof![0.2f32..1.0, Just(0.5), Just(1.0)],
    ) {
        let mut c = config;
        c.conventions.quant_expr = QuantExpr::Divide;
        c.scale_dtype = ScaleDtype::F32;
        if c.validate().is_ok()
            && let Some((blocks, clamp)) = blocks_shrunk(&c, &xs, size, alpha)
        {
            check_row(&c, &xs, size, &blocks, clamp)?;
        }
    }
}

/// Blocks whose values reach a few floats either side of twice the reconstruction of the
/// largest (and smallest) code, the edge of the test of errors exact in `f32` with the
/// clamp, with the other values spread up to there: the test passes exactly up to that
/// edge, and where it passes, the errors formed in `f32` are the `f64` loop's and the
/// quantizer's.
#[test]
fn clamped_errors_near_twice_the_last_step_are_the_f64_errors() {
    let mut taken = 0;
    for name in [
        "ort-int8",
        "ort-int4",
        "ort-uint8",
        "torch-qint8",
        "torch-quint8",
    ] {
        for rounding in [Rounding::HalfEven, Rounding::HalfAway, Rounding::HalfUp] {
            for (lo, hi) in [(-1.0f32, 0.7), (-0.3, 2.9), (-3e-5, 1.1e-5), (-7e18, 2e18)] {
                let (c, p) = divided(name, rounding, (lo, hi));
                let (qmin, qmax) = c.code_range();
                let (s, z) = (p.code_scale, p.zero_point as f32);
                // The reconstructions of the clamped codes (each range holds 0, so one is
                // negative and the other positive), and twice them.
                let (m_lo, m_hi) = ((qmin as f32 - z) * s, (qmax as f32 - z) * s);
                assert!(m_lo < 0.0 && m_hi > 0.0, "{name} {lo}..{hi}");
                for d in -3..=3 {
                    let (end_lo, end_hi) = (ulps(2.0 * m_lo, -d), ulps(2.0 * m_hi, d));
                    let mut xs: Vec<f32> = (0..64)
                        .map(|i| {
                            let t = (i as f32 * 0.618_034).fract();
                            if i % 2 == 0 { end_hi * t } else { end_lo * t }
                        })
                        .collect();
                    xs[0] = end_lo;
                    xs[1] = end_hi;
                    let mut b = BlockStats::EMPTY;
                    b.extend(&xs);
                    let prep = Prepared::new(&c, &p, qmin, qmax, &b);
                    assert!(prep.is_fast(), "{name}");
                    let at = format!("{name} {rounding:?} {lo}..{hi} {d}");
                    let want = if d <= 0 { Clamp::Exact } else { Clamp::Any };
                    assert_eq!(prep.clamp(), want, "{at}");
                    if d <= 0 {
                        let blocks = [(prep.consts(), Quantizer::new(&c, &p, qmin, qmax))];
                        check_row(&c, &xs, 64, &blocks, Clamp::Exact)
                            .unwrap_or_else(|e| panic!("{at}: {e}"));
                        taken += 1;
                    }
                }
            }
        }
    }
    assert_eq!(taken, 5 * 3 * 4 * 4);
}
