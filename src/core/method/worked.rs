//! The methods' worked arithmetic: one AWQ ratio's scales column by column, and one GPTQ
//! column's error pushed onto the next columns of its block, for `report --explain` and
//! the explorer's worked arithmetic (F12).

use serde::Serialize;

use super::awq::Awq;
use super::gptq::Push;
use super::torch_ops;

/// Columns shown.
pub const COLUMNS: usize = 6;

/// AWQ's scales at the chosen ratio, for the first columns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AwqWorked {
    /// The chosen ratio.
    pub ratio: f64,
    /// `(column, x_mean, max(x_mean^ratio, 1e-4), s)` for the first [`COLUMNS`] columns.
    pub columns: Vec<(usize, f32, f32, f32)>,
    /// The largest and smallest `max(x_mean^ratio, 1e-4)` over every column.
    pub max: f32,
    /// See `max`.
    pub min: f32,
    /// `sqrt(max · min)`, what each is divided by.
    pub norm: f32,
    /// The output MSE at this ratio and at ratio 0 (round to nearest).
    pub output_mse: f64,
    /// At ratio 0.
    pub output_mse_rtn: f64,
}

/// The arithmetic of the methods that ran.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Worked {
    /// AWQ's, when it ran.
    pub awq: Option<AwqWorked>,
    /// GPTQ's column followed, when it ran.
    pub gptq: Option<Push>,
}

/// AWQ's chosen ratio's scales, as `ratio_scales` computes them.
#[must_use]
pub fn awq(a: &Awq) -> AwqWorked {
    let r = &a.ratios[a.best];
    let raw: Vec<f32> = torch_ops::torch_pow(&a.x_mean, r.ratio)
        .into_iter()
        .map(|v| v.max(1e-4))
        .collect();
    let max = raw.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let min = raw.iter().copied().fold(f32::INFINITY, f32::min);
    let columns = (0..a.x_mean.len().min(COLUMNS))
        .map(|j| (j, a.x_mean[j], raw[j], r.scales[j]))
        .collect();
    AwqWorked {
        ratio: r.ratio,
        columns,
        max,
        min,
        norm: (max * min).sqrt(),
        output_mse: r.output_mse,
        output_mse_rtn: a.ratios[0].output_mse,
    }
}
