//! The MSE search's squared-error sums ([`super::candidate_sums`] and
//! [`super::block_sums`]) written with AVX2 operations, eight lanes of `f32` to a register.
//!
//! Written as plain loops, the compiler pairs each four `f64` lanes of the sums with four
//! `f32` lanes of the reconstruction, so every `f32` step runs twice at half width (two
//! divisions where one would do). Here each reconstruction is one eight-lane register and
//! its two halves are widened to `f64` for the sums. The operations are those of
//! [`super::simd`], in the same order and precision (no fused multiply-add), so every
//! reconstruction, and so every sum, is the same bit for bit; the tests compare both
//! against the reference quantizer.

#![expect(
    clippy::inline_always,
    reason = "inlined into pulp's AVX2 context, or every intrinsic would be a call"
)]

use std::arch::x86_64::{__m256, __m256d};

use pulp::x86::V3;

use super::simd::{ADD, DIV};
use super::{ConstLanes, Consts, LANES, Lanes};
use crate::core::round::{EVEN, UP};

/// `_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC`: ties to even.
const NEAREST: i32 = 0x08;
/// `_MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC`.
const TRUNCATE: i32 = 0x0B;
/// `_CMP_GE_OQ`.
const GE: i32 = 0x1D;

/// The constants of eight lanes, one register each.
#[derive(Clone, Copy)]
struct Regs {
    code_scale: __m256,
    recip: __m256,
    zero_f: __m256,
    zero_half: __m256,
    code_offset: __m256,
    qmin: __m256,
    qmax: __m256,
    scale: __m256,
    offset: __m256,
}

impl Regs {
    /// One block's constants in every lane.
    #[inline(always)]
    fn splat(simd: V3, k: &Consts) -> Self {
        let avx = simd.avx;
        Self {
            code_scale: avx._mm256_set1_ps(k.code_scale),
            recip: avx._mm256_set1_ps(k.recip),
            zero_f: avx._mm256_set1_ps(k.zero_f),
            zero_half: avx._mm256_set1_ps(k.zero_half),
            code_offset: avx._mm256_set1_ps(k.code_offset),
            qmin: avx._mm256_set1_ps(k.qmin),
            qmax: avx._mm256_set1_ps(k.qmax),
            scale: avx._mm256_set1_ps(k.scale),
            offset: avx._mm256_set1_ps(k.offset),
        }
    }

    #[inline(always)]
    fn of(simd: V3, k: &ConstLanes<LANES>) -> Self {
        let avx = simd.avx;
        Self {
            code_scale: pulp::cast(k.code_scale),
            recip: pulp::cast(k.recip),
            zero_f: pulp::cast(k.zero_f),
            zero_half: pulp::cast(k.zero_half),
            code_offset: pulp::cast(k.code_offset),
            qmin: avx._mm256_set1_ps(k.qmin),
            qmax: avx._mm256_set1_ps(k.qmax),
            scale: pulp::cast(k.scale),
            offset: pulp::cast(k.offset),
        }
    }
}

/// `t` rounded by rule `R` ([`crate::core::round::round_const`], lane by lane): ties to
/// even; half up as `(t + 0.5).floor()`; ties away from zero as `t` truncated, moved one
/// away from zero when the part truncated is at least one half (that part is exact: `t`
/// and its truncation lie within one of each other, and from `2^23` on `t` is an integer).
#[inline(always)]
fn round<const R: u8>(simd: V3, t: __m256) -> __m256 {
    let avx = simd.avx;
    match R {
        EVEN => avx._mm256_round_ps::<NEAREST>(t),
        UP => avx._mm256_floor_ps(avx._mm256_add_ps(t, avx._mm256_set1_ps(0.5))),
        _ => {
            let r = avx._mm256_round_ps::<TRUNCATE>(t);
            let part = avx._mm256_sub_ps(t, r);
            let sign = avx._mm256_set1_ps(-0.0);
            let magnitude = avx._mm256_andnot_ps(sign, part);
            let up = avx._mm256_cmp_ps::<GE>(magnitude, avx._mm256_set1_ps(0.5));
            // ±1 with the sign of `t`.
            let one = avx._mm256_or_ps(avx._mm256_and_ps(t, sign), avx._mm256_set1_ps(1.0));
            avx._mm256_blendv_ps(r, avx._mm256_add_ps(r, one), up)
        }
    }
}

/// The reconstructions of `x` under the eight lanes' constants: the arithmetic of
/// `ConstLanes::x_hat` ([`super::simd`]'s `unclamped`, `clamp` and `dequantize`).
#[inline(always)]
fn x_hat<const E: u8, const R: u8, const O: bool>(simd: V3, k: &Regs, x: __m256) -> __m256 {
    dequantize::<O>(simd, k, code::<E, R, O>(simd, k, x))
}

/// The clamped codes of `x` under the eight lanes' constants ([`super::simd`]'s
/// `unclamped` and `clamp`).
#[inline(always)]
fn code<const E: u8, const R: u8, const O: bool>(simd: V3, k: &Regs, x: __m256) -> __m256 {
    let avx = simd.avx;
    let x = if O {
        avx._mm256_sub_ps(x, k.code_offset)
    } else {
        x
    };
    let t = if E == DIV {
        avx._mm256_div_ps(x, k.code_scale)
    } else {
        avx._mm256_mul_ps(x, k.recip)
    };
    let u = if E == ADD {
        if R == UP {
            avx._mm256_floor_ps(avx._mm256_add_ps(t, k.zero_half))
        } else {
            round::<R>(simd, avx._mm256_add_ps(t, k.zero_f))
        }
    } else {
        avx._mm256_add_ps(round::<R>(simd, t), k.zero_f)
    };
    // `if u < qmin { qmin } else { u }`, then `if c > qmax { qmax } else { c }`: `maxps` and
    // `minps` return their first operand exactly when it compares greater (less).
    avx._mm256_min_ps(k.qmax, avx._mm256_max_ps(k.qmin, u))
}

/// The reconstructions of the clamped codes `c` ([`super::simd`]'s `dequantize`).
#[inline(always)]
fn dequantize<const O: bool>(simd: V3, k: &Regs, c: __m256) -> __m256 {
    let avx = simd.avx;
    if O {
        avx._mm256_add_ps(avx._mm256_mul_ps(k.scale, c), k.offset)
    } else {
        avx._mm256_mul_ps(avx._mm256_sub_ps(c, k.zero_f), k.scale)
    }
}

/// Adds the squares of `x_hat − x` (eight lanes, `x` widened in `xd` as two halves) to the
/// sums `lo` (lanes 0–3) and `hi` (lanes 4–7), each in `f64`.
#[inline(always)]
fn add_squares(
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

/// The sums as two registers.
#[inline(always)]
fn load(sums: &[f64; LANES]) -> (__m256d, __m256d) {
    let (halves, _) = sums.as_chunks::<4>();
    (pulp::cast(halves[0]), pulp::cast(halves[1]))
}

/// The two registers back into `sums`.
#[inline(always)]
fn store(sums: &mut [f64; LANES], lo: __m256d, hi: __m256d) {
    let lo: [f64; 4] = pulp::cast(lo);
    let hi: [f64; 4] = pulp::cast(hi);
    sums[..4].copy_from_slice(&lo);
    sums[4..].copy_from_slice(&hi);
}

/// [`super::candidate_sums`] for one instance: every lane's constants applied to the same
/// value, one value at a time.
#[inline(always)]
pub(super) fn candidate_sums<const E: u8, const R: u8, const O: bool>(
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
fn candidate_sums_in<const E: u8, const R: u8, const O: bool>(
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

/// [`super::block_sums`] for one instance: lane `j`'s constants applied to lane `j`'s
/// value, one row of lanes at a time.
#[inline(always)]
pub(super) fn block_sums<const E: u8, const R: u8, const O: bool>(
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
fn block_sums_in<const E: u8, const R: u8, const O: bool>(
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

/// [`super::rung_sums`] for one instance: each block's constants in every lane, its chunks
/// one after another, each chunk's errors into lane `column % LANES`.
#[inline(always)]
pub(super) fn rung_sums<const E: u8, const R: u8, const O: bool>(
    simd: V3,
    blocks: &[Consts],
    size: usize,
    xs: &[f32],
    lanes: &mut Lanes,
) -> (f32, f32) {
    let mut codes = (0.0, 0.0);
    // A named operation rather than a closure: a closure this large is left outside
    // pulp's AVX2 context (its call is not inlined), and every intrinsic becomes a call.
    simd.vectorize(RungSums::<E, R, O> {
        simd,
        blocks,
        size,
        xs,
        lanes,
        codes: &mut codes,
    });
    codes
}

/// The arguments of [`rung_sums_in`], for [`V3::vectorize`].
struct RungSums<'a, const E: u8, const R: u8, const O: bool> {
    simd: V3,
    blocks: &'a [Consts],
    size: usize,
    xs: &'a [f32],
    lanes: &'a mut Lanes,
    codes: &'a mut (f32, f32),
}

impl<const E: u8, const R: u8, const O: bool> pulp::NullaryFnOnce for RungSums<'_, E, R, O> {
    type Output = ();

    #[inline(always)]
    fn call(self) {
        *self.codes =
            rung_sums_in::<E, R, O>(self.simd, self.blocks, self.size, self.xs, self.lanes);
    }
}

/// [`rung_sums`] in the AVX2 context.
#[inline(always)]
fn rung_sums_in<const E: u8, const R: u8, const O: bool>(
    simd: V3,
    blocks: &[Consts],
    size: usize,
    xs: &[f32],
    lanes: &mut Lanes,
) -> (f32, f32) {
    let avx = simd.avx;
    let (chunks, _) = xs.as_chunks::<LANES>();
    let per = (size / LANES).max(1);
    let sign = avx._mm256_set1_pd(-0.0);
    let (mut abs_lo, mut abs_hi) = load(&lanes.abs);
    let (mut sq_lo, mut sq_hi) = load(&lanes.sq);
    let (mut max_lo, mut max_hi) = load(&lanes.max);
    let mut lo = avx._mm256_set1_ps(f32::INFINITY);
    let mut hi = avx._mm256_set1_ps(f32::NEG_INFINITY);
    for (block, k) in chunks.chunks(per).zip(blocks) {
        let regs = Regs::splat(simd, k);
        for x8 in block {
            let x: __m256 = pulp::cast(*x8);
            let c = code::<E, R, O>(simd, &regs, x);
            lo = avx._mm256_min_ps(lo, c);
            hi = avx._mm256_max_ps(hi, c);
            let h = dequantize::<O>(simd, &regs, c);
            let e_lo = avx._mm256_sub_pd(
                avx._mm256_cvtps_pd(avx._mm256_castps256_ps128(h)),
                avx._mm256_cvtps_pd(avx._mm256_castps256_ps128(x)),
            );
            let e_hi = avx._mm256_sub_pd(
                avx._mm256_cvtps_pd(avx._mm256_extractf128_ps::<1>(h)),
                avx._mm256_cvtps_pd(avx._mm256_extractf128_ps::<1>(x)),
            );
            // |e| clears the sign bit, as `f64::abs` does.
            let a_lo = avx._mm256_andnot_pd(sign, e_lo);
            let a_hi = avx._mm256_andnot_pd(sign, e_hi);
            abs_lo = avx._mm256_add_pd(abs_lo, a_lo);
            abs_hi = avx._mm256_add_pd(abs_hi, a_hi);
            sq_lo = avx._mm256_add_pd(sq_lo, avx._mm256_mul_pd(e_lo, e_lo));
            sq_hi = avx._mm256_add_pd(sq_hi, avx._mm256_mul_pd(e_hi, e_hi));
            // `if a > m { a } else { m }`: `maxpd` returns its first operand exactly when it
            // compares greater.
            max_lo = avx._mm256_max_pd(a_lo, max_lo);
            max_hi = avx._mm256_max_pd(a_hi, max_hi);
        }
    }
    store(&mut lanes.abs, abs_lo, abs_hi);
    store(&mut lanes.sq, sq_lo, sq_hi);
    store(&mut lanes.max, max_lo, max_hi);
    let lo: [f32; LANES] = pulp::cast(lo);
    let hi: [f32; LANES] = pulp::cast(hi);
    (
        lo.iter().fold(f32::INFINITY, |m, &v| m.min(v)),
        hi.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v)),
    )
}
