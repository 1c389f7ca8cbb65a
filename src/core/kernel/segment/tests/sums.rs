//! The MSE search's sums against [`Quantizer`]'s ordered sums, bit for bit, and the
//! approximate sums within their documented error.

use proptest::prelude::*;

use super::*;

/// Each of eight candidates' ordered `f64` sum of squared errors over `xs`, through
/// [`Quantizer`], value by value.
fn reference_sums(config: &Config, params: &[BlockParams], xs: &[f32]) -> [f64; LANES] {
    let (qmin, qmax) = config.clamp_range();
    std::array::from_fn(|j| {
        let q = Quantizer::new(config, &params[j], qmin, qmax);
        let mut s = 0.0f64;
        for &x in xs {
            let e = f64::from(q.dequantize(q.code(x).0)) - f64::from(x);
            s += e * e;
        }
        s
    })
}

/// `xs` shifted `j` places to the left, the first `j` values moved to the end.
fn rotated(xs: &[f32], j: usize) -> Vec<f32> {
    let n = xs.len();
    (0..n).map(|i| xs[(i + j) % n]).collect()
}

/// Eight rows of values side by side for [`block_sums`]: lane `j` is `rotated(xs, j)`.
fn rotations(xs: &[f32]) -> Vec<[f32; LANES]> {
    let n = xs.len();
    (0..n)
        .map(|i| std::array::from_fn(|j| xs[(i + j) % n]))
        .collect()
}

/// Whether this machine has AVX2 (the only path of [`approx_squares`]).
fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    return pulp::x86::V3::try_new().is_some();
    #[cfg(not(target_arch = "x86_64"))]
    false
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    /// The MSE search's sums ([`candidate_sums`]: eight candidates over the same values;
    /// [`block_sums`]: eight blocks side by side), on whatever path this machine takes, are
    /// [`Quantizer`]'s ordered sums bit for bit, for every quantize expression, rounding
    /// and offset, on values with ties and values clamped by narrow candidates; and
    /// [`approx_squares`] holds each within its documented error.
    #[test]
    fn search_sums_are_the_quantizers(
        config in config_strategy(),
        xs in values_strategy(),
        shrinks in prop::collection::vec(0.05f32..1.0, LANES),
    ) {
        let (qmin, qmax) = config.code_range();
        let (cmin, cmax) = config.clamp_range();
        let kind = Kind::of(&config);
        let mut st = BlockStats::EMPTY;
        st.extend(&xs);
        // The block's own range and exact halvings of it (whose ratios meet the values'
        // ties), and narrower ones at random.
        let params: Vec<BlockParams> = shrinks
            .iter()
            .enumerate()
            .map(|(j, &a)| {
                let a = [1.0, 0.5, 0.25].get(j).copied().unwrap_or(a);
                block_params(&config, RealRange::of(&st).shrunk(a), qmin, qmax)
            })
            .collect();
        if params.iter().any(|p| p.problem.is_some()) {
            return Ok(());
        }
        let prepared: Vec<Prepared> =
            params.iter().map(|p| Prepared::new(&config, p, cmin, cmax, &st)).collect();
        if !prepared.iter().all(Prepared::is_fast) {
            return Ok(());
        }
        let consts: [Consts; LANES] = std::array::from_fn(|j| prepared[j].consts());
        let start: [f64; LANES] = std::array::from_fn(|j| j as f64 * 0.125);
        let mut got = start;
        candidate_sums(kind, &consts, &xs, &mut got);
        for j in 0..LANES {
            // The reference's terms added, in order, to the same nonzero start.
            let mut w = start[j];
            let q = Quantizer::new(&config, &params[j], cmin, cmax);
            for &x in &xs {
                let e = f64::from(q.dequantize(q.code(x).0)) - f64::from(x);
                w += e * e;
            }
            prop_assert_eq!(got[j].to_bits(), w.to_bits(), "candidate {}", j);
            // The approximate sum holds the ordered sum from 0 within its documented error
            // (`clip::mse::approx::Slack`'s bounds), or is refused because an `f32` step overflowed.
            let exact = xs.iter().fold(0.0f64, |s, &x| {
                let e = f64::from(q.dequantize(q.code(x).0)) - f64::from(x);
                s + e * e
            });
            let n = xs.len() as f64;
            let rel = APPROX_REL + 2.0 * (n + 2.0) * (f64::EPSILON / 2.0) * 1.01 + 2f64.powi(-30);
            let abs = n * 2f64.powi(-149);
            match approx_squares(kind, &consts[j], &xs) {
                Some(a) => prop_assert!(
                    (a - abs) * (1.0 - rel) <= exact && exact <= (a + abs) * (1.0 + rel),
                    "candidate {}: {:e} for {:e}", j, a, exact
                ),
                None => prop_assert!(
                    !has_avx2() || exact >= 3.0e38,
                    "candidate {} refused, sum {:e}", j, exact
                ),
            }
        }
        // Eight blocks: block `j` is `xs` shifted by `j` places (rotated), under candidate
        // `j`'s constants (every value lies in `st`'s range, so each stays for the loop).
        let soa = ConstLanes::of(&consts);
        let mut got = [0.0f64; LANES];
        block_sums(kind, &soa, &rotations(&xs), &mut got);
        for (j, got) in got.iter().enumerate() {
            let want = reference_sums(&config, &params, &rotated(&xs, j))[j];
            prop_assert_eq!(got.to_bits(), want.to_bits(), "block {}", j);
        }
        // Ranges shrunk by at least a half (whose clamped values mostly stay within twice
        // the last step): where every block's errors are exact in f32 with the clamp (each
        // block holds the values of `st`), the sums with errors formed there are the
        // reference's, bit for bit.
        let params: Vec<BlockParams> = shrinks
            .iter()
            .map(|&a| block_params(&config, RealRange::of(&st).shrunk(0.5 + a / 2.0), qmin, qmax))
            .collect();
        let prepared: Vec<Prepared> =
            params.iter().map(|p| Prepared::new(&config, p, cmin, cmax, &st)).collect();
        if params.iter().all(|p| p.problem.is_none()) && prepared.iter().all(Prepared::is_fast) {
            let soa = ConstLanes::of(&std::array::from_fn(|j| prepared[j].consts()));
            let ends = ([st.min; LANES], [st.max; LANES]);
            if soa.exact_bits(kind, &ends.0, &ends.1) == u8::MAX {
                let mut got = [0.0f64; LANES];
                block_sums_exact(kind, &soa, &rotations(&xs), &mut got);
                for (j, got) in got.iter().enumerate() {
                    let want = reference_sums(&config, &params, &rotated(&xs, j))[j];
                    prop_assert_eq!(got.to_bits(), want.to_bits(), "exact block {}", j);
                }
            }
        }
    }
}

/// A row whose values lie a few floats either side of half steps of its own scale
/// (`(k + 0.5) · s` moved by up to 4096 floats), between two ends that fix the scale and
/// zero point, for presets that divide, under each rounding rule: the loop without the
/// clamp gives the quantizer's codes and errors, and the MSE search's sums its squared
/// errors. A faster path that forms these quotients another way (a product by the
/// reciprocal, say) must round them as the division does; with a product by the reciprocal
/// and no margin around the half steps, this test fails.
#[test]
fn values_near_half_steps_round_as_the_quotient() {
    let moves = [
        -4096, -300, -64, -17, -8, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 8, 17, 64, 300, 4096,
    ];
    for name in ["ort-int8", "ort-uint8", "ort-int4", "ort-uint4"] {
        for rounding in [Rounding::HalfEven, Rounding::HalfAway, Rounding::HalfUp] {
            for (lo, hi) in [(-1.0f32, 0.5), (-2.9, 0.37), (-3e-5, 1.1e-5), (-7e18, 2e18)] {
                let mut c = preset(name, PresetOptions::default()).unwrap();
                c.rounding = rounding;
                assert_eq!(c.conventions.quant_expr, QuantExpr::Divide, "{name}");
                let (qmin, qmax) = c.code_range();
                let mut st = BlockStats::EMPTY;
                st.extend(&[lo, hi]);
                let p = block_params(&c, RealRange::of(&st), qmin, qmax);
                let s = p.code_scale;
                let z = p.zero_point as f32;
                let mut xs = vec![lo, hi];
                for k in qmin..qmax {
                    let half = (k as f32 - z + 0.5) * s;
                    xs.extend(
                        moves
                            .iter()
                            .map(|&d| ulps(half, d))
                            .filter(|x| (lo..=hi).contains(x)),
                    );
                }
                let mut st = BlockStats::EMPTY;
                st.extend(&xs);
                let prep = Prepared::new(&c, &p, qmin, qmax, &st);
                assert!(
                    prep.is_fast() && (prep.clamp() == Clamp::Within),
                    "{name} {rounding:?} {lo}"
                );
                check_segment(&c, &xs, RealRange::of(&st), 3)
                    .unwrap_or_else(|e| panic!("{name} {rounding:?} {lo}..{hi}: {e}"));
                // The MSE search's sums round the same quotients: eight lanes of the same
                // block over the values, and over the values rotated a place per lane.
                let params = vec![p; LANES];
                let want = reference_sums(&c, &params, &xs);
                let consts = [prep.consts(); LANES];
                let kind = Kind::of(&c);
                let mut got = [0.0f64; LANES];
                candidate_sums(kind, &consts, &xs, &mut got);
                assert_eq!(
                    got.map(f64::to_bits),
                    want.map(f64::to_bits),
                    "{name} {rounding:?}"
                );
                let mut got = [0.0f64; LANES];
                block_sums(kind, &ConstLanes::of(&consts), &rotations(&xs), &mut got);
                for (j, got) in got.iter().enumerate() {
                    let want = reference_sums(&c, &params, &rotated(&xs, j))[j];
                    assert_eq!(
                        got.to_bits(),
                        want.to_bits(),
                        "{name} {rounding:?} lane {j}"
                    );
                }
            }
        }
    }
}
