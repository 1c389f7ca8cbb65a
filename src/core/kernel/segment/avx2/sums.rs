//! The MSE search's squared-error sums with AVX2 ([`candidate_sums`], [`block_sums`],
//! [`approx_squares`]), eight lanes of `f32` to a register.
//!
//! Written as plain loops, the compiler pairs each four `f64` lanes of the sums with four
//! `f32` lanes of the reconstruction, so every `f32` step runs twice at half width (two
//! divisions where one would do). Here each reconstruction is one eight-lane register and
//! its two halves are widened to `f64` for the sums. The operations are those of the
//! portable loop, in the same order and precision (no fused multiply-add), so every
//! reconstruction, and so every sum, is the same bit for bit; the tests compare both
//! against the reference quantizer.

#![expect(
    clippy::inline_always,
    reason = "inlined into pulp's AVX2 context, or every intrinsic would be a call"
)]

use std::arch::x86_64::{__m256, __m256d};

use pulp::x86::V3;

use super::errors::{Quotient, add_squares};
use super::{Regs, load, store, x_hat};
use crate::core::kernel::segment::kind::DIV;
use crate::core::kernel::segment::{APPROX_TERMS, ConstLanes, Consts, LANES};

/// [`super::candidate_sums`] for one instance: every lane's constants applied to the same
/// value, one value at a time.
#[inline(always)]
pub(crate) fn candidate_sums<const E: u8, const R: u8, const O: bool>(
    simd: V3,
    k: &[Consts; LANES],
    xs: &[f32],
    sums: &mut [f64; LANES],
) {
    // One instance per closure, inlined into pulp's AVX2 context (a closure over every
    // instance is not, and every intrinsic becomes a call).
    simd.vectorize(
        #[inline(always)]
        || candidate_sums_in::<E, R, O>(simd, k, xs, sums),
    );
}

/// [`candidate_sums`] in the AVX2 context.
#[inline(always)]
pub(super) fn candidate_sums_in<const E: u8, const R: u8, const O: bool>(
    simd: V3,
    k: &[Consts; LANES],
    xs: &[f32],
    sums: &mut [f64; LANES],
) {
    let avx = simd.avx;
    let regs = Regs::of(simd, &ConstLanes::of(k));
    let (mut lo, mut hi) = load(sums);
    for &x in xs {
        let h = x_hat::<E, R, O>(simd, &regs, avx._mm256_set1_ps(x));
        let xd = avx._mm256_set1_pd(f64::from(x));
        add_squares(simd, h, (xd, xd), &mut lo, &mut hi);
    }
    store(sums, lo, hi);
}

/// [`super::approx_squares`] for one instance: the block's constants in every lane, eight
/// values to a register.
#[inline(always)]
pub(crate) fn approx_squares<const E: u8, const R: u8, const O: bool>(
    simd: V3,
    k: &Consts,
    xs: &[f32],
) -> f64 {
    simd.vectorize(
        #[inline(always)]
        || approx_squares_in::<E, R, O>(simd, k, xs),
    )
}

/// [`approx_squares`] in the AVX2 context: four `f32` sums of eight lanes (four chunks per
/// step, so that four chains of additions overlap), each widened to `f64` after at most
/// [`APPROX_TERMS`] terms per lane.
#[inline(always)]
pub(super) fn approx_squares_in<const E: u8, const R: u8, const O: bool>(
    simd: V3,
    k: &Consts,
    xs: &[f32],
) -> f64 {
    let avx = simd.avx;
    let regs = Regs::of(simd, &ConstLanes::of(&[*k; LANES]));
    let square = |x: __m256| {
        let e = avx._mm256_sub_ps(x_hat::<E, R, O>(simd, &regs, x), x);
        avx._mm256_mul_ps(e, e)
    };
    let widen = |a: __m256, lo: &mut __m256d, hi: &mut __m256d| {
        *lo = avx._mm256_add_pd(*lo, avx._mm256_cvtps_pd(avx._mm256_castps256_ps128(a)));
        *hi = avx._mm256_add_pd(*hi, avx._mm256_cvtps_pd(avx._mm256_extractf128_ps::<1>(a)));
    };
    let zero = avx._mm256_setzero_ps();
    let (mut lo, mut hi) = (avx._mm256_setzero_pd(), avx._mm256_setzero_pd());
    let (chunks, rest) = xs.as_chunks::<LANES>();
    let (quads, singles) = chunks.as_chunks::<4>();
    for run in quads.chunks(APPROX_TERMS) {
        let mut a = [zero; 4];
        for quad in run {
            for (a, x) in a.iter_mut().zip(quad) {
                *a = avx._mm256_add_ps(*a, square(pulp::cast(*x)));
            }
        }
        for a in a {
            widen(a, &mut lo, &mut hi);
        }
    }
    let mut a = zero;
    for x in singles {
        a = avx._mm256_add_ps(a, square(pulp::cast(*x)));
    }
    if !rest.is_empty() {
        // The last values, the unused lanes masked out.
        let mut x = [0.0f32; LANES];
        x[..rest.len()].copy_from_slice(rest);
        let mask: [i32; LANES] = std::array::from_fn(|j| if j < rest.len() { -1 } else { 0 });
        let t = avx._mm256_and_ps(square(pulp::cast(x)), pulp::cast(mask));
        a = avx._mm256_add_ps(a, t);
    }
    widen(a, &mut lo, &mut hi);
    let lanes: [f64; 4] = pulp::cast(avx._mm256_add_pd(lo, hi));
    (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])
}

/// [`super::block_sums`] for one instance: lane `j`'s constants applied to lane `j`'s
/// value, one row of lanes at a time.
#[inline(always)]
pub(crate) fn block_sums<const E: u8, const R: u8, const O: bool>(
    simd: V3,
    soa: &ConstLanes<LANES>,
    xs: &[[f32; LANES]],
    sums: &mut [f64; LANES],
) {
    simd.vectorize(
        #[inline(always)]
        || block_sums_in::<E, R, O>(simd, soa, xs, sums),
    );
}

/// [`block_sums`] in the AVX2 context.
#[inline(always)]
pub(super) fn block_sums_in<const E: u8, const R: u8, const O: bool>(
    simd: V3,
    soa: &ConstLanes<LANES>,
    xs: &[[f32; LANES]],
    sums: &mut [f64; LANES],
) {
    let avx = simd.avx;
    let regs = Regs::of(simd, soa);
    let (mut lo, mut hi) = load(sums);
    for row in xs {
        let x: __m256 = pulp::cast(*row);
        let h = x_hat::<E, R, O>(simd, &regs, x);
        let xd = (
            avx._mm256_cvtps_pd(avx._mm256_castps256_ps128(x)),
            avx._mm256_cvtps_pd(avx._mm256_extractf128_ps::<1>(x)),
        );
        add_squares(simd, h, xd, &mut lo, &mut hi);
    }
    store(sums, lo, hi);
}

/// [`super::block_sums_exact`] for one instance: where it divides without a float offset,
/// each lane's error `clamp(r)·s − x` formed in `f32` (as [`chunk_magnitudes`](crate::core::kernel::segment::avx2::errors::chunk_magnitudes) forms it
/// with the clamp), widened, squared and added in `f64`; otherwise [`block_sums`].
#[inline(always)]
pub(crate) fn block_sums_exact<const E: u8, const R: u8, const O: bool>(
    simd: V3,
    soa: &ConstLanes<LANES>,
    xs: &[[f32; LANES]],
    sums: &mut [f64; LANES],
) {
    if E != DIV || O {
        block_sums::<E, R, O>(simd, soa, xs, sums);
        return;
    }
    simd.vectorize(
        #[inline(always)]
        || block_sums_exact_in::<R>(simd, soa, xs, sums),
    );
}

/// [`block_sums_exact`] in the AVX2 context, for division without a float offset.
#[inline(always)]
pub(super) fn block_sums_exact_in<const R: u8>(
    simd: V3,
    soa: &ConstLanes<LANES>,
    xs: &[[f32; LANES]],
    sums: &mut [f64; LANES],
) {
    let avx = simd.avx;
    let k = Quotient::lanes(simd, &Regs::of(simd, soa));
    let (mut lo, mut hi) = load(sums);
    for row in xs {
        let e = k.errors::<R, true>(simd, pulp::cast(*row));
        let e_lo = avx._mm256_cvtps_pd(avx._mm256_castps256_ps128(e));
        let e_hi = avx._mm256_cvtps_pd(avx._mm256_extractf128_ps::<1>(e));
        lo = avx._mm256_add_pd(lo, avx._mm256_mul_pd(e_lo, e_lo));
        hi = avx._mm256_add_pd(hi, avx._mm256_mul_pd(e_hi, e_hi));
    }
    store(sums, lo, hi);
}
