//! The MSE search's approximate sums against its exact search.

use super::mse::approx::{Slack, approx_search};
use super::mse::{CANDIDATES, Start, exact_search, lane_candidates, search};
use super::order::{CHUNK, SEEDED_MAX, SPLIT, largest_k, largest_pair, of};
use super::*;
use crate::core::config::Scheme;
use crate::core::kernel::Quantizer;
use crate::core::kernel::segment::{Prepared, approx_squares};
use crate::core::params::block_params;
use crate::core::presets::{PresetOptions, preset};
use crate::core::simd::Avx2;

/// `n` values, normal in shape (a fixed-seed xorshift and Box-Muller), some scaled up as
/// outliers and some quiet, so that the candidates near the least error differ by a little.
fn noise(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut uniform = || {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        ((s.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) + 1) as f64 / (1u64 << 53) as f64
    };
    (0..n)
        .map(|i| {
            let (u, v) = (uniform(), uniform());
            let x = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
            let x = match (seed % 3, i % 101) {
                (1, 0) => x * 8.0,
                (2, _) if i < n / 4 => x * 0.01,
                _ => x,
            };
            x as f32
        })
        .collect()
}

/// Every candidate's constants for the block `xs` under `c` (MSE clipping), as
/// [`params`] forms them; `None` when one is not for the specialised loop.
fn candidates(c: &Config, xs: &[f32]) -> Option<[Consts; CANDIDATES]> {
    let (qmin, qmax) = c.code_range();
    let (cmin, cmax) = c.clamp_range();
    let calc = ParamCalc::new(c, qmin, qmax);
    let mut st = BlockStats::EMPTY;
    st.extend(xs);
    let mut consts = [Consts::default(); CANDIDATES];
    lane_candidates(&calc, Kind::of(c), &st, (cmin, cmax), &mut consts).then_some(consts)
}

/// Each of `names` with MSE clipping, symmetric and asymmetric where valid.
fn configs(names: &[&str]) -> Vec<Config> {
    let mut out = Vec::new();
    for &name in names {
        let base = preset(name, PresetOptions::default()).expect("preset");
        for scheme in [Scheme::Symmetric, Scheme::Asymmetric] {
            let c = Config {
                scheme,
                clipping: Clipping::Mse,
                ..base
            };
            if c.validate().is_ok() {
                out.push(c);
            }
        }
    }
    out
}

/// Whether this machine has AVX2 (the approximate sums' only path).
fn avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    return Avx2::detect().v3().is_some();
    #[cfg(not(target_arch = "x86_64"))]
    false
}

#[test]
fn approximate_sums_settle_most_searches_with_the_exact_choice() {
    // On AVX2 machines the approximate sums settle nearly every search of noise (their
    // candidates' sums differ by far more than the bounds' slack), and every one they
    // settle is the exact search's choice. Elsewhere they settle none.
    let (mut searches, mut settled) = (0, 0);
    let mut active = Vec::new();
    for c in configs(&["ort-int8", "ort-int4", "int4-g128", "q4_1", "torch-quint8"]) {
        let kind = Kind::of(&c);
        for seed in 0..12u64 {
            let n = [65, 100, 777, 4096][seed as usize % 4];
            let xs = noise(n, seed * 13 + u64::from(c.bits));
            let Some(consts) = candidates(&c, &xs) else {
                continue;
            };
            let exact = crate::core::simd::vectorised(|| {
                exact_search(
                    kind,
                    &consts,
                    Start::of(kind, &consts, &xs),
                    &xs,
                    &mut active,
                )
            });
            let got = crate::core::simd::vectorised(|| {
                approx_search(kind, &consts, &Start::of(kind, &consts, &xs), &xs)
            });
            searches += 1;
            if let Some(k) = got {
                settled += 1;
                assert_eq!(k, exact, "{:?} {:?} n={n} seed {seed}", c.scheme, c.bits);
            }
            // The whole search takes the same choice either way.
            assert_eq!(
                crate::core::simd::vectorised(|| search(kind, &consts, &xs, &mut active)),
                exact
            );
        }
    }
    assert!(searches >= 80, "{searches} searches");
    if avx2() {
        assert!(
            settled * 10 >= searches * 9,
            "{settled} of {searches} settled"
        );
    } else {
        assert_eq!(settled, 0);
    }
}

#[test]
fn tied_candidates_are_left_to_the_exact_search() {
    // A block of zeros: every candidate's sum is 0, a tie the approximate sums cannot
    // break, so the exact search takes the first candidate.
    let mut active = Vec::new();
    for c in configs(&["ort-int8", "int4-g128", "torch-quint8"]) {
        let kind = Kind::of(&c);
        let zeros = vec![0.0f32; 500];
        let Some(consts) = candidates(&c, &zeros) else {
            continue;
        };
        let start = Start::of(kind, &consts, &zeros);
        assert_eq!(approx_search(kind, &consts, &start, &zeros), None);
        assert_eq!(search(kind, &consts, &zeros, &mut active), 0);
    }
}

#[test]
fn slack_holds_the_ordered_sum() {
    // The reference's ordered f64 sum of a candidate's squared errors lies within the
    // bounds `Slack` gives around `approx_squares`' sum, for blocks of every spread from
    // subnormal-scale values to values near 1e15.
    let mut checked = 0;
    for c in configs(&["ort-int8", "int4-g128", "q4_1"]) {
        let (qmin, qmax) = c.code_range();
        let (cmin, cmax) = c.clamp_range();
        for (i, scale) in [1e-30f32, 1e-12, 1e-3, 1.0, 1e6, 1e15]
            .into_iter()
            .enumerate()
        {
            let mut xs = noise(3000 + i, i as u64);
            for x in &mut xs {
                *x *= scale;
            }
            let mut st = BlockStats::EMPTY;
            st.extend(&xs);
            for a in [1.0f32, 0.7, 0.3] {
                let p = block_params(&c, RealRange::of(&st).shrunk(a), qmin, qmax);
                let prep = Prepared::new(&c, &p, cmin, cmax, &st);
                if p.problem.is_some() || !prep.is_fast() {
                    continue;
                }
                let q = Quantizer::new(&c, &p, cmin, cmax);
                let exact: f64 = xs.iter().fold(0.0, |s, &x| {
                    let e = f64::from(q.dequantize(q.code(x).0)) - f64::from(x);
                    s + e * e
                });
                let Some(approx) = approx_squares(Kind::of(&c), &prep.consts(), &xs) else {
                    continue;
                };
                let slack = Slack::new(xs.len());
                assert!(
                    slack.lower(approx) <= exact && exact <= slack.upper(approx),
                    "{:?} scale {scale:e} shrink {a}: {approx:e} for {exact:e}",
                    c.scheme
                );
                checked += 1;
            }
        }
    }
    assert!(!avx2() || checked >= 30, "{checked} sums checked");
}

/// The `k`-th and `k − 1`-th largest keys of `xs` by a full sort.
fn sorted_pair<const ABS: bool, const NEG: bool>(xs: &[f32], k: usize) -> (i32, i32) {
    let mut keys: Vec<i32> = xs.iter().map(|&x| of::<ABS, NEG>(x)).collect();
    keys.sort_unstable_by(|a, b| b.cmp(a));
    (keys[k - 1], keys[k.saturating_sub(2)])
}

/// Values with exact ties (a coarse grid, one magnitude at both signs, signed zeros) among
/// noise, in runs of equal values when `runs`.
fn tied(xs: &[f32], runs: bool) -> Vec<f32> {
    xs.iter()
        .enumerate()
        .map(|(i, &x)| match (i % 7, i % 11) {
            _ if runs && (i / 16) % 3 == 0 => 1.5,
            (0, _) => (x * 4.0).round() / 4.0,
            (3, _) => -0.0,
            (_, 5) => 0.0,
            (5, _) => 2.0,
            (_, 7) => -2.0,
            _ => x,
        })
        .collect()
}

proptest::proptest! {
    /// Both ways of `largest_pair` (through the chunks' largest keys, and the streamed
    /// selection) give a full sort's pair, for plain, magnitude and negated keys, on values
    /// with ties and signed zeros, and every `k` from 1 to a few past the chunks' quarter.
    #[test]
    fn largest_pair_is_the_sorts(
        n in 16usize..2500,
        seed in 0u64..1000,
        runs in proptest::bool::ANY,
        k_part in 0.0f64..1.0,
    ) {
        let xs = tied(&noise(n, seed), runs);
        let chunks = n / CHUNK;
        let k = 1 + (k_part * (chunks / 4 + 3).min(n - 1) as f64) as usize;
        let mut scratch = Scratch::default();
        proptest::prop_assert_eq!(
            largest_pair::<false, false>(&xs, k, &mut scratch),
            sorted_pair::<false, false>(&xs, k)
        );
        proptest::prop_assert_eq!(
            largest_pair::<true, false>(&xs, k, &mut scratch),
            sorted_pair::<true, false>(&xs, k)
        );
        proptest::prop_assert_eq!(
            largest_pair::<false, true>(&xs, k, &mut scratch),
            sorted_pair::<false, true>(&xs, k)
        );
        proptest::prop_assert_eq!(
            largest_pair::<true, true>(&xs, k, &mut scratch),
            sorted_pair::<true, true>(&xs, k)
        );
    }

    /// Eight groups' clipped ranges at once are each group's own, whenever `percentile8`
    /// gives them, for symmetric and asymmetric configurations and percentiles whose
    /// quantiles lie between the largest (smallest) two and elsewhere.
    #[test]
    fn eight_percentile_ranges_are_each_groups(
        seed in 0u64..1000,
        runs in proptest::bool::ANY,
        size_log in 1u32..8,
        p_pick in 0usize..6,
        symmetric in proptest::bool::ANY,
        extra in 0usize..40,
    ) {
        let size = 1usize << size_log;
        let xs = tied(&noise(8 * size * 2 + extra, seed), runs);
        let base = preset("ort-int8", PresetOptions::default()).expect("preset");
        let p = [100.0, 99.9, 99.0, 95.0, 80.0, 50.0][p_pick];
        let config = Config {
            scheme: if symmetric { Scheme::Symmetric } else { Scheme::Asymmetric },
            clipping: Clipping::Percentile(p),
            ..base
        };
        let mut scratch = Scratch::default();
        scratch.tops.fill(&xs, symmetric, [true, !symmetric], 8 * size);
        let ranks = Ranks::new(config.scheme, p, size);
        let mut given = 0;
        for at in (0..xs.len()).step_by(8 * size) {
            let blocks: Vec<&[f32]> = (0..8)
                .map(|j| xs.get(at + j * size..).unwrap_or_default())
                .map(|b| &b[..b.len().min(size)])
                .collect();
            let full: Vec<RealRange> = blocks
                .iter()
                .map(|b| RealRange::of(&crate::core::stats::block_stats(b)))
                .collect();
            let extreme = std::array::from_fn(|j| full[j].extreme);
            let Some([lo, hi, ex]) = percentile8(&scratch, &config, &ranks, at, &extreme) else {
                continue;
            };
            given += 1;
            for j in 0..8 {
                let want = percentile_clipped(&mut scratch, &config, blocks[j], full[j], &ranks, None);
                proptest::prop_assert_eq!(blocks[j].len(), size);
                proptest::prop_assert_eq!(
                    (lo[j].to_bits(), hi[j].to_bits(), ex[j].to_bits()),
                    (want.lo.to_bits(), want.hi.to_bits(), want.extreme.to_bits()),
                    "group {} of {} at {}", j, size, at
                );
            }
        }
        // The quantiles of 99.9 % and 100 % of groups of up to 1000 lie between the two
        // largest (or smallest): every whole run of eight groups is given.
        if p >= 99.9 {
            proptest::prop_assert_eq!(given, xs.len() / (8 * size));
        }
    }
}

#[test]
fn a_million_values_split_between_threads_give_the_sorts_pair() {
    // Past `SPLIT`, each thread keeps its part's largest; a part shorter than `k` keeps all.
    let xs = tied(&noise(SPLIT + 37, 5), true);
    let mut scratch = Scratch::default();
    for k in [1, 2, 300, 5000, SEEDED_MAX + 1] {
        assert_eq!(
            largest_pair::<true, false>(&xs, k, &mut scratch),
            sorted_pair::<true, false>(&xs, k),
            "k {k}"
        );
        assert_eq!(
            largest_pair::<false, true>(&xs, k, &mut scratch),
            sorted_pair::<false, true>(&xs, k),
            "k {k}"
        );
    }
    // Fewer values than `k`: every key is kept.
    let mut top = Vec::new();
    largest_k::<false, false>(&xs[..3], 5, &mut top);
    assert_eq!(top.len(), 3);
}
