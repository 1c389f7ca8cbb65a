//! A [`Scan`] written as a table, JSON, CSV or Markdown into any [`Write`]. Only formats
//! numbers the scan holds; the table and Markdown go through the same [`Doc`] as a report,
//! so the two cannot drift from each other or from `report`'s.
//!
//! | format     | contents                                                                 |
//! |------------|--------------------------------------------------------------------------|
//! | `table`    | title; Tensors: the sort key and legend, one row per tensor; Quantized tensors; Skipped and failed |
//! | `markdown` | the same, one `##` section each, GitHub tables                           |
//! | `json`     | `file`, `config` (+ `summary`), `sort`, `tensors`, `stored`, `skipped`, `failed` |
//! | `csv`      | a header and one row per tensor, nothing else                            |
//!
//! With methods (`scan --method`), a "Methods" section, a `methods` key and per-tensor
//! columns follow ([`methods`]).
//!
//! A GGUF scan's quantized tensors, inspected as stored, follow as a second section (table,
//! Markdown), a `stored` array (JSON), or, in CSV, rows whose `stored_*` columns (added only
//! when there are such tensors) are filled and whose error columns are empty.
//!
//! Tensor names are the file's to choose: control characters are escaped in every text
//! format. In JSON, `gain_db` is the string `"inf"` when it is infinite (per-channel exact,
//! per-tensor not), as is any infinite error (`"inf"`, `"-inf"`: JSON has no infinity), and
//! `sqnr_db` is `null` when the error or the signal is zero.

mod methods;

use std::io::{self, BufWriter, Write};

use serde::Serialize;

use super::Format;
use super::csv::{field, float};
use super::doc::{Align, Doc, Grid, Part, Section};
use super::json::Num;
use super::num::{count, error, sig};
use crate::core::config::{Axis, Config};
use crate::core::scan::{Best, Failed, Scan, ScanRow, Side, SkipReason, Skipped, StoredRow};
use crate::core::{Granularity, Metrics};
use crate::io::printable;
use crate::io::safetensors::format_shape;

/// What the rows are sorted by, for the header of every format.
const SORT_KEY: &str = "gain = SQNR per channel - SQNR per tensor, in dB (= 20 log10 of RMSE per tensor / RMSE per channel), largest first";

/// What the table says instead of an empty table when only quantized tensors were scanned.
const NO_FLOAT_ROWS: &str = "no floating tensor of two or more dimensions to analyse";

/// What the stored section can and cannot say.
const STORED_NOTE: &str = "the original weights are not in the file: levels used and collapse of the stored codes, no error";

/// Writes `scan` in `format`.
///
/// Output is buffered internally and flushed before returning.
pub fn write_scan(out: &mut (impl Write + ?Sized), scan: &Scan, format: Format) -> io::Result<()> {
    let mut out = BufWriter::new(out);
    match format {
        Format::Table => super::table::write(&mut out, &doc(scan))?,
        Format::Markdown => super::markdown::write(&mut out, &doc(scan))?,
        Format::Json => write_json(&mut out, scan)?,
        Format::Csv => write_csv(&mut out, scan)?,
    }
    out.flush()
}

/// SQNR for people: `exact` when there is no error, `-` when the signal is zero.
fn sqnr(m: &Metrics) -> String {
    match m.sqnr_db {
        Some(db) => error(db),
        None if m.rmse == 0.0 => "exact".to_owned(),
        None => "-".to_owned(),
    }
}

fn axis_words(config: &Config) -> &'static str {
    match config.axis {
        Axis::Rows => "one scale per row (axis 0, the output channels)",
        Axis::Columns => "one scale per column (axis 1)",
    }
}

/// The table and Markdown content: Tensors, the stored tensors, then what was left out.
fn doc(scan: &Scan) -> Doc {
    let c = &scan.config;
    let mut tensors = vec![
        Part::Text(format!("sorted by {SORT_KEY}")),
        Part::Text(format!(
            "T = per tensor (one scale), C = per channel: {}",
            axis_words(c)
        )),
        Part::Text(
            "collapsed: channels whose values differ but all round to one code, per tensor"
                .to_owned(),
        ),
        Part::Text(format!(
            "bits/w: bits per weight of the configuration as given ({})",
            c.granularity
        )),
    ];
    if let Some(b) = scan.budget {
        tensors.push(Part::Text(format!(
            "best <= {}: the most accurate preset or format of the tensor's format ladder within {} bits per weight (RMSE; - when none fits); a format that cannot be measured on a tensor (its rows not a multiple of its blocks) has no cost there and is not a candidate",
            sig(b, 6),
            sig(b, 6)
        )));
    }
    if let Some(im) = &scan.imatrix {
        tensors.push(Part::Text(format!(
            "imatrix MSE T, C, cfg: Σ a (w − ŵ)² / Σ a with the importance of {} (T per tensor, C per channel, cfg the configuration as given{}); - for the {} without an entry",
            printable(im),
            ", which llama.cpp's formats and presets quantize with it",
            count(scan.without_entry, "tensor")
        )));
    }
    if scan.rows.is_empty() && !scan.stored.is_empty() {
        // A quantized GGUF file whose floats are all 1-D: no empty table.
        tensors.push(Part::Text(NO_FLOAT_ROWS.to_owned()));
    } else {
        let mut g = tensor_grid(&scan.rows, scan.budget);
        if scan.imatrix.is_some() {
            add_weighted(&mut g, &scan.rows);
        }
        tensors.push(Part::Grid(g));
        tensors.extend(fallbacks(&scan.rows));
    }
    let mut sections = vec![Section {
        title: "Tensors",
        parts: tensors,
    }];
    sections.extend(methods::section(scan));
    if !scan.stored.is_empty() {
        sections.push(Section {
            title: "Quantized tensors, as stored",
            parts: vec![
                Part::Text(STORED_NOTE.to_owned()),
                Part::Grid(stored_grid(&scan.stored)),
            ],
        });
    }
    let left_out = left_out(scan);
    if !left_out.is_empty() {
        sections.push(Section {
            title: "Skipped and failed",
            parts: left_out,
        });
    }
    Doc {
        header: format!(
            "quantscope scan: {}; {}",
            printable(&scan.file),
            c.summary()
        ),
        sections,
    }
}

/// One line per llama.cpp fallback applied: `q4_k -> q5_0 (rows of 384): 24 tensors`.
fn fallbacks(rows: &[ScanRow]) -> Option<Part> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for f in rows.iter().filter_map(|r| r.fallback) {
        let label = f.label();
        match counts.iter_mut().find(|(l, _)| *l == label) {
            Some((_, n)) => *n += 1,
            None => counts.push((label, 1)),
        }
    }
    (!counts.is_empty()).then(|| {
        let list: Vec<String> = counts
            .iter()
            .map(|(l, n)| format!("{l}: {n} tensor{}", if *n == 1 { "" } else { "s" }))
            .collect();
        Part::Text(format!(
            "llama.cpp's fallback (rows that are not whole blocks of the format are quantized as llama-quantize does): {}",
            list.join("; ")
        ))
    })
}

/// Columns: the first three are text, the rest numbers.
fn grid(columns: &[&str]) -> Grid {
    let spec: Vec<(&str, Align)> = columns
        .iter()
        .enumerate()
        .map(|(i, &name)| (name, if i < 3 { Align::Left } else { Align::Right }))
        .collect();
    Grid::new(&spec)
}

fn tensor_grid(rows: &[ScanRow], budget: Option<f64>) -> Grid {
    let mut g = grid(&[
        "tensor",
        "dtype",
        "shape",
        "gain dB",
        "T MAE",
        "T RMSE",
        "T SQNR dB",
        "collapsed",
        "C MAE",
        "C RMSE",
        "C SQNR dB",
        "bits/w",
    ]);
    g.rows = rows
        .iter()
        .map(|r| {
            vec![
                printable(&r.name).into_owned(),
                printable(&r.dtype).into_owned(),
                format_shape(&r.shape),
                error(r.gain_db),
                error(r.tensor.metrics.mae),
                error(r.tensor.metrics.rmse),
                sqnr(&r.tensor.metrics),
                r.tensor.collapsed_channels.to_string(),
                error(r.channel.metrics.mae),
                error(r.channel.metrics.rmse),
                sqnr(&r.channel.metrics),
                error(r.bits_per_weight),
            ]
        })
        .collect();
    if let Some(b) = budget {
        let name = format!("best <= {}", sig(b, 6));
        g = g
            .column(&name, Align::Left, None)
            .column("bits/w", Align::Right, None)
            .column("RMSE", Align::Right, None)
            .column("collapsed", Align::Right, None);
        for (cells, r) in g.rows.iter_mut().zip(rows) {
            cells.extend(match &r.best {
                Some(best) => [
                    best.name.clone(),
                    error(best.bits_per_weight),
                    error(best.metrics.rmse),
                    best.collapsed_channels.to_string(),
                ],
                None => [
                    "-".to_owned(),
                    "-".to_owned(),
                    "-".to_owned(),
                    "-".to_owned(),
                ],
            });
        }
    }
    g
}

/// The importance-weighted columns.
fn add_weighted(g: &mut Grid, rows: &[ScanRow]) {
    let mut grid = std::mem::replace(g, Grid::new(&[]))
        .column("imatrix MSE T", Align::Right, None)
        .column("C", Align::Right, None)
        .column("cfg", Align::Right, None);
    let dash = |x: Option<f64>| x.map_or_else(|| "-".to_owned(), error);
    for (cells, r) in grid.rows.iter_mut().zip(rows) {
        let w = r.imatrix.as_ref();
        cells.extend([
            dash(w.and_then(|w| w.tensor)),
            dash(w.and_then(|w| w.channel)),
            dash(w.and_then(|w| w.configured)),
        ]);
    }
    *g = grid;
}

fn stored_grid(rows: &[StoredRow]) -> Grid {
    let mut g = grid(&[
        "tensor",
        "type",
        "shape",
        "levels used (mean)",
        "fewest",
        "collapsed rows",
        "collapsed blocks",
        "bits/w",
    ]);
    g.rows = rows
        .iter()
        .map(|r| {
            vec![
                printable(&r.name).into_owned(),
                printable(&r.dtype).into_owned(),
                format_shape(&r.shape),
                format!("{:.1} of {}", r.mean_used, r.levels),
                r.min_used.to_string(),
                r.collapsed_rows.to_string(),
                format!("{} of {}", r.collapsed_blocks, r.blocks),
                sig(r.bits_per_weight, 5),
            ]
        })
        .collect();
    g
}

/// The lines after the tables: what was skipped, and each tensor that failed.
fn left_out(scan: &Scan) -> Vec<Part> {
    let mut parts = Vec::new();
    if scan.rows.is_empty() && scan.stored.is_empty() {
        parts.push(Part::Text(
            "no floating tensor with 2 or more dimensions was analysed".to_owned(),
        ));
    }
    let n = scan.skipped_count(&[SkipReason::OneDimensional, SkipReason::NotFloating]);
    if n > 0 {
        parts.push(Part::Text(format!(
            "skipped {}: 1-D or not floating",
            count(n, "tensor")
        )));
    }
    let n = scan.skipped_count(&[SkipReason::Empty]);
    if n > 0 {
        parts.push(Part::Text(format!("skipped {}", count(n, "empty tensor"))));
    }
    if !scan.failed.is_empty() {
        parts.push(Part::Text(format!(
            "failed {}:",
            count(scan.failed.len(), "tensor")
        )));
        let mut g = Grid::new(&[("tensor", Align::Left), ("error", Align::Left)]);
        g.rows = scan
            .failed
            .iter()
            .map(|f| {
                vec![
                    printable(&f.name).into_owned(),
                    printable(&f.error).into_owned(),
                ]
            })
            .collect();
        parts.push(Part::Grid(g));
    }
    parts
}

/// The configuration as JSON: every field, then its summary.
#[derive(Serialize)]
struct ConfigView<'a> {
    #[serde(flatten)]
    config: &'a Config,
    summary: String,
}

/// One granularity of a tensor, as JSON.
#[derive(Serialize)]
struct SideView {
    mae: Num,
    rmse: Num,
    max_error: Num,
    sqnr_db: Option<Num>,
    collapsed_channels: usize,
    bits_per_weight: f64,
}

impl From<&Side> for SideView {
    fn from(s: &Side) -> Self {
        let m = &s.metrics;
        Self {
            mae: Num(m.mae),
            rmse: Num(m.rmse),
            max_error: Num(m.max_error),
            sqnr_db: m.sqnr_db.map(Num),
            collapsed_channels: s.collapsed_channels,
            bits_per_weight: s.bits_per_weight,
        }
    }
}

/// One analysed tensor, as JSON.
#[derive(Serialize)]
struct RowView<'a> {
    name: &'a str,
    dtype: &'a str,
    shape: &'a [usize],
    matrix: (usize, usize),
    gain_db: Num,
    tensor: SideView,
    channel: SideView,
    bits_per_weight: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    best: Option<&'a Best>,
    /// llama.cpp's fallback, when the format's blocks do not divide the rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    fallback: Option<crate::core::fallback::Fallback>,
    #[serde(skip_serializing_if = "Option::is_none")]
    imatrix: Option<WeightedView<'a>>,
    /// With methods: what they gave on the tensor, or why they did not run.
    #[serde(skip_serializing_if = "Option::is_none")]
    methods: Option<methods::TensorView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    methods_skipped: Option<String>,
}

/// A tensor's importance-weighted errors, as JSON.
#[derive(Serialize)]
struct WeightedView<'a> {
    entry: &'a str,
    imatrix_mse_tensor: Option<Num>,
    imatrix_mse_channel: Option<Num>,
    imatrix_mse: Option<Num>,
    quantized_with: bool,
}

impl<'a> From<&'a ScanRow> for RowView<'a> {
    fn from(r: &'a ScanRow) -> Self {
        let (methods, methods_skipped) = methods::tensor_json(r);
        Self {
            methods,
            methods_skipped,
            name: &r.name,
            dtype: &r.dtype,
            shape: &r.shape,
            matrix: r.matrix,
            gain_db: Num(r.gain_db),
            tensor: SideView::from(&r.tensor),
            channel: SideView::from(&r.channel),
            bits_per_weight: r.bits_per_weight,
            best: r.best.as_ref(),
            fallback: r.fallback,
            imatrix: r.imatrix.as_ref().map(|w| WeightedView {
                entry: &w.entry,
                imatrix_mse_tensor: w.tensor.map(Num),
                imatrix_mse_channel: w.channel.map(Num),
                imatrix_mse: w.configured.map(Num),
                quantized_with: w.quantized_with,
            }),
        }
    }
}

#[derive(Serialize)]
struct JsonScan<'a> {
    file: &'a str,
    config: ConfigView<'a>,
    compared: [Granularity; 2],
    sort: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    budget: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    imatrix: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    methods: Option<methods::ScanView<'a>>,
    tensors: Vec<RowView<'a>>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    stored: &'a [StoredRow],
    skipped: &'a [Skipped],
    failed: &'a [Failed],
}

fn write_json(out: &mut impl Write, scan: &Scan) -> io::Result<()> {
    let doc = JsonScan {
        file: &scan.file,
        config: ConfigView {
            config: &scan.config,
            summary: scan.config.summary(),
        },
        compared: [Granularity::Tensor, Granularity::Channel],
        sort: "gain_db, largest first: 20*log10(tensor.rmse / channel.rmse) = channel.sqnr_db - tensor.sqnr_db; \"inf\" = infinite (per-channel exact)",
        budget: scan.budget,
        imatrix: scan.imatrix.as_deref(),
        methods: methods::scan_json(scan),
        tensors: scan.rows.iter().map(RowView::from).collect(),
        stored: &scan.stored,
        skipped: &scan.skipped,
        failed: &scan.failed,
    };
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

/// The error columns of one granularity, in CSV.
const SIDE_COLUMNS: [&str; 6] = [
    "mae",
    "rmse",
    "max_error",
    "sqnr_db",
    "collapsed",
    "bits_per_weight",
];

/// The columns appended when a scan has a budget.
const BEST_COLUMNS: [&str; 4] = [
    "best_name",
    "best_bits_per_weight",
    "best_rmse",
    "best_collapsed",
];

/// The columns appended when a scan has an importance matrix.
const WEIGHTED_COLUMNS: [&str; 3] = ["imatrix_mse_tensor", "imatrix_mse_channel", "imatrix_mse"];

/// The columns appended when a scan has stored tensors.
const STORED_COLUMNS: [&str; 8] = [
    "stored_levels",
    "stored_mean_used",
    "stored_min_used",
    "stored_collapsed_rows",
    "stored_collapsed_blocks",
    "stored_blocks",
    "stored_zero_scales",
    "stored_bits_per_weight",
];

/// The CSV header: the tensor's columns, then those the scan's options add.
fn csv_header(scan: &Scan) -> Vec<String> {
    let mut header: Vec<String> = ["name", "dtype", "shape", "rows", "cols", "gain_db"]
        .map(String::from)
        .to_vec();
    for side in ["tensor", "channel"] {
        header.extend(SIDE_COLUMNS.iter().map(|c| format!("{side}_{c}")));
    }
    header.push("bits_per_weight".to_owned());
    if scan.budget.is_some() {
        header.extend(BEST_COLUMNS.map(String::from));
    }
    if scan.imatrix.is_some() {
        header.extend(WEIGHTED_COLUMNS.map(String::from));
    }
    if let Some(m) = &scan.methods {
        header.extend(methods::csv_header(&m.request));
    }
    if !scan.stored.is_empty() {
        header.extend(STORED_COLUMNS.map(String::from));
    }
    header
}

fn write_csv(out: &mut impl Write, scan: &Scan) -> io::Result<()> {
    let stored = !scan.stored.is_empty();
    let best = scan.budget.is_some();
    let weighted = scan.imatrix.is_some();
    let request = scan.methods.as_ref().map(|m| &m.request);
    let method_columns = request.map_or(0, |r| methods::csv_header(r).len());
    let header = csv_header(scan);
    writeln!(out, "{}", header.join(","))?;
    let ranks = methods::ranks(scan);
    for (r, rank) in scan.rows.iter().zip(ranks) {
        let mut fields = vec![
            field(&r.name),
            field(&r.dtype),
            shape_cell(&r.shape),
            r.matrix.0.to_string(),
            r.matrix.1.to_string(),
            float(r.gain_db),
        ];
        for side in [&r.tensor, &r.channel] {
            let m = &side.metrics;
            fields.extend([
                float(m.mae),
                float(m.rmse),
                float(m.max_error),
                m.sqnr_db.map(float).unwrap_or_default(),
                side.collapsed_channels.to_string(),
                float(side.bits_per_weight),
            ]);
        }
        fields.push(float(r.bits_per_weight));
        if best {
            fields.extend(match &r.best {
                Some(b) => [
                    field(&b.name),
                    float(b.bits_per_weight),
                    float(b.metrics.rmse),
                    b.collapsed_channels.to_string(),
                ],
                None => Default::default(),
            });
        }
        if weighted {
            let w = r.imatrix.as_ref();
            fields.extend(
                [
                    w.and_then(|w| w.tensor),
                    w.and_then(|w| w.channel),
                    w.and_then(|w| w.configured),
                ]
                .map(|x| x.map(float).unwrap_or_default()),
            );
        }
        if let Some(request) = request {
            fields.extend(methods::csv_cells(request, r, rank));
        }
        if stored {
            fields.extend(std::iter::repeat_n(String::new(), STORED_COLUMNS.len()));
        }
        writeln!(out, "{}", fields.join(","))?;
    }
    for r in &scan.stored {
        let (rows, cols) = (
            r.shape.iter().rev().skip(1).product::<usize>(),
            r.shape.last().copied().unwrap_or(0),
        );
        let mut fields = vec![
            field(&r.name),
            field(&r.dtype),
            shape_cell(&r.shape),
            rows.to_string(),
            cols.to_string(),
        ];
        fields.extend(std::iter::repeat_n(
            String::new(),
            1 + 2 * SIDE_COLUMNS.len()
                + 1
                + if best { BEST_COLUMNS.len() } else { 0 }
                + if weighted { WEIGHTED_COLUMNS.len() } else { 0 }
                + method_columns,
        ));
        fields.extend([
            r.levels.to_string(),
            float(r.mean_used),
            r.min_used.to_string(),
            r.collapsed_rows.to_string(),
            r.collapsed_blocks.to_string(),
            r.blocks.to_string(),
            r.zero_scales.to_string(),
            float(r.bits_per_weight),
        ]);
        writeln!(out, "{}", fields.join(","))?;
    }
    Ok(())
}

/// A shape as `2x1x2x2`.
fn shape_cell(shape: &[usize]) -> String {
    let dims: Vec<String> = shape.iter().map(ToString::to_string).collect();
    dims.join("x")
}
