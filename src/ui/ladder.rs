//! The Ladder pane: the active scheme at every granularity, coarse to fine, with its cost
//! (scales, metadata, bits per weight) against its error (MAE, RMSE, collapsed channels),
//! and the arithmetic of the selected rung's bits per weight.
//!
//! ```text
//! ┌ Ladder ──────────────────────────────────────────────────────────────────────┐
//! │   granularity scales metadata bits/w     MAE    RMSE collapsed               │
//! │▶● tensor           1      4 B  8.000  0.0511  0.0757       ✗ 1 ██████████████│
//! │   channel          2      8 B 12.000 0.00375 0.00482         0 █·············│
//! │bits/weight = (elements × bits + scales × metadata bits) / elements           │
//! │tensor: bits/weight = (8 × 4 + 1 × 32) / 8 = 8.000                            │
//! │  (payload 4 B + metadata 4 B = 8 B, 0.25 of f32)                             │
//! └──────────────────────────────────────────────────────────────────────────────┘
//! ```
//!
//! `●` marks the active rung, `▶` the selected one (whose arithmetic is shown); the bar is
//! each rung's MAE against the largest.
//!
//! Columns are dropped from the least useful (metadata, scales, RMSE) when the pane is
//! narrow; the arithmetic moves into the bottom border when there is no line for it.
//!
//! While a configuration is pinned as A, the table ends in A's active rung (`A tensor`,
//! `A q4_k`), so both configurations' cost and error are on screen in the same columns.

use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::core::Report;
use crate::core::report::Rung;
use crate::ui::Theme;
use crate::ui::utilization::{
    fit, number_style, pad, render_message, sep, sig, text_width, window,
};

/// The Ladder pane.
#[derive(Debug)]
pub struct LadderPane<'a> {
    /// The results, if any.
    pub report: Option<&'a Report>,
    /// The selected rung (clamped to the last one).
    pub selected: usize,
    /// The pane has focus.
    pub focused: bool,
    /// The results are out of date.
    pub stale: bool,
    /// The ladder is still being computed.
    pub pending: bool,
    /// Rows of the ladder done so far, of all, while it is computed (once known).
    pub progress: Option<(usize, usize)>,
    /// The pinned configuration A's report, while one is compared with this one.
    pub pinned: Option<&'a Report>,
    /// The method beyond rounding against round to nearest, in words, under the rungs
    /// ([`crate::ui::method::line`]).
    pub method: Option<String>,
    /// Styles and glyphs.
    pub theme: &'a Theme,
}

/// ` 37%` for rows done of all (nothing when unknown).
#[must_use]
pub fn percent(progress: Option<(usize, usize)>) -> String {
    progress
        .filter(|&(_, total)| total > 0)
        .map(|(done, total)| format!(" {}%", done * 100 / total))
        .unwrap_or_default()
}

/// Significant digits of the errors.
const DIGITS: usize = 3;
/// Narrowest MAE bar worth drawing.
const MIN_BAR: usize = 6;

/// A column of the table, in display order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Granularity,
    Scales,
    Metadata,
    Bits,
    Mae,
    Rmse,
    /// The layer's output error (`output_mse`), with activations.
    Output,
    /// The importance-weighted error (`imatrix_mse`), with importance.
    Imatrix,
    Collapsed,
    Bar,
}

impl Kind {
    const DISPLAY: [Self; 10] = [
        Self::Granularity,
        Self::Scales,
        Self::Metadata,
        Self::Bits,
        Self::Mae,
        Self::Rmse,
        Self::Output,
        Self::Imatrix,
        Self::Collapsed,
        Self::Bar,
    ];
    /// Most useful first: the order in which columns are given room.
    const PRIORITY: [Self; 10] = [
        Self::Granularity,
        Self::Mae,
        Self::Bits,
        Self::Output,
        Self::Collapsed,
        Self::Imatrix,
        Self::Bar,
        Self::Rmse,
        Self::Scales,
        Self::Metadata,
    ];

    /// An output column with no value in any row is not offered.
    fn offered(self, rows: &[Row<'_>]) -> bool {
        let has = |f: fn(&crate::core::importance::OutputMetrics) -> Option<f64>| {
            rows.iter().any(|r| {
                r.rung
                    .output
                    .as_ref()
                    .is_some_and(|o| f(&o.overall).is_some())
            })
        };
        match self {
            Self::Output => has(|o| o.output_mse),
            Self::Imatrix => has(|o| o.imatrix_mse),
            _ => true,
        }
    }

    fn heading(self) -> &'static str {
        match self {
            Self::Granularity => "granularity",
            Self::Scales => "scales",
            Self::Metadata => "metadata",
            Self::Bits => "bits/w",
            Self::Mae => "MAE",
            Self::Rmse => "RMSE",
            Self::Output => "out MSE",
            Self::Imatrix => "imat MSE",
            Self::Collapsed => "collapsed",
            Self::Bar => "",
        }
    }

    fn text(self, row: Row<'_>, theme: &Theme) -> String {
        let rung = row.rung;
        match self {
            Self::Granularity => match row.side {
                Side::B => rung.granularity.to_string(),
                Side::A(Some(format)) => format!("A {format}"),
                Side::A(None) => format!("A {}", rung.granularity),
            },
            Self::Scales => rung.scales.to_string(),
            Self::Metadata => format!("{} B", rung.memory.metadata_bytes),
            Self::Bits => format!("{:.3}", rung.memory.bits_per_weight),
            Self::Mae => sig(rung.overall.mae, DIGITS),
            Self::Rmse => sig(rung.overall.rmse, DIGITS),
            Self::Output | Self::Imatrix => {
                let o = rung.output.as_ref().map(|o| o.overall);
                let v = o.and_then(|o| {
                    if self == Self::Output {
                        o.output_mse
                    } else {
                        o.imatrix_mse
                    }
                });
                v.map_or_else(|| "-".to_string(), |v| sig(v, DIGITS))
            }
            Self::Collapsed if rung.collapsed_channels > 0 => {
                format!("{} {}", theme.glyphs.collapsed, rung.collapsed_channels)
            }
            Self::Collapsed => "0".to_string(),
            Self::Bar => String::new(),
        }
    }
}

/// Whose rung a table row is.
#[derive(Debug, Clone, Copy)]
enum Side {
    /// The active configuration's ladder.
    B,
    /// The pinned configuration A's active rung (the format's name, for a format).
    A(Option<&'static str>),
}

/// A table row: a rung and whose it is.
#[derive(Debug, Clone, Copy)]
struct Row<'r> {
    rung: &'r Rung,
    side: Side,
}

impl<'r> Row<'r> {
    const fn b(rung: &'r Rung) -> Self {
        Self {
            rung,
            side: Side::B,
        }
    }
}

impl Widget for &LadderPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let theme = self.theme;
        let ellipsis = if theme.glyphs.ascii { "..." } else { "…" };
        let computing = format!(
            "Ladder {} computing{}{ellipsis}",
            sep(theme),
            percent(self.progress)
        );
        let title = if self.pending {
            computing.as_str()
        } else {
            "Ladder"
        };
        let Some(report) = self.report else {
            render_message(
                theme.block(title, self.focused, self.stale),
                "no results yet",
                area,
                buf,
                theme,
            );
            return;
        };
        let ladder = &report.ladder;
        if ladder.is_empty() {
            let message = if self.pending {
                format!("ladder: computing{}{ellipsis}", percent(self.progress))
            } else {
                "ladder: not computed".to_string()
            };
            render_message(
                theme.block(title, self.focused, self.stale),
                &message,
                area,
                buf,
                theme,
            );
            return;
        }
        let mut block = theme.block(title, self.focused, self.stale);
        let inner = block.inner(area);
        let (w, h) = (usize::from(inner.width), usize::from(inner.height));
        let selected = self.selected.min(ladder.len() - 1);
        let extra_rows =
            usize::from(self.pinned_row().is_some()) + usize::from(self.method.is_some());
        let anchor = self.anchor(ladder, selected);
        let rung = &ladder[anchor];

        // The table first; the arithmetic below it when there is a line left, else in the
        // bottom border.
        let below = h.saturating_sub(1 + ladder.len() + extra_rows);
        let rows = window(
            anchor,
            ladder.len(),
            h.saturating_sub(1 + extra_rows).max(1),
        );
        let segments = arithmetic(rung, theme);
        let mut extra = Vec::new();
        if below == 0 {
            let room = usize::from(area.width).saturating_sub(4);
            let formula = segments[..4].join(" ");
            block = block.title_bottom(Line::styled(
                format!(" {} ", fit(&formula, room, theme.glyphs.ascii)),
                theme.dim,
            ));
        } else {
            extra = wrap(&segments, w, usize::MAX, ellipsis);
            let x = if theme.glyphs.ascii { "x" } else { "×" };
            let general =
                format!("bits/weight = (elements {x} bits + scales {x} metadata bits) / elements");
            if extra.len() < below && text_width(&general) <= w {
                extra.insert(0, general);
            } else if extra.len() > below {
                // Without the byte counts (the Memory figures say them) rather than cut.
                extra = wrap(&segments[..4], w, below, ellipsis);
            }
        }
        let (mut lines, dropped) = self.table_lines(ladder, rows, selected, w);
        if !dropped.is_empty() {
            // The output columns are the reason a user widens the terminal: say so.
            block = block.title(Line::styled(
                format!(" {} {}: wider shows it ", sep(theme), dropped.join(", ")),
                theme.dim,
            ));
        }
        block.render(area, buf);
        if inner.is_empty() {
            return;
        }

        for text in extra {
            lines.push(Line::styled(
                fit(&text, w, theme.glyphs.ascii),
                number_style(theme, self.stale),
            ));
        }
        crate::ui::rows::render_lines(lines, inner, buf);
    }
}

impl LadderPane<'_> {
    /// The screen rows of the rungs shown in `area` (the pane with its border), each with
    /// its index in the ladder: where a click selects one.
    #[must_use]
    pub fn item_rows(&self, area: Rect) -> Vec<(u16, usize)> {
        let Some(ladder) = self.report.map(|r| &r.ladder).filter(|l| !l.is_empty()) else {
            return Vec::new();
        };
        let inner = self.theme.block("", false, false).inner(area);
        let h = usize::from(inner.height);
        let selected = self.selected.min(ladder.len() - 1);
        let extra_rows = usize::from(self.pinned_row().is_some());
        let anchor = self.anchor(ladder, selected);
        let rows = window(
            anchor,
            ladder.len(),
            h.saturating_sub(1 + extra_rows).max(1),
        );
        // Below the heading.
        (inner.y + 1..inner.bottom()).zip(rows).collect()
    }
}

impl<'a> LadderPane<'a> {
    /// A's active rung, listed last while a configuration is pinned.
    fn pinned_row(&self) -> Option<Row<'a>> {
        let a = self.pinned?;
        a.ladder.iter().find(|r| r.active).map(|rung| Row {
            rung,
            side: Side::A(a.config.format.map(|f| f.name)),
        })
    }

    /// The heading and the rows of the table: the ladder's `rows`, then A's rung, then the
    /// method's line.
    fn table_lines(
        &self,
        ladder: &[Rung],
        rows: std::ops::Range<usize>,
        selected: usize,
        width: usize,
    ) -> (Vec<Line<'static>>, Vec<&'static str>) {
        let pinned = self.pinned_row();
        let shown: Vec<Row<'_>> = ladder[rows.clone()]
            .iter()
            .map(Row::b)
            .chain(pinned)
            .collect();
        let table = Table::new(&shown, width, self.theme);
        let mut lines = vec![table.heading(self.theme)];
        let max_mae = ladder
            .iter()
            .chain(pinned.map(|p| p.rung))
            .map(|r| r.overall.mae)
            .fold(0.0, f64::max);
        for (i, row) in rows.zip(&shown) {
            lines.push(table.row(*row, i == selected, max_mae, self));
        }
        if let Some(row) = pinned {
            lines.push(table.row(row, false, max_mae, self));
        }
        if let Some(m) = &self.method {
            let text = fit(m, width, self.theme.glyphs.ascii);
            lines.push(Line::styled(text, self.theme.active));
        }
        (lines, table.dropped)
    }

    /// The rung the view is kept around and whose arithmetic is shown: the selected one,
    /// except that beside A an unfocused pane shows B's active rung, so that both
    /// configurations' rungs are in view on a small screen.
    fn anchor(&self, ladder: &[Rung], selected: usize) -> usize {
        match ladder.iter().position(|r| r.active) {
            Some(active) if self.pinned.is_some() && !self.focused => active,
            _ => selected,
        }
    }
}

/// The selected rung's bits per weight worked out from its memory fields, and its byte
/// counts, as words to wrap: `channel: bits/weight = (8 × 4 + 2 × 32) / 8 = 12.000
/// (payload 4 B + metadata 8 B = 12 B, 0.375 of f32)`.
fn arithmetic(rung: &Rung, theme: &Theme) -> Vec<String> {
    let m = &rung.memory;
    let x = if theme.glyphs.ascii { "x" } else { "×" };
    vec![
        format!("{}:", rung.granularity),
        "bits/weight".to_string(),
        format!(
            "= ({} {x} {} + {} {x} {}) / {}",
            m.elements, m.bits, m.blocks, m.metadata_bits_per_block, m.elements
        ),
        format!("= {:.3}", m.bits_per_weight),
        format!(
            " (payload {} B + metadata {} B = {} B, {} of f32)",
            m.payload_bytes,
            m.metadata_bytes,
            m.total_bytes,
            sig(m.ratio_to_f32, DIGITS)
        ),
    ]
}

/// `segments` joined by spaces into lines of at most `width` cells (continuation lines
/// indented by two), at most `max_lines` of them; a line that cannot hold its segment is
/// cut by the caller's `fit`. When lines are left over, the last kept one ends in `ellipsis`.
fn wrap(segments: &[String], width: usize, max_lines: usize, ellipsis: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    for segment in segments {
        let candidate = if current.is_empty() {
            segment.clone()
        } else {
            format!("{current} {segment}")
        };
        if current.is_empty() || text_width(&candidate) <= width {
            current = candidate;
        } else {
            lines.push(std::mem::replace(
                &mut current,
                format!("  {}", segment.trim_start()),
            ));
        }
    }
    if !current.is_empty() {
        lines.push(current);
    }
    if lines.len() > max_lines {
        lines.truncate(max_lines);
        if let Some(last) = lines.last_mut() {
            last.push(' ');
            last.push_str(ellipsis);
        }
    }
    lines
}

/// The columns that fit and their widths.
struct Table {
    columns: Vec<(Kind, usize)>,
    /// The output columns that had something to show and did not fit.
    dropped: Vec<&'static str>,
}

impl Table {
    fn new(rows: &[Row<'_>], width: usize, theme: &Theme) -> Self {
        let widths = |kind: Kind| {
            rows.iter()
                .map(|r| text_width(&kind.text(*r, theme)))
                .chain([text_width(kind.heading())])
                .max()
                .unwrap_or(0)
        };
        // Marker cells: pointer and active glyph.
        let mut used = 2;
        let mut chosen = Vec::new();
        for kind in Kind::PRIORITY.into_iter().filter(|k| k.offered(rows)) {
            let w = if kind == Kind::Bar {
                MIN_BAR
            } else {
                widths(kind)
            };
            if used + 1 + w <= width {
                used += 1 + w;
                chosen.push(kind);
            }
        }
        let bar = if chosen.contains(&Kind::Bar) {
            width - used + MIN_BAR
        } else {
            0
        };
        let columns = Kind::DISPLAY
            .into_iter()
            .filter(|k| chosen.contains(k))
            .map(|k| (k, if k == Kind::Bar { bar } else { widths(k) }))
            .collect();
        let dropped = [Kind::Output, Kind::Imatrix]
            .into_iter()
            .filter(|k| k.offered(rows) && !chosen.contains(k))
            .map(Kind::heading)
            .collect();
        Self { columns, dropped }
    }

    fn heading(&self, theme: &Theme) -> Line<'static> {
        let mut spans = vec![Span::raw("  ")];
        for &(kind, w) in &self.columns {
            let align = if kind == Kind::Granularity {
                Alignment::Left
            } else {
                Alignment::Right
            };
            spans.push(Span::styled(
                format!(" {}", pad(kind.heading(), w, align)),
                theme.heading,
            ));
        }
        Line::from(spans)
    }

    fn row(
        &self,
        row: Row<'_>,
        selected: bool,
        max_mae: f64,
        pane: &LadderPane<'_>,
    ) -> Line<'static> {
        let rung = row.rung;
        let theme = pane.theme;
        let glyphs = theme.glyphs;
        let numbers = number_style(theme, pane.stale);
        let pinned = matches!(row.side, Side::A(_));
        let mut spans = vec![
            Span::raw(if selected { glyphs.pointer } else { " " }),
            Span::styled(
                if rung.active && !pinned {
                    glyphs.active
                } else {
                    " "
                },
                theme.active,
            ),
        ];
        for &(kind, w) in &self.columns {
            spans.push(Span::raw(" "));
            match kind {
                Kind::Granularity => {
                    let style = if pinned {
                        theme.heading
                    } else if rung.active {
                        theme.active
                    } else {
                        theme.text
                    };
                    spans.push(Span::styled(
                        pad(&kind.text(row, theme), w, Alignment::Left),
                        style,
                    ));
                }
                Kind::Bar => {
                    let share = if max_mae > 0.0 {
                        (rung.overall.mae / max_mae).clamp(0.0, 1.0)
                    } else {
                        0.0
                    };
                    let filled = ((share * w as f64).round() as usize).min(w);
                    spans.push(Span::styled(glyphs.bar_full.repeat(filled), numbers));
                    spans.push(Span::styled(glyphs.bar_empty.repeat(w - filled), theme.dim));
                }
                Kind::Collapsed if rung.collapsed_channels > 0 => {
                    spans.push(Span::styled(
                        pad(&kind.text(row, theme), w, Alignment::Right),
                        theme.bad,
                    ));
                }
                _ => spans.push(Span::styled(
                    pad(&kind.text(row, theme), w, Alignment::Right),
                    numbers,
                )),
            }
        }
        crate::ui::rows::item_line(spans, selected, theme.selected)
    }
}
