//! Named configurations that reproduce a document's or a library's quantizer exactly.
//!
//! Each preset fixes the conventions in `CONVENTIONS.md`-style tables: code range, scale and
//! zero-point formulas, rounding, arithmetic precision and degenerate-block policy. The ONNX
//! Runtime and PyTorch presets take the scheme and `reduce_range` as parameters because their
//! code range depends on them (and on the width: [`Overrides::resolve`] forms it again for a
//! width given with the preset); every other field can be overridden after the preset is
//! applied. A combination the named library refuses is refused here too.

use crate::core::config::{
    Arith, AsymZeroPoint, Axis, Clipping, CodeClamp, Config, ConfigError, Conventions, Degenerate,
    Granularity, NonFinite, QuantExpr, RangeKind, RangeSource, Rounding, ScaleDtype, Scheme,
    SymScale, SymZeroPoint, type_range,
};
use crate::core::format::registry::{Coded, FormatInfo, format_info};
use crate::core::format::{Format, Fp8Layout};

/// Parameters a preset takes before its fields can be overridden.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PresetOptions {
    /// Symmetric or asymmetric; `None` keeps the preset's own choice.
    pub scheme: Option<Scheme>,
    /// ONNX Runtime's and PyTorch's `reduce_range` (one bit less of code range).
    pub reduce_range: bool,
}

/// One entry of [`PRESETS`].
#[derive(Debug, Clone, Copy)]
pub struct PresetInfo {
    /// The name scripts use.
    pub name: &'static str,
    /// One line saying what it reproduces.
    pub about: &'static str,
}

/// Every preset, in the order `--list-presets` prints them.
pub const PRESETS: &[PresetInfo] = &[
    PresetInfo {
        name: "lesson",
        about: "the seed lesson: symmetric narrow int4 [-7, 7], scale absmax/7, per tensor",
    },
    PresetInfo {
        name: "calculator",
        about: "the seed calculator: int8 asymmetric on the tight min/max, zero point not clamped, 8 bytes per scale",
    },
    PresetInfo {
        name: "ort-int8",
        about: "ONNX Runtime quantize_data, int8: symmetric [-127, 127] (absmax/127), or asymmetric [-128, 127]",
    },
    PresetInfo {
        name: "ort-uint8",
        about: "ONNX Runtime quantize_data, uint8 [0, 255]: asymmetric, or symmetric with zero point 128",
    },
    PresetInfo {
        name: "ort-int4",
        about: "ONNX Runtime quantize_data, int4 [-8, 7]: symmetric absmax/7.5, or asymmetric",
    },
    PresetInfo {
        name: "ort-uint4",
        about: "ONNX Runtime quantize_data, uint4 [0, 15]: asymmetric, or symmetric with zero point 8",
    },
    PresetInfo {
        name: "torch-qint8",
        about: "PyTorch PerChannelMinMaxObserver + torch.quantize_per_channel, qint8 per_channel_symmetric [-128, 127], scale absmax/127.5",
    },
    PresetInfo {
        name: "torch-quint8",
        about: "PyTorch PerChannelMinMaxObserver + torch.quantize_per_channel, quint8 per_channel_affine [0, 255]",
    },
    PresetInfo {
        name: "q8_0",
        about: "llama.cpp GGUF Q8_0: blocks of 32, d = absmax/127 stored as f16, 8.5 bits per weight",
    },
    PresetInfo {
        name: "q4_0",
        about: "llama.cpp GGUF Q4_0: blocks of 32, d = extreme/-8 stored as f16, nibble = x/d + 8, 4.5 bits per weight",
    },
    PresetInfo {
        name: "q4_1",
        about: "llama.cpp GGUF Q4_1: blocks of 32, d = (max-min)/15 and min stored as f16, 5 bits per weight",
    },
    PresetInfo {
        name: "q5_0",
        about: "llama.cpp GGUF Q5_0: blocks of 32, d = extreme/-16 stored as f16, 5.5 bits per weight",
    },
    PresetInfo {
        name: "q5_1",
        about: "llama.cpp GGUF Q5_1: blocks of 32, d = (max-min)/31 and min stored as f16, 6 bits per weight",
    },
    PresetInfo {
        name: "int4-g128",
        about: "ONNX Runtime MatMulNBits / MLAS: uint4 asymmetric, groups of 128, f32 scale and 4-bit zero point",
    },
];

/// The seed lesson's scheme: symmetric narrow int4, `absmax / 7`, per tensor.
#[must_use]
pub fn lesson() -> Config {
    Config {
        bits: 4,
        signed: true,
        scheme: Scheme::Symmetric,
        range: RangeKind::Narrow,
        range_source: RangeSource::Tight,
        rounding: Rounding::HalfEven,
        granularity: Granularity::Tensor,
        axis: Axis::Rows,
        clipping: Clipping::None,
        scale_dtype: ScaleDtype::F32,
        zero_point_bits: 0,
        conventions: Conventions {
            sym_scale: SymScale::MaxCode,
            sym_zero_point: SymZeroPoint::Zero,
            asym_zero_point: AsymZeroPoint::RoundOfShift,
            clamp_zero_point: true,
            quant_expr: QuantExpr::Divide,
            code_clamp: CodeClamp::Range,
            non_finite: NonFinite::ZeroPoint,
            arith: Arith::F64,
            // The documents: "all zero or constant" is degenerate, nothing else.
            degenerate: Degenerate::Flat,
        },
        format: None,
    }
}

impl Default for Config {
    /// The explorer's starting point: the seed lesson's symmetric narrow int4, per channel.
    fn default() -> Self {
        lesson()
    }
}

fn calculator() -> Config {
    Config {
        bits: 8,
        scheme: Scheme::Asymmetric,
        range: RangeKind::Full,
        // The page's JavaScript presumably uses Math.round: ties toward +infinity.
        rounding: Rounding::HalfUp,
        granularity: Granularity::Channel,
        // Its memory model charges 8 bytes per scale/zero-point pair.
        zero_point_bits: 32,
        conventions: Conventions {
            clamp_zero_point: false,
            ..lesson().conventions
        },
        ..lesson()
    }
}

/// ONNX Runtime's code range for its `bits`-wide type (`get_qmin_qmax_for_qType`: the reduced
/// range wins over the symmetric one): `None` for a width ORT has no type of (the preset's
/// own range stays), an error for a reduced range at such a width.
fn ort_range(
    bits: u8,
    signed: bool,
    scheme: Scheme,
    reduce_range: bool,
) -> Result<Option<RangeKind>, ConfigError> {
    if !matches!(bits, 4 | 8 | 16) {
        return if reduce_range {
            Err(ConfigError::NoReducedRange { bits })
        } else {
            Ok(None)
        };
    }
    Ok(Some(if reduce_range {
        // ONNX_INT_TYPE_REDUCED_RANGE.
        let (qmin, qmax) = match (bits, signed) {
            (4, true) => (-4, 3),
            (4, false) => (0, 7),
            (8, true) => (-64, 64),
            (8, false) => (0, 127),
            (_, true) => (-16384, 16384),
            (_, false) => (0, 32767),
        };
        RangeKind::Custom { qmin, qmax }
    } else if scheme == Scheme::Symmetric && signed && bits != 4 {
        // ONNX_INT_TYPE_SYMMETRIC_RANGE has INT8 and INT16 only: int4 stays [-8, 7].
        RangeKind::Narrow
    } else {
        RangeKind::Full
    }))
}

fn ort(bits: u8, signed: bool, opts: PresetOptions) -> Result<Config, ConfigError> {
    // ORT's weight default: symmetric iff the type is signed (`is_weight_symmetric`).
    let scheme = opts.scheme.unwrap_or(if signed {
        Scheme::Symmetric
    } else {
        Scheme::Asymmetric
    });
    let range = ort_range(bits, signed, scheme, opts.reduce_range)?.unwrap_or(RangeKind::Full);
    Ok(Config {
        bits,
        signed,
        scheme,
        range,
        range_source: RangeSource::IncludeZero,
        rounding: Rounding::HalfEven,
        granularity: Granularity::Channel,
        axis: Axis::Rows,
        clipping: Clipping::None,
        scale_dtype: ScaleDtype::F32,
        zero_point_bits: bits,
        conventions: Conventions {
            sym_scale: SymScale::HalfSpan,
            sym_zero_point: SymZeroPoint::MidHalfEven,
            asym_zero_point: AsymZeroPoint::RoundOfShift,
            clamp_zero_point: true,
            quant_expr: QuantExpr::Divide,
            // quantize_nparray clips to the type's full range, reduced or narrow range or not.
            code_clamp: CodeClamp::Type,
            // Dividing never gives a non-finite ratio: the degenerate rule keeps s normal.
            non_finite: NonFinite::ZeroPoint,
            arith: Arith::F64,
            degenerate: Degenerate::One,
        },
        format: None,
    })
}

/// PyTorch's code range for `bits`-wide codes (`calculate_qmin_qmax`): the type's, or with
/// `reduce_range` both ends halved (floor division: qint8 `[-64, 63]`, quint8 `[0, 127]`).
/// torch refuses a reduced range for symmetric quint8, and so does this.
fn torch_range(
    bits: u8,
    signed: bool,
    scheme: Scheme,
    reduce_range: bool,
) -> Result<RangeKind, ConfigError> {
    if !reduce_range {
        return Ok(RangeKind::Full);
    }
    if !signed && scheme == Scheme::Symmetric {
        return Err(ConfigError::TorchSymmetricReducedUnsigned);
    }
    let (qmin, qmax) = type_range(u32::from(bits), signed);
    Ok(RangeKind::Custom {
        qmin: qmin.div_euclid(2),
        qmax: qmax.div_euclid(2),
    })
}

/// PyTorch's observers, then `torch.quantize_per_channel` / `quantize_per_tensor`: codes
/// `round(x * (1/s)) + z` clamped to the dtype's whole range, even when the observer formed
/// the scale on a reduced range (a ratio that rounds to 64 keeps 64 in qint8). With
/// [`CodeClamp::Range`] the codes are clamped to the observer's `[quant_min, quant_max]`
/// instead, as `torch.fake_quantize_per_channel_affine` and `quantized_decomposed.quantize_*`
/// do.
fn torch(signed: bool, opts: PresetOptions) -> Result<Config, ConfigError> {
    let scheme = opts.scheme.unwrap_or(if signed {
        Scheme::Symmetric
    } else {
        Scheme::Asymmetric
    });
    let base = ort(
        8,
        signed,
        PresetOptions {
            reduce_range: false,
            ..opts
        },
    )?;
    Ok(Config {
        conventions: Conventions {
            asym_zero_point: AsymZeroPoint::ShiftOfRound,
            quant_expr: QuantExpr::Reciprocal,
            code_clamp: CodeClamp::Type,
            // The epsilon floor keeps the reciprocal finite.
            non_finite: NonFinite::ZeroPoint,
            arith: Arith::F32,
            degenerate: Degenerate::Epsilon,
            ..base.conventions
        },
        scheme,
        range: torch_range(8, signed, scheme, opts.reduce_range)?,
        ..base
    })
}

fn gguf_symmetric(bits: u8, opts: PresetOptions) -> Config {
    // Q4_0/Q5_0 store unsigned nibbles with an implicit offset 8/16 and d = extreme/-8 (-16);
    // Q8_0 stores int8 codes with d = absmax/127.
    let q8 = bits == 8;
    Config {
        bits,
        signed: q8,
        scheme: opts.scheme.unwrap_or(Scheme::Symmetric),
        range: if q8 {
            RangeKind::Narrow
        } else {
            RangeKind::Full
        },
        range_source: RangeSource::Tight,
        rounding: if q8 {
            Rounding::HalfAway
        } else {
            Rounding::HalfUp
        },
        granularity: Granularity::Group(32),
        axis: Axis::Rows,
        clipping: Clipping::None,
        scale_dtype: ScaleDtype::F16,
        zero_point_bits: 0,
        conventions: Conventions {
            sym_scale: if q8 {
                SymScale::MaxCode
            } else {
                SymScale::SignedExtreme
            },
            sym_zero_point: if q8 {
                SymZeroPoint::Zero
            } else {
                SymZeroPoint::MidHalfEven
            },
            asym_zero_point: AsymZeroPoint::FloatMin,
            clamp_zero_point: true,
            quant_expr: if q8 {
                QuantExpr::Reciprocal
            } else {
                QuantExpr::ReciprocalAddZero
            },
            code_clamp: CodeClamp::Range,
            // A subnormal f32 d (blocks of values below about 1e-37) has an infinite 1/d.
            non_finite: NonFinite::Zero,
            arith: Arith::F32,
            degenerate: Degenerate::Zero,
        },
        format: None,
    }
}

fn gguf_affine(bits: u8, opts: PresetOptions) -> Config {
    Config {
        signed: false,
        scheme: opts.scheme.unwrap_or(Scheme::Asymmetric),
        range: RangeKind::Full,
        rounding: Rounding::HalfUp,
        ..gguf_symmetric(bits, opts)
    }
}

fn int4_g128(opts: PresetOptions) -> Config {
    let scheme = opts.scheme.unwrap_or(Scheme::Asymmetric);
    Config {
        bits: 4,
        signed: false,
        scheme,
        range: RangeKind::Full,
        range_source: RangeSource::IncludeZero,
        rounding: Rounding::HalfAway,
        granularity: Granularity::Group(128),
        axis: Axis::Rows,
        clipping: Clipping::None,
        scale_dtype: ScaleDtype::F32,
        // Symmetric MatMulNBits stores no zero points (the offset 8 is implied).
        zero_point_bits: if scheme == Scheme::Symmetric { 0 } else { 4 },
        conventions: Conventions {
            sym_scale: SymScale::SignedMinMax,
            sym_zero_point: SymZeroPoint::MidHalfEven,
            asym_zero_point: AsymZeroPoint::RoundOfShift,
            clamp_zero_point: true,
            quant_expr: QuantExpr::ReciprocalAddZero,
            code_clamp: CodeClamp::Range,
            // A subnormal scale (blocks of values below about 1e-37) has an infinite 1/s.
            non_finite: NonFinite::NanToZero,
            arith: Arith::F32,
            degenerate: Degenerate::Zero,
        },
        format: None,
    }
}

/// The configuration of a format (see [`Config::format`]): its payload's bits per code,
/// unsigned codes, its scale block as the granularity (a k-quant's sub-block, FP8's
/// region); its encoder decides the rest.
#[must_use]
pub fn format_config(info: &'static FormatInfo) -> Config {
    let (bits, granularity, mins, scale_dtype) = match info.coded {
        Coded::Row(f) => {
            let (sub, mins, dtype) = match f {
                Format::K(k) => (k.sub_len(), k.has_mins(), ScaleDtype::F16),
                Format::Nvfp4 => (16, false, ScaleDtype::F32),
                _ => (f.block_len().min(64), false, ScaleDtype::F32),
            };
            let bits = f.grid().values.len().max(2).trailing_zeros() as u8;
            (bits, Granularity::Group(sub), mins, dtype)
        }
        Coded::Nf4Dq => (4, Granularity::Group(64), false, ScaleDtype::F32),
        Coded::Fp8(s) => {
            let g = match s.layout {
                Fp8Layout::Tensor => Granularity::Tensor,
                Fp8Layout::Channel => Granularity::Channel,
                Fp8Layout::Tiles { cols, .. } => Granularity::Group(cols),
            };
            (8, g, false, ScaleDtype::F32)
        }
    };
    Config {
        bits,
        signed: false,
        scheme: if mins {
            Scheme::Asymmetric
        } else {
            Scheme::Symmetric
        },
        range: RangeKind::Full,
        range_source: RangeSource::Tight,
        granularity,
        scale_dtype,
        zero_point_bits: 0,
        clipping: Clipping::None,
        format: Some(info),
        ..lesson()
    }
}

/// The legacy llama.cpp type whose preset `config` is, as the preset builds it (no setting
/// changed), when ggml's quantizer of it reads an importance vector: `q4_0`, `q4_1`,
/// `q5_0`, `q5_1` (not `q8_0`, whose quantizer ignores one).
#[must_use]
pub fn legacy_type(config: &Config) -> Option<crate::core::format::Legacy> {
    use crate::core::format::Legacy;
    [
        ("q4_0", Legacy::Q4_0),
        ("q4_1", Legacy::Q4_1),
        ("q5_0", Legacy::Q5_0),
        ("q5_1", Legacy::Q5_1),
    ]
    .into_iter()
    .find(|(name, _)| preset(name, PresetOptions::default()).is_ok_and(|c| c == *config))
    .map(|(_, l)| l)
}

/// Builds the named preset: an integer preset of [`PRESETS`], or a format of
/// [`FORMATS`](crate::core::format::registry::FORMATS) (which takes no options).
pub fn preset(name: &str, opts: PresetOptions) -> Result<Config, ConfigError> {
    if let Some(info) = format_info(name) {
        let setting = if opts.scheme.is_some() {
            Some("scheme")
        } else if opts.reduce_range {
            Some("range (reduce-range)")
        } else {
            None
        };
        return match setting {
            Some(setting) => Err(ConfigError::FormatFixed {
                format: info.name,
                setting,
            }),
            None => Ok(format_config(info)),
        };
    }
    let mut config = match name {
        "lesson" => lesson(),
        "calculator" => calculator(),
        "ort-int8" => ort(8, true, opts)?,
        "ort-uint8" => ort(8, false, opts)?,
        "ort-int4" => ort(4, true, opts)?,
        "ort-uint4" => ort(4, false, opts)?,
        "torch-qint8" => torch(true, opts)?,
        "torch-quint8" => torch(false, opts)?,
        "q8_0" => gguf_symmetric(8, opts),
        "q4_0" => gguf_symmetric(4, opts),
        "q5_0" => gguf_symmetric(5, opts),
        "q4_1" => gguf_affine(4, opts),
        "q5_1" => gguf_affine(5, opts),
        "int4-g128" => int4_g128(opts),
        _ => return Err(ConfigError::UnknownPreset(name.to_string())),
    };
    if let Some(scheme) = opts.scheme {
        config.scheme = scheme;
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_preset_builds_and_validates() {
        for info in PRESETS {
            for scheme in [None, Some(Scheme::Symmetric), Some(Scheme::Asymmetric)] {
                let c = preset(
                    info.name,
                    PresetOptions {
                        scheme,
                        reduce_range: false,
                    },
                )
                .unwrap();
                assert!(
                    c.validate().is_ok(),
                    "{} {scheme:?}: {:?}",
                    info.name,
                    c.validate()
                );
            }
        }
        assert!(matches!(
            preset("q3", PresetOptions::default()),
            Err(ConfigError::UnknownPreset(_))
        ));
        for info in crate::core::format::registry::FORMATS {
            let c = preset(info.name, PresetOptions::default()).unwrap();
            assert!(c.validate().is_ok(), "{}: {:?}", info.name, c.validate());
            assert_eq!(c.format.map(|f| f.name), Some(info.name));
        }
    }

    #[test]
    fn ort_ranges_follow_its_tables() {
        let sym = PresetOptions {
            scheme: Some(Scheme::Symmetric),
            reduce_range: false,
        };
        let asym = PresetOptions {
            scheme: Some(Scheme::Asymmetric),
            reduce_range: false,
        };
        let reduced = PresetOptions {
            scheme: Some(Scheme::Symmetric),
            reduce_range: true,
        };
        assert_eq!(preset("ort-int8", sym).unwrap().code_range(), (-127, 127));
        assert_eq!(preset("ort-int8", asym).unwrap().code_range(), (-128, 127));
        assert_eq!(preset("ort-int8", reduced).unwrap().code_range(), (-64, 64));
        assert_eq!(preset("ort-int4", sym).unwrap().code_range(), (-8, 7));
        assert_eq!(preset("ort-uint8", sym).unwrap().code_range(), (0, 255));
        assert_eq!(
            preset("torch-qint8", reduced).unwrap().code_range(),
            (-64, 63)
        );
        // quantize_nparray clips to the type whatever range formed the scale.
        assert_eq!(
            preset("ort-int8", reduced).unwrap().clamp_range(),
            (-128, 127)
        );
        assert_eq!(preset("ort-int8", sym).unwrap().clamp_range(), (-128, 127));
        let reduced_asym = PresetOptions {
            scheme: Some(Scheme::Asymmetric),
            reduce_range: true,
        };
        assert_eq!(
            preset("ort-uint4", reduced_asym).unwrap().clamp_range(),
            (0, 15)
        );
        // torch.quantize_per_channel clamps to the dtype, whatever range the observer used.
        assert_eq!(
            preset("torch-qint8", reduced).unwrap().clamp_range(),
            (-128, 127)
        );
        // torch refuses a reduced range for symmetric quint8.
        assert_eq!(
            preset("torch-quint8", reduced),
            Err(ConfigError::TorchSymmetricReducedUnsigned)
        );
    }

    #[test]
    fn gguf_bits_per_weight_match_the_format_sizes() {
        // Block of 32: payload 32 * bits plus metadata, over 32.
        for (name, bpw) in [
            ("q8_0", 8.5),
            ("q4_0", 4.5),
            ("q4_1", 5.0),
            ("q5_0", 5.5),
            ("q5_1", 6.0),
        ] {
            let c = preset(name, PresetOptions::default()).unwrap();
            let bits = f64::from(c.bits) + c.metadata_bits_per_block() as f64 / 32.0;
            assert_eq!(bits, bpw, "{name}");
        }
    }
}

/// Calls the macro `$m` with the fields of [`Overrides`] applied after the preset: the
/// configuration's, then (after `;`) the conventions'. One list, so that resolving,
/// combining and naming the overrides cannot miss a field.
macro_rules! override_fields {
    ($m:ident) => {
        $m!(
            bits,
            signed,
            range,
            range_source,
            rounding,
            granularity,
            axis,
            clipping,
            scale_dtype,
            zero_point_bits;
            sym_scale,
            sym_zero_point,
            asym_zero_point,
            clamp_zero_point,
            quant_expr,
            code_clamp,
            non_finite,
            arith,
            degenerate
        )
    };
}

/// Field overrides applied after a preset; `None` keeps the preset's value.
///
/// The command line's flags and the explorer's toggles both produce one of these, so a
/// configuration is always "a preset, then what the user changed".
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Overrides {
    /// Symmetric or asymmetric (passed to the preset, whose code range may depend on it).
    pub scheme: Option<Scheme>,
    /// Reduced range (passed to the preset).
    pub reduce_range: bool,
    /// Code width.
    pub bits: Option<u8>,
    /// Signed codes.
    pub signed: Option<bool>,
    /// Code range kind.
    pub range: Option<RangeKind>,
    /// Range source.
    pub range_source: Option<RangeSource>,
    /// Rounding.
    pub rounding: Option<Rounding>,
    /// Granularity.
    pub granularity: Option<Granularity>,
    /// Channel axis.
    pub axis: Option<Axis>,
    /// Clipping.
    pub clipping: Option<Clipping>,
    /// Scale storage.
    pub scale_dtype: Option<ScaleDtype>,
    /// Zero-point width.
    pub zero_point_bits: Option<u8>,
    /// Symmetric scale formula.
    pub sym_scale: Option<SymScale>,
    /// Symmetric zero point.
    pub sym_zero_point: Option<SymZeroPoint>,
    /// Asymmetric zero point.
    pub asym_zero_point: Option<AsymZeroPoint>,
    /// Clamp the asymmetric zero point.
    pub clamp_zero_point: Option<bool>,
    /// Value-to-code expression.
    pub quant_expr: Option<QuantExpr>,
    /// Where codes are clamped.
    pub code_clamp: Option<CodeClamp>,
    /// The code of a non-finite ratio.
    pub non_finite: Option<NonFinite>,
    /// Scale arithmetic precision.
    pub arith: Option<Arith>,
    /// Degenerate-block policy.
    pub degenerate: Option<Degenerate>,
}

impl Overrides {
    /// The preset `name` with these overrides applied, validated.
    pub fn resolve(&self, name: &str) -> Result<Config, ConfigError> {
        let mut c = preset(
            name,
            PresetOptions {
                scheme: self.scheme,
                reduce_range: self.reduce_range,
            },
        )?;
        if let Some(f) = c.format {
            if let Some(setting) = self.first_set() {
                return Err(ConfigError::FormatFixed {
                    format: f.name,
                    setting,
                });
            }
            return Ok(c);
        }
        macro_rules! set {
            ($($field:ident),*; $($conv:ident),*) => {
                $( if let Some(v) = self.$field { c.$field = v; } )*
                $( if let Some(v) = self.$conv { c.conventions.$conv = v; } )*
            };
        }
        override_fields!(set);
        self.width_rules(name, &mut c)?;
        c.validate()?;
        Ok(c)
    }

    /// The code range of a library's preset at the final width, signedness and scheme, unless
    /// the range itself is overridden: ONNX Runtime's tables for its 4-, 8- and 16-bit types
    /// (and its zero points as wide as its codes), PyTorch's halved range under
    /// `reduce_range`. The preset formed them for its own width before the overrides.
    fn width_rules(&self, name: &str, c: &mut Config) -> Result<(), ConfigError> {
        if name.starts_with("ort-") {
            if self.range.is_none()
                && let Some(range) = ort_range(c.bits, c.signed, c.scheme, self.reduce_range)?
            {
                c.range = range;
            }
            if self.zero_point_bits.is_none() {
                c.zero_point_bits = c.bits;
            }
        } else if name.starts_with("torch-") {
            let range = torch_range(c.bits, c.signed, c.scheme, self.reduce_range)?;
            if self.range.is_none() {
                c.range = range;
            }
        }
        Ok(())
    }

    /// The name of the first field these overrides set (besides the preset's options).
    fn first_set(&self) -> Option<&'static str> {
        macro_rules! first {
            ($($field:ident),*; $($conv:ident),*) => {
                $( if self.$field.is_some() { return Some(stringify!($field)); } )*
                $( if self.$conv.is_some() { return Some(stringify!($conv)); } )*
            };
        }
        override_fields!(first);
        None
    }

    /// These overrides with `top`'s set fields taking precedence (a scenario's suggested
    /// settings, then the command line's flags).
    #[must_use]
    pub fn then(self, top: Self) -> Self {
        macro_rules! pick {
            ($($field:ident),*; $($conv:ident),*) => {
                Self {
                    scheme: top.scheme.or(self.scheme),
                    reduce_range: self.reduce_range || top.reduce_range,
                    $( $field: top.$field.or(self.$field), )*
                    $( $conv: top.$conv.or(self.$conv), )*
                }
            };
        }
        override_fields!(pick)
    }

    /// True when nothing is overridden.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

#[cfg(test)]
mod override_tests {
    use super::*;

    #[test]
    fn scheme_override_rebuilds_ort_range_and_fields_override_after() {
        let o = Overrides {
            scheme: Some(Scheme::Asymmetric),
            granularity: Some(Granularity::Tensor),
            ..Overrides::default()
        };
        let c = o.resolve("ort-int8").unwrap();
        assert_eq!(c.code_range(), (-128, 127));
        assert_eq!(c.granularity, Granularity::Tensor);
        let bad = Overrides {
            bits: Some(0),
            ..Overrides::default()
        };
        assert_eq!(bad.resolve("lesson"), Err(ConfigError::Bits(0)));
        assert!(Overrides::default().is_empty());
    }
}
