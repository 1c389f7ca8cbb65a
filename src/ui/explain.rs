//! The worked-arithmetic pane: how the selected channel's scale and zero point were formed,
//! then every value's trip to its code and back, in the seed lesson's manner. The lines are
//! the ones `report --explain` prints (formatted by `io::export`).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget, Wrap};

use crate::app::keymap::{Action, Mode, first_key};
use crate::core::explain::ChannelExplanation;
use crate::io::export::worked_arithmetic;
use crate::ui::{Theme, scroll};

/// The worked-arithmetic pane.
#[derive(Debug)]
pub struct ExplainPane<'a> {
    /// The selected channel's explanation, if computed.
    pub explanation: Option<&'a ChannelExplanation>,
    /// The method beyond rounding's worked arithmetic, after the channel's, when it ran.
    pub method: Option<&'a crate::core::method::worked::Worked>,
    /// The pane has focus.
    pub focused: bool,
    /// The results are out of date.
    pub stale: bool,
    /// The first line shown (kept within the text).
    pub scroll: u16,
    /// Styles.
    pub theme: &'a Theme,
}

impl Widget for &ExplainPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let title = match self.explanation {
            Some(e) => match &e.label {
                Some(l) => format!(
                    "Worked arithmetic {} channel {} ({l})",
                    self.theme.glyphs.sep, e.row
                ),
                None => format!(
                    "Worked arithmetic {} channel {}",
                    self.theme.glyphs.sep, e.row
                ),
            },
            None => "Worked arithmetic".to_string(),
        };
        let mut block = self.theme.block(&title, self.focused, self.stale);
        let inner = block.inner(area);
        let Some(text) = self.text() else {
            block.render(area, buf);
            Paragraph::new(Line::styled("no results yet", self.theme.dim)).render(inner, buf);
            return;
        };
        let max = scroll::max_offset(&text, inner);
        let first = self.scroll.min(max);
        let key = |a| first_key(Mode::Panes, a).unwrap_or_default();
        if let Some(note) = scroll::note(
            first,
            max,
            &key(Action::PageUp),
            &key(Action::PageDown),
            self.theme,
        ) {
            block = block.title_bottom(note);
        }
        block.render(area, buf);
        if inner.is_empty() {
            return;
        }
        scroll::render(text, inner, buf, first);
    }
}

impl ExplainPane<'_> {
    /// The worked arithmetic as a wrapped paragraph, if there is one.
    fn text(&self) -> Option<Paragraph<'static>> {
        let e = self.explanation?;
        let mut lines = worked_arithmetic(e);
        if let Some(w) = self.method {
            lines.push(String::new());
            lines.extend(crate::io::export::method_worked_arithmetic(w));
        }
        if self.theme.glyphs.ascii {
            for l in &mut lines {
                *l = l
                    .replace('→', "->")
                    .replace("x̂", "x^")
                    .replace('·', "*")
                    .replace('−', "-")
                    .replace('…', "...");
                l.retain(|c| c.is_ascii());
            }
        }
        let style = if self.stale {
            self.theme.dim
        } else {
            self.theme.text
        };
        let text: Vec<Line> = lines.into_iter().map(|l| Line::styled(l, style)).collect();
        Some(Paragraph::new(text).wrap(Wrap { trim: false }))
    }

    /// How far the worked arithmetic can scroll in `area` (the pane with its border).
    #[must_use]
    pub fn max_scroll(&self, area: Rect) -> u16 {
        let inner = self.theme.block("", false, false).inner(area);
        self.text().map_or(0, |t| scroll::max_offset(&t, inner))
    }
}
