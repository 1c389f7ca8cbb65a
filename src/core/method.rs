//! Methods smarter than rounding each weight to its nearest level, compared by the error
//! the layer makes in its output on activations `X` (`[tokens, in]`) for weights `W`
//! (`[out, in]`):
//!
//! - [`act_quant`]: the activations quantized too (dynamic int8, per tensor or per token),
//!   and the W8A8 output `X̂ Ŵᵀ`, as SmoothQuant's `fake_quant.py`;
//! - [`smoothquant`]: the factors `s_j = max|X_j|^α / max|W_j|^(1-α)` that move the loud
//!   activation columns into the weights (Xiao et al. 2023, eq. 4, as `smooth.py`);
//! - [`awq`]: AWQ's search for the per-column scales that protect loud columns before
//!   rounding (`llm-awq`'s `_search_module_scale`);
//! - [`gptq`]: GPTQ's column-by-column rounding that pushes each column's error onto the
//!   columns not rounded yet (Frantar et al. 2022, `gptq.py`'s `fasterquant`);
//! - [`run`]: the ones a user asks for on one layer, gathered for `report` and the explorer;
//! - [`choice`]: the one the explorer runs;
//! - [`tokens`]: the activations read for them, up to a bound;
//! - [`ladder`]: their entries of the format ladder;
//! - [`scanned`]: their results in a whole-checkpoint scan.
//!
//! Each takes plain `ndarray` views, checks its inputs ([`check_inputs`]), reports progress
//! and stops when told to ([`Progress`]), and gives the output error per output channel and
//! over the layer ([`LayerError`]), named as the layer's output error is everywhere:
//! `output_mse` = `‖X (w − ŵ)‖² / T`, `output_sqnr_db` = `10 log10(‖X w‖² / ‖X (w − ŵ)‖²)`.

pub mod act_quant;
pub mod awq;
pub mod choice;
pub mod gptq;
pub mod ladder;
pub mod linalg;
pub mod run;
pub mod scanned;
pub mod smoothquant;
pub mod tokens;
pub mod torch_ops;
pub mod worked;

use ndarray::{Array2, ArrayView2};
use serde::Serialize;

/// Told the steps done so far and all steps (columns for GPTQ, ratios for AWQ, α values for
/// SmoothQuant); returns false to stop, and the method returns [`MethodError::Cancelled`].
pub type Progress<'a> = &'a mut dyn FnMut(usize, usize) -> bool;

/// Why a method could not run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MethodError {
    /// The activations' width is not the weights' input width.
    #[error("activations have {width} columns per token, the weights have {columns} input columns")]
    Width {
        /// Values per token.
        width: usize,
        /// Columns of `W`.
        columns: usize,
    },
    /// No tokens, or an empty matrix.
    #[error("{what} is empty")]
    Empty {
        /// "the weights" or "the activations".
        what: &'static str,
    },
    /// A NaN or an infinity.
    #[error("{what}: row {row}, column {col} (0-based) is {value}: every value must be finite")]
    NotFinite {
        /// "weights" or "activations".
        what: &'static str,
        /// 0-based row (a token for activations).
        row: usize,
        /// 0-based column.
        col: usize,
        /// The value.
        value: f32,
    },
    /// A group size that does not divide the columns (AWQ reshapes each row into groups).
    #[error("group size {group} does not divide the {columns} columns")]
    Group {
        /// The group size.
        group: usize,
        /// Columns of `W`.
        columns: usize,
    },
    /// Bits outside 1..=8.
    #[error("{bits} bits: the methods quantize weights to 1 to 8 bits")]
    Bits {
        /// As asked.
        bits: u32,
    },
    /// An α outside [0, 1].
    #[error("α = {alpha}: SmoothQuant's migration strength is between 0 and 1")]
    Alpha {
        /// As asked.
        alpha: f64,
    },
    /// GPTQ's `H` has no Cholesky factor even after its dampening.
    #[error(
        "H = 2/T XᵀX is not positive definite even after adding {damp} (1 % of its mean diagonal) to its diagonal"
    )]
    NotPositiveDefinite {
        /// What was added to the diagonal.
        damp: f32,
    },
    /// Stopped by its progress.
    #[error("cancelled")]
    Cancelled,
}

/// Checks `w` and `x` for a method: neither empty, the same input width, every value finite.
pub fn check_inputs(w: &ArrayView2<'_, f32>, x: &ArrayView2<'_, f32>) -> Result<(), MethodError> {
    if w.is_empty() {
        return Err(MethodError::Empty {
            what: "the weights",
        });
    }
    if x.nrows() == 0 {
        return Err(MethodError::Empty {
            what: "the activations",
        });
    }
    if x.ncols() != w.ncols() {
        return Err(MethodError::Width {
            width: x.ncols(),
            columns: w.ncols(),
        });
    }
    check_finite(w, "weights")?;
    check_finite(x, "activations")
}

fn check_finite(a: &ArrayView2<'_, f32>, what: &'static str) -> Result<(), MethodError> {
    for ((row, col), &value) in a.indexed_iter() {
        if !value.is_finite() {
            return Err(MethodError::NotFinite {
                what,
                row,
                col,
                value,
            });
        }
    }
    Ok(())
}

/// The output error of one channel, or of the layer.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct OutputError {
    /// `‖X (w − ŵ)‖² / T` (over the layer: summed over channels, divided by `T · out`).
    pub output_mse: f64,
    /// `10 log10(‖X w‖² / ‖X (w − ŵ)‖²)` in dB; `None` when the error or the signal is 0.
    pub output_sqnr_db: Option<f64>,
}

/// The output error of a layer: per output channel (row of `W`) and over the layer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LayerError {
    /// One per row of `W`.
    pub channels: Vec<OutputError>,
    /// Over the layer.
    pub overall: OutputError,
}

impl LayerError {
    /// From the error's products `Y_e` and the signal's `Y = X Wᵀ`, both `[tokens, out]`;
    /// squares and sums in f64.
    #[must_use]
    pub fn from_products(err: &Array2<f32>, signal: &Array2<f32>) -> Self {
        let (t, rows) = err.dim();
        let mut e = vec![0.0f64; rows];
        let mut s = vec![0.0f64; rows];
        for (er, sr) in err.rows().into_iter().zip(signal.rows()) {
            for i in 0..rows {
                let a = f64::from(er[i]);
                let b = f64::from(sr[i]);
                e[i] += a * a;
                s[i] += b * b;
            }
        }
        let metric = |err: f64, sig: f64, n: f64| OutputError {
            output_mse: err / n,
            output_sqnr_db: (err > 0.0 && sig > 0.0).then(|| 10.0 * (sig / err).log10()),
        };
        let channels = (0..rows).map(|i| metric(e[i], s[i], t as f64)).collect();
        let overall = metric(e.iter().sum(), s.iter().sum(), (t * rows) as f64);
        Self { channels, overall }
    }

    /// The output error of reconstruction `w_hat` of `w` on `x`: `X (W − Ŵ)ᵀ` against `X Wᵀ`.
    #[must_use]
    pub fn of(
        x: &ArrayView2<'_, f32>,
        w: &ArrayView2<'_, f32>,
        w_hat: &ArrayView2<'_, f32>,
    ) -> Self {
        let e = w - w_hat;
        let err = linalg::mul_t(x, &e.view());
        let signal = linalg::mul_t(x, w);
        Self::from_products(&err, &signal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn bad_inputs_are_named() {
        let w = array![[1.0f32, 2.0]];
        let x = array![[1.0f32, 2.0, 3.0]];
        let e = check_inputs(&w.view(), &x.view()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "activations have 3 columns per token, the weights have 2 input columns"
        );
        let x = array![[1.0f32, f32::NAN]];
        let e = check_inputs(&w.view(), &x.view()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "activations: row 0, column 1 (0-based) is NaN: every value must be finite"
        );
        let x = Array2::<f32>::zeros((0, 2));
        assert!(check_inputs(&w.view(), &x.view()).is_err());
    }

    #[test]
    fn output_error_is_the_mean_square_of_x_times_the_error() {
        let w = array![[1.0f32, 2.0], [0.5, 0.0]];
        let w_hat = array![[1.0f32, 1.5], [0.5, 0.0]];
        let x = array![[1.0f32, 2.0], [0.0, -1.0]];
        let e = LayerError::of(&x.view(), &w.view(), &w_hat.view());
        // row 0: X e = [1, -0.5]: (1 + 0.25) / 2; row 1: no error
        assert_eq!(e.channels[0].output_mse, 0.625);
        assert_eq!(e.channels[1].output_mse, 0.0);
        assert_eq!(e.channels[1].output_sqnr_db, None);
        assert_eq!(e.overall.output_mse, 1.25 / 4.0);
        // row 0: X w = [5, -2]: 29 / 1.25
        let db = e.channels[0].output_sqnr_db.unwrap();
        assert!((db - 10.0 * (29.0f64 / 1.25).log10()).abs() < 1e-12);
    }
}
