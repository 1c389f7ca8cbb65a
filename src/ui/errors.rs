//! The Errors pane: each channel's reconstruction error under per-tensor, per-channel and
//! one group granularity side by side, read from the report's ladder. The active
//! granularity's column is marked with the active glyph and styled.
//!
//! ```text
//! ┌ Errors (MAE) ────────────────────────┐
//! │MAE        ● tensor  channel  group:32│
//! │▶ quiet         0.1  0.00536         —│
//! │  loud      0.00214  0.00214         —│
//! │  overall    0.0511  0.00375         —│
//! └────────────────── — no group:32 rung ┘
//!
//! ┌ Errors (MAE / RMSE) ───────────────────────────────────────────────┐
//! │                        tensor         channel      ● group:32      │
//! │                     MAE  RMSE      MAE   RMSE      MAE   RMSE      │
//! │▶ layer.5.weight   0.165 0.185   0.0386 0.0434   0.0384 0.0433      │
//! │  overall          0.152 0.173   0.0584 0.0784   0.0463 0.0629      │
//! └────────────────────────────────────────────────────────────────────┘
//! ```
//!
//! A `—` marks a granularity the ladder has no rung for (a group not smaller than the row,
//! or a ladder not computed yet); the bottom border says which.
//!
//! Narrow panes (about 40 columns at 80x24) show one error, the MAE or the RMSE (`v` or
//! `Alt-v` switches, the bottom border says so); from about 60 columns each granularity
//! shows MAE and RMSE.
//!
//! While a configuration is pinned as A, the columns are A, the active configuration B and
//! the change B - A, read from the comparison:
//!
//! ```text
//! ┌ Errors (MAE) · A/B ──────────────────┐
//! │MAE        A tensor  ● B channel   B-A│
//! │▶ quiet         0.1    0.00536 -0.0946│
//! │  loud      0.00214    0.00214       0│
//! │  overall    0.0511    0.00375 -0.0473│
//! └──────────────────────────────────────┘
//! ```

use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::app::ErrorMetric;
use crate::core::compare::Comparison;
use crate::core::report::{Metrics, Rung};
use crate::core::{Granularity, Report};
use crate::ui::Theme;
use crate::ui::utilization::{
    channel_name, fit, missing, number_style, pad, render_message, sig, text_width, window,
};

/// The Errors pane.
#[derive(Debug)]
pub struct ErrorsPane<'a> {
    /// The results, if any.
    pub report: Option<&'a Report>,
    /// The error shown when there is room for one only.
    pub metric: ErrorMetric,
    /// The group granularity shown beside tensor and channel, e.g. `Group(32)`.
    pub compared: Granularity,
    /// A pinned configuration A beside the report's (B): the columns are A, B and B - A.
    pub comparison: Option<&'a Comparison>,
    /// The selected channel (clamped to the last one).
    pub selected: usize,
    /// The channels to list, in order (empty: every channel by index, unless
    /// `collapsed_only`).
    pub order: &'a [usize],
    /// Only the collapsed channels are listed (as the Utilization pane lists them).
    pub collapsed_only: bool,
    /// The pane has focus.
    pub focused: bool,
    /// The results are out of date.
    pub stale: bool,
    /// The method beyond rounding against round to nearest, in words, on the last line
    /// ([`crate::ui::method::line`]).
    pub method: Option<String>,
    /// Styles and glyphs.
    pub theme: &'a Theme,
}

/// Significant digits of the errors.
const DIGITS: usize = 3;
/// The label of the last row.
const OVERALL: &str = "overall";

/// Where a column's numbers come from.
#[derive(Clone, Copy)]
enum Source<'r> {
    /// One granularity's rung of the report's ladder (`None`: the ladder has none).
    Rung(Granularity, Option<&'r Rung>),
    /// The pinned configuration A.
    A(&'r Comparison),
    /// The active configuration B.
    B(&'r Comparison),
    /// B's errors less A's.
    Change(&'r Comparison),
}

impl Source<'_> {
    /// Channel `i`'s errors, if the source has them.
    fn channel(self, i: usize) -> Option<Metrics> {
        match self {
            Self::Rung(_, rung) => rung.and_then(|r| r.channels.get(i)).copied(),
            Self::A(c) => c.channels.get(i).map(|p| p.a),
            Self::B(c) => c.channels.get(i).map(|p| p.b),
            Self::Change(c) => c.channels.get(i).map(|p| Metrics {
                mae: p.mae_change,
                rmse: p.rmse_change,
                ..Metrics::default()
            }),
        }
    }

    /// Channel `i`'s output error (the whole matrix's with `None`): `output_mse`, else
    /// `imatrix_mse`, if the source has it.
    fn output(self, i: Option<usize>) -> Option<f64> {
        let of = |o: &crate::core::importance::OutputMetrics| o.output_mse.or(o.imatrix_mse);
        match (self, i) {
            (Self::Rung(_, rung), Some(i)) => rung
                .and_then(|r| r.output.as_ref())
                .and_then(|o| o.channels.get(i))
                .and_then(of),
            (Self::Rung(_, rung), None) => rung
                .and_then(|r| r.output.as_ref())
                .and_then(|o| of(&o.overall)),
            (Self::A(c), None) => c.output.as_ref().and_then(|o| of(&o.0)),
            (Self::B(c), None) => c.output.as_ref().and_then(|o| of(&o.1)),
            (Self::Change(c), None) => c.output.as_ref().and_then(|o| Some(of(&o.1)? - of(&o.0)?)),
            (Self::A(_) | Self::B(_) | Self::Change(_), Some(_)) => None,
        }
    }

    /// The whole matrix's errors, if the source has them.
    fn overall(self) -> Option<Metrics> {
        match self {
            Self::Rung(_, rung) => rung.map(|r| r.overall),
            Self::A(c) => Some(c.overall.0),
            Self::B(c) => Some(c.overall.1),
            Self::Change(c) => Some(Metrics {
                mae: c.overall.1.mae - c.overall.0.mae,
                rmse: c.overall.1.rmse - c.overall.0.rmse,
                ..Metrics::default()
            }),
        }
    }
}

/// How `metric` is named over `report`: the output error is `imatrix MSE` without
/// activations.
fn metric_name(metric: ErrorMetric, report: &Report) -> &'static str {
    let imatrix_only = report
        .output
        .as_ref()
        .is_some_and(|o| o.overall.output_mse.is_none());
    match metric {
        ErrorMetric::Output if imatrix_only => "imatrix MSE",
        m => m.name(),
    }
}

/// One column: a granularity's rung, or A, B or the change between them.
struct Column<'r> {
    source: Source<'r>,
    active: bool,
    /// The numbers are changes, shown with their sign.
    signed: bool,
    heading: String,
    mae: usize,
    rmse: usize,
    width: usize,
}

impl ErrorsPane<'_> {
    /// The error shown when there is room for one: the output error only once the report
    /// has it.
    fn metric(&self) -> ErrorMetric {
        match (self.metric, self.report) {
            (ErrorMetric::Output, Some(r)) if r.output.is_some() => ErrorMetric::Output,
            (ErrorMetric::Output, _) => ErrorMetric::Mae,
            (m, _) => m,
        }
    }

    /// What the key that switches the error shows next: side by side, the output error or
    /// MAE and RMSE again.
    fn next_name(&self, report: &Report, wide: bool) -> &'static str {
        match (wide, self.metric()) {
            (true, ErrorMetric::Output) => "MAE / RMSE",
            (true, _) => metric_name(ErrorMetric::Output, report),
            (false, m) => metric_name(m.next(report.output.is_some()), report),
        }
    }

    /// What a cell of `source` shows for channel `i` (the whole matrix with `None`): its
    /// errors, or its output error in both fields when that is the error shown.
    fn cell(&self, source: Source<'_>, i: Option<usize>) -> Option<Metrics> {
        if self.metric() == ErrorMetric::Output {
            return source.output(i).map(|v| Metrics {
                mae: v,
                rmse: v,
                ..Metrics::default()
            });
        }
        match i {
            Some(i) => source.channel(i),
            None => source.overall(),
        }
    }

    /// Tensor, channel and the compared granularity, without repeats.
    fn granularities(&self) -> Vec<Granularity> {
        if let Some(r) = self.report
            && r.config.format.is_some()
        {
            // A format has its own blocks only.
            return vec![r.config.granularity];
        }
        let mut out = vec![Granularity::Tensor, Granularity::Channel];
        if !out.contains(&self.compared) {
            out.push(self.compared);
        }
        out
    }

    /// `x` to three significant digits; with its sign when `signed` (a change).
    fn number(x: f64, signed: bool) -> String {
        let text = sig(x, DIGITS);
        if signed && x > 0.0 {
            format!("+{text}")
        } else {
            text
        }
    }

    fn mae_text(&self, m: Option<Metrics>, signed: bool) -> String {
        m.map_or_else(
            || missing(self.theme).to_string(),
            |m| Self::number(m.mae, signed),
        )
    }

    /// The one error a narrow pane shows.
    fn narrow_text(&self, m: Option<Metrics>, signed: bool) -> String {
        match self.metric() {
            ErrorMetric::Mae | ErrorMetric::Output => self.mae_text(m, signed),
            ErrorMetric::Rmse => self.rmse_text(m, signed),
        }
    }

    fn rmse_text(&self, m: Option<Metrics>, signed: bool) -> String {
        m.map_or_else(
            || missing(self.theme).to_string(),
            |m| Self::number(m.rmse, signed),
        )
    }

    /// The sources of the columns: A, B and the change while a configuration is pinned,
    /// else the granularities.
    fn sources<'r>(&'r self, report: &'r Report) -> Vec<Source<'r>> {
        if let Some(c) = self.comparison {
            return vec![Source::A(c), Source::B(c), Source::Change(c)];
        }
        self.granularities()
            .into_iter()
            .map(|g| Source::Rung(g, report.rung(g)))
            .collect()
    }
}

impl ErrorsPane<'_> {
    /// The screen rows of the listed channels in `area` (the pane with its border), each
    /// with its channel: where a click selects one.
    #[must_use]
    pub fn item_rows(&self, area: Rect) -> Vec<(u16, usize)> {
        let Some(report) = self.report else {
            return Vec::new();
        };
        if self.collapsed_only && self.order.is_empty() {
            return Vec::new();
        }
        let inner = self.theme.block("", false, false).inner(area);
        if inner.is_empty() {
            return Vec::new();
        }
        let table = self.table(report, inner);
        // Below the heading (two lines when MAE and RMSE are side by side).
        let first = inner.y + 1 + u16::from(table.wide);
        (first..inner.bottom()).zip(table.rows).collect()
    }
}

impl Widget for &ErrorsPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let theme = self.theme;
        let Some(report) = self.report else {
            let block = theme.block("Errors", self.focused, self.stale);
            render_message(block, "no results yet", area, buf, theme);
            return;
        };
        if self.collapsed_only && self.order.is_empty() {
            let block = theme.block("Errors", self.focused, self.stale);
            render_message(block, "no channel to list (f shows all)", area, buf, theme);
            return;
        }
        let full = theme.block("", false, false).inner(area);
        let (inner, method_row) = self.method_row(full);
        let table = self.table(report, inner);
        let mut title = if table.wide {
            "Errors (MAE / RMSE)".to_string()
        } else {
            format!("Errors ({})", metric_name(self.metric(), report))
        };
        if self.comparison.is_some() {
            title.push(' ');
            title.push_str(crate::ui::utilization::sep(theme));
            title.push_str(" A/B");
        }
        if table.clamp_mark {
            title.push(' ');
            title.push_str(crate::ui::utilization::sep(theme));
            title.push_str(" ! clamped");
        }
        let mut block = theme.block(&title, self.focused, self.stale);
        if !table.wide || report.output.is_some() {
            let key = crate::app::keymap::first_key(
                crate::app::keymap::Mode::Global,
                crate::app::keymap::Action::ToggleErrorMetric,
            )
            .unwrap_or_default();
            block = block.title_bottom(
                Line::styled(
                    format!(" {key}: {} ", self.next_name(report, table.wide)),
                    theme.dim,
                )
                .left_aligned(),
            );
        }
        if let Some(note) = self.note(report, &table.columns) {
            block =
                block.title_bottom(Line::styled(format!(" {note} "), theme.dim).right_aligned());
        }
        block.render(area, buf);
        if inner.is_empty() {
            return;
        }
        let selected = if self.selected >= report.channels.len() {
            table.rows.last().copied().unwrap_or(0)
        } else {
            self.selected
        };
        let mut lines = vec![table.heading()];
        if table.wide {
            lines.push(table.subheading());
        }
        for &i in &table.rows {
            let ch = &report.channels[i];
            let cells: Vec<_> = table
                .columns
                .iter()
                .map(|c| self.cell(c.source, Some(i)))
                .collect();
            let mut line = table.row(&channel_name(ch), &cells, i == selected, theme.text);
            if table.clamp_mark {
                // At the end of the line: the active configuration clamped values of this
                // channel.
                let mark = if ch.clipped > 0 { "!" } else { " " };
                line.spans.push(Span::styled(mark, theme.bad));
            }
            lines.push(line);
        }
        if table.overall {
            let cells: Vec<_> = table
                .columns
                .iter()
                .map(|c| self.cell(c.source, None))
                .collect();
            lines.push(table.row(OVERALL, &cells, false, theme.heading));
        }
        let next = crate::ui::rows::render_lines(lines, inner, buf);
        if let Some((row, text)) = method_row {
            self.draw_method(row, next, text, buf);
        }
    }
}

impl ErrorsPane<'_> {
    /// Draws the method's line under the table (on `row`, its last line, when the table
    /// fills the pane; else on `next`, the line after the table).
    fn draw_method(&self, row: Rect, next: u16, text: &str, buf: &mut Buffer) {
        let row = Rect {
            y: next.min(row.y),
            ..row
        };
        let text = fit(text, usize::from(row.width), self.theme.glyphs.ascii);
        Line::styled(text, self.theme.active).render(row, buf);
    }

    /// The table's area and the method's line: the last row of `full`, when there are rows
    /// to spare.
    fn method_row(&self, full: Rect) -> (Rect, Option<(Rect, &String)>) {
        match &self.method {
            Some(text) if full.height >= 3 => (
                Rect {
                    height: full.height - 1,
                    ..full
                },
                Some((
                    Rect {
                        y: full.bottom() - 1,
                        height: 1,
                        ..full
                    },
                    text,
                )),
            ),
            _ => (full, None),
        }
    }
}

impl ErrorsPane<'_> {
    /// The columns with the widths the channels in `rows` need.
    fn columns<'r>(&'r self, report: &'r Report, rows: &[usize]) -> Vec<Column<'r>> {
        let width = |texts: &mut dyn Iterator<Item = String>| {
            texts.map(|s| text_width(&s)).max().unwrap_or(1)
        };
        let active_glyph = self.theme.glyphs.active;
        self.sources(report)
            .into_iter()
            .map(|source| {
                let signed = matches!(source, Source::Change(_));
                let (heading, active) = match source {
                    Source::Rung(g, _) => {
                        let active = g == report.config.granularity;
                        let heading = if let Some(f) = report.config.format {
                            format!("{active_glyph} {}", f.name)
                        } else if active {
                            format!("{active_glyph} {g}")
                        } else {
                            g.to_string()
                        };
                        (heading, active)
                    }
                    Source::A(c) => (side_heading("A", c, false), false),
                    Source::B(c) => (
                        format!("{active_glyph} {}", side_heading("B", c, true)),
                        true,
                    ),
                    Source::Change(_) => ("B-A".to_string(), false),
                };
                let mae = width(
                    &mut rows
                        .iter()
                        .map(|&i| self.mae_text(self.cell(source, Some(i)), signed))
                        .chain([self.mae_text(self.cell(source, None), signed)]),
                );
                let rmse = width(
                    &mut rows
                        .iter()
                        .map(|&i| self.rmse_text(self.cell(source, Some(i)), signed))
                        .chain([self.rmse_text(self.cell(source, None), signed)]),
                );
                Column {
                    source,
                    active,
                    signed,
                    heading,
                    mae: mae.max(3),
                    rmse: rmse.max(4),
                    width: 0,
                }
            })
            .collect()
    }

    /// What fits in `inner`: MAE and RMSE side by side when there is room for them and for
    /// two heading lines, the window of channels around the selected one, and the widths.
    fn table<'r>(&'r self, report: &'r Report, inner: Rect) -> Table<'r, 'r> {
        let (w, h) = (usize::from(inner.width), usize::from(inner.height));
        let listed: Vec<usize> = if self.order.is_empty() {
            (0..report.channels.len()).collect()
        } else {
            self.order.to_vec()
        };
        let n = listed.len();
        let selected = listed.iter().position(|&c| c == self.selected).unwrap_or(
            if self.selected >= report.channels.len() {
                n.saturating_sub(1)
            } else {
                0
            },
        );
        let probe: Vec<usize> = listed[window(selected, n, h.saturating_sub(3).max(1))].to_vec();
        let mut columns = self.columns(report, &probe);
        let wide_width: usize = columns
            .iter()
            .map(|c| 1 + text_width(&c.heading).max(c.mae + 1 + c.rmse))
            .sum();
        // The output error is one number per column: never side by side.
        let wide =
            h >= 4 && 2 + OVERALL.len() + wide_width <= w && self.metric() != ErrorMetric::Output;
        let body = h.saturating_sub(if wide { 2 } else { 1 });
        // The overall line when every channel fits beside it, or when the list scrolls anyway
        // and has room to spare.
        let overall = body > n || body >= 4;
        let rows: Vec<usize> = listed[window(selected, n, body - usize::from(overall))].to_vec();
        if rows != probe {
            columns = self.columns(report, &rows);
        }
        for c in &mut columns {
            let numbers = match (wide, self.metric()) {
                (true, _) => c.mae + 1 + c.rmse,
                (false, ErrorMetric::Mae | ErrorMetric::Output) => c.mae,
                (false, ErrorMetric::Rmse) => c.rmse,
            };
            c.width = text_width(&c.heading).max(numbers);
        }
        let clamp_mark = rows.iter().any(|&i| report.channels[i].clipped > 0);
        let numbers_width: usize =
            columns.iter().map(|c| 1 + c.width).sum::<usize>() + usize::from(clamp_mark);
        let longest = rows
            .iter()
            .map(|&i| &report.channels[i])
            .map(|c| text_width(&fit(&channel_name(c), usize::MAX, self.theme.glyphs.ascii)))
            .chain([OVERALL.len()])
            .max()
            .unwrap_or(0);
        let label = longest.min(w.saturating_sub(2 + numbers_width)).max(3);
        // Spare width widens the gaps between columns (up to three spaces).
        let spare = w.saturating_sub(2 + label + numbers_width);
        let gap = " ".repeat(1 + (spare / columns.len().max(1)).min(2));
        Table {
            pane: self,
            columns,
            rows,
            overall,
            label,
            wide,
            gap,
            clamp_mark,
        }
    }
}

/// A side's column heading: `A` or `B`, with that side's value of the first setting that
/// differs when it is short (`A tensor`, `B group:32`, `A bits 4`).
fn side_heading(side: &str, c: &Comparison, b: bool) -> String {
    let Some(d) = c.differences.first() else {
        return side.to_string();
    };
    let value = crate::ui::compare::side_value(d, if b { &d.b } else { &d.a });
    if text_width(&value) <= 9 {
        format!("{side} {value}")
    } else {
        side.to_string()
    }
}

impl ErrorsPane<'_> {
    /// What a `—` means, when a column has one.
    fn note(&self, report: &Report, columns: &[Column<'_>]) -> Option<String> {
        let gone = columns.iter().find_map(|c| match c.source {
            Source::Rung(g, None) => Some(g),
            _ => None,
        })?;
        let dash = missing(self.theme);
        Some(if report.ladder.is_empty() {
            format!("{dash} ladder not computed")
        } else {
            format!("{dash} no {gone} rung")
        })
    }
}

/// The layout of the table and the line builders.
struct Table<'p, 'r> {
    pane: &'p ErrorsPane<'p>,
    columns: Vec<Column<'r>>,
    /// The channels shown.
    rows: Vec<usize>,
    /// The `overall` line fits.
    overall: bool,
    label: usize,
    wide: bool,
    gap: String,
    /// A listed channel had values clamped: a column of `!` marks follows the table.
    clamp_mark: bool,
}

impl Table<'_, '_> {
    fn column_style(&self, c: &Column<'_>, base: Style) -> Style {
        if c.active {
            base.patch(self.pane.theme.active)
        } else {
            base
        }
    }

    fn heading(&self) -> Line<'static> {
        let theme = self.pane.theme;
        // The label column is headed by the metric when there is one per column.
        let first = if self.wide {
            ""
        } else {
            self.pane.metric.name()
        };
        let mut spans = vec![Span::styled(
            pad(first, self.label + 2, Alignment::Left),
            theme.heading,
        )];
        for c in &self.columns {
            spans.push(Span::raw(self.gap.clone()));
            spans.push(Span::styled(
                pad(&c.heading, c.width, Alignment::Right),
                self.column_style(c, theme.heading),
            ));
        }
        Line::from(spans)
    }

    fn subheading(&self) -> Line<'static> {
        let theme = self.pane.theme;
        let mut spans = vec![Span::raw(" ".repeat(self.label + 2))];
        for c in &self.columns {
            let text = format!(
                "{} {}",
                pad("MAE", c.mae, Alignment::Right),
                pad("RMSE", c.rmse, Alignment::Right)
            );
            spans.push(Span::raw(self.gap.clone()));
            spans.push(Span::styled(
                pad(&text, c.width, Alignment::Right),
                self.column_style(c, theme.heading),
            ));
        }
        Line::from(spans)
    }

    fn row(
        &self,
        name: &str,
        cells: &[Option<Metrics>],
        selected: bool,
        label_style: Style,
    ) -> Line<'static> {
        let pane = self.pane;
        let theme = pane.theme;
        let numbers = number_style(theme, pane.stale);
        let pointer = if selected {
            format!("{} ", theme.glyphs.pointer)
        } else {
            "  ".to_string()
        };
        let mut spans = vec![
            Span::raw(pointer),
            Span::styled(
                pad(
                    &fit(name, self.label, theme.glyphs.ascii),
                    self.label,
                    Alignment::Left,
                ),
                label_style,
            ),
        ];
        for (c, m) in self.columns.iter().zip(cells) {
            let text = if self.wide {
                format!(
                    "{} {}",
                    pad(&pane.mae_text(*m, c.signed), c.mae, Alignment::Right),
                    pad(&pane.rmse_text(*m, c.signed), c.rmse, Alignment::Right)
                )
            } else {
                pane.narrow_text(*m, c.signed)
            };
            spans.push(Span::raw(self.gap.clone()));
            spans.push(Span::styled(
                pad(&text, c.width, Alignment::Right),
                self.column_style(c, numbers),
            ));
        }
        crate::ui::rows::item_line(spans, selected, theme.selected)
    }
}
