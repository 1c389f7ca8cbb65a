//! The methods' entries of the format ladder (`core::format_ladder`): each weight method that
//! ran on a matrix becomes an entry named after its scheme (`int4 g128 gptq`, `int4 channel
//! awq`), beside round to nearest with the same quantizer (`int4 g128 rtn` for GPTQ's
//! `Quantizer`, `int4 g128 awq ratio 0` for llm-awq's `pseudo_quantize_tensor`), with the
//! weights' errors, the output error on the activations the method ran on, and the cost of
//! the layout GPTQ and AWQ checkpoints store: the codes, and per group an f16 scale and a
//! zero point of the codes' width (`scales`, packed `qzeros`), plus GPTQ's int32 `g_idx` per
//! input column when act-order reorders the groups.

use serde::Serialize;

use super::LayerError;
use super::run::{Method, Methods, Scheme};
use crate::core::format_ladder::{CostPart, Entry, Measured};
use crate::core::importance::{OutputErrors, OutputMetrics};
use crate::core::report::{ErrorSums, Metrics};

/// The weights' own error, `Ŵ` against `W`: over the matrix, per row, and the rows that
/// collapsed (not constant, reconstructed to one value).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WeightError {
    /// Over the matrix.
    pub overall: Metrics,
    /// One per row.
    pub channels: Vec<Metrics>,
    /// Rows that are not constant but reconstruct to one value.
    pub collapsed_channels: usize,
}

impl WeightError {
    /// The error of `w_hat` against `w` (the same shape), summed as the analysis sums it.
    #[must_use]
    pub fn of(w: &ndarray::ArrayView2<'_, f32>, w_hat: &ndarray::ArrayView2<'_, f32>) -> Self {
        let mut all = ErrorSums::default();
        let mut channels = Vec::with_capacity(w.nrows());
        let mut collapsed_channels = 0;
        for (row, hat) in w.rows().into_iter().zip(w_hat.rows()) {
            let mut sums = ErrorSums::default();
            for (&x, &y) in row.iter().zip(hat) {
                sums.push(x, y);
            }
            all.merge(&sums);
            channels.push(sums.metrics());
            let first = row.first().copied().unwrap_or(0.0);
            let y0 = hat.first().copied().unwrap_or(0.0);
            if !row.iter().all(|&v| v == first) && hat.iter().all(|&v| v == y0) {
                collapsed_channels += 1;
            }
        }
        Self {
            overall: all.metrics(),
            channels,
            collapsed_channels,
        }
    }
}

/// The format ladder's entries of `methods` (run on a matrix of `shape` with `activations`,
/// named for the output errors): each weight method, and round to nearest with its quantizer
/// when the method is not itself round to nearest (once).
#[must_use]
pub fn entries(
    methods: &Methods,
    shape: (usize, usize),
    activations: Option<&str>,
    act_order: bool,
) -> Vec<Entry> {
    let s = methods.scheme;
    let short = s.short();
    let rtn_name = format!("{short} rtn");
    let has_rtn = methods.weight(Method::Rtn).is_some();
    let output = |e: &LayerError| output_errors(e, methods.tokens, activations);
    let mut out = Vec::new();
    for r in &methods.weights {
        let name = format!("{short} {}", r.method);
        let symmetry = if s.sym { "symmetric" } else { "asymmetric" };
        let (about, baseline) = match r.method {
            Method::Rtn => (
                format!(
                    "round to nearest with GPTQ's Quantizer (min-max with 0 in the range, {symmetry}), the baseline of GPTQ"
                ),
                None,
            ),
            Method::Gptq => (
                format!(
                    "GPTQ (IST-DASLab's fasterquant{}) with its Quantizer, {symmetry}; round to nearest with the same quantizer: {rtn_name}",
                    if act_order { ", act-order" } else { "" }
                ),
                (!has_rtn).then(|| {
                    (
                        rtn_name.clone(),
                        format!(
                            "round to nearest with GPTQ's Quantizer (min-max with 0 in the range, {symmetry}), the baseline of {name}"
                        ),
                    )
                }),
            ),
            Method::Awq => (
                format!(
                    "AWQ (llm-awq's scale search at ratio {}) with pseudo_quantize_tensor, asymmetric; round to nearest with the same quantizer: {short} awq ratio 0",
                    r.awq_ratio.unwrap_or(0.0)
                ),
                Some((
                    format!("{short} awq ratio 0"),
                    format!(
                        "round to nearest with llm-awq's pseudo_quantize_tensor (min-max, asymmetric): AWQ's ratio 0, the baseline of {name}"
                    ),
                )),
            ),
        };
        let order = act_order && r.method == Method::Gptq;
        out.push(entry(
            &name,
            about,
            s,
            shape,
            order,
            &r.weight_error,
            output(&r.error),
        ));
        if let Some((bname, babout)) = baseline {
            out.push(entry(
                &bname,
                babout,
                s,
                shape,
                false,
                &r.rtn_weight_error,
                output(&r.rtn),
            ));
        }
    }
    out
}

/// The output errors of a method's [`LayerError`], in the format ladder's terms.
fn output_errors(e: &LayerError, tokens: usize, activations: Option<&str>) -> OutputErrors {
    let metrics = |o: &super::OutputError| OutputMetrics {
        output_mse: Some(o.output_mse),
        output_sqnr_db: o.output_sqnr_db,
        imatrix_mse: None,
    };
    OutputErrors {
        channels: e.channels.iter().map(metrics).collect(),
        overall: metrics(&e.overall),
        tokens: Some(tokens),
        columns_at_risk: Vec::new(),
        columns_at_risk_total: 0,
        importance: None,
        importance_source: None,
        activations: activations.map(str::to_string),
    }
}

/// One entry: its cost from the scheme, its measurement from the method's result.
fn entry(
    name: &str,
    about: String,
    s: Scheme,
    (rows, cols): (usize, usize),
    act_order: bool,
    weights: &WeightError,
    output: OutputErrors,
) -> Entry {
    let n = (rows * cols).max(1) as f64;
    let group = s.group.unwrap_or(cols).max(1);
    let groups = rows * cols.div_ceil(group);
    let meta = 16 + u64::from(s.bits);
    let mut parts = vec![
        CostPart {
            name: format!("payload: {}-bit codes", s.bits),
            bits_per_weight: f64::from(s.bits),
        },
        CostPart {
            name: format!(
                "group scale and zero point: f16 + {}-bit x {groups} group{}",
                s.bits,
                if groups == 1 { "" } else { "s" }
            ),
            bits_per_weight: groups as f64 * meta as f64 / n,
        },
    ];
    let mut bits = (rows * cols) as u64 * u64::from(s.bits) + groups as u64 * meta;
    if act_order && s.group.is_some() {
        parts.push(CostPart {
            name: format!("g_idx: int32 x {cols} columns"),
            bits_per_weight: 32.0 * cols as f64 / n,
        });
        bits += 32 * cols as u64;
    }
    Entry {
        name: name.to_string(),
        integer: true,
        about,
        bits_per_weight: Some(bits as f64 / n),
        total_bytes: Some(bits.div_ceil(8)),
        parts,
        result: Ok(Measured {
            overall: weights.overall,
            channels: weights.channels.clone(),
            collapsed_channels: weights.collapsed_channels,
            output: Some(output),
            weighted: false,
        }),
        pareto: false,
        pareto_output: false,
        active: false,
        fallback: None,
    }
}
