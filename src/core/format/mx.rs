//! The OCP Microscaling (MX) formats of the OCP Microscaling Formats (MX) v1.0
//! specification: 32 elements under one E8M0 power-of-two scale, for the element types
//! FP8 E4M3 and E5M2, FP6 E2M3 and E3M2, FP4 E2M1 and INT8.
//!
//! The conversion is the specification's section 6.3:
//!
//! ```text
//! shared_exp = floor(log2(max |V_i|)) - emax_elem     (clamped to E8M0's [-127, 127])
//! X          = 2^shared_exp                            (stored as the byte shared_exp + 127)
//! P_i        = quantize_to_element_format(V_i / X)     (round to nearest even, saturating)
//! ```
//!
//! `floor(log2(amax))` is amax's exact binary exponent (not a float `log2`, which rounds an
//! amax just below a power of two up to it); an all-zero block, and any block whose amax is
//! below 2^(emax_elem - 127), gets the smallest scale 2^-127 (byte 0), as the
//! specification's reference code clamps it. `V_i / X` is exact (a power of two) unless it
//! falls among the f32 subnormals, where it rounds once as the f32 division does, far below
//! the element's smallest value. The reconstruction `P_i * X` is exact, and finite for every
//! finite input: the f32 maximum's block has `X = 2^(127 - emax_elem)` and saturates to the
//! element's largest value, at most `max * 2^(127 - emax_elem) < 2^128`.
//!
//! INT8 is the specification's two's-complement integer with an implicit scale of 2^-6
//! (`emax_elem` 0, largest magnitude 127/64, so -128 is never produced); its code is the
//! two's-complement byte, rounded half to even.
//!
//! ggml's MXFP4 ([`super::fp4`]) parts from this rule in four places: it picks each value's
//! nearest E2M1 point with ties to the smaller magnitude (0.75 -> 0.5, 1.75 -> 1.5,
//! 3.5 -> 3, where round-half-even gives 1, 2 and 4); it never stores a negative zero; its
//! exponent comes from `log2f`, which rounds an amax just below a power of two up to it; and
//! below 2^-125 its exponent byte wraps around (to a scale near 2^127, so the block
//! reconstructs to zeros) where the OCP rule clamps to 2^-127. [`MxKind::Fp4E2M1`] is the OCP
//! rule, stored in ggml's block layout (ggml's decoder reads it to the same values).

#![expect(
    clippy::inline_always,
    reason = "the block loops inline into the row encoder, which is what vectorises them"
)]

use super::minifloat::{E2M1, E2M3, E3M2, E4M3, E5M2, Minifloat};

/// Values per MX block.
pub const MX_BLOCK: usize = 32;

/// An MX element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MxKind {
    /// MXFP8 with E4M3 elements (`emax_elem` 8).
    Fp8E4M3,
    /// MXFP8 with E5M2 elements (`emax_elem` 15).
    Fp8E5M2,
    /// MXFP6 with E2M3 elements (`emax_elem` 2).
    Fp6E2M3,
    /// MXFP6 with E3M2 elements (`emax_elem` 4).
    Fp6E3M2,
    /// MXFP4 with E2M1 elements (`emax_elem` 2), the OCP rounding.
    Fp4E2M1,
    /// MXINT8: two's-complement int8 times 2^-6 (`emax_elem` 0).
    Int8,
}

impl MxKind {
    /// Every MX element type, by bits per element.
    pub const ALL: [Self; 6] = [
        Self::Fp4E2M1,
        Self::Fp6E2M3,
        Self::Fp6E3M2,
        Self::Fp8E4M3,
        Self::Fp8E5M2,
        Self::Int8,
    ];

    /// The format's name (`MXFP8 E4M3`).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Fp8E4M3 => "MXFP8 E4M3",
            Self::Fp8E5M2 => "MXFP8 E5M2",
            Self::Fp6E2M3 => "MXFP6 E2M3",
            Self::Fp6E3M2 => "MXFP6 E3M2",
            Self::Fp4E2M1 => "MXFP4 (OCP)",
            Self::Int8 => "MXINT8",
        }
    }

    /// The element's float type (`None` for INT8).
    #[must_use]
    pub const fn minifloat(self) -> Option<Minifloat> {
        match self {
            Self::Fp8E4M3 => Some(E4M3),
            Self::Fp8E5M2 => Some(E5M2),
            Self::Fp6E2M3 => Some(E2M3),
            Self::Fp6E3M2 => Some(E3M2),
            Self::Fp4E2M1 => Some(E2M1),
            Self::Int8 => None,
        }
    }

    /// Bits per element.
    #[must_use]
    pub const fn element_bits(self) -> u32 {
        match self.minifloat() {
            Some(m) => m.bits,
            None => 8,
        }
    }

    /// The exponent of the element's largest normal value (`emax_elem`).
    #[must_use]
    pub const fn emax(self) -> i32 {
        match self {
            Self::Fp8E4M3 => 8,
            Self::Fp8E5M2 => 15,
            Self::Fp6E2M3 | Self::Fp4E2M1 => 2,
            Self::Fp6E3M2 => 4,
            Self::Int8 => 0,
        }
    }

    /// The element's largest magnitude.
    #[must_use]
    pub const fn max(self) -> f32 {
        match self.minifloat() {
            Some(m) => m.max,
            None => 127.0 / 64.0,
        }
    }

    /// Bytes per block in the stored layout: the E8M0 byte, then the elements packed
    /// (E2M1 in ggml's `block_mxfp4` layout, E2M3/E3M2 four to three bytes, little-endian).
    #[must_use]
    pub const fn block_bytes(self) -> usize {
        1 + MX_BLOCK * self.element_bits() as usize / 8
    }

    /// The element code of `v` (already divided by the block's scale).
    #[must_use]
    #[inline(always)]
    pub fn encode_element(self, v: f32) -> u8 {
        match self.minifloat() {
            Some(m) => m.encode(v),
            None => (v * 64.0).round_ties_even().clamp(-127.0, 127.0) as i8 as u8,
        }
    }

    /// The value of an element code (NaN for the codes the format never produces: E4M3's
    /// NaNs, E5M2's infinities and NaNs, INT8's -128).
    #[must_use]
    pub fn decode_element(self, code: u8) -> f32 {
        match self.minifloat() {
            Some(m) => m.decode(code),
            None if code == 0x80 => f32::NAN,
            None => f32::from(code as i8) / 64.0,
        }
    }

    /// The value of every element code (`2^bits` of them).
    #[must_use]
    pub fn table(self) -> Vec<f32> {
        (0..1u32 << self.element_bits())
            .map(|c| self.decode_element(c as u8))
            .collect()
    }
}

/// `2^k` for `-149 <= k <= 127`, exactly (subnormal below -126).
#[inline(always)]
fn pow2(k: i32) -> f32 {
    if k >= -126 {
        f32::from_bits(((k + 127) as u32) << 23)
    } else {
        f32::from_bits(1u32 << (k + 149))
    }
}

/// The E8M0 scale byte of a block whose largest magnitude is `amax`:
/// `clamp(floor(log2(amax)) - emax_elem, -127, 127) + 127`, 0 for an all-zero block.
#[must_use]
#[inline(always)]
pub fn scale_byte(kind: MxKind, amax: f32) -> u8 {
    // Subnormal amax: its exponent is at most -127, so the clamp decides.
    let e = if amax >= f32::MIN_POSITIVE {
        ((amax.to_bits() >> 23) & 0xFF) as i32 - 127
    } else {
        -127
    };
    ((e - kind.emax()).clamp(-127, 127) + 127) as u8
}

/// The scale an E8M0 byte stands for, `2^(byte - 127)` (byte 255, NaN, is never produced:
/// it reads as 2^128's nearest, infinity).
#[must_use]
#[inline(always)]
pub fn scale_of(byte: u8) -> f32 {
    if byte == 255 {
        f32::INFINITY
    } else {
        pow2(i32::from(byte) - 127)
    }
}

/// The largest magnitude of a block (every value is finite).
#[inline(always)]
fn amax(x: &[f32; MX_BLOCK]) -> f32 {
    x.iter().fold(0.0f32, |m, &v| m.max(v.abs()))
}

/// Quantizes one block: returns the E8M0 byte, writes each element's code.
#[must_use]
#[inline(always)]
pub fn encode_block(kind: MxKind, x: &[f32; MX_BLOCK], codes: &mut [u8; MX_BLOCK]) -> u8 {
    let e = scale_byte(kind, amax(x));
    // x / 2^s equals x * 2^-s exactly (one rounding of the same real number).
    let inv = pow2(127 - i32::from(e));
    match kind.minifloat() {
        Some(m) => {
            for (c, &v) in codes.iter_mut().zip(x) {
                *c = m.encode(v * inv);
            }
        }
        None => {
            for (c, &v) in codes.iter_mut().zip(x) {
                *c = MxKind::Int8.encode_element(v * inv);
            }
        }
    }
    e
}

/// Reconstructs one block: `element * 2^(e - 127)`, exact.
#[inline(always)]
pub fn decode_block(table: &[f32], e: u8, codes: &[u8; MX_BLOCK], out: &mut [f32; MX_BLOCK]) {
    let s = scale_of(e);
    for (o, &c) in out.iter_mut().zip(codes) {
        *o = table[usize::from(c)] * s;
    }
}

/// Writes a block in the stored layout ([`MxKind::block_bytes`]): the E8M0 byte, then the
/// elements (E2M1 as ggml's `block_mxfp4`: byte `j` holds codes `j` and `j + 16`; E2M3 and
/// E3M2 four codes in three bytes, `c0 | c1 << 6 | c2 << 12 | c3 << 18` little-endian;
/// FP8 and INT8 a byte each).
pub fn pack(kind: MxKind, e: u8, codes: &[u8; MX_BLOCK], out: &mut [u8]) {
    out[0] = e;
    let body = &mut out[1..kind.block_bytes()];
    match kind.element_bits() {
        4 => {
            for j in 0..16 {
                body[j] = (codes[j] & 15) | ((codes[j + 16] & 15) << 4);
            }
        }
        6 => {
            for (o, c) in body.chunks_exact_mut(3).zip(codes.chunks_exact(4)) {
                let w = c
                    .iter()
                    .enumerate()
                    .fold(0u32, |w, (i, &v)| w | (u32::from(v & 63) << (6 * i)));
                o.copy_from_slice(&w.to_le_bytes()[..3]);
            }
        }
        _ => body.copy_from_slice(codes),
    }
}

/// Reads a block from the stored layout: returns the E8M0 byte, writes the codes.
#[must_use]
pub fn unpack(kind: MxKind, bytes: &[u8], codes: &mut [u8; MX_BLOCK]) -> u8 {
    let body = &bytes[1..kind.block_bytes()];
    match kind.element_bits() {
        4 => {
            for j in 0..16 {
                codes[j] = body[j] & 15;
                codes[j + 16] = body[j] >> 4;
            }
        }
        6 => {
            for (c, b) in codes.chunks_exact_mut(4).zip(body.chunks_exact(3)) {
                let w = u32::from_le_bytes([b[0], b[1], b[2], 0]);
                for (i, v) in c.iter_mut().enumerate() {
                    *v = ((w >> (6 * i)) & 63) as u8;
                }
            }
        }
        _ => codes.copy_from_slice(body),
    }
    bytes[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(f: impl Fn(usize) -> f32) -> [f32; MX_BLOCK] {
        std::array::from_fn(f)
    }

    #[test]
    fn the_shared_exponent_is_the_exact_one() {
        // 16 - 2^-20: a float log2 rounds to 4.0; the exact exponent is 3.
        let below = f32::from_bits(16f32.to_bits() - 1);
        assert_eq!(scale_byte(MxKind::Fp4E2M1, below), 127 + 3 - 2);
        assert_eq!(scale_byte(MxKind::Fp4E2M1, 16.0), 127 + 4 - 2);
        assert_eq!(scale_byte(MxKind::Fp8E4M3, 0.0), 0);
        assert_eq!(scale_byte(MxKind::Fp8E4M3, 1e-45), 0);
        assert_eq!(scale_byte(MxKind::Int8, f32::MAX), 254);
        assert_eq!(scale_byte(MxKind::Fp8E5M2, f32::MAX), 127 + 127 - 15);
        assert_eq!(scale_of(0).to_bits(), 0x0040_0000);
        assert_eq!(scale_of(254), 2f32.powi(127));
    }

    #[test]
    fn the_f32_maximum_reconstructs_finite() {
        for kind in MxKind::ALL {
            let x = block(|i| if i == 3 { f32::MAX } else { -(i as f32) * 1e36 });
            let mut codes = [0u8; MX_BLOCK];
            let mut out = [0.0f32; MX_BLOCK];
            let e = encode_block(kind, &x, &mut codes);
            decode_block(&kind.table(), e, &codes, &mut out);
            assert!(out.iter().all(|v| v.is_finite()), "{kind:?}");
            assert_eq!(out[3], kind.max() * scale_of(e), "{kind:?}");
        }
    }

    #[test]
    fn ties_round_to_even_where_ggml_rounds_down() {
        // amax 6: X = 1, and the other values are E2M1's midpoints.
        let mids = [0.25f32, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0];
        let x = block(|i| if i == 0 { 6.0 } else { mids[(i - 1) % 7] });
        let mut codes = [0u8; MX_BLOCK];
        assert_eq!(encode_block(MxKind::Fp4E2M1, &x, &mut codes), 127);
        let table = MxKind::Fp4E2M1.table();
        let got: Vec<f32> = (1..8).map(|i| table[usize::from(codes[i])]).collect();
        assert_eq!(got, [0.0, 1.0, 1.0, 2.0, 2.0, 4.0, 4.0]);
    }

    #[test]
    fn int8_saturates_at_127_and_rounds_half_to_even() {
        let x = block(|i| match i {
            0 => 1.999,
            1 => -1.999,
            2 => 0.5 / 64.0,
            3 => 1.5 / 64.0,
            _ => 0.0,
        });
        let mut codes = [0u8; MX_BLOCK];
        assert_eq!(encode_block(MxKind::Int8, &x, &mut codes), 127);
        assert_eq!(codes[..4], [127, (-127i8) as u8, 0, 2]);
    }

    #[test]
    fn pack_and_unpack_round_trip() {
        for kind in MxKind::ALL {
            let x = block(|i| ((i * 7) as f32 * 0.31).sin() * 3.0);
            let mut codes = [0u8; MX_BLOCK];
            let e = encode_block(kind, &x, &mut codes);
            let mut bytes = vec![0u8; kind.block_bytes()];
            pack(kind, e, &codes, &mut bytes);
            let mut back = [0u8; MX_BLOCK];
            assert_eq!(unpack(kind, &bytes, &mut back), e);
            assert_eq!(back, codes, "{kind:?}");
        }
    }
}
