//! The stored view: a quantized GGUF tensor as the file holds it ([`crate::core::stored`]).
//! Left, one line per row: the share of the grid's levels its codes use (a bar), how many,
//! and whether the row is collapsed as stored or how many of its blocks are; right, the
//! summary, the block layout with its bits per weight, and the block scales by powers of
//! two. The original weights are not in the file, so no error is shown.
//!
//! ```text
//! ┌ ▶ q4_k: Q4_K as stored (Esc: the panes, S closes) ───────────────────────────┐
//! │rows by index (n: fewest first, f: collapsed only) │4 x 256, blocks of 256    │
//! │ row levels used of 16                             │levels/row mean 12.2, min 1│
//! │▶ 0  ████████████████████████ 16/16                │collapsed as stored:       │
//! │  1  █······················· 1/16  ✗ COLLAPSED    │ 1 of 4 rows, 1 of 4 blocks│
//! │ ...                                               │Layout  4.5 bits/weight    │
//! │                                                   │     4 payload: 4-bit codes│
//! │                                                   │Scales |scale| by 2^e      │
//! │row 0: 16 of 16 levels (100%), no block collapsed  │2^-6 ████████         12   │
//! │the original weights are not in the file: no error; the panes analyse its ...  │
//! └──────────────────────────────────────────────────────────────────────────────┘
//! ```

use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget, Wrap};

use crate::app::StoredView;
use crate::core::stored::{RowStats, Stored};
use crate::ui::Theme;
use crate::ui::utilization::{fit, pad, sig, text_width, window};

/// The stored view overlay.
#[derive(Debug)]
pub struct StoredOverlay<'a> {
    /// What the stored codes say.
    pub stored: &'a Stored,
    /// Which rows are listed, and the selected one.
    pub view: &'a StoredView,
    /// Key labels for the title: closing to the panes, sorting, filtering.
    pub keys: [&'a str; 3],
    /// Styles.
    pub theme: &'a Theme,
}

/// Widest the overlay grows.
const MAX_WIDTH: u16 = 140;
/// Width of the summary column on the right: at least, and at most.
const SIDE_WIDTH: u16 = 38;
const MAX_SIDE_WIDTH: u16 = 50;

/// What the view cannot say, under it.
const NOTE: &str = "No error is shown: the original weights are not in the file. The panes analyse its dequantized values.";
/// Narrowest bar drawn.
const MIN_BAR: usize = 4;

impl Widget for &StoredOverlay<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let s = self.stored;
        let theme = self.theme;
        // Between the title bar and the status line, which keeps its hints and messages.
        let width = area.width.min(MAX_WIDTH);
        let popup = Rect {
            x: area.x + (area.width - width) / 2,
            y: area.y + 1,
            width,
            height: area.height.saturating_sub(2),
        };
        Clear.render(popup, buf);
        let [close, _, filter] = self.keys;
        let title = format!(
            "{}: {} as stored ({close}: the panes)",
            fit(&s.name, 40, theme.glyphs.ascii),
            s.ggml_type
        );
        let block = theme.block(&title, true, false);
        let inner = block.inner(popup);
        block.render(popup, buf);
        if inner.height < 3 || inner.width < 20 {
            return;
        }
        let note_rows = if text_width(NOTE) <= usize::from(inner.width) {
            1
        } else {
            2
        };
        let [body, note] =
            Layout::vertical([Constraint::Fill(1), Constraint::Length(note_rows)]).areas(inner);
        Paragraph::new(Line::styled(NOTE, theme.dim))
            .wrap(Wrap { trim: true })
            .render(note, buf);
        let side_width = (inner.width * 2 / 5)
            .clamp(SIDE_WIDTH, MAX_SIDE_WIDTH)
            .min(body.width / 2);
        let [rows_area, gap, side] = Layout::horizontal([
            Constraint::Fill(1),
            Constraint::Length(1),
            Constraint::Length(side_width),
        ])
        .areas(body);
        for y in gap.y..gap.bottom() {
            if let Some(cell) = buf.cell_mut((gap.x, y)) {
                cell.set_symbol(if theme.glyphs.ascii { "|" } else { "│" })
                    .set_style(theme.dim);
            }
        }
        self.render_rows(rows_area, buf, filter);
        Paragraph::new(side_lines(
            s,
            usize::from(side.width),
            usize::from(side.height),
            theme,
        ))
        .render(side, buf);
    }
}

impl StoredOverlay<'_> {
    /// The row list: what is listed, a header, one line per row in view, and the selected
    /// row in words at the bottom.
    fn render_rows(&self, area: Rect, buf: &mut Buffer, filter: &str) {
        let s = self.stored;
        let theme = self.theme;
        let width = usize::from(area.width);
        let order = self.view.row_order;
        let by = if order.fewest_first {
            "fewest levels first"
        } else {
            "by index"
        };
        let listing = if order.collapsed_only {
            let by = if order.fewest_first {
                "fewest first"
            } else {
                by
            };
            format!(
                "{}/{} rows with collapse, {by}",
                self.view.order.len(),
                s.rows.len()
            )
        } else {
            format!("{} rows, {by}", s.rows.len())
        };
        let mut lines = vec![Line::styled(
            fit(&listing, width, theme.glyphs.ascii),
            theme.dim,
        )];
        let layout = RowLayout::new(s, width);
        lines.push(Line::styled(
            fit(&layout.header(s), width, theme.glyphs.ascii),
            theme.heading,
        ));
        let list_height = usize::from(area.height).saturating_sub(3);
        let selected = self.view.selected_row();
        if self.view.order.is_empty() {
            lines.push(Line::styled(
                fit(
                    &format!("no row with collapse ({filter}: all rows)"),
                    width,
                    theme.glyphs.ascii,
                ),
                theme.dim,
            ));
        }
        let shown = window(self.view.selected, self.view.order.len(), list_height);
        for &row in &self.view.order[shown] {
            lines.push(layout.line(s, row, selected == Some(row), theme));
        }
        Paragraph::new(lines).render(area, buf);
        if let Some(row) = selected
            && let Some(r) = s.rows.get(row)
            && area.height >= 4
        {
            let [long, short] = selected_words(s, row, r);
            let text = if text_width(&long) <= width {
                long
            } else {
                short
            };
            Line::styled(fit(&text, width, theme.glyphs.ascii), theme.text).render(
                Rect {
                    y: area.bottom() - 1,
                    height: 1,
                    ..area
                },
                buf,
            );
        }
    }
}

/// The selected row in words, and in fewer.
fn selected_words(s: &Stored, row: usize, r: &RowStats) -> [String; 2] {
    let blocks = s.blocks_per_row();
    let (long, short) = if r.collapsed {
        (
            "COLLAPSED: one value throughout, or every scale 0".to_string(),
            "COLLAPSED".to_string(),
        )
    } else if r.collapsed_blocks == 0 {
        ("no block collapsed".to_string(), "no collapse".to_string())
    } else {
        (
            format!("{} of {blocks} blocks collapsed", r.collapsed_blocks),
            format!("{}/{blocks} blocks collapsed", r.collapsed_blocks),
        )
    };
    [
        format!(
            "row {row}: {} of {} levels ({:.0}%), {long}",
            r.used,
            s.levels,
            s.utilization(row) * 100.0
        ),
        format!("row {row}: {}/{} levels, {short}", r.used, s.levels),
    ]
}

/// Column widths shared by every line of the row list (fixed for the tensor, so bars keep
/// their width while scrolling).
struct RowLayout {
    index: usize,
    bar: usize,
    counts: usize,
    note: usize,
}

impl RowLayout {
    fn new(s: &Stored, width: usize) -> Self {
        let index = s.rows.len().saturating_sub(1).to_string().len().max(3);
        let counts = 2 * s.levels.to_string().len() + 1;
        let blocks_digits = s.blocks_per_row().to_string().len();
        let note = if s.collapsed_rows > 0 {
            12
        } else if s.rows_with_collapsed_blocks > 0 {
            10 + blocks_digits
        } else {
            0
        };
        // Pointer and space, index, bar, counts, note.
        let fixed = 2 + index + 1 + 1 + counts + note;
        let bar = width.saturating_sub(fixed);
        Self {
            index,
            bar: if bar >= MIN_BAR { bar.min(48) } else { 0 },
            counts,
            note,
        }
    }

    fn header(&self, s: &Stored) -> String {
        let mut h = format!("  {} ", pad("row", self.index, Alignment::Right));
        let used = format!("levels used of {}", s.levels);
        h.push_str(&pad(&used, self.bar + 1 + self.counts, Alignment::Left));
        if self.note > 0 {
            h.push_str(" collapsed");
        }
        h
    }

    fn line(&self, s: &Stored, row: usize, selected: bool, theme: &Theme) -> Line<'static> {
        let glyphs = theme.glyphs;
        let r = s.rows.get(row).copied().unwrap_or(RowStats {
            used: 0,
            collapsed_blocks: 0,
            collapsed: false,
        });
        let mut spans = vec![
            Span::raw(if selected {
                format!("{} ", glyphs.pointer)
            } else {
                "  ".to_string()
            }),
            Span::styled(
                pad(&row.to_string(), self.index, Alignment::Right),
                theme.text,
            ),
        ];
        if self.bar > 0 {
            let filled = ((s.utilization(row).clamp(0.0, 1.0) * self.bar as f64).round() as usize)
                .min(self.bar);
            spans.push(Span::raw(" "));
            spans.push(Span::styled(glyphs.bar_full.repeat(filled), theme.text));
            spans.push(Span::styled(
                glyphs.bar_empty.repeat(self.bar - filled),
                theme.dim,
            ));
        }
        spans.push(Span::raw(" "));
        spans.push(Span::styled(
            pad(
                &format!("{}/{}", r.used, s.levels),
                self.counts,
                Alignment::Right,
            ),
            theme.text,
        ));
        if self.note > 0 {
            let note: Option<(String, Style)> = if r.collapsed {
                Some((format!(" {} COLLAPSED", glyphs.collapsed), theme.bad))
            } else if r.collapsed_blocks > 0 {
                let n = r.collapsed_blocks;
                let word = if n == 1 { "block" } else { "blocks" };
                Some((format!(" {} {n} {word}", glyphs.collapsed), theme.bad))
            } else {
                None
            };
            if let Some((text, style)) = note {
                spans.push(Span::styled(text, style));
            }
        }
        crate::ui::rows::item_line(spans, selected, theme.selected)
    }
}

/// The right column: the summary, the layout and the scales, cut to `height` lines (the
/// histogram gives up its outer bins first).
fn side_lines(s: &Stored, width: usize, height: usize, theme: &Theme) -> Vec<Line<'static>> {
    let ascii = theme.glyphs.ascii;
    let line = |text: String, style: Style| Line::styled(fit(&text, width, ascii), style);
    let (rows, cols) = s.shape;
    let mut lines = vec![
        line(
            format!("{rows} x {cols}, {} blocks of {}", s.blocks, s.block_len),
            theme.text,
        ),
        line(
            format!(
                "Levels/row: mean {} of {}, min {}",
                sig(s.mean_used(), 4),
                s.levels,
                s.min_used()
            ),
            theme.text,
        ),
        line("Collapsed as stored".into(), theme.heading),
    ];
    let collapsed_style = if s.collapsed_rows > 0 || s.collapsed_blocks > 0 {
        theme.bad
    } else {
        theme.text
    };
    lines.push(line(
        format!(
            " {} of {rows} rows, {} of {} blocks",
            s.collapsed_rows, s.collapsed_blocks, s.blocks
        ),
        collapsed_style,
    ));
    if s.rows_with_collapsed_blocks > s.collapsed_rows {
        lines.push(line(
            format!(
                " {} rows with a collapsed block",
                s.rows_with_collapsed_blocks
            ),
            collapsed_style,
        ));
    }
    lines.push(line(
        format!("Layout: {} bits/weight", sig(s.bits_per_weight, 6)),
        theme.heading,
    ));
    let part_width = s
        .layout
        .iter()
        .map(|p| text_width(&sig(p.bits_per_weight, 4)))
        .max()
        .unwrap_or(1);
    for p in &s.layout {
        lines.push(line(
            format!(
                " {} {}",
                pad(&sig(p.bits_per_weight, 4), part_width, Alignment::Right),
                p.name
            ),
            theme.text,
        ));
    }
    let sc = &s.scales;
    lines.push(line(
        format!("Scales: {} sub-blocks, {} zero", sc.count, sc.zero),
        theme.heading,
    ));
    match sc.quantiles {
        Some([min, _, p50, _, max]) => {
            lines.push(line(
                format!(
                    " |scale| median {}{}",
                    sig(f64::from(p50), 4),
                    if sc.negative > 0 {
                        format!(", {} < 0", sc.negative)
                    } else {
                        String::new()
                    }
                ),
                theme.text,
            ));
            lines.push(line(
                format!(
                    " min {}, max {}",
                    sig(f64::from(min), 4),
                    sig(f64::from(max), 4)
                ),
                theme.text,
            ));
        }
        None => lines.push(line(" every scale is 0".into(), theme.bad)),
    }
    let room = height.saturating_sub(lines.len());
    lines.extend(histogram(s, width, room, theme));
    lines.truncate(height);
    lines
}

/// The block scales by powers of two: one line per bin `2^e` with a bar and the count,
/// at most `room` lines (the bins around the median's when they do not all fit).
fn histogram(s: &Stored, width: usize, room: usize, theme: &Theme) -> Vec<Line<'static>> {
    let bins = &s.scales.log2_histogram;
    if bins.is_empty() || room == 0 {
        return Vec::new();
    }
    let ascii = theme.glyphs.ascii;
    let label = |e: i32| format!("2^{e}");
    let label_width = bins.iter().map(|&(e, _)| label(e).len()).max().unwrap_or(3);
    let count_width = bins
        .iter()
        .map(|&(_, n)| n.to_string().len())
        .max()
        .unwrap_or(1);
    let bar_width = width.saturating_sub(1 + label_width + 1 + 1 + count_width);
    // Which bins fit: all, or a window around the median's bin with a line saying so.
    let (shown, cut) = if bins.len() <= room {
        (0..bins.len(), false)
    } else {
        let rows = room.saturating_sub(1).max(1);
        let median = s.scales.quantiles.map_or(0, |q| {
            let e = f64::from(q[2]).log2().floor() as i32;
            bins.iter().position(|&(b, _)| b >= e).unwrap_or(0)
        });
        (window(median, bins.len(), rows), true)
    };
    let most = bins[shown.clone()]
        .iter()
        .map(|&(_, n)| n)
        .max()
        .unwrap_or(1)
        .max(1);
    let mut lines = Vec::new();
    if cut {
        lines.push(Line::styled(
            fit(
                &format!(" {} of {} bins, around the median", shown.len(), bins.len()),
                width,
                ascii,
            ),
            theme.dim,
        ));
    }
    for &(e, n) in &bins[shown] {
        let filled = if bar_width == 0 {
            0
        } else {
            ((n as f64 / most as f64 * bar_width as f64).round() as usize).clamp(1, bar_width)
        };
        let text = vec![
            Span::styled(
                format!(" {} ", pad(&label(e), label_width, Alignment::Right)),
                theme.text,
            ),
            Span::styled(theme.glyphs.bar_full.repeat(filled), theme.text),
            Span::raw(" ".repeat(bar_width - filled + 1)),
            Span::styled(
                pad(&n.to_string(), count_width, Alignment::Right),
                theme.text,
            ),
        ];
        lines.push(Line::from(text));
    }
    lines
}
