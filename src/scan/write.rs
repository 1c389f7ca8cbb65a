//! A [`Scan`] written as a table, JSON, CSV or Markdown into any [`Write`]. Only formats
//! numbers the scan holds.
//!
//! | format     | contents                                                                 |
//! |------------|--------------------------------------------------------------------------|
//! | `table`    | title, the sort key and legend, one aligned row per tensor, footer lines |
//! | `markdown` | the same as a GitHub table                                               |
//! | `json`     | `file`, `config` (+ `summary`), `sort`, `tensors`, `stored`, `skipped`, `failed` |
//! | `csv`      | a header and one row per tensor, nothing else                            |
//!
//! A GGUF scan's quantized tensors, inspected as stored, follow as a second table (table,
//! Markdown), a `stored` array (JSON), or, in CSV, rows whose `stored_*` columns (added only
//! when there are such tensors) are filled and whose error columns are empty.
//!
//! The table and Markdown escape control characters in the names they quote (a tensor name
//! is the file's to choose). In JSON, `gain_db` is the string `"inf"` when it is infinite (per-channel exact,
//! per-tensor not), as is any infinite error (`"inf"`, `"-inf"`: JSON has no infinity), and
//! `sqnr_db` is `null` when the error or the signal is zero.

use std::io::{self, Write};

use serde::Serialize;

use crate::core::config::{Axis, Config};
use crate::core::{Granularity, Metrics};
use crate::io::export::Format;
use crate::io::export::json::Num;
use crate::io::printable;
use crate::io::safetensors::format_shape;
use crate::scan::{Failed, Scan, ScanRow, Side, SkipReason, Skipped};

/// What the rows are sorted by, for the header of every format.
const SORT_KEY: &str = "gain = SQNR per channel - SQNR per tensor, in dB (= 20 log10 of RMSE per tensor / RMSE per channel), largest first";

/// Writes `scan` in `format`.
pub fn write_scan(out: &mut impl Write, scan: &Scan, format: Format) -> io::Result<()> {
    match format {
        Format::Table => write_table(out, scan, false),
        Format::Markdown => write_table(out, scan, true),
        Format::Json => write_json(out, scan),
        Format::Csv => write_csv(out, scan),
    }
}

/// A number with 4 significant digits, trailing zeros dropped; scientific notation outside
/// `[1e-4, 1e6)`.
fn num(x: f64) -> String {
    if x == 0.0 {
        return "0".to_owned();
    }
    if !x.is_finite() {
        return if x > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    let magnitude = x.abs();
    if !(1e-4..1e6).contains(&magnitude) {
        return format!("{x:.3e}");
    }
    let decimals = (3 - magnitude.log10().floor() as i32).max(0) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

/// SQNR for people: `exact` when there is no error, `-` when the signal is zero.
fn sqnr(m: &Metrics) -> String {
    match m.sqnr_db {
        Some(db) => num(db),
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

/// The lines under the table: skipped and failed tensors.
fn footer(scan: &Scan) -> Vec<String> {
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let mut lines = Vec::new();
    if scan.rows.is_empty() && scan.stored.is_empty() {
        lines.push("no floating tensor with 2 or more dimensions was analysed".to_owned());
    }
    let n = scan.skipped_count(&[SkipReason::OneDimensional, SkipReason::NotFloating]);
    if n > 0 {
        lines.push(format!(
            "skipped {n} tensor{}: 1-D or not floating",
            plural(n)
        ));
    }
    let n = scan.skipped_count(&[SkipReason::Empty]);
    if n > 0 {
        lines.push(format!("skipped {n} empty tensor{}", plural(n)));
    }
    if !scan.failed.is_empty() {
        let n = scan.failed.len();
        lines.push(format!("failed {n} tensor{}:", plural(n)));
        lines.extend(
            scan.failed
                .iter()
                .map(|f| format!("  {}: {}", printable(&f.name), printable(&f.error))),
        );
    }
    lines
}

const COLUMNS: [&str; 12] = [
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
];

fn cells(r: &ScanRow) -> [String; 12] {
    [
        printable(&r.name).into_owned(),
        r.dtype.clone(),
        format_shape(&r.shape),
        num(r.gain_db),
        num(r.tensor.metrics.mae),
        num(r.tensor.metrics.rmse),
        sqnr(&r.tensor.metrics),
        r.tensor.collapsed_channels.to_string(),
        num(r.channel.metrics.mae),
        num(r.channel.metrics.rmse),
        sqnr(&r.channel.metrics),
        num(r.bits_per_weight),
    ]
}

/// Escapes what Markdown would read as formatting or as a cell boundary.
fn md_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(
            c,
            '\\' | '|' | '*' | '_' | '[' | ']' | '<' | '>' | '`' | '#'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// What the table says instead of an empty table when only quantized tensors were scanned.
const NO_FLOAT_ROWS: &str = "no floating tensor of two or more dimensions to analyse";

/// The table (plain or Markdown): title, notes, one row per tensor, footer.
fn write_table(out: &mut impl Write, scan: &Scan, markdown: bool) -> io::Result<()> {
    let c = &scan.config;
    let esc = |s: &str| {
        if markdown { md_escape(s) } else { s.to_owned() }
    };
    let title = format!(
        "quantscope scan: {}; {}",
        esc(&printable(&scan.file)),
        esc(&c.summary())
    );
    let notes = [
        format!("sorted by {SORT_KEY}"),
        format!(
            "T = per tensor (one scale), C = per channel: {}",
            axis_words(c)
        ),
        "collapsed: channels whose values differ but all round to one code, per tensor".to_owned(),
        format!(
            "bits/w: bits per weight of the configuration as given ({})",
            c.granularity
        ),
    ];
    let rows: Vec<[String; 12]> = scan.rows.iter().map(cells).collect();
    // The first three columns are text (left-aligned), the rest numbers (right-aligned).
    let text_cols = 3;
    if markdown {
        writeln!(out, "{title}\n")?;
        for n in &notes {
            writeln!(out, "{}\n", esc(n))?;
        }
        if rows.is_empty() && !scan.stored.is_empty() {
            writeln!(out, "{NO_FLOAT_ROWS}")?;
        } else {
            let header: Vec<&str> = COLUMNS.to_vec();
            writeln!(out, "| {} |", header.join(" | "))?;
            let rule: Vec<&str> = (0..COLUMNS.len())
                .map(|i| if i < text_cols { "---" } else { "--:" })
                .collect();
            writeln!(out, "|{}|", rule.join("|"))?;
        }
        for row in &rows {
            let row: Vec<String> = row.iter().map(|s| esc(s)).collect();
            writeln!(out, "| {} |", row.join(" | "))?;
        }
        super::stored::write_section(out, &scan.stored, true, &esc)?;
        for line in footer(scan) {
            writeln!(out, "\n{}", esc(&line))?;
        }
        return Ok(());
    }
    writeln!(out, "{title}")?;
    for n in &notes {
        writeln!(out, "  {n}")?;
    }
    writeln!(out)?;
    let widths: Vec<usize> = (0..COLUMNS.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([COLUMNS[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[&str]| -> String {
        let parts: Vec<String> = cells
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (s, &w))| {
                if i < text_cols {
                    format!("{s:<w$}")
                } else {
                    format!("{s:>w$}")
                }
            })
            .collect();
        parts.join("  ").trim_end().to_owned()
    };
    if rows.is_empty() && !scan.stored.is_empty() {
        // A quantized GGUF file whose floats are all 1-D: no empty table.
        writeln!(out, "{NO_FLOAT_ROWS}")?;
    } else {
        writeln!(out, "{}", line(&COLUMNS))?;
    }
    for row in &rows {
        let refs: Vec<&str> = row.iter().map(String::as_str).collect();
        writeln!(out, "{}", line(&refs))?;
    }
    super::stored::write_section(out, &scan.stored, false, &esc)?;
    let footer = footer(scan);
    if !footer.is_empty() {
        writeln!(out)?;
    }
    for l in footer {
        writeln!(out, "{l}")?;
    }
    Ok(())
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
}

impl<'a> From<&'a ScanRow> for RowView<'a> {
    fn from(r: &'a ScanRow) -> Self {
        Self {
            name: &r.name,
            dtype: &r.dtype,
            shape: &r.shape,
            matrix: r.matrix,
            gain_db: Num(r.gain_db),
            tensor: SideView::from(&r.tensor),
            channel: SideView::from(&r.channel),
            bits_per_weight: r.bits_per_weight,
        }
    }
}

#[derive(Serialize)]
struct JsonScan<'a> {
    file: &'a str,
    config: ConfigView<'a>,
    compared: [Granularity; 2],
    sort: &'static str,
    tensors: Vec<RowView<'a>>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    stored: &'a [super::StoredRow],
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
        tensors: scan.rows.iter().map(RowView::from).collect(),
        stored: &scan.stored,
        skipped: &scan.skipped,
        failed: &scan.failed,
    };
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

/// A CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180).
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

/// A full-precision number for CSV; empty for none.
fn csv_num(x: Option<f64>) -> String {
    x.map_or_else(String::new, |x| x.to_string())
}

fn write_csv(out: &mut impl Write, scan: &Scan) -> io::Result<()> {
    let stored = !scan.stored.is_empty();
    writeln!(
        out,
        "name,dtype,shape,rows,cols,gain_db,\
         tensor_mae,tensor_rmse,tensor_max_error,tensor_sqnr_db,tensor_collapsed,tensor_bits_per_weight,\
         channel_mae,channel_rmse,channel_max_error,channel_sqnr_db,channel_collapsed,channel_bits_per_weight,\
         bits_per_weight{}",
        if stored {
            format!(",{}", super::stored::CSV_COLUMNS)
        } else {
            String::new()
        }
    )?;
    for r in &scan.rows {
        let shape: Vec<String> = r.shape.iter().map(ToString::to_string).collect();
        let mut fields = vec![
            csv_field(&r.name),
            r.dtype.clone(),
            shape.join("x"),
            r.matrix.0.to_string(),
            r.matrix.1.to_string(),
            csv_num(Some(r.gain_db)),
        ];
        for side in [&r.tensor, &r.channel] {
            let m = &side.metrics;
            fields.extend([
                csv_num(Some(m.mae)),
                csv_num(Some(m.rmse)),
                csv_num(Some(m.max_error)),
                csv_num(m.sqnr_db),
                side.collapsed_channels.to_string(),
                csv_num(Some(side.bits_per_weight)),
            ]);
        }
        fields.push(csv_num(Some(r.bits_per_weight)));
        if stored {
            fields.extend(std::iter::repeat_n(String::new(), 8));
        }
        writeln!(out, "{}", fields.join(","))?;
    }
    for r in &scan.stored {
        let shape: Vec<String> = r.shape.iter().map(ToString::to_string).collect();
        let (rows, cols) = (
            r.shape.iter().rev().skip(1).product::<usize>(),
            r.shape.last().copied().unwrap_or(0),
        );
        let mut fields = vec![
            csv_field(&r.name),
            r.dtype.clone(),
            shape.join("x"),
            rows.to_string(),
            cols.to_string(),
        ];
        fields.extend(std::iter::repeat_n(String::new(), 14));
        fields.extend(super::stored::csv_fields(r));
        writeln!(out, "{}", fields.join(","))?;
    }
    Ok(())
}
