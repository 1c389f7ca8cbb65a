//! The "Methods" section (with `--method`, `--act-quant` or `--smoothquant`): each method's
//! output error beside round to nearest with the same quantizer, over the layer and per
//! channel, AWQ's chosen ratio, SmoothQuant's α and GPTQ's note on `H`.
//!
//! ```text
//! Methods   the scheme and the tokens
//!           method | quantizer | output MSE | output SQNR dB | RTN output MSE | RTN SQNR dB | chosen
//!           W8A8: activations | output MSE | SQNR | activations' share | α | smoothed MSE | SQNR
//!           per channel: each method's output MSE (and its RTN's), each W8A8's
//!           GPTQ's note on H (a singular H, dead columns)
//! ```

use super::{Align, Grid, Listing, Part, Section, channel_cells, channel_columns, has_labels};
use crate::core::Report;
use crate::core::method::OutputError;
use crate::core::method::run::{Method, Methods, Scheme};
use crate::core::method::worked::Worked;
use crate::io::export::num::{error, sig, sqnr};

/// What each weight method quantizes with, in words.
pub(crate) fn quantizer(method: Method, scheme: &Scheme) -> String {
    let per = match scheme.group {
        Some(g) => format!("groups of {g}"),
        None => "per channel".to_string(),
    };
    let sym = if scheme.sym {
        "symmetric"
    } else {
        "asymmetric"
    };
    match method {
        Method::Awq => format!(
            "{} bits asymmetric {per} (pseudo_quantize_tensor)",
            scheme.bits
        ),
        Method::Rtn | Method::Gptq => {
            format!("{} bits {sym} {per} (GPTQ's Quantizer)", scheme.bits)
        }
    }
}

fn mse(e: &OutputError) -> String {
    error(e.output_mse)
}

/// The Methods section.
pub(super) fn section(methods: &Methods, report: &Report, listing: &Listing<'_>) -> Section {
    let mut parts = vec![Part::Text(format!(
        "Each method's error in the layer's output on {} tokens, beside round to nearest \
         with the same quantizer (output MSE = ‖X (w − ŵ)‖² / T over the layer).",
        methods.tokens
    ))];
    if !methods.weights.is_empty() {
        let mut grid = Grid::new(&[
            ("method", Align::Left),
            ("quantizer", Align::Left),
            ("output MSE", Align::Right),
            ("output SQNR dB", Align::Right),
            ("RTN output MSE", Align::Right),
            ("RTN SQNR dB", Align::Right),
            ("chosen", Align::Left),
        ]);
        for r in &methods.weights {
            let chosen = match (r.awq_ratio, &r.gptq) {
                (Some(ratio), _) => format!("ratio {}", sig(ratio, 3)),
                (None, Some(g)) if !g.dead_columns.is_empty() => {
                    format!("{} dead columns", g.dead_columns.len())
                }
                _ => "-".to_string(),
            };
            grid.rows.push(vec![
                r.method.name().to_string(),
                quantizer(r.method, &methods.scheme),
                mse(&r.error.overall),
                sqnr(r.error.overall.output_sqnr_db),
                mse(&r.rtn.overall),
                sqnr(r.rtn.overall.output_sqnr_db),
                chosen,
            ]);
        }
        parts.push(Part::Grid(grid));
        let worse: Vec<&str> = methods
            .weights
            .iter()
            .filter(|r| {
                r.method != Method::Rtn && r.error.overall.output_mse > r.rtn.overall.output_mse
            })
            .map(|r| r.method.name())
            .collect();
        if !worse.is_empty() {
            parts.push(Part::Text(format!(
                "{} did worse than round to nearest here: the search and the column updates are \
                 greedy, and are not promised to win on every layer.",
                worse.join(" and ")
            )));
        }
        for r in &methods.weights {
            if let Some(note) = r.gptq.as_ref().and_then(|g| g.note.as_ref()) {
                parts.push(Part::Text(format!("GPTQ: {note}.")));
            }
        }
    }
    parts.extend(w8a8_parts(methods));
    parts.push(Part::Text("Output MSE per channel:".to_string()));
    parts.push(Part::Grid(channels(methods, report, listing)));
    if let Some(w) = &methods.worked {
        parts.push(Part::Text("Worked arithmetic:".to_string()));
        parts.push(Part::Formula(worked_lines(w)));
    }
    Section {
        title: "Methods",
        parts,
    }
}

/// The W8A8 grid, when W8A8 ran: each granularity's error, its activations' share, and
/// SmoothQuant's α and error.
fn w8a8_parts(methods: &Methods) -> Vec<Part> {
    if methods.w8a8.is_empty() {
        return Vec::new();
    }
    let mut parts = Vec::new();
    let mut grid = Grid::new(&[
        ("W8A8 activations", Align::Left),
        ("output MSE", Align::Right),
        ("output SQNR dB", Align::Right),
        ("activations' share", Align::Right),
        ("SmoothQuant α", Align::Right),
        ("smoothed MSE", Align::Right),
        ("smoothed SQNR dB", Align::Right),
    ]);
    for r in &methods.w8a8 {
        let (alpha, smse, ssqnr) = r.smoothquant.as_ref().map_or_else(
            || ("-".to_string(), "-".to_string(), "-".to_string()),
            |s| {
                let best = if s.best { " (best)" } else { "" };
                (
                    format!("{}{best}", sig(s.alpha, 3)),
                    mse(&s.error.overall),
                    sqnr(s.error.overall.output_sqnr_db),
                )
            },
        );
        grid.rows.push(vec![
            format!("per {}", r.granularity.name()),
            mse(&r.error.overall),
            sqnr(r.error.overall.output_sqnr_db),
            mse(&r.activations_only.overall),
            alpha,
            smse,
            ssqnr,
        ]);
    }
    parts.push(Part::Text(
        "W8A8: weights int8 per output channel, activations int8 per tensor or per token \
         (scale = amax / 127); the activations' share is X̂ Wᵀ against X Wᵀ."
            .to_string(),
    ));
    parts.push(Part::Grid(grid));
    parts
}

/// The per-channel grid: each method's output MSE and its round to nearest's, each W8A8's.
fn channels(methods: &Methods, report: &Report, listing: &Listing<'_>) -> Grid {
    let labels = has_labels(report);
    let mut grid = channel_columns(labels);
    for r in &methods.weights {
        grid = grid.column(r.method.name(), Align::Right, None);
        if r.method != Method::Rtn {
            grid = grid.column(&format!("{} RTN", r.method.name()), Align::Right, None);
        }
    }
    for r in &methods.w8a8 {
        let name = format!("w8a8 {}", r.granularity.name());
        grid = grid.column(&name, Align::Right, None);
        if r.smoothquant.is_some() {
            grid = grid.column(&format!("{name} smoothed"), Align::Right, None);
        }
    }
    let cell = |e: Option<&OutputError>| e.map_or_else(|| "-".to_string(), mse);
    for c in listing.rows.iter().filter_map(|&i| report.channels.get(i)) {
        let i = c.index;
        let mut row = channel_cells(labels, c);
        for r in &methods.weights {
            row.push(cell(r.error.channels.get(i)));
            if r.method != Method::Rtn {
                row.push(cell(r.rtn.channels.get(i)));
            }
        }
        for r in &methods.w8a8 {
            row.push(cell(r.error.channels.get(i)));
            if let Some(s) = &r.smoothquant {
                row.push(cell(s.error.channels.get(i)));
            }
        }
        grid.rows.push(row);
    }
    grid
}

/// The methods' worked arithmetic as lines: AWQ's scales at its chosen ratio, column by
/// column; GPTQ's error of one column pushed onto the next columns of its block.
#[must_use]
pub(crate) fn worked_lines(w: &Worked) -> Vec<String> {
    let v = |x: f32| sig(f64::from(x), 4);
    // A negative operand after a minus sign or a product, in brackets.
    let b = |x: f32| {
        if x < 0.0 { format!("({})", v(x)) } else { v(x) }
    };
    let mut lines = Vec::new();
    if let Some(a) = &w.awq {
        let r = sig(a.ratio, 3);
        lines.push(format!(
            "AWQ at ratio {r} (output MSE {}; at ratio 0, round to nearest: {}):",
            error(a.output_mse),
            error(a.output_mse_rtn)
        ));
        lines.push(format!(
            "  s_j = max(x_mean_j^{r}, 1e-4) / sqrt(max · min) = … / sqrt({} · {}) = … / {}",
            v(a.max),
            v(a.min),
            v(a.norm)
        ));
        for &(j, m, raw, s) in &a.columns {
            lines.push(format!(
                "  column {j}: x_mean {}  ->  {}^{r} = {}  ->  s = {} / {} = {}",
                v(m),
                v(m),
                v(raw),
                v(raw),
                v(a.norm),
                v(s)
            ));
        }
        lines.push(
            "  Ŵ = Q(W · s) / s: each column multiplied by its s before rounding, divided after"
                .to_string(),
        );
    }
    if let Some(p) = &w.gptq {
        if !lines.is_empty() {
            lines.push(String::new());
        }
        lines.push(format!(
            "GPTQ, row {}, column {} (its earlier columns' errors already pushed in):",
            p.row, p.column
        ));
        lines.push(format!(
            "  w = {}  ->  q = {};  err = (w − q) / U_ii = ({} − {}) / {} = {}",
            v(p.w),
            v(p.q),
            v(p.w),
            b(p.q),
            v(p.d),
            v(p.err)
        ));
        for &(j, u, before, after) in &p.onward {
            lines.push(format!(
                "  column {j}: w −= err · U_ij = {} − {} · {} = {}",
                v(before),
                b(p.err),
                b(u),
                v(after)
            ));
        }
        if p.onward.is_empty() {
            lines.push("  (the last column of its block: nothing left to push onto)".to_string());
        }
    }
    lines
}
