//! The `methods` key (with `--method`, `--act-quant` or `--smoothquant`):
//!
//! ```text
//! "methods": {"tokens", "scheme": {"bits", "group": columns or null, "sym"},
//!   "weights": [ one per method asked:
//!     {"method": "rtn" | "awq" | "gptq", "quantizer": in words,
//!      "output_mse", "output_sqnr_db", "rtn_output_mse", "rtn_output_sqnr_db" (round to
//!      nearest with the same quantizer), "awq_ratio": AWQ's chosen ratio or null,
//!      "gptq_dead_columns": [columns] or null, "gptq_damp": what the dampening added or
//!      null, "gptq_singular": fewer tokens than columns, or null, "gptq_note": or null,
//!      "channels": [{"output_mse", "output_sqnr_db", "rtn_output_mse",
//!      "rtn_output_sqnr_db"}, one per row]} ]
//!   "w8a8": [ one per activation granularity asked:
//!     {"activations": "tensor" | "token", "output_mse", "output_sqnr_db",
//!      "activations_only_output_mse", "smoothquant_alpha": or null, "smoothquant_best":
//!      the α of least error, or null, "smoothquant_output_mse", "smoothquant_output_sqnr_db"
//!      (null without SmoothQuant), "channels": [{"output_mse", "output_sqnr_db",
//!      "smoothquant_output_mse", "smoothquant_output_sqnr_db"}, one per row]} ]}
//! ```
//!
//! An SQNR is null when the error or the signal is 0.

use serde::Serialize;

use super::Num;
use crate::core::method::run::{Methods, Scheme, W8A8Result, WeightResult};
use crate::core::method::{LayerError, OutputError};

/// `methods` as its JSON value.
#[derive(Serialize)]
pub(super) struct MethodsView<'a> {
    tokens: usize,
    scheme: &'a Scheme,
    weights: Vec<WeightView<'a>>,
    w8a8: Vec<W8A8View>,
}

impl<'a> MethodsView<'a> {
    pub(super) fn new(m: &'a Methods) -> Self {
        Self {
            tokens: m.tokens,
            scheme: &m.scheme,
            weights: m
                .weights
                .iter()
                .map(|r| WeightView::new(r, &m.scheme))
                .collect(),
            w8a8: m.w8a8.iter().map(W8A8View::new).collect(),
        }
    }
}

#[derive(Serialize)]
struct WeightView<'a> {
    method: &'static str,
    quantizer: String,
    output_mse: Num,
    output_sqnr_db: Option<Num>,
    rtn_output_mse: Num,
    rtn_output_sqnr_db: Option<Num>,
    awq_ratio: Option<Num>,
    gptq_dead_columns: Option<&'a [usize]>,
    gptq_damp: Option<Num>,
    gptq_singular: Option<bool>,
    gptq_note: Option<&'a str>,
    channels: Vec<WeightChannel>,
}

/// A channel's error beside round to nearest's.
#[derive(Serialize)]
struct WeightChannel {
    output_mse: Num,
    output_sqnr_db: Option<Num>,
    rtn_output_mse: Num,
    rtn_output_sqnr_db: Option<Num>,
}

/// A channel's W8A8 error, and after smoothing.
#[derive(Serialize)]
struct W8A8Channel {
    output_mse: Num,
    output_sqnr_db: Option<Num>,
    smoothquant_output_mse: Option<Num>,
    smoothquant_output_sqnr_db: Option<Num>,
}

fn sq(e: &OutputError) -> Option<Num> {
    e.output_sqnr_db.map(Num)
}

impl<'a> WeightView<'a> {
    fn new(r: &'a WeightResult, scheme: &Scheme) -> Self {
        let channels = r
            .error
            .channels
            .iter()
            .zip(&r.rtn.channels)
            .map(|(e, n)| WeightChannel {
                output_mse: Num(e.output_mse),
                output_sqnr_db: sq(e),
                rtn_output_mse: Num(n.output_mse),
                rtn_output_sqnr_db: sq(n),
            })
            .collect();
        let g = r.gptq.as_ref();
        Self {
            method: r.method.name(),
            quantizer: crate::io::export::doc::quantizer(r.method, scheme),
            output_mse: Num(r.error.overall.output_mse),
            output_sqnr_db: sq(&r.error.overall),
            rtn_output_mse: Num(r.rtn.overall.output_mse),
            rtn_output_sqnr_db: sq(&r.rtn.overall),
            awq_ratio: r.awq_ratio.map(Num),
            gptq_dead_columns: g.map(|g| g.dead_columns.as_slice()),
            gptq_damp: g.map(|g| Num(f64::from(g.damp))),
            gptq_singular: g.map(|g| g.singular),
            gptq_note: g.and_then(|g| g.note.as_deref()),
            channels,
        }
    }
}

#[derive(Serialize)]
struct W8A8View {
    activations: &'static str,
    output_mse: Num,
    output_sqnr_db: Option<Num>,
    activations_only_output_mse: Num,
    smoothquant_alpha: Option<Num>,
    smoothquant_best: Option<bool>,
    smoothquant_output_mse: Option<Num>,
    smoothquant_output_sqnr_db: Option<Num>,
    channels: Vec<W8A8Channel>,
}

impl W8A8View {
    fn new(r: &W8A8Result) -> Self {
        let s = r.smoothquant.as_ref();
        let smoothed: Option<&LayerError> = s.map(|s| &s.error);
        let channels = r
            .error
            .channels
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let c = smoothed.and_then(|l| l.channels.get(i));
                W8A8Channel {
                    output_mse: Num(e.output_mse),
                    output_sqnr_db: sq(e),
                    smoothquant_output_mse: c.map(|c| Num(c.output_mse)),
                    smoothquant_output_sqnr_db: c.and_then(sq),
                }
            })
            .collect();
        Self {
            activations: r.granularity.name(),
            output_mse: Num(r.error.overall.output_mse),
            output_sqnr_db: sq(&r.error.overall),
            activations_only_output_mse: Num(r.activations_only.overall.output_mse),
            smoothquant_alpha: s.map(|s| Num(s.alpha)),
            smoothquant_best: s.map(|s| s.best),
            smoothquant_output_mse: s.map(|s| Num(s.error.overall.output_mse)),
            smoothquant_output_sqnr_db: s.and_then(|s| sq(&s.error.overall)),
            channels,
        }
    }
}
