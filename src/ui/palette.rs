//! The command palette's view: the name being typed, then the commands that match it, each
//! with its sentence and its keys, the selected one marked.
//!
//! ```text
//! ┏ ▶ Commands: type to find, Enter runs, Esc closes ━━━━━━━━━━━━━━━━━━━━━━━━━━┓
//! ┃find: gra                                                                    ┃
//! ┃▶ granularity  the next granularity: tensor, channel, groups      F7, Alt-g, g┃
//! ┃  group size   the next group size (when per group)               F8, Alt-z, z┃
//! ┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛
//! ```

use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Widget};

use crate::app::palette::Palette;
use crate::ui::Theme;
use crate::ui::help::centered;
use crate::ui::utilization::{fit, pad, text_width, window};

/// The command palette over the screen.
#[derive(Debug)]
pub struct PaletteOverlay<'a> {
    /// Its state.
    pub palette: &'a Palette,
    /// Styles.
    pub theme: &'a Theme,
}

impl PaletteOverlay<'_> {
    /// Where the palette is drawn on a screen of `area`.
    #[must_use]
    pub fn popup(area: Rect) -> Rect {
        centered(
            area,
            area.width.saturating_sub(2).min(110),
            area.height.saturating_sub(2),
        )
    }

    /// The rows of the list inside `popup`: its first line is the filter's.
    #[must_use]
    pub fn list_area(&self, popup: Rect) -> Rect {
        let inner = self.theme.block("", true, false).inner(popup);
        let [_, list] = Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(inner);
        list
    }
}

impl Widget for &PaletteOverlay<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let theme = self.theme;
        let popup = PaletteOverlay::popup(area);
        Clear.render(popup, buf);
        let block = theme.block(
            "Commands: type to find, Enter runs, Esc closes",
            true,
            false,
        );
        let inner = block.inner(popup);
        block.render(popup, buf);
        if inner.is_empty() {
            return;
        }
        let [filter, list] =
            Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(inner);
        let [label, field] =
            Layout::horizontal([Constraint::Length(6), Constraint::Fill(1)]).areas(filter);
        Line::styled("find: ", theme.key).render(label, buf);
        self.palette.filter.render(field, buf);
        let commands = self.palette.visible();
        if commands.is_empty() {
            Line::styled("no command matches", theme.dim).render(list, buf);
            return;
        }
        let width = usize::from(list.width);
        let selected = self.palette.selected.min(commands.len() - 1);
        let name_width = commands
            .iter()
            .map(|c| text_width(c.name))
            .max()
            .unwrap_or(0)
            .min(18);
        let shown = window(selected, commands.len(), usize::from(list.height));
        for (y, (i, c)) in (list.y..list.bottom()).zip(shown.clone().map(|i| (i, &commands[i]))) {
            let pointer = if i == selected {
                theme.glyphs.pointer
            } else {
                " "
            };
            let keys = fit(&c.keys, width / 3, theme.glyphs.ascii);
            let room = width.saturating_sub(2 + name_width + 2 + text_width(&keys) + 2);
            let what = pad(
                &fit(c.what, room, theme.glyphs.ascii),
                room,
                Alignment::Left,
            );
            let name = pad(
                &fit(c.name, name_width, theme.glyphs.ascii),
                name_width,
                Alignment::Left,
            );
            let mut line = Line::from(vec![
                Span::styled(format!("{pointer} {name}  "), theme.heading),
                Span::styled(format!("{what}  "), theme.text),
                Span::styled(keys, theme.key),
            ]);
            if i == selected {
                line = line.style(theme.selected);
            }
            line.render(
                Rect {
                    y,
                    height: 1,
                    ..list
                },
                buf,
            );
        }
    }
}
