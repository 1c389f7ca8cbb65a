//! Small helpers of the core's and the readers' tests: matrices written by hand and read back
//! as rows, the ORT int8 preset, the squared error of each block, and the type of the
//! convention overrides that the property tests draw.

use quantscope::core::config::Granularity;
use quantscope::core::config::{
    Arith, AsymZeroPoint, CodeClamp, Degenerate, NonFinite, QuantExpr, SymScale, SymZeroPoint,
};
use quantscope::core::{Config, Matrix, PresetOptions, Report, analyse, preset};

/// Overrides of a preset's conventions (`None`: the preset's), in the order of
/// [`quantscope::core::config::Conventions`]; the property tests draw them at random.
pub type ConventionOverrides = (
    Option<SymScale>,
    Option<SymZeroPoint>,
    Option<AsymZeroPoint>,
    Option<bool>,
    Option<QuantExpr>,
    Option<Arith>,
    Option<Degenerate>,
    Option<CodeClamp>,
    Option<NonFinite>,
);

/// The seed lesson's matrix: a quiet row and a loud one.
pub fn lesson_matrix() -> Matrix {
    Matrix::from_rows(&[&[0.05, -0.08, 0.12, -0.15], &[2.21, -3.10, 1.77, -2.66]]).unwrap()
}

/// The `lesson` preset at `granularity`.
pub fn lesson_config(granularity: Granularity) -> Config {
    Config {
        granularity,
        ..preset("lesson", PresetOptions::default()).unwrap()
    }
}

/// The lesson's matrix analysed by the `lesson` preset at `granularity`.
pub fn lesson(granularity: Granularity) -> Report {
    analyse(&lesson_matrix(), &lesson_config(granularity)).unwrap()
}

/// The `ort-int8` preset as it is (symmetric, per tensor).
pub fn ort_int8() -> Config {
    preset("ort-int8", PresetOptions::default()).expect("preset")
}

/// A matrix of `rows`, each a channel.
pub fn rows(rows: &[&[f32]]) -> Matrix {
    Matrix::from_rows(rows).expect("finite, rectangular")
}

/// Sum of squared errors of each block.
pub fn block_sse(m: &Matrix, report: &Report) -> Vec<f64> {
    report
        .blocks
        .iter()
        .map(|b| {
            let mut sse = 0.0;
            for r in b.rows.0..b.rows.1 {
                for c in b.cols.0..b.cols.1 {
                    let e = f64::from(report.dequantized(r, c)) - f64::from(m.values()[[r, c]]);
                    sse += e * e;
                }
            }
            sse
        })
        .collect()
}

/// The rows of `m`, as vectors.
pub fn matrix_rows(m: &Matrix) -> Vec<Vec<f32>> {
    m.values().rows().into_iter().map(|r| r.to_vec()).collect()
}
