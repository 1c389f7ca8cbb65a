//! SmoothQuant (Xiao et al. 2023, eq. 4): migrate the difficulty of quantizing activations
//! into the weights with one factor per input column,
//!
//! ```text
//! s_j = max|X_j|^α / max|W_j|^(1−α)        X' = X / s,   W' = W · s,   X' W'ᵀ = X Wᵀ
//! ```
//!
//! transcribed from `smooth_ln_fcs` in `smoothquant/smooth.py` (mit-han-lab/smoothquant,
//! lines 19–45 at commit c61476d): `weight_scales = max over output rows of |W|, clamped at
//! 1e-5`; `scales = (act_scales.pow(α) / weight_scales.pow(1 − α)).clamp(min=1e-5)`, in
//! f32 with torch's `pow` ([`torch_ops::torch_pow`]: α = 0, 0.5 and 1 are exact, others
//! SLEEF's). `act_scales` is `max |x|` per column over the calibration tokens
//! (`calibration.py`'s `get_act_scales`). The model applies `1/s` to the LayerNorm before
//! the layer; for one layer, `X' = X / s` in f32.
//!
//! [`sweep`] runs α from 0 to 1 in steps of 0.05 and gives, for each, both sides' largest
//! values and the W8A8 error per tensor and per token against the float layer.

use ndarray::{Array2, ArrayView2, Axis};
use serde::Serialize;

use super::act_quant::{ActGranularity, w8a8_checked};
use super::{LayerError, MethodError, Progress, check_inputs, linalg, torch_ops};

/// The α grid: 0, 0.05, ..., 1.
pub const ALPHA_STEPS: usize = 20;

/// The α of step `j` of the grid (`j / 20`).
#[must_use]
pub fn alpha_at(j: usize) -> f64 {
    j as f64 / ALPHA_STEPS as f64
}

/// The smoothing factors for columns whose activations reach `act_max` and weights
/// `w_max` (already clamped at 1e-5), with strength `alpha` (`smooth_ln_fcs`).
#[must_use]
pub fn factors(act_max: &[f32], w_max: &[f32], alpha: f64) -> Vec<f32> {
    let a = torch_ops::torch_pow(act_max, alpha);
    let w = torch_ops::torch_pow(w_max, 1.0 - alpha);
    a.iter().zip(&w).map(|(&a, &w)| (a / w).max(1e-5)).collect()
}

/// `max |X_j|` over tokens, per column.
#[must_use]
pub fn act_max(x: &ArrayView2<'_, f32>) -> Vec<f32> {
    x.axis_iter(Axis(1))
        .map(|c| c.iter().fold(0.0f32, |m, v| m.max(v.abs())))
        .collect()
}

/// `max |W_j|` over output rows, per column, clamped at 1e-5.
#[must_use]
pub fn weight_max(w: &ArrayView2<'_, f32>) -> Vec<f32> {
    w.axis_iter(Axis(1))
        .map(|c| c.iter().fold(0.0f32, |m, v| m.max(v.abs())).max(1e-5))
        .collect()
}

/// `X / s` and `W · s`, column by column, in f32.
#[must_use]
pub fn smooth(
    w: &ArrayView2<'_, f32>,
    x: &ArrayView2<'_, f32>,
    s: &[f32],
) -> (Array2<f32>, Array2<f32>) {
    let mut xs = x.to_owned();
    for mut row in xs.rows_mut() {
        for (v, &f) in row.iter_mut().zip(s) {
            *v /= f;
        }
    }
    let mut ws = w.to_owned();
    for mut row in ws.rows_mut() {
        for (v, &f) in row.iter_mut().zip(s) {
            *v *= f;
        }
    }
    (xs, ws)
}

/// One α of the sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AlphaStep {
    /// The migration strength.
    pub alpha: f64,
    /// `s_j`, one per input column.
    pub factors: Vec<f32>,
    /// `max |X'_j|` per column after smoothing (what the activations' scales see).
    pub act_max: Vec<f32>,
    /// `max |W'_j|` per column after smoothing.
    pub weight_max: Vec<f32>,
    /// W8A8 with activations per tensor, against the float layer `X Wᵀ`.
    pub per_tensor: LayerError,
    /// W8A8 with activations per token, against the float layer.
    pub per_token: LayerError,
    /// The mean utilization of the activations' int8 codes per token, per tensor and per
    /// token, and of the weights' per channel (`(max − min) / 254` of each row's codes).
    pub utilization: Utilization,
}

/// Mean utilization of the int8 codes on both sides.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Utilization {
    /// Activations quantized per tensor: the mean over tokens.
    pub act_per_tensor: f64,
    /// Activations quantized per token: the mean over tokens.
    pub act_per_token: f64,
    /// Weights per output channel: the mean over channels.
    pub weights: f64,
}

/// The sweep over α.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sweep {
    /// `max |X_j|` per column before smoothing.
    pub act_max: Vec<f32>,
    /// `max |W_j|` per column before smoothing (clamped at 1e-5).
    pub weight_max: Vec<f32>,
    /// One step per α, 0 to 1.
    pub steps: Vec<AlphaStep>,
    /// The step with the least W8A8 output MSE, activations per tensor (the first on ties).
    pub best_per_tensor: usize,
    /// The same, activations per token.
    pub best_per_token: usize,
}

/// SmoothQuant at one α.
pub fn at_alpha(
    w: &ArrayView2<'_, f32>,
    x: &ArrayView2<'_, f32>,
    alpha: f64,
) -> Result<AlphaStep, MethodError> {
    check_inputs(w, x)?;
    if !(0.0..=1.0).contains(&alpha) {
        return Err(MethodError::Alpha { alpha });
    }
    let signal = linalg::mul_t(x, w);
    Ok(step(w, x, &act_max(x), &weight_max(w), alpha, &signal))
}

fn step(
    w: &ArrayView2<'_, f32>,
    x: &ArrayView2<'_, f32>,
    amax: &[f32],
    wmax: &[f32],
    alpha: f64,
    signal: &Array2<f32>,
) -> AlphaStep {
    let s = factors(amax, wmax, alpha);
    let (xs, ws) = smooth(w, x, &s);
    let t = w8a8_checked(
        &ws.view(),
        &xs.view(),
        ActGranularity::PerTensor,
        Some(signal),
    );
    let k = w8a8_checked(
        &ws.view(),
        &xs.view(),
        ActGranularity::PerToken,
        Some(signal),
    );
    let mean = |v: Vec<f64>| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let utilization = Utilization {
        act_per_tensor: mean(t.activations.utilization()),
        act_per_token: mean(k.activations.utilization()),
        weights: mean(k.weights.utilization()),
    };
    AlphaStep {
        alpha,
        act_max: act_max(&xs.view()),
        weight_max: ws
            .axis_iter(Axis(1))
            .map(|c| c.iter().fold(0.0f32, |m, v| m.max(v.abs())))
            .collect(),
        factors: s,
        per_tensor: t.error,
        per_token: k.error,
        utilization,
    }
}

/// SmoothQuant at every α of the grid; `progress` is told after each.
pub fn sweep(
    w: &ArrayView2<'_, f32>,
    x: &ArrayView2<'_, f32>,
    progress: Progress<'_>,
) -> Result<Sweep, MethodError> {
    check_inputs(w, x)?;
    let amax = act_max(x);
    let wmax = weight_max(w);
    let signal = linalg::mul_t(x, w);
    let mut steps = Vec::with_capacity(ALPHA_STEPS + 1);
    for j in 0..=ALPHA_STEPS {
        steps.push(step(w, x, &amax, &wmax, alpha_at(j), &signal));
        if !progress(j + 1, ALPHA_STEPS + 1) {
            return Err(MethodError::Cancelled);
        }
    }
    let best = |f: fn(&AlphaStep) -> f64| {
        (0..steps.len()).fold(0, |b, j| if f(&steps[j]) < f(&steps[b]) { j } else { b })
    };
    Ok(Sweep {
        best_per_tensor: best(|s| s.per_tensor.overall.output_mse),
        best_per_token: best(|s| s.per_token.overall.output_mse),
        act_max: amax,
        weight_max: wmax,
        steps,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn factors_balance_the_two_sides() {
        // α = 0.5: s = sqrt(a / w), so both sides reach sqrt(a · w)
        let s = factors(&[16.0, 1.0], &[1.0, 4.0], 0.5);
        assert_eq!(s, vec![4.0, 0.5]);
        // α = 0: s = 1 / max|W|; α = 1: s = max|X|
        assert_eq!(factors(&[16.0], &[4.0], 0.0), vec![0.25]);
        assert_eq!(factors(&[16.0], &[4.0], 1.0), vec![16.0]);
        // a dead column: 0^α = 0, clamped to 1e-5
        assert_eq!(factors(&[0.0], &[4.0], 0.35), vec![1e-5]);
        let w = array![[1.0f32, 2.0]];
        let x = array![[1.0f32, 2.0]];
        assert!(matches!(
            at_alpha(&w.view(), &x.view(), 1.5),
            Err(MethodError::Alpha { .. })
        ));
    }

    #[test]
    fn a_sweep_stops_when_told() {
        let w = array![[1.0f32, 2.0]];
        let x = array![[1.0f32, 20.0], [0.5, 1.0]];
        let mut n = 0;
        let r = sweep(&w.view(), &x.view(), &mut |_, _| {
            n += 1;
            n < 3
        });
        assert_eq!(r.unwrap_err(), MethodError::Cancelled);
        let r = sweep(&w.view(), &x.view(), &mut |_, _| true).unwrap();
        assert_eq!(r.steps.len(), 21);
        assert!(r.best_per_token <= 20);
    }
}
