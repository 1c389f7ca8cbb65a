//! `--method`, `--act-quant`, `--smoothquant` and GPTQ's options: the methods smarter than
//! rounding that `report` runs on the matrix with its activations (`core::method::run`).

use clap::Args;

use crate::core::Config;
use crate::core::importance::Tokens;
use crate::core::method::act_quant::ActGranularity;
use crate::core::method::run::{Alpha, Method, Methods, Request, Scheme, run};

/// Flags that ask for methods beyond rounding.
#[derive(Debug, Args, Default, Clone)]
pub struct MethodArgs {
    /// Weight methods to compare by the layer's output error, comma-separated: rtn (round to
    /// nearest), awq (llm-awq's scale search), gptq (IST-DASLab's GPTQ). They quantize with
    /// --bits, per group with --granularity group:G (else per output channel), symmetric with
    /// --scheme symmetric (AWQ is asymmetric only). Needs --activations (or `built-in`).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parsed::<Method>)]
    pub method: Vec<Method>,
    /// Quantize the activations too, to int8 (W8A8, as SmoothQuant's fake_quant.py): one
    /// scale per-tensor or per-token (both: per-tensor,per-token). Needs --activations.
    #[arg(long, value_name = "GRANULARITY", value_delimiter = ',', value_parser = parsed::<ActGranularity>)]
    pub act_quant: Vec<ActGranularity>,
    /// SmoothQuant before W8A8: migration strength α from 0 to 1, or best (the α of 0, 0.05,
    /// ..., 1 with the least output error). Without --act-quant, W8A8 both per tensor and per
    /// token.
    #[arg(long, value_name = "ALPHA|best", value_parser = parsed::<Alpha>)]
    pub smoothquant: Option<Alpha>,
    /// GPTQ's lazy block: columns whose updates are batched (the reference's blocksize).
    #[arg(long, value_name = "COLUMNS", default_value_t = 128, value_parser = clap::value_parser!(u32).range(1..))]
    pub gptq_block: u32,
    /// GPTQ's dampening: this fraction of H's mean diagonal added to its diagonal (the
    /// reference's percdamp).
    #[arg(long, value_name = "FRACTION", default_value_t = 0.01, value_parser = damp)]
    pub gptq_damp: f32,
    /// GPTQ rounds the columns in order of their activations' energy, largest first (the
    /// reference's --act-order).
    #[arg(long)]
    pub act_order: bool,
}

/// A flag value parsed by the type's `FromStr`.
fn parsed<T>(s: &str) -> Result<T, String>
where
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    s.parse::<T>().map_err(|e| e.to_string())
}

/// A dampening fraction: finite and not negative.
fn damp(s: &str) -> Result<f32, String> {
    match s.trim().parse::<f32>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!(
            "\"{s}\": GPTQ's dampening is a fraction of H's mean diagonal, 0 or more (0.01 is the reference's)"
        )),
    }
}

impl MethodArgs {
    /// No method asked.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.method.is_empty() && self.act_quant.is_empty() && self.smoothquant.is_none()
    }

    /// What to run under `config`: each method once, in the order given.
    #[must_use]
    pub fn request(&self, config: &Config) -> Request {
        let mut methods = Vec::new();
        for &m in &self.method {
            if !methods.contains(&m) {
                methods.push(m);
            }
        }
        let mut act_quant = Vec::new();
        for &g in &self.act_quant {
            if !act_quant.contains(&g) {
                act_quant.push(g);
            }
        }
        if act_quant.is_empty() && self.smoothquant.is_some() {
            act_quant = ActGranularity::ALL.to_vec();
        }
        Request {
            methods,
            scheme: Scheme::of(config),
            gptq_block: self.gptq_block as usize,
            gptq_damp: self.gptq_damp,
            act_order: self.act_order,
            act_quant,
            smoothquant: self.smoothquant,
            explain: None,
        }
    }

    /// The methods' results on `matrix` under `config` with `tokens`, when any was asked,
    /// with their worked arithmetic when `explain` (GPTQ following row 0); a message for bad
    /// input. Notes (a singular H, dead columns) go to standard error.
    pub fn run(
        &self,
        config: &Config,
        matrix: &crate::core::Matrix,
        tokens: Option<&dyn Tokens>,
        explain: bool,
    ) -> Result<Option<Methods>, String> {
        if self.is_empty() {
            return Ok(None);
        }
        let Some(tokens) = tokens else {
            return Err(self.needs_activations());
        };
        let x = crate::core::method::tokens::read_first(tokens, usize::MAX)
            .map_err(|e| e.to_string())?;
        let request = Request {
            explain: explain.then_some(0),
            ..self.request(config)
        };
        let methods = run(&matrix.values(), &x.view(), &request, &mut |_, _| true)
            .map_err(|e| format!("{}: {e}", self.flag()))?;
        for r in &methods.weights {
            if let Some(note) = r.gptq.as_ref().and_then(|g| g.note.as_ref()) {
                super::note(&format!("gptq: {note}"));
            }
        }
        Ok(Some(methods))
    }

    /// Adds the entries of `methods` (run on `matrix` with `tokens`) to the format ladder:
    /// each weight method beside round to nearest of its quantizer.
    pub fn add_entries(
        &self,
        ladder: &mut crate::core::format_ladder::FormatLadder,
        methods: Option<&Methods>,
        matrix: &crate::core::Matrix,
        tokens: Option<&dyn Tokens>,
    ) {
        if let Some(m) = methods {
            let name = tokens.map(Tokens::name);
            let entries = crate::core::method::ladder::entries(
                m,
                matrix.shape(),
                name.as_deref(),
                self.act_order,
            );
            crate::core::format_ladder::add_method_entries(ladder, entries);
        }
    }

    /// The message for methods asked without activations.
    #[must_use]
    pub fn needs_activations(&self) -> String {
        format!(
            "{} compares by the layer's output error, so it needs activations: \
             --activations FILE (.npy, FILE:TENSOR, text) or --activations built-in",
            self.flag()
        )
    }

    /// The first flag given, to name in a message.
    fn flag(&self) -> String {
        if !self.method.is_empty() {
            let names: Vec<&str> = self.method.iter().map(|m| m.name()).collect();
            format!("--method {}", names.join(","))
        } else if self.smoothquant.is_some() {
            "--smoothquant".to_string()
        } else {
            "--act-quant".to_string()
        }
    }
}
