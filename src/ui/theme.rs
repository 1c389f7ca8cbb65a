//! One set of styles for every pane, in three themes: `dark` (the terminal's own background,
//! the 16 ANSI colours, for the dark backgrounds most terminals have), `light` (black on
//! white, painted, for light terminals) and `high-contrast` (white on black, painted, every
//! pair at 7:1 or more). Every meaning a colour carries is also carried by text or a symbol,
//! so `NO_COLOR` and monochrome terminals lose nothing; `tests/it/terminal.rs` computes the
//! WCAG contrast ratio of every colour pair of every theme.

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

/// The themes to choose from (`--theme`, or `theme` in the config file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ThemeName {
    /// The terminal's own background and the 16 ANSI colours, for a dark background.
    #[default]
    Dark,
    /// Black on white, painted whatever the terminal's background.
    Light,
    /// White on black, painted, every colour pair at 7:1 contrast or more.
    HighContrast,
}

impl ThemeName {
    /// Every theme, in the order `--help` lists them.
    pub const ALL: [Self; 3] = [Self::Dark, Self::Light, Self::HighContrast];

    /// Its name in flags and the config file.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Dark => "dark",
            Self::Light => "light",
            Self::HighContrast => "high-contrast",
        }
    }
}

impl std::str::FromStr for ThemeName {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|t| t.name() == s.trim().to_ascii_lowercase())
            .ok_or_else(|| {
                format!(
                    "unknown theme {s:?}: the themes are {}",
                    Self::ALL.map(Self::name).join(", ")
                )
            })
    }
}

impl std::fmt::Display for ThemeName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The styles and glyphs the panes draw with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Theme {
    /// Which theme.
    pub name: ThemeName,
    /// The whole screen's colours: every pane and overlay is painted with it first (the
    /// dark theme leaves the terminal's own).
    pub base: Style,
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
    /// The dark theme for a terminal with colours (16 are enough) or without (`color ==
    /// false`, e.g. `NO_COLOR`): then only bold, reverse and underline remain.
    #[must_use]
    pub fn new(color: bool, ascii: bool) -> Self {
        Self::named(ThemeName::Dark, color, ascii)
    }

    /// Theme `name`; without colour (`NO_COLOR`) every theme is the monochrome one.
    #[must_use]
    pub fn named(name: ThemeName, color: bool, ascii: bool) -> Self {
        let glyphs = if ascii {
            Glyphs::ASCII
        } else {
            Glyphs::UNICODE
        };
        let plain = Style::new();
        let bold = Style::new().add_modifier(Modifier::BOLD);
        let reversed = Style::new().add_modifier(Modifier::REVERSED);
        if !color {
            return Self {
                name,
                base: plain,
                text: plain,
                dim: plain,
                heading: bold,
                focus: bold,
                border: plain,
                selected: reversed,
                active: bold,
                bad: bold,
                good: plain,
                stale: Style::new().add_modifier(Modifier::UNDERLINED),
                key: bold,
                cursor: reversed,
                selection: Style::new().add_modifier(Modifier::UNDERLINED),
                glyphs,
            };
        }
        let fg = |c: Color| Style::new().fg(c);
        let fg_bold = |c: Color| Style::new().fg(c).add_modifier(Modifier::BOLD);
        match name {
            ThemeName::Dark => Self {
                name,
                base: plain,
                text: plain,
                dim: fg(Color::DarkGray),
                heading: fg_bold(Color::Cyan),
                focus: fg_bold(Color::Yellow),
                border: fg(Color::Gray),
                selected: reversed,
                active: fg_bold(Color::Green),
                bad: fg_bold(Color::LightRed),
                good: fg(Color::Green),
                stale: fg(Color::LightMagenta),
                key: fg(Color::Yellow),
                cursor: reversed,
                selection: Style::new().bg(Color::Blue).fg(Color::White),
                glyphs,
            },
            // xterm's 256 colours, whose values are fixed (the 16 ANSI ones are the
            // terminal's to choose).
            ThemeName::Light => Self {
                name,
                base: Style::new().bg(Color::Indexed(231)).fg(Color::Indexed(16)),
                text: plain,
                dim: fg(Color::Indexed(240)),
                heading: fg_bold(Color::Indexed(24)),
                focus: fg_bold(Color::Indexed(130)),
                border: fg(Color::Indexed(244)),
                selected: Style::new().bg(Color::Indexed(153)),
                active: fg_bold(Color::Indexed(22)),
                bad: fg_bold(Color::Indexed(124)),
                good: fg(Color::Indexed(22)),
                stale: fg(Color::Indexed(90)),
                key: fg(Color::Indexed(94)),
                cursor: reversed,
                selection: Style::new().bg(Color::Indexed(153)),
                glyphs,
            },
            ThemeName::HighContrast => Self {
                name,
                base: Style::new().bg(Color::Indexed(16)).fg(Color::Indexed(231)),
                text: plain,
                dim: fg(Color::Indexed(252)),
                heading: fg_bold(Color::Indexed(51)),
                focus: fg_bold(Color::Indexed(226)),
                border: fg(Color::Indexed(231)),
                selected: Style::new().bg(Color::Indexed(226)).fg(Color::Indexed(16)),
                active: fg_bold(Color::Indexed(46)),
                bad: fg_bold(Color::Indexed(210)),
                good: fg(Color::Indexed(46)),
                stale: fg(Color::Indexed(219)),
                key: fg(Color::Indexed(226)),
                cursor: reversed,
                selection: Style::new().bg(Color::Indexed(231)).fg(Color::Indexed(16)),
                glyphs,
            },
        }
    }

    /// Every colour pair the theme draws text or borders with, named: `(what, style)` with
    /// the base's colours under each (for the contrast checks).
    #[must_use]
    pub fn pairs(&self) -> Vec<(&'static str, Style)> {
        let on = |s: Style| self.base.patch(s);
        vec![
            ("text", on(self.text)),
            ("dim", on(self.dim)),
            ("heading", on(self.heading)),
            ("focus", on(self.focus)),
            ("border", on(self.border)),
            ("selected", on(self.text).patch(self.selected)),
            ("selected dim", on(self.dim).patch(self.selected)),
            ("active", on(self.active)),
            ("bad", on(self.bad)),
            ("good", on(self.good)),
            ("stale", on(self.stale)),
            ("key", on(self.key)),
            ("cursor", on(self.text).patch(self.cursor)),
            ("selection", on(self.text).patch(self.selection)),
        ]
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
            .style(self.base)
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
