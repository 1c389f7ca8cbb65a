//! llama.cpp's i-quants: IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ4_XS and
//! IQ4_NL, encoded bit for bit as ggml's `quantize_iq*` (what `llama-quantize` runs, with or
//! without an importance matrix) and decoded as `dequantize_row_iq*` and gguf-py's
//! `dequantize`.
//!
//! The lattice types store each group of 8 values (IQ3: two groups of 4) as the index of a
//! point of a fixed codebook ([`tables`]) whose values are magnitudes, plus the group's signs,
//! under a scale per 16 or 32 values:
//!
//! | type | codebook | signs | scale per | bits per weight |
//! |---|---|---|---|---|
//! | IQ1_S | 2048 points of 8 values in {-1, 0, 1}, plus or minus 1/8 per 32 | in the points | 32: 3 bits, f16 per 256 | 1.5625 |
//! | IQ1_M | the same, plus or minus 1/8 per 8 | in the points | 16: 3 bits, f16 split over the scales | 1.75 |
//! | IQ2_XXS | 256 points of 8 magnitudes 8, 25, 43 | 7 bits per 8 (even count) | 32: 4 bits, f16 per 256 | 2.0625 |
//! | IQ2_XS | 512 points | 7 bits per 8 | 16: 4 bits | 2.3125 |
//! | IQ2_S | 1024 points | 8 bits per 8 | 16: 4 bits | 2.5625 |
//! | IQ3_XXS | 256 points of 4 magnitudes 4, 12, .., 52, 62 | 7 bits per 8 | 32: 4 bits | 3.0625 |
//! | IQ3_S | 512 points of 4 odd magnitudes 1..15 | 8 bits per 8 | 32: 4 bits | 3.4375 |
//! | IQ4_XS | the 16 levels `kvalues_iq4nl` | in the levels | 32: 6 bits, f16 per 256 | 4.25 |
//! | IQ4_NL | the same | in the levels | 32: f16 | 4.5 |
//!
//! Here a row is kept as ggml's bytes; [`IQuant::unpack_row`] reads one code per value (the
//! index of the value's signed level in [`IQuant::levels`]) and one step per sub-block, and
//! every value is `step * levels[code]`, which is the reference's reconstruction bit for bit
//! (a sign and a level multiply exactly).
//!
//! Arithmetic is f32 in the reference's order and never fused; ties in sorts keep the input
//! order (ggml's `qsort` as glibc's merge sort runs it).

#![expect(
    clippy::inline_always,
    reason = "the encoders inline into pulp's vector dispatch, which is what vectorises them"
)]

mod groups;
mod iq1;
mod iq2;
mod iq3;
mod iq4;
mod lattice;
mod qp;
pub mod tables;

pub use groups::Group;

use super::FormatError;
use super::bits::f16_to_f32;

/// One of llama.cpp's i-quant types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IQuant {
    /// 2048-point 8-value grid of -1, 0, 1 shifted by 1/8 per 32, 3-bit scales per 32:
    /// 1.5625 bits per weight. Needs an importance matrix.
    Iq1S,
    /// The same grid shifted per 8, 3-bit scales per 16: 1.75 bits per weight.
    Iq1M,
    /// 256-point 8-value grid, 7-bit sign groups, 4-bit scales per 32: 2.0625 bits per
    /// weight. Needs an importance matrix.
    Iq2Xxs,
    /// 512-point 8-value grid, 7-bit sign groups, 4-bit scales per 16: 2.3125 bits per
    /// weight. Needs an importance matrix.
    Iq2Xs,
    /// 1024-point 8-value grid, 8-bit sign groups, 4-bit scales per 16: 2.5625 bits per
    /// weight.
    Iq2S,
    /// 256-point 4-value grid, 7-bit sign groups, 4-bit scales per 32: 3.0625 bits per weight.
    Iq3Xxs,
    /// 512-point 4-value grid, 8-bit sign groups, 4-bit scales per 32: 3.4375 bits per weight.
    Iq3S,
    /// 6-bit scales per 32 of 16 non-linear levels under an f16 per 256: 4.25 bits per weight.
    Iq4Xs,
    /// An f16 scale per 32 of 16 non-linear levels: 4.5 bits per weight.
    Iq4Nl,
}

/// [`IQuant::encode_row`]'s work as a `pulp` operation, compiled with the widest vector
/// instructions the CPU has (every operation is IEEE-exact and unfused, so each path gives
/// the same bytes).
struct EncodeOp<'a> {
    q: IQuant,
    x: &'a [f32],
    importance: Option<&'a [f32]>,
    out: &'a mut [u8],
}

impl pulp::WithSimd for EncodeOp<'_> {
    type Output = Result<(), FormatError>;

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> Self::Output {
        let Self {
            q,
            x,
            importance,
            out,
        } = self;
        let required = || importance.ok_or(FormatError::NeedsImportance(q.name()));
        match q {
            IQuant::Iq1S => iq1::encode_s(x, required()?, out),
            IQuant::Iq1M => iq1::encode_m(x, importance, out),
            IQuant::Iq2Xxs => iq2::encode_xxs(x, required()?, out),
            IQuant::Iq2Xs => iq2::encode_xs_s(x, Some(required()?), false, out),
            IQuant::Iq2S => iq2::encode_xs_s(x, importance, true, out),
            IQuant::Iq3Xxs => iq3::encode_xxs(x, importance, out),
            IQuant::Iq3S => iq3::encode_s(x, importance, out),
            IQuant::Iq4Nl => {
                iq4::encode_nl(x, importance, out);
                Ok(())
            }
            IQuant::Iq4Xs => {
                iq4::encode_xs(x, importance, out);
                Ok(())
            }
        }
    }
}

/// Converts a table of small integers to f32 at compile time.
const fn f32s<const N: usize>(v: [i8; N]) -> [f32; N] {
    let mut out = [0.0f32; N];
    let mut i = 0;
    while i < N {
        out[i] = v[i] as f32;
        i += 1;
    }
    out
}

/// IQ4's levels.
const IQ4_LEVELS: [f32; 16] = f32s(tables::KVALUES_IQ4NL);
/// IQ1's levels with their shifts: `-1 - δ, -1 + δ, -δ, δ, 1 - δ, 1 + δ`.
const IQ1_LEVELS: [f32; 6] = [-1.125, -0.875, -0.125, 0.125, 0.875, 1.125];
/// IQ2's signed magnitudes.
const IQ2_LEVELS: [f32; 6] = f32s([-43, -25, -8, 8, 25, 43]);
/// IQ3_XXS's signed magnitudes.
const IQ3XXS_LEVELS: [f32; 16] = f32s([
    -62, -52, -44, -36, -28, -20, -12, -4, 4, 12, 20, 28, 36, 44, 52, 62,
]);
/// IQ3_S's signed odd magnitudes.
const IQ3S_LEVELS: [f32; 16] = f32s([-15, -13, -11, -9, -7, -5, -3, -1, 1, 3, 5, 7, 9, 11, 13, 15]);

impl IQuant {
    /// Every type, by bits per weight.
    pub const ALL: [Self; 9] = [
        Self::Iq1S,
        Self::Iq1M,
        Self::Iq2Xxs,
        Self::Iq2Xs,
        Self::Iq2S,
        Self::Iq3Xxs,
        Self::Iq3S,
        Self::Iq4Xs,
        Self::Iq4Nl,
    ];

    /// ggml's name of the type (`"IQ4_XS"`).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Iq1S => "IQ1_S",
            Self::Iq1M => "IQ1_M",
            Self::Iq2Xxs => "IQ2_XXS",
            Self::Iq2Xs => "IQ2_XS",
            Self::Iq2S => "IQ2_S",
            Self::Iq3Xxs => "IQ3_XXS",
            Self::Iq3S => "IQ3_S",
            Self::Iq4Xs => "IQ4_XS",
            Self::Iq4Nl => "IQ4_NL",
        }
    }

    /// Values per block: a row's length must be a multiple of it.
    #[must_use]
    pub const fn block_len(self) -> usize {
        match self {
            Self::Iq4Nl => 32,
            _ => 256,
        }
    }

    /// Bytes of ggml's block struct.
    #[must_use]
    pub const fn block_bytes(self) -> usize {
        match self {
            Self::Iq1S => iq1::S_BYTES,
            Self::Iq1M => iq1::M_BYTES,
            Self::Iq2Xxs => iq2::XXS_BYTES,
            Self::Iq2Xs => iq2::XS_BYTES,
            Self::Iq2S => iq2::S_BYTES,
            Self::Iq3Xxs => iq3::XXS_BYTES,
            Self::Iq3S => iq3::S_BYTES,
            Self::Iq4Nl => iq4::NL_BYTES,
            Self::Iq4Xs => iq4::XS_BYTES,
        }
    }

    /// Values under one step (one scale).
    #[must_use]
    pub const fn sub_len(self) -> usize {
        match self {
            Self::Iq1M | Self::Iq2Xs | Self::Iq2S => 16,
            Self::Iq1S | Self::Iq2Xxs | Self::Iq3Xxs | Self::Iq3S | Self::Iq4Nl | Self::Iq4Xs => 32,
        }
    }

    /// Whether llama.cpp refuses to quantize the type without an importance matrix (ggml's
    /// `ggml_quantize_requires_imatrix`).
    #[must_use]
    pub const fn needs_importance(self) -> bool {
        matches!(self, Self::Iq1S | Self::Iq2Xxs | Self::Iq2Xs)
    }

    /// The value of each code in units of the sub-block's step, ascending.
    #[must_use]
    pub const fn levels(self) -> &'static [f32] {
        match self {
            Self::Iq1S | Self::Iq1M => &IQ1_LEVELS,
            Self::Iq2Xxs | Self::Iq2Xs | Self::Iq2S => &IQ2_LEVELS,
            Self::Iq3Xxs => &IQ3XXS_LEVELS,
            Self::Iq3S => &IQ3S_LEVELS,
            Self::Iq4Nl | Self::Iq4Xs => &IQ4_LEVELS,
        }
    }

    /// The block's parts, payload first: `(name, bits)`.
    #[must_use]
    pub const fn parts(self) -> &'static [(&'static str, u32)] {
        match self {
            Self::Iq1S => &[
                ("payload: grid indices, 11 bit x 32", 32 * 11),
                ("shift signs: 1 bit x 8", 8),
                ("sub-block scales: 3 bit x 8", 24),
                ("super-block d: f16", 16),
            ],
            Self::Iq1M => &[
                ("payload: grid indices, 11 bit x 32", 32 * 11),
                ("shift signs: 1 bit x 32", 32),
                ("sub-block scales: 3 bit x 16", 48),
                ("super-block d: f16 (in the scales' top bits)", 16),
            ],
            Self::Iq2Xxs => &[
                ("payload: grid indices, 8 bit x 32", 32 * 8),
                ("signs: 7 bit x 32", 32 * 7),
                ("sub-block scales: 4 bit x 8", 32),
                ("super-block d: f16", 16),
            ],
            Self::Iq2Xs => &[
                ("payload: grid indices, 9 bit x 32", 32 * 9),
                ("signs: 7 bit x 32", 32 * 7),
                ("sub-block scales: 4 bit x 16", 64),
                ("super-block d: f16", 16),
            ],
            Self::Iq2S => &[
                ("payload: grid indices, 10 bit x 32", 32 * 10),
                ("signs: 1 bit x 256", 256),
                ("sub-block scales: 4 bit x 16", 64),
                ("super-block d: f16", 16),
            ],
            Self::Iq3Xxs => &[
                ("payload: grid indices, 8 bit x 64", 64 * 8),
                ("signs: 7 bit x 32", 32 * 7),
                ("sub-block scales: 4 bit x 8", 32),
                ("super-block d: f16", 16),
            ],
            Self::Iq3S => &[
                ("payload: grid indices, 9 bit x 64", 64 * 9),
                ("signs: 1 bit x 256", 256),
                ("sub-block scales: 4 bit x 8", 32),
                ("super-block d: f16", 16),
            ],
            Self::Iq4Xs => &[
                ("payload: 4-bit level indices", 4 * 256),
                ("sub-block scales: 6 bit x 8", 48),
                ("super-block d: f16", 16),
            ],
            Self::Iq4Nl => &[("payload: 4-bit level indices", 4 * 32), ("d: f16", 16)],
        }
    }

    /// Encodes one row into ggml's bytes (`out` holds the row's blocks). `importance` is
    /// the per-column weight vector llama.cpp takes from an importance matrix
    /// (`quant_weights`), one per value of the row.
    pub fn encode_row(
        self,
        x: &[f32],
        importance: Option<&[f32]>,
        out: &mut [u8],
    ) -> Result<(), FormatError> {
        FormatError::whole_blocks(self.name(), x.len(), self.block_len())?;
        let want = x.len() / self.block_len() * self.block_bytes();
        if out.len() != want {
            return Err(FormatError::ByteLength {
                format: self.name(),
                want,
                got: out.len(),
            });
        }
        if let Some(w) = importance
            && w.len() != x.len()
        {
            return Err(FormatError::WeightsLength {
                want: x.len(),
                got: w.len(),
            });
        }
        if self.needs_importance() && importance.is_none() {
            return Err(FormatError::NeedsImportance(self.name()));
        }
        pulp::Arch::new().dispatch(EncodeOp {
            q: self,
            x,
            importance,
            out,
        })
    }

    /// Reads one row from ggml's bytes (whole blocks): a code per value (its index in
    /// [`Self::levels`]) into `codes`, a step per sub-block into `steps`.
    pub fn unpack_row(self, bytes: &[u8], codes: &mut [u8], steps: &mut Vec<f32>) {
        steps.clear();
        let bb = self.block_bytes();
        match self {
            Self::Iq1S => iq1::unpack(bytes, false, codes, steps),
            Self::Iq1M => iq1::unpack(bytes, true, codes, steps),
            Self::Iq2Xxs => iq2::unpack(bytes, iq2::Kind::Xxs, codes, steps),
            Self::Iq2Xs => iq2::unpack(bytes, iq2::Kind::Xs, codes, steps),
            Self::Iq2S => iq2::unpack(bytes, iq2::Kind::S, codes, steps),
            Self::Iq3Xxs => iq3::unpack(bytes, false, codes, steps),
            Self::Iq3S => iq3::unpack(bytes, true, codes, steps),
            Self::Iq4Nl => {
                iq4::indices(bytes, false, codes);
                for b in bytes.chunks_exact(bb) {
                    steps.push(f16_to_f32(u16::from_le_bytes([b[0], b[1]])));
                }
            }
            Self::Iq4Xs => {
                iq4::indices(bytes, true, codes);
                for b in bytes.chunks_exact(bb) {
                    let d = f16_to_f32(u16::from_le_bytes([b[0], b[1]]));
                    for ib in 0..8 {
                        steps.push(d * iq4::xs_scale(b, ib) as f32);
                    }
                }
            }
        }
    }

    /// Reconstructs one row from its codes and steps, as the reference dequantizes it.
    pub fn decode(self, codes: &[u8], steps: &[f32], out: &mut [f32]) {
        let levels = self.levels();
        for ((c, o), &s) in codes
            .chunks(self.sub_len())
            .zip(out.chunks_mut(self.sub_len()))
            .zip(steps)
        {
            for (o, &c) in o.iter_mut().zip(c) {
                *o = s * levels[usize::from(c) % levels.len()];
            }
        }
    }
}
