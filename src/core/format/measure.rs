//! Reconstruction error in f64 and a whole-matrix driver that runs a [`Format`] over rows in
//! parallel: what an analysis (and the benchmark) needs per format, without allocating per
//! row.

use rayon::prelude::*;

use super::{Encoded, Format, FormatError};

/// Error of a reconstruction against its input, accumulated in f64.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RowError {
    /// Values measured.
    pub n: usize,
    /// Σ |x - x̂|.
    pub abs_sum: f64,
    /// Σ (x - x̂)².
    pub sq_sum: f64,
    /// max |x - x̂|.
    pub max_abs: f64,
    /// Σ x².
    pub signal_sq: f64,
}

impl RowError {
    /// Measures `y` against `x` (same length). The sums run in eight interleaved f64 lanes
    /// (value `i` into lane `i % 8`, the lanes added at the end), so the loop vectorises; the
    /// result depends only on the row, never on threads.
    #[must_use]
    #[inline(always)]
    pub fn measure(x: &[f32], y: &[f32]) -> Self {
        const L: usize = 8;
        let n = x.len().min(y.len());
        let (mut abs, mut sq, mut max, mut sig) =
            ([0.0f64; L], [0.0f64; L], [0.0f64; L], [0.0f64; L]);
        let (xc, xr) = x[..n].as_chunks::<L>();
        let (yc, yr) = y[..n].as_chunks::<L>();
        for (a, b) in xc.iter().zip(yc) {
            for k in 0..L {
                let (p, q) = (f64::from(a[k]), f64::from(b[k]));
                let d = (p - q).abs();
                abs[k] += d;
                sq[k] += d * d;
                max[k] = if d > max[k] { d } else { max[k] };
                sig[k] += p * p;
            }
        }
        for (k, (&p, &q)) in xr.iter().zip(yr).enumerate() {
            let (p, q) = (f64::from(p), f64::from(q));
            let d = (p - q).abs();
            abs[k] += d;
            sq[k] += d * d;
            max[k] = if d > max[k] { d } else { max[k] };
            sig[k] += p * p;
        }
        Self {
            n,
            abs_sum: abs.iter().sum(),
            sq_sum: sq.iter().sum(),
            max_abs: max.iter().copied().fold(0.0, f64::max),
            signal_sq: sig.iter().sum(),
        }
    }

    /// Both measurements together.
    #[must_use]
    pub fn merge(self, o: Self) -> Self {
        Self {
            n: self.n + o.n,
            abs_sum: self.abs_sum + o.abs_sum,
            sq_sum: self.sq_sum + o.sq_sum,
            max_abs: self.max_abs.max(o.max_abs),
            signal_sq: self.signal_sq + o.signal_sq,
        }
    }

    /// Mean absolute error.
    #[must_use]
    pub fn mae(&self) -> f64 {
        self.abs_sum / self.n.max(1) as f64
    }

    /// Root mean squared error.
    #[must_use]
    pub fn rmse(&self) -> f64 {
        (self.sq_sum / self.n.max(1) as f64).sqrt()
    }

    /// Signal-to-quantization-noise ratio in dB (infinite for an exact reconstruction).
    #[must_use]
    pub fn sqnr_db(&self) -> f64 {
        10.0 * (self.signal_sq / self.sq_sum).log10()
    }
}

/// What [`run_rows`] measured over a matrix.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Summary {
    /// The error over every value.
    pub error: RowError,
    /// Rows that reconstruct to a single value.
    pub collapsed_rows: usize,
    /// Σ over rows of the distinct grid values the row's codes use.
    pub levels_used: usize,
}

/// Encodes every row of a row-major `rows x cols` matrix `x` in parallel, writes the
/// reconstruction into `values`, and measures error, collapsed rows and levels used.
pub fn run_rows(
    format: Format,
    x: &[f32],
    cols: usize,
    values: &mut [f32],
) -> Result<Summary, FormatError> {
    run_rows_weighted(format, x, cols, None, values)
}

/// [`run_rows`] with one importance vector for every row (see
/// [`Format::encode_row_weighted`]), for the formats whose reference reads one.
pub fn run_rows_weighted(
    format: Format,
    x: &[f32],
    cols: usize,
    weights: Option<&[f32]>,
    values: &mut [f32],
) -> Result<Summary, FormatError> {
    format.check_len(cols)?;
    if values.len() != x.len() || cols == 0 || !x.len().is_multiple_of(cols) {
        return Err(FormatError::BufferLength {
            want: x.len(),
            got: values.len(),
        });
    }
    let grid = format.grid();
    x.par_chunks(cols)
        .zip(values.par_chunks_mut(cols))
        .map_init(Encoded::default, |enc, (row, out)| {
            format.encode_row_weighted(row, weights, enc, out)?;
            let first = out.first().copied().unwrap_or(0.0);
            let error = pulp::Arch::new().dispatch(
                #[inline(always)]
                || RowError::measure(row, out),
            );
            Ok(Summary {
                error,
                collapsed_rows: usize::from(out.iter().all(|&v| v == first)),
                levels_used: grid.usage(&enc.codes).used,
            })
        })
        .try_reduce(Summary::default, |a, b| {
            Ok(Summary {
                error: a.error.merge(b.error),
                collapsed_rows: a.collapsed_rows + b.collapsed_rows,
                levels_used: a.levels_used + b.levels_used,
            })
        })
}
