//! `--imatrix`, `--imatrix-tensor` and `--activations`: the importance vector and the
//! activations of `report` and `scan`, loaded and checked against the matrix.

use std::path::PathBuf;

use clap::Args;

use crate::core::Matrix;
use crate::core::importance::{Activations, BuiltIn, Importance, Tokens, importance_of};
use crate::core::output::Calibration;
use crate::io::activations::open_activations;
use crate::io::imatrix::Imatrix;

/// The name `--activations` takes for the built-in synthetic activations.
pub const BUILT_IN: &str = "built-in";

/// Flags that say which weights matter.
#[derive(Debug, Args, Default, Clone)]
pub struct ImportanceArgs {
    /// A llama.cpp importance matrix (llama-imatrix's GGUF, or its legacy .dat): llama.cpp's
    /// formats (the k-quants, the i-quants, q4_0, q4_1, q5_0, q5_1) quantize with the tensor's entry as
    /// llama-quantize --imatrix does, with the importance-weighted error (imatrix_mse) and
    /// the importance summary beside the weight errors.
    #[arg(long, value_name = "FILE")]
    pub imatrix: Option<PathBuf>,
    /// The entry of --imatrix to use (default: the tensor's own name, then its llama.cpp
    /// GGUF name, e.g. blk.3.ffn_down.weight for model.layers.3.mlp.down_proj.weight).
    #[arg(long, value_name = "NAME", requires = "imatrix")]
    pub imatrix_tensor: Option<String>,
    /// Calibration activations, the inputs the layer sees ([tokens, input features]): a .npy
    /// file, a checkpoint's tensor as FILE:TENSOR, channel text, or `built-in` (256 seeded
    /// tokens with a few loud columns). Adds the layer's output error (output_mse,
    /// output_sqnr_db); without --imatrix their mean of x² per column is the importance.
    #[arg(long, value_name = "FILE[:TENSOR]")]
    pub activations: Option<String>,
    /// The formats quantize as without the importance; --imatrix and --activations only
    /// measure (imatrix_mse, output_mse), so one format can be compared with and without it.
    #[arg(long)]
    pub measure_only: bool,
}

/// The importance and activations for one matrix.
#[derive(Default)]
pub struct Loaded {
    /// The importance vector.
    pub importance: Option<Importance>,
    /// The activations.
    pub tokens: Option<Box<dyn Tokens>>,
    /// The importance only measures (`--measure-only`): the formats quantize without it.
    pub measure_only: bool,
}

impl Loaded {
    /// What the formats quantize with: the importance, unless it only measures.
    #[must_use]
    pub fn quantize_with(&self) -> Option<&Importance> {
        self.importance.as_ref().filter(|_| !self.measure_only)
    }

    /// The calibration for the output stage.
    #[must_use]
    pub fn calibration(&self) -> Calibration<'_> {
        Calibration {
            importance: self.importance.as_ref(),
            tokens: self.tokens.as_deref(),
        }
    }
}

impl ImportanceArgs {
    /// Neither flag given.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.imatrix.is_none() && self.activations.is_none()
    }

    /// `--measure-only` with nothing to measure with: the message.
    pub fn measure_only_alone(&self) -> Result<(), String> {
        if self.measure_only && self.is_empty() {
            return Err(
                "--measure-only says the importance only measures: give it --imatrix FILE or --activations FILE (or built-in)"
                    .into(),
            );
        }
        Ok(())
    }

    /// The opened importance matrix, if one was given.
    pub fn open_imatrix(&self) -> Result<Option<Imatrix>, String> {
        self.imatrix
            .as_deref()
            .map(Imatrix::open)
            .transpose()
            .map_err(|e| e.to_string())
    }

    /// The importance and activations for `matrix`, the tensor `tensor` (its name in a
    /// checkpoint, if it has one) of the file `file`, with `imatrix` already opened.
    pub fn load(
        &self,
        imatrix: Option<&Imatrix>,
        matrix: &Matrix,
        tensor: Option<&str>,
    ) -> Result<Loaded, String> {
        self.measure_only_alone()?;
        let (rows, cols) = matrix.shape();
        let tokens: Option<Box<dyn Tokens>> = match self.activations.as_deref() {
            None => None,
            Some(BUILT_IN) if !std::path::Path::new(BUILT_IN).exists() => {
                Some(Box::new(Activations::built_in(cols, &BuiltIn::default())))
            }
            Some(spec) => Some(open_activations(spec).map_err(|e| e.to_string())?),
        };
        if let Some(t) = &tokens
            && t.shape().1 != cols
        {
            return Err(format!(
                "activations {} have {} columns per token, the tensor has {cols} columns (its input features)",
                t.name(),
                t.shape().1
            ));
        }
        let importance = match imatrix {
            Some(im) => Some(entry(
                im,
                tensor,
                self.imatrix_tensor.as_deref(),
                (rows, cols),
            )?),
            None => match &tokens {
                Some(t) => Some(importance_of(t.as_ref()).map_err(|e| e.to_string())?),
                None => None,
            },
        };
        Ok(Loaded {
            importance,
            tokens,
            measure_only: self.measure_only,
        })
    }
}

/// The importance of `tensor` in `im`: the entry `pick`, the tensor's own, or (a matrix
/// with no tensor name) the file's only entry.
fn entry(
    im: &Imatrix,
    tensor: Option<&str>,
    pick: Option<&str>,
    shape: (usize, usize),
) -> Result<Importance, String> {
    let name = match (pick, tensor, im.entries()) {
        (Some(_), _, _) | (None, Some(_), _) => tensor.unwrap_or_default(),
        (None, None, [only]) => only.name.as_str(),
        (None, None, entries) => {
            return Err(format!(
                "imatrix {} holds {} entries and the matrix has no tensor name: pick one with --imatrix-tensor NAME",
                im.file(),
                entries.len()
            ));
        }
    };
    im.importance(name, shape, pick).map_err(|e| e.to_string())
}
