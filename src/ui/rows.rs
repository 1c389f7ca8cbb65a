//! Lines drawn one a row: the loop every pane that lists text ends with.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

/// Row `y` of `area` (its columns, one row high).
#[must_use]
pub fn row(area: Rect, y: u16) -> Rect {
    Rect {
        y,
        height: 1,
        ..area
    }
}

/// Draws `lines` one a row from the top of `area`, as many as fit; returns the row after the
/// last one drawn (`area.y` when none was).
pub fn render_lines<'a>(
    lines: impl IntoIterator<Item = Line<'a>>,
    area: Rect,
    buf: &mut Buffer,
) -> u16 {
    let mut next = area.y;
    for (y, line) in (area.y..area.bottom()).zip(lines) {
        line.render(row(area, y), buf);
        next = y + 1;
    }
    next
}

/// A list item's line of `spans`, in `selected_style` when it is the selected one.
#[must_use]
pub fn item_line(spans: Vec<Span<'_>>, selected: bool, selected_style: Style) -> Line<'_> {
    let line = Line::from(spans);
    if selected {
        line.style(selected_style)
    } else {
        line
    }
}
