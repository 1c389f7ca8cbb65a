//! The loop's errors with AVX2: a pass's errors into the row's partial sums, widened to
//! `f64` for the sums ([`pass_errors`]); where every error is exact in `f32`, formed there
//! ([`chunk_magnitudes`]); and codes packed to bytes ([`pack_offsets`]).

#![expect(
    clippy::inline_always,
    reason = "inlined into pulp's AVX2 context, or every intrinsic would be a call"
)]

use std::arch::x86_64::{__m256, __m256d};

use pulp::x86::V3;

use super::{Regs, load, round, store};
use crate::core::kernel::segment::{Consts, LANES, Lanes};

/// The offsets of four chunks' codes, each code plus its bias (`2^23 + offset`, see
/// `Consts::bias`) as in `biased`, packed into 32 bytes in chunk order: the low byte of each
/// lane (the offset, below 256), narrowed with unsigned saturating packs (which keep every
/// value below 256) and the 32-bit groups put back in order.
#[inline(always)]
pub(crate) fn pack_offsets(simd: V3, biased: &[[f32; LANES]; 4], out: &mut [u8; 4 * LANES]) {
    let avx2 = simd.avx2;
    let low = simd.avx._mm256_set1_epi32(0xff);
    let byte = |i: usize| avx2._mm256_and_si256(pulp::cast(biased[i]), low);
    // Each 128-bit half: chunks 0 and 1's (then 2 and 3's) lanes 0-3, then lanes 4-7.
    let a = avx2._mm256_packus_epi32(byte(0), byte(1));
    let b = avx2._mm256_packus_epi32(byte(2), byte(3));
    // 32-bit groups: lanes 0-3 of chunks 0, 1, 2, 3, then lanes 4-7 of each.
    let bytes = avx2._mm256_packus_epi16(a, b);
    let order: std::arch::x86_64::__m256i = pulp::cast([0u32, 4, 1, 5, 2, 6, 3, 7]);
    *out = pulp::cast(avx2._mm256_permutevar8x32_epi32(bytes, order));
}

/// Adds the squares of `x_hat − x` (eight lanes, `x` widened in `xd` as two halves) to the
/// sums `lo` (lanes 0–3) and `hi` (lanes 4–7), each in `f64`.
#[inline(always)]
pub(super) fn add_squares(
    simd: V3,
    x_hat: __m256,
    (xd_lo, xd_hi): (__m256d, __m256d),
    lo: &mut __m256d,
    hi: &mut __m256d,
) {
    let avx = simd.avx;
    let h_lo = avx._mm256_cvtps_pd(avx._mm256_castps256_ps128(x_hat));
    let h_hi = avx._mm256_cvtps_pd(avx._mm256_extractf128_ps::<1>(x_hat));
    let e_lo = avx._mm256_sub_pd(h_lo, xd_lo);
    let e_hi = avx._mm256_sub_pd(h_hi, xd_hi);
    *lo = avx._mm256_add_pd(*lo, avx._mm256_mul_pd(e_lo, e_lo));
    *hi = avx._mm256_add_pd(*hi, avx._mm256_mul_pd(e_hi, e_hi));
}

/// `portable`'s `chunk_errors` for each chunk of `xs` and its reconstructions `x_hat`,
/// with AVX2: each error `x̂ − x` in `f64`, its magnitude added to `acc.abs`, its square to
/// `acc.sq`, the larger of the magnitude and `acc.max` kept (`maxpd` keeps its second
/// operand unless the first is greater, as the plain loop does), and (`SIG`) `x²` added to
/// `acc.sig`: the same operations lane by lane (no fused multiply-add), so every sum is the
/// same bit for bit. Written out because the compiler's own vectorisation of the plain loop
/// changes with the code around it (it has shuffled lanes and kept the sums on the stack).
#[inline(always)]
pub(crate) fn pass_errors<const SIG: bool>(
    simd: V3,
    xs: &[[f32; LANES]],
    x_hat: &[[f32; LANES]],
    acc: &mut Lanes,
) {
    errors::<SIG, _>(
        simd,
        xs,
        x_hat,
        acc,
        #[inline(always)]
        |x| widen(simd, x),
    );
}

/// A chunk's values in `f64`, as two halves.
#[inline(always)]
pub(super) fn widen(simd: V3, x: &[f32; LANES]) -> (__m256d, __m256d) {
    let avx = simd.avx;
    let x: __m256 = pulp::cast(*x);
    (
        avx._mm256_cvtps_pd(avx._mm256_castps256_ps128(x)),
        avx._mm256_cvtps_pd(avx._mm256_extractf128_ps::<1>(x)),
    )
}

/// [`pass_errors`] without the signal, each chunk's values read already widened to `f64`
/// from `xw` rather than widened here: the same operations in the same order on the same
/// values (widening an `f32` is exact), so the same sums.
#[inline(always)]
pub(crate) fn pass_errors_wide(
    simd: V3,
    xw: &[[f64; LANES]],
    x_hat: &[[f32; LANES]],
    acc: &mut Lanes,
) {
    errors::<false, _>(simd, xw, x_hat, acc, load);
}

/// The loop of [`pass_errors`] and [`pass_errors_wide`]: `wide` gives a chunk's values of
/// `xs` in `f64`, as two halves.
#[inline(always)]
pub(super) fn errors<const SIG: bool, X>(
    simd: V3,
    xs: &[X],
    x_hat: &[[f32; LANES]],
    acc: &mut Lanes,
    wide: impl Fn(&X) -> (__m256d, __m256d),
) {
    let avx = simd.avx;
    let (mut a0, mut a1) = load(&acc.abs);
    let (mut s0, mut s1) = load(&acc.sq);
    let (mut m0, mut m1) = load(&acc.max);
    let (mut g0, mut g1) = load(&acc.sig);
    let sign = avx._mm256_set1_pd(-0.0);
    for (x, h) in xs.iter().zip(x_hat) {
        let (x0, x1) = wide(x);
        let (h0, h1) = widen(simd, h);
        if SIG {
            g0 = avx._mm256_add_pd(g0, avx._mm256_mul_pd(x0, x0));
            g1 = avx._mm256_add_pd(g1, avx._mm256_mul_pd(x1, x1));
        }
        let e0 = avx._mm256_sub_pd(h0, x0);
        let e1 = avx._mm256_sub_pd(h1, x1);
        let b0 = avx._mm256_andnot_pd(sign, e0);
        let b1 = avx._mm256_andnot_pd(sign, e1);
        a0 = avx._mm256_add_pd(a0, b0);
        a1 = avx._mm256_add_pd(a1, b1);
        s0 = avx._mm256_add_pd(s0, avx._mm256_mul_pd(e0, e0));
        s1 = avx._mm256_add_pd(s1, avx._mm256_mul_pd(e1, e1));
        m0 = avx._mm256_max_pd(b0, m0);
        m1 = avx._mm256_max_pd(b1, m1);
    }
    store(&mut acc.abs, a0, a1);
    store(&mut acc.sq, s0, s1);
    store(&mut acc.max, m0, m1);
    if SIG {
        store(&mut acc.sig, g0, g1);
    }
}

/// A block's divisor and stored scale (the same value, see `portable::blocks_exact`), and the
/// bounds of its rounded quotients, `qmin − z` and `qmax − z` (exact integers): one
/// block's in every lane ([`Quotient::of`]) or each lane's own ([`Quotient::lanes`]).
#[derive(Clone, Copy)]
pub(crate) struct Quotient {
    code_scale: __m256,
    scale: __m256,
    bottom: __m256,
    top: __m256,
}

impl Quotient {
    /// One block's, in every lane.
    #[inline(always)]
    pub(in crate::core::kernel::segment) fn of(simd: V3, k: &Consts) -> Self {
        let avx = simd.avx;
        Self {
            code_scale: avx._mm256_set1_ps(k.code_scale),
            scale: avx._mm256_set1_ps(k.scale),
            bottom: avx._mm256_set1_ps(k.qmin - k.zero_f),
            top: avx._mm256_set1_ps(k.qmax - k.zero_f),
        }
    }

    /// Lane `j`'s block's in lane `j`.
    #[inline(always)]
    pub(super) fn lanes(simd: V3, k: &Regs) -> Self {
        let avx = simd.avx;
        Self {
            code_scale: k.code_scale,
            scale: k.scale,
            bottom: avx._mm256_sub_ps(k.qmin, k.zero_f),
            top: avx._mm256_sub_ps(k.qmax, k.zero_f),
        }
    }

    /// The errors `r·s − x` of a chunk `x`, `r` its quotients rounded by rule `R` (and with
    /// `CLAMP` clamped into the bounds), formed in `f32` (see [`chunk_magnitudes`]).
    #[inline(always)]
    pub(super) fn errors<const R: u8, const CLAMP: bool>(&self, simd: V3, x: __m256) -> __m256 {
        let avx = simd.avx;
        let mut r = round::<R>(simd, avx._mm256_div_ps(x, self.code_scale));
        if CLAMP {
            // `r` is never NaN (a finite value over a positive scale).
            r = avx._mm256_min_ps(avx._mm256_max_ps(r, self.bottom), self.top);
        }
        avx._mm256_sub_ps(avx._mm256_mul_ps(r, self.scale), x)
    }
}

/// Each lane's largest error magnitude so far (see [`chunk_magnitudes`]).
pub(crate) struct Top(__m256);

impl Top {
    #[inline(always)]
    pub(in crate::core::kernel::segment) fn new(simd: V3) -> Self {
        Self(simd.avx._mm256_setzero_ps())
    }

    /// Each lane's largest, widened, into `max` where it is larger (`maxpd`'s rule, as the
    /// error loop keeps it: none is NaN, so the order does not matter).
    #[inline(always)]
    pub(in crate::core::kernel::segment) fn merge_into(&self, max: &mut [f64; LANES]) {
        let top: [f32; LANES] = pulp::cast(self.0);
        for (m, &t) in max.iter_mut().zip(&top) {
            let t = f64::from(t);
            *m = if t > *m { t } else { *m };
        }
    }
}

/// The error magnitudes `|r·s − x|` of one chunk `x` of a block whose quotients divide by
/// `k`'s scale `s`, `r` the quotient rounded by rule `R`, into `mag`, the largest of each
/// lane kept in `top`. With the scale also the stored one, no float offset and no clamp,
/// `r·s` is the reconstruction the other loops form (`portable::rounded`), and the difference
/// is exact in `f32`: where `r` is 0 it is `−x`; where `|r| ≥ 1` the quotient, correctly
/// rounded, is at least ½ in magnitude, so `|x| ≥ s/2` (it rounds so only from
/// `½·(1 − 2^-25)` up, and between `s/2·(1 − 2^-25)` and `s/2` lies no float: `s − 2|x|`
/// is a positive multiple of the spacing of floats at `2|x|`, more than `s·2^-25`), and
/// `x` and `r·s` lie within a factor of two of each other (Sterbenz's lemma).
///
/// With `CLAMP`, `r` is first clamped into `k`'s bounds, `qmin − z ..= qmax − z`: the other
/// loops clamp `u = r + z` (rounded in `f32`) into `qmin..=qmax` and reconstruct
/// `(c − z)·s`, and `c − z` is `r` clamped. Where the integer `r + z` lies within
/// `qmin..=qmax` it is exact, `c − z = r`, and `r` is within the bounds; where it lies
/// beyond `qmax`, `u` is not below `qmax` (rounding is monotone and `qmax` a float), so
/// `c − z` is `qmax − z`, and so is `r` clamped; below `qmin` likewise. The difference is
/// then exact where the block passes `portable::exact`.
#[inline(always)]
pub(crate) fn chunk_magnitudes<const R: u8, const CLAMP: bool>(
    simd: V3,
    k: &Quotient,
    x: &[f32; LANES],
    mag: &mut [f32; LANES],
    top: &mut Top,
) {
    let avx = simd.avx;
    let e = k.errors::<R, CLAMP>(simd, pulp::cast(*x));
    let m = avx._mm256_andnot_ps(avx._mm256_set1_ps(-0.0), e);
    // `maxps` keeps its second operand unless the first is greater.
    top.0 = avx._mm256_max_ps(m, top.0);
    *mag = pulp::cast(m);
}

/// Adds each of `mags`' error magnitudes (see [`chunk_magnitudes`]), widened to `f64`, to
/// `acc.abs` and its square to `acc.sq`, lane by lane in chunk order: the operations of the
/// error loop ([`pass_errors`]) on the same values, so the same sums.
#[inline(always)]
pub(crate) fn pass_magnitudes(simd: V3, mags: &[[f32; LANES]], acc: &mut Lanes) {
    let avx = simd.avx;
    let (mut a0, mut a1) = load(&acc.abs);
    let (mut s0, mut s1) = load(&acc.sq);
    for m in mags {
        let [lo, hi]: [[f32; 4]; 2] = pulp::cast(*m);
        let b0 = avx._mm256_cvtps_pd(pulp::cast(lo));
        let b1 = avx._mm256_cvtps_pd(pulp::cast(hi));
        a0 = avx._mm256_add_pd(a0, b0);
        a1 = avx._mm256_add_pd(a1, b1);
        s0 = avx._mm256_add_pd(s0, avx._mm256_mul_pd(b0, b0));
        s1 = avx._mm256_add_pd(s1, avx._mm256_mul_pd(b1, b1));
    }
    store(&mut acc.abs, a0, a1);
    store(&mut acc.sq, s0, s1);
}
