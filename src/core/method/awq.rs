//! AWQ's scale search (Lin et al. 2024), as `llm-awq` runs it for one linear layer
//! (mit-han-lab/llm-awq at commit d6e797a, `awq/quantize/auto_scale.py`):
//!
//! ```text
//! x_mean = mean over tokens of |x|, per column           get_act_scale, line 29
//! for ratio in 0, 1/20, ..., 19/20:                     _search_module_scale, line 109
//!     s = max(x_mean^ratio, 1e-4);  s = s / sqrt(max(s) · min(s))
//!     Ŵ = Q(W · s) / s                                   Q = pseudo_quantize_tensor
//!     loss = mean((X Wᵀ − X Ŵᵀ)²)
//! keep the ratio with the least loss (the first on ties)
//! ```
//!
//! `pseudo_quantize_tensor` (`awq/quantize/quantizer.py`, line 61, `zero_point=True`, the only
//! branch llm-awq uses): each row cut into groups of `q_group_size` columns (the whole row for
//! -1), `scale = max(max − min, 1e-5) / (2^b − 1)`, `zero = clamp(−round(min / scale), 0,
//! 2^b − 1)`, `q = clamp(round(w / scale) + zero, 0, 2^b − 1)`, `ŵ = (q − zero) · scale`, all
//! in f32 with rounding half to even. The range is not forced to hold 0, so a constant group
//! has `scale = 1e-5 / (2^b − 1)` and its values clamp to the top code.
//!
//! Exact against llm-awq run on CPU torch: `x_mean` (torch's order of additions), every
//! ratio's scales (torch's `pow`, [`torch_ops`]), the codes, group scales and zero points; the
//! losses agree to float rounding (the products are faer's, not MKL's), and so the chosen
//! ratio agrees unless two ratios' losses are within that rounding. llm-awq's clipping search
//! (`auto_clip`), which it runs after this one, is not part of it.

use ndarray::{Array2, ArrayView2};
use serde::Serialize;

use super::{LayerError, MethodError, Progress, check_inputs, linalg, torch_ops};

/// The grid's size (`n_grid`).
pub const GRID: usize = 20;

/// AWQ's weight quantizer: bits and group size (`None`: one group per row, llm-awq's
/// `q_group_size = -1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AwqConfig {
    /// Bits per weight (`w_bit`), 1 to 8.
    pub bits: u32,
    /// Columns per group; `None` for the whole row.
    pub group: Option<usize>,
}

impl Default for AwqConfig {
    /// 4 bits in groups of 128, llm-awq's usual setting.
    fn default() -> Self {
        Self {
            bits: 4,
            group: Some(128),
        }
    }
}

/// `pseudo_quantize_tensor`'s result: codes, and per group its scale and zero point.
#[derive(Debug, Clone, PartialEq)]
pub struct Pseudo {
    /// Codes in `[0, 2^b − 1]`.
    pub codes: Array2<u8>,
    /// One per group, row after row.
    pub scales: Vec<f32>,
    /// One per group (an integer held in f32, as torch holds it).
    pub zeros: Vec<f32>,
    /// `(q − zero) · scale`.
    pub values: Array2<f32>,
}

/// `pseudo_quantize_tensor(w, n_bit, zero_point=True, q_group_size)`. `w`'s columns must be a
/// multiple of the group.
#[must_use]
pub fn pseudo_quantize(w: &ArrayView2<'_, f32>, config: AwqConfig) -> Pseudo {
    let (rows, cols) = w.dim();
    let g = config.group.unwrap_or(cols).max(1);
    let max_int = ((1u32 << config.bits) - 1) as f32;
    let groups = cols / g;
    let mut codes = Array2::<u8>::zeros((rows, cols));
    let mut values = Array2::<f32>::zeros((rows, cols));
    let mut scales = Vec::with_capacity(rows * groups);
    let mut zeros = Vec::with_capacity(rows * groups);
    let ws = w.as_standard_layout();
    let data = ws.as_slice().unwrap_or(&[]);
    for r in 0..rows {
        for k in 0..groups {
            let part = &data[r * cols + k * g..r * cols + (k + 1) * g];
            let (lo, hi) = part
                .iter()
                .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &v| {
                    (lo.min(v), hi.max(v))
                });
            let scale = (hi - lo).max(1e-5) / max_int;
            let zero = (-(lo / scale).round_ties_even()).clamp(0.0, max_int);
            for (j, &v) in part.iter().enumerate() {
                let q = ((v / scale).round_ties_even() + zero).clamp(0.0, max_int);
                codes[(r, k * g + j)] = q as u8;
                values[(r, k * g + j)] = (q - zero) * scale;
            }
            scales.push(scale);
            zeros.push(zero);
        }
    }
    Pseudo {
        codes,
        scales,
        zeros,
        values,
    }
}

/// The scales of one ratio: `max(x_mean^ratio, 1e-4)`, divided by `sqrt(max · min)`.
#[must_use]
pub fn ratio_scales(x_mean: &[f32], k: usize) -> Vec<f32> {
    // ratio = k * 1 / n_grid in Python floats
    let ratio = k as f64 / GRID as f64;
    let s: Vec<f32> = torch_ops::torch_pow(x_mean, ratio)
        .into_iter()
        .map(|v| v.max(1e-4))
        .collect();
    let max = s.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let min = s.iter().copied().fold(f32::INFINITY, f32::min);
    let norm = (max * min).sqrt();
    s.into_iter().map(|v| v / norm).collect()
}

/// One ratio of the search.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ratio {
    /// `k / 20`.
    pub ratio: f64,
    /// The per-column scales.
    pub scales: Vec<f32>,
    /// `mean((X Wᵀ − X Ŵᵀ)²)`, the loss the search minimises (the layer's `output_mse`).
    pub output_mse: f64,
}

/// AWQ's result.
#[derive(Debug, Clone, PartialEq)]
pub struct Awq {
    /// The quantizer.
    pub config: AwqConfig,
    /// Mean `|x|` per column.
    pub x_mean: Vec<f32>,
    /// Every ratio of the grid.
    pub ratios: Vec<Ratio>,
    /// The chosen one's index.
    pub best: usize,
    /// `pseudo_quantize_tensor(W · s)` at the chosen ratio.
    pub quantized: Pseudo,
    /// `Ŵ = Q(W · s) / s`, the layer's effective weights.
    pub w_hat: Array2<f32>,
    /// The output error of `Ŵ`.
    pub error: LayerError,
    /// The output error of round to nearest with the same quantizer (ratio 0: `s = 1`).
    pub error_rtn: LayerError,
}

/// Checks the quantizer against `cols` columns.
fn check_config(config: AwqConfig, cols: usize) -> Result<(), MethodError> {
    if !(1..=8).contains(&config.bits) {
        return Err(MethodError::Bits { bits: config.bits });
    }
    if let Some(g) = config.group
        && (g == 0 || !cols.is_multiple_of(g))
    {
        return Err(MethodError::Group {
            group: g,
            columns: cols,
        });
    }
    Ok(())
}

/// `Q(W · s) / s`.
fn reconstruct(w: &ArrayView2<'_, f32>, s: &[f32], config: AwqConfig) -> (Pseudo, Array2<f32>) {
    let mut ws = w.to_owned();
    for mut row in ws.rows_mut() {
        for (v, &f) in row.iter_mut().zip(s) {
            *v *= f;
        }
    }
    let p = pseudo_quantize(&ws.view(), config);
    let mut w_hat = p.values.clone();
    for mut row in w_hat.rows_mut() {
        for (v, &f) in row.iter_mut().zip(s) {
            *v /= f;
        }
    }
    (p, w_hat)
}

/// AWQ's search on `w` (`[out, in]`) with activations `x` (`[tokens, in]`); `progress` is
/// told after each ratio.
pub fn search(
    w: &ArrayView2<'_, f32>,
    x: &ArrayView2<'_, f32>,
    config: AwqConfig,
    progress: Progress<'_>,
) -> Result<Awq, MethodError> {
    check_inputs(w, x)?;
    check_config(config, w.ncols())?;
    let (tokens, cols) = x.dim();
    let xs = x.as_standard_layout();
    let x_mean = torch_ops::torch_abs_mean_rows(xs.as_slice().unwrap_or(&[]), tokens, cols);
    let signal = linalg::mul_t(x, w);
    let mut ratios = Vec::with_capacity(GRID);
    let mut best = 0;
    let mut first = None;
    for k in 0..GRID {
        let scales = ratio_scales(&x_mean, k);
        let (_, w_hat) = reconstruct(w, &scales, config);
        let e = w - &w_hat;
        let err = LayerError::from_products(&linalg::mul_t(x, &e.view()), &signal);
        if k == 0 {
            first = Some(err.clone());
        }
        let output_mse = err.overall.output_mse;
        if output_mse
            < ratios
                .get(best)
                .map_or(f64::INFINITY, |r: &Ratio| r.output_mse)
        {
            best = k;
        }
        ratios.push(Ratio {
            ratio: k as f64 / GRID as f64,
            scales,
            output_mse,
        });
        if !progress(k + 1, GRID) {
            return Err(MethodError::Cancelled);
        }
    }
    let (quantized, w_hat) = reconstruct(w, &ratios[best].scales, config);
    let e = w - &w_hat;
    let error = LayerError::from_products(&linalg::mul_t(x, &e.view()), &signal);
    let error_rtn = first.unwrap_or_else(|| error.clone());
    Ok(Awq {
        config,
        x_mean,
        ratios,
        best,
        quantized,
        w_hat,
        error,
        error_rtn,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn pseudo_quantize_follows_llm_awq() {
        let w = array![[-1.0f32, 0.0, 0.5, 2.0], [0.3, 0.3, 0.3, 0.3]];
        let p = pseudo_quantize(
            &w.view(),
            AwqConfig {
                bits: 2,
                group: Some(4),
            },
        );
        // row 0: scale 3 / 3 = 1, zero = -round(-1) = 1; 0.5 rounds to 0 (half to even)
        assert_eq!(p.scales[0], 1.0);
        assert_eq!(p.zeros[0], 1.0);
        assert_eq!(p.codes.row(0).to_vec(), vec![0, 1, 1, 3]);
        // row 1, constant: scale 1e-5 / 3, zero 0, every code clamped to 3
        assert_eq!(p.scales[1], 1e-5 / 3.0);
        assert_eq!(p.codes.row(1).to_vec(), vec![3; 4]);
        assert_eq!(p.values[(1, 0)], 3.0 * (1e-5f32 / 3.0));
    }

    #[test]
    fn ratio_zero_is_round_to_nearest_and_scales_are_normalised() {
        let m = [1.0f32, 4.0, 0.0];
        assert_eq!(ratio_scales(&m, 0), vec![1.0; 3]);
        let s = ratio_scales(&m, 10);
        // sqrt: [1, 2, 1e-4 clamped] / sqrt(2 · 1e-4)
        let norm = (2.0f32 * 1e-4).sqrt();
        assert_eq!(s, vec![1.0 / norm, 2.0 / norm, 1e-4 / norm]);
    }

    #[test]
    fn bad_configurations_are_refused() {
        let w = array![[1.0f32, 2.0, 3.0]];
        let x = array![[1.0f32, 2.0, 3.0]];
        let e = search(&w.view(), &x.view(), AwqConfig::default(), &mut |_, _| true);
        assert_eq!(
            e.unwrap_err().to_string(),
            "group size 128 does not divide the 3 columns"
        );
        let c = AwqConfig {
            bits: 9,
            group: None,
        };
        assert!(matches!(
            search(&w.view(), &x.view(), c, &mut |_, _| true),
            Err(MethodError::Bits { bits: 9 })
        ));
        let c = AwqConfig {
            bits: 4,
            group: None,
        };
        let r = search(&w.view(), &x.view(), c, &mut |k, _| k < 5);
        assert_eq!(r.unwrap_err(), MethodError::Cancelled);
    }
}
