//! The format ladder on the output error: the Pareto front drawn on it, and the pairs of
//! entries whose order it reverses.

use super::Entry;
use crate::core::importance::{Measure, Ranked, RankingChange, ranking_changes};

/// The measure the entries are compared on: the output error when they have one, else the
/// importance-weighted error; `None` without either.
fn measure(entries: &[Entry]) -> Option<Measure> {
    let outputs = || entries.iter().filter_map(|e| e.measured()?.output.as_ref());
    if outputs().any(|o| o.overall.output_mse.is_some()) {
        Some(Measure::OutputMse)
    } else if outputs().any(|o| o.overall.imatrix_mse.is_some()) {
        Some(Measure::ImatrixMse)
    } else {
        None
    }
}

/// An entry's error on `m`, if measured.
fn error_on(e: &Entry, m: Measure) -> Option<f64> {
    let o = e.measured()?.output.as_ref()?.overall;
    match m {
        Measure::OutputMse => o.output_mse,
        Measure::ImatrixMse => o.imatrix_mse,
    }
}

/// Marks [`Entry::pareto_output`]: no other entry has fewer (or equal) bits per weight and
/// a lower (or equal) error on the measure, one of the two strictly.
pub(super) fn mark_pareto_output(entries: &mut [Entry]) {
    let Some(m) = measure(entries) else {
        return;
    };
    let points: Vec<Option<(f64, f64)>> = entries
        .iter()
        .map(|e| Some((e.bits_per_weight?, error_on(e, m)?)))
        .collect();
    for (i, e) in entries.iter_mut().enumerate() {
        let Some((b, r)) = points[i] else { continue };
        e.pareto_output = !points.iter().enumerate().any(|(j, p)| {
            j != i && p.is_some_and(|(ob, or)| ob <= b && or <= r && (ob < b || or < r))
        });
    }
}

/// The pairs of measured entries whose order by weight RMSE the measure reverses.
pub(super) fn changes(entries: &[Entry]) -> Vec<RankingChange> {
    let Some(m) = measure(entries) else {
        return Vec::new();
    };
    let ranked: Vec<Ranked<'_>> = entries
        .iter()
        .filter_map(|e| {
            Some(Ranked {
                name: &e.name,
                weight_rmse: e.measured()?.overall.rmse,
                error: error_on(e, m)?,
            })
        })
        .collect();
    ranking_changes(&ranked, m)
}
