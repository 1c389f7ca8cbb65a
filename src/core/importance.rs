//! Which weights matter: the importance of each input column, the activations a layer
//! sees, and the error the layer's output makes (as data, [`output`]; computed by
//! [`crate::core::output`]).
//!
//! A weight `w_ij` multiplies input column `j`. llama.cpp's `llama-imatrix` runs a model on
//! calibration text and records, per weight tensor, the mean of `x_j²` over every token
//! it saw: the **importance** of column `j`. `llama-quantize --imatrix` passes that vector to
//! the quantizer (`quant_weights` in ggml), which then spends its accuracy on the columns
//! whose inputs are loud. [`Importance`] is that vector, where it came from
//! ([`ImportanceSource`]) and how concentrated it is ([`Importance::summary`]).
//!
//! An importance vector comes from one of three places:
//! - a llama.cpp importance matrix (`io::imatrix` reads both file formats), averaged as
//!   `llama-quantize` averages it;
//! - calibration activations `X` of shape `[tokens, columns]` ([`activations`]): the mean
//!   of `x²` per column, accumulated as `llama-imatrix` accumulates it;
//! - built-in synthetic activations with a few loud columns
//!   ([`activations::Activations::built_in`]), so that a lesson needs no file.
//!
//! A mixture-of-experts tensor has one vector per expert (`matrices` of them): the rows of
//! the tensor split into that many equal runs, run `m` quantized with vector `m`, as
//! `llama-quantize` does for a 3-D tensor.

pub mod activations;
pub mod output;
pub mod rankings;
mod summary;

pub use activations::{
    Activations, ActivationsProblem, BuiltIn, Tokens, TokensError, importance_of,
};
pub use output::{ColumnRisk, OutputErrors, OutputMetrics, RISK_COLUMNS};
pub use rankings::{Measure, Ranked, RankingChange, ranking_changes};
pub use summary::{ImportanceSummary, TOP_COLUMNS};

/// Where an importance vector came from, for display.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportanceSource {
    /// An entry of a llama.cpp importance matrix.
    Imatrix {
        /// The file, as given.
        file: String,
        /// The entry's name (a GGUF tensor name such as `blk.3.ffn_down.weight`).
        entry: String,
        /// `imatrix.chunk_count` (GGUF) or the chunk count at the end of a `.dat` file.
        chunks: Option<u64>,
        /// `imatrix.datasets`, or the `.dat` file's dataset name.
        datasets: Vec<String>,
    },
    /// The mean of `x²` per column of calibration activations.
    Activations {
        /// The activations' name (a file, `FILE:TENSOR`, or the built-in's name).
        name: String,
        /// Tokens they hold.
        tokens: usize,
    },
}

impl std::fmt::Display for ImportanceSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Imatrix {
                file,
                entry,
                chunks,
                ..
            } => {
                write!(f, "imatrix {file}, entry {entry}")?;
                if let Some(c) = chunks {
                    write!(f, " ({c} chunks)")?;
                }
                Ok(())
            }
            Self::Activations { name, tokens } => {
                write!(f, "activations {name} (mean of x² over {tokens} tokens)")
            }
        }
    }
}

/// Why a vector cannot be an importance vector for a matrix.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ImportanceError {
    /// No values.
    #[error("it holds no values")]
    Empty,
    /// A NaN or an infinity.
    #[error("column {col} (0-based{}) is {value}: importance must be finite", matrix_note(*.matrix))]
    NotFinite {
        /// 0-based column.
        col: usize,
        /// The expert (0 for a dense tensor).
        matrix: usize,
        /// The value.
        value: f32,
    },
    /// A negative value (a mean of squares cannot be one).
    #[error("column {col} (0-based{}) is {value}: importance is a mean of x² and cannot be negative", matrix_note(*.matrix))]
    Negative {
        /// 0-based column.
        col: usize,
        /// The expert (0 for a dense tensor).
        matrix: usize,
        /// The value.
        value: f32,
    },
    /// The vector's length is not the matrix's column count, or its experts do not divide
    /// the matrix's rows.
    #[error("{}", width_message(*.vector, *.vectors, *.columns, *.rows))]
    Width {
        /// Values in each vector.
        vector: usize,
        /// Vectors (experts).
        vectors: usize,
        /// Columns of the matrix.
        columns: usize,
        /// Rows of the matrix.
        rows: usize,
    },
}

fn matrix_note(matrix: usize) -> String {
    if matrix == 0 {
        String::new()
    } else {
        format!(", expert {matrix}")
    }
}

fn width_message(vector: usize, vectors: usize, columns: usize, rows: usize) -> String {
    if vectors <= 1 {
        format!("it holds {vector} values, the tensor has {columns} columns")
    } else if vector == columns {
        format!(
            "it holds {vectors} vectors of {vector} values (one per expert), which do not divide the tensor's {rows} rows"
        )
    } else {
        format!(
            "it holds {vectors} vectors of {vector} values (one per expert), the tensor has {columns} columns"
        )
    }
}

/// The importance of each input column of a matrix (one vector, or one per expert).
#[derive(Debug, Clone, PartialEq)]
pub struct Importance {
    values: Vec<f32>,
    columns: usize,
    source: ImportanceSource,
}

impl Importance {
    /// `values` (one per column, or `matrices * columns` for a mixture-of-experts tensor,
    /// expert after expert) for a matrix of `columns` columns. Every value must be finite
    /// and not negative.
    pub fn new(
        values: Vec<f32>,
        columns: usize,
        source: ImportanceSource,
    ) -> Result<Self, ImportanceError> {
        if values.is_empty() || columns == 0 {
            return Err(ImportanceError::Empty);
        }
        if !values.len().is_multiple_of(columns) {
            return Err(ImportanceError::Width {
                vector: values.len(),
                vectors: 1,
                columns,
                rows: 0,
            });
        }
        for (i, &v) in values.iter().enumerate() {
            let (matrix, col) = (i / columns, i % columns);
            if !v.is_finite() {
                return Err(ImportanceError::NotFinite {
                    col,
                    matrix,
                    value: v,
                });
            }
            if v < 0.0 {
                return Err(ImportanceError::Negative {
                    col,
                    matrix,
                    value: v,
                });
            }
        }
        Ok(Self {
            values,
            columns,
            source,
        })
    }

    /// Checks that this importance fits a matrix of `rows` x `columns`: one vector of
    /// `columns` values, or one per expert where the experts divide the rows.
    pub fn check_shape(&self, rows: usize, columns: usize) -> Result<(), ImportanceError> {
        let m = self.matrices();
        if self.columns != columns || rows == 0 || !rows.is_multiple_of(m) {
            return Err(ImportanceError::Width {
                vector: self.columns,
                vectors: m,
                columns,
                rows,
            });
        }
        Ok(())
    }

    /// Every value, expert after expert.
    #[must_use]
    pub fn values(&self) -> &[f32] {
        &self.values
    }

    /// Columns of each vector.
    #[must_use]
    pub fn columns(&self) -> usize {
        self.columns
    }

    /// Vectors (experts): 1 for a dense tensor.
    #[must_use]
    pub fn matrices(&self) -> usize {
        self.values.len() / self.columns
    }

    /// Where it came from.
    #[must_use]
    pub fn source(&self) -> &ImportanceSource {
        &self.source
    }

    /// The vector that row `row` of a matrix of `rows` rows is quantized with (the rows
    /// split into [`Importance::matrices`] equal runs). `rows` must pass
    /// [`Importance::check_shape`].
    #[must_use]
    pub fn row(&self, row: usize, rows: usize) -> &[f32] {
        let m = self.matrices();
        let per = (rows / m).max(1);
        let k = (row / per).min(m - 1);
        &self.values[k * self.columns..(k + 1) * self.columns]
    }

    /// Each column's importance summed over the experts (the vector itself for a dense
    /// tensor), in f64.
    #[must_use]
    pub fn column_totals(&self) -> Vec<f64> {
        let mut out = vec![0.0f64; self.columns];
        for v in self.values.chunks_exact(self.columns) {
            for (o, &a) in out.iter_mut().zip(v) {
                *o += f64::from(a);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source() -> ImportanceSource {
        ImportanceSource::Activations {
            name: "x".into(),
            tokens: 3,
        }
    }

    #[test]
    fn bad_values_are_refused_with_their_column() {
        let e = Importance::new(vec![1.0, f32::NAN], 2, source()).unwrap_err();
        assert!(matches!(
            e,
            ImportanceError::NotFinite {
                col: 1,
                matrix: 0,
                ..
            }
        ));
        let e = Importance::new(vec![1.0, 2.0, 3.0, -1.0], 2, source()).unwrap_err();
        assert!(
            e.to_string().contains("column 1 (0-based, expert 1)"),
            "{e}"
        );
        assert!(e.to_string().contains("negative"), "{e}");
        assert_eq!(
            Importance::new(vec![], 2, source()).unwrap_err(),
            ImportanceError::Empty
        );
        assert!(Importance::new(vec![1.0; 3], 2, source()).is_err());
    }

    #[test]
    fn experts_split_the_rows_in_equal_runs() {
        let imp = Importance::new(vec![1.0, 2.0, 3.0, 4.0], 2, source()).unwrap();
        assert_eq!(imp.matrices(), 2);
        assert!(imp.check_shape(6, 2).is_ok());
        assert_eq!(imp.row(2, 6), &[1.0, 2.0]);
        assert_eq!(imp.row(3, 6), &[3.0, 4.0]);
        let e = imp.check_shape(5, 2).unwrap_err();
        assert!(e.to_string().contains("2 vectors of 2 values"), "{e}");
        let e = imp.check_shape(6, 4).unwrap_err();
        assert_eq!(
            e.to_string(),
            "it holds 2 vectors of 2 values (one per expert), the tensor has 4 columns"
        );
        assert_eq!(imp.column_totals(), vec![4.0, 6.0]);
    }
}
