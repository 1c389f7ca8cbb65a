//! ggml's 32-value block types Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0, read from their byte layout
//! and reconstructed as `dequantize_row_q*` does (the core's presets encode them; this is
//! what a GGUF reader needs to look at stored tensors). With an importance vector, Q4_0 to
//! Q5_1 encode here (`weighted`): ggml's weighted search is not a preset's formula.
//!
//! | type | layout (bytes) | value |
//! |---|---|---|
//! | Q4_0 | `d` f16, `qs[16]` (byte `j`: codes `j`, `j + 16`) | `(code - 8) * d` |
//! | Q4_1 | `d`, `m` f16, `qs[16]` | `code * d + m` |
//! | Q5_0 | `d`, `qh` u32 (bit `j`: fifth bit of code `j`), `qs[16]` | `(code - 16) * d` |
//! | Q5_1 | `d`, `m`, `qh`, `qs[16]` | `code * d + m` |
//! | Q8_0 | `d`, `qs[32]` int8 | `code * d` |

use crate::core::format::bits::f16_to_f32;

pub(in crate::core::format) mod weighted;

/// Values per block.
pub const BLOCK: usize = 32;

/// One of the five legacy block types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Legacy {
    /// 4-bit codes with an implicit offset of 8 under an f16 scale.
    Q4_0,
    /// 4-bit codes under an f16 scale plus an f16 minimum.
    Q4_1,
    /// 5-bit codes with an implicit offset of 16 under an f16 scale.
    Q5_0,
    /// 5-bit codes under an f16 scale plus an f16 minimum.
    Q5_1,
    /// int8 codes under an f16 scale.
    Q8_0,
}

/// A legacy block's metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LegacyBlock {
    /// The scale `d`, as f16 bits.
    pub d: u16,
    /// The minimum `m` as f16 bits (Q4_1 and Q5_1), otherwise `None`.
    pub m: Option<u16>,
}

impl Legacy {
    /// All five.
    pub const ALL: [Self; 5] = [Self::Q4_0, Self::Q4_1, Self::Q5_0, Self::Q5_1, Self::Q8_0];

    /// ggml's name of the type.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Q4_0 => "Q4_0",
            Self::Q4_1 => "Q4_1",
            Self::Q5_0 => "Q5_0",
            Self::Q5_1 => "Q5_1",
            Self::Q8_0 => "Q8_0",
        }
    }

    /// Bytes per block.
    #[must_use]
    pub const fn block_bytes(self) -> usize {
        match self {
            Self::Q4_0 => 18,
            Self::Q4_1 => 20,
            Self::Q5_0 => 22,
            Self::Q5_1 => 24,
            Self::Q8_0 => 34,
        }
    }

    /// ggml's quantizer of the type reads an importance vector (all but Q8_0).
    #[must_use]
    pub const fn reads_importance(self) -> bool {
        !matches!(self, Self::Q8_0)
    }

    /// Bits per stored code.
    #[must_use]
    pub const fn code_bits(self) -> u32 {
        match self {
            Self::Q4_0 | Self::Q4_1 => 4,
            Self::Q5_0 | Self::Q5_1 => 5,
            Self::Q8_0 => 8,
        }
    }

    /// What the dequantizer subtracts from a stored code (Q8_0's codes are read as int8 and
    /// stored here as that int8's byte, so its offset is applied by the sign).
    #[must_use]
    pub const fn code_offset(self) -> i32 {
        match self {
            Self::Q4_0 => 8,
            Self::Q5_0 => 16,
            _ => 0,
        }
    }

    /// Reads one block: codes (Q8_0 as the int8's byte), metadata returned. `bytes` must hold
    /// [`Self::block_bytes`] bytes.
    #[must_use]
    pub fn unpack(self, bytes: &[u8], codes: &mut [u8; BLOCK]) -> LegacyBlock {
        let b = &bytes[..self.block_bytes()];
        let f16 = |at: usize| u16::from_le_bytes([b[at], b[at + 1]]);
        let d = f16(0);
        let (m, rest) = match self {
            Self::Q4_1 | Self::Q5_1 => (Some(f16(2)), &b[4..]),
            _ => (None, &b[2..]),
        };
        match self {
            Self::Q8_0 => codes.copy_from_slice(&rest[..BLOCK]),
            Self::Q4_0 | Self::Q4_1 => nibbles(&rest[..16], 0, codes),
            Self::Q5_0 | Self::Q5_1 => {
                let qh = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]);
                nibbles(&rest[4..20], qh, codes);
            }
        }
        LegacyBlock { d, m }
    }

    /// Writes one block in ggml's byte layout (the inverse of [`Legacy::unpack`]); `out` must
    /// hold [`Self::block_bytes`] bytes. Codes are masked to the type's bits.
    pub fn pack(self, block: &LegacyBlock, codes: &[u8; BLOCK], out: &mut [u8]) {
        let out = &mut out[..self.block_bytes()];
        out[..2].copy_from_slice(&block.d.to_le_bytes());
        let rest = match (self, block.m) {
            (Self::Q4_1 | Self::Q5_1, m) => {
                out[2..4].copy_from_slice(&m.unwrap_or(0).to_le_bytes());
                &mut out[4..]
            }
            _ => &mut out[2..],
        };
        match self {
            Self::Q8_0 => rest[..BLOCK].copy_from_slice(codes),
            Self::Q4_0 | Self::Q4_1 => pack_nibbles(codes, &mut rest[..16]),
            Self::Q5_0 | Self::Q5_1 => {
                let mut qh = 0u32;
                for (j, &c) in codes.iter().enumerate() {
                    qh |= u32::from((c >> 4) & 1) << j;
                }
                rest[..4].copy_from_slice(&qh.to_le_bytes());
                pack_nibbles(codes, &mut rest[4..20]);
            }
        }
    }

    /// Reconstructs one block as ggml's `dequantize_row_q*` does, bit for bit.
    pub fn decode(self, block: &LegacyBlock, codes: &[u8; BLOCK], out: &mut [f32; BLOCK]) {
        let d = f16_to_f32(block.d);
        let m = block.m.map(f16_to_f32);
        for (o, &c) in out.iter_mut().zip(codes) {
            let q = match self {
                Self::Q8_0 => i32::from(c as i8),
                _ => i32::from(c) - self.code_offset(),
            };
            *o = match m {
                Some(m) => q as f32 * d + m,
                None => q as f32 * d,
            };
        }
    }
}

/// 16 bytes of nibbles from codes (byte `j`: code `j` low, code `j + 16` high).
fn pack_nibbles(codes: &[u8; BLOCK], qs: &mut [u8]) {
    for (j, b) in qs.iter_mut().enumerate() {
        *b = (codes[j] & 0xF) | ((codes[j + 16] & 0xF) << 4);
    }
}

/// Codes from 16 bytes of nibbles (byte `j`: code `j` low, code `j + 16` high) and the fifth
/// bits in `qh` (bit `j` for code `j`; 0 for 4-bit types).
fn nibbles(qs: &[u8], qh: u32, codes: &mut [u8; BLOCK]) {
    for (j, &b) in qs.iter().enumerate() {
        codes[j] = (b & 0xF) | ((((qh >> j) & 1) as u8) << 4);
        codes[j + 16] = (b >> 4) | ((((qh >> (j + 16)) & 1) as u8) << 4);
    }
}
