//! The caption under the panes: what to look at in a scenario, or a demo step's text.
//! It is wrapped at word boundaries into the rows it is given; a caption longer than that
//! is shown a page at a time, the last row ending in a note of the key that turns the page,
//! so no part of it (the instruction at its end, say) is out of reach.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::ui::Theme;
use crate::ui::utilization::text_width;

/// `text` broken at spaces into lines of at most `width` cells; a word longer than a line
/// is cut.
#[must_use]
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    wrap_with(text, |_| width)
}

/// `text` broken at spaces into lines, line `i` at most `width(i)` cells wide.
fn wrap_with(text: &str, width: impl Fn(usize) -> usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let mut word = word.to_string();
        loop {
            let room = width(lines.len()).max(1);
            let need = if line.is_empty() {
                text_width(&word)
            } else {
                text_width(&line) + 1 + text_width(&word)
            };
            if need <= room {
                if !line.is_empty() {
                    line.push(' ');
                }
                line.push_str(&word);
                break;
            }
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
                continue;
            }
            // A word wider than a line: cut it.
            let cut: String = word.chars().take(room).collect();
            let rest: String = word.chars().skip(room).collect();
            lines.push(cut);
            if rest.is_empty() {
                break;
            }
            word = rest;
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// The caption's pages for `rows` rows of `width` cells. When it needs more than one page,
/// every page's last line is kept shorter, to leave room for the page note.
#[must_use]
pub fn pages(text: &str, width: usize, rows: usize) -> Vec<Vec<String>> {
    let rows = rows.max(1);
    let all = wrap(text, width);
    if all.len() <= rows {
        return vec![all];
    }
    let narrow = width.saturating_sub(NOTE_WIDTH).max(1);
    wrap_with(text, |i| if i % rows == rows - 1 { narrow } else { width })
        .chunks(rows)
        .map(<[String]>::to_vec)
        .collect()
}

/// Room kept for the page note, ` (1/2, Alt-n: more)`.
const NOTE_WIDTH: usize = 22;

/// The caption, page `page` (taken modulo the number of pages).
#[derive(Debug)]
pub struct CaptionPane<'a> {
    /// The text.
    pub text: &'a str,
    /// The page asked for.
    pub page: usize,
    /// The key that turns the page, for the note.
    pub key: &'a str,
    /// Styles.
    pub theme: &'a Theme,
}

impl Widget for &CaptionPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if area.is_empty() {
            return;
        }
        let pages = pages(self.text, usize::from(area.width), usize::from(area.height));
        let n = pages.len();
        let page = self.page % n;
        let lines = &pages[page];
        for (i, (y, text)) in (area.y..area.bottom()).zip(lines).enumerate() {
            let mut spans = vec![Span::styled(text.clone(), self.theme.heading)];
            if n > 1 && i + 1 == lines.len() {
                let what = if page + 1 == n { "first" } else { "more" };
                spans.push(Span::styled(
                    format!(" ({}/{n}, {}: {what})", page + 1, self.key),
                    self.theme.key,
                ));
            }
            Line::from(spans).render(
                Rect {
                    y,
                    height: 1,
                    ..area
                },
                buf,
            );
        }
    }
}
