//! Overlays: the help (every binding, generated from the keymap table that handles the
//! keys) and the yes/no and file-name questions.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget, Wrap};
use ratatui_textarea::TextArea;

use crate::app::keymap::{Mode, bindings};
use crate::ui::Theme;

/// The modes in the order the help lists them.
pub const HELP_MODES: [Mode; 14] = Mode::ALL;

/// The words the panes use, defined where the help is read first.
pub const GLOSSARY: [(&str, &str); 6] = [
    (
        "COLLAPSED",
        "a channel whose values differ but all round to one code: it comes back as a constant and its shape is lost",
    ),
    (
        "utilization",
        "the share of the code range [qmin, qmax] between a channel's smallest and largest code",
    ),
    ("levels", "distinct codes a channel uses / codes available"),
    (
        "clamped",
        "values outside the range the scale covers, set to the nearest end code (qmin or qmax)",
    ),
    (
        "SQNR",
        "signal to quantization noise, 20·log10(‖x‖ / ‖x − x̂‖) in dB: higher is better",
    ),
    (
        "bits/weight",
        "(elements × bits + scales × metadata bits) / elements: the payload plus what the scales and zero points cost",
    ),
];

/// The help text: the words the panes use, then one line per binding, grouped by mode:
/// `(keys, description)`; a heading line has empty keys.
#[must_use]
pub fn help_lines() -> Vec<(String, String)> {
    let mut out = vec![(String::new(), "Words on screen".to_string())];
    for (word, meaning) in GLOSSARY {
        out.push((word.to_string(), meaning.to_string()));
    }
    for mode in HELP_MODES {
        if !out.is_empty() {
            out.push((String::new(), String::new()));
        }
        out.push((String::new(), mode.title().to_string()));
        for b in bindings(mode) {
            let keys = b
                .keys
                .iter()
                .map(crate::app::keymap::Combo::label)
                .collect::<Vec<_>>()
                .join(", ");
            out.push((keys, b.action.describe_in(mode).to_string()));
        }
    }
    out
}

/// The area of a full-height overlay up to 100 columns wide, centred in `area` and cleared:
/// the format ladder's and the importance's.
pub(crate) fn tall_popup(area: Rect, buf: &mut Buffer) -> Rect {
    let popup = centered(
        area,
        area.width.saturating_sub(2).min(100),
        area.height.saturating_sub(1),
    );
    Clear.render(popup, buf);
    popup
}

/// A `width` x `height` area centred in `area` (smaller where `area` is).
pub(crate) fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let [v] = Layout::vertical([Constraint::Length(height.min(area.height))])
        .flex(Flex::Center)
        .areas(area);
    let [h] = Layout::horizontal([Constraint::Length(width.min(area.width))])
        .flex(Flex::Center)
        .areas(v);
    h
}

/// Cells a description needs beside the keys; narrower, it goes under them.
const MIN_BESIDE: usize = 24;

/// The help overlay.
#[derive(Debug)]
pub struct HelpOverlay<'a> {
    /// First line shown.
    pub scroll: u16,
    /// Styles.
    pub theme: &'a Theme,
}

impl HelpOverlay<'_> {
    /// The box the help is drawn in on a screen of `area`, and its lines for the room
    /// inside it.
    fn laid_out(&self, area: Rect) -> (Rect, Vec<Line<'static>>) {
        let popup = centered(
            area,
            area.width.saturating_sub(4).min(100),
            area.height.saturating_sub(2),
        );
        let inner = self.theme.block("", true, false).inner(popup);
        (popup, self.lines(inner.width))
    }

    /// How far the help can scroll on a screen of `area`.
    #[must_use]
    pub fn max_scroll(&self, area: Rect) -> u16 {
        let (popup, lines) = self.laid_out(area);
        let inner = self.theme.block("", true, false).inner(popup);
        u16::try_from(lines.len())
            .unwrap_or(u16::MAX)
            .saturating_sub(inner.height)
    }

    /// The help's lines, wrapped for `width` cells.
    fn lines(&self, width: u16) -> Vec<Line<'static>> {
        let lines = help_lines();
        let key_width = lines
            .iter()
            .map(|(k, _)| k.chars().count())
            .max()
            .unwrap_or(0)
            .min(30);
        let width = usize::from(width).max(1);
        let wrap = |text: &str, room: usize| crate::ui::caption::wrap(text, room.max(1));
        // Descriptions wrap under themselves, so a narrow screen loses no word; below
        // MIN_BESIDE cells beside the keys, the keys go on a line of their own and the
        // description under them.
        let room = width.saturating_sub(key_width + 4);
        let stacked = room < MIN_BESIDE;
        let mut text: Vec<Line> = Vec::new();
        for (keys, what) in lines {
            if keys.is_empty() && what.is_empty() {
                text.push(Line::raw(""));
                continue;
            }
            if keys.is_empty() {
                for part in wrap(&what, width) {
                    text.push(Line::from(Span::styled(part, self.theme.heading)));
                }
                continue;
            }
            if stacked {
                for part in wrap(&keys, width.saturating_sub(2)) {
                    text.push(Line::styled(format!("  {part}"), self.theme.key));
                }
                for part in wrap(&what, width.saturating_sub(4)) {
                    text.push(Line::styled(format!("    {part}"), self.theme.text));
                }
                continue;
            }
            for (i, part) in wrap(&what, room).into_iter().enumerate() {
                let keys = if i == 0 { keys.as_str() } else { "" };
                text.push(Line::from(vec![
                    Span::styled(format!("  {keys:<key_width$}  "), self.theme.key),
                    Span::styled(part, self.theme.text),
                ]));
            }
        }
        text
    }
}

impl Widget for &HelpOverlay<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let (popup, text) = self.laid_out(area);
        Clear.render(popup, buf);
        let palette =
            crate::app::keymap::first_key(Mode::Global, crate::app::keymap::Action::Palette)
                .unwrap_or_default();
        let title = format!("Help (Esc closes, arrows scroll, {palette} finds commands)");
        let block = self.theme.block(&title, true, false);
        let inner = block.inner(popup);
        block.render(popup, buf);
        let max_scroll = u16::try_from(text.len())
            .unwrap_or(u16::MAX)
            .saturating_sub(inner.height);
        Paragraph::new(text)
            .scroll((self.scroll.min(max_scroll), 0))
            .render(inner, buf);
    }
}

/// A question with an optional one-line answer field, and a note under it (why the last
/// answer did not work), each wrapped whole.
#[derive(Debug)]
pub struct Question<'a> {
    /// Box title.
    pub title: &'a str,
    /// The question.
    pub text: &'a str,
    /// The answer being typed, if the question takes one.
    pub prompt: Option<&'a TextArea<'static>>,
    /// Drawn under the answer, in full: why the last answer did not work.
    pub note: Option<&'a str>,
    /// Styles.
    pub theme: &'a Theme,
}

impl Widget for &Question<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let width = area.width.saturating_sub(4).min(76);
        let room = usize::from(width.saturating_sub(2).max(1));
        let rows = |text: &str| {
            u16::try_from(crate::ui::caption::wrap(text, room).len()).unwrap_or(u16::MAX)
        };
        let text_rows = rows(self.text).max(1);
        let note_rows = self.note.map_or(0, rows);
        let height = text_rows + 2 + u16::from(self.prompt.is_some()) + note_rows;
        let popup = centered(area, width, height);
        Clear.render(popup, buf);
        let block = self.theme.block(self.title, true, false);
        let inner = block.inner(popup);
        block.render(popup, buf);
        let [question, answer, note] = Layout::vertical([
            Constraint::Length(text_rows),
            Constraint::Length(u16::from(self.prompt.is_some())),
            Constraint::Length(note_rows),
        ])
        .areas(inner);
        Paragraph::new(self.text)
            .wrap(Wrap { trim: true })
            .render(question, buf);
        if let Some(prompt) = self.prompt {
            prompt.render(answer, buf);
        }
        if let Some(text) = self.note {
            let lines: Vec<Line> = crate::ui::caption::wrap(text, room)
                .into_iter()
                .map(|l| Line::styled(l, self.theme.bad))
                .collect();
            Paragraph::new(lines).render(note, buf);
        }
    }
}

/// The key table as Markdown (docs/user/explorer.md carries a copy; a test keeps them equal).
#[must_use]
pub fn markdown_key_table() -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for mode in HELP_MODES {
        let _ = write!(
            out,
            "\n**{}**\n\n| keys | action |\n|---|---|\n",
            mode.title()
        );
        for b in bindings(mode) {
            let keys = b
                .keys
                .iter()
                .map(|k| format!("`{}`", k.label()))
                .collect::<Vec<_>>()
                .join(", ");
            let _ = writeln!(
                out,
                "| {} | {} |",
                keys.replace('|', "\\|"),
                b.action.describe_in(mode)
            );
        }
    }
    out
}

/// The scenario picker: one line per scenario, and what to look at in the selected one.
#[derive(Debug)]
pub struct Picker<'a> {
    /// Box title.
    pub title: &'a str,
    /// `(name, title, details)` of each entry.
    pub entries: &'a [(String, String, String)],
    /// The selected entry.
    pub selected: usize,
    /// Entries drawn greyed (listed, but they cannot be opened); missing ones are not.
    pub dimmed: &'a [bool],
    /// Styles.
    pub theme: &'a Theme,
}

impl Widget for &Picker<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let popup = centered(
            area,
            area.width.saturating_sub(4).min(96),
            area.height.saturating_sub(2),
        );
        Clear.render(popup, buf);
        let block = self.theme.block(self.title, true, false);
        let inner = block.inner(popup);
        block.render(popup, buf);
        if inner.is_empty() || self.entries.is_empty() {
            return;
        }
        let selected = self.selected.min(self.entries.len() - 1);
        let name_width = self
            .entries
            .iter()
            .map(|(n, _, _)| n.chars().count())
            .max()
            .unwrap_or(0);
        let list_height = u16::try_from(self.entries.len())
            .unwrap_or(u16::MAX)
            .min(inner.height.saturating_sub(3).max(1));
        let [list, details] =
            Layout::vertical([Constraint::Length(list_height), Constraint::Fill(1)]).areas(inner);
        let first = selected.saturating_sub(usize::from(list_height).saturating_sub(1));
        let lines: Vec<Line> = self
            .entries
            .iter()
            .enumerate()
            .skip(first)
            .take(usize::from(list_height))
            .map(|(i, (name, title, _))| {
                let pointer = if i == selected {
                    self.theme.glyphs.pointer
                } else {
                    " "
                };
                let dim = self.dimmed.get(i).copied().unwrap_or(false);
                let style = match (i == selected, dim) {
                    (true, true) => self.theme.selected.patch(self.theme.dim),
                    (true, false) => self.theme.selected,
                    (false, true) => self.theme.dim,
                    (false, false) => self.theme.text,
                };
                Line::styled(format!("{pointer} {name:<name_width$}  {title}"), style)
            })
            .collect();
        Paragraph::new(lines).render(list, buf);
        let detail = &self.entries[selected].2;
        Paragraph::new(Line::styled(detail.clone(), self.theme.dim))
            .wrap(Wrap { trim: true })
            .render(details, buf);
    }
}

/// The filter line drawn on the bottom border of a picker.
#[derive(Debug)]
pub struct FilterLine<'a> {
    /// The filter being typed.
    pub filter: &'a TextArea<'static>,
    /// Styles.
    pub theme: &'a Theme,
}

impl Widget for &FilterLine<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let popup = centered(
            area,
            area.width.saturating_sub(4).min(96),
            area.height.saturating_sub(2),
        );
        if popup.height < 3 || popup.width < 12 {
            return;
        }
        let row = Rect {
            x: popup.x + 2,
            y: popup.bottom() - 1,
            width: popup.width - 4,
            height: 1,
        };
        let [label, field] =
            Layout::horizontal([Constraint::Length(8), Constraint::Fill(1)]).areas(row);
        Line::styled("filter: ", self.theme.key).render(label, buf);
        self.filter.render(field, buf);
    }
}
