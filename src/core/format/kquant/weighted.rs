//! One super-block through ggml's `quantize_row_q{2,3,4,5,6}_K_impl`: what `llama-quantize
//! --imatrix` runs, with the importance of each of the 256 columns (`quant_weights`).
//!
//! Each value's weight in the sub-block search is its column's importance times
//! `sqrt(sigma2 + x²)` (Q2_K: `sigma2` the super-block's mean of `x²`; Q3_K, Q4_K, Q5_K:
//! twice it); Q6_K weighs by the importance alone. The sub-block scales (and mins) are then
//! quantized by a weighted search of their own (`make_qp_quants`, Q3_K `make_qx_quants`),
//! each sub-block weighted by the sum of its values' weights. Every operation is ggml's, in
//! `f32` and in its order, so the bytes equal libgguf's (ggml built without floating-point
//! contraction) bit for bit.

#![expect(
    clippy::inline_always,
    reason = "the row and block loops inline into pulp's vector dispatch, which is what vectorises them"
)]

use super::encode::{q3_finish, q6_finish, requantize, transpose, untranspose};
use super::fit::{self, qkx3};
use super::qp::qp;
use super::{QK_K, SuperBlock};
use crate::core::format::bits::{f16_to_f32, f32_to_f16};

/// The sum of the super-block's squares, value after value (ggml's loop).
#[inline(always)]
fn sum_squares(x: &[f32; QK_K]) -> f32 {
    let mut s = 0.0f32;
    for &v in x {
        s += v * v;
    }
    s
}

/// Weights `qw * sqrt(sigma2 + x²)`, transposed into `N` sub-blocks of `M`, and each
/// sub-block's sum of them (in value order).
#[inline(always)]
fn weights<const N: usize, const M: usize>(
    x: &[f32; QK_K],
    qw: &[f32; QK_K],
    sigma2: f32,
) -> ([[f32; N]; M], [f32; N]) {
    let mut w = [[0.0f32; N]; M];
    let mut sw = [0.0f32; N];
    for k in 0..N {
        let mut sum = 0.0f32;
        for i in 0..M {
            let v = x[M * k + i];
            let wi = qw[M * k + i] * (sigma2 + v * v).sqrt();
            w[i][k] = wi;
            sum += wi;
        }
        sw[k] = sum;
    }
    (w, sw)
}

/// `quantize_row_q2_K_impl` on one super-block.
#[inline(always)]
pub(super) fn q2_k(x: &[f32; QK_K], qw: &[f32; QK_K], codes: &mut [u8; QK_K]) -> SuperBlock {
    let sigma2 = sum_squares(x) / QK_K as f32;
    let t = transpose::<16, 16>(x);
    let (w, sw) = weights::<16, 16>(x, qw, sigma2);
    let (mut l, mut scales, mut mins) = ([[0u8; 16]; 16], [0.0f32; 16], [0.0f32; 16]);
    fit::qkx2(&qkx3(3), &t, &w, &mut l, &mut scales, &mut mins);
    untranspose(&l, codes);
    let (mut ls, mut lm) = ([0u8; 16], [0u8; 16]);
    let dm = qp(15, &scales, &mut ls, &sw);
    let mm = qp(15, &mins, &mut lm, &sw);
    let mut sb = SuperBlock {
        d: f32_to_f16(dm),
        dmin: f32_to_f16(mm),
        ..SuperBlock::default()
    };
    let (dm, mm) = (f16_to_f32(sb.d), f16_to_f32(sb.dmin));
    for j in 0..16 {
        // `Ls[j] | (Lm[j] << 4)` stored in a byte.
        let b = ls[j] | (lm[j] << 4);
        sb.scales[j] = (b & 0xF) as i8;
        sb.mins[j] = b >> 4;
        let r = 16 * j..16 * j + 16;
        let (d, m) = (dm * f32::from(b & 0xF), mm * f32::from(b >> 4));
        requantize(&x[r.clone()], &mut codes[r], d, m, 0, 3, 0);
    }
    sb
}

/// `quantize_row_q3_K_impl` (with `quant_weights`) on one super-block.
#[inline(always)]
pub(super) fn q3_k(x: &[f32; QK_K], qw: &[f32; QK_K], codes: &mut [u8; QK_K]) -> SuperBlock {
    let sigma2 = 2.0 * sum_squares(x) / QK_K as f32;
    let t = transpose::<16, 16>(x);
    let (w, sw) = weights::<16, 16>(x, qw, sigma2);
    let (mut l, mut scales) = ([[0u8; 16]; 16], [0.0f32; 16]);
    fit::qx_rmse1(4, &t, &w, &mut l, &mut scales);
    // The scales' own search: one lane of 16.
    let st: [[f32; 1]; 16] = scales.map(|s| [s]);
    let swt: [[f32; 1]; 16] = sw.map(|s| [s]);
    let (mut ls, mut d_block) = ([[0u8; 1]; 16], [0.0f32; 1]);
    fit::qx_rmse1(32, &st, &swt, &mut ls, &mut d_block);
    let mut sb = SuperBlock {
        d: f32_to_f16(d_block[0]),
        ..SuperBlock::default()
    };
    let d = f16_to_f32(sb.d);
    let mut dl = [0.0f32; 16];
    for j in 0..16 {
        // Six bits of `Ls[j]`, packed and read back: `Ls[j] - 32`.
        let sc = i32::from(ls[j][0] & 63) - 32;
        sb.scales[j] = sc as i8;
        dl[j] = d * sc as f32;
    }
    q3_finish(&t, &dl, &mut l, codes);
    sb
}

/// `quantize_row_q4_K_impl` (`five` false) and `quantize_row_q5_K_impl` (with
/// `quant_weights`) on one super-block.
#[inline(always)]
pub(super) fn q4_q5_k(
    x: &[f32; QK_K],
    qw: &[f32; QK_K],
    codes: &mut [u8; QK_K],
    five: bool,
) -> SuperBlock {
    let sigma2 = 2.0 * sum_squares(x) / QK_K as f32;
    let t = transpose::<8, 32>(x);
    let (w, sw) = weights::<8, 32>(x, qw, sigma2);
    let nmax = if five { 31 } else { 15 };
    let (mut l, mut scales, mut mins) = ([[0u8; 8]; 32], [0.0f32; 8], [0.0f32; 8]);
    fit::qkx2(&qkx3(nmax), &t, &w, &mut l, &mut scales, &mut mins);
    untranspose(&l, codes);
    let (mut ls, mut lm) = ([0u8; 8], [0u8; 8]);
    let d_block = qp(63, &scales, &mut ls, &sw);
    let m_block = qp(63, &mins, &mut lm, &sw);
    if five {
        ls = ls.map(|v| v.min(63));
        lm = lm.map(|v| v.min(63));
    }
    // ggml's 12 bytes of six-bit scales and mins, written as it writes them (a code above
    // 63 spills into its neighbours' bits there too), then read back.
    let mut bytes = [0u8; 12];
    for j in 0..8 {
        if j < 4 {
            bytes[j] = ls[j];
            bytes[j + 4] = lm[j];
        } else {
            bytes[j + 4] = (ls[j] & 0xF) | ((lm[j] & 0xF) << 4);
            bytes[j - 4] |= ((u32::from(ls[j]) >> 4) << 6) as u8;
            bytes[j] |= ((u32::from(lm[j]) >> 4) << 6) as u8;
        }
    }
    let mut sb = SuperBlock {
        d: f32_to_f16(d_block),
        dmin: f32_to_f16(m_block),
        ..SuperBlock::default()
    };
    let (d, dmin) = (f16_to_f32(sb.d), f16_to_f32(sb.dmin));
    for j in 0..8 {
        let (sc, m) = scale_min_k4(j, &bytes);
        sb.scales[j] = sc as i8;
        sb.mins[j] = m;
        let r = 32 * j..32 * j + 32;
        let (dl, ml) = (d * f32::from(sc), dmin * f32::from(m));
        requantize(&x[r.clone()], &mut codes[r], dl, ml, 0, nmax, 0);
    }
    sb
}

/// ggml's `get_scale_min_k4`: sub-block `j`'s six-bit scale and min from the 12 bytes.
#[inline(always)]
fn scale_min_k4(j: usize, q: &[u8; 12]) -> (u8, u8) {
    if j < 4 {
        (q[j] & 63, q[j + 4] & 63)
    } else {
        (
            (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4),
            (q[j + 4] >> 4) | ((q[j] >> 6) << 4),
        )
    }
}

/// `quantize_row_q6_K_impl` (with `quant_weights`) on one super-block: the sub-block search
/// weighted by the importance alone.
#[inline(always)]
pub(super) fn q6_k(x: &[f32; QK_K], qw: &[f32; QK_K], codes: &mut [u8; QK_K]) -> SuperBlock {
    let t = transpose::<16, 16>(x);
    let w = transpose::<16, 16>(qw);
    let (mut l, mut scales) = ([[0u8; 16]; 16], [0.0f32; 16]);
    fit::qx_rmse1(32, &t, &w, &mut l, &mut scales);
    q6_finish(x, &l, &scales, codes)
}

/// `sigma2` of the weighted search: the super-block's mean of `x²` (Q2_K), twice it (Q3_K,
/// Q4_K, Q5_K), or none (Q6_K weighs by the importance alone).
pub(super) fn sigma2(k: super::KQuant, x: &[f32; QK_K]) -> Option<f32> {
    use super::KQuant;
    match k {
        KQuant::Q2K => Some(sum_squares(x) / QK_K as f32),
        KQuant::Q3K | KQuant::Q4K | KQuant::Q5K => Some(2.0 * sum_squares(x) / QK_K as f32),
        KQuant::Q6K => None,
    }
}

/// The weight of each value in the sub-block search, in value order: `qw * sqrt(sigma2 +
/// x²)` with [`sigma2`], or `qw` for Q6_K (what the encoders above compute).
pub(super) fn value_weights(k: super::KQuant, x: &[f32; QK_K], qw: &[f32; QK_K]) -> [f32; QK_K] {
    match sigma2(k, x) {
        Some(s2) => std::array::from_fn(|i| qw[i] * (s2 + x[i] * x[i]).sqrt()),
        None => *qw,
    }
}
