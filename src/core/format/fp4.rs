//! 4-bit floats (E2M1) under shared scales, in ggml's layouts: MXFP4 (OCP microscaling, 32
//! values under one E8M0 power of two) and NVFP4 (16 values under one UE4M3 scale, four such
//! sub-blocks per 64-value ggml block).
//!
//! Encoding is ggml's `quantize_row_mxfp4_ref` / `quantize_row_nvfp4_ref` (gguf-py's
//! `MXFP4.quantize_blocks` gives the same bytes); decoding is `dequantize_row_mxfp4` /
//! `dequantize_row_nvfp4`. ggml stores the E2M1 values doubled ([`E2M1_DOUBLED`], integers
//! 0..12) and halves the scale to match, so a value is `E2M1_DOUBLED[code] * d`.
//!
//! ggml picks each code by a linear search for the smallest `|E2M1_DOUBLED[i] * d - x|`, the
//! first index winning ties. Here the code comes from comparing `|x|` with the midpoints
//! between neighbouring grid values, which gives the same code whenever the block's values
//! lie within `16 d` and every grid value times `d` is finite: the grid values and midpoints
//! times `d` are exact in `f32` (a power of two for MXFP4, four significant bits for UE4M3),
//! the two candidate errors around `x` are exact differences (neighbours, and `12 d` and
//! `8 d` for `x` up to `16 d`, are within a factor of two of `x`), so the search's winner is
//! the exact nearest value, and on an exact tie the smaller magnitude, which has the smaller
//! index. Two kinds of block fall outside, and take ggml's search itself
//! ([`best_index_reference`]):
//! - MXFP4's exponent 253, for a block whose largest magnitude's `log2f` rounds to 128 (from
//!   about 3.4e38): `d = 2^125`, so `8 d` and `12 d` overflow to infinity; their errors are
//!   infinite and never win, and the f32 maximum takes code 5 (`6 d = 2.5521178e38`).
//! - an NVFP4 sub-block past the largest scale (values beyond `16 d = 16 x 224`): far from
//!   every grid value the search's rounded errors tie and the first index, 0, wins (at
//!   3.4e38 every error is 3.4e38, so the value becomes 0), while nearer they fall with the
//!   grid value and the largest, 12 d = 2688, wins.

#![expect(
    clippy::inline_always,
    reason = "the row and block loops inline into pulp's vector dispatch, which is what vectorises them"
)]

use crate::core::format::bits::{E2M1_DOUBLED, e8m0_half, f32_to_ue4m3, ue4m3_half};

pub use crate::core::format::bits::E2M1_DOUBLED as GRID_DOUBLED;

/// Values per MXFP4 block.
pub const MXFP4_BLOCK: usize = 32;
/// Bytes per MXFP4 block: the E8M0 exponent, then 16 bytes of codes.
pub const MXFP4_BYTES: usize = 17;
/// Values per NVFP4 block (ggml's `QK_NVFP4`).
pub const NVFP4_BLOCK: usize = 64;
/// Values per NVFP4 scale (ggml's `QK_NVFP4_SUB`).
pub const NVFP4_SUB: usize = 16;
/// Bytes per NVFP4 block: four UE4M3 scales, then 32 bytes of codes.
pub const NVFP4_BYTES: usize = 36;

/// Midpoints between the doubled E2M1 magnitudes 0, 1, 2, 3, 4, 6, 8, 12.
const MIDPOINTS: [f32; 7] = [0.5, 1.5, 2.5, 3.5, 5.0, 7.0, 10.0];

/// The largest magnitude, as ggml's `if (amax < fabsf(v)) amax = fabsf(v)` finds it (NaN is
/// skipped).
#[inline(always)]
fn amax(x: &[f32]) -> f32 {
    x.iter()
        .fold(0.0f32, |m, &v| if m < v.abs() { v.abs() } else { m })
}

/// Codes of `x`, whose largest magnitude is `amax`, under scale `d` (ggml's
/// `best_index_mxfp4` for every value; see the module documentation for when the midpoints
/// give its answer).
#[inline(always)]
fn codes_under(x: &[f32], amax: f32, d: f32, codes: &mut [u8]) {
    if d == 0.0 {
        codes.fill(0);
        return;
    }
    if !(12.0 * d).is_finite() || amax > 16.0 * d {
        for (c, &v) in codes.iter_mut().zip(x) {
            *c = best_index_reference(v, d);
        }
        return;
    }
    let t = MIDPOINTS.map(|m| m * d);
    for (c, &v) in codes.iter_mut().zip(x) {
        let a = v.abs();
        let mut m = 0u8;
        for &b in &t {
            m += u8::from(a > b);
        }
        *c = if v < 0.0 && m != 0 { m + 8 } else { m };
    }
}

/// ggml's `best_index_mxfp4`, the linear search itself (kept for tests).
#[must_use]
pub fn best_index_reference(x: f32, d: f32) -> u8 {
    let mut best = 0u8;
    let mut best_err = (f32::from(E2M1_DOUBLED[0]) * d - x).abs();
    for (i, &k) in E2M1_DOUBLED.iter().enumerate().skip(1) {
        let err = (f32::from(k) * d - x).abs();
        if err < best_err {
            best = i as u8;
            best_err = err;
        }
    }
    best
}

/// MXFP4's shared exponent for a block whose largest magnitude is `amax`:
/// `floor(log2(amax)) - 2 + 127`, converted to a byte as x86-64 converts (through a 32-bit
/// integer, so an exponent below 0 wraps), and 0 for an all-zero block. `log2` is the
/// platform's `log2f`, which ggml also calls.
#[must_use]
pub fn mxfp4_exponent(amax: f32) -> u8 {
    if amax > 0.0 {
        (amax.log2().floor() - 2.0 + 127.0) as i32 as u8
    } else {
        0
    }
}

/// Quantizes one MXFP4 block of 32 values: the E8M0 exponent, codes into `codes`.
#[must_use]
#[inline(always)]
pub fn mxfp4_encode(x: &[f32; MXFP4_BLOCK], codes: &mut [u8; MXFP4_BLOCK]) -> u8 {
    let a = amax(x);
    let e = mxfp4_exponent(a);
    codes_under(x, a, e8m0_half(e), codes);
    e
}

/// Reconstructs one MXFP4 block.
#[inline(always)]
pub fn mxfp4_decode(e: u8, codes: &[u8; MXFP4_BLOCK], out: &mut [f32; MXFP4_BLOCK]) {
    let d = e8m0_half(e);
    for (o, &c) in out.iter_mut().zip(codes) {
        *o = f32::from(E2M1_DOUBLED[usize::from(c & 15)]) * d;
    }
}

/// NVFP4's UE4M3 scale byte for a sub-block whose largest magnitude is `amax`
/// (`ggml_fp32_to_ue4m3(amax / 6)`).
#[must_use]
pub fn nvfp4_scale(amax: f32) -> u8 {
    f32_to_ue4m3(amax / 6.0)
}

/// Quantizes one NVFP4 block of 64 values: four UE4M3 scales, codes into `codes`.
#[must_use]
#[inline(always)]
pub fn nvfp4_encode(x: &[f32; NVFP4_BLOCK], codes: &mut [u8; NVFP4_BLOCK]) -> [u8; 4] {
    let mut scales = [0u8; 4];
    for ((s, xs), cs) in scales
        .iter_mut()
        .zip(x.chunks_exact(NVFP4_SUB))
        .zip(codes.chunks_exact_mut(NVFP4_SUB))
    {
        let a = amax(xs);
        *s = nvfp4_scale(a);
        codes_under(xs, a, ue4m3_half(*s), cs);
    }
    scales
}

/// Reconstructs one NVFP4 block.
#[inline(always)]
pub fn nvfp4_decode(scales: [u8; 4], codes: &[u8; NVFP4_BLOCK], out: &mut [f32; NVFP4_BLOCK]) {
    for ((&s, cs), os) in scales
        .iter()
        .zip(codes.chunks_exact(NVFP4_SUB))
        .zip(out.chunks_exact_mut(NVFP4_SUB))
    {
        let d = ue4m3_half(s);
        for (o, &c) in os.iter_mut().zip(cs) {
            *o = f32::from(E2M1_DOUBLED[usize::from(c & 15)]) * d;
        }
    }
}

/// Writes an MXFP4 block in ggml's layout (`block_mxfp4`: `e`, then byte `j` holding codes
/// `j` and `j + 16`).
pub fn mxfp4_pack(e: u8, codes: &[u8; MXFP4_BLOCK], out: &mut [u8; MXFP4_BYTES]) {
    out[0] = e;
    for j in 0..16 {
        out[1 + j] = (codes[j] & 15) | ((codes[j + 16] & 15) << 4);
    }
}

/// Reads an MXFP4 block from ggml's layout.
#[must_use]
pub fn mxfp4_unpack(bytes: &[u8; MXFP4_BYTES], codes: &mut [u8; MXFP4_BLOCK]) -> u8 {
    for j in 0..16 {
        codes[j] = bytes[1 + j] & 15;
        codes[j + 16] = bytes[1 + j] >> 4;
    }
    bytes[0]
}

/// Writes an NVFP4 block in ggml's layout (`block_nvfp4`: four scales, then per sub-block
/// eight bytes, byte `j` holding codes `j` and `j + 8`).
pub fn nvfp4_pack(scales: [u8; 4], codes: &[u8; NVFP4_BLOCK], out: &mut [u8; NVFP4_BYTES]) {
    out[..4].copy_from_slice(&scales);
    for s in 0..4 {
        for j in 0..8 {
            let c = &codes[16 * s..];
            out[4 + 8 * s + j] = (c[j] & 15) | ((c[j + 8] & 15) << 4);
        }
    }
}

/// Reads an NVFP4 block from ggml's layout.
#[must_use]
pub fn nvfp4_unpack(bytes: &[u8; NVFP4_BYTES], codes: &mut [u8; NVFP4_BLOCK]) -> [u8; 4] {
    for s in 0..4 {
        for j in 0..8 {
            let b = bytes[4 + 8 * s + j];
            codes[16 * s + j] = b & 15;
            codes[16 * s + j + 8] = b >> 4;
        }
    }
    [bytes[0], bytes[1], bytes[2], bytes[3]]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The midpoint rule agrees with ggml's linear search on ties, near-ties, signed zeros,
    /// saturation and subnormal scales.
    #[test]
    fn midpoints_agree_with_the_linear_search() {
        // ggml's exponent is at most 253 (d = 2^125) for any finite block.
        let mut scales: Vec<f32> = (0u8..=253).map(e8m0_half).collect();
        scales.extend((1u8..0x7F).map(ue4m3_half));
        for &d in &scales {
            let mut xs = vec![0.0f32, -0.0, f32::NAN];
            for &k in &E2M1_DOUBLED {
                for m in [0.5f32, 1.5, 2.5, 3.5, 5.0, 7.0, 10.0, 13.0, 20.0] {
                    let v = m * d;
                    for x in [
                        v,
                        f32::from_bits(v.to_bits() + 1),
                        f32::from_bits(v.to_bits().saturating_sub(1)),
                    ] {
                        xs.push(x);
                        xs.push(-x);
                    }
                }
                xs.push(f32::from(k) * d);
            }
            for &x in &xs {
                if !x.is_finite() && !x.is_nan() {
                    continue;
                }
                let mut c = [0u8];
                codes_under(&[x], x.abs(), d, &mut c);
                assert_eq!(c[0], best_index_reference(x, d), "x = {x:e}, d = {d:e}");
            }
        }
    }

    /// Past the midpoints' reach: MXFP4's exponent 253 and NVFP4's saturated scale, as ggml
    /// picks (libgguf 0.2.2): never an infinite value, and 0 where every error ties.
    #[test]
    fn blocks_past_the_scales_reach_take_the_search() {
        let mut x = [0.0f32; MXFP4_BLOCK];
        x[0] = f32::MAX;
        x[1] = 1.0;
        let mut codes = [0u8; MXFP4_BLOCK];
        let e = mxfp4_encode(&x, &mut codes);
        let mut out = [0.0f32; MXFP4_BLOCK];
        mxfp4_decode(e, &codes, &mut out);
        assert_eq!((e, codes[0], codes[1]), (253, 5, 0));
        assert_eq!(out[0], 2.552_117_8e38);
        let mut y = [0.0f32; NVFP4_BLOCK];
        y[..4].copy_from_slice(&[f32::MAX, 1.0, 7168.0, -7200.0]);
        y[16..18].copy_from_slice(&[-1e30, 3000.0]);
        let mut codes = [0u8; NVFP4_BLOCK];
        let scales = nvfp4_encode(&y, &mut codes);
        assert_eq!(scales[..2], [0x7E, 0x7E]);
        // At 3.4e38 and 1e30 every error rounds to the value itself: code 0 wins. At
        // 7168 = 32 x 224 the errors still fall with the grid value: 12 d wins.
        assert_eq!(codes[..4], [0, 0, 7, 15]);
        assert_eq!(codes[16..18], [0, 7]);
        // Every value agrees with the search itself.
        for (i, &v) in y.iter().enumerate() {
            let d = ue4m3_half(scales[i / NVFP4_SUB]);
            assert_eq!(codes[i], best_index_reference(v, d), "value {i}");
        }
    }
}
