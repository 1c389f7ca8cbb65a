//! IQ4_NL and IQ4_XS: 4-bit indices into ggml's 16 non-linear levels `kvalues_iq4nl`.
//! IQ4_NL has one f16 scale per 32 values; IQ4_XS a 6-bit scale per 32 values under one f16
//! per 256. Both are ggml's `quantize_row_iq4_nl_impl` (`quantize_iq4_nl` and
//! `quantize_iq4_xs`, `ntry` 7), transcribed operation for operation in f32.
//!
//! Bytes: IQ4_NL `d` (f16), `qs[16]` (byte `j`: index `j` low, `j + 16` high); IQ4_XS `d`,
//! `scales_h` (u16: 2 high bits per sub-block), `scales_l[4]` (4 low bits per sub-block),
//! `qs[128]` (32-value runs as IQ4_NL's).

#![expect(
    clippy::inline_always,
    reason = "the encoders inline into pulp's vector dispatch (`IQuant::encode_row`), which is what vectorises them"
)]

use super::tables::KVALUES_IQ4NL;
use crate::core::format::bits::{f32_to_f16, nearest_int};

/// ggml's `GROUP_MAX_EPS`.
pub(super) const GROUP_MAX_EPS: f32 = 1e-15;

/// ggml's `best_index_int8`: the index of the level nearest `x` (the upper one unless the
/// lower is strictly nearer). The encoders use [`indices32`], tested equal to it.
#[cfg(test)]
fn best_index_int8(val: &[i8; 16], x: f32) -> usize {
    if x <= f32::from(val[0]) {
        return 0;
    }
    if x >= f32::from(val[15]) {
        return 15;
    }
    let (mut ml, mut mu) = (0usize, 15usize);
    while mu - ml > 1 {
        let mav = usize::midpoint(ml, mu);
        if x < f32::from(val[mav]) {
            mu = mav;
        } else {
            ml = mav;
        }
    }
    if x - f32::from(val[mu - 1]) < f32::from(val[mu]) - x {
        mu - 1
    } else {
        mu
    }
}

/// `best_index_int8` of `id * x[j]` for 32 values at once, without branches: the index is
/// the number of gaps `k` (between levels `k` and `k + 1`) for which
/// `(al - v[k]) < (v[k + 1] - al)` is false. Below the gap that holds `al` it is false (the
/// left side is positive, the right not), above it true (the left side negative, the right
/// positive), and in that gap it is ggml's own test, computed the same way; `al` at or past
/// either end counts 0 or 15 gaps, and a NaN 15, as the binary search gives.
#[inline(always)]
#[expect(
    clippy::neg_cmp_op_on_partial_ord,
    reason = "a NaN must count as not less, as ggml's comparison does"
)]
pub(super) fn indices32(id: f32, x: &[f32], out: &mut [u8; 32]) {
    let v: [f32; 16] = KVALUES_IQ4NL.map(f32::from);
    let mut al = [0.0f32; 32];
    for (a, &x) in al.iter_mut().zip(x) {
        *a = id * x;
    }
    *out = [0; 32];
    for k in 0..15 {
        let (lo, hi) = (v[k], v[k + 1]);
        for (o, &a) in out.iter_mut().zip(&al) {
            *o += u8::from(!((a - lo) < (hi - a)));
        }
    }
}

/// Σ w q x and Σ w q² over a 32-value sub-block, `q` the levels of `l`, summed in order.
#[inline(always)]
#[expect(clippy::similar_names, reason = "the reference's names are kept")]
fn sums(l: &[u8; 32], x: &[f32], weight: &[f32; 32]) -> (f32, f32) {
    let (mut qx, mut q2) = ([0.0f32; 32], [0.0f32; 32]);
    for j in 0..32 {
        let q = f32::from(KVALUES_IQ4NL[usize::from(l[j] & 15)]);
        qx[j] = weight[j] * q * x[j];
        q2[j] = weight[j] * q * q;
    }
    let (mut sumqx, mut sumq2) = (0.0f32, 0.0f32);
    for j in 0..32 {
        sumqx += qx[j];
        sumq2 += q2[j];
    }
    (sumqx, sumq2)
}

/// What `quantize_row_iq4_nl_impl` writes for one super-block of `N` values.
struct Iq4Block<const N: usize> {
    d: u16,
    scales_h: u16,
    scales_l: [u8; 4],
    /// One index per value (packed into nibbles by the caller).
    l: [u8; N],
}

/// The scale search of one 32-value sub-block (`ntry` 7): the scale, and the first pass's
/// indices in `l`; `None` when every value is below [`GROUP_MAX_EPS`].
#[expect(
    clippy::similar_names,
    reason = "the reference's names (sumqx, sumq2) are kept"
)]
#[inline(always)]
fn sub_block_scale(xb: &[f32], weight: &[f32; 32], l: &mut [u8]) -> Option<f32> {
    const NTRY: i32 = 7;
    let values = &KVALUES_IQ4NL;
    let (mut amax, mut max) = (0.0f32, 0.0f32);
    for &v in xb {
        let ax = v.abs();
        if ax > amax {
            amax = ax;
            max = v;
        }
    }
    if amax < GROUP_MAX_EPS {
        return None;
    }
    let mut d = -max / f32::from(values[0]);
    let mut idx = [0u8; 32];
    indices32(1.0 / d, xb, &mut idx);
    l.copy_from_slice(&idx);
    let (mut sumqx, mut sumq2) = sums(&idx, xb, weight);
    d = if sumq2 > 0.0 { sumqx / sumq2 } else { 0.0 };
    let mut best = d * sumqx;
    for itry in -NTRY..=NTRY {
        let id = (itry + i32::from(values[0])) as f32 / max;
        indices32(id, xb, &mut idx);
        (sumqx, sumq2) = sums(&idx, xb, weight);
        if sumq2 > 0.0 && sumqx * sumqx > best * sumq2 {
            d = sumqx / sumq2;
            best = d * sumqx;
        }
    }
    Some(d)
}

/// `quantize_row_iq4_nl_impl(N, 32, x, ..., kvalues_iq4nl, quant_weights, 7)`.
#[inline(always)]
fn iq4_block<const N: usize>(x: &[f32; N], qw: Option<&[f32]>) -> Iq4Block<N> {
    let mut out = Iq4Block {
        d: f32_to_f16(0.0),
        scales_h: 0,
        scales_l: [0; 4],
        l: [0; N],
    };
    let mut sigma2 = 0.0f32;
    for &v in x {
        sigma2 += v * v;
    }
    sigma2 *= 2.0 / N as f32;
    let mut scales = [0.0f32; 8];
    let mut weight = [0.0f32; 32];
    let (mut max_scale, mut amax_scale) = (0.0f32, 0.0f32);
    for ib in 0..N / 32 {
        let xb = &x[32 * ib..32 * ib + 32];
        match qw {
            Some(qw) => {
                let qw = &qw[32 * ib..32 * ib + 32];
                for j in 0..32 {
                    weight[j] = qw[j] * (sigma2 + xb[j] * xb[j]).sqrt();
                }
            }
            None => {
                for j in 0..32 {
                    weight[j] = xb[j] * xb[j];
                }
            }
        }
        let Some(d) = sub_block_scale(xb, &weight, &mut out.l[32 * ib..32 * ib + 32]) else {
            scales[ib] = 0.0;
            continue;
        };
        scales[ib] = d;
        let abs_d = d.abs();
        if abs_d > amax_scale {
            amax_scale = abs_d;
            max_scale = d;
        }
    }
    if N / 32 > 1 {
        let d = -max_scale / 32.0;
        out.d = f32_to_f16(d);
        let id = if d == 0.0 { 0.0 } else { 1.0 / d };
        for ib in 0..N / 32 {
            let mut l = nearest_int(id * scales[ib]);
            l = l.clamp(-32, 31);
            let dl = d * l as f32;
            let idl = if dl == 0.0 { 0.0 } else { 1.0 / dl };
            let mut idx = [0u8; 32];
            indices32(idl, &x[32 * ib..32 * ib + 32], &mut idx);
            out.l[32 * ib..32 * ib + 32].copy_from_slice(&idx);
            let l = (l + 32) as u8;
            let (l_l, l_h) = (l & 0xf, l >> 4);
            if ib % 2 == 0 {
                out.scales_l[ib / 2] = l_l;
            } else {
                out.scales_l[ib / 2] |= l_l << 4;
            }
            out.scales_h |= u16::from(l_h) << (2 * (ib % 8));
        }
    } else {
        out.d = f32_to_f16(scales[0]);
        let id = if scales[0] == 0.0 {
            0.0
        } else {
            1.0 / scales[0]
        };
        for (l, x) in out.l.chunks_exact_mut(32).zip(x.chunks_exact(32)) {
            let mut idx = [0u8; 32];
            indices32(id, x, &mut idx);
            l.copy_from_slice(&idx);
        }
    }
    out
}

/// Indices of 32 values into 16 bytes: byte `j` holds `j` (low) and `j + 16` (high).
#[inline(always)]
fn pack_nibbles(l: &[u8], qs: &mut [u8]) {
    for (i, q) in qs.chunks_exact_mut(16).enumerate() {
        for j in 0..16 {
            q[j] = l[32 * i + j] | (l[32 * i + 16 + j] << 4);
        }
    }
}

/// Bytes of an IQ4_NL block.
pub(super) const NL_BYTES: usize = 18;
/// Bytes of an IQ4_XS block.
pub(super) const XS_BYTES: usize = 136;

/// `quantize_iq4_nl` on one row (blocks of 32).
#[inline(always)]
pub(super) fn encode_nl(x: &[f32], qw: Option<&[f32]>, out: &mut [u8]) {
    let (xs, _) = x.as_chunks::<32>();
    for (b, (xb, ob)) in xs.iter().zip(out.chunks_exact_mut(NL_BYTES)).enumerate() {
        let blk = iq4_block::<32>(xb, qw.map(|w| &w[32 * b..32 * b + 32]));
        ob[..2].copy_from_slice(&blk.d.to_le_bytes());
        pack_nibbles(&blk.l, &mut ob[2..]);
    }
}

/// `quantize_iq4_xs` on one row (super-blocks of 256).
#[inline(always)]
pub(super) fn encode_xs(x: &[f32], qw: Option<&[f32]>, out: &mut [u8]) {
    let (xs, _) = x.as_chunks::<256>();
    for (b, (xb, ob)) in xs.iter().zip(out.chunks_exact_mut(XS_BYTES)).enumerate() {
        let blk = iq4_block::<256>(xb, qw.map(|w| &w[256 * b..256 * b + 256]));
        ob[..2].copy_from_slice(&blk.d.to_le_bytes());
        ob[2..4].copy_from_slice(&blk.scales_h.to_le_bytes());
        ob[4..8].copy_from_slice(&blk.scales_l);
        pack_nibbles(&blk.l, &mut ob[8..]);
    }
}

/// The per-value indices of one row of either type (`xs` true for IQ4_XS), from its bytes.
pub(super) fn indices(bytes: &[u8], xs: bool, codes: &mut [u8]) {
    let (bb, off, n) = if xs {
        (XS_BYTES, 8, 256)
    } else {
        (NL_BYTES, 2, 32)
    };
    for (b, cb) in bytes.chunks_exact(bb).zip(codes.chunks_exact_mut(n)) {
        for (q, c) in b[off..].chunks_exact(16).zip(cb.chunks_exact_mut(32)) {
            for j in 0..16 {
                c[j] = q[j] & 15;
                c[j + 16] = q[j] >> 4;
            }
        }
    }
}

/// IQ4_XS sub-block `ib`'s signed scale multiplier `ls - 32` (-32..31) from a block's bytes.
pub(super) fn xs_scale(b: &[u8], ib: usize) -> i32 {
    let scales_h = u16::from_le_bytes([b[2], b[3]]);
    let lo = (b[4 + ib / 2] >> (4 * (ib % 2))) & 15;
    let hi = ((scales_h >> (2 * ib)) & 3) as u8;
    i32::from(lo | (hi << 4)) - 32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_index_takes_the_upper_level_on_a_tie() {
        let v = &KVALUES_IQ4NL;
        assert_eq!(best_index_int8(v, -200.0), 0);
        assert_eq!(best_index_int8(v, 200.0), 15);
        // -10 and 1: the midpoint -4.5 is a tie, which goes up.
        assert_eq!(best_index_int8(v, -4.5), 8);
        assert_eq!(best_index_int8(v, -4.6), 7);
        assert_eq!(best_index_int8(v, 0.0), 8);
    }

    #[test]
    fn the_branchless_indices_are_the_binary_search() {
        let mut x: Vec<f32> = (-300..300).map(|i| i as f32 * 0.5).collect();
        for k in 0..15 {
            let (a, b) = (f32::from(KVALUES_IQ4NL[k]), f32::from(KVALUES_IQ4NL[k + 1]));
            let mid = f32::midpoint(a, b);
            x.extend([
                a,
                b,
                mid,
                mid.next_up(),
                mid.next_down(),
                a.next_up(),
                b.next_down(),
            ]);
        }
        x.extend([
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MAX,
            -f32::MAX,
            0.0,
            -0.0,
        ]);
        x.resize(x.len().next_multiple_of(32), 0.0);
        for id in [1.0f32, 0.37, -2.5] {
            for c in x.chunks_exact(32) {
                let mut got = [0u8; 32];
                indices32(id, c, &mut got);
                for (j, &g) in got.iter().enumerate() {
                    let want = best_index_int8(&KVALUES_IQ4NL, id * c[j]);
                    assert_eq!(usize::from(g), want, "{id} * {}", c[j]);
                }
            }
        }
    }

    #[test]
    fn an_all_zero_super_block_stores_a_negative_zero_scale() {
        let mut out = [0u8; XS_BYTES];
        encode_xs(&[0.0; 256], None, &mut out);
        assert_eq!(u16::from_le_bytes([out[0], out[1]]), 0x8000);
        for ib in 0..8 {
            assert_eq!(xs_scale(&out, ib), 0);
        }
        let mut nl = [0u8; NL_BYTES];
        encode_nl(&[0.0; 32], None, &mut nl);
        assert_eq!(&nl[..2], &[0, 0]);
        // Index 8 is the level 1, the nearest to 0.
        assert!(nl[2..].iter().all(|&b| b == 0x88));
    }
}
