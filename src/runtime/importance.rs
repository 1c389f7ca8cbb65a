//! Loading an importance matrix or activations for the explorer (`Alt-I`, `--imatrix`,
//! `--activations`): opened by the readers `report` uses, and checked against the data on
//! screen so that a file that does not fit is one message and nothing changes.

use std::path::Path;
use std::sync::Arc;

use crate::app::calibration::{BUILT_IN, Calibration, TokensFrom, is_imatrix_spec};
use crate::core::Matrix;
use crate::io::activations::open_activations;
use crate::io::imatrix::Imatrix;

/// What to load: an importance matrix and activations (either or both), the imatrix entry
/// to pick, and the tensor's name to find its entry by.
#[derive(Debug, Clone, Default)]
pub struct Request<'a> {
    /// `--imatrix FILE`.
    pub imatrix: Option<&'a str>,
    /// `--imatrix-tensor NAME`.
    pub pick: Option<&'a str>,
    /// `--activations FILE[:TENSOR]|built-in`.
    pub activations: Option<&'a str>,
    /// The tensor shown, if it has a name.
    pub tensor: Option<&'a str>,
}

/// Loads what the prompt's `spec` names (an importance matrix by its ending, else
/// activations) and checks it against `matrix` when there is one.
pub fn load_spec(
    spec: &str,
    matrix: Option<&Matrix>,
    tensor: Option<&str>,
) -> Result<Calibration, String> {
    let request = if is_imatrix_spec(spec) && !spec.contains(".gguf:") {
        Request {
            imatrix: Some(spec),
            tensor,
            ..Request::default()
        }
    } else {
        Request {
            activations: Some(spec),
            tensor,
            ..Request::default()
        }
    };
    load(&request, matrix)
}

/// Loads `request` and checks it against `matrix` when there is one; `None`-only requests
/// are refused.
pub fn load(request: &Request<'_>, matrix: Option<&Matrix>) -> Result<Calibration, String> {
    let tokens = match request.activations {
        None => TokensFrom::None,
        Some(BUILT_IN) if !Path::new(BUILT_IN).exists() => TokensFrom::BuiltIn,
        Some(spec) => TokensFrom::File(Arc::from(
            open_activations(spec).map_err(|e| e.to_string())?,
        )),
    };
    let imatrix = match request.imatrix {
        Some(file) => Some((
            Arc::new(Imatrix::open(Path::new(file)).map_err(|e| e.to_string())?),
            request.pick.map(str::to_string),
            request.tensor.map(str::to_string),
        )),
        None => None,
    };
    let name = |p: &str| {
        Path::new(p)
            .file_name()
            .map_or_else(|| p.to_string(), |n| n.to_string_lossy().into_owned())
    };
    let label = match (request.imatrix, request.activations) {
        (Some(i), Some(a)) => format!("imatrix {} + activations {}", name(i), name(a)),
        (Some(i), None) => format!("imatrix {}", name(i)),
        (None, Some(a)) => format!("activations {}", name(a)),
        (None, None) => return Err("no importance matrix or activations given".into()),
    };
    let spec = request
        .activations
        .or(request.imatrix)
        .unwrap_or_default()
        .to_string();
    let calibration = Calibration {
        label,
        spec,
        imatrix,
        tokens,
    };
    if let Some(m) = matrix {
        calibration.resolve(m)?;
    }
    Ok(calibration)
}
