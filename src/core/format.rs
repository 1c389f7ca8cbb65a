//! The formats models ship in, encoded and decoded exactly as their reference
//! implementations do: llama.cpp's k-quants (Q2_K..Q6_K), MXFP4 and NVFP4 (ggml), the OCP
//! Microscaling formats ([`mx`]: MXFP8, MXFP6, MXFP4 with the OCP rounding, MXINT8), NF4
//! (bitsandbytes, with double quantization in [`nf4::DoubleQuant`]), FP8 E4M3/E5M2 ([`fp8`],
//! per tensor, channel or 2-D tile), two-level NVFP4 with a tensor scale ([`nvfp4_two`],
//! compressed-tensors' and ModelOpt's), llama.cpp's i-quants ([`iquant`]) and ternary types
//! ([`ternary`]), and readers for ggml's legacy Q4_0..Q8_0 blocks.
//!
//! A row format ([`Format`]) works on one row at a time, so a caller can run rows in
//! parallel: [`Format::encode_row_into`] fills reusable buffers with the codes (one byte per
//! value), the block metadata ([`Meta`]) and the reconstruction, without allocating after
//! the first row. [`Format::pack`] and [`Format::unpack`] convert to and from ggml's bytes
//! (what a GGUF file stores). [`Format::layout`] gives bits per weight from the block layout,
//! and [`Format::grid`] the values the codes stand for.
//!
//! ```
//! use quantscope::core::format::{Encoded, Format};
//!
//! let row: Vec<f32> = (0..256).map(|i| ((i as f32) * 0.37).sin()).collect();
//! let mut enc = Encoded::default();
//! let mut values = vec![0.0f32; row.len()];
//! Format::Q4K.encode_row_into(&row, &mut enc, &mut values).unwrap();
//! assert_eq!(enc.codes.len(), 256);
//! assert_eq!(Format::Q4K.layout().bits_per_weight(), 4.5);
//! assert_eq!(enc.decode(), values);
//! ```

pub mod bits;
mod finite;
pub mod fp4;
pub mod fp8;
pub mod iquant;
pub mod kquant;
mod layout;
pub mod legacy;
mod measure;
pub mod minifloat;
pub mod mx;
pub mod nf4;
pub mod nvfp4_two;
pub mod registry;
mod row;
pub mod ternary;

pub use fp8::{Fp8Encoded, Fp8Formula, Fp8Kind, Fp8Layout, Fp8Scheme};
pub use iquant::IQuant;
pub use kquant::{KQuant, SuperBlock};
pub use layout::{Grid, Layout, Part, Usage};
pub use legacy::{Legacy, LegacyBlock};
pub use measure::{RowError, Summary, run_rows, run_rows_weighted};
pub use mx::MxKind;
pub use ternary::Ternary;

/// The importance of each value of a row, as llama.cpp's quantizers take it
/// (`quant_weights`): one finite, non-negative weight per value (per column of the matrix),
/// or `None` for the reference quantization without one. A format's encoder that reads it
/// takes this type ([`Format::encode_row_weighted`]); the row of an importance vector for a
/// matrix row is [`crate::core::importance::Importance::row`].
pub type QuantWeights<'a> = Option<&'a [f32]>;

/// A format whose blocks lie along a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// A llama.cpp k-quant.
    K(KQuant),
    /// ggml's MXFP4: 32 E2M1 values under one E8M0 exponent.
    Mxfp4,
    /// ggml's NVFP4: 16 E2M1 values under one UE4M3 scale, 64 per block.
    Nvfp4,
    /// An OCP Microscaling format: 32 elements under one E8M0 scale.
    Mx(MxKind),
    /// bitsandbytes' NF4: 64 values under one f32 absmax (see [`nf4`] for double
    /// quantization of the absmax values).
    Nf4,
    /// A legacy ggml block type: decode only ([`Format::unpack`]), since the core's presets
    /// encode these.
    Legacy(Legacy),
    /// A llama.cpp i-quant (a codebook of lattice points, or IQ4's 16 non-linear levels).
    I(IQuant),
    /// A llama.cpp ternary type: -1, 0 or 1 times a block's f16 absmax.
    T(Ternary),
}

impl Format {
    /// Q2_K.
    pub const Q2K: Self = Self::K(KQuant::Q2K);
    /// Q3_K.
    pub const Q3K: Self = Self::K(KQuant::Q3K);
    /// Q4_K.
    pub const Q4K: Self = Self::K(KQuant::Q4K);
    /// Q5_K.
    pub const Q5K: Self = Self::K(KQuant::Q5K);
    /// Q6_K.
    pub const Q6K: Self = Self::K(KQuant::Q6K);

    /// The k-quants, MXFP4, NVFP4, NF4 and the OCP MX formats, by bits per weight (the
    /// i-quants and ternary types, which also encode, are [`IQuant::ALL`] and
    /// [`Ternary::ALL`]).
    pub const ENCODERS: [Self; 14] = [
        Self::Q2K,
        Self::Q3K,
        Self::Mxfp4,
        Self::Mx(MxKind::Fp4E2M1),
        Self::Q4K,
        Self::Nvfp4,
        Self::Nf4,
        Self::Q5K,
        Self::Mx(MxKind::Fp6E2M3),
        Self::Mx(MxKind::Fp6E3M2),
        Self::Q6K,
        Self::Mx(MxKind::Fp8E4M3),
        Self::Mx(MxKind::Fp8E5M2),
        Self::Mx(MxKind::Int8),
    ];

    /// The format's usual name (`"Q4_K"`, `"MXFP4"`, `"NF4"`).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::K(k) => k.name(),
            Self::Mxfp4 => "MXFP4",
            Self::Nvfp4 => "NVFP4",
            Self::Mx(k) => k.name(),
            Self::Nf4 => "NF4",
            Self::Legacy(l) => l.name(),
            Self::I(q) => q.name(),
            Self::T(t) => t.name(),
        }
    }

    /// Values per block: a row's length must be a multiple of it.
    #[must_use]
    pub const fn block_len(self) -> usize {
        match self {
            Self::K(_) => kquant::QK_K,
            Self::Mxfp4 | Self::Legacy(_) => 32,
            Self::Mx(_) => mx::MX_BLOCK,
            Self::Nvfp4 | Self::Nf4 => 64,
            Self::I(q) => q.block_len(),
            Self::T(_) => ternary::BLOCK,
        }
    }

    /// Bytes per block in the stored layout (NF4: 32 bytes of codes and the f32 absmax).
    #[must_use]
    pub const fn block_bytes(self) -> usize {
        match self {
            Self::K(k) => k.block_bytes(),
            Self::Mxfp4 => fp4::MXFP4_BYTES,
            Self::Nvfp4 => fp4::NVFP4_BYTES,
            Self::Mx(k) => k.block_bytes(),
            Self::Nf4 => 36,
            Self::Legacy(l) => l.block_bytes(),
            Self::I(q) => q.block_bytes(),
            Self::T(t) => t.block_bytes(),
        }
    }

    /// The block layout and its bits per weight.
    #[must_use]
    pub fn layout(self) -> Layout {
        row::layout(self)
    }

    /// The values the codes stand for.
    #[must_use]
    pub fn grid(self) -> Grid {
        row::grid(self)
    }

    /// Checks that a row of `len` values is made of whole blocks.
    pub fn check_len(self, len: usize) -> Result<(), FormatError> {
        FormatError::whole_blocks(self.name(), len, self.block_len())
    }

    /// Encodes a row into `out` (its buffers are reused) and its reconstruction into
    /// `values` (one per value of `x`), as the reference does without an importance vector.
    /// A legacy type is [`FormatError::DecodeOnly`] here (the presets encode it).
    pub fn encode_row_into(
        self,
        x: &[f32],
        out: &mut Encoded,
        values: &mut [f32],
    ) -> Result<(), FormatError> {
        self.encode_row_weighted(x, None, out, values)
    }

    /// [`Format::encode_row_into`] with an importance vector (see [`QuantWeights`]): the
    /// k-quants, the i-quants and Q4_0 to Q5_1 quantize as `llama-quantize --imatrix` does;
    /// the formats whose reference does not read one ([`Format::reads_importance`]) ignore it.
    /// The types llama.cpp refuses without one ([`Format::needs_importance`]) are
    /// [`FormatError::NeedsImportance`] without it.
    pub fn encode_row_weighted(
        self,
        x: &[f32],
        weights: QuantWeights<'_>,
        out: &mut Encoded,
        values: &mut [f32],
    ) -> Result<(), FormatError> {
        self.check_len(x.len())?;
        if values.len() != x.len() {
            return Err(FormatError::BufferLength {
                want: x.len(),
                got: values.len(),
            });
        }
        if let Some(w) = weights
            && w.len() != x.len()
        {
            return Err(FormatError::WeightsLength {
                want: x.len(),
                got: w.len(),
            });
        }
        let weights = weights.filter(|_| self.reads_importance());
        row::encode(self, x, weights, out, values)?;
        finite::check(self, x, out, values)
    }

    /// The reference quantizer reads an importance vector: the k-quants, the i-quants and
    /// Q4_0, Q4_1, Q5_0, Q5_1 (ggml's `quant_weights`). MXFP4, NVFP4 (ggml ignores it), the
    /// OCP MX formats, NF4, Q8_0 and the ternary types do not.
    #[must_use]
    pub const fn reads_importance(self) -> bool {
        match self {
            Self::K(_) | Self::I(_) => true,
            Self::Legacy(l) => l.reads_importance(),
            Self::Mxfp4 | Self::Nvfp4 | Self::Nf4 | Self::Mx(_) | Self::T(_) => false,
        }
    }

    /// llama.cpp refuses to quantize the type without an importance matrix (ggml's
    /// `ggml_quantize_requires_imatrix`: IQ2_XXS, IQ2_XS, IQ1_S).
    #[must_use]
    pub const fn needs_importance(self) -> bool {
        match self {
            Self::I(q) => q.needs_importance(),
            _ => false,
        }
    }

    /// Points in the format's codebook, for a type whose codes pick points of several
    /// values (the i-quant lattice types); `None` for a format whose codes are per value.
    #[must_use]
    pub const fn grid_points(self) -> Option<usize> {
        match self {
            Self::I(q) => q.grid_points(),
            _ => None,
        }
    }

    /// Encodes a row.
    pub fn encode_row(self, x: &[f32]) -> Result<Encoded, FormatError> {
        let mut out = Encoded::default();
        let mut values = vec![0.0f32; x.len()];
        self.encode_row_into(x, &mut out, &mut values)?;
        Ok(out)
    }

    /// ggml's bytes of an encoded row (NF4: bitsandbytes' nibbles, high nibble first, then
    /// the f32 absmax values; see [`nf4`]).
    #[must_use]
    pub fn pack(self, e: &Encoded) -> Vec<u8> {
        row::pack(self, e)
    }

    /// Reads a row of `n` values from ggml's bytes.
    pub fn unpack(self, bytes: &[u8], n: usize) -> Result<Encoded, FormatError> {
        self.check_len(n)?;
        let want = n / self.block_len() * self.block_bytes();
        if bytes.len() != want {
            return Err(FormatError::ByteLength {
                format: self.name(),
                want,
                got: bytes.len(),
            });
        }
        Ok(row::unpack(self, bytes, n))
    }
}

/// Per-block metadata of an encoded row.
#[derive(Debug, Clone, PartialEq)]
pub enum Meta {
    /// k-quant super-blocks.
    K(Vec<SuperBlock>),
    /// MXFP4: one E8M0 exponent byte per 32 values.
    Mxfp4(Vec<u8>),
    /// NVFP4: four UE4M3 scale bytes per 64 values.
    Nvfp4(Vec<[u8; 4]>),
    /// An MX format: one E8M0 scale byte per 32 values.
    Mx(Vec<u8>),
    /// NF4: one f32 absmax per 64 values.
    Nf4(Vec<f32>),
    /// Legacy ggml blocks.
    Legacy(Vec<LegacyBlock>),
    /// The i-quants and ternary types: the row as ggml's bytes (its grid indices, signs and
    /// scales), and the step of each sub-block (a ternary block's `d`).
    Packed {
        /// ggml's bytes of the row.
        bytes: Vec<u8>,
        /// One step per sub-block ([`IQuant::sub_len`] values, 256 for a ternary type).
        steps: Vec<f32>,
    },
}

impl Default for Meta {
    fn default() -> Self {
        Self::Nf4(Vec::new())
    }
}

/// An encoded row: the format, one code per value and the blocks' metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct Encoded {
    /// The format the row is in.
    pub format: Format,
    /// One stored code per value: k-quants and legacy types the unsigned stored code
    /// (subtract the type's code offset for the signed level; Q8_0 the int8's byte), E2M1
    /// and NF4 the 4-bit index, an MX element its bit pattern (MXINT8 the int8's byte), an
    /// i-quant or ternary type the index of the value's signed level in [`Format::grid`].
    pub codes: Vec<u8>,
    /// The blocks' metadata.
    pub meta: Meta,
}

impl Default for Encoded {
    fn default() -> Self {
        Self {
            format: Format::Nf4,
            codes: Vec::new(),
            meta: Meta::default(),
        }
    }
}

impl Encoded {
    /// Reconstructs the row into `out` (one per code), bit for bit as the reference.
    pub fn decode_into(&self, out: &mut [f32]) {
        row::decode(self, out);
    }

    /// Reconstructs the row.
    #[must_use]
    pub fn decode(&self) -> Vec<f32> {
        let mut out = vec![0.0f32; self.codes.len()];
        self.decode_into(&mut out);
        out
    }

    /// For a codebook format ([`Format::grid_points`]): the distinct points the row uses,
    /// and the points the codebook has.
    #[must_use]
    pub fn codebook_usage(&self) -> Option<(usize, usize)> {
        match (self.format, &self.meta) {
            (Format::I(q), Meta::Packed { bytes, .. }) => q.points_used(bytes).zip(q.grid_points()),
            _ => None,
        }
    }

    /// Per sub-block (the values that share one effective scale): the first value's index,
    /// the count, the step that multiplies a grid value, and the minimum subtracted.
    #[must_use]
    pub fn sub_blocks(&self) -> Vec<SubBlock> {
        row::sub_blocks(self)
    }
}

/// The effective scale of a run of values: `value = grid[code] * step - min`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SubBlock {
    /// Index of the first value in the row.
    pub start: usize,
    /// Number of values.
    pub len: usize,
    /// What a grid value is multiplied by (k-quants: `d * scale`; E2M1 and MX elements: the
    /// decoded E8M0 or UE4M3 scale; NF4: the absmax).
    pub step: f32,
    /// What is subtracted after (k-quants with mins: `dmin * min`; Q4_1/Q5_1: minus `m`).
    pub min: f32,
}

/// Why a row could not be encoded or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    /// The row is not made of whole blocks.
    #[error("{format} needs rows of a multiple of {block} values, got {len}")]
    RowLength {
        /// The format.
        format: &'static str,
        /// The row's length.
        len: usize,
        /// Values per block.
        block: usize,
    },
    /// The output buffer has the wrong length.
    #[error("output buffer holds {got} values, the row has {want}")]
    BufferLength {
        /// Values in the row.
        want: usize,
        /// Values the buffer holds.
        got: usize,
    },
    /// The byte slice does not hold the row's blocks exactly.
    #[error("{format}: expected {want} bytes, got {got}")]
    ByteLength {
        /// The format.
        format: &'static str,
        /// Bytes the row's blocks take.
        want: usize,
        /// Bytes given.
        got: usize,
    },
    /// The format has no encoder here (a legacy type without an importance vector).
    #[error("{0} is decode-only here")]
    DecodeOnly(&'static str),
    /// llama.cpp refuses to quantize the type without an importance matrix.
    #[error(
        "{0} needs an importance matrix: llama.cpp refuses to quantize it without one \
         (give one with --imatrix FILE)"
    )]
    NeedsImportance(&'static str),
    /// A lattice search found no grid point, which happens only when the arithmetic
    /// overflows; llama.cpp aborts there.
    #[error(
        "{0}: the lattice search found no grid point (the arithmetic overflowed on values \
         this large); llama.cpp aborts here"
    )]
    OffGrid(&'static str),
    /// The reference gives this tensor no finite reconstruction (two-level NVFP4).
    #[error(transparent)]
    Refused(#[from] nvfp4_two::Refused),
    /// An importance vector of another length than the row.
    #[error("importance holds {got} values, the row has {want}")]
    WeightsLength {
        /// Values in the row.
        want: usize,
        /// Values of importance.
        got: usize,
    },
    /// A block of finite values whose reference encoding comes back NaN or infinite (ggml's
    /// k-quants on values too large for their f16 super-block scales or their search): the
    /// row is refused rather than reported as NaN.
    #[error("{}{unit} {block} (columns {}..{}): {reason}", row_prefix(*.row), .cols.0, .cols.1)]
    NotFinite {
        /// The row, where the caller knows it.
        row: Option<usize>,
        /// What a block is called (`"super-block"`, `"block"`).
        unit: &'static str,
        /// The block's index in the row.
        block: usize,
        /// The block's columns, `[start, end)`.
        cols: (usize, usize),
        /// What the reference does there, and why.
        reason: String,
    },
}

impl FormatError {
    /// Checks that a row of `len` values is made of whole blocks of `block` values:
    /// [`FormatError::RowLength`], naming `format`, when it is not.
    pub fn whole_blocks(format: &'static str, len: usize, block: usize) -> Result<(), Self> {
        if len.is_multiple_of(block) {
            Ok(())
        } else {
            Err(Self::RowLength { format, len, block })
        }
    }

    /// The same error, naming row `row` where it names a block.
    #[must_use]
    pub fn in_row(self, row: usize) -> Self {
        match self {
            Self::NotFinite {
                unit,
                block,
                cols,
                reason,
                ..
            } => Self::NotFinite {
                row: Some(row),
                unit,
                block,
                cols,
                reason,
            },
            other => other,
        }
    }
}

/// `"row 3, "` before a block's name, when the row is known.
fn row_prefix(row: Option<usize>) -> String {
    row.map(|r| format!("row {r}, ")).unwrap_or_default()
}
