//! ggml's tensor types as GGUF numbers them, with their block sizes (gguf-py's
//! `GGML_QUANT_SIZES`), and the types of GGUF's metadata values.

use std::fmt;

/// A ggml tensor type: its number in the file, name and block layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GgmlType {
    /// The number a tensor info stores.
    pub id: u32,
    /// The name llama.cpp and gguf-py use (`F32`, `Q4_K`, `MXFP4`).
    pub name: &'static str,
    /// Values per block (1 for the plain types).
    pub block_len: u32,
    /// Bytes per block.
    pub block_bytes: u32,
}

/// Every type gguf-py 0.19 knows, by number.
const TYPES: [GgmlType; 34] = [
    t(0, "F32", 1, 4),
    t(1, "F16", 1, 2),
    t(2, "Q4_0", 32, 18),
    t(3, "Q4_1", 32, 20),
    t(6, "Q5_0", 32, 22),
    t(7, "Q5_1", 32, 24),
    t(8, "Q8_0", 32, 34),
    t(9, "Q8_1", 32, 40),
    t(10, "Q2_K", 256, 84),
    t(11, "Q3_K", 256, 110),
    t(12, "Q4_K", 256, 144),
    t(13, "Q5_K", 256, 176),
    t(14, "Q6_K", 256, 210),
    t(15, "Q8_K", 256, 292),
    t(16, "IQ2_XXS", 256, 66),
    t(17, "IQ2_XS", 256, 74),
    t(18, "IQ3_XXS", 256, 98),
    t(19, "IQ1_S", 256, 50),
    t(20, "IQ4_NL", 32, 18),
    t(21, "IQ3_S", 256, 110),
    t(22, "IQ2_S", 256, 82),
    t(23, "IQ4_XS", 256, 136),
    t(24, "I8", 1, 1),
    t(25, "I16", 1, 2),
    t(26, "I32", 1, 4),
    t(27, "I64", 1, 8),
    t(28, "F64", 1, 8),
    t(29, "IQ1_M", 256, 56),
    t(30, "BF16", 1, 2),
    t(34, "TQ1_0", 256, 54),
    t(35, "TQ2_0", 256, 66),
    t(39, "MXFP4", 32, 17),
    t(40, "NVFP4", 64, 36),
    t(41, "Q1_0", 128, 18),
];

const fn t(id: u32, name: &'static str, block_len: u32, block_bytes: u32) -> GgmlType {
    GgmlType {
        id,
        name,
        block_len,
        block_bytes,
    }
}

impl GgmlType {
    /// The type numbered `id`, if ggml defines it.
    #[must_use]
    pub fn from_id(id: u32) -> Option<Self> {
        TYPES.iter().copied().find(|t| t.id == id)
    }

    /// The type named `name` (as [`GgmlType::name`]), if ggml defines it.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        TYPES.iter().copied().find(|t| t.name == name)
    }

    /// True for the floating types read as values: F32, F16, BF16, F64.
    #[must_use]
    pub fn is_float(self) -> bool {
        matches!(self.name, "F32" | "F16" | "BF16" | "F64")
    }

    /// True for block-quantized types (more than one value per block).
    #[must_use]
    pub fn is_quantized(self) -> bool {
        self.block_len > 1
    }

    /// Bits per weight of the stored layout: block bytes x 8 / values per block.
    #[must_use]
    pub fn bits_per_weight(self) -> f64 {
        f64::from(self.block_bytes) * 8.0 / f64::from(self.block_len)
    }
}

impl fmt::Display for GgmlType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// The type of a metadata value, as GGUF numbers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueType {
    /// 0: `u8`.
    U8,
    /// 1: `i8`.
    I8,
    /// 2: `u16`.
    U16,
    /// 3: `i16`.
    I16,
    /// 4: `u32`.
    U32,
    /// 5: `i32`.
    I32,
    /// 6: `f32`.
    F32,
    /// 7: a bool (one byte, 0 or 1).
    Bool,
    /// 8: a string (`u64` length, then UTF-8 bytes).
    String,
    /// 9: an array (element type, `u64` count, elements).
    Array,
    /// 10: `u64`.
    U64,
    /// 11: `i64`.
    I64,
    /// 12: `f64`.
    F64,
}

impl ValueType {
    /// The type numbered `id`, if GGUF defines it.
    #[must_use]
    pub fn from_id(id: u32) -> Option<Self> {
        Some(match id {
            0 => Self::U8,
            1 => Self::I8,
            2 => Self::U16,
            3 => Self::I16,
            4 => Self::U32,
            5 => Self::I32,
            6 => Self::F32,
            7 => Self::Bool,
            8 => Self::String,
            9 => Self::Array,
            10 => Self::U64,
            11 => Self::I64,
            12 => Self::F64,
            _ => return None,
        })
    }

    /// The fewest bytes a value of this type takes in the file (a string's or an array's
    /// length field alone; an array's element type and count).
    #[must_use]
    pub fn min_bytes(self) -> u64 {
        match self {
            Self::U8 | Self::I8 | Self::Bool => 1,
            Self::U16 | Self::I16 => 2,
            Self::U32 | Self::I32 | Self::F32 => 4,
            Self::U64 | Self::I64 | Self::F64 | Self::String => 8,
            Self::Array => 12,
        }
    }

    /// The name gguf-py uses (`UINT32`, `STRING`, `ARRAY`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::U8 => "UINT8",
            Self::I8 => "INT8",
            Self::U16 => "UINT16",
            Self::I16 => "INT16",
            Self::U32 => "UINT32",
            Self::I32 => "INT32",
            Self::F32 => "FLOAT32",
            Self::Bool => "BOOL",
            Self::String => "STRING",
            Self::Array => "ARRAY",
            Self::U64 => "UINT64",
            Self::I64 => "INT64",
            Self::F64 => "FLOAT64",
        }
    }
}
