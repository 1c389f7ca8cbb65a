//! Text that scrolls: a wrapped paragraph shown from a first line, how far it can scroll in
//! an area, and the note on a pane's border that says there is more and which key shows it.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget};

use crate::ui::Theme;

/// The largest first line of `text` in `area`: the rows it wraps to, less the area's.
#[must_use]
pub fn max_offset(text: &Paragraph<'_>, area: Rect) -> u16 {
    let rows = u16::try_from(text.line_count(area.width)).unwrap_or(u16::MAX);
    rows.saturating_sub(area.height)
}

/// Draws `text` into `area` from line `offset` (kept within the text); returns the first
/// line shown and the largest there is.
pub fn render(text: Paragraph<'_>, area: Rect, buf: &mut Buffer, offset: u16) -> (u16, u16) {
    let max = max_offset(&text, area);
    let first = offset.min(max);
    text.scroll((first, 0)).render(area, buf);
    (first, max)
}

/// The note for a border when not all of a text is shown: what is above and below, and
/// the keys that show it (`up` and `down`, e.g. `Up` and `Down`); `None` when it all fits.
#[must_use]
pub fn note(first: u16, max: u16, up: &str, down: &str, theme: &Theme) -> Option<Line<'static>> {
    let (arrow_up, arrow_down) = if theme.glyphs.ascii {
        ("^", "v")
    } else {
        ("↑", "↓")
    };
    let text = match (first > 0, first < max) {
        (false, false) => return None,
        (true, true) => format!(" {arrow_up}{arrow_down} {up}/{down}: more "),
        (false, true) => format!(" {arrow_down} {down}: more "),
        (true, false) => format!(" {arrow_up} {up}: back "),
    };
    Some(Line::styled(text, theme.key).right_aligned())
}
