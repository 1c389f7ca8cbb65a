//! The input of an analysis: a 2-D `f32` matrix whose rows are output channels.

use std::sync::Arc;

use ndarray::{Array2, ArrayView2};

use crate::core::pages::Pages;

/// A matrix of weights, one row per output channel, with optional channel labels.
///
/// Every value is finite: constructors reject NaN and infinities, so the core can rely on
/// ordered comparisons. Clones share the values (a report keeps them to give its codes on
/// request; see [`crate::core::Report::code`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    values: Shared,
    labels: Vec<Option<String>>,
}

/// A matrix's values, shared by its clones and the reports made from it.
#[derive(Debug, Clone)]
pub(crate) struct Shared(Arc<Values>);

impl Shared {
    /// The values, rows first.
    pub(crate) fn view(&self) -> ArrayView2<'_, f32> {
        self.0.view()
    }
}

impl PartialEq for Shared {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0 == other.0
    }
}

/// Where a matrix's values live.
#[derive(Debug, Clone)]
enum Values {
    /// An array built by the caller.
    Array(Array2<f32>),
    /// `rows x cols` values in row-major order, as a loader read them (in memory that asks
    /// for huge pages when large: a fresh process then takes one page fault per 2 MiB of a
    /// loaded matrix rather than per 4 KiB).
    Flat {
        flat: Pages<f32>,
        rows: usize,
        cols: usize,
    },
}

impl Values {
    fn view(&self) -> ArrayView2<'_, f32> {
        match self {
            Self::Array(a) => a.view(),
            // The length is checked when the matrix is built; an empty view otherwise.
            Self::Flat { flat, rows, cols } => ArrayView2::from_shape((*rows, *cols), flat)
                .unwrap_or_else(|_| ArrayView2::from(&[] as &[[f32; 0]])),
        }
    }
}

impl PartialEq for Values {
    fn eq(&self, other: &Self) -> bool {
        self.view() == other.view()
    }
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
        if let Some(((row, col), value)) = first_not_finite(&values.view()) {
            return Err(MatrixError::NotFinite { row, col, value });
        }
        Ok(Self {
            values: Shared(Arc::new(Values::Array(values))),
            labels,
        })
    }

    /// An unlabelled `rows x cols` matrix of the row-major values `flat` (a length other
    /// than `rows * cols` is refused as empty), whose caller has looked for the first value
    /// that is not finite, as [`first_not_finite_in`] gives it: `first_bad`, refused as
    /// [`Matrix::new`] refuses it. A loader checks each run of values as it reads it, while
    /// the run is in cache, rather than in a pass of its own afterwards.
    pub(crate) fn from_flat(
        flat: Pages<f32>,
        rows: usize,
        cols: usize,
        first_bad: Option<usize>,
    ) -> Result<Self, MatrixError> {
        if rows == 0 || cols == 0 || rows.checked_mul(cols) != Some(flat.len()) {
            return Err(MatrixError::Empty { rows, cols });
        }
        if let Some(at) = first_bad {
            let value = flat.get(at).copied().unwrap_or(f32::NAN);
            let (row, col) = (at / cols, at % cols);
            return Err(MatrixError::NotFinite { row, col, value });
        }
        Ok(Self {
            values: Shared(Arc::new(Values::Flat { flat, rows, cols })),
            labels: vec![None; rows],
        })
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

    /// The values, shared (for a report that derives its codes from them).
    pub(crate) fn shared(&self) -> Shared {
        self.values.clone()
    }

    /// One optional label per row.
    #[must_use]
    pub fn labels(&self) -> &[Option<String>] {
        &self.labels
    }

    /// `(rows, columns)`.
    #[must_use]
    pub fn shape(&self) -> (usize, usize) {
        match &*self.values.0 {
            Values::Array(a) => a.dim(),
            Values::Flat { rows, cols, .. } => (*rows, *cols),
        }
    }

    /// Takes the values and labels apart.
    #[must_use]
    pub fn into_parts(self) -> (Array2<f32>, Vec<Option<String>>) {
        let values = match Arc::try_unwrap(self.values.0) {
            Ok(Values::Array(a)) => a,
            Ok(flat @ Values::Flat { .. }) => flat.view().to_owned(),
            Err(shared) => shared.view().to_owned(),
        };
        (values, self.labels)
    }
}

/// The first value (in row-major order) that is not finite, with its row and column.
fn first_not_finite(values: &ArrayView2<'_, f32>) -> Option<((usize, usize), f32)> {
    let cols = values.ncols();
    let Some(flat) = values.as_slice() else {
        return values
            .indexed_iter()
            .find(|(_, v)| !v.is_finite())
            .map(|(at, &v)| (at, v));
    };
    let at = first_not_finite_in(flat)?;
    Some(((at / cols, at % cols), flat[at]))
}

/// The index of the first value of `flat` that is not finite. Checks blocks of values with
/// a loop that vectorises (compiled for the CPU's widest vectors), then looks inside the
/// first failing block.
pub(crate) fn first_not_finite_in(flat: &[f32]) -> Option<usize> {
    const BLOCK: usize = 1024;
    let block = crate::core::simd::vectorised(
        #[inline(always)]
        || {
            flat.chunks(BLOCK)
                .position(|b| !b.iter().fold(true, |all, v| all & v.is_finite()))
        },
    )?;
    let start = block * BLOCK;
    let i = flat[start..].iter().position(|v| !v.is_finite())?;
    Some(start + i)
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

    #[test]
    fn a_loaded_flat_matrix_is_the_same_matrix() {
        // Large enough for mapped pages, and a small one on the heap.
        for (rows, cols) in [(3, 5), (600, 1100)] {
            let values: Vec<f32> = (0..rows * cols).map(|i| i as f32 * 0.25 - 7.0).collect();
            let mut flat = Pages::<f32>::zeroed(values.len());
            flat.copy_from_slice(&values);
            let loaded = Matrix::from_flat(flat.clone(), rows, cols, None).unwrap();
            let built = Matrix::new(Array2::from_shape_vec((rows, cols), values).unwrap()).unwrap();
            assert_eq!(loaded, built);
            assert_eq!(loaded.shape(), (rows, cols));
            assert_eq!(loaded.values(), built.values());
            assert_eq!(loaded.labels().len(), rows);
            assert_eq!(loaded.clone().into_parts(), built.into_parts());
            // A length that is not rows x cols, and a value that is not finite.
            assert!(matches!(
                Matrix::from_flat(flat.clone(), rows, cols + 1, None),
                Err(MatrixError::Empty { .. })
            ));
            flat[cols + 2] = f32::NAN;
            flat[cols + 3] = f32::INFINITY;
            assert_eq!(first_not_finite_in(&flat), Some(cols + 2));
            assert!(matches!(
                Matrix::from_flat(flat, rows, cols, Some(cols + 2)),
                Err(MatrixError::NotFinite { row: 1, col: 2, .. })
            ));
        }
    }
}
