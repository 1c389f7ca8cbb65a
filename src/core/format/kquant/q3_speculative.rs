//! Q3_K's sub-block search (`make_q3_quants` with `do_rmse`) on AVX2, by speculation.
//!
//! ggml's search visits a sub-block's values in order and, at each one, may move its code
//! and update the two running sums the next value's candidate is computed from: one long
//! chain of dependent operations, a divide among them. Most visits change nothing (on
//! gaussian sub-blocks about 0.4 changes per sub-block over all passes, and four in five
//! sub-blocks end after one pass), and a visit that changes nothing leaves the sums as they
//! were. So every remaining value of a pass is evaluated against the current sums at once,
//! eight sub-blocks to a register, without waiting on each other; at the first value where
//! some lane moves its code, that lane's move is committed (the lanes that did not move
//! were evaluated against their true sums, so nothing of theirs is lost) and the pass goes
//! on from the next value with the new sums. Every lane sees exactly ggml's sequence of
//! operations, in f32 and in the same order, so the codes and scales are bit-identical to
//! the portable [`super::fit::q3_rmse`] (which the tests compare against).

#![expect(
    clippy::inline_always,
    reason = "the search inlines into pulp's vector dispatch, which enables AVX2 for it"
)]

use std::arch::x86_64::{__m256, __m256i};

use pulp::x86::V3;

use super::fit::GROUP_MAX_EPS;

/// `_CMP_GT_OQ` / `_CMP_LT_OQ`: ordered comparisons, false when either side is NaN (as
/// Rust's `>` and `<`).
const GT: i32 = 0x1e;
const LT: i32 = 0x11;

/// [`super::fit::q3_rmse`] on 16 sub-blocks of 16 values (`x[i][k]` is value `i` of
/// sub-block `k`), eight sub-blocks to a register.
#[inline(always)]
pub(super) fn q3_rmse(
    simd: V3,
    nmax: i32,
    x: &[[f32; 16]; 16],
    l_out: &mut [[u8; 16]; 16],
    scale: &mut [f32; 16],
) {
    for half in 0..2 {
        let mut rows = [simd.avx._mm256_setzero_ps(); 16];
        for (r, xr) in rows.iter_mut().zip(x) {
            let (chunks, _) = xr.as_chunks::<8>();
            *r = pulp::cast(chunks[half]);
        }
        let (codes, s) = lanes(simd, nmax, &rows);
        let s: [f32; 8] = pulp::cast(s);
        scale[8 * half..8 * half + 8].copy_from_slice(&s);
        for (out, c) in l_out.iter_mut().zip(codes) {
            let c: [i32; 8] = pulp::cast(c);
            for (o, &v) in out[8 * half..8 * half + 8].iter_mut().zip(&c) {
                *o = v as u8;
            }
        }
    }
}

/// ggml's `nearest_int` on eight lanes: `x + 1.5 * 2^23`, low mantissa bits minus `2^22`.
#[inline(always)]
fn nearest(simd: V3, x: __m256) -> __m256i {
    let (avx, avx2) = (simd.avx, simd.avx2);
    let val = avx._mm256_add_ps(x, avx._mm256_set1_ps(12_582_912.0));
    avx2._mm256_sub_epi32(
        avx2._mm256_and_si256(
            avx._mm256_castps_si256(val),
            avx._mm256_set1_epi32(0x007F_FFFF),
        ),
        avx._mm256_set1_epi32(0x0040_0000),
    )
}

/// The search on eight sub-blocks: the codes plus `nmax` (0 for an all-zero sub-block)
/// and the scales.
#[inline(always)]
fn lanes(simd: V3, nmax: i32, x: &[__m256; 16]) -> ([__m256i; 16], __m256) {
    let (avx, avx2) = (simd.avx, simd.avx2);
    let (mul, add) = (
        |a, b| avx._mm256_mul_ps(a, b),
        |a, b| avx._mm256_add_ps(a, b),
    );
    let lo = avx._mm256_set1_epi32(-nmax);
    let hi = avx._mm256_set1_epi32(nmax - 1);
    let clamp = |q| avx2._mm256_min_epi32(avx2._mm256_max_epi32(q, lo), hi);
    let zero = avx._mm256_setzero_ps();

    // The value of largest magnitude (the first on ties) and that magnitude.
    let abs_mask = avx._mm256_castsi256_ps(avx._mm256_set1_epi32(0x7FFF_FFFF));
    let (mut max, mut amax) = (zero, zero);
    for &v in x {
        let ax = avx._mm256_and_ps(v, abs_mask);
        let take = avx._mm256_cmp_ps::<GT>(ax, amax);
        amax = avx._mm256_blendv_ps(amax, ax, take);
        max = avx._mm256_blendv_ps(max, v, take);
    }

    // The first codes from `-nmax / max`, and the sums they give.
    let iscale = avx._mm256_div_ps(avx._mm256_set1_ps(-(nmax as f32)), max);
    let mut l = [avx._mm256_setzero_si256(); 16];
    let (mut w, mut wv) = ([zero; 16], [zero; 16]);
    let (mut sumlx, mut suml2) = (zero, zero);
    for i in 0..16 {
        let v = x[i];
        l[i] = clamp(nearest(simd, mul(iscale, v)));
        w[i] = mul(v, v);
        wv[i] = mul(w[i], v);
        let q = avx._mm256_cvtepi32_ps(l[i]);
        sumlx = add(sumlx, mul(wv[i], q));
        suml2 = add(suml2, mul(mul(w[i], q), q));
    }

    // Up to five passes; a lane whose pass changes nothing would change nothing later, so
    // running passes until no lane changes is ggml's early exit per sub-block.
    for _ in 0..5 {
        let mut changed = false;
        let mut start = 0;
        while let Some((i, m)) = first_move(simd, nmax, x, &w, &wv, &l, (sumlx, suml2), start) {
            l[i] = avx._mm256_castps_si256(avx._mm256_blendv_ps(
                avx._mm256_castsi256_ps(l[i]),
                avx._mm256_castsi256_ps(m.code),
                m.take,
            ));
            sumlx = avx._mm256_blendv_ps(sumlx, m.slx, m.take);
            suml2 = avx._mm256_blendv_ps(suml2, m.sl2, m.take);
            changed = true;
            start = i + 1;
        }
        if !changed {
            break;
        }
    }

    // `sumlx / suml2` (0 unless `suml2 > 0`), and 0 with codes 0 for an all-zero sub-block.
    let dead = avx._mm256_cmp_ps::<LT>(amax, avx._mm256_set1_ps(GROUP_MAX_EPS));
    let positive = avx._mm256_cmp_ps::<GT>(suml2, zero);
    let s = avx._mm256_and_ps(avx._mm256_div_ps(sumlx, suml2), positive);
    let scale = avx._mm256_andnot_ps(dead, s);
    let dead = avx._mm256_castps_si256(dead);
    let offset = avx._mm256_set1_epi32(nmax);
    for li in &mut l {
        *li = avx2._mm256_andnot_si256(dead, avx2._mm256_add_epi32(*li, offset));
    }
    (l, scale)
}

/// The lanes that move their code at the first value from `start` where any lane does,
/// with their new codes and sums (`take` marks them).
struct Move {
    take: __m256,
    code: __m256i,
    slx: __m256,
    sl2: __m256,
}

/// Visits values `start..16` against the current sums `(sumlx, suml2)` (all of them
/// independent of each other) and returns the first where some lane moves its code.
#[inline(always)]
#[expect(
    clippy::too_many_arguments,
    reason = "the search's state, passed by value"
)]
fn first_move(
    simd: V3,
    nmax: i32,
    x: &[__m256; 16],
    w: &[__m256; 16],
    wv: &[__m256; 16],
    l: &[__m256i; 16],
    (sumlx, suml2): (__m256, __m256),
    start: usize,
) -> Option<(usize, Move)> {
    let (avx, avx2) = (simd.avx, simd.avx2);
    let (mul, add, sub) = (
        |a, b| avx._mm256_mul_ps(a, b),
        |a, b| avx._mm256_add_ps(a, b),
        |a, b| avx._mm256_sub_ps(a, b),
    );
    let (lo, hi) = (
        avx._mm256_set1_epi32(-nmax),
        avx._mm256_set1_epi32(nmax - 1),
    );
    let zero = avx._mm256_setzero_ps();
    let sumlx2 = mul(sumlx, sumlx);
    // A loop, not an iterator adaptor: a closure passed to one may be compiled outside
    // the AVX2 context, leaving every intrinsic a call.
    for i in start..16 {
        let v = x[i];
        let li = avx._mm256_cvtepi32_ps(l[i]);
        let slx0 = sub(sumlx, mul(wv[i], li));
        let sl20 = sub(suml2, mul(mul(w[i], li), li));
        let code = nearest(simd, avx._mm256_div_ps(mul(v, sl20), slx0));
        let code = avx2._mm256_min_epi32(avx2._mm256_max_epi32(code, lo), hi);
        let nf = avx._mm256_cvtepi32_ps(code);
        let slx = add(slx0, mul(wv[i], nf));
        let sl2 = add(sl20, mul(mul(w[i], nf), nf));
        let same = avx._mm256_castsi256_ps(avx2._mm256_cmpeq_epi32(code, l[i]));
        let better = avx._mm256_cmp_ps::<GT>(mul(mul(slx, slx), suml2), mul(sumlx2, sl2));
        let signs = avx._mm256_and_ps(
            avx._mm256_cmp_ps::<GT>(slx0, zero),
            avx._mm256_cmp_ps::<GT>(sl2, zero),
        );
        let take = avx._mm256_andnot_ps(same, avx._mm256_and_ps(signs, better));
        if avx._mm256_movemask_ps(take) != 0 {
            return Some((
                i,
                Move {
                    take,
                    code,
                    slx,
                    sl2,
                },
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::format::kquant::fit;

    /// A small xorshift generator, so the cases are the same on every run.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        /// Uniform in `[-1, 1)`.
        fn unit(&mut self) -> f32 {
            (self.next() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        }
    }

    /// Sub-blocks meant to reach every branch: ordinary spreads over many decades, all
    /// zero, below `GROUP_MAX_EPS`, constant, equal magnitudes of both signs (the first
    /// one wins), one outlier, values on the rounding midpoints of the first scale,
    /// subnormals, and few distinct values (many moves, several passes).
    fn sub_block(rng: &mut Rng, kind: u64) -> [f32; 16] {
        let spread = 10f32.powi((rng.next() % 12) as i32 - 6);
        std::array::from_fn(|i| match kind {
            0 => 0.0,
            1 => 1e-16 * rng.unit(),
            2 => 0.75 * spread,
            3 => {
                if i % 2 == 0 {
                    spread
                } else {
                    -spread
                }
            }
            4 => {
                if i == 5 {
                    12.0 * spread
                } else {
                    spread * rng.unit()
                }
            }
            5 => spread * (((rng.next() % 17) as f32 - 8.0) * 0.125),
            6 => {
                f32::from_bits((rng.next() % 0x007F_FFFF) as u32)
                    * if i % 3 == 0 { -1.0 } else { 1.0 }
            }
            7 => spread * [1.0f32, -0.3, 0.31, 0.0][(rng.next() % 4) as usize],
            _ => spread * rng.unit() * rng.unit().abs(),
        })
    }

    #[test]
    fn speculation_matches_the_portable_search() {
        let Some(simd) = V3::try_new() else {
            eprintln!("no AVX2 here: nothing to compare");
            return;
        };
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut moved = 0usize;
        for round in 0..4000 {
            let mut t = [[0.0f32; 16]; 16];
            for k in 0..16 {
                let kind = if round % 2 == 0 { 8 } else { rng.next() % 9 };
                let sub = sub_block(&mut rng, kind);
                for (row, &v) in t.iter_mut().zip(&sub) {
                    row[k] = v;
                }
            }
            let (mut want_l, mut want_s) = ([[0u8; 16]; 16], [0.0f32; 16]);
            fit::q3_rmse(4, &t, &mut want_l, &mut want_s);
            let (mut got_l, mut got_s) = ([[0u8; 16]; 16], [0.0f32; 16]);
            simd.vectorize(|| q3_rmse(simd, 4, &t, &mut got_l, &mut got_s));
            assert_eq!(got_l, want_l, "codes, round {round}");
            assert_eq!(
                got_s.map(f32::to_bits),
                want_s.map(f32::to_bits),
                "scales, round {round}"
            );
            // Count sub-blocks whose codes differ from the first rounding, so the test
            // shows that the passes really moved codes.
            for k in 0..16 {
                let max = (0..16)
                    .map(|i| t[i][k])
                    .fold(0.0f32, |m, v| if v.abs() > m.abs() { v } else { m });
                if max.abs() >= GROUP_MAX_EPS {
                    let iscale = -4.0 / max;
                    moved += usize::from((0..16).any(|i| {
                        let first = crate::core::format::bits::nearest_int(iscale * t[i][k])
                            .clamp(-4, 3)
                            + 4;
                        first != i32::from(want_l[i][k])
                    }));
                }
            }
        }
        assert!(moved > 5000, "only {moved} sub-blocks moved a code");
    }
}
