//! One set of styles for every pane. Colours are the 16 ANSI ones only, and every meaning
//! they carry is also carried by text or a symbol, so `NO_COLOR` and monochrome terminals
//! lose nothing.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType, Borders};

/// Glyphs that depend on `--ascii`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Glyphs {
    /// A filled bar cell.
    pub bar_full: &'static str,
    /// An empty bar cell.
    pub bar_empty: &'static str,
    /// Marks a collapsed channel.
    pub collapsed: &'static str,
    /// Marks the selected line.
    pub pointer: &'static str,
    /// Marks the active rung / setting.
    pub active: &'static str,
    /// Marks stale results.
    pub stale: &'static str,
    /// Marks an error.
    pub error: &'static str,
    /// Separates items in titles.
    pub sep: &'static str,
    /// Marks text cut short.
    pub ellipsis: &'static str,
    /// The ascii-only variant is in use.
    pub ascii: bool,
}

impl Glyphs {
    /// Unicode block glyphs.
    pub const UNICODE: Self = Self {
        bar_full: "█",
        bar_empty: "·",
        collapsed: "✗",
        pointer: "▶",
        active: "●",
        stale: "⚠",
        error: "✗",
        sep: "·",
        ellipsis: "…",
        ascii: false,
    };
    /// Plain ASCII.
    pub const ASCII: Self = Self {
        bar_full: "#",
        bar_empty: ".",
        collapsed: "X",
        pointer: ">",
        active: "*",
        stale: "!",
        error: "X",
        sep: "|",
        ellipsis: "...",
        ascii: true,
    };
}

/// The styles and glyphs the panes draw with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Theme {
    /// Ordinary text.
    pub text: Style,
    /// Secondary text (units, hints).
    pub dim: Style,
    /// Column headings and labels.
    pub heading: Style,
    /// The focused pane's border and title.
    pub focus: Style,
    /// Other panes' borders.
    pub border: Style,
    /// The selected line of a list.
    pub selected: Style,
    /// The active rung, setting or granularity.
    pub active: Style,
    /// Bad news: collapsed channels, parse errors.
    pub bad: Style,
    /// Good news.
    pub good: Style,
    /// Stale results.
    pub stale: Style,
    /// Keys in hints and help.
    pub key: Style,
    /// The editor's cursor.
    pub cursor: Style,
    /// The editor's selected text.
    pub selection: Style,
    /// Glyphs.
    pub glyphs: Glyphs,
}

impl Theme {
    /// The theme for a terminal with colours (16 are enough) or without (`color == false`,
    /// e.g. `NO_COLOR`): then only bold, reverse and underline remain.
    #[must_use]
    pub fn new(color: bool, ascii: bool) -> Self {
        let glyphs = if ascii {
            Glyphs::ASCII
        } else {
            Glyphs::UNICODE
        };
        let plain = Style::new();
        let bold = Style::new().add_modifier(Modifier::BOLD);
        if !color {
            return Self {
                text: plain,
                dim: plain,
                heading: bold,
                focus: bold,
                border: plain,
                selected: Style::new().add_modifier(Modifier::REVERSED),
                active: bold,
                bad: bold,
                good: plain,
                stale: Style::new().add_modifier(Modifier::UNDERLINED),
                key: bold,
                cursor: Style::new().add_modifier(Modifier::REVERSED),
                selection: Style::new().add_modifier(Modifier::UNDERLINED),
                glyphs,
            };
        }
        Self {
            text: plain,
            dim: Style::new().fg(Color::DarkGray),
            heading: Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            focus: Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            border: Style::new().fg(Color::Gray),
            selected: Style::new().add_modifier(Modifier::REVERSED),
            active: Style::new().fg(Color::Green).add_modifier(Modifier::BOLD),
            bad: Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
            good: Style::new().fg(Color::Green),
            stale: Style::new().fg(Color::Magenta),
            key: Style::new().fg(Color::Yellow),
            cursor: Style::new().add_modifier(Modifier::REVERSED),
            selection: Style::new().bg(Color::Blue).fg(Color::White),
            glyphs,
        }
    }

    /// The border of a pane: title, focus marking (a thick border and the word in the
    /// title's style) and a stale marker when the results are out of date.
    #[must_use]
    pub fn block<'a>(&self, title: &'a str, focused: bool, stale: bool) -> Block<'a> {
        let label = if focused {
            format!(" {} {title} ", self.glyphs.pointer)
        } else {
            format!(" {title} ")
        };
        let mut t = vec![ratatui::text::Span::styled(
            label,
            if focused { self.focus } else { self.heading },
        )];
        if stale {
            t.push(ratatui::text::Span::styled(
                format!("{} stale ", self.glyphs.stale),
                self.stale,
            ));
        }
        let border_type = if focused && !self.glyphs.ascii {
            BorderType::Thick
        } else {
            BorderType::Plain
        };
        let mut block = Block::new()
            .borders(Borders::ALL)
            .border_type(border_type)
            .border_style(if focused { self.focus } else { self.border })
            .title(Line::from(t));
        if self.glyphs.ascii {
            block = block.border_set(ASCII_BORDER);
        }
        block
    }
}

/// Borders drawn with `+`, `-` and `|` for `--ascii`.
pub const ASCII_BORDER: ratatui::symbols::border::Set<'static> = ratatui::symbols::border::Set {
    top_left: "+",
    top_right: "+",
    bottom_left: "+",
    bottom_right: "+",
    vertical_left: "|",
    vertical_right: "|",
    horizontal_top: "-",
    horizontal_bottom: "-",
};
