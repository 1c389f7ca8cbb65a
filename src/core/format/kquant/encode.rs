//! One super-block of 256 values through ggml's `quantize_row_q{2,3,4,5,6}_K_ref`: the
//! sub-block search (`fit`), the quantization of the sub-block scales and mins under the
//! f16 super-block scales, and the final codes from the stored (quantized) scales.

#![expect(
    clippy::inline_always,
    reason = "the row and block loops inline into pulp's vector dispatch, which is what vectorises them"
)]

use super::fit::{self, GROUP_MAX_EPS, Qkx2};
use super::{QK_K, SuperBlock};
use crate::core::format::bits::{f16_to_f32, f32_to_f16, nearest_int};

/// Values of a super-block transposed into `N` sub-blocks of `M`: `t[i][k] = x[M * k + i]`.
#[inline(always)]
pub(super) fn transpose<const N: usize, const M: usize>(x: &[f32; QK_K]) -> [[f32; N]; M] {
    let mut t = [[0.0f32; N]; M];
    for (k, sub) in x.chunks_exact(M).enumerate() {
        for (i, &v) in sub.iter().enumerate() {
            t[i][k] = v;
        }
    }
    t
}

/// Codes `l[i][k]` back in value order.
#[inline(always)]
pub(super) fn untranspose<const N: usize, const M: usize>(
    l: &[[u8; N]; M],
    codes: &mut [u8; QK_K],
) {
    for (k, sub) in codes.chunks_exact_mut(M).enumerate() {
        for (i, c) in sub.iter_mut().enumerate() {
            *c = l[i][k];
        }
    }
}

/// Largest positive entry (0 if none), as ggml's `if (scale > max_scale)` loops find it.
#[inline(always)]
fn positive_max(v: &[f32]) -> f32 {
    v.iter().fold(0.0f32, |m, &s| if s > m { s } else { m })
}

/// The entry of largest magnitude (the first on ties), as ggml's `fabsf(scale) > amax` loops.
#[inline(always)]
fn signed_max(v: &[f32]) -> f32 {
    let (mut amax, mut max) = (0.0f32, 0.0f32);
    for &s in v {
        if s.abs() > amax {
            amax = s.abs();
            max = s;
        }
    }
    max
}

/// Final codes of sub-block `x` from its stored scale `d` and min `dm`: `(x + dm) / d`,
/// rounded and clamped to `[lo, hi]`, plus `offset`. Skipped (search codes kept) when `d` is 0.
#[inline(always)]
pub(super) fn requantize(
    x: &[f32],
    codes: &mut [u8],
    d: f32,
    dm: f32,
    lo: i32,
    hi: i32,
    offset: i32,
) {
    if d == 0.0 {
        return;
    }
    for (c, &v) in codes.iter_mut().zip(x) {
        *c = (nearest_int((v + dm) / d).clamp(lo, hi) + offset) as u8;
    }
}

/// `quantize_row_q2_K_ref` on one super-block.
#[inline(always)]
pub(super) fn q2_k(x: &[f32; QK_K], codes: &mut [u8; QK_K]) -> SuperBlock {
    let t = transpose::<16, 16>(x);
    let mut w = [[0.0f32; 16]; 16];
    for (wr, xr) in w.iter_mut().zip(&t) {
        for (a, b) in wr.iter_mut().zip(xr) {
            *a = b.abs();
        }
    }
    let (mut l, mut scales, mut mins) = ([[0u8; 16]; 16], [0.0f32; 16], [0.0f32; 16]);
    let p = Qkx2 {
        nmax: 3,
        rmin: -0.5,
        rdelta: 0.1,
        nstep: 15,
        use_mad: true,
    };
    fit::qkx2(&p, &t, &w, &mut l, &mut scales, &mut mins);
    untranspose(&l, codes);
    let (max_scale, max_min) = (positive_max(&scales), positive_max(&mins));
    let mut bytes = [0u8; 16];
    let mut sb = SuperBlock::default();
    if max_scale > 0.0 {
        let iscale = 15.0 / max_scale;
        for (b, &s) in bytes.iter_mut().zip(&scales) {
            *b = nearest_int(iscale * s) as u8;
        }
        sb.d = f32_to_f16(max_scale / 15.0);
    } else {
        sb.d = f32_to_f16(0.0);
    }
    if max_min > 0.0 {
        let iscale = 15.0 / max_min;
        for (b, &m) in bytes.iter_mut().zip(&mins) {
            *b |= (nearest_int(iscale * m) << 4) as u8;
        }
        sb.dmin = f32_to_f16(max_min / 15.0);
    } else {
        sb.dmin = f32_to_f16(0.0);
    }
    let (d, dmin) = (f16_to_f32(sb.d), f16_to_f32(sb.dmin));
    for (j, &b) in bytes.iter().enumerate() {
        sb.scales[j] = (b & 0xF) as i8;
        sb.mins[j] = b >> 4;
        let r = 16 * j..16 * j + 16;
        let (dl, ml) = (d * f32::from(b & 0xF), dmin * f32::from(b >> 4));
        requantize(&x[r.clone()], &mut codes[r], dl, ml, 0, 3, 0);
    }
    sb
}

/// `quantize_row_q3_K_ref` on one super-block.
#[inline(always)]
pub(super) fn q3_k(x: &[f32; QK_K], codes: &mut [u8; QK_K]) -> SuperBlock {
    let t = transpose::<16, 16>(x);
    let (mut l, mut scales) = ([[0u8; 16]; 16], [0.0f32; 16]);
    q3_search(&t, &mut l, &mut scales);
    let max_scale = signed_max(&scales);
    let mut sb = SuperBlock::default();
    let mut six = [0u8; 16];
    if max_scale == 0.0 {
        sb.d = f32_to_f16(0.0);
    } else {
        let iscale = -32.0 / max_scale;
        for (b, &s) in six.iter_mut().zip(&scales) {
            let q = i32::from(nearest_int(iscale * s) as i8);
            *b = (q.clamp(-32, 31) + 32) as u8;
        }
        sb.d = f32_to_f16(1.0 / iscale);
    }
    let d = f16_to_f32(sb.d);
    let mut dl = [0.0f32; 16];
    for ((s, dl), &b) in sb.scales.iter_mut().zip(&mut dl).zip(&six) {
        let sc = i32::from(b) - 32;
        *s = sc as i8;
        *dl = d * sc as f32;
    }
    q3_finish(&t, &dl, &mut l, codes);
    sb
}

/// Q3_K's last step, with and without importance: each value's 3-bit code under its
/// sub-block's scale `dl[k]` (kept from the search where that scale is 0), computed on the
/// transposed values `t` for all sub-blocks at once (so that it is vectorised), into `codes`
/// in value order.
#[inline(always)]
pub(super) fn q3_finish(
    t: &[[f32; 16]; 16],
    dl: &[f32; 16],
    l: &mut [[u8; 16]; 16],
    codes: &mut [u8; QK_K],
) {
    for (lr, tr) in l.iter_mut().zip(t) {
        for k in 0..16 {
            let q = (nearest_int(tr[k] / dl[k]).clamp(-4, 3) + 4) as u8;
            lr[k] = if dl[k] == 0.0 { lr[k] } else { q };
        }
    }
    untranspose(l, codes);
}

/// Q3_K's sub-block search: on AVX2 by speculation (`q3_speculative`), else the portable lanes.
#[inline(always)]
fn q3_search(t: &[[f32; 16]; 16], l: &mut [[u8; 16]; 16], scales: &mut [f32; 16]) {
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V3::try_new() {
        simd.vectorize(
            #[inline(always)]
            || super::q3_speculative::q3_rmse(simd, 4, t, l, scales),
        );
        return;
    }
    fit::q3_rmse(4, t, l, scales);
}

/// `quantize_row_q4_K_ref` (`nmax` 15) and `quantize_row_q5_K_ref` (`nmax` 31) on one
/// super-block: their only differences are the code range and the search's steps.
#[inline(always)]
pub(super) fn q4_q5_k(x: &[f32; QK_K], codes: &mut [u8; QK_K], five: bool) -> SuperBlock {
    let t = transpose::<8, 32>(x);
    let mut w = [[0.0f32; 8]; 32];
    for (k, sub) in x.chunks_exact(32).enumerate() {
        let mut sum_x2 = 0.0f32;
        for &v in sub {
            sum_x2 += v * v;
        }
        let av_x = (sum_x2 / 32.0).sqrt();
        for (i, &v) in sub.iter().enumerate() {
            w[i][k] = av_x + v.abs();
        }
    }
    let p = if five {
        Qkx2 {
            nmax: 31,
            rmin: -0.5,
            rdelta: 0.1,
            nstep: 15,
            use_mad: false,
        }
    } else {
        Qkx2 {
            nmax: 15,
            rmin: -1.0,
            rdelta: 0.1,
            nstep: 20,
            use_mad: false,
        }
    };
    let (mut l, mut scales, mut mins) = ([[0u8; 8]; 32], [0.0f32; 8], [0.0f32; 8]);
    fit::qkx2(&p, &t, &w, &mut l, &mut scales, &mut mins);
    untranspose(&l, codes);
    let (max_scale, max_min) = (positive_max(&scales), positive_max(&mins));
    let inv_scale = if max_scale > 0.0 {
        63.0 / max_scale
    } else {
        0.0
    };
    let inv_min = if max_min > 0.0 { 63.0 / max_min } else { 0.0 };
    let mut sb = SuperBlock {
        d: f32_to_f16(max_scale / 63.0),
        dmin: f32_to_f16(max_min / 63.0),
        ..SuperBlock::default()
    };
    let (d, dmin) = (f16_to_f32(sb.d), f16_to_f32(sb.dmin));
    for j in 0..8 {
        let ls = (nearest_int(inv_scale * scales[j]) as u8).min(63);
        let lm = (nearest_int(inv_min * mins[j]) as u8).min(63);
        sb.scales[j] = ls as i8;
        sb.mins[j] = lm;
        let r = 32 * j..32 * j + 32;
        let (dl, ml) = (d * f32::from(ls), dmin * f32::from(lm));
        requantize(&x[r.clone()], &mut codes[r], dl, ml, 0, p.nmax, 0);
    }
    sb
}

/// `quantize_row_q6_K_ref` on one super-block.
#[inline(always)]
pub(super) fn q6_k(x: &[f32; QK_K], codes: &mut [u8; QK_K]) -> SuperBlock {
    let t = transpose::<16, 16>(x);
    let (mut l, mut scales) = ([[0u8; 16]; 16], [0.0f32; 16]);
    fit::qx_rmse1(32, &t, &fit::Squares, &mut l, &mut scales);
    q6_finish(x, &l, &scales, codes)
}

/// The end of `quantize_row_q6_K_ref` and `quantize_row_q6_K_impl` after the sub-block
/// search (codes `l`, transposed, and `scales`): the int8 sub-scales under an f16 `d`, and
/// the codes again from the stored scales.
#[inline(always)]
pub(super) fn q6_finish(
    x: &[f32; QK_K],
    l: &[[u8; 16]; 16],
    scales: &[f32; 16],
    codes: &mut [u8; QK_K],
) -> SuperBlock {
    let max_scale = signed_max(scales);
    let mut sb = SuperBlock::default();
    if max_scale.abs() < GROUP_MAX_EPS {
        codes.fill(0);
        return sb;
    }
    untranspose(l, codes);
    let iscale = -128.0 / max_scale;
    sb.d = f32_to_f16(1.0 / iscale);
    let d = f16_to_f32(sb.d);
    for (j, &s) in scales.iter().enumerate() {
        let sc = nearest_int(iscale * s).min(127) as i8;
        sb.scales[j] = sc;
        let r = 16 * j..16 * j + 16;
        requantize(
            &x[r.clone()],
            &mut codes[r],
            d * f32::from(sc),
            0.0,
            -32,
            31,
            32,
        );
    }
    sb
}
