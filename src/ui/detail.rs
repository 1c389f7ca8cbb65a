//! The Detail pane: one channel up close. The parameters of the block holding its first
//! value, a table of its first values on their way through the quantizer (value, ratio,
//! code, reconstruction, clamped and tie marks, all from [`Report::step`]), and when the
//! pane is tall enough a plot of original against reconstructed values over the row with
//! the block's quantization grid.
//!
//! ```text
//! ┌ Channel 0 · quiet ─────────────────────────────┐
//! │scale 0.442857  zero point 0  codes [-7, 7]     │
//! │block 0 of 1: rows 0..2, cols 0..4, range [-3.1…│
//! │col     x   ratio code x̂                        │
//! │  0  0.05  0.1129    0 0                        │
//! │  …                                             │
//! │• x   ━ x̂   ┈ grid: 15 levels                   │
//! │ 3.1 ┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈│
//! │  …                                             │
//! │     ┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈│
//! │                          •                     │
//! │     ━━━━━•━━━━━━━━━•━━━━━━━━━━━━━━━━━━━━━━━━━━│
//! │                                     •          │
//! │     ┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈│
//! │  …                                             │
//! │-3.1 ┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈┈│
//! │     0                 column                  3│
//! └────────────────────────────────────────────────┘
//! ```
//!
//! The table shows the row's first values (as many as fit; the bottom border says how many
//! of how many). The grid is drawn when the code range has at most [`GRID_MAX_LEVELS`]
//! levels and they fit on every other line; the reconstruction is a staircase, each value
//! held over its column, and the values are points on top of it.
//!
//! The plot draws every mark with one character per cell (ratatui's `Marker::Custom`):
//! braille points would be placed by a finer grid than the character marks and land a row
//! away from the level they sit on. ASCII mode uses `*`, `=` and `-`.
//!
//! Nothing here computes a number: the values come from the matrix, everything else from
//! the report (the grid from the core's dequantizer for each code).

use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Rect};
use ratatui::style::{Color, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use ratatui::widgets::canvas::{Canvas, Line as CanvasLine, Points};

use crate::app::keymap::{Action, Mode, first_key};
use crate::core::report::Block;
use crate::core::{Matrix, Report};
use crate::ui::Theme;
use crate::ui::utilization::{
    channel_name, fit, missing, number_style, pad, render_message, sep, sig, text_width,
};

/// The Detail pane.
#[derive(Debug)]
pub struct DetailPane<'a> {
    /// The results, if any.
    pub report: Option<&'a Report>,
    /// The matrix the results were computed from (ignored when its shape differs).
    pub matrix: Option<&'a Matrix>,
    /// The channel shown (clamped to the last one).
    pub channel: usize,
    /// The pane has focus.
    pub focused: bool,
    /// The results are out of date.
    pub stale: bool,
    /// The first column of the table (kept within the row; PgUp and PgDn move it).
    pub scroll: u16,
    /// Styles and glyphs.
    pub theme: &'a Theme,
}

/// From this many inner lines on, the pane has a plot.
pub const CHART_MIN_HEIGHT: u16 = 12;
/// The grid is drawn for codes ranges of at most this many levels.
pub const GRID_MAX_LEVELS: u32 = 32;
/// Significant digits of values, reconstructions and ratios.
const VALUE_DIGITS: usize = 5;
/// Significant digits of scales and offsets.
const SCALE_DIGITS: usize = 6;
/// Significant digits of the plot's axis labels.
const AXIS_DIGITS: usize = 3;

/// One value of the table.
struct ValueRow {
    cells: [String; 6],
    clamped: bool,
}

/// Table column headings; the last is the note.
const COLUMNS: [&str; 6] = ["col", "x", "ratio", "code", "x̂", ""];

impl Widget for &DetailPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let theme = self.theme;
        let Some(report) = self
            .report
            .filter(|r| !r.channels.is_empty() && r.shape.1 > 0)
        else {
            render_message(
                theme.block("Detail", self.focused, self.stale),
                "no results yet",
                area,
                buf,
                theme,
            );
            return;
        };
        let ch = self.channel.min(report.channels.len() - 1);
        let channel = &report.channels[ch];
        let title = match &channel.label {
            Some(_) => format!("Channel {ch} {} {}", sep(theme), channel_name(channel)),
            None => format!("Channel {ch}"),
        };
        let title = fit(
            &title,
            usize::from(area.width.saturating_sub(4)),
            theme.glyphs.ascii,
        );
        let mut block = theme.block(&title, self.focused, self.stale);
        let inner = block.inner(area);
        let h = inner.height;
        let cols = report.shape.1;
        let info_lines: u16 = if h >= 8 { 2 } else { 1 };
        let chart = h >= CHART_MIN_HEIGHT;
        let shown = shown_columns(cols, h);
        let start = usize::from(self.scroll).min(cols - shown);
        if shown < cols {
            let key = |a| first_key(Mode::Panes, a).unwrap_or_default();
            let keys = format!("{}/{}", key(Action::PageUp), key(Action::PageDown));
            let note = format!(" cols {start}..{} of {cols} ({keys}) ", start + shown);
            block = block.title_bottom(Line::styled(note, theme.dim).right_aligned());
        }
        block.render(area, buf);
        if inner.is_empty() {
            return;
        }

        let Some(first) = report.blocks.get(report.block_index(ch, start)) else {
            return;
        };
        let mut lines = self.info(
            report,
            &first,
            ch,
            start,
            info_lines,
            usize::from(inner.width),
        );
        lines.extend(self.table(report, ch, start..start + shown, usize::from(inner.width)));
        let used = lines.len().min(usize::from(h));
        crate::ui::rows::render_lines(lines, inner, buf);
        if chart {
            let top = inner.y + used as u16;
            let rect = Rect {
                y: top,
                height: inner.bottom().saturating_sub(top),
                ..inner
            };
            self.plot(report, ch, rect, buf);
        }
    }
}

/// How many of a row's `cols` values the table shows in a pane of `height` inner rows.
fn shown_columns(cols: usize, height: u16) -> usize {
    let info_lines: u16 = if height >= 8 { 2 } else { 1 };
    if height >= CHART_MIN_HEIGHT {
        cols.min((usize::from(height) - 3) / 3).max(2).min(cols)
    } else {
        cols.min(usize::from(height.saturating_sub(info_lines + 1)))
    }
}

impl DetailPane<'_> {
    /// How far the table can scroll in `area` (the pane with its border): its largest first
    /// column.
    #[must_use]
    pub fn max_scroll(&self, area: Rect) -> u16 {
        let Some(report) = self.report.filter(|r| r.shape.1 > 0) else {
            return 0;
        };
        let inner = self.theme.block("", false, false).inner(area);
        let cols = report.shape.1;
        u16::try_from(cols - shown_columns(cols, inner.height)).unwrap_or(u16::MAX)
    }

    /// The matrix, if it is the one the report describes.
    fn values(&self, report: &Report) -> Option<&Matrix> {
        self.matrix.filter(|m| m.shape() == report.shape)
    }

    /// The block parameters, on one or two lines of at most `width` cells.
    fn info(
        &self,
        report: &Report,
        block: &Block,
        ch: usize,
        start: usize,
        lines: u16,
        width: usize,
    ) -> Vec<Line<'static>> {
        let theme = self.theme;
        let numbers = number_style(theme, self.stale);
        let pair = |name: &str, value: String| {
            vec![
                Span::styled(format!("{name} "), theme.heading),
                Span::styled(value, numbers),
            ]
        };
        let mut segments = vec![pair("scale", sig(f64::from(block.scale), SCALE_DIGITS))];
        match block.offset {
            Some(offset) => segments.push(pair("offset", sig(f64::from(offset), SCALE_DIGITS))),
            None => segments.push(pair("zero point", block.zero_point.to_string())),
        }
        if block.degenerate {
            segments.push(vec![Span::styled("degenerate", theme.bad)]);
        }
        segments.push(pair("codes", format!("[{}, {}]", report.qmin, report.qmax)));
        let mut first: Vec<Span<'static>> = Vec::new();
        let mut used = 0;
        for segment in segments {
            let w: usize = segment.iter().map(Span::width).sum::<usize>()
                + if first.is_empty() { 0 } else { 2 };
            if used + w > width {
                break;
            }
            if !first.is_empty() {
                first.push(Span::raw("  "));
            }
            first.extend(segment);
            used += w;
        }
        let mut out = vec![Line::from(first)];
        if lines >= 2 {
            let index = report.block_index(ch, start);
            let many = report.block_index(ch, 0) != report.block_index(ch, report.shape.1 - 1);
            let text = format!(
                "block {index} of {}{}: rows {}..{}, cols {}..{}, range [{}, {}]",
                report.blocks.len(),
                if many {
                    format!(" (of col {start})")
                } else {
                    String::new()
                },
                block.rows.0,
                block.rows.1,
                block.cols.0,
                block.cols.1,
                sig(f64::from(block.range.0), SCALE_DIGITS),
                sig(f64::from(block.range.1), SCALE_DIGITS),
            );
            out.push(Line::styled(
                fit(&text, width, theme.glyphs.ascii),
                theme.dim,
            ));
        }
        out
    }

    /// The row's values in columns `shown`: heading line and one line each.
    fn table(
        &self,
        report: &Report,
        ch: usize,
        shown: std::ops::Range<usize>,
        width: usize,
    ) -> Vec<Line<'static>> {
        let theme = self.theme;
        let ascii = theme.glyphs.ascii;
        let matrix = self.values(report);
        let dash = missing(theme);
        let rows: Vec<ValueRow> = shown
            .map(|col| {
                let (x, ratio, code, x_hat, note, clamped) = match matrix {
                    Some(m) => {
                        let x = m.values()[[ch, col]];
                        let step = report.step(ch, col, x);
                        let mut note = Vec::new();
                        if step.clamped {
                            note.push("clamped");
                        }
                        if step.tie {
                            note.push("tie");
                        }
                        (
                            sig(f64::from(x), VALUE_DIGITS),
                            sig(f64::from(step.ratio), VALUE_DIGITS - 1),
                            step.code.to_string(),
                            sig(f64::from(step.dequantized), VALUE_DIGITS),
                            note.join(" "),
                            step.clamped,
                        )
                    }
                    None => (
                        dash.to_string(),
                        dash.to_string(),
                        report.code(ch, col).to_string(),
                        sig(f64::from(report.dequantized(ch, col)), VALUE_DIGITS),
                        String::new(),
                        false,
                    ),
                };
                ValueRow {
                    cells: [col.to_string(), x, ratio, code, x_hat, note],
                    clamped,
                }
            })
            .collect();
        let headings = COLUMNS.map(|h| if ascii && h == "x̂" { "x^" } else { h });
        let widths: Vec<usize> = (0..COLUMNS.len())
            .map(|i| {
                rows.iter()
                    .map(|r| text_width(&r.cells[i]))
                    .chain([text_width(headings[i])])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        // Drop the ratio when the row does not fit.
        let total: usize = widths.iter().map(|w| w + 1).sum();
        let keep = |i: usize| i != 2 || total <= width;
        let numbers = number_style(theme, self.stale);
        let mut out = Vec::with_capacity(rows.len() + 1);
        let heading: Vec<Span> = (0..COLUMNS.len())
            .filter(|&i| keep(i))
            .map(|i| {
                let align = if i == COLUMNS.len() - 1 {
                    Alignment::Left
                } else {
                    Alignment::Right
                };
                Span::styled(
                    format!("{} ", pad(headings[i], widths[i], align)),
                    theme.heading,
                )
            })
            .collect();
        out.push(Line::from(heading));
        for row in rows {
            let spans: Vec<Span> = (0..COLUMNS.len())
                .filter(|&i| keep(i))
                .map(|i| {
                    let last = i == COLUMNS.len() - 1;
                    let style = match i {
                        0 => theme.dim,
                        _ if last && row.clamped => theme.bad,
                        _ if last => theme.dim,
                        _ => numbers,
                    };
                    let align = if last {
                        Alignment::Left
                    } else {
                        Alignment::Right
                    };
                    Span::styled(format!("{} ", pad(&row.cells[i], widths[i], align)), style)
                })
                .collect();
            out.push(Line::from(spans));
        }
        out
    }

    /// Original (`x`, points) and reconstructed (`x̂`, a staircase: each value held over its
    /// column) values along the row, over the grid of the block's levels when the levels
    /// are few enough to tell apart; at most two columns per terminal cell.
    fn plot(&self, report: &Report, ch: usize, area: Rect, buf: &mut Buffer) {
        if area.height < 4 || area.width < 8 {
            return;
        }
        let Some(data) = self.plot_data(report, ch, area) else {
            return;
        };
        let theme = self.theme;
        let ascii = theme.glyphs.ascii;
        let gutter =
            text_width(&sig(data.lo, AXIS_DIGITS)).max(text_width(&sig(data.hi, AXIS_DIGITS)));
        let gutter = u16::try_from(gutter + 1).unwrap_or(u16::MAX);
        let plot = Rect {
            x: area.x.saturating_add(gutter),
            y: area.y + 1,
            width: area.width.saturating_sub(gutter),
            height: area.height - 2,
        };
        if plot.width < 4 {
            return;
        }
        let marks = Marks::new(ascii);

        // Legend, y labels, x labels.
        let legend = data.legend(&marks, ascii);
        Line::styled(fit(&legend, usize::from(area.width), ascii), theme.dim)
            .render(Rect { height: 1, ..area }, buf);
        let numbers = number_style(theme, self.stale);
        for (y, v) in [(plot.y, data.hi), (plot.bottom() - 1, data.lo)] {
            let label = pad(
                &sig(v, AXIS_DIGITS),
                usize::from(gutter - 1),
                Alignment::Right,
            );
            Line::styled(label, numbers).render(
                Rect {
                    x: area.x,
                    y,
                    width: gutter - 1,
                    height: 1,
                },
                buf,
            );
        }
        let x_axis = Rect {
            y: plot.bottom(),
            height: 1,
            ..plot
        };
        Line::styled("0", theme.dim).render(x_axis, buf);
        Line::styled("column", theme.dim)
            .centered()
            .render(x_axis, buf);
        Line::styled((report.shape.1 - 1).to_string(), theme.dim)
            .right_aligned()
            .render(x_axis, buf);

        let color = |s: Style| s.fg.unwrap_or(Color::Reset);
        let (grid_color, x_hat_color, x_color) =
            (color(theme.dim), color(theme.active), color(theme.text));
        let (left, right) = (-0.5, report.shape.1 as f64 - 0.5);
        let held = data.step as f64;
        Canvas::default()
            .x_bounds([left, right])
            .y_bounds([data.lo, data.hi])
            .paint(|ctx| {
                if !data.grid.is_empty() {
                    ctx.marker(Marker::Custom(marks.grid));
                    for &v in &data.grid {
                        ctx.draw(&CanvasLine {
                            x1: left,
                            y1: v,
                            x2: right,
                            y2: v,
                            color: grid_color,
                        });
                    }
                }
                ctx.marker(Marker::Custom(marks.x_hat));
                for &(c, v) in &data.reconstructed {
                    let x2 = (c - 0.5 + held).min(right);
                    ctx.draw(&CanvasLine {
                        x1: c - 0.5,
                        y1: v,
                        x2,
                        y2: v,
                        color: x_hat_color,
                    });
                }
                ctx.marker(Marker::Custom(marks.x));
                ctx.draw(&Points {
                    coords: &data.originals,
                    color: x_color,
                });
            })
            .render(plot, buf);
    }

    /// The points and bounds of the plot: the grid of the block's levels when at most
    /// [`GRID_MAX_LEVELS`] fit on every other row, and every `step`-th column of the row.
    fn plot_data(&self, report: &Report, ch: usize, area: Rect) -> Option<PlotData> {
        let cols = report.shape.1;
        let channel = &report.channels[ch];
        let levels =
            u32::try_from(i64::from(report.qmax) - i64::from(report.qmin) + 1).unwrap_or(u32::MAX);
        let room = u32::from(area.height.saturating_sub(2)).div_ceil(2);
        let grid: Vec<f64> = if levels <= GRID_MAX_LEVELS && levels <= room {
            report
                .levels(report.block_index(ch, 0))
                .into_iter()
                .map(f64::from)
                .collect()
        } else {
            Vec::new()
        };
        let step = cols.div_ceil(2 * usize::from(area.width)).max(1);
        let picked = (0..cols).step_by(step);
        let originals: Vec<(f64, f64)> = self
            .values(report)
            .map(|m| {
                picked
                    .clone()
                    .map(|c| (c as f64, f64::from(m.values()[[ch, c]])))
                    .collect()
            })
            .unwrap_or_default();
        let reconstructed: Vec<(f64, f64)> = picked
            .map(|c| (c as f64, f64::from(report.dequantized(ch, c))))
            .collect();
        // The bounds hold the row, its reconstruction and the grid.
        let values = reconstructed
            .iter()
            .map(|p| p.1)
            .chain(grid.iter().copied());
        let (mut lo, mut hi) = values.fold(
            (f64::from(channel.min), f64::from(channel.max)),
            |(lo, hi), v| (lo.min(v), hi.max(v)),
        );
        if !(lo.is_finite() && hi.is_finite()) {
            return None;
        }
        if hi <= lo {
            let margin = if lo == 0.0 { 1.0 } else { lo.abs() / 2.0 };
            lo -= margin;
            hi += margin;
        }
        Some(PlotData {
            grid,
            originals,
            reconstructed,
            lo,
            hi,
            step,
            levels,
        })
    }
}

/// What the plot draws.
struct PlotData {
    /// The dequantized value of every code, when drawn.
    grid: Vec<f64>,
    originals: Vec<(f64, f64)>,
    reconstructed: Vec<(f64, f64)>,
    lo: f64,
    hi: f64,
    /// One column in `step` is drawn.
    step: usize,
    levels: u32,
}

impl PlotData {
    /// What the marks mean, the number of levels, and the subsampling.
    fn legend(&self, marks: &Marks, ascii: bool) -> String {
        let x_hat = if ascii { "x^" } else { "x̂" };
        let grid = if self.grid.is_empty() {
            "no grid".to_string()
        } else {
            format!("{} grid", marks.grid)
        };
        let mut legend = format!(
            "{} x   {} {x_hat}   {grid}: {} levels",
            marks.x, marks.x_hat, self.levels
        );
        if self.step > 1 {
            legend.push_str("   1 column in ");
            legend.push_str(&self.step.to_string());
        }
        if self.originals.is_empty() {
            legend.push_str("   (no values)");
        }
        legend
    }
}

/// The plot's marks: one character per cell.
struct Marks {
    x: char,
    x_hat: char,
    grid: char,
}

impl Marks {
    fn new(ascii: bool) -> Self {
        if ascii {
            Self {
                x: '*',
                x_hat: '=',
                grid: '-',
            }
        } else {
            Self {
                x: '•',
                x_hat: '━',
                grid: '┈',
            }
        }
    }
}
