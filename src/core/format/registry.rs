//! Every format beyond the integer presets, in one table ([`FORMATS`]): its name, what it
//! is and whose implementation it reproduces, and how it encodes ([`Coded`]). The format
//! ladder, `--list-presets`, `report --formats`, a format's configuration and its worked
//! arithmetic read it.

use serde::Serialize;

use crate::core::format::nf4;
use crate::core::format::{Format, Fp8Formula, Fp8Kind, Fp8Layout, Fp8Scheme};

/// A format of the ladder that is not an integer preset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coded {
    /// A row format of [`crate::core::format`].
    Row(Format),
    /// NF4 with double-quantized absmax values (bitsandbytes' `compress_statistics`).
    Nf4Dq,
    /// FP8 under one of its scale layouts and formulas.
    Fp8(Fp8Scheme),
}

/// One format the ladder can hold, with its name and the reference it follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormatInfo {
    /// The name scripts use (`q4_k`, `mxfp4`, `fp8-e4m3`).
    pub name: &'static str,
    /// What it is and whose implementation it reproduces.
    pub about: &'static str,
    /// How it encodes.
    pub coded: Coded,
}

const fn fp8(kind: Fp8Kind, formula: Fp8Formula, layout: Fp8Layout) -> Coded {
    Coded::Fp8(Fp8Scheme {
        kind,
        formula,
        layout,
    })
}

/// The formats beyond the integer presets, by bits per weight.
pub const FORMATS: &[FormatInfo] = &[
    FormatInfo {
        name: "q2_k",
        about: "llama.cpp Q2_K (quantize_row_q2_K_ref): super-blocks of 256, 2-bit codes, 4-bit sub-block scales and mins, f16 d and dmin",
        coded: Coded::Row(Format::Q2K),
    },
    FormatInfo {
        name: "q3_k",
        about: "llama.cpp Q3_K (quantize_row_q3_K_ref): super-blocks of 256, 3-bit codes, 6-bit sub-block scales, f16 d",
        coded: Coded::Row(Format::Q3K),
    },
    FormatInfo {
        name: "nf4-dq",
        about: "bitsandbytes NF4 with double quantization: blocks of 64, absmax as 8-bit codes per 256 blocks under an f32 scale",
        coded: Coded::Nf4Dq,
    },
    FormatInfo {
        name: "mxfp4",
        about: "OCP MXFP4 as ggml and gguf-py quantize it: 32 E2M1 values under one E8M0 exponent",
        coded: Coded::Row(Format::Mxfp4),
    },
    FormatInfo {
        name: "q4_k",
        about: "llama.cpp Q4_K (quantize_row_q4_K_ref): super-blocks of 256, 4-bit codes, 6-bit sub-block scales and mins, f16 d and dmin",
        coded: Coded::Row(Format::Q4K),
    },
    FormatInfo {
        name: "nvfp4",
        about: "NVFP4 as ggml's quantize_row_nvfp4_ref: 16 E2M1 values under one UE4M3 scale",
        coded: Coded::Row(Format::Nvfp4),
    },
    FormatInfo {
        name: "nf4",
        about: "bitsandbytes NF4: blocks of 64 under an f32 absmax, the 16 NF4 values, nearest by midpoints",
        coded: Coded::Row(Format::Nf4),
    },
    FormatInfo {
        name: "q5_k",
        about: "llama.cpp Q5_K (quantize_row_q5_K_ref): super-blocks of 256, 5-bit codes, 6-bit sub-block scales and mins, f16 d and dmin",
        coded: Coded::Row(Format::Q5K),
    },
    FormatInfo {
        name: "q6_k",
        about: "llama.cpp Q6_K (quantize_row_q6_K_ref): super-blocks of 256, 6-bit codes, 8-bit sub-block scales, f16 d",
        coded: Coded::Row(Format::Q6K),
    },
    FormatInfo {
        name: "fp8-e4m3-tensor",
        about: "FP8 E4M3, one f32 scale per tensor, Transformer Engine's formula (scale = 448 / amax, codes x * scale)",
        coded: fp8(Fp8Kind::E4M3, Fp8Formula::InverseScale, Fp8Layout::Tensor),
    },
    FormatInfo {
        name: "fp8-e4m3-b128",
        about: "FP8 E4M3 in 128x128 tiles with f32 scales, DeepSeek-V3's formula (s = amax / 448, codes x / s)",
        coded: fp8(
            Fp8Kind::E4M3,
            Fp8Formula::Divide,
            Fp8Layout::Tiles {
                rows: 128,
                cols: 128,
            },
        ),
    },
    FormatInfo {
        name: "fp8-e4m3",
        about: "FP8 E4M3, one f32 scale per channel, vLLM's formula (s = amax / 448, codes x * (1 / s))",
        coded: fp8(Fp8Kind::E4M3, Fp8Formula::Reciprocal, Fp8Layout::Channel),
    },
    FormatInfo {
        name: "fp8-e5m2",
        about: "FP8 E5M2, one f32 scale per channel, vLLM's formula (s = amax / 57344, codes x * (1 / s))",
        coded: fp8(Fp8Kind::E5M2, Fp8Formula::Reciprocal, Fp8Layout::Channel),
    },
];

/// The values a format's codes stand for (index = stored code).
#[must_use]
pub fn grid_of(info: &FormatInfo) -> crate::core::format::Grid {
    coded_grid(info.coded)
}

/// [`grid_of`] of a way of encoding.
pub(crate) fn coded_grid(coded: Coded) -> crate::core::format::Grid {
    match coded {
        Coded::Row(f) => f.grid(),
        Coded::Nf4Dq => Format::Nf4.grid(),
        Coded::Fp8(s) => crate::core::format::Grid {
            values: s.kind.table().to_vec(),
            uniform: false,
        },
    }
}

impl Serialize for FormatInfo {
    /// A format is written as its name.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name)
    }
}

/// The format named `name`.
#[must_use]
pub fn format_info(name: &str) -> Option<&'static FormatInfo> {
    FORMATS.iter().find(|f| f.name == name)
}

/// The bits of a `rows x cols` matrix in a format, part by part (their names, total bits).
pub(crate) fn format_bits(coded: Coded, rows: usize, cols: usize) -> Vec<(String, f64)> {
    let n = rows * cols;
    match coded {
        Coded::Row(f) => {
            let l = f.layout();
            let blocks = (rows * cols.div_ceil(l.block_len)) as f64;
            l.parts
                .iter()
                .map(|p| (p.name.to_string(), blocks * f64::from(p.bits)))
                .collect()
        }
        Coded::Nf4Dq => {
            let blocks = n.div_ceil(nf4::BLOCK);
            let scales = blocks.div_ceil(nf4::DQ_BLOCK);
            vec![
                ("payload: NF4 codes".to_string(), (4 * n) as f64),
                (
                    format!("block absmax: 8-bit codes x {blocks}"),
                    (8 * blocks) as f64,
                ),
                (
                    format!("second-level scales: f32 x {scales}, offset: f32"),
                    (32 * scales) as f64 + f64::from(nf4::dq_layout().per_tensor_bits),
                ),
            ]
        }
        Coded::Fp8(s) => {
            let (th, tw) = s.tile(rows, cols);
            let regions = rows.div_ceil(th) * cols.div_ceil(tw);
            vec![
                ("payload: FP8 codes".to_string(), (8 * n) as f64),
                (format!("scales: f32 x {regions}"), (32 * regions) as f64),
            ]
        }
    }
}
