//! The "Importance" and "Output error" sections (with `--imatrix` or `--activations`), and
//! the output-error cells the Ladder, Formats and Comparison sections add.
//!
//! ```text
//! Importance    where it came from, what was quantized with it, the share of the total
//!               held by the top 1 % of columns, the top columns, the important columns
//!               where values were clamped or collapsed
//! Output error  output MSE, output SQNR and importance-weighted MSE per channel, and over
//!               the matrix with their formulas
//! ```

use super::{Align, Grid, Listing, Part, Section, channel_cells, channel_columns, has_labels};
use crate::core::Report;
use crate::core::config::Clipping;
use crate::core::importance::{OutputErrors, OutputMetrics};
use crate::io::export::num::{error, sig, sqnr};

/// A share (0 to 1) as a percentage: `42.3 %`.
pub(super) fn percent(share: f64) -> String {
    format!("{} %", sig(100.0 * share, 3))
}

/// The Importance section, when the report has output errors with an importance.
pub(super) fn importance(report: &Report) -> Option<Section> {
    let o = report.output.as_ref()?;
    let mut parts = Vec::new();
    if let Some(src) = &o.importance_source {
        parts.push(Part::Text(format!("Importance from {src}.")));
    }
    let clip_weighted = report.config.clipping == Clipping::MseWeighted;
    parts.push(Part::Text(match &report.quantized_with {
        Some(_) if clip_weighted => {
            "The codes above were quantized with it: each block's clipping \
                                     search (--clip mse-weighted, quantscope's own) weighed the \
                                     squared errors of each column by it."
                .to_string()
        }
        Some(_) => {
            "The codes above were quantized with it, as llama-quantize --imatrix does.".to_string()
        }
        None => "This configuration's library takes no importance: its codes are the same \
                 without it; the importance weighs its errors."
            .to_string(),
    }));
    if let Some(a) = &o.activations {
        parts.push(Part::Text(format!(
            "Activations: {a}, {} tokens.",
            o.tokens.unwrap_or(0)
        )));
    }
    if let Some(s) = &o.importance {
        let experts = if s.matrices > 1 {
            format!(" (summed over {} experts)", s.matrices)
        } else {
            String::new()
        };
        parts.push(Part::Text(format!(
            "The top 1 % of columns ({} of {}) hold {} of the total importance{experts}; \
             {} column{} have importance 0.",
            s.top_percent_columns,
            s.columns,
            percent(s.top_percent_share),
            s.zero_columns,
            if s.zero_columns == 1 { "" } else { "s" },
        )));
        let mut top = Grid::new(&[("column", Align::Right), ("share", Align::Right)]);
        for &(c, share) in &s.top {
            top.rows.push(vec![c.to_string(), percent(share)]);
        }
        parts.push(Part::Text("The most important columns:".to_string()));
        parts.push(Part::Grid(top));
    }
    if o.columns_at_risk.is_empty() {
        if o.importance.is_some() {
            parts.push(Part::Text(
                "No value is clamped or collapsed to 0 in any column.".to_string(),
            ));
        }
    } else {
        let mut risk = Grid::new(&[
            ("column", Align::Right),
            ("share", Align::Right),
            ("clamped", Align::Right),
            ("collapsed to 0", Align::Right),
        ]);
        for r in &o.columns_at_risk {
            risk.rows.push(vec![
                r.column.to_string(),
                percent(r.share),
                r.clamped.to_string(),
                r.zeroed.to_string(),
            ]);
        }
        parts.push(Part::Text(format!(
            "Columns holding a clamped value or a value collapsed to 0, most important first \
             ({} of {} such columns):",
            o.columns_at_risk.len(),
            o.columns_at_risk_total
        )));
        parts.push(Part::Grid(risk));
    }
    Some(Section {
        title: "Importance",
        parts,
    })
}

/// The column names of the output metrics a report has: `output MSE`, `output SQNR dB`
/// (with activations), `imatrix MSE` (with importance).
pub(super) fn columns(o: &OutputErrors) -> Vec<&'static str> {
    let mut c = Vec::new();
    if o.tokens.is_some() {
        c.extend(["output MSE", "output SQNR dB"]);
    }
    if o.importance.is_some() {
        c.push("imatrix MSE");
    }
    c
}

/// The cells of `m` under [`columns`] of `o`.
pub(super) fn cells(o: &OutputErrors, m: Option<OutputMetrics>) -> Vec<String> {
    let m = m.unwrap_or_default();
    let or_dash = |x: Option<f64>| x.map_or_else(|| "-".to_string(), error);
    let mut c = Vec::new();
    if o.tokens.is_some() {
        c.push(or_dash(m.output_mse));
        c.push(sqnr(m.output_sqnr_db));
    }
    if o.importance.is_some() {
        c.push(or_dash(m.imatrix_mse));
    }
    c
}

/// The Output error section.
pub(super) fn output(report: &Report, listing: &Listing<'_>) -> Option<Section> {
    let o = report.output.as_ref()?;
    let names = columns(o);
    let mut parts = Vec::new();
    let mut formulas = Vec::new();
    if let Some(t) = o.tokens {
        formulas.push(format!(
            "output MSE_i = ‖X (w_i − ŵ_i)‖² / T, T = {t} tokens; over the matrix {}",
            o.overall.output_mse.map_or_else(|| "-".to_string(), error)
        ));
        formulas.push(format!(
            "output SQNR_i = 10 log10(‖X w_i‖² / ‖X (w_i − ŵ_i)‖²); over the matrix {} dB",
            sqnr(o.overall.output_sqnr_db)
        ));
    }
    if o.importance.is_some() {
        formulas.push(format!(
            "imatrix MSE_i = Σ_j a_j (w_ij − ŵ_ij)² / Σ_j a_j; over the matrix {}",
            o.overall.imatrix_mse.map_or_else(|| "-".to_string(), error)
        ));
    }
    parts.push(Part::Formula(formulas));
    let labels = has_labels(report);
    let mut grid = channel_columns(labels)
        .column("RMSE", Align::Right, None)
        .column("SQNR dB", Align::Right, None);
    for n in &names {
        grid = grid.column(n, Align::Right, None);
    }
    for c in listing.rows.iter().filter_map(|&i| report.channels.get(i)) {
        let mut row = channel_cells(labels, c);
        row.push(error(c.metrics.rmse));
        row.push(sqnr(c.metrics.sqnr_db));
        row.extend(cells(o, o.channels.get(c.index).copied()));
        grid.rows.push(row);
    }
    parts.push(Part::Text(
        "Each channel's weight error beside the error it makes in the layer's output:".to_string(),
    ));
    parts.push(Part::Grid(grid));
    Some(Section {
        title: "Output error",
        parts,
    })
}
