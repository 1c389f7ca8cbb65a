//! The loop's steps written with AVX2 operations, eight lanes of `f32` to a register, where
//! plain loops vectorise badly. Each gives what the portable loop gives, bit for bit: the
//! same operations in the same order and precision (no fused multiply-add).
//!
//! Here: one value's arithmetic for eight lanes in registers ([`Regs`]), the clamp tests of
//! eight blocks ([`within_bits`], [`regs_within`]), and eight blocks' loop constants
//! ([`consts8_lanes`], [`blocks`]), formed in eight-lane registers and transposed to one
//! [`Consts`] per block, where plain loops build them lane by lane. `errors` holds the
//! loop's errors, `sums` the MSE search's sums of squared errors.

#![expect(
    clippy::inline_always,
    reason = "inlined into pulp's AVX2 context, or every intrinsic would be a call"
)]

mod errors;
mod sums;

pub(super) use errors::{
    Quotient, Top, chunk_magnitudes, pack_offsets, pass_errors, pass_errors_wide, pass_magnitudes,
};
pub(crate) use sums::{approx_squares, block_sums, block_sums_exact, candidate_sums};

use std::arch::x86_64::{__m256, __m256d, __m256i};

use pulp::x86::V3;

use super::constants::{NEAR, near_codes};
use super::kind::{ADD, DIV};
use super::{ConstLanes, Consts, Kind, LANES};
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
/// `ConstLanes::x_hat` (`portable`'s `unclamped`, `clamp` and `dequantize`).
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
/// `ConstLanes::unclamped` (`portable`'s `unclamped`).
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

/// `portable`'s `lanes_within` as a mask: bit `j` set where lane `j`'s block, with its
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

/// [`near`](crate::core::kernel::segment::constants::near) for eight zero points in one register.
#[inline(always)]
pub(super) fn near8(simd: V3, zero_points: __m256i, qmin: i32, qmax: i32) -> bool {
    let (avx, avx2) = (simd.avx, simd.avx2);
    let magnitude = avx2._mm256_abs_epi32(zero_points);
    // `|i32::MIN|` is 2^31 read unsigned, as `unsigned_abs` gives it.
    let limit = avx._mm256_set1_epi32(NEAR.cast_signed());
    let within = avx2._mm256_cmpeq_epi32(avx2._mm256_max_epu32(magnitude, limit), limit);
    avx2._mm256_movemask_epi8(within) == -1 && near_codes(qmin, qmax)
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

/// The sums as two registers.
#[inline(always)]
pub(super) fn load(sums: &[f64; LANES]) -> (__m256d, __m256d) {
    let (halves, _) = sums.as_chunks::<4>();
    (pulp::cast(halves[0]), pulp::cast(halves[1]))
}

/// The two registers back into `sums`.
#[inline(always)]
pub(super) fn store(sums: &mut [f64; LANES], lo: __m256d, hi: __m256d) {
    let lo: [f64; 4] = pulp::cast(lo);
    let hi: [f64; 4] = pulp::cast(hi);
    sums[..4].copy_from_slice(&lo);
    sums[4..].copy_from_slice(&hi);
}
