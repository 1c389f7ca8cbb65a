//! The content the table and Markdown exporters share: sections of text, formulas and grids
//! of already-formatted cells, built once from a [`Report`] so the two formats cannot drift.
//!
//! ```text
//! header line: config summary and shape
//! Blocks    the first 16 blocks, then "… N more blocks"
//! Channels  every channel: errors, levels, utilization bar, COLLAPSED
//! Overall   errors over the matrix, collapsed channels
//! Importance, Output error  (with importance or activations) see `importance`
//! Memory    bytes, bits per weight and its arithmetic, ratios to f32 and f16
//! Ladder    (with options.ladder) one row per granularity, then MAE per channel per rung
//! Formats   (with a format ladder) every preset and format by bits per weight, Pareto front marked
//! Methods   (with methods) each method's output error beside round to nearest; see `methods`
//! Values    (with options.values) codes and dequantized values per channel
//! Worked arithmetic  (with explanations) scale, zero point and every value's arithmetic
//! ```
//!
//! `detail` builds Blocks, Channels and Values; `totals` builds Overall, Memory and Ladder;
//! `worked` builds Worked arithmetic.

mod compare;
mod detail;
mod format_ladder;
mod importance;
mod methods;
mod totals;
pub(super) mod worked;

pub(crate) use methods::{quantizer, worked_lines as method_worked_lines};

use crate::core::{ChannelReport, Report};
use crate::io::export::{ExportOptions, Extras};

/// Blocks listed before the rest are counted instead.
const MAX_BLOCKS: usize = 16;
/// Values of a row listed in the Values section before `…`.
const MAX_VALUES: usize = 32;
/// Widest label the plain-text table prints before truncating it.
const LABEL_WIDTH: usize = 24;

/// Everything the table and Markdown formats print.
pub(super) struct Doc {
    /// One line: the configuration summary and the matrix shape.
    pub header: String,
    /// In print order.
    pub sections: Vec<Section>,
}

/// A titled section.
pub(super) struct Section {
    /// `Blocks`, `Channels`, …
    pub title: &'static str,
    /// In print order.
    pub parts: Vec<Part>,
}

/// One piece of a section.
pub(super) enum Part {
    /// A sentence.
    Text(String),
    /// Lines of arithmetic, printed verbatim (Markdown puts them in a code block).
    Formula(Vec<String>),
    /// A table of formatted cells.
    Grid(Grid),
    /// A chart with its text equivalent (HTML and PDF only; the text formats never get one).
    Figure(Box<Figure>),
}

/// A chart: an SVG drawing and the words and numbers that say the same.
pub(super) struct Figure {
    /// A short title.
    pub title: String,
    /// The drawing.
    pub svg: super::svg::Svg,
    /// The numbers the chart shows, in words.
    pub caption: String,
    /// The numbers as a table, when the caption cannot hold them all.
    pub table: Option<Grid>,
}

/// Column alignment.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Align {
    /// Text.
    Left,
    /// Numbers.
    Right,
}

/// One column of a [`Grid`].
pub(super) struct Column {
    /// The header cell.
    pub name: String,
    /// How the cells line up.
    pub align: Align,
    /// The plain-text table truncates longer cells with `…` (labels); Markdown does not.
    pub max_width: Option<usize>,
}

/// Rows of formatted cells under named columns.
pub(super) struct Grid {
    /// The columns.
    pub columns: Vec<Column>,
    /// One cell per column each.
    pub rows: Vec<Vec<String>>,
}

impl Grid {
    /// A grid with these columns and no rows; cells are never truncated.
    pub(super) fn new(columns: &[(&str, Align)]) -> Self {
        let columns = columns
            .iter()
            .map(|&(name, align)| Column {
                name: name.to_string(),
                align,
                max_width: None,
            })
            .collect();
        Self {
            columns,
            rows: Vec::new(),
        }
    }

    /// This grid with one more column.
    pub(super) fn column(mut self, name: &str, align: Align, max_width: Option<usize>) -> Self {
        self.columns.push(Column {
            name: name.to_string(),
            align,
            max_width,
        });
        self
    }
}

/// Builds the shared content of `report`, with the worked arithmetic of `explain` last.
pub(super) fn build(report: &Report, options: ExportOptions, extras: &Extras<'_>) -> Doc {
    let every: Vec<usize> = (0..report.channels.len()).collect();
    build_listing(report, options, extras, &Listing::every(&every))
}

/// The channels the Channels, Ladder and Values sections list.
pub(super) struct Listing<'a> {
    /// Row indices, in the order listed.
    pub rows: &'a [usize],
    /// A sentence saying which they are, when not every channel.
    pub note: Option<String>,
}

impl<'a> Listing<'a> {
    /// Every channel.
    pub fn every(rows: &'a [usize]) -> Self {
        Self { rows, note: None }
    }
}

/// [`build`] listing only `listing`'s channels.
pub(super) fn build_listing(
    report: &Report,
    options: ExportOptions,
    extras: &Extras<'_>,
    listing: &Listing<'_>,
) -> Doc {
    let (rows, cols) = report.shape;
    let mut sections = vec![
        detail::blocks(report),
        detail::channels(report, listing),
        totals::overall(report),
    ];
    sections.extend(importance::importance(report));
    sections.extend(importance::output(report, listing));
    sections.push(totals::memory(report));
    if options.ladder && !report.ladder.is_empty() {
        sections.push(totals::ladder(report, listing));
    }
    if let Some(l) = extras.format_ladder {
        sections.push(format_ladder::section(l, report.output.as_ref()));
    }
    if let Some(m) = extras.methods {
        sections.push(methods::section(m, report, listing));
    }
    if let Some(v) = extras.compare {
        sections.push(compare::section(v.a, report, v.comparison, listing.rows));
    }
    if options.values {
        sections.push(detail::values(report, listing));
    }
    if !extras.explain.is_empty() {
        sections.push(worked::section(extras.explain));
    }
    let weighted = if report.quantized_with.is_none() {
        ""
    } else if report.config.clipping == crate::core::config::Clipping::MseWeighted {
        ", clipped with the importance (mse-weighted)"
    } else {
        ", quantized with the importance (as llama-quantize --imatrix)"
    };
    Doc {
        header: format!(
            "quantscope: {}{weighted}; matrix {rows} x {cols}",
            report.applied()
        ),
        sections,
    }
}

fn has_labels(report: &Report) -> bool {
    report.channels.iter().any(|c| c.label.is_some())
}

/// The `#` column, plus a label column when any channel is labelled.
pub(super) fn channel_columns(labels: bool) -> Grid {
    let grid = Grid::new(&[("#", Align::Right)]);
    if labels {
        grid.column("label", Align::Left, Some(LABEL_WIDTH))
    } else {
        grid
    }
}

/// The cells under [`channel_columns`].
pub(super) fn channel_cells(labels: bool, c: &ChannelReport) -> Vec<String> {
    let mut row = vec![c.index.to_string()];
    if labels {
        row.push(c.label.as_deref().map(clean).unwrap_or_default());
    }
    row
}

/// A label on one line: control characters become spaces.
fn clean(label: &str) -> String {
    label
        .chars()
        .map(|ch| if ch.is_control() { ' ' } else { ch })
        .collect()
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
