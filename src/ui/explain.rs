//! The worked-arithmetic pane: how the selected channel's scale and zero point were formed,
//! then every value's trip to its code and back, in the seed lesson's manner. The lines are
//! the ones `report --explain` prints (formatted by `io::export`).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget, Wrap};

use crate::core::explain::ChannelExplanation;
use crate::io::export::worked_arithmetic;
use crate::ui::Theme;

/// The worked-arithmetic pane.
#[derive(Debug)]
pub struct ExplainPane<'a> {
    /// The selected channel's explanation, if computed.
    pub explanation: Option<&'a ChannelExplanation>,
    /// The pane has focus.
    pub focused: bool,
    /// The results are out of date.
    pub stale: bool,
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
        let block = self.theme.block(&title, self.focused, self.stale);
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.is_empty() {
            return;
        }
        let Some(e) = self.explanation else {
            Paragraph::new(Line::styled("no results yet", self.theme.dim)).render(inner, buf);
            return;
        };
        let mut lines = worked_arithmetic(e);
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
        Paragraph::new(text)
            .wrap(Wrap { trim: false })
            .render(inner, buf);
    }
}
