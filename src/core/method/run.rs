//! The methods a user asks for, run on one layer and gathered into one serialisable
//! [`Methods`] result that `report`'s exporters and the explorer's panes read.
//!
//! The weight methods share one quantizer setting, [`Scheme`], taken from the report's
//! configuration: its bits, its group size (`group:G`; any other granularity is one group per
//! output channel, the references having no per-tensor mode) and, for round to nearest and
//! GPTQ, whether it is symmetric. Each is compared with round to nearest of its own
//! reference's quantizer:
//!
//! | method | quantizer | round to nearest beside it |
//! |---|---|---|
//! | `rtn` | GPTQ's `Quantizer` (min-max, 0 in the range), symmetric as the scheme | itself |
//! | `awq` | llm-awq's `pseudo_quantize_tensor` (asymmetric min-max, always) | its ratio 0 |
//! | `gptq` | GPTQ's `Quantizer`, symmetric as the scheme | the same `Quantizer` on `W` |
//!
//! W8A8 ([`act_quant`]) is int8 on both sides whatever the scheme, the activations per
//! tensor or per token, and with SmoothQuant at a chosen α or the α of least error.

use ndarray::ArrayView2;
use serde::Serialize;

use super::act_quant::{self, ActGranularity};
use super::awq::{self, AwqConfig};
use super::gptq::{self, GptqConfig};
use super::ladder::WeightError;
use super::worked::{self, Worked};
use super::{LayerError, MethodError, Progress, check_inputs, smoothquant};
use crate::core::config::{Config, Granularity, Scheme as Symmetry};

/// A weight method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Round to nearest.
    Rtn,
    /// AWQ's scale search.
    Awq,
    /// GPTQ.
    Gptq,
}

impl Method {
    /// Every method, in the order they are listed.
    pub const ALL: [Self; 3] = [Self::Rtn, Self::Awq, Self::Gptq];

    /// The name on the command line, in exports' keys and in the format ladder.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Rtn => "rtn",
            Self::Awq => "awq",
            Self::Gptq => "gptq",
        }
    }

    /// What it is, in words.
    #[must_use]
    pub fn title(self) -> &'static str {
        match self {
            Self::Rtn => "round to nearest",
            Self::Awq => "AWQ",
            Self::Gptq => "GPTQ",
        }
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Method {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "rtn" | "round" | "nearest" | "round-to-nearest" => Ok(Self::Rtn),
            "awq" => Ok(Self::Awq),
            "gptq" => Ok(Self::Gptq),
            other => Err(format!(
                "unknown method \"{other}\" (expected rtn, awq or gptq)"
            )),
        }
    }
}

/// SmoothQuant's migration strength: a value in [0, 1], or the α of least W8A8 error.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Alpha {
    /// This α.
    Fixed(f64),
    /// The α of the grid 0, 0.05, …, 1 with the least W8A8 output MSE.
    Best,
}

impl std::fmt::Display for Alpha {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Fixed(a) => write!(f, "{a}"),
            Self::Best => f.write_str("best"),
        }
    }
}

impl std::str::FromStr for Alpha {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("best") {
            return Ok(Self::Best);
        }
        match t.parse::<f64>() {
            Ok(a) if (0.0..=1.0).contains(&a) => Ok(Self::Fixed(a)),
            _ => Err(format!(
                "α \"{t}\": SmoothQuant's migration strength is a number from 0 to 1, or best"
            )),
        }
    }
}

/// The weight quantizer the methods share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Scheme {
    /// Bits per weight, 1 to 8.
    pub bits: u32,
    /// Columns per group; `None` for one group per output channel.
    pub group: Option<usize>,
    /// Symmetric (round to nearest and GPTQ; AWQ's quantizer is asymmetric only).
    pub sym: bool,
}

impl Scheme {
    /// The scheme of a report's configuration: its bits, its group size, its symmetry.
    #[must_use]
    pub fn of(config: &Config) -> Self {
        Self {
            bits: u32::from(config.bits),
            group: match config.granularity {
                Granularity::Group(g) => Some(g),
                Granularity::Tensor | Granularity::Channel => None,
            },
            sym: config.scheme == Symmetry::Symmetric,
        }
    }

    /// `int4 g128`, `int3 channel`: the scheme's short name.
    #[must_use]
    pub fn short(&self) -> String {
        match self.group {
            Some(g) => format!("int{} g{g}", self.bits),
            None => format!("int{} channel", self.bits),
        }
    }
}

/// What to run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Request {
    /// The weight methods, in the order asked (each once).
    pub methods: Vec<Method>,
    /// The weight quantizer.
    pub scheme: Scheme,
    /// GPTQ's columns per lazy block (`blocksize`, 128).
    pub gptq_block: usize,
    /// GPTQ's dampening, a fraction of the mean diagonal (`percdamp`, 0.01).
    pub gptq_damp: f32,
    /// GPTQ's act-order (`--act-order`).
    pub act_order: bool,
    /// W8A8 with the activations quantized so (none: no W8A8).
    pub act_quant: Vec<ActGranularity>,
    /// SmoothQuant before W8A8.
    pub smoothquant: Option<Alpha>,
    /// Keep the worked arithmetic, following this row (an output channel) in GPTQ.
    pub explain: Option<usize>,
}

impl Default for Request {
    /// Nothing to run, GPTQ's reference settings, 4 bits per channel.
    fn default() -> Self {
        Self {
            methods: Vec::new(),
            scheme: Scheme {
                bits: 4,
                group: None,
                sym: false,
            },
            gptq_block: 128,
            gptq_damp: 0.01,
            act_order: false,
            act_quant: Vec::new(),
            smoothquant: None,
            explain: None,
        }
    }
}

impl Request {
    /// Nothing asked.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.methods.is_empty() && self.act_quant.is_empty()
    }

    /// GPTQ's settings.
    #[must_use]
    pub fn gptq_config(&self) -> GptqConfig {
        GptqConfig {
            bits: self.scheme.bits,
            sym: self.scheme.sym,
            group: self.scheme.group,
            act_order: self.act_order,
            block: self.gptq_block,
            percdamp: self.gptq_damp,
        }
    }

    /// AWQ's settings.
    #[must_use]
    pub fn awq_config(&self) -> AwqConfig {
        AwqConfig {
            bits: self.scheme.bits,
            group: self.scheme.group,
        }
    }

    /// The steps [`run`] reports progress over, for `cols` input columns.
    fn steps(&self, cols: usize) -> usize {
        let weights: usize = self
            .methods
            .iter()
            .map(|m| match m {
                Method::Rtn => 1,
                Method::Awq => awq::GRID,
                Method::Gptq => cols,
            })
            .sum();
        let smooth = match self.smoothquant {
            Some(Alpha::Best) if !self.act_quant.is_empty() => smoothquant::ALPHA_STEPS + 1,
            _ => 0,
        };
        weights + smooth + self.act_quant.len()
    }
}

/// What GPTQ did to `H` on the way.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GptqNote {
    /// Input columns whose activations are all 0: `H_jj` set to 1, their weights to 0.
    pub dead_columns: Vec<usize>,
    /// What the dampening added to the diagonal.
    pub damp: f32,
    /// Fewer tokens than columns: `H` is singular before the dampening.
    pub singular: bool,
    /// The sentence to show, when there is one.
    pub note: Option<String>,
}

/// One weight method's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WeightResult {
    /// The method.
    pub method: Method,
    /// Its output error.
    pub error: LayerError,
    /// Round to nearest's, with the same quantizer.
    pub rtn: LayerError,
    /// AWQ's chosen ratio.
    pub awq_ratio: Option<f64>,
    /// GPTQ's story of `H`.
    pub gptq: Option<GptqNote>,
    /// The weights' own error (for the format ladder's entries; not exported).
    #[serde(skip)]
    pub weight_error: WeightError,
    /// Round to nearest's weights' own error.
    #[serde(skip)]
    pub rtn_weight_error: WeightError,
}

/// SmoothQuant before a W8A8 layer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Smoothed {
    /// The α used.
    pub alpha: f64,
    /// It is the α of least error on the grid (`best`).
    pub best: bool,
    /// The W8A8 error after smoothing, against the float layer.
    pub error: LayerError,
}

/// One W8A8 layer's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct W8A8Result {
    /// The activations' granularity.
    pub granularity: ActGranularity,
    /// `X̂ Ŵᵀ` against `X Wᵀ`, no smoothing.
    pub error: LayerError,
    /// The activations' share: `X̂ Wᵀ` against `X Wᵀ`.
    pub activations_only: LayerError,
    /// The weights' share, round to nearest of the weights alone: `X Ŵᵀ` against `X Wᵀ`
    /// (for the explorer's line; not exported).
    #[serde(skip)]
    pub weights_only: LayerError,
    /// With SmoothQuant, when asked.
    pub smoothquant: Option<Smoothed>,
}

/// Everything [`run`] found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Methods {
    /// Tokens of the activations the methods ran on.
    pub tokens: usize,
    /// The tokens the activations hold, when the methods ran on only the first
    /// [`Methods::tokens`] of them (the explorer's bound, [`super::tokens::budget`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens_held: Option<usize>,
    /// The weight quantizer.
    pub scheme: Scheme,
    /// One per weight method asked, in order.
    pub weights: Vec<WeightResult>,
    /// One per activation granularity asked.
    pub w8a8: Vec<W8A8Result>,
    /// The worked arithmetic, when asked ([`Request::explain`]).
    pub worked: Option<Worked>,
}

impl Methods {
    /// The result of `method`, when it ran.
    #[must_use]
    pub fn weight(&self, method: Method) -> Option<&WeightResult> {
        self.weights.iter().find(|r| r.method == method)
    }
}

/// Runs `request` on `w` (`[out, in]`) with activations `x` (`[tokens, in]`); `progress` is
/// told the steps done over all of them.
pub fn run(
    w: &ArrayView2<'_, f32>,
    x: &ArrayView2<'_, f32>,
    request: &Request,
    progress: Progress<'_>,
) -> Result<Methods, MethodError> {
    check_inputs(w, x)?;
    let total = request.steps(w.ncols());
    let mut done = 0;
    let mut weights = Vec::new();
    let mut explained = request.explain.map(|_| Worked {
        awq: None,
        gptq: None,
    });
    for &method in &request.methods {
        let offset = done;
        let mut inner = |k: usize, _: usize| progress(offset + k, total);
        let result = match method {
            Method::Rtn => {
                let c = request.gptq_config();
                check_bits(c.bits)?;
                let w_hat = gptq::round_to_nearest(w, c);
                let error = LayerError::of(x, w, &w_hat.view());
                let weight_error = WeightError::of(w, &w_hat.view());
                if !inner(1, 1) {
                    return Err(MethodError::Cancelled);
                }
                done += 1;
                WeightResult {
                    method,
                    rtn: error.clone(),
                    error,
                    awq_ratio: None,
                    gptq: None,
                    rtn_weight_error: weight_error.clone(),
                    weight_error,
                }
            }
            Method::Awq => {
                let a = awq::search(w, x, request.awq_config(), &mut inner)?;
                done += awq::GRID;
                if let Some(e) = &mut explained {
                    e.awq = Some(worked::awq(&a));
                }
                let plain = awq::pseudo_quantize(w, request.awq_config()).values;
                WeightResult {
                    method,
                    awq_ratio: Some(a.ratios[a.best].ratio),
                    weight_error: WeightError::of(w, &a.w_hat.view()),
                    rtn_weight_error: WeightError::of(w, &plain.view()),
                    error: a.error,
                    rtn: a.error_rtn,
                    gptq: None,
                }
            }
            Method::Gptq => {
                let trace = request
                    .explain
                    .map(|row| (row.min(w.nrows() - 1), live_column(x)));
                let (g, push) = gptq::gptq(w, x, request.gptq_config(), trace, &mut inner)?;
                done += w.ncols();
                if let Some(e) = &mut explained {
                    e.gptq = push;
                }
                let plain = gptq::round_to_nearest(w, request.gptq_config());
                WeightResult {
                    method,
                    weight_error: WeightError::of(w, &g.w_hat.view()),
                    rtn_weight_error: WeightError::of(w, &plain.view()),
                    gptq: Some(GptqNote {
                        note: g.hessian.note(w.ncols()),
                        dead_columns: g.hessian.dead_columns,
                        damp: g.hessian.damp,
                        singular: g.hessian.singular,
                    }),
                    error: g.error,
                    rtn: g.error_rtn,
                    awq_ratio: None,
                }
            }
        };
        weights.push(result);
    }
    let w8a8 = w8a8_results(w, x, request, &mut |k, _| progress(done + k, total))?;
    Ok(Methods {
        tokens: x.nrows(),
        tokens_held: None,
        scheme: request.scheme,
        weights,
        w8a8,
        worked: explained,
    })
}

/// The first input column whose activations are not all 0 (a dead column's weights are
/// set to 0, with no error to push); the first column when all are.
fn live_column(x: &ArrayView2<'_, f32>) -> usize {
    (0..x.ncols())
        .find(|&j| x.column(j).iter().any(|&v| v != 0.0))
        .unwrap_or(0)
}

fn check_bits(bits: u32) -> Result<(), MethodError> {
    if (1..=8).contains(&bits) {
        Ok(())
    } else {
        Err(MethodError::Bits { bits })
    }
}

/// The W8A8 layers asked for, smoothed when asked.
fn w8a8_results(
    w: &ArrayView2<'_, f32>,
    x: &ArrayView2<'_, f32>,
    request: &Request,
    progress: Progress<'_>,
) -> Result<Vec<W8A8Result>, MethodError> {
    if request.act_quant.is_empty() {
        return Ok(Vec::new());
    }
    let mut done = 0;
    let sweep = match request.smoothquant {
        Some(Alpha::Best) => {
            let s = smoothquant::sweep(w, x, progress)?;
            done = smoothquant::ALPHA_STEPS + 1;
            Some(s)
        }
        _ => None,
    };
    let mut out = Vec::new();
    for &granularity in &request.act_quant {
        let plain = act_quant::w8a8(w, x, granularity)?;
        let smoothed = match (request.smoothquant, &sweep) {
            (Some(Alpha::Fixed(alpha)), _) => {
                let step = smoothquant::at_alpha(w, x, alpha)?;
                Some(Smoothed {
                    alpha,
                    best: false,
                    error: pick(&step, granularity).clone(),
                })
            }
            (Some(Alpha::Best), Some(s)) => {
                let j = match granularity {
                    ActGranularity::PerTensor => s.best_per_tensor,
                    ActGranularity::PerToken => s.best_per_token,
                };
                Some(Smoothed {
                    alpha: s.steps[j].alpha,
                    best: true,
                    error: pick(&s.steps[j], granularity).clone(),
                })
            }
            _ => None,
        };
        done += 1;
        if !progress(done, done) {
            return Err(MethodError::Cancelled);
        }
        out.push(W8A8Result {
            granularity,
            error: plain.error,
            activations_only: plain.error_activations_only,
            weights_only: plain.error_weights_only,
            smoothquant: smoothed,
        });
    }
    Ok(out)
}

fn pick(step: &smoothquant::AlphaStep, g: ActGranularity) -> &LayerError {
    match g {
        ActGranularity::PerTensor => &step.per_tensor,
        ActGranularity::PerToken => &step.per_token,
    }
}
