//! Activations quantized dynamically to int8, and the W8A8 layer, as SmoothQuant's
//! `smoothquant/fake_quant.py` computes them:
//!
//! ```text
//! scale = max(amax, 1e-5) / 127        amax per token (a row of X) or over all of X
//! q     = round(x / scale)             half to even, in f32; |q| ≤ 127 without a clamp
//! x̂     = q · scale
//! ```
//!
//! (`quantize_activation_per_token_absmax`, `quantize_activation_per_tensor_absmax`), and the
//! weights the same way per output channel (`quantize_weight_per_channel_absmax`). Per
//! tensor, one loud column sets the scale of every token, so quiet tokens collapse; per token,
//! each token gets its own scale. The W8A8 layer computes `X̂ Ŵᵀ`; its error against `X Wᵀ`
//! is `X (W − Ŵ)ᵀ + (X − X̂) Ŵᵀ`.

use ndarray::{Array2, ArrayView2, Axis};
use serde::Serialize;

use super::{LayerError, MethodError, check_inputs, linalg};

/// How activations are quantized: one scale for all of them, or one per token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub enum ActGranularity {
    /// One scale for the whole tensor (what integer hardware wants).
    PerTensor,
    /// One scale per token (row of `X`).
    #[default]
    PerToken,
}

impl ActGranularity {
    /// Both, per tensor first.
    pub const ALL: [Self; 2] = [Self::PerTensor, Self::PerToken];

    /// The name used on the command line and in exports.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::PerTensor => "tensor",
            Self::PerToken => "token",
        }
    }
}

impl std::fmt::Display for ActGranularity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ActGranularity {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "tensor" | "per-tensor" => Ok(Self::PerTensor),
            "token" | "per-token" => Ok(Self::PerToken),
            other => Err(format!(
                "unknown activation granularity \"{other}\" (expected tensor or token)"
            )),
        }
    }
}

/// A matrix quantized to int8 with absmax scales along its rows (or one scale for all).
#[derive(Debug, Clone, PartialEq)]
pub struct Int8 {
    /// One scale per row, or a single one for the whole matrix.
    pub scales: Vec<f32>,
    /// The codes, in `[-127, 127]`.
    pub codes: Array2<i8>,
    /// `q · scale`.
    pub values: Array2<f32>,
}

impl Int8 {
    /// The fraction of int8's 255 levels each row's codes span: `(max − min) / 254`.
    #[must_use]
    pub fn utilization(&self) -> Vec<f64> {
        self.codes
            .rows()
            .into_iter()
            .map(|r| {
                let (lo, hi) = r
                    .iter()
                    .fold((i8::MAX, i8::MIN), |(lo, hi), &q| (lo.min(q), hi.max(q)));
                if lo > hi {
                    0.0
                } else {
                    f64::from(i16::from(hi) - i16::from(lo)) / 254.0
                }
            })
            .collect()
    }
}

/// `fake_quant.py`'s absmax int8 quantization of `a`: per row (`per_row`) or per tensor.
#[must_use]
pub fn absmax_int8(a: &ArrayView2<'_, f32>, per_row: bool) -> Int8 {
    let amax = |it: &mut dyn Iterator<Item = &f32>| it.fold(0.0f32, |m, v| m.max(v.abs()));
    let scale = |m: f32| m.max(1e-5) / 127.0;
    let scales: Vec<f32> = if per_row {
        a.rows()
            .into_iter()
            .map(|r| scale(amax(&mut r.iter())))
            .collect()
    } else {
        vec![scale(amax(&mut a.iter()))]
    };
    let mut codes = Array2::<i8>::zeros(a.dim());
    let mut values = Array2::<f32>::zeros(a.dim());
    for (r, row) in a.rows().into_iter().enumerate() {
        let s = if per_row { scales[r] } else { scales[0] };
        for (c, &x) in row.iter().enumerate() {
            let q = (x / s).round_ties_even();
            codes[(r, c)] = q as i8;
            values[(r, c)] = q * s;
        }
    }
    Int8 {
        scales,
        codes,
        values,
    }
}

/// A W8A8 layer: weights int8 per output channel, activations int8 per tensor or per token.
#[derive(Debug, Clone, PartialEq)]
pub struct W8A8 {
    /// The activations' granularity.
    pub granularity: ActGranularity,
    /// The weights, per output channel.
    pub weights: Int8,
    /// The activations.
    pub activations: Int8,
    /// `X̂ Ŵᵀ` against `X Wᵀ`.
    pub error: LayerError,
    /// `X̂ Wᵀ` against `X Wᵀ`: the activations' share.
    pub error_activations_only: LayerError,
    /// `X Ŵᵀ` against `X Wᵀ`: the weights' share, round to nearest of the weights alone.
    pub error_weights_only: LayerError,
}

/// The W8A8 layer of `w` (`[out, in]`) on `x` (`[tokens, in]`), its error against the float
/// layer `reference_x · reference_wᵀ` (`x` and `w` themselves, or the layer before smoothing).
pub fn w8a8(
    w: &ArrayView2<'_, f32>,
    x: &ArrayView2<'_, f32>,
    granularity: ActGranularity,
) -> Result<W8A8, MethodError> {
    check_inputs(w, x)?;
    Ok(w8a8_checked(w, x, granularity, None))
}

/// [`w8a8`] on checked inputs; `signal` is `X Wᵀ` of the float layer when already computed.
pub(crate) fn w8a8_checked(
    w: &ArrayView2<'_, f32>,
    x: &ArrayView2<'_, f32>,
    granularity: ActGranularity,
    signal: Option<&Array2<f32>>,
) -> W8A8 {
    let weights = absmax_int8(w, true);
    let activations = absmax_int8(x, granularity == ActGranularity::PerToken);
    let ew = w - &weights.values;
    let ex = x - &activations.values;
    // X (W − Ŵ)ᵀ and (X − X̂) Ŵᵀ
    let mut err_w = linalg::mul_t(x, &ew.view());
    let err_x = linalg::mul_t(&ex.view(), &weights.values.view());
    let err_x_only = linalg::mul_t(&ex.view(), w);
    let own;
    let signal = if let Some(s) = signal {
        s
    } else {
        own = linalg::mul_t(x, w);
        &own
    };
    let error_weights_only = LayerError::from_products(&err_w, signal);
    err_w += &err_x;
    W8A8 {
        granularity,
        error_weights_only,
        error: LayerError::from_products(&err_w, signal),
        error_activations_only: LayerError::from_products(&err_x_only, signal),
        weights,
        activations,
    }
}

/// Each token's largest `|x|`, and each column's: what sets the per-token and per-column
/// scales, for the utilization view of activations.
#[must_use]
pub fn absmax_by_token_and_column(x: &ArrayView2<'_, f32>) -> (Vec<f32>, Vec<f32>) {
    let fold = |lane: ndarray::ArrayView1<'_, f32>| lane.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    (
        x.axis_iter(Axis(0)).map(fold).collect(),
        x.axis_iter(Axis(1)).map(fold).collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn per_tensor_collapses_the_quiet_token_and_per_token_keeps_it() {
        let x = array![[100.0f32, 1.0], [0.2, -0.3]];
        let t = absmax_int8(&x.view(), false);
        assert_eq!(t.scales, vec![100.0 / 127.0]);
        assert_eq!(t.codes.row(1).to_vec(), vec![0, 0]);
        let k = absmax_int8(&x.view(), true);
        assert_eq!(k.codes.row(1).to_vec(), vec![85, -127]);
        assert_eq!(k.codes[(0, 0)], 127);
        // an all-zero row has the clamped scale 1e-5 / 127 and codes 0
        let z = absmax_int8(&array![[0.0f32, 0.0]].view(), true);
        assert_eq!(z.scales, vec![1e-5 / 127.0]);
        assert_eq!(z.utilization(), vec![0.0]);
        assert_eq!(k.utilization()[1], 212.0 / 254.0);
        assert_eq!(
            "token".parse::<ActGranularity>(),
            Ok(ActGranularity::PerToken)
        );
        assert!("row".parse::<ActGranularity>().is_err());
    }

    #[test]
    fn w8a8_error_is_zero_only_when_nothing_rounds() {
        let w = array![[1.0f32, -1.0]];
        let x = array![[127.0f32, 0.0], [0.0, 127.0]];
        let r = w8a8(&w.view(), &x.view(), ActGranularity::PerTensor).unwrap();
        assert_eq!(r.error.overall.output_mse, 0.0);
        let x = array![[127.0f32, 0.3]];
        let r = w8a8(&w.view(), &x.view(), ActGranularity::PerTensor).unwrap();
        // 0.3 → code 0: the output loses 0.3 · -1
        assert!((r.error.overall.output_mse - 0.09).abs() < 1e-6);
        let bad = array![[1.0f32]];
        assert!(w8a8(&w.view(), &bad.view(), ActGranularity::PerToken).is_err());
    }
}
