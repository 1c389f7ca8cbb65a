//! The reconstructed matrix: what the configuration or format gives back for every value
//! of the matrix a report is of (its codes times their block's scale, or a format's grid
//! points), to hand to other tools (`report --write-dequantized`, the explorer's export).

use ndarray::Array2;
use rayon::prelude::*;

use crate::core::matrix::{Matrix, MatrixError};
use crate::core::report::Report;

/// Every value of `report`'s matrix as the configuration reconstructs it, row by row (rows
/// in parallel), with the report's channel labels.
pub fn reconstruction(report: &Report) -> Result<Matrix, MatrixError> {
    let (rows, cols) = report.shape;
    let values: Vec<f32> = (0..rows)
        .into_par_iter()
        .flat_map_iter(|r| report.row_dequantized(r))
        .collect();
    let labels = report.channels.iter().map(|c| c.label.clone()).collect();
    let array = Array2::from_shape_vec((rows, cols), values)
        .map_err(|_| MatrixError::Empty { rows, cols })?;
    Matrix::with_labels(array, labels)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::config::Config;
    use crate::core::{PresetOptions, analyse, preset};

    #[test]
    fn the_quiet_row_comes_back_as_zeros_under_one_shared_scale() {
        let m =
            Matrix::from_rows(&[&[0.05, -0.08, 0.12, -0.15], &[2.21, -3.10, 1.77, -2.66]]).unwrap();
        let r = analyse(&m, &Config::default()).unwrap();
        let back = reconstruction(&r).unwrap();
        assert_eq!(back.values().row(0).to_vec(), [0.0; 4]);
        // The loud row: codes 5, -7, 4, -6 times 3.10 / 7.
        let s = 3.10f32 / 7.0;
        let want: Vec<f32> = [5.0f32, -7.0, 4.0, -6.0].iter().map(|c| c * s).collect();
        for (got, want) in back.values().row(1).iter().zip(want) {
            assert!((got - want).abs() <= f32::EPSILON * 4.0, "{got} {want}");
        }
        // A format's grid points, as the report holds them.
        let q40 = preset("q4_0", PresetOptions::default()).unwrap();
        let wide =
            Matrix::from_rows(&[&(0..32).map(|i| (i as f32 * 0.3).sin()).collect::<Vec<_>>()])
                .unwrap();
        let r = analyse(&wide, &q40).unwrap();
        assert_eq!(
            reconstruction(&r).unwrap().values().row(0).to_vec(),
            r.row_dequantized(0)
        );
    }
}
