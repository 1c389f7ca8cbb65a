//! The Utilization pane: one line per channel showing how much of the code range
//! `[qmin, qmax]` the channel spans (a bar), how many distinct codes it uses, and whether it
//! collapsed onto a single code.
//!
//! ```text
//! ┌ Utilization · 1 of 2 collapsed ──────┐
//! │▶ quiet ············  1/15 ✗ COLLAPSED│
//! │  loud  ██████████··  4/15            │
//! └──────────────────────────────────────┘
//! ```
//!
//! The bar is `utilization`, the share of the code range between the row's smallest and
//! largest code; `4/15` counts the distinct codes used. Wider panes add the share as a
//! percentage. Only the lines in view are built, so thousands of channels cost nothing.
//!
//! While a configuration is pinned as A, the bar and counts are the active configuration
//! B's, and a column after them gives A's share and marks a row collapsed under A:
//!
//! ```text
//! ┌ Utilization · B 0, A 1 of 2 collapsed┐
//! │▶ quiet ██████████·  4/15 A  0% ✗     │
//! │  loud  █████████··  4/15 A 86%       │
//! └──────────────────────────────────────┘
//! ```
//!
//! The file also holds the small text helpers the result panes share (fitting text into a
//! width, `%g`-style numbers, the scroll window, the empty state).

use std::ops::Range;

use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Widget};

use crate::core::compare::Comparison;
use crate::core::view::{SortKey, utilization_summary};
use crate::core::{ChannelReport, Report};
use crate::ui::Theme;

/// The Utilization pane.
#[derive(Debug)]
pub struct UtilizationPane<'a> {
    /// The results, if any.
    pub report: Option<&'a Report>,
    /// The selected channel (clamped to the last one).
    pub selected: usize,
    /// The channels to list, in order (empty: every channel by index).
    pub order: &'a [usize],
    /// How `order` is sorted.
    pub sort: SortKey,
    /// `order` holds only the collapsed channels.
    pub collapsed_only: bool,
    /// A pinned configuration A beside the report's (B): each line adds A's share.
    pub comparison: Option<&'a Comparison>,
    /// The pane has focus.
    pub focused: bool,
    /// The results are out of date.
    pub stale: bool,
    /// Styles and glyphs.
    pub theme: &'a Theme,
}

/// A channel's note: collapsed, constant, or how many of its values were clamped (the
/// widths [`note_width`] reserves).
fn note(ch: &ChannelReport, theme: &Theme) -> Option<(String, Style)> {
    if ch.collapsed {
        Some((format!(" {} COLLAPSED", theme.glyphs.collapsed), theme.bad))
    } else if ch.constant {
        Some((" constant".to_string(), theme.dim))
    } else if ch.clipped > 0 {
        Some((format!(" ! {} clamped", ch.clipped), theme.bad))
    } else {
        None
    }
}

/// [`note`] in a few cells, when the channel's name would otherwise be cut: the collapsed
/// mark alone (the pane's border says what it means), `=` for constant, `!N` for clamped.
fn short_note(ch: &ChannelReport, theme: &Theme) -> Option<(String, Style)> {
    if ch.collapsed {
        Some((format!(" {}", theme.glyphs.collapsed), theme.bad))
    } else if ch.constant {
        Some((" =".to_string(), theme.dim))
    } else if ch.clipped > 0 {
        Some((format!(" !{}", ch.clipped), theme.bad))
    } else {
        None
    }
}

/// The widest note of `channels`, long or short.
fn note_width(channels: &[ChannelReport], short: bool) -> usize {
    channels
        .iter()
        .map(|c| match (short, c.collapsed, c.constant, c.clipped) {
            (false, true, _, _) => 12,
            (false, false, true, _) => 9,
            (false, false, false, n) if n > 0 => 12 + n.ilog10() as usize,
            (true, true, _, _) | (true, false, true, _) => 2,
            (true, false, false, n) if n > 0 => 3 + n.ilog10() as usize,
            _ => 0,
        })
        .max()
        .unwrap_or(0)
}
/// Narrowest bar worth drawing.
const MIN_BAR: usize = 4;

impl Widget for &UtilizationPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let theme = self.theme;
        let Some(report) = self.report else {
            let block = theme.block("Utilization", self.focused, self.stale);
            render_message(block, "no results yet", area, buf, theme);
            return;
        };
        let n = report.channels.len();
        let summary = match self.comparison {
            Some(c) => format!("B {}, A {} of {n} collapsed", c.collapsed.1, c.collapsed.0),
            None => format!("{} of {n} collapsed", report.collapsed_channels),
        };
        let (title, bottom) = title_parts(
            theme,
            "Utilization",
            &summary,
            self.focused,
            self.stale,
            area.width,
        );
        let mut block = theme.block(&title, self.focused, self.stale);
        let summary_below = bottom.is_some();
        if let Some(bottom) = bottom {
            block = block.title_bottom(bottom);
        }
        if report.collapsed_channels > 0 && !summary_below {
            // What the mark means, where it is seen.
            block = block.title_bottom(
                Line::styled(
                    format!(" {} = every value on one code ", theme.glyphs.collapsed),
                    theme.dim,
                )
                .left_aligned(),
            );
        }
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.is_empty() || n == 0 {
            return;
        }
        let order = self.order_of(report);
        let (summary, list) = self.split(report, &order, inner);
        let width = usize::from(inner.width);
        let texts = if summary.height > 0 {
            self.summary_lines(report, order.len(), width, inner.height)
        } else {
            Vec::new()
        };
        let inner = list;
        for (y, text) in (summary.y..summary.bottom()).zip(texts) {
            Line::styled(fit(&text, width, theme.glyphs.ascii), theme.dim).render(
                Rect {
                    y,
                    height: 1,
                    ..summary
                },
                buf,
            );
        }
        let order: &[usize] = &order;
        if order.is_empty() {
            Line::styled(
                fit(
                    "no channel to list (f shows all)",
                    usize::from(inner.width),
                    theme.glyphs.ascii,
                ),
                theme.dim,
            )
            .render(Rect { height: 1, ..inner }, buf);
            return;
        }
        let at = order
            .iter()
            .position(|&c| c == self.selected)
            .unwrap_or(if self.selected >= n {
                order.len() - 1
            } else {
                0
            });
        let rows = window(at, order.len(), usize::from(inner.height));
        let listed: Vec<usize> = order[rows].to_vec();
        let layout = RowLayout::new(
            report,
            &listed,
            usize::from(inner.width),
            self.comparison.is_some(),
            theme,
        );
        for (y, &i) in (inner.y..inner.bottom()).zip(&listed) {
            let line = layout.line(&report.channels[i], i == order[at], self);
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

impl UtilizationPane<'_> {
    /// The channels listed, in order.
    fn order_of(&self, report: &Report) -> Vec<usize> {
        if self.order.is_empty() && !self.collapsed_only {
            (0..report.channels.len()).collect()
        } else {
            self.order.to_vec()
        }
    }

    /// `inner` split into the summary's rows (with more channels than lines, or a
    /// non-default view, the first lines summarise) and the list's.
    fn split(&self, report: &Report, order: &[usize], inner: Rect) -> (Rect, Rect) {
        let n = report.channels.len();
        let show_summary = inner.height >= 3
            && (n > usize::from(inner.height)
                || self.sort != SortKey::Index
                || self.collapsed_only);
        let rows = if show_summary {
            let lines =
                self.summary_lines(report, order.len(), usize::from(inner.width), inner.height);
            u16::try_from(lines.len()).unwrap_or(0)
        } else {
            0
        };
        let summary = Rect {
            height: rows,
            ..inner
        };
        let list = Rect {
            y: inner.y + rows,
            height: inner.height - rows,
            ..inner
        };
        (summary, list)
    }

    /// The screen rows of the listed channels in `area` (the pane with its border), each
    /// with its channel: where a click selects one.
    #[must_use]
    pub fn item_rows(&self, area: Rect) -> Vec<(u16, usize)> {
        let Some(report) = self.report else {
            return Vec::new();
        };
        let inner = self.theme.block("", false, false).inner(area);
        if inner.is_empty() || report.channels.is_empty() {
            return Vec::new();
        }
        let order = self.order_of(report);
        let (_, list) = self.split(report, &order, inner);
        if order.is_empty() {
            return Vec::new();
        }
        let at = order.iter().position(|&c| c == self.selected).unwrap_or(
            if self.selected >= report.channels.len() {
                order.len() - 1
            } else {
                0
            },
        );
        let rows = window(at, order.len(), usize::from(list.height));
        (list.y..list.bottom())
            .zip(order[rows].iter().copied())
            .collect()
    }

    /// The summary above the list: the order and the spread of utilization, on one line
    /// when it fits, on two when the list keeps three lines, else in a short form.
    fn summary_lines(
        &self,
        report: &Report,
        listed: usize,
        width: usize,
        height: u16,
    ) -> Vec<String> {
        let u = utilization_summary(report);
        let pct = |x: f64| format!("{:.0}%", x * 100.0);
        let listing = format!(
            "sorted {} {}({} listed)",
            self.sort.describe(),
            if self.collapsed_only {
                "collapsed only "
            } else {
                ""
            },
            listed
        );
        let spread = format!(
            "utilization min {} median {} max {}",
            pct(u.min),
            pct(u.median),
            pct(u.max),
        );
        let one = format!("{listing} | {spread}");
        let short = format!(
            "min {} med {} max {}",
            pct(u.min),
            pct(u.median),
            pct(u.max)
        );
        let filter = if self.collapsed_only {
            format!("{listed} collapsed listed")
        } else if self.sort != SortKey::Index {
            self.sort.describe().to_string()
        } else {
            String::new()
        };
        let compact = if filter.is_empty() {
            format!("utilization {short}")
        } else {
            format!("{filter} | {short}")
        };
        // The whole summary on one line when it fits; on two when the list keeps at
        // least three lines; else its short form.
        if text_width(&one) <= width {
            vec![one]
        } else if height >= 6 {
            vec![listing, spread]
        } else {
            vec![compact]
        }
    }
}

/// Column widths shared by the visible lines.
struct RowLayout {
    label: usize,
    bar: usize,
    counts: usize,
    percent: bool,
    /// Room for the note column (0 when no channel has a note).
    note: usize,
    /// The notes are drawn short ([`short_note`]) to leave the names whole.
    short_notes: bool,
    /// The pinned configuration A's column is shown.
    pinned: bool,
}

/// The width of A's column: ` A 100% ✗`.
const PINNED_WIDTH: usize = 9;

impl RowLayout {
    fn new(report: &Report, listed: &[usize], width: usize, pinned: bool, theme: &Theme) -> Self {
        let visible: Vec<&ChannelReport> = listed.iter().map(|&i| &report.channels[i]).collect();
        let available = visible
            .iter()
            .map(|c| c.levels_available)
            .max()
            .unwrap_or(0);
        let counts = 2 * available.to_string().len() + 1;
        let longest = visible
            .iter()
            .map(|c| text_width(&fit(&channel_name(c), usize::MAX, theme.glyphs.ascii)))
            .max()
            .unwrap_or(0);
        // Room for the widest note of any channel, so bars keep their width while
        // scrolling; the notes shrink to their marks before a name is cut.
        let layout = |short: bool| {
            let note = note_width(&report.channels, short);
            // Pointer and space, then the label, the bar, the counts and the note.
            let fixed = 2 + counts + 1 + note + if pinned { PINNED_WIDTH } else { 0 };
            let rest = width.saturating_sub(fixed);
            let label = longest.clamp(2, (rest / 2).max(4)).min(rest);
            let bar_room = rest.saturating_sub(label + 1);
            let percent = bar_room >= 5 + 16;
            let bar = bar_room.saturating_sub(if percent { 5 } else { 0 });
            Self {
                label,
                bar: if bar >= MIN_BAR { bar } else { 0 },
                counts,
                percent,
                note,
                short_notes: short,
                pinned,
            }
        };
        let long = layout(false);
        if long.label < longest {
            let short = layout(true);
            if short.label > long.label {
                return short;
            }
        }
        long
    }

    fn line(
        &self,
        ch: &ChannelReport,
        selected: bool,
        pane: &UtilizationPane<'_>,
    ) -> Line<'static> {
        let theme = pane.theme;
        let glyphs = theme.glyphs;
        let numbers = number_style(theme, pane.stale);
        let mut spans = vec![
            Span::raw(if selected {
                format!("{} ", glyphs.pointer)
            } else {
                "  ".to_string()
            }),
            Span::styled(
                pad(
                    &fit(&channel_name(ch), self.label, glyphs.ascii),
                    self.label,
                    Alignment::Left,
                ),
                theme.text,
            ),
        ];
        if self.bar > 0 {
            let filled =
                ((ch.utilization.clamp(0.0, 1.0) * self.bar as f64).round() as usize).min(self.bar);
            spans.push(Span::raw(" "));
            spans.push(Span::styled(glyphs.bar_full.repeat(filled), numbers));
            spans.push(Span::styled(
                glyphs.bar_empty.repeat(self.bar - filled),
                theme.dim,
            ));
        }
        let counts = format!("{}/{}", ch.levels_used, ch.levels_available);
        spans.push(Span::raw(" "));
        spans.push(Span::styled(
            pad(&counts, self.counts, Alignment::Right),
            numbers,
        ));
        if self.percent {
            spans.push(Span::styled(
                format!(" {:>3.0}%", ch.utilization * 100.0),
                numbers,
            ));
        }
        if self.pinned
            && let Some(pair) = pane.comparison.and_then(|c| c.channels.get(ch.index))
        {
            spans.push(Span::styled(" A", theme.heading));
            spans.push(Span::styled(
                format!(" {:>3.0}%", pair.utilization.0 * 100.0),
                numbers,
            ));
            let mark = if pair.collapsed.0 {
                format!(" {}", glyphs.collapsed)
            } else {
                "  ".to_string()
            };
            spans.push(Span::styled(mark, theme.bad));
        }
        let note = if self.short_notes {
            short_note(ch, theme)
        } else {
            note(ch, theme)
        };
        if self.note > 0
            && let Some((text, style)) = note
        {
            spans.push(Span::styled(text, style));
        }
        crate::ui::rows::item_line(spans, selected, theme.selected)
    }
}

// ---------------------------------------------------------------------------------------
// Text helpers shared by the result panes (utilization, errors, ladder, detail).
// ---------------------------------------------------------------------------------------

/// The name of a channel: its label, or `ch N` (0-based, as the exporters number rows).
pub(crate) fn channel_name(ch: &ChannelReport) -> String {
    match &ch.label {
        Some(label) if !label.trim().is_empty() => label.clone(),
        _ => format!("ch {}", ch.index),
    }
}

/// Display width of `s` in terminal cells.
pub(crate) fn text_width(s: &str) -> usize {
    Span::raw(s).width()
}

/// `s` cut to at most `width` cells, ending in `…` (`~` in ASCII mode) when cut. In ASCII
/// mode every non-ASCII character becomes `?`; control characters are dropped.
pub(crate) fn fit(s: &str, width: usize, ascii: bool) -> String {
    let span = Span::raw(s);
    let graphemes: Vec<&str> = span
        .styled_graphemes(Style::new())
        .map(|g| {
            if ascii && !g.symbol.is_ascii() {
                "?"
            } else {
                g.symbol
            }
        })
        .collect();
    let total: usize = graphemes.iter().map(|g| text_width(g)).sum();
    if total <= width {
        return graphemes.concat();
    }
    if width == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for g in graphemes {
        let w = text_width(g);
        if used + w > width - 1 {
            break;
        }
        used += w;
        out.push_str(g);
    }
    out.push_str(if ascii { "~" } else { "…" });
    out
}

/// `s` (already fitted) padded with spaces to `width` cells.
pub(crate) fn pad(s: &str, width: usize, align: Alignment) -> String {
    let gap = width.saturating_sub(text_width(s));
    match align {
        Alignment::Right => format!("{}{s}", " ".repeat(gap)),
        Alignment::Center => format!("{}{s}{}", " ".repeat(gap / 2), " ".repeat(gap - gap / 2)),
        Alignment::Left => format!("{s}{}", " ".repeat(gap)),
    }
}

/// The lines `[start, end)` of a list of `len` lines shown `height` at a time, so that
/// `selected` is visible (kept near the middle once the list scrolls).
pub(crate) fn window(selected: usize, len: usize, height: usize) -> Range<usize> {
    if height == 0 || len == 0 {
        return 0..0;
    }
    let selected = selected.min(len - 1);
    let start = selected
        .saturating_sub(height / 2)
        .min(len.saturating_sub(height));
    start..(start + height).min(len)
}

/// `x` with `digits` significant digits, like C's `%g` but switching to scientific notation
/// below `1e-3` so numbers stay short: `0.0214`, `2.21`, `1.23e-4`, `4.57e6`.
pub(crate) fn sig(x: f64, digits: usize) -> String {
    crate::io::export::num::significant(x, digits, -3)
}

/// The style of numbers: dimmed when the results are stale.
pub(crate) fn number_style(theme: &Theme, stale: bool) -> Style {
    if stale {
        theme.dim.add_modifier(Modifier::DIM)
    } else {
        theme.text
    }
}

/// The "missing value" mark: `—`, or `-` in ASCII mode.
pub(crate) fn missing(theme: &Theme) -> &'static str {
    if theme.glyphs.ascii { "-" } else { "—" }
}

/// The separator of title parts: `·`, or `-` in ASCII mode.
pub(crate) fn sep(theme: &Theme) -> &'static str {
    if theme.glyphs.ascii { "-" } else { "·" }
}

/// The title of a pane border: `title · summary` when that fits in `width`, otherwise
/// `title` and the summary as a line for the bottom border.
pub(crate) fn title_parts(
    theme: &Theme,
    title: &str,
    summary: &str,
    focused: bool,
    stale: bool,
    width: u16,
) -> (String, Option<Line<'static>>) {
    let decoration = 2 + 2 + if focused { 2 } else { 0 } + if stale { 8 } else { 0 };
    let summary = fit(summary, usize::MAX, theme.glyphs.ascii);
    let full = format!("{title} {} {summary}", sep(theme));
    if text_width(&full) + decoration <= usize::from(width) {
        (full, None)
    } else {
        (
            title.to_string(),
            Some(Line::styled(format!(" {summary} "), theme.dim).right_aligned()),
        )
    }
}

/// A border and a dim message centred inside it (the empty and pending states).
pub(crate) fn render_message(
    block: Block<'_>,
    message: &str,
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
) {
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.is_empty() {
        return;
    }
    let text = fit(message, usize::from(inner.width), theme.glyphs.ascii);
    let y = inner.y + (inner.height - 1) / 2;
    Line::styled(text, theme.dim.add_modifier(Modifier::DIM))
        .centered()
        .render(
            Rect {
                y,
                height: 1,
                ..inner
            },
            buf,
        );
}
