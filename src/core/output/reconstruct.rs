//! A report's reconstruction, a row at a time: the values a format's decoder produced, or
//! an integer configuration's codes recomputed from the matrix and their blocks with the
//! reference [`Quantizer`] (what [`Report::dequantized`] gives, without a block lookup per
//! value).

use ndarray::ArrayView2;

use crate::core::kernel::Quantizer;
use crate::core::matrix::Matrix;
use crate::core::report::{Layout, Report};

/// Reconstructs rows of `report` from the matrix it was made from (`w`).
pub(crate) struct Rows<'a> {
    report: &'a Report,
    w: ArrayView2<'a, f32>,
    /// Per column (a per-column layout) or the one tensor-wide block.
    shared: Vec<Quantizer>,
}

impl<'a> Rows<'a> {
    pub(crate) fn new(report: &'a Report, matrix: &'a Matrix) -> Self {
        let w = matrix.values();
        let shared = if report.values.is_some() {
            Vec::new()
        } else {
            match report.layout {
                Layout::Tensor => vec![report.quantizer(&report.blocks.at(0))],
                Layout::Columns => (0..report.shape.1)
                    .map(|c| report.quantizer(&report.blocks.at(c)))
                    .collect(),
                Layout::Rows | Layout::Groups { .. } => Vec::new(),
            }
        };
        Self { report, w, shared }
    }

    /// Row `r`'s reconstruction into `hat` (one per column); adds 1 to `clamped[c]` for
    /// each value whose code was clamped.
    pub(crate) fn row(&self, r: usize, hat: &mut [f32], clamped: &mut [u32]) {
        let cols = self.report.shape.1;
        if let Some(v) = &self.report.values {
            hat.copy_from_slice(&v[r * cols..(r + 1) * cols]);
            return;
        }
        let x = self.w.row(r);
        let mut one = |q: &Quantizer, c: usize| {
            let (code, was_clamped) = q.code(x[c]);
            hat[c] = q.dequantize(code);
            clamped[c] += u32::from(was_clamped);
        };
        match self.report.layout {
            Layout::Tensor => {
                for c in 0..cols {
                    one(&self.shared[0], c);
                }
            }
            Layout::Columns => {
                for c in 0..cols {
                    one(&self.shared[c], c);
                }
            }
            Layout::Rows => {
                let q = self.report.quantizer(&self.report.blocks.at(r));
                for c in 0..cols {
                    one(&q, c);
                }
            }
            Layout::Groups { size, per_row } => {
                for k in 0..per_row {
                    let q = self
                        .report
                        .quantizer(&self.report.blocks.at(r * per_row + k));
                    for c in k * size..((k + 1) * size).min(cols) {
                        one(&q, c);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::config::{Axis, Granularity};
    use crate::core::presets::{PresetOptions, preset};
    use crate::core::{Matrix, Options, analyse_with};

    #[test]
    fn rows_equal_the_reports_own_reconstruction_in_every_layout() {
        let rows: Vec<Vec<f32>> = (0..5)
            .map(|r| {
                (0..70)
                    .map(|c| ((r * 13 + c * 7) as f32 * 0.31).sin() * (1 + r) as f32)
                    .collect()
            })
            .collect();
        let refs: Vec<&[f32]> = rows.iter().map(Vec::as_slice).collect();
        let m = Matrix::from_rows(&refs).unwrap();
        for (name, g, axis) in [
            ("lesson", Granularity::Tensor, Axis::Rows),
            ("ort-int8", Granularity::Channel, Axis::Rows),
            ("ort-int8", Granularity::Channel, Axis::Columns),
            ("q4_0", Granularity::Group(32), Axis::Rows),
            ("ort-int4", Granularity::Group(16), Axis::Rows),
        ] {
            let mut c = preset(name, PresetOptions::default()).unwrap();
            c.granularity = g;
            c.axis = axis;
            let report = analyse_with(&m, &c, Options::ONE_CONFIG).unwrap();
            let rows = Rows::new(&report, &m);
            let mut hat = vec![0.0; 70];
            let mut clamped = vec![0; 70];
            for r in 0..5 {
                rows.row(r, &mut hat, &mut clamped);
                let want = report.row_dequantized(r);
                assert_eq!(
                    hat.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    want.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    "{name} {g} {axis:?} row {r}"
                );
            }
            let total: u32 = clamped.iter().sum();
            let want: usize = report.blocks.iter().map(|b| b.clipped).sum();
            assert_eq!(total as usize, want, "{name} {g}");
        }
    }
}
