//! The HTML and PDF reports: the table format's sections with charts, each chart one SVG
//! drawing (`svg`) that the HTML inlines and the PDF renders, each with a caption or table
//! that gives its numbers in words.
//!
//! ```text
//! Blocks     as in the table format
//! Channels   value plots of the worst channels on their grid, utilization bars (a histogram
//!            when summarised), then the table
//! Overall, Memory
//! Ladder     the table, error per channel at each granularity (boxes when summarised),
//!            bits per weight against RMSE (with the formats, given a format ladder)
//! Formats    (with a format ladder) the table; the cost chart when there is no Ladder section
//! Comparison (given one) as in the table format, with each channel's RMSE under A and B
//!            (chart) before the per-channel table
//! Values, Worked arithmetic   as in the table format
//! ```
//!
//! A matrix of more than [`MAX_CHANNELS`] channels is summarised: the per-channel tables and
//! charts list the [`WORST`] worst channels and the charts show distributions, and each
//! formula (worked arithmetic) stops after [`MAX_FORMULA_LINES`] lines, so a file's size does
//! not grow with the matrix (see `core::figures` for the other bounds).

mod charts;
mod html;
mod pdf;

use std::fmt;
use std::io::{self, Write};
use std::str::FromStr;

use crate::core::Report;
use crate::core::compare::Comparison;
use crate::core::figures::{Figures, MAX_CHANNELS, WORST};
use crate::io::export::doc::{self, Doc, Listing, Part};
use crate::io::export::{ExportOptions, Extras};

pub use pdf::FONT;

/// A report format with charts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Document {
    /// One self-contained HTML file: inline CSS and SVG, no scripts, no network.
    Html,
    /// A vector PDF with selectable text (an embedded font).
    Pdf,
}

impl Document {
    /// `html` or `pdf`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Html => "html",
            Self::Pdf => "pdf",
        }
    }
}

impl FromStr for Document {
    type Err = String;

    /// `html` (or `htm`) or `pdf`, ignoring case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "html" | "htm" => Ok(Self::Html),
            "pdf" => Ok(Self::Pdf),
            _ => Err(format!(
                "unknown document format {s:?}: expected html or pdf"
            )),
        }
    }
}

/// The PDF's page size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Paper {
    /// ISO A4, 210 x 297 mm.
    #[default]
    A4,
    /// US Letter, 8.5 x 11 in.
    Letter,
}

impl Paper {
    /// Width and height in PostScript points.
    #[must_use]
    pub fn points(self) -> (f32, f32) {
        match self {
            Self::A4 => (595.28, 841.89),
            Self::Letter => (612.0, 792.0),
        }
    }
}

impl fmt::Display for Paper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::A4 => "a4",
            Self::Letter => "letter",
        })
    }
}

impl FromStr for Paper {
    type Err = String;

    /// `a4` or `letter`, ignoring case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "a4" => Ok(Self::A4),
            "letter" => Ok(Self::Letter),
            _ => Err(format!("unknown paper {s:?}: expected a4 or letter")),
        }
    }
}

/// Another configuration of the same matrix to compare with: A, against the report written
/// (B).
#[derive(Debug, Clone, Copy)]
pub struct Versus<'a> {
    /// A's report.
    pub a: &'a Report,
    /// [`crate::core::compare::compare`] of A and the report written.
    pub comparison: &'a Comparison,
}

/// What the HTML and PDF formats are written with besides [`Extras`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Charts<'a> {
    /// The figures of the report ([`crate::core::figures::figures`]); without them the
    /// report has its tables but no charts.
    pub figures: Option<&'a Figures>,
    /// A comparison: the "Comparison" section (the same as [`Extras::compare`]; either
    /// gives the report one such section).
    pub versus: Option<Versus<'a>>,
    /// The PDF's page size.
    pub paper: Paper,
}

/// Lines of one formula (a channel's worked arithmetic grows with the matrix's columns)
/// printed before the rest are counted instead.
pub const MAX_FORMULA_LINES: usize = 40;

/// Cuts each formula of `parts` to [`MAX_FORMULA_LINES`], saying how many lines are left out.
fn shorten_formulas(parts: &mut Vec<Part>) {
    let mut i = 0;
    while i < parts.len() {
        if let Part::Formula(lines) = &mut parts[i]
            && lines.len() > MAX_FORMULA_LINES
        {
            let more = lines.len() - MAX_FORMULA_LINES;
            lines.truncate(MAX_FORMULA_LINES);
            parts.insert(
                i + 1,
                Part::Text(format!(
                    "… {more} more lines (the table and Markdown formats print them all)."
                )),
            );
            i += 1;
        }
        i += 1;
    }
}

/// Writes `report` as `format` to `out`.
pub fn write_document(
    out: &mut (impl Write + ?Sized),
    report: &Report,
    format: Document,
    options: &ExportOptions,
    extras: &Extras<'_>,
    charts: &Charts<'_>,
) -> io::Result<()> {
    let doc = build(report, *options, extras, charts);
    match format {
        Document::Html => {
            let mut buf = Vec::new();
            html::write(&mut buf, &doc)?;
            out.write_all(&buf)?;
        }
        Document::Pdf => out.write_all(&pdf::render(&doc, charts.paper)?)?,
    }
    out.flush()
}

/// `report` of `matrix` as an HTML or PDF document with its charts (the figures are formed
/// here, by [`crate::core::figures::figures`]), in memory: what `report --format html|pdf`
/// and the explorer's export write.
pub fn document(
    matrix: &crate::core::Matrix,
    report: &Report,
    format: Document,
    options: &ExportOptions,
    extras: &Extras<'_>,
    paper: Paper,
) -> Result<Vec<u8>, String> {
    let figures = crate::core::figures::figures(matrix, report).map_err(|e| e.to_string())?;
    let charts = Charts {
        figures: Some(&figures),
        versus: extras.compare,
        paper,
    };
    let mut buf = Vec::new();
    write_document(&mut buf, report, format, options, extras, &charts)
        .map_err(|e| e.to_string())?;
    Ok(buf)
}

/// The table format's content with the charts and the comparison added.
fn build(report: &Report, options: ExportOptions, extras: &Extras<'_>, charts: &Charts<'_>) -> Doc {
    let every: Vec<usize> = (0..report.channels.len()).collect();
    let listing = match charts.figures {
        Some(f) if f.summarised => Listing {
            rows: &f.listed,
            note: Some(format!(
                "The {} worst of {} channels (collapsed first, then the lowest SQNR), worst first: a matrix of more than {MAX_CHANNELS} channels is summarised. The CSV and JSON formats list every channel.",
                f.listed.len().min(WORST),
                report.channels.len()
            )),
        },
        _ => Listing::every(&every),
    };
    // One Comparison section, whichever of the two asks for it: the table format's, with
    // its chart added below.
    let extras = Extras {
        compare: extras.compare.or(charts.versus),
        ..*extras
    };
    let mut doc = doc::build_listing(report, options, &extras, &listing);
    if let Some(f) = charts.figures {
        let has_ladder = doc.sections.iter().any(|s| s.title == "Ladder");
        for section in &mut doc.sections {
            let mut figures = Vec::new();
            match section.title {
                "Channels" => {
                    figures = charts::value_plots(report, f);
                    figures.push(charts::utilization(report, f));
                }
                "Ladder" => {
                    figures.extend(charts::ladder_errors(report, f));
                    figures.extend(charts::cost_against_error(report, extras.format_ladder));
                }
                "Formats" if !has_ladder => {
                    figures.extend(charts::cost_against_error(report, extras.format_ladder));
                }
                "Comparison" => {
                    if let Some(v) = extras.compare {
                        figures.extend(charts::rmse_a_b(v.comparison, listing.rows));
                    }
                }
                _ => {}
            }
            let at = match section.title {
                // Before the table, after the words that explain its columns.
                "Channels" => section
                    .parts
                    .iter()
                    .position(|p| matches!(p, Part::Grid(_)))
                    .unwrap_or(section.parts.len()),
                // Between A and B overall and the table of every channel under both.
                "Comparison" => section
                    .parts
                    .iter()
                    .rposition(|p| matches!(p, Part::Grid(_)))
                    .unwrap_or(section.parts.len()),
                _ => section.parts.len(),
            };
            section.parts.splice(
                at..at,
                figures.into_iter().map(|f| Part::Figure(Box::new(f))),
            );
        }
    }
    for section in &mut doc.sections {
        shorten_formulas(&mut section.parts);
    }
    doc
}
