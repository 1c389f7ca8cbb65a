//! The error a quantized layer makes in its output, beside the error of its weights.
//!
//! With activations `X` (`T` tokens), for output channel (row) `i` with weights `w_i` and
//! reconstruction `ŵ_i`:
//!
//! ```text
//! output_mse_i     = ‖X (w_i − ŵ_i)‖² / T
//! output_sqnr_db_i = 10 log10(‖X w_i‖² / ‖X (w_i − ŵ_i)‖²)
//! ```
//!
//! and over the matrix, from the sums: `Σ_i ‖X e_i‖² / (T · rows)` and
//! `10 log10(Σ_i ‖X w_i‖² / Σ_i ‖X e_i‖²)`. With an importance vector `a` (what llama.cpp's
//! quantizers minimise, the diagonal approximation of the above):
//!
//! ```text
//! imatrix_mse_i = Σ_j a_j (w_ij − ŵ_ij)² / Σ_j a_j
//! ```
//!
//! and over the matrix `Σ_i Σ_j a_j e_ij² / Σ_i Σ_j a_j`.
//!
//! `X · Eᵀ` is one matrix product in `f32` (faer's GEMM, [`crate::core::gemm`], as the layer
//! itself and numpy's `X @ E.T` compute it in `f32`), run on blocks of [`ROW_BLOCK`] rows in
//! parallel (each product on one thread), over chunks of tokens read one after another, so
//! activations need not fit in memory. Each product's square, and every sum, is accumulated in `f64`. A row's sums
//! depend only on its own products, in token order, so results do not depend on the number
//! of threads. `‖X w_i‖²` depends only on the matrix and the activations: [`OutputStage`]
//! computes it once for every report of the same matrix.

use std::sync::Mutex;

use ndarray::{Array2, ArrayView2, Axis};
use rayon::prelude::*;

mod reconstruct;
mod stage;

pub use stage::{StageError, add_output_errors};

use crate::core::Progress;
use crate::core::gemm::{Threads, mul_t_into};
use crate::core::importance::activations::chunk_tokens;
use crate::core::importance::{
    ColumnRisk, Importance, ImportanceError, OutputErrors, OutputMetrics, RISK_COLUMNS, Tokens,
    TokensError,
};
use crate::core::matrix::Matrix;
use crate::core::report::Report;
use reconstruct::Rows;

/// Rows per matrix product.
pub const ROW_BLOCK: usize = 128;

/// Row blocks run between two progress reports.
const BLOCKS_PER_WAVE: usize = 32;

/// Why output errors could not be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OutputProblem {
    /// The importance does not fit the matrix.
    #[error("importance: {0}")]
    Importance(#[from] ImportanceError),
    /// The activations have another width than the matrix's columns.
    #[error(
        "activations {name} have {width} columns per token, the tensor has {columns} columns (its input features)"
    )]
    Width {
        /// The activations' name.
        name: String,
        /// Their width.
        width: usize,
        /// The matrix's columns.
        columns: usize,
    },
    /// The activations hold no tokens.
    #[error("activations {name} hold no tokens")]
    NoTokens {
        /// The activations' name.
        name: String,
    },
    /// The activations could not be read.
    #[error(transparent)]
    Read(#[from] TokensError),
}

/// What the output errors of reports of one matrix are computed from.
#[derive(Clone, Copy, Default)]
pub struct Calibration<'a> {
    /// The importance vector (gives `imatrix_mse` and the columns at risk).
    pub importance: Option<&'a Importance>,
    /// The activations (give `output_mse` and `output_sqnr_db`).
    pub tokens: Option<&'a dyn Tokens>,
}

impl std::fmt::Debug for Calibration<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Calibration")
            .field("importance", &self.importance.map(Importance::source))
            .field("tokens", &self.tokens.map(Tokens::name))
            .finish()
    }
}

impl Calibration<'_> {
    /// Neither importance nor activations.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.importance.is_none() && self.tokens.is_none()
    }
}

/// The output errors of any number of reports of one matrix, `‖X w_i‖²` computed once.
pub struct OutputStage<'a> {
    matrix: &'a Matrix,
    calibration: Calibration<'a>,
    signal: Mutex<Option<Vec<f64>>>,
    /// Tokens per chunk.
    chunk: usize,
}

impl<'a> OutputStage<'a> {
    /// Checks that `calibration` fits `matrix` (the importance's width and experts, the
    /// activations' width).
    pub fn new(matrix: &'a Matrix, calibration: Calibration<'a>) -> Result<Self, OutputProblem> {
        let (rows, cols) = matrix.shape();
        if let Some(imp) = calibration.importance {
            imp.check_shape(rows, cols)?;
        }
        if let Some(t) = calibration.tokens {
            let (count, width) = t.shape();
            if width != cols {
                return Err(OutputProblem::Width {
                    name: t.name(),
                    width,
                    columns: cols,
                });
            }
            if count == 0 {
                return Err(OutputProblem::NoTokens { name: t.name() });
            }
        }
        Ok(Self {
            matrix,
            calibration,
            signal: Mutex::new(None),
            chunk: chunk_tokens(cols).min(4096),
        })
    }

    /// The calibration it computes from.
    #[must_use]
    pub fn calibration(&self) -> Calibration<'a> {
        self.calibration
    }

    /// The matrix whose reports it measures.
    #[must_use]
    pub fn matrix(&self) -> &'a Matrix {
        self.matrix
    }

    /// The output errors of `report` (a report of this stage's matrix); `Ok(None)` when
    /// there is nothing to compute from, or when `progress` (told the rows done and all
    /// rows, over every chunk of tokens) returned false.
    pub fn errors(
        &self,
        report: &Report,
        progress: Progress<'_>,
    ) -> Result<Option<OutputErrors>, OutputProblem> {
        if self.calibration.is_empty() {
            return Ok(None);
        }
        let cached = self.signal.lock().ok().and_then(|s| s.clone());
        let want_signal = self.calibration.tokens.is_some() && cached.is_none();
        let Some(sums) = self.sums(report, want_signal, progress)? else {
            return Ok(None);
        };
        let signal = match cached {
            Some(s) => Some(s),
            None if want_signal => {
                let s: Vec<f64> = sums.rows.iter().map(|r| r.signal).collect();
                if let Ok(mut slot) = self.signal.lock() {
                    *slot = Some(s.clone());
                }
                Some(s)
            }
            None => None,
        };
        Ok(Some(self.finish(&sums, signal.as_deref())))
    }

    /// Every row's sums, and the column counts.
    fn sums(
        &self,
        report: &Report,
        want_signal: bool,
        progress: Progress<'_>,
    ) -> Result<Option<Sums>, OutputProblem> {
        let w = self.matrix.values();
        let (rows, cols) = w.dim();
        let recon = Rows::new(report, self.matrix);
        let imp = self.calibration.importance;
        let blocks = rows.div_ceil(ROW_BLOCK);
        let mut out = Sums {
            rows: vec![RowSums::default(); rows],
            clamped: vec![0; cols],
            zeroed: vec![0; cols],
        };
        let Some(tokens) = self.calibration.tokens else {
            // Importance alone: one pass over the rows, no product.
            let parts: Vec<Block> = (0..blocks)
                .into_par_iter()
                .map(|b| block_pass(&recon, &w, imp, b, None, false))
                .collect();
            for (b, part) in parts.into_iter().enumerate() {
                out.merge(b, part, true);
            }
            return Ok(Some(out));
        };
        let (count, width) = tokens.shape();
        let per = self.chunk;
        let chunks = count.div_ceil(per);
        let mut buf = vec![0.0f32; per.min(count) * width];
        let total = chunks * rows;
        for k in 0..chunks {
            let first = k * per;
            let n = per.min(count - first);
            tokens.read(first, &mut buf[..n * width])?;
            let x = ArrayView2::from_shape((n, width), &buf[..n * width])
                .map_err(|e| TokensError(e.to_string()))?;
            let mut done = 0;
            while done < blocks {
                let wave = BLOCKS_PER_WAVE.min(blocks - done);
                let parts: Vec<Block> = (done..done + wave)
                    .into_par_iter()
                    .map(|b| block_pass(&recon, &w, imp, b, Some(&x), want_signal))
                    .collect();
                for (i, part) in parts.into_iter().enumerate() {
                    // Weighted sums and column counts once, with the first chunk.
                    out.merge(done + i, part, k == 0);
                }
                done += wave;
                if !progress(k * rows + (done * ROW_BLOCK).min(rows), total) {
                    return Ok(None);
                }
            }
        }
        Ok(Some(out))
    }

    fn finish(&self, sums: &Sums, signal: Option<&[f64]>) -> OutputErrors {
        let tokens = self.calibration.tokens.map(|t| t.shape().0);
        let t = tokens.unwrap_or(0) as f64;
        let mut total = RowSums::default();
        let channels = sums
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let sig = signal.and_then(|s| s.get(i).copied()).unwrap_or(0.0);
                total.err += r.err;
                total.signal += sig;
                total.weighted += r.weighted;
                total.weight += r.weight;
                self.metrics(r.err, sig, r.weighted, r.weight, t)
            })
            .collect();
        let rows = sums.rows.len().max(1) as f64;
        let overall = self.metrics(
            total.err,
            total.signal,
            total.weighted,
            total.weight,
            t * rows,
        );
        let (columns_at_risk, columns_at_risk_total) = self.risk(sums);
        let imp = self.calibration.importance;
        OutputErrors {
            channels,
            overall,
            tokens,
            columns_at_risk,
            columns_at_risk_total,
            importance: imp.map(Importance::summary),
            importance_source: imp.map(|i| i.source().to_string()),
            activations: self.calibration.tokens.map(Tokens::name),
        }
    }

    /// The metrics of sums over `n` products (`T` for a row, `T · rows` overall).
    fn metrics(&self, err: f64, signal: f64, weighted: f64, weight: f64, n: f64) -> OutputMetrics {
        let with_tokens = self.calibration.tokens.is_some();
        OutputMetrics {
            output_mse: with_tokens.then(|| err / n),
            output_sqnr_db: (with_tokens && err > 0.0 && signal > 0.0)
                .then(|| 10.0 * (signal / err).log10()),
            imatrix_mse: (self.calibration.importance.is_some() && weight > 0.0)
                .then(|| weighted / weight),
        }
    }

    /// The columns holding clamped or collapsed values, most important first.
    fn risk(&self, sums: &Sums) -> (Vec<ColumnRisk>, usize) {
        let Some(imp) = self.calibration.importance else {
            return (Vec::new(), 0);
        };
        let totals = imp.column_totals();
        let all: f64 = totals.iter().sum();
        let mut risky: Vec<ColumnRisk> = (0..totals.len())
            .filter(|&c| sums.clamped[c] + sums.zeroed[c] > 0)
            .map(|c| ColumnRisk {
                column: c,
                share: if all > 0.0 { totals[c] / all } else { 0.0 },
                clamped: sums.clamped[c],
                zeroed: sums.zeroed[c],
            })
            .collect();
        let n = risky.len();
        risky.sort_by(|a, b| b.share.total_cmp(&a.share).then(a.column.cmp(&b.column)));
        risky.truncate(RISK_COLUMNS);
        (risky, n)
    }
}

/// The output errors of `report` (of `matrix`) under `calibration`: [`OutputStage`] for
/// one report.
pub fn output_errors(
    matrix: &Matrix,
    report: &Report,
    calibration: Calibration<'_>,
    progress: Progress<'_>,
) -> Result<Option<OutputErrors>, OutputProblem> {
    OutputStage::new(matrix, calibration)?.errors(report, progress)
}

/// One row's sums.
#[derive(Debug, Clone, Copy, Default)]
struct RowSums {
    /// `Σ_t (X e)²`.
    err: f64,
    /// `Σ_t (X w)²` (when asked for).
    signal: f64,
    /// `Σ_j a_j e_j²`.
    weighted: f64,
    /// `Σ_j a_j`.
    weight: f64,
}

/// Every row's sums and each column's counts.
struct Sums {
    rows: Vec<RowSums>,
    clamped: Vec<u64>,
    zeroed: Vec<u64>,
}

impl Sums {
    /// Adds block `b`'s part; its weighted sums and column counts only when `first` (they
    /// do not depend on the tokens).
    fn merge(&mut self, b: usize, part: Block, first: bool) {
        let r0 = b * ROW_BLOCK;
        for (i, s) in part.rows.into_iter().enumerate() {
            let row = &mut self.rows[r0 + i];
            row.err += s.err;
            row.signal += s.signal;
            if first {
                row.weighted = s.weighted;
                row.weight = s.weight;
            }
        }
        if first {
            for (a, &b) in self.clamped.iter_mut().zip(&part.clamped) {
                *a += u64::from(b);
            }
            for (a, &b) in self.zeroed.iter_mut().zip(&part.zeroed) {
                *a += u64::from(b);
            }
        }
    }
}

/// One block of rows' part.
struct Block {
    rows: Vec<RowSums>,
    clamped: Vec<u32>,
    zeroed: Vec<u32>,
}

/// Block `b` of rows: the reconstruction's errors, their weighted sums and column counts,
/// and with tokens `x` the products `x · Eᵀ` (and `x · Wᵀ` with `signal`) summed in squares.
fn block_pass(
    recon: &Rows<'_>,
    w: &ArrayView2<'_, f32>,
    imp: Option<&Importance>,
    b: usize,
    x: Option<&ArrayView2<'_, f32>>,
    signal: bool,
) -> Block {
    let (rows, cols) = w.dim();
    let r0 = b * ROW_BLOCK;
    let r1 = (r0 + ROW_BLOCK).min(rows);
    let mut e = Array2::<f32>::zeros((r1 - r0, cols));
    let mut hat = vec![0.0f32; cols];
    let mut clamped = vec![0u32; cols];
    let mut zeroed = vec![0u32; cols];
    let mut sums = vec![RowSums::default(); r1 - r0];
    for (i, r) in (r0..r1).enumerate() {
        recon.row(r, &mut hat, &mut clamped);
        let wr = w.row(r);
        let a = imp.map(|imp| imp.row(r, rows));
        let mut er = e.row_mut(i);
        let (mut weighted, mut weight) = (0.0f64, 0.0f64);
        for c in 0..cols {
            let (x, y) = (wr[c], hat[c]);
            er[c] = x - y;
            zeroed[c] += u32::from(y == 0.0 && x != 0.0);
            if let Some(a) = a {
                let d = f64::from(x) - f64::from(y);
                let ac = f64::from(a[c]);
                weighted += ac * d * d;
                weight += ac;
            }
        }
        sums[i].weighted = weighted;
        sums[i].weight = weight;
    }
    if let Some(x) = x {
        let n = x.nrows();
        let mut y = Array2::<f32>::zeros((n, r1 - r0));
        mul_t_into(x, &e.view(), &mut y, Threads::One);
        add_squares(&y, &mut sums, |s| &mut s.err);
        if signal {
            let wb = w.slice_axis(Axis(0), (r0..r1).into());
            mul_t_into(x, &wb, &mut y, Threads::One);
            add_squares(&y, &mut sums, |s| &mut s.signal);
        }
    }
    Block {
        rows: sums,
        clamped,
        zeroed,
    }
}

/// Adds each column's sum of squares of `y` (`[tokens, rows]`), token after token, to the
/// field `f` of that row's sums.
fn add_squares(y: &Array2<f32>, sums: &mut [RowSums], f: impl Fn(&mut RowSums) -> &mut f64) {
    let mut acc = vec![0.0f64; sums.len()];
    for row in y.rows() {
        for (a, &v) in acc.iter_mut().zip(row) {
            let v = f64::from(v);
            *a += v * v;
        }
    }
    for (s, a) in sums.iter_mut().zip(acc) {
        *f(s) += a;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::importance::{Activations, ImportanceSource};
    use crate::core::presets::{PresetOptions, preset};
    use crate::core::{Options, analyse_with};

    /// The formulas in f64, value by value.
    fn naive(w: &Matrix, r: &Report, x: &Array2<f32>, a: &[f32]) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let (rows, cols) = w.shape();
        let (mut err, mut sig, mut imse) = (vec![0.0; rows], vec![0.0; rows], vec![0.0; rows]);
        for i in 0..rows {
            let e: Vec<f64> = (0..cols)
                .map(|c| f64::from(w.values()[(i, c)]) - f64::from(r.dequantized(i, c)))
                .collect();
            for t in x.rows() {
                let ye: f64 = t.iter().zip(&e).map(|(&x, &e)| f64::from(x) * e).sum();
                let yw: f64 = (0..cols)
                    .map(|c| f64::from(t[c]) * f64::from(w.values()[(i, c)]))
                    .sum();
                err[i] += ye * ye;
                sig[i] += yw * yw;
            }
            let num: f64 = e.iter().zip(a).map(|(e, &a)| f64::from(a) * e * e).sum();
            let den: f64 = a.iter().map(|&a| f64::from(a)).sum();
            imse[i] = num / den;
        }
        (err, sig, imse)
    }

    #[test]
    fn chunks_of_tokens_and_blocks_of_rows_sum_like_one_product() {
        let rows = ROW_BLOCK + 37;
        let cols = 48;
        let data: Vec<Vec<f32>> = (0..rows)
            .map(|r| {
                (0..cols)
                    .map(|c| ((r * 7 + c * 3) as f32 * 0.37).sin())
                    .collect()
            })
            .collect();
        let refs: Vec<&[f32]> = data.iter().map(Vec::as_slice).collect();
        let m = Matrix::from_rows(&refs).unwrap();
        let x = Activations::built_in(
            cols,
            &crate::core::importance::BuiltIn {
                tokens: 23,
                ..Default::default()
            },
        );
        let a: Vec<f32> = (0..cols).map(|c| (c % 5) as f32).collect();
        let imp = Importance::new(
            a.clone(),
            cols,
            ImportanceSource::Activations {
                name: "a".into(),
                tokens: 1,
            },
        )
        .unwrap();
        let c = preset("ort-int4", PresetOptions::default()).unwrap();
        let report = analyse_with(&m, &c, Options::ONE_CONFIG).unwrap();
        let cal = Calibration {
            importance: Some(&imp),
            tokens: Some(&x),
        };
        let mut stage = OutputStage::new(&m, cal).unwrap();
        stage.chunk = 5;
        let mut calls = 0;
        let got = stage
            .errors(&report, &mut |done, total| {
                calls += 1;
                assert!(done <= total && total == 5 * rows);
                true
            })
            .unwrap()
            .unwrap();
        assert_eq!(calls, 5);
        let (err, sig, imse) = naive(&m, &report, &x.values().to_owned(), &a);
        for i in 0..rows {
            let g = got.channels[i];
            let want = err[i] / 23.0;
            assert!(
                (g.output_mse.unwrap() - want).abs() <= 1e-4 * want,
                "row {i}"
            );
            let db = 10.0 * (sig[i] / err[i]).log10();
            assert!((g.output_sqnr_db.unwrap() - db).abs() < 1e-3, "row {i}");
            assert_eq!(g.imatrix_mse.unwrap(), imse[i], "row {i}");
        }
        // The second report reuses the signal: the same numbers, one chunk.
        stage.chunk = 4096;
        let again = stage.errors(&report, &mut |_, _| true).unwrap().unwrap();
        for (a, b) in again.channels.iter().zip(&got.channels) {
            assert!(
                (a.output_mse.unwrap() - b.output_mse.unwrap()).abs()
                    <= 1e-5 * b.output_mse.unwrap()
            );
        }
        // Stopped by its progress: nothing.
        assert!(stage.errors(&report, &mut |_, _| false).unwrap().is_none());
    }

    #[test]
    fn activations_of_another_width_are_refused() {
        let m = Matrix::from_rows(&[&[1.0, 2.0, 3.0][..]]).unwrap();
        let x = Activations::new(Array2::zeros((4, 2)), "x.npy");
        let e = OutputStage::new(
            &m,
            Calibration {
                importance: None,
                tokens: Some(&x),
            },
        )
        .err()
        .unwrap();
        assert_eq!(
            e.to_string(),
            "activations x.npy have 2 columns per token, the tensor has 3 columns (its input features)"
        );
    }
}
