//! The methods of `scan --method`: run on each tensor whose width the activations fit, with
//! the activations read once for the whole scan (their first tokens, up to
//! `core::method::tokens`' bound) or the built-in ones made for each tensor's width.

use std::sync::Arc;

use ndarray::Array2;

use crate::core::Matrix;
use crate::core::importance::{Activations, BuiltIn, Tokens};
use crate::core::method::run::{Request, run};
use crate::core::method::scanned::{ScanMethods, TensorMethods};
use crate::core::method::tokens::{budget, read_first};

/// Where the methods' activations come from.
#[derive(Debug, Clone)]
pub enum ScanTokens {
    /// The built-in synthetic activations, made for each tensor's width.
    BuiltIn,
    /// Activations read once: their first tokens, and their name.
    Read(Arc<Array2<f32>>, String),
}

/// The methods a scan runs on each tensor.
#[derive(Debug, Clone)]
pub struct MethodScan {
    /// What to run (its scheme from the scan's configuration).
    pub request: Request,
    /// On what.
    pub tokens: ScanTokens,
    /// The tokens the activations hold, when only their first ones were read.
    pub tokens_held: Option<usize>,
}

impl MethodScan {
    /// `request` on the built-in activations.
    #[must_use]
    pub fn built_in(request: Request) -> Self {
        Self {
            request,
            tokens: ScanTokens::BuiltIn,
            tokens_held: None,
        }
    }

    /// `request` on `tokens`, their first ones read now (up to the methods' bound).
    pub fn read(request: Request, tokens: &dyn Tokens) -> Result<Self, String> {
        let (count, width) = tokens.shape();
        let limit = budget(count, width);
        let x = read_first(tokens, limit).map_err(|e| e.to_string())?;
        Ok(Self {
            request,
            tokens: ScanTokens::Read(Arc::new(x), tokens.name()),
            tokens_held: (count > limit).then_some(count),
        })
    }

    /// What the scan says it ran, and on what.
    #[must_use]
    pub fn describe(&self) -> ScanMethods {
        let (activations, width) = match &self.tokens {
            ScanTokens::BuiltIn => (
                format!(
                    "built-in ({} tokens for each tensor's width)",
                    BuiltIn::default().tokens
                ),
                None,
            ),
            ScanTokens::Read(x, name) => (name.clone(), Some(x.ncols())),
        };
        ScanMethods {
            request: self.request.clone(),
            activations,
            width,
            tokens_held: self.tokens_held,
        }
    }

    /// The methods on `matrix`: skipped when the activations' width is not its columns.
    #[must_use]
    pub fn run(&self, matrix: &Matrix) -> TensorMethods {
        let cols = matrix.shape().1;
        let built;
        let x = match &self.tokens {
            ScanTokens::BuiltIn => {
                built = Activations::built_in(cols, &BuiltIn::default());
                built.values()
            }
            ScanTokens::Read(x, name) => {
                if x.ncols() != cols {
                    return TensorMethods::Width(format!(
                        "activations {name} have {} columns per token, the tensor has {cols} columns (its input features)",
                        x.ncols()
                    ));
                }
                x.view()
            }
        };
        match run(&matrix.values(), &x, &self.request, &mut |_, _| true) {
            Ok(mut m) => {
                m.tokens_held = self.tokens_held;
                TensorMethods::Ran(Box::new(m))
            }
            Err(e) => TensorMethods::Failed(e.to_string()),
        }
    }
}
