//! JSON for scripts: one object whose keys and key order are stable.
//!
//! Floats are written at full precision: the report's `f32` values (scales, minima, maxima,
//! dequantized values) in their shortest round-trip `f32` form (`0.042857144`), its `f64`
//! metrics in shortest round-trip `f64` form. JSON has no infinity: an infinite metric or
//! reconstruction (a value near `f32::MAX` can reconstruct past it) is the string `"inf"` or
//! `"-inf"` ([`Num`]), and `null` stands only for "none". Each block, channel and rung is one
//! line, so the output can also be read with line tools.
//!
//! ```text
//! {
//!   "config":   every Config field as serde writes it (bits, signed, scheme, range,
//!               range_source, rounding, granularity, axis, clipping, scale_dtype,
//!               zero_point_bits, conventions), then
//!               "summary": "int4 symmetric narrow [-7, 7], tensor", "qmin": -7, "qmax": 7,
//!               "clamp": [lo, hi] the range codes are clamped into ([qmin, qmax], or the
//!               whole integer type under code_clamp "type")
//!   "shape":    [rows, cols]
//!   "blocks":   [ one per block, row-major block order:
//!               {"rows": [start, end], "cols": [start, end] (end exclusive),
//!                "scale": the stored scale, "zero_point": int,
//!                "offset": float offset (GGUF Q4_1/Q5_1) or null,
//!                "min", "max": of the block's values, "clipped": values clamped,
//!                "code_scale": scale the codes were computed with (differs from "scale"
//!                when scales are stored as f16/bf16), "range": [lo, hi] the scale was formed
//!                from, "degenerate": the scale was replaced by the degenerate policy} ]
//!   "channels": [ one per row:
//!               {"index", "label": string or null, "mae", "rmse", "max_error",
//!                "sqnr_db": dB or null (zero error or zero signal), "levels_used",
//!                "levels_available", "utilization": (max code - min code) / (qmax - qmin),
//!                "collapsed": non-constant row with one code, or whose blocks all store
//!                a zero scale (one reconstructed value), "constant": all values equal,
//!                "min_code", "max_code", "clipped", "min", "max",
//!                with values only: "codes": [int...], "dequantized": [float...]} ]
//!   "overall":  {"mae", "rmse", "max_error", "sqnr_db", "collapsed_channels"}
//!   "memory":   {"elements", "bits", "blocks", "metadata_bits_per_block", "payload_bytes",
//!                "metadata_bytes", "total_bytes", "bits_per_weight", "ratio_to_f32",
//!                "ratio_to_f16"}
//!   "ladder":   [ coarse to fine; [] without the ladder:
//!               {"granularity": "tensor" | "channel" | "group:G", "scales",
//!                "metadata_bytes", "bits_per_weight", "mae", "rmse", "max_error", "sqnr_db",
//!                "collapsed_channels", "active": the configuration's own granularity} ]
//!   "importance": only with an importance vector or activations (`--imatrix`,
//!               `--activations`): {"quantized_with": where the importance the codes were
//!                quantized with came from, or null (a configuration that reads none),
//!                "source": where the importance came from, "activations": their name or
//!                null, "tokens": their count or null, "columns", "matrices", "total",
//!                "top_percent_columns", "top_percent_share": the share of the total held
//!                by the top 1 % of columns, "top": [[column, share]...], "zero_columns",
//!                "columns_at_risk": [{"column", "share", "clamped", "zeroed"}] the most
//!                important columns holding clamped or collapsed values, and their count
//!                "columns_at_risk_total"}
//!   with "importance", every channel, "overall", rung and format entry also has
//!   "output_mse", "output_sqnr_db" (with activations, else null) and "imatrix_mse" (with
//!   importance, else null); the format entries "weighted" (quantized with the importance)
//!   and "pareto_output" (on the front drawn on the output error).
//!   "formats":  [ the format ladder (`report --formats`), by bits per weight, the entries
//!               not measured last; [] without:
//!               {"name", "integer": an integer preset (else a format), "about",
//!                "bits_per_weight", "total_bytes", "parts": [{"name", "bits_per_weight"}],
//!                "mae", "rmse", "max_error", "sqnr_db", "collapsed_channels" (all null,
//!                and parts [], when not measured), "skipped": why it was not measured, or null,
//!                "pareto": on the front, "active": the configuration reported above} ]
//!   "ranking_changes": only with "importance" and the format ladder: [sentences such as
//!               "q4_k beats nf4 on weight RMSE, loses on output error", largest first]
//! }
//! ```
//!
//! With `--method`, `--act-quant` or `--smoothquant`, a last key `methods` (see the
//! `methods` module for its shape).
//!
//! Per-channel metrics of the ladder's rungs are not in the JSON (the CSV has them).

mod methods;

use std::io::{self, Write};

use serde::{Serialize, Serializer};

use crate::core::format_ladder::{CostPart, Entry, FormatLadder};
use crate::core::importance::{ColumnRisk, OutputErrors, OutputMetrics};
use crate::core::{Block, ChannelReport, Config, Memory, Metrics, Report, Rung};
use crate::io::export::ExportOptions;

/// Writes `report` as JSON.
pub(super) fn write(
    out: &mut impl Write,
    report: &Report,
    options: ExportOptions,
    format_ladder: Option<&FormatLadder>,
    methods: Option<&crate::core::method::run::Methods>,
) -> io::Result<()> {
    let config = ConfigView {
        config: &report.config,
        summary: report.applied(),
        fallback: report.fallback,
        qmin: report.qmin,
        qmax: report.qmax,
        clamp: [report.clamp_range.0, report.clamp_range.1],
    };
    out.write_all(b"{\n  \"config\": ")?;
    serde_json::to_writer(&mut *out, &config)?;
    out.write_all(b",\n  \"shape\": ")?;
    serde_json::to_writer(&mut *out, &[report.shape.0, report.shape.1])?;
    out.write_all(b",\n  \"blocks\": ")?;
    array(out, report.blocks.iter().map(|b| BlockView::from(&b)))?;
    if let Some(o) = &report.output {
        out.write_all(b",\n  \"importance\": ")?;
        serde_json::to_writer(&mut *out, &ImportanceView::new(report, o))?;
    }
    let output = |i: usize| {
        report
            .output
            .as_ref()
            .map(|o| OutputView::from(o.channels.get(i).copied().unwrap_or_default()))
    };
    out.write_all(b",\n  \"channels\": ")?;
    array(
        out,
        report
            .channels
            .iter()
            .map(|c| ChannelView::new(report, c, options.values, output(c.index))),
    )?;
    out.write_all(b",\n  \"overall\": ")?;
    serde_json::to_writer(
        &mut *out,
        &OverallView::new(
            &report.overall,
            report.collapsed_channels,
            report.output.as_ref().map(|o| OutputView::from(o.overall)),
        ),
    )?;
    out.write_all(b",\n  \"memory\": ")?;
    serde_json::to_writer(&mut *out, &MemoryView::from(&report.memory))?;
    out.write_all(b",\n  \"ladder\": ")?;
    let rungs = if options.ladder {
        report.ladder.as_slice()
    } else {
        &[]
    };
    array(out, rungs.iter().map(RungView::from))?;
    out.write_all(b",\n  \"formats\": ")?;
    let calibrated = report.output.is_some();
    array(
        out,
        format_ladder
            .iter()
            .flat_map(|l| &l.entries)
            .map(|e| EntryView::new(e, calibrated)),
    )?;
    if let Some(l) = format_ladder.filter(|_| calibrated) {
        out.write_all(b",\n  \"ranking_changes\": ")?;
        array(out, l.changes.iter().map(|c| &c.sentence))?;
    }
    if let Some(m) = methods {
        out.write_all(b",\n  \"methods\": ")?;
        serde_json::to_writer(&mut *out, &methods::MethodsView::new(m))?;
    }
    out.write_all(b"\n}\n")
}

/// The output metrics of a channel, the matrix, a rung or a format, flattened into it.
#[derive(Serialize)]
struct OutputView {
    output_mse: Option<Num>,
    output_sqnr_db: Option<Num>,
    imatrix_mse: Option<Num>,
}

impl From<OutputMetrics> for OutputView {
    fn from(m: OutputMetrics) -> Self {
        Self {
            output_mse: m.output_mse.map(Num),
            output_sqnr_db: m.output_sqnr_db.map(Num),
            imatrix_mse: m.imatrix_mse.map(Num),
        }
    }
}

#[derive(Serialize)]
struct ImportanceView<'a> {
    quantized_with: Option<String>,
    source: Option<&'a str>,
    activations: Option<&'a str>,
    tokens: Option<usize>,
    columns: Option<usize>,
    matrices: Option<usize>,
    total: Option<Num>,
    top_percent_columns: Option<usize>,
    top_percent_share: Option<Num>,
    top: Vec<(usize, Num)>,
    zero_columns: Option<usize>,
    columns_at_risk: &'a [ColumnRisk],
    columns_at_risk_total: usize,
}

impl<'a> ImportanceView<'a> {
    fn new(report: &Report, o: &'a OutputErrors) -> Self {
        let s = o.importance.as_ref();
        Self {
            quantized_with: report.quantized_with.as_ref().map(ToString::to_string),
            source: o.importance_source.as_deref(),
            activations: o.activations.as_deref(),
            tokens: o.tokens,
            columns: s.map(|s| s.columns),
            matrices: s.map(|s| s.matrices),
            total: s.map(|s| Num(s.total)),
            top_percent_columns: s.map(|s| s.top_percent_columns),
            top_percent_share: s.map(|s| Num(s.top_percent_share)),
            top: s
                .map(|s| s.top.iter().map(|&(c, v)| (c, Num(v))).collect())
                .unwrap_or_default(),
            zero_columns: s.map(|s| s.zero_columns),
            columns_at_risk: &o.columns_at_risk,
            columns_at_risk_total: o.columns_at_risk_total,
        }
    }
}

/// A float for JSON: a number when finite, else the string `"inf"`, `"-inf"` (or `"nan"`,
/// which the core never produces). serde_json would write `null`, which the schema keeps for
/// "none".
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Num(pub f64);

impl Serialize for Num {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            x if x.is_finite() => s.serialize_f64(x),
            x if x.is_nan() => s.serialize_str("nan"),
            x if x > 0.0 => s.serialize_str("inf"),
            _ => s.serialize_str("-inf"),
        }
    }
}

/// An `f32` for JSON, in its shortest `f32` form; as [`Num`] when not finite.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Num32(pub f32);

impl Serialize for Num32 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.is_finite() {
            s.serialize_f32(self.0)
        } else {
            Num(f64::from(self.0)).serialize(s)
        }
    }
}

/// A JSON array with one element a line.
fn array<T: Serialize>(out: &mut impl Write, items: impl Iterator<Item = T>) -> io::Result<()> {
    let mut first = true;
    for item in items {
        out.write_all(if first { b"[\n    " } else { b",\n    " })?;
        serde_json::to_writer(&mut *out, &item)?;
        first = false;
    }
    out.write_all(if first { b"[]" } else { b"\n  ]" })
}

#[derive(Serialize)]
struct ConfigView<'a> {
    #[serde(flatten)]
    config: &'a Config,
    summary: String,
    /// llama.cpp's fallback, when it was applied: `{from, to, cols}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    fallback: Option<crate::core::fallback::Fallback>,
    qmin: i32,
    qmax: i32,
    clamp: [i32; 2],
}

#[derive(Serialize)]
struct BlockView {
    rows: [usize; 2],
    cols: [usize; 2],
    scale: f32,
    zero_point: i32,
    offset: Option<f32>,
    min: f32,
    max: f32,
    clipped: usize,
    code_scale: f32,
    range: [f32; 2],
    degenerate: bool,
}

impl From<&Block> for BlockView {
    fn from(b: &Block) -> Self {
        Self {
            rows: [b.rows.0, b.rows.1],
            cols: [b.cols.0, b.cols.1],
            scale: b.scale,
            zero_point: b.zero_point,
            offset: b.offset,
            min: b.min,
            max: b.max,
            clipped: b.clipped,
            code_scale: b.code_scale,
            range: [b.range.0, b.range.1],
            degenerate: b.degenerate,
        }
    }
}

#[derive(Serialize)]
struct ChannelView<'a> {
    index: usize,
    label: Option<&'a str>,
    mae: Num,
    rmse: Num,
    max_error: Num,
    sqnr_db: Option<Num>,
    levels_used: u32,
    levels_available: u32,
    utilization: f64,
    collapsed: bool,
    constant: bool,
    min_code: i32,
    max_code: i32,
    clipped: usize,
    min: f32,
    max: f32,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    output: Option<OutputView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    codes: Option<Vec<i32>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dequantized: Option<Vec<Num32>>,
}

impl<'a> ChannelView<'a> {
    fn new(
        report: &Report,
        c: &'a ChannelReport,
        values: bool,
        output: Option<OutputView>,
    ) -> Self {
        Self {
            index: c.index,
            label: c.label.as_deref(),
            mae: Num(c.metrics.mae),
            rmse: Num(c.metrics.rmse),
            max_error: Num(c.metrics.max_error),
            sqnr_db: c.metrics.sqnr_db.map(Num),
            levels_used: c.levels_used,
            levels_available: c.levels_available,
            utilization: c.utilization,
            collapsed: c.collapsed,
            constant: c.constant,
            min_code: c.min_code,
            max_code: c.max_code,
            clipped: c.clipped,
            min: c.min,
            max: c.max,
            output,
            codes: values.then(|| report.row_codes(c.index)),
            dequantized: values.then(|| {
                report
                    .row_dequantized(c.index)
                    .into_iter()
                    .map(Num32)
                    .collect()
            }),
        }
    }
}

#[derive(Serialize)]
struct OverallView {
    mae: Num,
    rmse: Num,
    max_error: Num,
    sqnr_db: Option<Num>,
    collapsed_channels: usize,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    output: Option<OutputView>,
}

impl OverallView {
    fn new(m: &Metrics, collapsed_channels: usize, output: Option<OutputView>) -> Self {
        Self {
            mae: Num(m.mae),
            rmse: Num(m.rmse),
            max_error: Num(m.max_error),
            sqnr_db: m.sqnr_db.map(Num),
            collapsed_channels,
            output,
        }
    }
}

#[derive(Serialize)]
struct MemoryView {
    elements: u64,
    bits: u32,
    blocks: u64,
    metadata_bits_per_block: u64,
    payload_bytes: u64,
    metadata_bytes: u64,
    total_bytes: u64,
    bits_per_weight: f64,
    ratio_to_f32: f64,
    ratio_to_f16: f64,
}

impl From<&Memory> for MemoryView {
    fn from(m: &Memory) -> Self {
        Self {
            elements: m.elements,
            bits: m.bits,
            blocks: m.blocks,
            metadata_bits_per_block: m.metadata_bits_per_block,
            payload_bytes: m.payload_bytes,
            metadata_bytes: m.metadata_bytes,
            total_bytes: m.total_bytes,
            bits_per_weight: m.bits_per_weight,
            ratio_to_f32: m.ratio_to_f32,
            ratio_to_f16: m.ratio_to_f16,
        }
    }
}

#[derive(Serialize)]
struct RungView {
    granularity: String,
    scales: u64,
    metadata_bytes: u64,
    bits_per_weight: f64,
    mae: Num,
    rmse: Num,
    max_error: Num,
    sqnr_db: Option<Num>,
    collapsed_channels: usize,
    active: bool,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    output: Option<OutputView>,
}

impl From<&Rung> for RungView {
    fn from(r: &Rung) -> Self {
        Self {
            granularity: r.granularity.to_string(),
            scales: r.scales,
            metadata_bytes: r.memory.metadata_bytes,
            bits_per_weight: r.memory.bits_per_weight,
            mae: Num(r.overall.mae),
            rmse: Num(r.overall.rmse),
            max_error: Num(r.overall.max_error),
            sqnr_db: r.overall.sqnr_db.map(Num),
            collapsed_channels: r.collapsed_channels,
            active: r.active,
            output: r.output.as_ref().map(|o| OutputView::from(o.overall)),
        }
    }
}

#[derive(Serialize)]
struct EntryView<'a> {
    name: &'a str,
    integer: bool,
    about: &'a str,
    bits_per_weight: Option<f64>,
    total_bytes: Option<u64>,
    parts: &'a [CostPart],
    mae: Option<Num>,
    rmse: Option<Num>,
    max_error: Option<Num>,
    sqnr_db: Option<Num>,
    collapsed_channels: Option<usize>,
    skipped: Option<&'a str>,
    pareto: bool,
    active: bool,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    output: Option<EntryOutput>,
}

/// A format entry's output errors, and how it was quantized and drawn.
#[derive(Serialize)]
struct EntryOutput {
    #[serde(flatten)]
    metrics: OutputView,
    weighted: Option<bool>,
    pareto_output: bool,
}

impl<'a> EntryView<'a> {
    fn new(e: &'a Entry, calibrated: bool) -> Self {
        let m = e.measured();
        Self {
            name: &e.name,
            integer: e.integer,
            about: &e.about,
            bits_per_weight: e.bits_per_weight,
            total_bytes: e.total_bytes,
            parts: &e.parts,
            mae: m.map(|m| Num(m.overall.mae)),
            rmse: m.map(|m| Num(m.overall.rmse)),
            max_error: m.map(|m| Num(m.overall.max_error)),
            sqnr_db: m.and_then(|m| m.overall.sqnr_db).map(Num),
            collapsed_channels: m.map(|m| m.collapsed_channels),
            skipped: e.result.as_ref().err().map(String::as_str),
            pareto: e.pareto,
            active: e.active,
            output: calibrated.then(|| EntryOutput {
                metrics: OutputView::from(
                    m.and_then(|m| m.output.as_ref())
                        .map(|o| o.overall)
                        .unwrap_or_default(),
                ),
                weighted: m.map(|m| m.weighted),
                pareto_output: e.pareto_output,
            }),
        }
    }
}
