//! Quantizing with an importance vector in the analysis: which configurations read one, and
//! a legacy preset's report from ggml's weighted search beside its integer ladder.

use super::{AnalyseError, Options, Progress, active_rung, format, integer};
use crate::core::config::Config;
use crate::core::format::registry::Coded;
use crate::core::format::{Format, Legacy};
use crate::core::importance::Importance;
use crate::core::matrix::Matrix;
use crate::core::report::{Report, Rung};

/// The way `coded` encodes reads an importance vector.
pub(super) fn reads_importance(coded: Coded) -> bool {
    matches!(coded, Coded::Row(f) if f.reads_importance())
}

/// A legacy preset with importance: its report from ggml's weighted search (as the format
/// `l`), handed to `first`; its ladder the preset's at every other granularity, as without,
/// with this report's rung for its own.
pub(super) fn legacy(
    matrix: &Matrix,
    config: &Config,
    imp: &Importance,
    l: Legacy,
    options: Options,
    first: &mut dyn FnMut(Report) -> bool,
    progress: Progress<'_>,
) -> Result<Option<Vec<Rung>>, AnalyseError> {
    let mut report = format::analyse_format(
        matrix,
        config,
        Coded::Row(Format::Legacy(l)),
        Some(imp),
        None,
    )?;
    report.quantized_with = Some(imp.source().clone());
    report.importance = Some(std::sync::Arc::new(imp.clone()));
    if !options.ladder {
        return Ok(first(report).then(Vec::new));
    }
    let active = active_rung(&report);
    let mut pending = Some(report);
    let mut hand_over = |_integer: Report| pending.take().is_some_and(&mut *first);
    let options = Options {
        keep_codes: false,
        ..options
    };
    let Some(mut rungs) = integer(matrix, config, Some(imp), options, &mut hand_over, progress)?
    else {
        return Ok(None);
    };
    for r in &mut rungs {
        if r.active {
            *r = active.clone();
        }
    }
    Ok(Some(rungs))
}
