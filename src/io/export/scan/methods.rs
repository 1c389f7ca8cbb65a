//! A scan's methods (`scan --method`), in every format, with the keys `report` uses:
//!
//! - table and Markdown: a "Methods" section, the tensors ranked by the first method's output
//!   MSE (largest first), each method's output MSE beside round to nearest's with the same
//!   quantizer (and AWQ's ratio, the W8A8 errors), then the tensors skipped and why;
//! - JSON: per tensor `"methods": {"tokens", "weights": [{"method", "output_mse",
//!   "output_sqnr_db", "rtn_output_mse", "rtn_output_sqnr_db", "awq_ratio", "gptq_note"}],
//!   "w8a8": [{"activations", "output_mse", "output_sqnr_db", "smoothquant_alpha",
//!   "smoothquant_output_mse", "smoothquant_output_sqnr_db"}]}` or `"methods_skipped": why`;
//!   at the top `"methods": {"activations", "tokens_held", "ranked_by", "ranking": [names],
//!   "skipped": [{"name", "why"}]}`;
//! - CSV: `methods_rank` (1 for the largest output error; empty when skipped),
//!   `methods_skipped`, then per tensor the columns `report`'s CSV has per channel, over the
//!   tensor: `<m>_output_mse`, `<m>_output_sqnr_db`, `<m>_rtn_output_mse`,
//!   `<m>_rtn_output_sqnr_db`, `awq_ratio`, `w8a8_<g>_output_mse`, ...

use serde::Serialize;

use super::super::csv::{field, float};
use super::super::doc::{Align, Grid, Part, Section};
use super::super::json::Num;
use super::super::num::{count, error};
use crate::core::method::run::{Method, Methods, Request};
use crate::core::method::scanned::{ScanMethods, TensorMethods, rank};
use crate::core::scan::{Scan, ScanRow};
use crate::io::printable;

/// The order of the scan's rows by the methods' ranking.
fn ranking(scan: &Scan) -> Vec<usize> {
    let tensors: Vec<(&str, Option<&TensorMethods>)> = scan
        .rows
        .iter()
        .map(|r| (r.name.as_str(), r.methods.as_ref()))
        .collect();
    rank(&tensors)
}

/// The "Methods" section, when the scan ran methods.
pub(super) fn section(scan: &Scan) -> Option<Section> {
    let info = scan.methods.as_ref()?;
    let req = &info.request;
    let mut parts = vec![Part::Text(format!(
        "ranked by {}, largest first: the layer's output error on the activations {}{}; each method beside round to nearest with its own quantizer ({})",
        info.ranked_by(),
        printable(&info.activations),
        info.tokens_held
            .map(|n| format!(" (their first tokens of {n})"))
            .unwrap_or_default(),
        req.scheme.short()
    ))];
    let mut columns = vec![("tensor", Align::Left), ("shape", Align::Left)];
    let mut names = Vec::new();
    for m in &req.methods {
        names.push(format!("{m} out MSE"));
        if *m != Method::Rtn {
            names.push("RTN".to_string());
        }
        if *m == Method::Awq {
            names.push("ratio".to_string());
        }
    }
    for g in &req.act_quant {
        names.push(format!("W8A8 {} out MSE", g.name()));
        if req.smoothquant.is_some() {
            names.push("+SQ".to_string());
            names.push("α".to_string());
        }
    }
    columns.extend(names.iter().map(|n| (n.as_str(), Align::Right)));
    let mut g = Grid::new(&columns);
    for i in ranking(scan) {
        let r = &scan.rows[i];
        if let Some(m) = r.methods.as_ref().and_then(TensorMethods::ran) {
            let mut cells = vec![
                printable(&r.name).into_owned(),
                format!("{}x{}", r.matrix.0, r.matrix.1),
            ];
            cells.extend(table_cells(m));
            g.rows.push(cells);
        }
    }
    if !g.rows.is_empty() {
        parts.push(Part::Grid(g));
    }
    let skipped: Vec<&ScanRow> = scan
        .rows
        .iter()
        .filter(|r| {
            r.methods
                .as_ref()
                .and_then(TensorMethods::why_not)
                .is_some()
        })
        .collect();
    if !skipped.is_empty() {
        parts.push(Part::Text(format!(
            "not run on {}:",
            count(skipped.len(), "tensor")
        )));
        let mut g = Grid::new(&[("tensor", Align::Left), ("why", Align::Left)]);
        g.rows = skipped
            .iter()
            .map(|r| {
                let why = r.methods.as_ref().and_then(TensorMethods::why_not);
                vec![
                    printable(&r.name).into_owned(),
                    printable(why.unwrap_or_default()).into_owned(),
                ]
            })
            .collect();
        parts.push(Part::Grid(g));
    }
    Some(Section {
        title: "Methods",
        parts,
    })
}

fn table_cells(m: &Methods) -> Vec<String> {
    let mut cells = Vec::new();
    for r in &m.weights {
        cells.push(error(r.error.overall.output_mse));
        if r.method != Method::Rtn {
            cells.push(error(r.rtn.overall.output_mse));
        }
        if r.method == Method::Awq {
            cells.push(r.awq_ratio.map_or_else(|| "-".to_string(), error));
        }
    }
    for r in &m.w8a8 {
        cells.push(error(r.error.overall.output_mse));
        if let Some(s) = &r.smoothquant {
            cells.push(error(s.error.overall.output_mse));
            cells.push(error(s.alpha));
        }
    }
    cells
}

/// A tensor's methods, as JSON.
#[derive(Serialize)]
pub(super) struct TensorView {
    tokens: usize,
    weights: Vec<WeightView>,
    w8a8: Vec<W8A8View>,
}

#[derive(Serialize)]
struct WeightView {
    method: &'static str,
    output_mse: Num,
    output_sqnr_db: Option<Num>,
    rtn_output_mse: Num,
    rtn_output_sqnr_db: Option<Num>,
    awq_ratio: Option<Num>,
    gptq_note: Option<String>,
}

#[derive(Serialize)]
struct W8A8View {
    activations: &'static str,
    output_mse: Num,
    output_sqnr_db: Option<Num>,
    smoothquant_alpha: Option<Num>,
    smoothquant_output_mse: Option<Num>,
    smoothquant_output_sqnr_db: Option<Num>,
}

/// A row's methods for JSON: what ran, or why not.
pub(super) fn tensor_json(r: &ScanRow) -> (Option<TensorView>, Option<String>) {
    let Some(t) = &r.methods else {
        return (None, None);
    };
    let Some(m) = t.ran() else {
        return (None, t.why_not().map(str::to_string));
    };
    let view = TensorView {
        tokens: m.tokens,
        weights: m
            .weights
            .iter()
            .map(|w| WeightView {
                method: w.method.name(),
                output_mse: Num(w.error.overall.output_mse),
                output_sqnr_db: w.error.overall.output_sqnr_db.map(Num),
                rtn_output_mse: Num(w.rtn.overall.output_mse),
                rtn_output_sqnr_db: w.rtn.overall.output_sqnr_db.map(Num),
                awq_ratio: w.awq_ratio.map(Num),
                gptq_note: w.gptq.as_ref().and_then(|g| g.note.clone()),
            })
            .collect(),
        w8a8: m
            .w8a8
            .iter()
            .map(|w| W8A8View {
                activations: w.granularity.name(),
                output_mse: Num(w.error.overall.output_mse),
                output_sqnr_db: w.error.overall.output_sqnr_db.map(Num),
                smoothquant_alpha: w.smoothquant.as_ref().map(|s| Num(s.alpha)),
                smoothquant_output_mse: w
                    .smoothquant
                    .as_ref()
                    .map(|s| Num(s.error.overall.output_mse)),
                smoothquant_output_sqnr_db: w
                    .smoothquant
                    .as_ref()
                    .and_then(|s| s.error.overall.output_sqnr_db)
                    .map(Num),
            })
            .collect(),
    };
    (Some(view), None)
}

/// The scan's methods, as JSON.
#[derive(Serialize)]
pub(super) struct ScanView<'a> {
    activations: &'a str,
    tokens_held: Option<usize>,
    ranked_by: String,
    ranking: Vec<&'a str>,
    skipped: Vec<SkippedView<'a>>,
}

#[derive(Serialize)]
struct SkippedView<'a> {
    name: &'a str,
    why: &'a str,
}

/// The top-level `methods` value, when the scan ran methods.
pub(super) fn scan_json(scan: &Scan) -> Option<ScanView<'_>> {
    let info: &ScanMethods = scan.methods.as_ref()?;
    Some(ScanView {
        activations: &info.activations,
        tokens_held: info.tokens_held,
        ranked_by: info.ranked_by(),
        ranking: ranking(scan)
            .into_iter()
            .map(|i| scan.rows[i].name.as_str())
            .collect(),
        skipped: scan
            .rows
            .iter()
            .filter_map(|r| {
                Some(SkippedView {
                    name: &r.name,
                    why: r.methods.as_ref()?.why_not()?,
                })
            })
            .collect(),
    })
}

/// The CSV columns of `request`, as `report`'s CSV names them.
pub(super) fn csv_header(request: &Request) -> Vec<String> {
    let mut h = vec!["methods_rank".to_string(), "methods_skipped".to_string()];
    for m in &request.methods {
        let m = m.name();
        h.extend([format!("{m}_output_mse"), format!("{m}_output_sqnr_db")]);
        if m != "rtn" {
            h.extend([
                format!("{m}_rtn_output_mse"),
                format!("{m}_rtn_output_sqnr_db"),
            ]);
        }
        if m == "awq" {
            h.push("awq_ratio".to_string());
        }
    }
    for g in &request.act_quant {
        let g = format!("w8a8_{}", g.name());
        h.extend([format!("{g}_output_mse"), format!("{g}_output_sqnr_db")]);
        if request.smoothquant.is_some() {
            h.extend([
                format!("{g}_smoothquant_alpha"),
                format!("{g}_smoothquant_output_mse"),
                format!("{g}_smoothquant_output_sqnr_db"),
            ]);
        }
    }
    h
}

/// The ranks of the scan's rows (1-based; `None` for those the methods did not run on).
pub(super) fn ranks(scan: &Scan) -> Vec<Option<usize>> {
    let mut out = vec![None; scan.rows.len()];
    for (k, i) in ranking(scan).into_iter().enumerate() {
        out[i] = Some(k + 1);
    }
    out
}

/// Row `r`'s cells under [`csv_header`] of `request`, with its `rank`.
pub(super) fn csv_cells(request: &Request, r: &ScanRow, rank: Option<usize>) -> Vec<String> {
    let width = csv_header(request).len();
    let mut cells = vec![
        rank.map(|k| k.to_string()).unwrap_or_default(),
        r.methods
            .as_ref()
            .and_then(TensorMethods::why_not)
            .map(field)
            .unwrap_or_default(),
    ];
    if let Some(m) = r.methods.as_ref().and_then(TensorMethods::ran) {
        let opt = |x: Option<f64>| x.map(float).unwrap_or_default();
        for w in &m.weights {
            cells.extend([
                float(w.error.overall.output_mse),
                opt(w.error.overall.output_sqnr_db),
            ]);
            if w.method != Method::Rtn {
                cells.extend([
                    float(w.rtn.overall.output_mse),
                    opt(w.rtn.overall.output_sqnr_db),
                ]);
            }
            if w.method == Method::Awq {
                cells.push(opt(w.awq_ratio));
            }
        }
        for w in &m.w8a8 {
            cells.extend([
                float(w.error.overall.output_mse),
                opt(w.error.overall.output_sqnr_db),
            ]);
            if let Some(s) = &w.smoothquant {
                cells.extend([
                    float(s.alpha),
                    float(s.error.overall.output_mse),
                    opt(s.error.overall.output_sqnr_db),
                ]);
            }
        }
    }
    cells.resize(width, String::new());
    cells
}
