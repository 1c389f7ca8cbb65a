//! A scanned tensor's importance-weighted errors, with an importance matrix's entry.

use super::Weighted;
use crate::core::config::{Config, Granularity};
use crate::core::importance::{Importance, ImportanceSource};
use crate::core::output::{Calibration, OutputStage};
use crate::core::{Options, Report, analyse_weighted, analyse_with};

/// The importance-weighted errors of `matrix` per tensor, per channel and under `config`.
pub(super) fn weighted(
    matrix: &crate::core::Matrix,
    config: &Config,
    importance: &Importance,
) -> Result<Weighted, String> {
    let stage = OutputStage::new(
        matrix,
        Calibration {
            importance: Some(importance),
            tokens: None,
        },
    )
    .map_err(|e| e.to_string())?;
    let mse = |report: &Report| -> Result<Option<f64>, String> {
        Ok(stage
            .errors(report, &mut |_, _| true)
            .map_err(|e| e.to_string())?
            .and_then(|o| o.overall.imatrix_mse))
    };
    let at = |granularity| -> Result<Option<f64>, String> {
        let c = Config {
            granularity,
            ..*config
        };
        let r = analyse_with(matrix, &c, Options::ONE_CONFIG)
            .map_err(|e| format!("{granularity}: {e}"))?;
        mse(&r)
    };
    let own = analyse_weighted(matrix, config, Some(importance), Options::ONE_CONFIG)
        .map_err(|e| e.to_string())?;
    let entry = match importance.source() {
        ImportanceSource::Imatrix { entry, .. } => entry.clone(),
        ImportanceSource::Activations { name, .. } => name.clone(),
    };
    Ok(Weighted {
        entry,
        tensor: at(Granularity::Tensor)?,
        channel: at(Granularity::Channel)?,
        configured: mse(&own)?,
        quantized_with: own.quantized_with.is_some(),
    })
}
