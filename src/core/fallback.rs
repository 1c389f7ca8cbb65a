//! llama.cpp's fallbacks: when a tensor's rows are not a whole number of a type's blocks
//! (256 values for the k-quants and most i-quants), `llama-quantize` quantizes that tensor
//! with another type instead, and says so (`tensor_type_fallback` in llama.cpp's
//! `src/llama-quant.cpp`, commit 007dbbf3, called from `llama_tensor_get_type`; the
//! table is [`FALLBACKS`]):
//!
//! | type | falls back to |
//! |---|---|
//! | IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ4_XS | IQ4_NL |
//! | Q2_K, Q3_K, TQ1_0, TQ2_0 | Q4_0 |
//! | Q4_K | Q5_0 |
//! | Q5_K | Q5_1 |
//! | Q6_K | Q8_0 |
//!
//! When the fallback's blocks (32 values) do not divide the rows either, `llama-quantize`
//! keeps the tensor in F16; any other type whose blocks do not divide the rows is an error
//! there ("no tensor type fallback is defined"). quantscope does the same wherever a format
//! is applied (the format ladder, `--preset`, `scan`, `scan --budget`): the analysis is the
//! fallback's, labelled `q4_k -> q5_0 (rows of 384)`, and rows that no fallback fits are
//! refused with the reason (quantscope measures quantization, and F16 is not one here).
//!
//! A row of the table applies once both of its types are formats or presets here: the
//! i-quants' rows wait for those formats ([`FallbackError::Unavailable`] names IQ4_NL until
//! it is one).

use serde::Serialize;

use crate::core::config::{Config, Granularity};
use crate::core::format::registry::{Coded, FormatInfo, format_info};
use crate::core::presets::{PresetOptions, format_config, preset};

/// A format applied as its llama.cpp fallback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Fallback {
    /// The format asked for (`q4_k`).
    pub from: &'static str,
    /// The type used instead (`q5_0`).
    pub to: &'static str,
    /// The row length its blocks do not divide.
    pub cols: usize,
}

impl Fallback {
    /// `q4_k -> q5_0 (rows of 384)`.
    #[must_use]
    pub fn label(&self) -> String {
        format!("{} -> {} (rows of {})", self.from, self.to, self.cols)
    }
}

impl std::fmt::Display for Fallback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label())
    }
}

/// Why rows cannot be quantized in a format, not even through a fallback.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FallbackError {
    /// The fallback's blocks do not divide the rows either.
    #[error(
        "{from} needs rows of a multiple of {block} values and its llama.cpp fallback {to} a multiple of {to_block}; rows of {cols} fit neither (llama-quantize keeps such a tensor in F16)"
    )]
    NeitherFits {
        /// The format asked for.
        from: &'static str,
        /// Its block.
        block: usize,
        /// Its fallback.
        to: &'static str,
        /// The fallback's block.
        to_block: usize,
        /// The row length.
        cols: usize,
    },
    /// The fallback type has no encoder here yet.
    #[error(
        "{from} needs rows of a multiple of {block} values, got {cols}; llama.cpp falls back to {to}, which is not available here"
    )]
    Unavailable {
        /// The format asked for.
        from: &'static str,
        /// Its block.
        block: usize,
        /// The fallback llama.cpp uses.
        to: &'static str,
        /// The row length.
        cols: usize,
    },
    /// A llama.cpp type with no fallback.
    #[error(
        "{from} needs rows of a multiple of {block} values, got {cols}, and llama-quantize defines no fallback for it"
    )]
    None {
        /// The format asked for.
        from: &'static str,
        /// Its block.
        block: usize,
        /// The row length.
        cols: usize,
    },
}

/// `tensor_type_fallback`'s table, as data: (type asked for, the type llama-quantize uses
/// instead when the type's blocks do not divide the rows), by quantscope's names.
pub const FALLBACKS: [(&str, &str); 15] = [
    ("iq1_s", "iq4_nl"),
    ("iq1_m", "iq4_nl"),
    ("iq2_xxs", "iq4_nl"),
    ("iq2_xs", "iq4_nl"),
    ("iq2_s", "iq4_nl"),
    ("iq3_xxs", "iq4_nl"),
    ("iq3_s", "iq4_nl"),
    ("iq4_xs", "iq4_nl"),
    ("q2_k", "q4_0"),
    ("q3_k", "q4_0"),
    ("tq1_0", "q4_0"),
    ("tq2_0", "q4_0"),
    ("q4_k", "q5_0"),
    ("q5_k", "q5_1"),
    ("q6_k", "q8_0"),
];

/// The type llama-quantize uses instead of `name` for rows its blocks do not divide
/// (`tensor_type_fallback`); `None` for a type without one.
#[must_use]
pub fn target(name: &str) -> Option<&'static str> {
    FALLBACKS
        .iter()
        .find(|(from, _)| *from == name)
        .map(|&(_, to)| to)
}

/// The ggml types of the format ladder that llama-quantize has no fallback for.
const LLAMA_WITHOUT_FALLBACK: [&str; 2] = ["mxfp4", "nvfp4"];

/// Values per block along a row of a format (1 for a format whose scales do not need whole
/// blocks, FP8).
#[must_use]
pub fn block_of(info: &FormatInfo) -> usize {
    match info.coded {
        Coded::Row(f) => f.block_len(),
        Coded::Nf4Dq => crate::core::format::nf4::BLOCK,
        Coded::Nvfp4Two(_) => crate::core::format::nvfp4_two::BLOCK,
        Coded::Fp8(_) => 1,
    }
}

/// A fallback type's block along a row and its configuration: a format's (IQ4_NL, once it
/// is one), or a GGUF preset's (Q4_0, Q5_0, Q5_1, Q8_0: groups of 32).
fn applied(name: &str) -> Option<(usize, Config)> {
    if let Some(info) = format_info(name) {
        return Some((block_of(info), format_config(info)));
    }
    let config = preset(name, PresetOptions::default()).ok()?;
    match config.granularity {
        Granularity::Group(g) => Some((g, config)),
        _ => None,
    }
}

/// How `info` applies to rows of `cols` values: `Ok(None)` as itself, `Ok(Some(..))` through
/// its fallback (with the fallback's configuration), or why it cannot.
pub fn resolve(
    info: &'static FormatInfo,
    cols: usize,
) -> Result<Option<(Fallback, Config)>, FallbackError> {
    let block = block_of(info);
    if cols.is_multiple_of(block.max(1)) {
        return Ok(None);
    }
    let from = info.name;
    let Some(to) = target(from) else {
        return if LLAMA_WITHOUT_FALLBACK.contains(&from) {
            Err(FallbackError::None { from, block, cols })
        } else {
            // Not a llama.cpp type: its own library refuses such rows (the analysis says
            // how).
            Ok(None)
        };
    };
    let Some((to_block, config)) = applied(to) else {
        return Err(FallbackError::Unavailable {
            from,
            block,
            to,
            cols,
        });
    };
    if !cols.is_multiple_of(to_block) {
        return Err(FallbackError::NeitherFits {
            from,
            block,
            to,
            to_block,
            cols,
        });
    }
    Ok(Some((Fallback { from, to, cols }, config)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(name: &str) -> &'static FormatInfo {
        format_info(name).unwrap()
    }

    #[test]
    fn the_k_quants_fall_back_as_llama_quantize_does() {
        for (from, to) in [
            ("q2_k", "q4_0"),
            ("q3_k", "q4_0"),
            ("q4_k", "q5_0"),
            ("q5_k", "q5_1"),
            ("q6_k", "q8_0"),
        ] {
            let (fb, config) = resolve(info(from), 384).unwrap().unwrap();
            assert_eq!((fb.from, fb.to, fb.cols), (from, to, 384));
            assert_eq!(config, preset(to, PresetOptions::default()).unwrap());
            assert_eq!(resolve(info(from), 512), Ok(None));
        }
        assert_eq!(
            resolve(info("q4_k"), 384).unwrap().unwrap().0.label(),
            "q4_k -> q5_0 (rows of 384)"
        );
    }

    #[test]
    fn rows_that_no_fallback_fits_are_refused_with_the_reason() {
        let e = resolve(info("q4_k"), 100).unwrap_err();
        assert_eq!(
            e.to_string(),
            "q4_k needs rows of a multiple of 256 values and its llama.cpp fallback q5_0 a multiple of 32; rows of 100 fit neither (llama-quantize keeps such a tensor in F16)"
        );
        let e = resolve(info("mxfp4"), 48).unwrap_err();
        assert!(e.to_string().contains("defines no fallback"), "{e}");
        // Formats outside llama.cpp: their own refusal stands.
        assert_eq!(resolve(info("nf4"), 96), Ok(None));
        assert_eq!(resolve(info("mxfp8-e4m3"), 48), Ok(None));
        assert_eq!(resolve(info("fp8-e4m3"), 7), Ok(None));
    }

    #[test]
    fn the_i_quants_fall_back_to_iq4_nl() {
        for from in [
            "iq1_s", "iq1_m", "iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq4_xs",
        ] {
            assert_eq!(target(from), Some("iq4_nl"), "{from}");
        }
        assert_eq!(target("tq1_0"), Some("q4_0"));
        assert_eq!(target("tq2_0"), Some("q4_0"));
        assert_eq!(target("q4_0"), None);
    }
}
