//! The input of an analysis: a 2-D `f32` matrix whose rows are output channels.

use ndarray::{Array2, ArrayView2};

/// A matrix of weights, one row per output channel, with optional channel labels.
///
/// Every value is finite: constructors reject NaN and infinities, so the core can rely on
/// ordered comparisons.
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    values: Array2<f32>,
    labels: Vec<Option<String>>,
}

/// Why a [`Matrix`] could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MatrixError {
    /// The matrix has no rows or no columns.
    #[error("the matrix is empty ({rows} x {cols})")]
    Empty {
        /// Number of rows.
        rows: usize,
        /// Number of columns.
        cols: usize,
    },
    /// A value is NaN or infinite.
    #[error("row {row}, column {col}: {value} is not a finite number")]
    NotFinite {
        /// 0-based row.
        row: usize,
        /// 0-based column.
        col: usize,
        /// The offending value.
        value: f32,
    },
    /// The number of labels differs from the number of rows.
    #[error("{labels} labels for {rows} rows")]
    LabelCount {
        /// Number of labels given.
        labels: usize,
        /// Number of rows.
        rows: usize,
    },
}

impl Matrix {
    /// Builds an unlabelled matrix, checking that it is non-empty and finite.
    pub fn new(values: Array2<f32>) -> Result<Self, MatrixError> {
        let rows = values.nrows();
        Self::with_labels(values, vec![None; rows])
    }

    /// Builds a matrix with one optional label per row.
    pub fn with_labels(
        values: Array2<f32>,
        labels: Vec<Option<String>>,
    ) -> Result<Self, MatrixError> {
        let (rows, cols) = values.dim();
        if rows == 0 || cols == 0 {
            return Err(MatrixError::Empty { rows, cols });
        }
        if labels.len() != rows {
            return Err(MatrixError::LabelCount {
                labels: labels.len(),
                rows,
            });
        }
        if let Some(((row, col), value)) = first_not_finite(&values) {
            return Err(MatrixError::NotFinite { row, col, value });
        }
        Ok(Self { values, labels })
    }

    /// Builds a matrix from rows of equal length (a convenience for tests and examples).
    pub fn from_rows(rows: &[&[f32]]) -> Result<Self, MatrixError> {
        let cols = rows.first().map_or(0, |r| r.len());
        let mut flat = Vec::with_capacity(rows.len() * cols);
        for row in rows {
            if row.len() != cols {
                return Err(MatrixError::Empty {
                    rows: rows.len(),
                    cols: row.len(),
                });
            }
            flat.extend_from_slice(row);
        }
        let values =
            Array2::from_shape_vec((rows.len(), cols), flat).map_err(|_| MatrixError::Empty {
                rows: rows.len(),
                cols,
            })?;
        Self::new(values)
    }

    /// The values, rows first.
    #[must_use]
    pub fn values(&self) -> ArrayView2<'_, f32> {
        self.values.view()
    }

    /// One optional label per row.
    #[must_use]
    pub fn labels(&self) -> &[Option<String>] {
        &self.labels
    }

    /// `(rows, columns)`.
    #[must_use]
    pub fn shape(&self) -> (usize, usize) {
        self.values.dim()
    }

    /// Takes the values and labels apart.
    #[must_use]
    pub fn into_parts(self) -> (Array2<f32>, Vec<Option<String>>) {
        (self.values, self.labels)
    }
}

/// The first value (in row-major order) that is not finite, with its row and column. Checks
/// blocks of values with a loop that vectorises, then looks inside the first failing block.
fn first_not_finite(values: &Array2<f32>) -> Option<((usize, usize), f32)> {
    const BLOCK: usize = 1024;
    let cols = values.ncols();
    let Some(flat) = values.as_slice() else {
        return values
            .indexed_iter()
            .find(|(_, v)| !v.is_finite())
            .map(|(at, &v)| (at, v));
    };
    let block = flat
        .chunks(BLOCK)
        .position(|b| !b.iter().fold(true, |all, v| all & v.is_finite()))?;
    let start = block * BLOCK;
    let (i, &value) = flat[start..]
        .iter()
        .enumerate()
        .find(|(_, v)| !v.is_finite())?;
    let at = start + i;
    Some(((at / cols, at % cols), value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_value_that_is_not_finite_is_reported_where_it_is() {
        for (at, bad) in [
            (0, f32::NAN),
            (1023, f32::INFINITY),
            (3000, f32::NEG_INFINITY),
        ] {
            let mut flat = vec![0.5f32; 40 * 100];
            flat[at] = bad;
            flat[3999] = f32::NAN;
            let values = Array2::from_shape_vec((40, 100), flat).unwrap();
            let (row, col) = (at / 100, at % 100);
            match Matrix::new(values.clone()) {
                Err(MatrixError::NotFinite {
                    row: r,
                    col: c,
                    value,
                }) => {
                    assert_eq!((r, c), (row, col));
                    assert_eq!(value.to_bits(), bad.to_bits());
                }
                other => panic!("{other:?}"),
            }
            // Column-major storage is searched in row-major order too.
            let mut f = Array2::<f32>::zeros(ndarray::ShapeBuilder::f((40, 100)));
            f.assign(&values);
            assert!(f.as_slice().is_none());
            assert!(matches!(
                Matrix::new(f),
                Err(MatrixError::NotFinite { row: r, col: c, .. }) if (r, c) == (row, col)
            ));
        }
        assert!(Matrix::new(Array2::from_elem((3, 700), 1.0)).is_ok());
    }
}
