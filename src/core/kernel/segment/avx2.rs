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
//!
//! Also here: eight blocks' loop constants ([`consts8_lanes`], [`blocks`]), formed in eight-lane registers
//! and transposed to one [`Consts`] per block, where plain loops build them lane by lane.

#![expect(
    clippy::inline_always,
    reason = "inlined into pulp's AVX2 context, or every intrinsic would be a call"
)]

use std::arch::x86_64::{__m256, __m256d, __m256i};

use pulp::x86::V3;

use super::simd::{ADD, DIV};
use super::{APPROX_TERMS, ConstLanes, Consts, Kind, LANES, Lanes};
use crate::core::config::{QuantExpr, Rounding};
use crate::core::params::{ParamCalc, ParamRegs, Params8};
use crate::core::round::{EVEN, UP};
use crate::core::simd::avx2::{
    EQ, GE, GT, LE, LT, NE, NEAREST, TRUNCATE, abs, ends_regs, flags, max, transpose,
};

/// The constants of eight lanes, one register each.
#[derive(Clone, Copy)]
pub(super) struct Regs {
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
    /// The lanes of `self` as arrays (`q` the code range, as the registers `qmin` and `qmax`
    /// hold it).
    #[inline(always)]
    pub(super) fn lanes(&self, (qmin, qmax): (i32, i32)) -> ConstLanes<LANES> {
        ConstLanes {
            code_scale: pulp::cast(self.code_scale),
            recip: pulp::cast(self.recip),
            zero_f: pulp::cast(self.zero_f),
            zero_half: pulp::cast(self.zero_half),
            code_offset: pulp::cast(self.code_offset),
            scale: pulp::cast(self.scale),
            offset: pulp::cast(self.offset),
            qmin: qmin as f32,
            qmax: qmax as f32,
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
    let avx = simd.avx;
    let u = unclamped::<E, R, O>(simd, k, x);
    // `if u < qmin { qmin } else { u }`, then `if c > qmax { qmax } else { c }`: `maxps` and
    // `minps` return their first operand exactly when it compares greater (less).
    let c = avx._mm256_min_ps(k.qmax, avx._mm256_max_ps(k.qmin, u));
    if O {
        avx._mm256_add_ps(avx._mm256_mul_ps(k.scale, c), k.offset)
    } else {
        avx._mm256_mul_ps(avx._mm256_sub_ps(c, k.zero_f), k.scale)
    }
}

/// The unclamped codes of `x` under the eight lanes' constants: the arithmetic of
/// `ConstLanes::unclamped` ([`super::simd`]'s `unclamped`).
#[inline(always)]
fn unclamped<const E: u8, const R: u8, const O: bool>(simd: V3, k: &Regs, x: __m256) -> __m256 {
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
    if E == ADD {
        if R == UP {
            avx._mm256_floor_ps(avx._mm256_add_ps(t, k.zero_half))
        } else {
            round::<R>(simd, avx._mm256_add_ps(t, k.zero_f))
        }
    } else {
        avx._mm256_add_ps(round::<R>(simd, t), k.zero_f)
    }
}

/// [`super::simd`]'s `lanes_within` as a mask: bit `j` set where lane `j`'s block, with its
/// values in `lo[j]..=hi[j]`, has no code a clamp moves (a positive scale, and the unclamped
/// codes of both ends in `qmin..=qmax`; NaN fails a comparison). One comparison per step
/// and one `movmskps`, where the lanes' `bool`s took a few instructions each to gather.
#[inline(always)]
pub(super) fn within_bits<const E: u8, const R: u8, const O: bool>(
    simd: V3,
    k: &ConstLanes<LANES>,
    lo: &[f32; LANES],
    hi: &[f32; LANES],
) -> u8 {
    let regs = Regs::of(simd, k);
    regs_within::<E, R, O>(simd, &regs, pulp::cast(*lo), pulp::cast(*hi))
}

/// [`within_bits`] of constants kept in registers.
#[inline(always)]
pub(super) fn regs_within<const E: u8, const R: u8, const O: bool>(
    simd: V3,
    k: &Regs,
    lo: __m256,
    hi: __m256,
) -> u8 {
    let avx = simd.avx;
    let s = if E == DIV { k.code_scale } else { k.recip };
    let positive = avx._mm256_cmp_ps::<GT>(s, avx._mm256_setzero_ps());
    let u_lo = unclamped::<E, R, O>(simd, k, lo);
    let u_hi = unclamped::<E, R, O>(simd, k, hi);
    let ok = avx._mm256_and_ps(
        positive,
        avx._mm256_and_ps(
            avx._mm256_cmp_ps::<GE>(u_lo, k.qmin),
            avx._mm256_cmp_ps::<LE>(u_hi, k.qmax),
        ),
    );
    (avx._mm256_movemask_ps(ok) & 0xff) as u8
}

/// For eight ranges `lo..=hi`: `-m` and `m`, `m = max(-lo, hi)` lane by lane (`f32::max`:
/// the other operand where one is NaN), each range's largest magnitude.
#[inline(always)]
pub(super) fn magnitudes(simd: V3, lo: __m256, hi: __m256) -> (__m256, __m256) {
    let sign = simd.avx._mm256_set1_ps(-0.0);
    let m = max(simd, simd.avx._mm256_xor_ps(lo, sign), hi);
    (simd.avx._mm256_xor_ps(m, sign), m)
}

/// [`super::prepare8`]'s constants: eight blocks' parameters ([`ParamCalc::regs8`]) and
/// loop constants ([`consts8_regs`]) from their ends `lo`, `hi`, in registers; `None` where
/// a block's ends leave its extreme to its values (a zero end, or two ends of one magnitude)
/// or any block is not for the specialised loop.
#[inline(always)]
pub(super) fn eight(
    simd: V3,
    kind: Kind,
    calc: &ParamCalc,
    lo: __m256,
    hi: __m256,
    q: (i32, i32),
) -> Option<(Regs, bool)> {
    let (undecided, extreme) = ends_regs(simd, lo, hi);
    if undecided {
        return None;
    }
    let p = calc.regs8(simd, lo, hi, extreme)?;
    let (k, fast) = consts8_regs(simd, kind, &p, lo, hi, q)?;
    (fast & 0xff == 0xff).then_some((k, p.float_min))
}

/// The offsets of four chunks' codes, each code plus its bias (`2^23 + offset`, see
/// `Consts::bias`) as in `biased`, packed into 32 bytes in chunk order: the low byte of each
/// lane (the offset, below 256), narrowed with unsigned saturating packs (which keep every
/// value below 256) and the 32-bit groups put back in order.
#[inline(always)]
pub(super) fn pack_offsets(simd: V3, biased: &[[f32; LANES]; 4], out: &mut [u8; 4 * LANES]) {
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

/// [`super::simd`]'s `chunk_errors` for each chunk of `xs` and its reconstructions `x_hat`,
/// with AVX2: each error `x̂ − x` in `f64`, its magnitude added to `acc.abs`, its square to
/// `acc.sq`, the larger of the magnitude and `acc.max` kept (`maxpd` keeps its second
/// operand unless the first is greater, as the plain loop does), and (`SIG`) `x²` added to
/// `acc.sig`: the same operations lane by lane (no fused multiply-add), so every sum is the
/// same bit for bit. Written out because the compiler's own vectorisation of the plain loop
/// changes with the code around it (it has shuffled lanes and kept the sums on the stack).
#[inline(always)]
pub(super) fn pass_errors<const SIG: bool>(
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
fn widen(simd: V3, x: &[f32; LANES]) -> (__m256d, __m256d) {
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
pub(super) fn pass_errors_wide(
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
fn errors<const SIG: bool, X>(
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

/// A block's divisor and stored scale (the same value, see `simd::blocks_exact`), and the
/// bounds of its rounded quotients, `qmin − z` and `qmax − z` (exact integers): one
/// block's in every lane ([`Quotient::of`]) or each lane's own ([`Quotient::lanes`]).
#[derive(Clone, Copy)]
pub(super) struct Quotient {
    code_scale: __m256,
    scale: __m256,
    bottom: __m256,
    top: __m256,
}

impl Quotient {
    /// One block's, in every lane.
    #[inline(always)]
    pub(super) fn of(simd: V3, k: &Consts) -> Self {
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
    fn lanes(simd: V3, k: &Regs) -> Self {
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
    fn errors<const R: u8, const CLAMP: bool>(&self, simd: V3, x: __m256) -> __m256 {
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
pub(super) struct Top(__m256);

impl Top {
    #[inline(always)]
    pub(super) fn new(simd: V3) -> Self {
        Self(simd.avx._mm256_setzero_ps())
    }

    /// Each lane's largest, widened, into `max` where it is larger (`maxpd`'s rule, as the
    /// error loop keeps it: none is NaN, so the order does not matter).
    #[inline(always)]
    pub(super) fn merge_into(&self, max: &mut [f64; LANES]) {
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
/// `r·s` is the reconstruction the other loops form (`simd::rounded`), and the difference
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
/// then exact where the block passes `simd::exact`.
#[inline(always)]
pub(super) fn chunk_magnitudes<const R: u8, const CLAMP: bool>(
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
pub(super) fn pass_magnitudes(simd: V3, mags: &[[f32; LANES]], acc: &mut Lanes) {
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

/// [`super::approx_squares`] for one instance: the block's constants in every lane, eight
/// values to a register.
#[inline(always)]
pub(super) fn approx_squares<const E: u8, const R: u8, const O: bool>(
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
fn approx_squares_in<const E: u8, const R: u8, const O: bool>(
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

/// [`super::block_sums_exact`] for one instance: where it divides without a float offset,
/// each lane's error `clamp(r)·s − x` formed in `f32` (as [`chunk_magnitudes`] forms it
/// with the clamp), widened, squared and added in `f64`; otherwise [`block_sums`].
#[inline(always)]
pub(super) fn block_sums_exact<const E: u8, const R: u8, const O: bool>(
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
fn block_sums_exact_in<const R: u8>(
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

/// [`super::near`] for eight zero points in one register.
#[inline(always)]
pub(super) fn near8(simd: V3, zero_points: __m256i, qmin: i32, qmax: i32) -> bool {
    let (avx, avx2) = (simd.avx, simd.avx2);
    let magnitude = avx2._mm256_abs_epi32(zero_points);
    // `|i32::MIN|` is 2^31 read unsigned, as `unsigned_abs` gives it.
    let limit = avx._mm256_set1_epi32(super::NEAR.cast_signed());
    let within = avx2._mm256_cmpeq_epi32(avx2._mm256_max_epu32(magnitude, limit), limit);
    avx2._mm256_movemask_epi8(within) == -1 && super::near_codes(qmin, qmax)
}

/// [`super::consts_lanes`] for eight blocks when every lane's zero point leaves its codes'
/// differences exact (`exact` true in every lane), else `None`: the same constants and loop
/// choices, formed in registers.
#[inline(always)]
pub(super) fn consts8_lanes(
    simd: V3,
    kind: Kind,
    p: &Params8,
    min: &[f32; LANES],
    max: &[f32; LANES],
    q: (i32, i32),
) -> Option<(ConstLanes<LANES>, [bool; LANES])> {
    let p = ParamRegs::of(simd, p);
    let (k, fast) = consts8_regs(simd, kind, &p, pulp::cast(*min), pulp::cast(*max), q)?;
    Some((k.lanes(q), flags(fast)))
}

/// [`consts8_lanes`] kept in registers: the parameters `p` of eight blocks whose values
/// lie in `lo..=hi` in, their constants and loop choices (bit `j` for lane `j`) out.
#[inline(always)]
pub(super) fn consts8_regs(
    simd: V3,
    kind: Kind,
    p: &ParamRegs,
    lo: __m256,
    hi: __m256,
    (qmin, qmax): (i32, i32),
) -> Option<(Regs, u32)> {
    if !(kind.offset || near8(simd, p.zero_point, qmin, qmax)) {
        return None;
    }
    let avx = simd.avx;
    let s = p.code_scale;
    let zero = avx._mm256_setzero_ps();
    let one = avx._mm256_set1_ps(1.0);
    let recip = avx._mm256_andnot_ps(avx._mm256_cmp_ps::<EQ>(s, zero), avx._mm256_div_ps(one, s));
    let zero_f = avx._mm256_cvtepi32_ps(p.zero_point);
    let zero_half = avx._mm256_add_ps(zero_f, avx._mm256_set1_ps(0.5));
    let (code_offset, offset): (__m256, __m256) = if p.float_min {
        (p.lo, p.offset)
    } else {
        (zero, zero)
    };
    let (lo, hi) = if kind.offset {
        (
            avx._mm256_sub_ps(lo, code_offset),
            avx._mm256_sub_ps(hi, code_offset),
        )
    } else {
        (lo, hi)
    };
    let a = self::max(simd, abs(simd, lo), abs(simd, hi));
    let c = match (kind.expr, kind.rounding) {
        (QuantExpr::ReciprocalAddZero, Rounding::HalfUp) => abs(simd, zero_half),
        (QuantExpr::ReciprocalAddZero, _) => abs(simd, zero_f),
        (_, Rounding::HalfUp) => avx._mm256_set1_ps(0.5),
        _ => zero,
    };
    let reach = avx._mm256_add_ps(
        avx._mm256_add_ps(avx._mm256_mul_ps(a, abs(simd, recip)), c),
        one,
    );
    let mut fast = avx._mm256_cmp_ps::<LT>(reach, avx._mm256_set1_ps(super::SMALL / 2.0));
    if kind.expr == QuantExpr::Divide {
        fast = avx._mm256_and_ps(fast, avx._mm256_cmp_ps::<NE>(s, zero));
    }
    let fast = avx._mm256_movemask_ps(fast).cast_unsigned() & p.ok;
    let k = Regs {
        code_scale: s,
        recip,
        zero_f,
        zero_half,
        code_offset,
        qmin: avx._mm256_set1_ps(qmin as f32),
        qmax: avx._mm256_set1_ps(qmax as f32),
        scale: p.scale,
        offset,
    };
    Some((k, fast))
}

/// [`blocks`] written into `out`.
#[inline(always)]
pub(super) fn blocks_into(simd: V3, k: &ConstLanes<LANES>, out: &mut [Consts; LANES]) {
    let (cols, qmax, bias) = columns(simd, k);
    for (slot, c) in out.iter_mut().zip(cols) {
        *slot = block(c, qmax, bias);
    }
}

/// One [`Consts`] per block of the eight in `k`'s lanes: the fields transposed in registers.
#[inline(always)]
pub(super) fn blocks(simd: V3, k: &ConstLanes<LANES>) -> [Consts; LANES] {
    let (cols, qmax, bias) = columns(simd, k);
    cols.map(|c| block(c, qmax, bias))
}

/// The eight blocks' first eight fields (one row per block), and the shared `qmax` and
/// `bias`.
#[inline(always)]
fn columns(simd: V3, k: &ConstLanes<LANES>) -> ([[f32; LANES]; LANES], f32, f32) {
    let rows = [
        pulp::cast(k.code_scale),
        pulp::cast(k.recip),
        pulp::cast(k.zero_f),
        pulp::cast(k.zero_half),
        pulp::cast(k.code_offset),
        pulp::cast(k.scale),
        pulp::cast(k.offset),
        simd.avx._mm256_set1_ps(k.qmin),
    ];
    let cols: [[f32; LANES]; LANES] = transpose(simd, rows).map(pulp::cast);
    let (qmax, bias) = (k.qmax, 8_388_608.0 - k.qmin);
    (cols, qmax, bias)
}

/// A block's [`Consts`] from its first eight fields `c`, `qmax` and `bias`.
#[inline(always)]
fn block(c: [f32; LANES], qmax: f32, bias: f32) -> Consts {
    Consts {
        code_scale: c[0],
        recip: c[1],
        zero_f: c[2],
        zero_half: c[3],
        code_offset: c[4],
        scale: c[5],
        offset: c[6],
        qmin: c[7],
        qmax,
        bias,
    }
}
