//! What to quantize to and how: bit width, code range, scheme, granularity, clipping, the
//! storage of scales and zero-points, and the conventions on which libraries disagree.
//!
//! A [`Config`] is plain data. [`Config::validate`] checks it and [`Config::code_range`]
//! resolves the integer range `[qmin, qmax]`.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::core::format::registry::FormatInfo;

/// Symmetric (zero maps to a fixed code) or asymmetric (affine, the range's ends map to the
/// ends of the code range).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scheme {
    /// Scale from the largest magnitude; the zero point is fixed.
    Symmetric,
    /// Scale from `max - min`; the zero point shifts the range.
    Asymmetric,
}

/// Which integer codes are used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RangeKind {
    /// Every code of the type: int4 is `[-8, 7]`, uint4 `[0, 15]`.
    Full,
    /// Signed types drop the most negative code so the range is symmetric: int4 `[-7, 7]`,
    /// int8 `[-127, 127]`. Unsigned types are unchanged.
    Narrow,
    /// An explicit range inside the type, as ONNX Runtime's and PyTorch's `reduce_range` use.
    Custom {
        /// Smallest code.
        qmin: i32,
        /// Largest code.
        qmax: i32,
    },
}

/// How scales, zero-points and codes are laid out over the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Granularity {
    /// One block: the whole tensor.
    Tensor,
    /// One block per channel; see [`Config::axis`].
    Channel,
    /// Blocks of `G` consecutive values along each row; the last group of a row is shorter
    /// when `G` does not divide the row length.
    Group(usize),
}

impl fmt::Display for Granularity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Tensor => f.write_str("tensor"),
            Self::Channel => f.write_str("channel"),
            Self::Group(g) => write!(f, "group:{g}"),
        }
    }
}

impl FromStr for Granularity {
    type Err = ConfigError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        match t.as_str() {
            "tensor" | "per-tensor" => Ok(Self::Tensor),
            "channel" | "per-channel" => Ok(Self::Channel),
            _ => {
                let g = t
                    .strip_prefix("group:")
                    .or_else(|| t.strip_prefix("g"))
                    .and_then(|g| g.parse::<usize>().ok())
                    .ok_or_else(|| ConfigError::BadGranularity(s.to_string()))?;
                if g == 0 {
                    return Err(ConfigError::BadGranularity(s.to_string()));
                }
                Ok(Self::Group(g))
            }
        }
    }
}

impl Serialize for Granularity {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Which matrix axis one channel runs along for [`Granularity::Channel`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Axis {
    /// Axis 0: one scale per row (output channel), the usual choice for weights.
    Rows,
    /// Axis 1: one scale per column (input channel).
    Columns,
}

/// Where the range that sets the scale comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RangeSource {
    /// The block's own min and max.
    Tight,
    /// Min and max widened to include 0, as ONNX Runtime, PyTorch and MLAS do (so the zero
    /// point is always a storable code).
    IncludeZero,
}

/// How the real range is cut before the scale is formed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "value")]
pub enum Clipping {
    /// Min-max: nothing is clipped.
    None,
    /// Keep the central `P` percent of each block (symmetric: the P-th percentile of `|x|`;
    /// asymmetric: the `(100-P)/2` and `(100+P)/2` percentiles).
    Percentile(f64),
    /// Search shrink factors of the min-max range for the one with the least squared error.
    Mse,
    /// [`Clipping::Mse`]'s candidates and tie rule, each value's squared error weighted by
    /// its column's importance (quantscope's own; no library clips this way). Needs an
    /// importance vector: [`crate::core::analyse_weighted`] refuses it without one.
    MseWeighted,
}

/// Rounding of a real ratio to an integer code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rounding {
    /// Ties to even (numpy, ONNX Runtime, PyTorch).
    HalfEven,
    /// Ties away from zero (C `roundf`, GGUF Q8_0, MLAS).
    HalfAway,
    /// `trunc(x + 0.5)` after the zero point is added (GGUF Q4/Q5 formats).
    HalfUp,
}

/// How a stored scale (or GGUF offset) is rounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ScaleDtype {
    /// IEEE single precision: 32 bits.
    F32,
    /// IEEE half precision: 16 bits (GGUF, f16 MatMulNBits).
    F16,
    /// bfloat16: 16 bits.
    Bf16,
}

impl ScaleDtype {
    /// Bits one stored scale takes.
    #[must_use]
    pub fn bits(self) -> u32 {
        match self {
            Self::F32 => 32,
            Self::F16 | Self::Bf16 => 16,
        }
    }

    /// The type's name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::F32 => "f32",
            Self::F16 => "f16",
            Self::Bf16 => "bf16",
        }
    }

    /// Rounds an `f32` to this storage type and back (round to nearest even).
    #[must_use]
    #[inline]
    pub fn round(self, x: f32) -> f32 {
        match self {
            Self::F32 => x,
            Self::F16 => half::f16::from_f32(x).to_f32(),
            Self::Bf16 => half::bf16::from_f32(x).to_f32(),
        }
    }
}

/// How the symmetric scale is formed from the block's largest magnitude `m`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SymScale {
    /// `m / max(|qmin|, |qmax|)`: the seed documents (int8 full range gives `m / 128`, and
    /// `+m` then clips to 127).
    MaxCode,
    /// `m / ((qmax - qmin) / 2)`: ONNX Runtime and PyTorch (`m / 7.5` for int4 `[-8, 7]`,
    /// `m / 127.5` for PyTorch's qint8).
    HalfSpan,
    /// `v / qmin` where `v` is the element of largest magnitude *with its sign* (first on
    /// ties): GGUF Q4_0/Q5_0 and MLAS symmetric; `v` lands exactly on `qmin`, and the scale
    /// can be negative.
    SignedExtreme,
    /// Like [`SymScale::SignedExtreme`] but `v` is `max` when `|max| > |min|` and `min`
    /// otherwise (MLAS `range2scale`: a tie picks `min`).
    SignedMinMax,
}

/// The zero point of a symmetric scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SymZeroPoint {
    /// Always 0 (unsigned codes then clip every negative value to 0).
    Zero,
    /// `round((qmin + qmax) / 2)` with ties to even: 128 for uint8, 8 for uint4, 0 for int4.
    MidHalfEven,
    /// `floor((qmin + qmax) / 2)`: PyTorch with a custom range (uint4 gives 7).
    MidFloor,
}

impl SymZeroPoint {
    /// The zero point this rule gives the code range `[qmin, qmax]`.
    #[must_use]
    pub fn of_codes(self, qmin: i32, qmax: i32) -> i32 {
        match self {
            Self::Zero => 0,
            Self::MidHalfEven => {
                f64::midpoint(f64::from(qmin), f64::from(qmax)).round_ties_even() as i32
            }
            Self::MidFloor => (qmin + qmax).div_euclid(2),
        }
    }
}

/// How the asymmetric zero point is formed from the range minimum `lo` and scale `s`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AsymZeroPoint {
    /// `round(qmin - lo / s)` (ONNX Runtime, MLAS, the seed calculator).
    RoundOfShift,
    /// `qmin - round(lo / s)` (PyTorch).
    ShiftOfRound,
    /// No integer zero point: the minimum itself is stored (in the scale dtype) and
    /// `x̂ = q * s + min`, as GGUF Q4_1 and Q5_1 do.
    FloatMin,
}

/// How a value becomes a code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum QuantExpr {
    /// `round(x / s) + z` (ONNX Runtime).
    Divide,
    /// `round(x * (1/s)) + z` (PyTorch, GGUF Q8_0).
    Reciprocal,
    /// `round(x * (1/s) + z)`: the zero point is added before rounding (MLAS, GGUF Q4/Q5).
    ReciprocalAddZero,
}

/// Where codes are clamped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CodeClamp {
    /// Into `[qmin, qmax]`, the code range the scale is formed for: PyTorch's
    /// `fake_quantize_per_{channel,tensor}_affine` and `quantized_decomposed.quantize_*` with
    /// the observer's `quant_min` / `quant_max`.
    Range,
    /// Into the whole integer type, whatever range formed the scale: ONNX Runtime's
    /// `quantize_nparray` clips to the type, and so do `torch.quantize_per_channel` /
    /// `quantize_per_tensor` (to the dtype), so under `reduce_range` a value that rounds just
    /// past the reduced `qmax` keeps `qmax + 1` (and past a signed `qmin`, `qmin - 1`).
    Type,
}

/// The code of a value whose ratio is not a finite number. Only a tiny scale makes one: a
/// subnormal scale's reciprocal overflows to infinity, so `x · (1/s)` is `±∞`, and `0 · ∞`
/// is NaN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NonFinite {
    /// NaN gets the zero point (the value is the block's zero, so it reconstructs exactly)
    /// and `±∞` is clamped to `qmin` or `qmax`: the safe rule.
    ZeroPoint,
    /// NaN gets code 0 and `±∞` is clamped, as MLAS does: its `std::clamp` lets NaN through
    /// and the conversion to an integer gives 0 (on x86-64).
    NanToZero,
    /// Every non-finite ratio gets code 0, as gguf-py does: numpy converts to an integer
    /// type before clipping, and `±∞` and NaN become 0 (on x86-64).
    Zero,
}

/// Precision in which scales and zero points are computed from the block range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Arith {
    /// Double precision, then the scale is rounded to f32 (ONNX Runtime's Python).
    F64,
    /// Single precision throughout (PyTorch, MLAS, gguf-py).
    F32,
}

/// Which blocks are degenerate (their computed scale cannot be used) and what they get.
/// Each library has its own rule; the presets follow their library's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Degenerate {
    /// Scale 1, zero point 0 when the scale is below the smallest normal f32 (ONNX Runtime's
    /// `compute_scale_zp`): a block of tiny values (about 1e-38) is degenerate too. A tight
    /// constant block is first widened to include 0, so it keeps its value.
    One,
    /// Scale 1, zero point 0 only when the scale is exactly 0 in f32: the block is all zero
    /// (or a tight asymmetric constant block, which is first widened to include 0 so it keeps
    /// its value). The seed documents' rule ("all zero or constant"); a block of tiny values
    /// keeps its tiny scale.
    Flat,
    /// Scale raised to `f32::EPSILON` (2^-23), as PyTorch's observers do.
    Epsilon,
    /// Scale 0: every code is the zero point and every value reconstructs to 0 (GGUF, MLAS).
    Zero,
}

/// The choices on which libraries disagree; each changes codes or errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Conventions {
    /// Symmetric scale formula.
    pub sym_scale: SymScale,
    /// Symmetric zero point.
    pub sym_zero_point: SymZeroPoint,
    /// Asymmetric zero point formula.
    pub asym_zero_point: AsymZeroPoint,
    /// Clamp the asymmetric zero point into `[qmin, qmax]` (the seed calculator does not).
    pub clamp_zero_point: bool,
    /// Value-to-code expression.
    pub quant_expr: QuantExpr,
    /// Where codes are clamped.
    pub code_clamp: CodeClamp,
    /// The code of a value whose ratio is not a finite number.
    pub non_finite: NonFinite,
    /// Precision of scale and zero-point arithmetic.
    pub arith: Arith,
    /// Degenerate-block rule and policy.
    pub degenerate: Degenerate,
}

/// A complete quantization configuration.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Config {
    /// Code width in bits, 1..=16.
    pub bits: u8,
    /// Signed or unsigned codes.
    pub signed: bool,
    /// Symmetric or asymmetric.
    pub scheme: Scheme,
    /// Full, narrow or custom code range.
    pub range: RangeKind,
    /// Tight range or range widened to include zero.
    pub range_source: RangeSource,
    /// Rounding of ratios to codes.
    pub rounding: Rounding,
    /// Tensor, channel or group.
    pub granularity: Granularity,
    /// The channel axis for [`Granularity::Channel`].
    pub axis: Axis,
    /// Range clipping.
    pub clipping: Clipping,
    /// Storage type of scales (and of GGUF-style float offsets).
    pub scale_dtype: ScaleDtype,
    /// Bits of one stored zero point; 0 when the zero point is implied (symmetric formats
    /// that store none).
    pub zero_point_bits: u8,
    /// Library conventions.
    pub conventions: Conventions,
    /// A format with a block layout of its own (a k-quant, MXFP4, NVFP4, NF4, FP8: see
    /// [`crate::core::format::registry::FORMATS`]), when the configuration is one. Its encoder then
    /// decides everything; the fields above only describe its payload (`bits` per code,
    /// unsigned codes, its block as the granularity). Written as the format's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<&'static FormatInfo>,
}

/// Why a configuration cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    /// Bits outside 1..=16.
    #[error("bits must be between 1 and 16, not {0}")]
    Bits(u8),
    /// A custom code range written with its ends swapped.
    #[error("code range {qmin}..{qmax} is reversed: write the smaller code first ({qmax}..{qmin})")]
    ReversedRange {
        /// The first code as written.
        qmin: i32,
        /// The second code as written.
        qmax: i32,
    },
    /// The code range is empty, outside the type, or (for symmetric) has no room around 0.
    #[error("code range [{qmin}, {qmax}] does not fit {what}")]
    Range {
        /// Smallest code.
        qmin: i32,
        /// Largest code.
        qmax: i32,
        /// What it fails.
        what: String,
    },
    /// A narrow range of a signed 1-bit type: dropping the most negative code would leave
    /// the single code 0.
    #[error(
        "a signed 1-bit range cannot be narrow: dropping -1 leaves the single code 0 (use the full range [-1, 0])"
    )]
    NarrowOneBit,
    /// A symmetric scheme whose zero point lies outside the code range, so that every value
    /// would be clamped to one end.
    #[error(
        "the symmetric zero point {zero} lies outside the code range [{qmin}, {qmax}], so every value would be clamped to one end: use a range that contains {zero}, or the asymmetric scheme"
    )]
    ZeroOutsideRange {
        /// The zero point.
        zero: i32,
        /// Smallest code.
        qmin: i32,
        /// Largest code.
        qmax: i32,
    },
    /// A granularity that is not `tensor`, `channel` or `group:G` with G ≥ 1.
    #[error("granularity must be tensor, channel or group:G with G at least 1, not {0:?}")]
    BadGranularity(String),
    /// Percentile outside (0, 100].
    #[error("clipping percentile must be in (0, 100], not {0}")]
    Percentile(f64),
    /// Zero-point storage wider than 32 bits.
    #[error("zero-point width must be at most 32 bits, not {0}")]
    ZeroPointBits(u8),
    /// A reduced range asked of ONNX Runtime at a width it has no type of.
    #[error(
        "ONNX Runtime has reduced ranges for its 4, 8 and 16-bit types only (ONNX_INT_TYPE_REDUCED_RANGE), not for {bits} bits: choose one of those widths, or give the range itself (--range QMIN..QMAX)"
    )]
    NoReducedRange {
        /// The width asked for.
        bits: u8,
    },
    /// PyTorch's observers refuse a reduced range for symmetric quint8.
    #[error(
        "PyTorch refuses a reduced range for symmetric unsigned codes (its observers raise NotImplementedError: Cannot reduce range for symmetric quantization for quint8): use the asymmetric scheme, or signed codes"
    )]
    TorchSymmetricReducedUnsigned,
    /// An unknown preset name.
    #[error("unknown preset {0:?} (see --list-presets)")]
    UnknownPreset(String),
    /// A setting changed on a format, whose encoder fixes every setting.
    #[error(
        "{format} is a format with its own block layout: its {setting} is fixed (choose an integer preset to change it)"
    )]
    FormatFixed {
        /// The format's name.
        format: &'static str,
        /// The setting given.
        setting: &'static str,
    },
}

impl Config {
    /// The integer range `[qmin, qmax]` of the configured type and range kind.
    #[must_use]
    pub fn code_range(&self) -> (i32, i32) {
        let bits = u32::from(self.bits.clamp(1, 16));
        let (tmin, tmax) = type_range(bits, self.signed);
        match self.range {
            RangeKind::Narrow if self.signed && bits > 1 => (tmin + 1, tmax),
            RangeKind::Full | RangeKind::Narrow => (tmin, tmax),
            RangeKind::Custom { qmin, qmax } => (qmin, qmax),
        }
    }

    /// The integer range codes are clamped into: [`Config::code_range`], or the whole type
    /// under [`CodeClamp::Type`].
    #[must_use]
    pub fn clamp_range(&self) -> (i32, i32) {
        match self.conventions.code_clamp {
            CodeClamp::Range => self.code_range(),
            CodeClamp::Type => type_range(u32::from(self.bits), self.signed),
        }
    }

    /// Number of codes in `[qmin, qmax]`.
    #[must_use]
    pub fn levels(&self) -> u32 {
        let (lo, hi) = self.code_range();
        (hi - lo + 1).max(0) as u32
    }

    /// Checks every field; [`crate::core::analyse()`] calls this first.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(1..=16).contains(&self.bits) {
            return Err(ConfigError::Bits(self.bits));
        }
        if self.range == RangeKind::Narrow && self.signed && self.bits == 1 {
            return Err(ConfigError::NarrowOneBit);
        }
        let (tmin, tmax) = type_range(u32::from(self.bits), self.signed);
        let (qmin, qmax) = self.code_range();
        if qmin > qmax {
            return Err(ConfigError::ReversedRange { qmin, qmax });
        }
        let type_name = format!("{}{}", if self.signed { "int" } else { "uint" }, self.bits);
        if qmin < tmin || qmax > tmax {
            return Err(ConfigError::Range {
                qmin,
                qmax,
                what: type_name,
            });
        }
        if qmin == qmax {
            return Err(ConfigError::Range {
                qmin,
                qmax,
                what: "a range of at least two codes".into(),
            });
        }
        let sign_carrying = matches!(
            self.conventions.sym_scale,
            SymScale::SignedExtreme | SymScale::SignedMinMax
        );
        if self.scheme == Scheme::Symmetric
            && sign_carrying
            && self.conventions.sym_zero_point.of_codes(qmin, qmax) == qmin
        {
            return Err(ConfigError::Range {
                qmin,
                qmax,
                what: "a sign-carrying symmetric scale, which needs codes below the zero point"
                    .into(),
            });
        }
        // The other symmetric zero points are midpoints of the range, inside it.
        if self.scheme == Scheme::Symmetric
            && self.conventions.sym_zero_point == SymZeroPoint::Zero
            && !(qmin..=qmax).contains(&0)
        {
            return Err(ConfigError::ZeroOutsideRange {
                zero: 0,
                qmin,
                qmax,
            });
        }
        if let Granularity::Group(0) = self.granularity {
            return Err(ConfigError::BadGranularity("group:0".into()));
        }
        if let Clipping::Percentile(p) = self.clipping
            && !(p > 0.0 && p <= 100.0)
        {
            return Err(ConfigError::Percentile(p));
        }
        if self.zero_point_bits > 32 {
            return Err(ConfigError::ZeroPointBits(self.zero_point_bits));
        }
        Ok(())
    }

    /// Bits of metadata one block stores: its scale, its zero point, and a float offset for
    /// [`AsymZeroPoint::FloatMin`].
    #[must_use]
    pub fn metadata_bits_per_block(&self) -> u64 {
        let scale = u64::from(self.scale_dtype.bits());
        match self.scheme {
            Scheme::Asymmetric if self.conventions.asym_zero_point == AsymZeroPoint::FloatMin => {
                2 * scale
            }
            _ => scale + u64::from(self.zero_point_bits),
        }
    }

    /// A one-line summary such as `int4 symmetric narrow [-7, 7], per channel`, with the
    /// range codes are clamped into when it is not `[qmin, qmax]`
    /// (`uint8 asymmetric custom [0, 127] clamped to [0, 255], tensor`).
    #[must_use]
    pub fn summary(&self) -> String {
        let (qmin, qmax) = self.code_range();
        let scheme = match self.scheme {
            Scheme::Symmetric => "symmetric",
            Scheme::Asymmetric => "asymmetric",
        };
        let range = match self.range {
            RangeKind::Full => "full",
            RangeKind::Narrow => "narrow",
            RangeKind::Custom { .. } => "custom",
        };
        let clamp = match self.clamp_range() {
            (lo, hi) if (lo, hi) != (qmin, qmax) => format!(" clamped to [{lo}, {hi}]"),
            _ => String::new(),
        };
        if let Some(f) = self.format {
            // "q4_k: llama.cpp Q4_K (quantize_row_q4_K_ref)": the name and whose it is.
            let whose = f.about.split(':').next().unwrap_or(f.about);
            return format!("{}: {whose}", f.name);
        }
        format!(
            "{}{} {scheme} {range} [{qmin}, {qmax}]{clamp}, {}",
            if self.signed { "int" } else { "uint" },
            self.bits,
            self.granularity
        )
    }
}

/// The full range of a `bits`-wide signed or unsigned integer.
#[must_use]
pub fn type_range(bits: u32, signed: bool) -> (i32, i32) {
    let bits = bits.clamp(1, 16);
    if signed {
        (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    } else {
        (0, (1 << bits) - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_ranges_follow_the_type_tables() {
        let mut c = Config {
            bits: 4,
            signed: true,
            range: RangeKind::Full,
            ..Config::default()
        };
        assert_eq!(c.code_range(), (-8, 7));
        c.range = RangeKind::Narrow;
        assert_eq!(c.code_range(), (-7, 7));
        c.bits = 8;
        assert_eq!(c.code_range(), (-127, 127));
        c.signed = false;
        assert_eq!(c.code_range(), (0, 255));
        c.bits = 16;
        c.range = RangeKind::Full;
        assert_eq!(c.code_range(), (0, 65535));
        assert_eq!(c.levels(), 65536);
    }

    #[test]
    fn validation_rejects_impossible_configs() {
        let ok = Config::default();
        assert!(ok.validate().is_ok());
        assert_eq!(
            Config { bits: 0, ..ok }.validate(),
            Err(ConfigError::Bits(0))
        );
        assert_eq!(
            Config { bits: 17, ..ok }.validate(),
            Err(ConfigError::Bits(17))
        );
        let custom = Config {
            range: RangeKind::Custom { qmin: -9, qmax: 7 },
            ..ok
        };
        assert!(matches!(custom.validate(), Err(ConfigError::Range { .. })));
        let reversed = Config {
            range: RangeKind::Custom { qmin: 5, qmax: 2 },
            ..ok
        };
        assert_eq!(
            reversed.validate(),
            Err(ConfigError::ReversedRange { qmin: 5, qmax: 2 })
        );
        let one_bit_narrow = Config {
            bits: 1,
            signed: true,
            range: RangeKind::Narrow,
            ..ok
        };
        assert_eq!(one_bit_narrow.validate(), Err(ConfigError::NarrowOneBit));
        let one_bit = Config {
            range: RangeKind::Full,
            ..one_bit_narrow
        };
        assert_eq!(
            (one_bit.validate(), one_bit.code_range()),
            (Ok(()), (-1, 0))
        );
        // The lesson's symmetric zero point 0 outside [2, 5]: every value would clamp.
        let outside = Config {
            range: RangeKind::Custom { qmin: 2, qmax: 5 },
            ..ok
        };
        assert_eq!(
            outside.validate(),
            Err(ConfigError::ZeroOutsideRange {
                zero: 0,
                qmin: 2,
                qmax: 5
            })
        );
        // Asymmetric, or with a midpoint zero point, the same range is fine.
        let asym = Config {
            scheme: Scheme::Asymmetric,
            ..outside
        };
        assert_eq!(asym.validate(), Ok(()));
        let mid = Config {
            conventions: Conventions {
                sym_zero_point: SymZeroPoint::MidHalfEven,
                ..outside.conventions
            },
            ..outside
        };
        assert_eq!(mid.validate(), Ok(()));
        let pct = Config {
            clipping: Clipping::Percentile(0.0),
            ..ok
        };
        assert_eq!(pct.validate(), Err(ConfigError::Percentile(0.0)));
    }

    #[test]
    fn granularity_parses_and_prints() {
        for (text, g) in [
            ("tensor", Granularity::Tensor),
            ("channel", Granularity::Channel),
            ("group:128", Granularity::Group(128)),
            ("g32", Granularity::Group(32)),
        ] {
            assert_eq!(text.parse::<Granularity>(), Ok(g));
        }
        assert_eq!(Granularity::Group(64).to_string(), "group:64");
        assert!("group:0".parse::<Granularity>().is_err());
        assert!("rows".parse::<Granularity>().is_err());
    }

    #[test]
    fn scale_dtypes_round_like_the_formats() {
        assert_eq!(ScaleDtype::F16.round(0.1), 0.099_975_586);
        assert_eq!(ScaleDtype::Bf16.round(0.1), 0.100_097_656);
        assert_eq!(ScaleDtype::F32.round(0.1), 0.1);
    }
}
