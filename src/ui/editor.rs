//! Draws the editor: a gutter of line numbers and the visible part of the lines on screen,
//! with the cursor and the selection. Only the lines on screen are looked at, and of a long
//! ASCII line only the visible bytes, so a frame costs the same for a 5 MB paste as for two
//! short rows.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::widgets::Widget;

use crate::app::editor::{Editor, Pos, View, motion::char_cells};
use crate::ui::Theme;

/// The editor's drawing.
#[derive(Debug)]
pub struct EditorView<'a> {
    /// The editor.
    pub editor: &'a Editor,
    /// What the empty editor shows.
    pub placeholder: &'a str,
    /// Draw the cursor.
    pub focused: bool,
    /// Styles.
    pub theme: &'a Theme,
}

/// The gutter's width for `lines` lines: the digits and one space.
#[must_use]
pub fn gutter_width(lines: usize) -> u16 {
    let digits = lines.max(1).ilog10() + 1;
    u16::try_from(digits + 1).unwrap_or(u16::MAX)
}

/// The scroll position that keeps `cursor` (at display column `column`) on screen, moving
/// as little as possible from `view`.
#[must_use]
pub fn scrolled(view: View, cursor: Pos, column: usize, height: usize, width: usize) -> View {
    let mut top = view.top;
    if cursor.row < top {
        top = cursor.row;
    } else if height > 0 && cursor.row >= top + height {
        top = cursor.row + 1 - height;
    }
    let mut left = view.left;
    if column < left {
        left = column;
    } else if width > 0 && column >= left + width {
        left = column + 1 - width;
    }
    View { top, left, height }
}

impl Widget for &EditorView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if area.is_empty() {
            return;
        }
        let editor = self.editor;
        let lines = editor.lines();
        let gutter = gutter_width(lines.len()).min(area.width.saturating_sub(1));
        let text_x = area.x + gutter;
        let width = usize::from(area.width - gutter);
        let height = usize::from(area.height);
        let cursor = editor.cursor();
        let view = scrolled(
            editor.view(),
            cursor,
            editor.column_of(cursor),
            height,
            width,
        );
        editor.set_view(view);
        let selection = editor.selection();
        let theme = self.theme;
        if editor.is_empty() && !self.placeholder.is_empty() {
            if self.focused {
                buf.set_string(text_x, area.y, " ", theme.cursor);
            }
            let shown: String = self
                .placeholder
                .chars()
                .take(width.saturating_sub(1))
                .collect();
            buf.set_string(text_x + 1, area.y, shown, theme.dim);
            return;
        }
        for (i, row) in (view.top..lines.len()).take(height).enumerate() {
            let y = area.y + u16::try_from(i).unwrap_or(u16::MAX);
            if gutter > 0 {
                let number = format!("{:>w$} ", row + 1, w = usize::from(gutter - 1));
                buf.set_string(area.x, y, number, theme.dim);
            }
            let line = lines[row].as_str();
            draw_line(buf, text_x, y, width, line, view.left, |byte| {
                let pos = Pos::new(row, byte);
                if self.focused && pos == cursor {
                    theme.cursor
                } else if selection.is_some_and(|(a, b)| a <= pos && pos < b) {
                    theme.selection
                } else {
                    Style::default()
                }
            });
            if self.focused && cursor.row == row && cursor.col == line.len() {
                let column = editor.column_of(cursor);
                if let Some(x) = column.checked_sub(view.left).filter(|&c| c < width) {
                    let x = text_x + u16::try_from(x).unwrap_or(u16::MAX);
                    buf.set_string(x, y, " ", theme.cursor);
                }
            }
        }
    }
}

/// Draws display columns `left..left + width` of `line` at `(x, y)`, styling each character
/// by its byte offset. A tab is drawn as one blank cell, other control characters as `·`, a wide character cut by an edge
/// as blank cells.
fn draw_line(
    buf: &mut Buffer,
    x: u16,
    y: u16,
    width: usize,
    line: &str,
    left: usize,
    style_at: impl Fn(usize) -> Style,
) {
    // A line that ends left of the view draws nothing: it starts at its end, at column `left`.
    let (start_byte, start_col) = if line.is_ascii() {
        (left.min(line.len()), left)
    } else {
        let mut col = 0;
        let mut start = line.len();
        for (i, c) in line.char_indices() {
            if col >= left {
                start = i;
                break;
            }
            col += char_cells(c);
            if col > left {
                // A wide character cut by the left edge: start after it.
                start = i + c.len_utf8();
                break;
            }
        }
        (start, col.max(left))
    };
    let mut col = start_col - left;
    let mut buf_char = [0u8; 4];
    for (i, c) in line[start_byte..].char_indices() {
        if col >= width {
            break;
        }
        let cells = char_cells(c);
        let style = style_at(start_byte + i);
        let cx = x + u16::try_from(col).unwrap_or(u16::MAX);
        if col + cells > width {
            buf.set_string(cx, y, " ", style);
            break;
        }
        let shown: &str = if c == '\t' {
            " "
        } else if c.is_control() {
            "·"
        } else {
            c.encode_utf8(&mut buf_char)
        };
        buf.set_string(cx, y, shown, style);
        col += cells;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drawn(line: &str, left: usize) -> String {
        let mut buf = Buffer::empty(Rect::new(0, 0, 6, 1));
        draw_line(&mut buf, 0, 0, 6, line, left, |_| Style::default());
        (0..6).map(|x| buf[(x, 0)].symbol().to_string()).collect()
    }

    #[test]
    fn a_line_that_ends_left_of_the_view_draws_nothing() {
        // A long line scrolls the view right; the short lines beside it end before `left`.
        assert_eq!(drawn("ab", 10), "      ");
        assert_eq!(drawn("é", 10), "      ");
        assert_eq!(drawn("abcdefghij", 10), "      ");
        assert_eq!(drawn("abcdefghijkl", 10), "kl    ");
        assert_eq!(drawn("abcdefghijkl", 0), "abcdef");
    }
}
