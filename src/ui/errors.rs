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

use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::app::ErrorMetric;
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
    /// Styles and glyphs.
    pub theme: &'a Theme,
}

/// Significant digits of the errors.
const DIGITS: usize = 3;
/// The label of the last row.
const OVERALL: &str = "overall";

/// One granularity's column.
struct Column<'r> {
    granularity: Granularity,
    rung: Option<&'r Rung>,
    active: bool,
    heading: String,
    mae: usize,
    rmse: usize,
    width: usize,
}

impl ErrorsPane<'_> {
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

    fn mae_text(&self, m: Option<&Metrics>) -> String {
        m.map_or_else(|| missing(self.theme).to_string(), |m| sig(m.mae, DIGITS))
    }

    /// The one error a narrow pane shows.
    fn narrow_text(&self, m: Option<&Metrics>) -> String {
        match self.metric {
            ErrorMetric::Mae => self.mae_text(m),
            ErrorMetric::Rmse => self.rmse_text(m),
        }
    }

    fn rmse_text(&self, m: Option<&Metrics>) -> String {
        m.map_or_else(|| missing(self.theme).to_string(), |m| sig(m.rmse, DIGITS))
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
        let inner = theme.block("", false, false).inner(area);
        let table = self.table(report, inner);
        let mut title = if table.wide {
            "Errors (MAE / RMSE)".to_string()
        } else {
            format!("Errors ({})", self.metric.name())
        };
        if table.clamp_mark {
            title.push(' ');
            title.push_str(crate::ui::utilization::sep(theme));
            title.push_str(" ! clamped");
        }
        let mut block = theme.block(&title, self.focused, self.stale);
        if !table.wide {
            let key = crate::app::keymap::first_key(
                crate::app::keymap::Mode::Global,
                crate::app::keymap::Action::ToggleErrorMetric,
            )
            .unwrap_or_default();
            block = block.title_bottom(
                Line::styled(
                    format!(" {key}: {} ", self.metric.other().name()),
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
                .map(|c| c.rung.and_then(|r| r.channels.get(i)))
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
                .map(|c| c.rung.map(|r| &r.overall))
                .collect();
            lines.push(table.row(OVERALL, &cells, false, theme.heading));
        }
        for (y, line) in (inner.y..inner.bottom()).zip(lines) {
            line.render(
                Rect {
                    y,
                    height: 1,
                    ..inner
                },
                buf,
            );
        }
    }
}

impl<'p> ErrorsPane<'p> {
    /// The granularity columns with the widths the channels in `rows` need.
    fn columns<'r>(&self, report: &'r Report, rows: &[usize]) -> Vec<Column<'r>> {
        let width = |texts: &mut dyn Iterator<Item = String>| {
            texts.map(|s| text_width(&s)).max().unwrap_or(1)
        };
        self.granularities()
            .into_iter()
            .map(|g| {
                let rung = report.rung(g);
                let metrics = |i: usize| rung.and_then(|r| r.channels.get(i));
                let overall = rung.map(|r| &r.overall);
                let active = g == report.config.granularity;
                let heading = if let Some(f) = report.config.format {
                    format!("{} {}", self.theme.glyphs.active, f.name)
                } else if active {
                    format!("{} {g}", self.theme.glyphs.active)
                } else {
                    g.to_string()
                };
                let mae = width(
                    &mut rows
                        .iter()
                        .map(|&i| self.mae_text(metrics(i)))
                        .chain([self.mae_text(overall)]),
                );
                let rmse = width(
                    &mut rows
                        .iter()
                        .map(|&i| self.rmse_text(metrics(i)))
                        .chain([self.rmse_text(overall)]),
                );
                Column {
                    granularity: g,
                    rung,
                    active,
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
    fn table<'r>(&'p self, report: &'r Report, inner: Rect) -> Table<'p, 'r> {
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
        let wide = h >= 4 && 2 + OVERALL.len() + wide_width <= w;
        let body = h.saturating_sub(if wide { 2 } else { 1 });
        // The overall line when every channel fits beside it, or when the list scrolls anyway
        // and has room to spare.
        let overall = body > n || body >= 4;
        let rows: Vec<usize> = listed[window(selected, n, body - usize::from(overall))].to_vec();
        if rows != probe {
            columns = self.columns(report, &rows);
        }
        for c in &mut columns {
            let numbers = match (wide, self.metric) {
                (true, _) => c.mae + 1 + c.rmse,
                (false, ErrorMetric::Mae) => c.mae,
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

impl ErrorsPane<'_> {
    /// What a `—` means, when a column has one.
    fn note(&self, report: &Report, columns: &[Column<'_>]) -> Option<String> {
        let gone = columns.iter().find(|c| c.rung.is_none())?;
        let dash = missing(self.theme);
        Some(if report.ladder.is_empty() {
            format!("{dash} ladder not computed")
        } else {
            format!("{dash} no {} rung", gone.granularity)
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
        cells: &[Option<&Metrics>],
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
                    pad(&pane.mae_text(*m), c.mae, Alignment::Right),
                    pad(&pane.rmse_text(*m), c.rmse, Alignment::Right)
                )
            } else {
                pane.narrow_text(*m)
            };
            spans.push(Span::raw(self.gap.clone()));
            spans.push(Span::styled(
                pad(&text, c.width, Alignment::Right),
                self.column_style(c, numbers),
            ));
        }
        let line = Line::from(spans);
        if selected {
            line.style(theme.selected)
        } else {
            line
        }
    }
}
