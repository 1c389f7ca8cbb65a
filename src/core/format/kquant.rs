//! llama.cpp's k-quants: Q2_K, Q3_K, Q4_K, Q5_K and Q6_K, in super-blocks of 256 values.
//!
//! Encoding is ggml's `quantize_row_q*_K_ref` (what `llama-quantize` runs without an
//! importance matrix), bit for bit, and with an importance vector ggml's
//! `quantize_row_q*_K_impl` (what `llama-quantize --imatrix` runs, [`KQuant::encode_block_weighted`]);
//! decoding is `dequantize_row_q*_K` (and gguf-py's
//! `dequantize`), and [`KQuant::pack`] / [`KQuant::unpack`] write and read ggml's block
//! structs byte for byte.
//!
//! Every k-quant reconstructs value `i` of sub-block `j` as
//! `(d * scale[j]) * (code - offset) - dmin * min[j]`, with `d` and `dmin` stored as f16
//! per super-block and `scale[j]`, `min[j]` small integers per sub-block:
//!
//! | type | sub-blocks | code range (offset) | sub-scale | sub-min | super-block | bytes |
//! |---|---|---|---|---|---|---|
//! | Q2_K | 16 x 16 | 0..3 | 4 bit | 4 bit | `d`, `dmin` | 84 |
//! | Q3_K | 16 x 16 | 0..7 (4) | 6 bit, minus 32 | - | `d` | 110 |
//! | Q4_K | 8 x 32 | 0..15 | 6 bit | 6 bit | `d`, `dmin` | 144 |
//! | Q5_K | 8 x 32 | 0..31 | 6 bit | 6 bit | `d`, `dmin` | 176 |
//! | Q6_K | 16 x 16 | 0..63 (32) | int8 | - | `d` | 210 |

#![expect(
    clippy::inline_always,
    reason = "the row and block loops inline into pulp's vector dispatch, which is what vectorises them"
)]

mod encode;
pub(in crate::core::format) mod fit;
mod pack;
#[cfg(target_arch = "x86_64")]
mod q3_speculative;
pub(in crate::core::format) mod qp;
mod weighted;

use crate::core::format::bits::f16_to_f32;

/// Values per super-block (ggml's `QK_K`).
pub const QK_K: usize = 256;

/// One of the five k-quant types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KQuant {
    /// 2-bit codes, 4-bit scales and mins per 16 values: 2.625 bits per weight.
    Q2K,
    /// 3-bit codes, 6-bit signed scales per 16 values: 3.4375 bits per weight.
    Q3K,
    /// 4-bit codes, 6-bit scales and mins per 32 values: 4.5 bits per weight.
    Q4K,
    /// 5-bit codes, 6-bit scales and mins per 32 values: 5.5 bits per weight.
    Q5K,
    /// 6-bit codes, int8 scales per 16 values: 6.5625 bits per weight.
    Q6K,
}

/// A super-block's metadata, decoded from (or ready to pack into) ggml's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SuperBlock {
    /// The super-block scale of the sub-block scales, as f16 bits.
    pub d: u16,
    /// The super-block scale of the sub-block mins, as f16 bits (0 for Q3_K and Q6_K).
    pub dmin: u16,
    /// Each sub-block's scale multiplier: Q2_K 0..15, Q3_K -32..31, Q4_K/Q5_K 0..63, Q6_K
    /// -128..127. Only the first [`KQuant::sub_blocks`] entries are used.
    pub scales: [i8; 16],
    /// Each sub-block's min multiplier: Q2_K 0..15, Q4_K/Q5_K 0..63, otherwise 0.
    pub mins: [u8; 16],
}

impl SuperBlock {
    /// `d` as f32.
    #[must_use]
    pub fn d(&self) -> f32 {
        f16_to_f32(self.d)
    }

    /// `dmin` as f32.
    #[must_use]
    pub fn dmin(&self) -> f32 {
        f16_to_f32(self.dmin)
    }

    /// Sub-block `j`'s step, `d * scale[j]` (the dequantizer's `dl`).
    #[must_use]
    pub fn step(&self, j: usize) -> f32 {
        self.d() * f32::from(self.scales[j])
    }

    /// Sub-block `j`'s subtracted minimum, `dmin * min[j]` (the dequantizer's `ml`).
    #[must_use]
    pub fn min(&self, j: usize) -> f32 {
        self.dmin() * f32::from(self.mins[j])
    }
}

impl KQuant {
    /// All five, smallest first.
    pub const ALL: [Self; 5] = [Self::Q2K, Self::Q3K, Self::Q4K, Self::Q5K, Self::Q6K];

    /// ggml's name of the type (`"Q4_K"`).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Q2K => "Q2_K",
            Self::Q3K => "Q3_K",
            Self::Q4K => "Q4_K",
            Self::Q5K => "Q5_K",
            Self::Q6K => "Q6_K",
        }
    }

    /// Values per sub-block: 32 for Q4_K and Q5_K, 16 otherwise.
    #[must_use]
    pub const fn sub_len(self) -> usize {
        match self {
            Self::Q4K | Self::Q5K => 32,
            _ => 16,
        }
    }

    /// Sub-blocks per super-block.
    #[must_use]
    pub const fn sub_blocks(self) -> usize {
        QK_K / self.sub_len()
    }

    /// Bits per stored code.
    #[must_use]
    pub const fn code_bits(self) -> u32 {
        match self {
            Self::Q2K => 2,
            Self::Q3K => 3,
            Self::Q4K => 4,
            Self::Q5K => 5,
            Self::Q6K => 6,
        }
    }

    /// What the dequantizer subtracts from a stored code: 4 for Q3_K, 32 for Q6_K, else 0.
    #[must_use]
    pub const fn code_offset(self) -> i32 {
        match self {
            Self::Q3K => 4,
            Self::Q6K => 32,
            _ => 0,
        }
    }

    /// The super-block has a `dmin` and per-sub-block mins (Q2_K, Q4_K, Q5_K).
    #[must_use]
    pub const fn has_mins(self) -> bool {
        matches!(self, Self::Q2K | Self::Q4K | Self::Q5K)
    }

    /// Bytes of ggml's block struct.
    #[must_use]
    pub const fn block_bytes(self) -> usize {
        match self {
            Self::Q2K => 84,
            Self::Q3K => 110,
            Self::Q4K => 144,
            Self::Q5K => 176,
            Self::Q6K => 210,
        }
    }

    /// Bits of sub-block metadata per super-block (scales and mins).
    #[must_use]
    pub const fn sub_scale_bits(self) -> u32 {
        match self {
            Self::Q2K | Self::Q6K => 16 * 8,
            Self::Q3K | Self::Q4K | Self::Q5K => 12 * 8,
        }
    }

    /// Bits of super-block metadata (`d`, and `dmin` where there is one).
    #[must_use]
    pub const fn super_scale_bits(self) -> u32 {
        if self.has_mins() { 32 } else { 16 }
    }

    /// Quantizes one super-block as ggml's reference does: codes into `codes` (the stored
    /// values, before [`Self::code_offset`] is subtracted), metadata returned.
    #[must_use]
    #[inline(always)]
    pub fn encode_block(self, x: &[f32; QK_K], codes: &mut [u8; QK_K]) -> SuperBlock {
        match self {
            Self::Q2K => encode::q2_k(x, codes),
            Self::Q3K => encode::q3_k(x, codes),
            Self::Q4K => encode::q4_q5_k(x, codes, false),
            Self::Q5K => encode::q4_q5_k(x, codes, true),
            Self::Q6K => encode::q6_k(x, codes),
        }
    }

    /// Quantizes one super-block as `llama-quantize --imatrix` does (ggml's
    /// `quantize_row_q*_K_impl` with `quant_weights`), `qw` the importance of each of its
    /// columns: codes into `codes`, metadata returned.
    #[must_use]
    #[inline(always)]
    pub fn encode_block_weighted(
        self,
        x: &[f32; QK_K],
        qw: &[f32; QK_K],
        codes: &mut [u8; QK_K],
    ) -> SuperBlock {
        match self {
            Self::Q2K => weighted::q2_k(x, qw, codes),
            Self::Q3K => weighted::q3_k(x, qw, codes),
            Self::Q4K => weighted::q4_q5_k(x, qw, codes, false),
            Self::Q5K => weighted::q4_q5_k(x, qw, codes, true),
            Self::Q6K => weighted::q6_k(x, qw, codes),
        }
    }

    /// The weight of each value in the super-block's sub-block search (what the encoder
    /// minimises the weighted error with), in value order, and the `sigma2` it was formed
    /// from (see [`KQuant::search_weights_rule`]): with `qw`, `quantize_row_q*_K_impl`'s;
    /// without, the reference's.
    #[must_use]
    pub fn search_weights(
        self,
        x: &[f32; QK_K],
        qw: Option<&[f32; QK_K]>,
    ) -> ([f32; QK_K], Option<f32>) {
        if let Some(qw) = qw {
            return (
                weighted::value_weights(self, x, qw),
                weighted::sigma2(self, x),
            );
        }
        let w = match self {
            Self::Q2K => x.map(f32::abs),
            Self::Q3K | Self::Q6K => x.map(|v| v * v),
            Self::Q4K | Self::Q5K => {
                let mut w = [0.0f32; QK_K];
                for (ws, xs) in w.chunks_exact_mut(32).zip(x.chunks_exact(32)) {
                    let mut sum_x2 = 0.0f32;
                    for &v in xs {
                        sum_x2 += v * v;
                    }
                    let av_x = (sum_x2 / 32.0).sqrt();
                    for (o, &v) in ws.iter_mut().zip(xs) {
                        *o = av_x + v.abs();
                    }
                }
                w
            }
        };
        (w, None)
    }

    /// [`KQuant::search_weights`] in words, with (`weighted`) or without an importance.
    #[must_use]
    pub const fn search_weights_rule(self, weighted: bool) -> &'static str {
        match (self, weighted) {
            (Self::Q2K, false) => "w = |x|",
            (Self::Q3K | Self::Q6K, false) => "w = x²",
            (Self::Q4K | Self::Q5K, false) => "w = sqrt(Σx²/32 over the sub-block) + |x|",
            (Self::Q2K, true) => "w = a · sqrt(σ² + x²), σ² = Σx²/256 over the super-block",
            (Self::Q6K, true) => "w = a, the column's importance alone",
            (_, true) => "w = a · sqrt(σ² + x²), σ² = 2·Σx²/256 over the super-block",
        }
    }

    /// Reconstructs one super-block as ggml's `dequantize_row_q*_K` does, bit for bit.
    #[inline(always)]
    pub fn decode_block(self, sb: &SuperBlock, codes: &[u8; QK_K], out: &mut [f32; QK_K]) {
        let (d, dmin) = (sb.d(), sb.dmin());
        let len = self.sub_len();
        let offset = self.code_offset();
        for (j, (c, o)) in codes
            .chunks_exact(len)
            .zip(out.chunks_exact_mut(len))
            .enumerate()
        {
            let dl = d * f32::from(sb.scales[j]);
            let ml = dmin * f32::from(sb.mins[j]);
            for (o, &q) in o.iter_mut().zip(c) {
                *o = dl * (i32::from(q) - offset) as f32 - ml;
            }
        }
    }

    /// Writes one super-block in ggml's byte layout (`block_q*_K`); `out` must hold
    /// [`Self::block_bytes`] bytes. Codes are masked to the type's bits.
    pub fn pack(self, sb: &SuperBlock, codes: &[u8; QK_K], out: &mut [u8]) {
        pack::pack(self, sb, codes, out);
    }

    /// Reads one super-block from ggml's byte layout; `bytes` must hold
    /// [`Self::block_bytes`] bytes.
    #[must_use]
    pub fn unpack(self, bytes: &[u8], codes: &mut [u8; QK_K]) -> SuperBlock {
        pack::unpack(self, bytes, codes)
    }
}
