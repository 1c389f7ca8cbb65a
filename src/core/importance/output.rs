//! The output errors as data: per channel and over the matrix ([`OutputMetrics`]), the
//! important columns where values were clamped or collapsed ([`ColumnRisk`]), and a
//! report's whole set ([`OutputErrors`]). [`crate::core::output`] computes them.

use serde::Serialize;

use super::ImportanceSummary;

/// The output errors of one channel, or of the whole matrix: each `None` when its input is
/// absent (`output_*` without activations, `imatrix_mse` without importance), and SQNR
/// `None` when the error or the signal is zero, as for weights.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct OutputMetrics {
    /// `‖X (w − ŵ)‖² / T`.
    pub output_mse: Option<f64>,
    /// `10 log10(‖X w‖² / ‖X (w − ŵ)‖²)` in dB.
    pub output_sqnr_db: Option<f64>,
    /// `Σ a (w − ŵ)² / Σ a`.
    pub imatrix_mse: Option<f64>,
}

/// A column holding values that were clamped, or that reconstruct to 0 though they are
/// not 0, with its importance.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ColumnRisk {
    /// 0-based column.
    pub column: usize,
    /// Its share of the total importance (0 to 1).
    pub share: f64,
    /// Values of the column whose code was clamped.
    pub clamped: u64,
    /// Values of the column that are not 0 but reconstruct to 0 (collapsed).
    pub zeroed: u64,
}

/// Columns [`OutputErrors::columns_at_risk`] keeps.
pub const RISK_COLUMNS: usize = 8;

/// The output errors of a report: per channel, over the matrix, and the important columns
/// where values were clamped or collapsed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OutputErrors {
    /// One per row, in row order.
    pub channels: Vec<OutputMetrics>,
    /// Over the whole matrix.
    pub overall: OutputMetrics,
    /// Tokens of the activations (`None` without them).
    pub tokens: Option<usize>,
    /// The columns holding a clamped or collapsed value, most important first (at most
    /// [`RISK_COLUMNS`]; empty without importance).
    pub columns_at_risk: Vec<ColumnRisk>,
    /// How many columns hold a clamped or collapsed value in all.
    pub columns_at_risk_total: usize,
    /// The importance vector in a few numbers (`None` without one).
    pub importance: Option<ImportanceSummary>,
    /// Where the importance came from, in words.
    pub importance_source: Option<String>,
    /// The activations' name.
    pub activations: Option<String>,
}
