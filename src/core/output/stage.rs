//! The output errors of a report and of every rung of its granularity ladder: the stage
//! that follows the weight report (the explorer shows the report first, then these).

use super::{OutputProblem, OutputStage};
use crate::core::analyse::{AnalyseError, Options, Progress, analyse_weighted};
use crate::core::config::Clipping;
use crate::core::report::Report;

/// Why the output stage stopped.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StageError {
    /// The output errors could not be computed.
    #[error(transparent)]
    Output(#[from] OutputProblem),
    /// A rung could not be analysed again.
    #[error(transparent)]
    Analyse(#[from] AnalyseError),
}

/// Sets [`Report::output`] and each rung's `output` from `stage` (a stage of the report's
/// matrix). Each rung but the active one is analysed again at its granularity to get its
/// reconstruction, as the ladder quantized it: without importance, except under
/// `--clip mse-weighted`, whose every rung's search is weighted by the stage's importance.
/// `progress` is told the work done and all of it; returns `Ok(false)` when it stopped.
pub fn add_output_errors(
    stage: &OutputStage<'_>,
    report: &mut Report,
    progress: Progress<'_>,
) -> Result<bool, StageError> {
    let parts = 1 + report.ladder.iter().filter(|r| !r.active).count();
    let mut done_parts = 0usize;
    let mut step = |part: usize, done: usize, total: usize| {
        let total = total.max(1);
        progress(part * total + done.min(total), parts * total)
    };
    let Some(own) = stage.errors(report, &mut |d, t| step(0, d, t))? else {
        return Ok(false);
    };
    let config = report.config;
    let weighing = stage
        .calibration()
        .importance
        .filter(|_| config.clipping == Clipping::MseWeighted);
    let mut rungs = std::mem::take(&mut report.ladder);
    for rung in &mut rungs {
        if rung.active {
            rung.output = Some(own.clone());
            continue;
        }
        done_parts += 1;
        let mut c = config;
        c.granularity = rung.granularity;
        let r = analyse_weighted(stage.matrix(), &c, weighing, Options::ONE_CONFIG)?;
        let part = done_parts;
        let Some(o) = stage.errors(&r, &mut |d, t| step(part, d, t))? else {
            report.ladder = rungs;
            return Ok(false);
        };
        rung.output = Some(o);
    }
    report.ladder = rungs;
    report.output = Some(own);
    Ok(true)
}
