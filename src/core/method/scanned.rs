//! The methods in a whole-checkpoint scan (`quantscope scan --method`): what ran on each
//! tensor whose width the activations fit ([`TensorMethods`]), what was asked and on which
//! activations ([`ScanMethods`]), and the ranking by the method's output error
//! ([`rank`]). Data only, filled by `crate::scan` and written by `io::export::write_scan`.

use super::run::{Methods, Request};

/// What the methods did on one tensor.
#[derive(Debug, Clone, PartialEq)]
pub enum TensorMethods {
    /// They ran.
    Ran(Box<Methods>),
    /// They did not run: the activations' width is not the tensor's (the sentence says both).
    Width(String),
    /// They could not run on it (a group that does not divide its columns, a value that is
    /// not finite): the message.
    Failed(String),
}

impl TensorMethods {
    /// The results, when the methods ran.
    #[must_use]
    pub fn ran(&self) -> Option<&Methods> {
        match self {
            Self::Ran(m) => Some(m),
            Self::Width(_) | Self::Failed(_) => None,
        }
    }

    /// Why they did not run, when they did not.
    #[must_use]
    pub fn why_not(&self) -> Option<&str> {
        match self {
            Self::Ran(_) => None,
            Self::Width(why) | Self::Failed(why) => Some(why),
        }
    }
}

/// What a scan's methods were asked, and on what.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanMethods {
    /// The methods and their settings.
    pub request: Request,
    /// The activations' name (`built-in (256 tokens, ...)` or the file).
    pub activations: String,
    /// The activations' width; `None` for the built-in ones, made for each tensor's width.
    pub width: Option<usize>,
    /// The tokens the activations hold, when the methods ran on only their first ones
    /// (`core::method::tokens`' bound).
    pub tokens_held: Option<usize>,
}

impl ScanMethods {
    /// What the ranking is by, in words: the first weight method's output MSE, else the
    /// first W8A8 layer's.
    #[must_use]
    pub fn ranked_by(&self) -> String {
        match (self.request.methods.first(), self.request.act_quant.first()) {
            (Some(m), _) => format!("{m}_output_mse"),
            (None, Some(g)) => format!("w8a8_{}_output_mse", g.name()),
            (None, None) => String::new(),
        }
    }
}

/// The error a tensor is ranked by: its first weight method's output MSE over the layer,
/// else its first W8A8 layer's.
#[must_use]
pub fn key(m: &Methods) -> Option<f64> {
    m.weights
        .first()
        .map(|w| w.error.overall.output_mse)
        .or_else(|| m.w8a8.first().map(|w| w.error.overall.output_mse))
}

/// The order of `tensors` (names and what the methods did) by the method's output error,
/// largest first (ties by name); the tensors the methods did not run on are left out.
#[must_use]
pub fn rank(tensors: &[(&str, Option<&TensorMethods>)]) -> Vec<usize> {
    let mut ranked: Vec<(usize, f64)> = tensors
        .iter()
        .enumerate()
        .filter_map(|(i, (_, m))| Some((i, key(m.and_then(|m| m.ran())?)?)))
        .collect();
    ranked.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then_with(|| tensors[a.0].0.cmp(tensors[b.0].0))
    });
    ranked.into_iter().map(|(i, _)| i).collect()
}
