//! llama.cpp's ternary types TQ1_0 and TQ2_0: every value of a 256-value block is -1, 0 or 1
//! times the block's f16 absmax `d`. Encoding is ggml's `quantize_row_tq1_0_ref` /
//! `quantize_row_tq2_0_ref` (`lroundf(x / d)` as `x * (1 / d)`, half away from zero; no
//! importance matrix), decoding `dequantize_row_tq*_0` (and gguf-py's `dequantize`).
//!
//! | type | bytes | layout |
//! |---|---|---|
//! | TQ1_0 | 54 | `qs[48]`: 5 trits a byte (values `m + 32 n`, `n` = 0..4, in the first 32 bytes; then `m + 16 n` over 16 bytes), `qh[4]`: 4 trits a byte, then `d` |
//! | TQ2_0 | 66 | `qs[64]`: 2 bits a value (value `m + 32 n` of each 128 at bits `2n` of byte `m`), then `d` |
//!
//! TQ1_0 stores a byte of trits `t0..t4` (most significant first) as
//! `ceil((t0 * 81 + t1 * 27 + t2 * 9 + t3 * 3 + t4) * 256 / 243)`, and reads trit `n` back as
//! `((byte * 3^n) mod 256 * 3) >> 8`.

#![expect(
    clippy::inline_always,
    reason = "the encoders inline into pulp's vector dispatch (`IQuant::encode_row`), which is what vectorises them"
)]

use super::bits::{f16_to_f32, f32_to_f16};

/// Values per block.
pub const BLOCK: usize = 256;

/// One of the two ternary types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ternary {
    /// Base-3 packing, 1.6875 bits per weight.
    Tq1_0,
    /// 2 bits per value, 2.0625 bits per weight.
    Tq2_0,
}

/// `lroundf(v * id) + 1`: -1, 0, 1 to 0, 1, 2, halves away from zero. A product that is not
/// finite (a block whose absmax is so small that `1 / d` overflows) gives what x86-64's
/// `lroundf` and the conversion to `int` give, the code for 0.
/// Here `|v * id|` is at most `1 + 2^-23` (`d` is the block's absmax), so rounding is two
/// comparisons.
#[inline(always)]
fn trit(v: f32, id: f32) -> u8 {
    let p = v * id;
    let f = p.is_finite();
    1 + u8::from(f && p >= 0.5) - u8::from(f && p <= -0.5)
}

/// `ceil(sum of t[n] * 3^(4 - n) * 256 / 243)`: five trits in a byte, the first at the top.
#[inline(always)]
fn pack5(t: [u8; 5]) -> u8 {
    let q = t
        .iter()
        .fold(0u8, |q, &t| q.wrapping_mul(3).wrapping_add(t));
    (u16::from(q) * 256).div_ceil(243) as u8
}

/// The powers of three that bring trit `n` of a TQ1_0 byte to the top.
const POW3: [u8; 6] = [1, 3, 9, 27, 81, 243];

impl Ternary {
    /// Both, smallest first.
    pub const ALL: [Self; 2] = [Self::Tq1_0, Self::Tq2_0];

    /// ggml's name of the type.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Tq1_0 => "TQ1_0",
            Self::Tq2_0 => "TQ2_0",
        }
    }

    /// Bytes per block.
    #[must_use]
    pub const fn block_bytes(self) -> usize {
        match self {
            Self::Tq1_0 => 54,
            Self::Tq2_0 => 66,
        }
    }

    /// The block's parts: `(name, bits)`, payload first.
    #[must_use]
    pub const fn parts(self) -> [(&'static str, u32); 2] {
        match self {
            Self::Tq1_0 => [
                ("payload: trits, 5 a byte (4 in the last 4 bytes)", 52 * 8),
                ("d: f16", 16),
            ],
            Self::Tq2_0 => [("payload: 2-bit trits", 64 * 8), ("d: f16", 16)],
        }
    }

    /// Encodes one row (a multiple of [`BLOCK`] values) into ggml's bytes.
    pub fn encode_row(self, x: &[f32], out: &mut [u8]) {
        struct Op<'a>(Ternary, &'a [f32], &'a mut [u8]);
        impl pulp::WithSimd for Op<'_> {
            type Output = ();
            #[inline(always)]
            fn with_simd<S: pulp::Simd>(self, _simd: S) {
                self.0.encode(self.1, self.2);
            }
        }
        pulp::Arch::new().dispatch(Op(self, x, out));
    }

    /// [`Self::encode_row`]'s work.
    #[inline(always)]
    fn encode(self, x: &[f32], out: &mut [u8]) {
        let (xs, _) = x.as_chunks::<BLOCK>();
        for (xb, ob) in xs.iter().zip(out.chunks_exact_mut(self.block_bytes())) {
            // The largest |x| in 8 lanes (the maximum of non-negative numbers does not
            // depend on the order they are taken in).
            let mut lanes = [0.0f32; 8];
            for c in xb.chunks_exact(8) {
                for (m, &v) in lanes.iter_mut().zip(c) {
                    let a = v.abs();
                    *m = if *m > a { *m } else { a };
                }
            }
            let amax = lanes.iter().fold(0.0f32, |m, &a| if m > a { m } else { a });
            let d = amax;
            let id = if d == 0.0 { 0.0 } else { 1.0 / d };
            let trit = |v: f32| trit(v, id);
            let (payload, dh) = ob.split_at_mut(self.block_bytes() - 2);
            dh.copy_from_slice(&f32_to_f16(d).to_le_bytes());
            match self {
                Self::Tq1_0 => {
                    for m in 0..32 {
                        payload[m] = pack5(std::array::from_fn(|n| trit(xb[m + 32 * n])));
                    }
                    for m in 0..16 {
                        payload[32 + m] =
                            pack5(std::array::from_fn(|n| trit(xb[160 + m + 16 * n])));
                    }
                    for j in 0..4 {
                        // Four trits, the first at the top: a fifth trit of 0 below them.
                        payload[48 + j] = pack5(std::array::from_fn(|m| {
                            if m < 4 { trit(xb[240 + j + 4 * m]) } else { 0 }
                        }));
                    }
                }
                Self::Tq2_0 => {
                    for (half, q) in payload.chunks_exact_mut(32).enumerate() {
                        for (m, q) in q.iter_mut().enumerate() {
                            *q = (0..4).fold(0u8, |acc, n| {
                                acc | ((trit(xb[128 * half + m + 32 * n]) & 3) << (2 * n))
                            });
                        }
                    }
                }
            }
        }
    }

    /// The value of each code in units of the block's `d`.
    #[must_use]
    pub const fn levels(self) -> &'static [f32] {
        &[-1.0, 0.0, 1.0]
    }

    /// Reconstructs one row from its codes and each block's `d`, as `dequantize_row_tq*_0`
    /// and gguf-py do (`d * (code - 1)`, exact).
    pub fn decode(self, codes: &[u8], d: &[f32], out: &mut [f32]) {
        for ((c, o), &d) in codes.chunks(BLOCK).zip(out.chunks_mut(BLOCK)).zip(d) {
            for (o, &c) in o.iter_mut().zip(c) {
                *o = d * (f32::from(c) - 1.0);
            }
        }
    }

    /// One row's codes (0, 1, 2 for -1, 0, 1) from ggml's bytes, and each block's `d`.
    pub fn unpack_row(self, bytes: &[u8], codes: &mut [u8], d: &mut Vec<f32>) {
        d.clear();
        for (b, cb) in bytes
            .chunks_exact(self.block_bytes())
            .zip(codes.chunks_exact_mut(BLOCK))
        {
            let n = self.block_bytes();
            d.push(f16_to_f32(u16::from_le_bytes([b[n - 2], b[n - 1]])));
            match self {
                Self::Tq1_0 => {
                    let digit =
                        |q: u8, n: usize| ((u16::from(q.wrapping_mul(POW3[n])) * 3) >> 8) as u8;
                    for n in 0..5 {
                        for m in 0..32 {
                            cb[32 * n + m] = digit(b[m], n);
                        }
                        for m in 0..16 {
                            cb[160 + 16 * n + m] = digit(b[32 + m], n);
                        }
                    }
                    for n in 0..4 {
                        for j in 0..4 {
                            cb[240 + 4 * n + j] = digit(b[48 + j], n);
                        }
                    }
                }
                Self::Tq2_0 => {
                    for half in 0..2 {
                        for n in 0..4 {
                            for m in 0..32 {
                                cb[128 * half + 32 * n + m] = (b[32 * half + m] >> (2 * n)) & 3;
                            }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(t: Ternary, x: &[f32]) -> (Vec<u8>, Vec<f32>) {
        let mut bytes = vec![0u8; x.len() / BLOCK * t.block_bytes()];
        t.encode_row(x, &mut bytes);
        let mut codes = vec![0u8; x.len()];
        let mut d = Vec::new();
        t.unpack_row(&bytes, &mut codes, &mut d);
        (codes, d)
    }

    #[test]
    fn codes_come_back_in_value_order() {
        // Values chosen so that value i has trit (i % 3) - 1 under d = 1.
        let x: Vec<f32> = (0..BLOCK).map(|i| (i % 3) as f32 - 1.0).collect();
        for t in Ternary::ALL {
            let (codes, d) = round_trip(t, &x);
            assert_eq!(d, vec![1.0]);
            for (i, &c) in codes.iter().enumerate() {
                assert_eq!(c, (i % 3) as u8, "{t:?} value {i}");
            }
        }
    }

    #[test]
    fn halves_round_away_from_zero() {
        let mut x = vec![0.0f32; BLOCK];
        x[0] = 2.0;
        x[1] = 1.0; // exactly half of d
        x[2] = -1.0;
        x[3] = 0.99; // just below half
        for t in Ternary::ALL {
            let (codes, _) = round_trip(t, &x);
            assert_eq!(&codes[..4], &[2, 2, 0, 1], "{t:?}");
        }
    }
}
