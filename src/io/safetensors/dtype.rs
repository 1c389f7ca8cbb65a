//! The element types safetensors defines, with their names and sizes.

use std::fmt;

/// The element types safetensors defines, by the name the header spells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dtype {
    /// `BOOL`: one byte per value.
    Bool,
    /// `U8`.
    U8,
    /// `I8`.
    I8,
    /// `I16`.
    I16,
    /// `U16`.
    U16,
    /// `I32`.
    I32,
    /// `U32`.
    U32,
    /// `I64`.
    I64,
    /// `U64`.
    U64,
    /// `F4`: 4-bit float (two values per byte).
    F4,
    /// `F6_E2M3`: 6-bit float.
    F6E2M3,
    /// `F6_E3M2`: 6-bit float.
    F6E3M2,
    /// `F8_E5M2`.
    F8E5M2,
    /// `F8_E4M3`.
    F8E4M3,
    /// `F8_E8M0`.
    F8E8M0,
    /// `F8_E4M3FNUZ`.
    F8E4M3Fnuz,
    /// `F8_E5M2FNUZ`.
    F8E5M2Fnuz,
    /// `F16`: IEEE half precision.
    F16,
    /// `BF16`: bfloat16.
    Bf16,
    /// `F32`.
    F32,
    /// `F64`.
    F64,
    /// `C64`: complex of two f32.
    C64,
}

impl Dtype {
    /// Every dtype with its header name and size in bits.
    const TABLE: [(Self, &'static str, u64); 22] = [
        (Self::Bool, "BOOL", 8),
        (Self::U8, "U8", 8),
        (Self::I8, "I8", 8),
        (Self::I16, "I16", 16),
        (Self::U16, "U16", 16),
        (Self::I32, "I32", 32),
        (Self::U32, "U32", 32),
        (Self::I64, "I64", 64),
        (Self::U64, "U64", 64),
        (Self::F4, "F4", 4),
        (Self::F6E2M3, "F6_E2M3", 6),
        (Self::F6E3M2, "F6_E3M2", 6),
        (Self::F8E5M2, "F8_E5M2", 8),
        (Self::F8E4M3, "F8_E4M3", 8),
        (Self::F8E8M0, "F8_E8M0", 8),
        (Self::F8E4M3Fnuz, "F8_E4M3FNUZ", 8),
        (Self::F8E5M2Fnuz, "F8_E5M2FNUZ", 8),
        (Self::F16, "F16", 16),
        (Self::Bf16, "BF16", 16),
        (Self::F32, "F32", 32),
        (Self::F64, "F64", 64),
        (Self::C64, "C64", 64),
    ];

    /// The dtype a header names, if safetensors defines it.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::TABLE
            .iter()
            .find(|(_, n, _)| *n == name)
            .map(|(d, _, _)| *d)
    }

    /// The name as the header spells it (`F32`, `BF16`, `F8_E4M3`, ...).
    #[must_use]
    pub fn name(self) -> &'static str {
        Self::TABLE
            .iter()
            .find(|(d, _, _)| *d == self)
            .map_or("?", |(_, n, _)| n)
    }

    /// Size of one value in bits.
    #[must_use]
    pub fn bits(self) -> u64 {
        Self::TABLE
            .iter()
            .find(|(d, _, _)| *d == self)
            .map_or(8, |(_, _, b)| *b)
    }

    /// True for the floating types quantscope loads: F16, BF16, F32 and F64.
    #[must_use]
    pub fn is_loadable(self) -> bool {
        matches!(self, Self::F16 | Self::Bf16 | Self::F32 | Self::F64)
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
