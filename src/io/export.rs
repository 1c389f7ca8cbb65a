//! Exporters: a [`Report`] written as a plain-text table, JSON, CSV, Markdown, HTML or PDF
//! into any [`Write`].
//!
//! Exporters only format numbers the [`Report`] holds; they compute nothing. The table and
//! Markdown formats show the same content (built once by the private `doc` module), JSON is
//! the complete record for scripts, and CSV is one row per channel for spreadsheets.
//!
//! | format     | for                    | blocks         | channels | ladder                     |
//! |------------|------------------------|----------------|----------|----------------------------|
//! | `table`    | people in a terminal   | first 16       | all      | rungs, MAE per channel     |
//! | `markdown` | pasting into an issue  | first 16       | all      | rungs, MAE per channel     |
//! | `json`     | scripts                | all            | all      | rungs (no per-channel)     |
//! | `csv`      | spreadsheets, pandas   | none           | all      | MAE and RMSE per channel   |
//! | `html`     | a browser, printing    | first 16       | all, or the 32 worst past 128 | rungs, charts |
//! | `pdf`      | reading, printing      | first 16       | all, or the 32 worst past 128 | rungs, charts |
//!
//! HTML and PDF ([`rich`], [`write_document`]) add charts drawn from
//! [`crate::core::figures`], and take an optional comparison.
//!
//! [`write_report_explained`] adds a "Worked arithmetic" section to the table and Markdown
//! formats (one [`ChannelExplanation`] per channel to explain); [`worked_arithmetic`] gives
//! the same lines for one channel, for a pane.

pub mod ascii;
mod csv;
mod doc;
pub(crate) mod json;
mod markdown;
pub mod num;
pub mod rich;
mod scan;
pub mod stored;
mod svg;
mod table;
mod tensors;

use std::fmt;
use std::io::{BufWriter, Write};
use std::str::FromStr;

use crate::core::Report;
use crate::core::explain::ChannelExplanation;
use crate::core::format_ladder::FormatLadder;

pub use doc::worked::lines as worked_arithmetic;

/// The methods' worked arithmetic as lines (AWQ's scales at one ratio, one GPTQ column's
/// error pushed onward), as the Methods section and the explorer show them.
#[must_use]
pub fn method_worked_arithmetic(w: &crate::core::method::worked::Worked) -> Vec<String> {
    doc::method_worked_lines(w)
}
pub use rich::{Charts, Document, Paper, Versus, write_document};
pub use scan::write_scan;
pub use tensors::write_tensor_list;

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Aligned plain text for a terminal: no colour, collapsed channels marked in words.
    Table,
    /// One JSON object with stable keys; see the `json` module's schema.
    Json,
    /// One row per channel with a header row (RFC 4180 quoting).
    Csv,
    /// GitHub-flavoured Markdown tables, one `##` section each, for pasting into an issue.
    Markdown,
}

impl Format {
    /// Every format, in the order help text lists them.
    pub const ALL: [Self; 4] = [Self::Table, Self::Json, Self::Csv, Self::Markdown];

    /// The name [`FromStr`] accepts and [`Display`](fmt::Display) prints.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Table => "table",
            Self::Json => "json",
            Self::Csv => "csv",
            Self::Markdown => "markdown",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A format name that is not `table`, `json`, `csv`, `markdown` or `md`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format {0:?}: expected table, json, csv or markdown (md)")]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;

    /// Parses a format name, ignoring case and surrounding spaces.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "table" => Ok(Self::Table),
            "json" => Ok(Self::Json),
            "csv" => Ok(Self::Csv),
            "markdown" | "md" => Ok(Self::Markdown),
            _ => Err(UnknownFormat(s.to_string())),
        }
    }
}

/// What to include besides the summary every format has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportOptions {
    /// Each channel's codes and dequantized values (JSON: `codes` and `dequantized` arrays;
    /// CSV: a `codes` column; table and Markdown: a "Values" section, 32 values a row at
    /// most).
    pub values: bool,
    /// The granularity ladder, when the report has one (JSON writes `"ladder": []`
    /// without it, so the keys stay the same).
    pub ladder: bool,
}

impl Default for ExportOptions {
    /// No values, the ladder on (as [`crate::core::analyse`] computes it by default).
    fn default() -> Self {
        Self {
            values: false,
            ladder: true,
        }
    }
}

/// What a report is written with besides its own sections.
#[derive(Debug, Clone, Copy, Default)]
pub struct Extras<'a> {
    /// Channels whose arithmetic the table and Markdown formats show ("Worked arithmetic").
    pub explain: &'a [ChannelExplanation],
    /// The format ladder of the same matrix: a "Formats" section (table, Markdown), the
    /// `formats` key (JSON), `mae_<format>` and `rmse_<format>` columns (CSV).
    pub format_ladder: Option<&'a FormatLadder>,
    /// Another configuration of the same matrix (A) to compare the report (B) with: a
    /// "Comparison" section (table, Markdown, HTML, PDF), `{"a", "b", "comparison"}` (JSON),
    /// `a_mae`, `a_rmse`, `a_collapsed`, `rmse_change` columns (CSV).
    pub compare: Option<Versus<'a>>,
    /// Methods beyond rounding on the same layer: a "Methods" section (table, Markdown,
    /// HTML, PDF), the `methods` key (JSON), `<method>_output_mse` columns (CSV).
    pub methods: Option<&'a crate::core::method::run::Methods>,
}

/// Writes `report` in `format` to `out`.
///
/// Output is buffered internally and flushed before returning, so `out` can be an
/// unbuffered handle such as standard output.
pub fn write_report(
    out: &mut (impl Write + ?Sized),
    report: &Report,
    format: Format,
    options: &ExportOptions,
) -> std::io::Result<()> {
    write_report_explained(out, report, format, options, &[])
}

/// Writes `report` like [`write_report`], with a "Worked arithmetic" section for each of
/// `explain` at the end of the table and Markdown formats (JSON and CSV ignore it).
///
/// Build each explanation with [`crate::core::explain::explain_channel`] on the same
/// report.
pub fn write_report_explained(
    out: &mut (impl Write + ?Sized),
    report: &Report,
    format: Format,
    options: &ExportOptions,
    explain: &[ChannelExplanation],
) -> std::io::Result<()> {
    write_report_with(
        out,
        report,
        format,
        options,
        &Extras {
            explain,
            ..Extras::default()
        },
    )
}

/// Writes `report` like [`write_report`], with the [`Extras`] given.
pub fn write_report_with(
    out: &mut (impl Write + ?Sized),
    report: &Report,
    format: Format,
    options: &ExportOptions,
    extras: &Extras<'_>,
) -> std::io::Result<()> {
    let mut out = BufWriter::new(out);
    match format {
        Format::Table => table::write(&mut out, &doc::build(report, *options, extras))?,
        Format::Markdown => markdown::write(&mut out, &doc::build(report, *options, extras))?,
        Format::Json => match extras.compare {
            // Both reports and what differs: {"a": ..., "b": ..., "comparison": ...}.
            Some(v) => {
                out.write_all(b"{\n\"a\": ")?;
                json::write(&mut out, v.a, *options, None, None)?;
                out.write_all(b",\n\"b\": ")?;
                json::write(
                    &mut out,
                    report,
                    *options,
                    extras.format_ladder,
                    extras.methods,
                )?;
                out.write_all(b",\n\"comparison\": ")?;
                serde_json::to_writer_pretty(&mut out, v.comparison)?;
                out.write_all(b"\n}\n")?;
            }
            None => json::write(
                &mut out,
                report,
                *options,
                extras.format_ladder,
                extras.methods,
            )?,
        },
        Format::Csv => csv::write(&mut out, report, *options, extras)?,
    }
    out.flush()
}
