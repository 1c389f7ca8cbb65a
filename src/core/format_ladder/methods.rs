//! The format ladder with the entries of the methods smarter than rounding
//! (`core::method::ladder`): added to a ladder already measured, the Pareto fronts, the
//! reversed pairs and the order drawn again over every entry.

use super::{Entry, FormatLadder, calibrated, mark_pareto};

/// Adds `entries` to `ladder`, and marks and sorts its entries again as
/// [`super::format_ladder_inputs`] does: the measured by bits per weight, then RMSE; the
/// unmeasured after, in their order.
pub fn add_method_entries(ladder: &mut FormatLadder, entries: Vec<Entry>) {
    if entries.is_empty() {
        return;
    }
    ladder.entries.extend(entries);
    for e in &mut ladder.entries {
        e.pareto = false;
        e.pareto_output = false;
    }
    mark_pareto(&mut ladder.entries);
    calibrated::mark_pareto_output(&mut ladder.entries);
    ladder.changes = calibrated::changes(&ladder.entries);
    let key = |e: &Entry| {
        e.bits_per_weight
            .zip(e.measured())
            .map(|(bits, m)| (bits, m.overall.rmse))
    };
    ladder.entries.sort_by(|a, b| match (key(a), key(b)) {
        (Some((ba, ra)), Some((bb, rb))) => ba.total_cmp(&bb).then(ra.total_cmp(&rb)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
}
