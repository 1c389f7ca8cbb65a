//! Which weights matter, in the explorer: the importance matrix or activations loaded
//! ([`Calibration`]), and how they are resolved for the matrix on screen ([`Resolved`]).
//!
//! What is loaded is kept as loaded (an opened importance matrix, activations); the
//! importance vector of the data on screen is resolved by the analysis thread for each job
//! ([`Calibration::resolve`]), so that text edited to another width says why the output
//! errors are absent instead of losing what was loaded. The built-in activations are
//! made for the data's width each time.

use std::sync::Arc;

use crate::core::Matrix;
use crate::core::importance::{Activations, BuiltIn, Importance, Tokens, importance_of};
use crate::io::imatrix::Imatrix;

/// The name the prompt and `--activations` take for the built-in activations.
pub const BUILT_IN: &str = "built-in";

/// Where the activations come from.
#[derive(Clone)]
pub enum TokensFrom {
    /// None: an importance matrix alone.
    None,
    /// The built-in synthetic activations, made for the data's width.
    BuiltIn,
    /// Activations read from a file.
    File(Arc<dyn Tokens>),
}

/// An importance matrix or activations, loaded.
#[derive(Clone)]
pub struct Calibration {
    /// How the title and the Settings pane name it (`imatrix F`, `activations built-in`).
    pub label: String,
    /// What was asked for (the prompt proposes it again).
    pub spec: String,
    /// The opened importance matrix, the entry picked, and the tensor's name to find its
    /// entry by.
    pub imatrix: Option<(Arc<Imatrix>, Option<String>, Option<String>)>,
    /// The activations.
    pub tokens: TokensFrom,
}

impl std::fmt::Debug for Calibration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Calibration")
            .field("label", &self.label)
            .finish_non_exhaustive()
    }
}

/// The importance and activations of one matrix, ready for the core.
#[derive(Clone, Default)]
pub struct Resolved {
    /// The importance vector (from the imatrix, else the activations' mean of x²).
    pub importance: Option<Importance>,
    /// The activations.
    pub tokens: Option<Arc<dyn Tokens>>,
}

impl std::fmt::Debug for Resolved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resolved")
            .field(
                "importance",
                &self.importance.as_ref().map(Importance::source),
            )
            .field("tokens", &self.tokens.as_ref().map(|t| t.name()))
            .finish()
    }
}

impl Calibration {
    /// The built-in activations.
    #[must_use]
    pub fn built_in() -> Self {
        Self {
            label: format!("activations {BUILT_IN}"),
            spec: BUILT_IN.to_string(),
            imatrix: None,
            tokens: TokensFrom::BuiltIn,
        }
    }

    /// The importance and activations for `matrix`, or why they do not fit it (one
    /// sentence naming the file, the entry and what was expected).
    pub fn resolve(&self, matrix: &Matrix) -> Result<Resolved, String> {
        let (rows, cols) = matrix.shape();
        let tokens: Option<Arc<dyn Tokens>> = match &self.tokens {
            TokensFrom::None => None,
            TokensFrom::BuiltIn => Some(Arc::new(Activations::built_in(cols, &BuiltIn::default()))),
            TokensFrom::File(t) => Some(Arc::clone(t)),
        };
        if let Some(t) = &tokens
            && t.shape().1 != cols
        {
            return Err(format!(
                "activations {} have {} columns per token, the data has {cols} columns (its input features)",
                t.name(),
                t.shape().1
            ));
        }
        let importance = match &self.imatrix {
            Some((im, pick, tensor)) => {
                let name = match (pick, tensor, im.entries()) {
                    (Some(p), _, _) => p.as_str(),
                    (None, Some(t), _) => t.as_str(),
                    (None, None, [only]) => only.name.as_str(),
                    (None, None, entries) => {
                        return Err(format!(
                            "imatrix {} holds {} entries and the data has no tensor name: open a checkpoint's tensor, or give --imatrix-tensor NAME",
                            im.file(),
                            entries.len()
                        ));
                    }
                };
                Some(
                    im.importance(name, (rows, cols), pick.as_deref())
                        .map_err(|e| e.to_string())?,
                )
            }
            None => match &tokens {
                Some(t) => Some(importance_of(t.as_ref()).map_err(|e| e.to_string())?),
                None => None,
            },
        };
        Ok(Resolved { importance, tokens })
    }
}

/// What the prompt's text asks for: an importance matrix (a `.dat` file, or a `.gguf` file
/// without `:TENSOR`), else activations (`built-in`, a `.npy` file, `FILE:TENSOR`, text).
#[must_use]
pub fn is_imatrix_spec(spec: &str) -> bool {
    std::path::Path::new(spec)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("dat") || e.eq_ignore_ascii_case("gguf"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_activations_follow_the_width() {
        let c = Calibration::built_in();
        for cols in [8usize, 64] {
            let (a, b) = (vec![1.0f32; cols], vec![0.5f32; cols]);
            let m = Matrix::from_rows(&[&a, &b]).unwrap();
            let r = c.resolve(&m).unwrap();
            assert_eq!(r.tokens.unwrap().shape(), (256, cols));
            assert_eq!(r.importance.unwrap().columns(), cols);
        }
    }

    #[test]
    fn specs_say_which_kind() {
        assert!(is_imatrix_spec("imatrix.gguf"));
        assert!(is_imatrix_spec("old.DAT"));
        assert!(!is_imatrix_spec("acts.gguf:blk.0.input"));
        assert!(!is_imatrix_spec("x.npy"));
        assert!(!is_imatrix_spec(BUILT_IN));
    }
}
