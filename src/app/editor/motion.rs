//! Cursor motions, and the display width of text (what a column on screen is).

use unicode_width::UnicodeWidthChar;

use super::{EditAction, Editor, Pos};

/// The cells a character takes on screen: tabs and other control characters are drawn as
/// one cell, wide characters as two.
#[must_use]
pub fn char_cells(c: char) -> usize {
    if c.is_control() {
        1
    } else {
        c.width().unwrap_or(1)
    }
}

/// The display width of `text` (see [`char_cells`]); a byte count for ASCII.
#[must_use]
pub fn display_width(text: &str) -> usize {
    if text.is_ascii() {
        text.len()
    } else {
        text.chars().map(char_cells).sum()
    }
}

/// The byte offset in `line` of the character at display column `col` (or the line's end).
#[must_use]
pub fn byte_at_column(line: &str, col: usize) -> usize {
    if line.is_ascii() {
        return col.min(line.len());
    }
    let mut width = 0;
    for (i, c) in line.char_indices() {
        let w = char_cells(c);
        if width + w > col {
            return i;
        }
        width += w;
    }
    line.len()
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '+')
}

impl Editor {
    /// The display column of `pos`.
    #[must_use]
    pub fn column_of(&self, pos: Pos) -> usize {
        display_width(&self.line(pos.row)[..pos.col])
    }

    /// The position one character before `pos` (the previous line's end at a line start).
    pub(super) fn prev_pos(&self, pos: Pos) -> Pos {
        if pos.col > 0 {
            let line = self.line(pos.row);
            let col = line[..pos.col]
                .char_indices()
                .next_back()
                .map_or(0, |(i, _)| i);
            Pos::new(pos.row, col)
        } else if pos.row > 0 {
            Pos::new(pos.row - 1, self.line(pos.row - 1).len())
        } else {
            pos
        }
    }

    /// The position one character after `pos` (the next line's start at a line end).
    pub(super) fn next_pos(&self, pos: Pos) -> Pos {
        let line = self.line(pos.row);
        if pos.col < line.len() {
            let len = line[pos.col..].chars().next().map_or(0, char::len_utf8);
            Pos::new(pos.row, pos.col + len)
        } else if pos.row + 1 < self.lines.len() {
            Pos::new(pos.row + 1, 0)
        } else {
            pos
        }
    }

    /// The start of the word before `pos` (skipping separators first).
    pub(super) fn word_left(&self, pos: Pos) -> Pos {
        if pos.col == 0 {
            return self.prev_pos(pos);
        }
        let line = &self.line(pos.row)[..pos.col];
        let mut chars = line.char_indices().rev().peekable();
        let mut col = pos.col;
        while let Some(&(i, c)) = chars.peek() {
            if is_word(c) {
                break;
            }
            col = i;
            chars.next();
        }
        for (i, c) in chars {
            if !is_word(c) {
                break;
            }
            col = i;
        }
        Pos::new(pos.row, col)
    }

    /// The end of the word after `pos` (skipping separators first).
    pub(super) fn word_right(&self, pos: Pos) -> Pos {
        let line = self.line(pos.row);
        if pos.col == line.len() {
            return self.next_pos(pos);
        }
        let rest = &line[pos.col..];
        let mut chars = rest.char_indices().peekable();
        let mut end = rest.len();
        while let Some(&(_, c)) = chars.peek() {
            if is_word(c) {
                break;
            }
            chars.next();
        }
        for (i, c) in chars {
            if !is_word(c) {
                end = i;
                break;
            }
        }
        Pos::new(pos.row, pos.col + end)
    }

    /// The position on `row` nearest display column `goal`.
    fn at_column(&self, row: usize, goal: usize) -> Pos {
        Pos::new(row, byte_at_column(self.line(row), goal))
    }

    /// Moves the cursor; `select` extends the selection from where the cursor was.
    pub(super) fn motion(&mut self, action: EditAction, select: bool) {
        if select {
            if self.anchor.is_none() {
                self.anchor = Some(self.cursor);
            }
        } else if let Some((a, b)) = self.selection() {
            // Left/Right without Shift collapse the selection to its end, as most editors do.
            self.anchor = None;
            match action {
                EditAction::Left => {
                    self.cursor = a;
                    self.goal = None;
                    self.history.seal();
                    return;
                }
                EditAction::Right => {
                    self.cursor = b;
                    self.goal = None;
                    self.history.seal();
                    return;
                }
                _ => {}
            }
        } else {
            self.anchor = None;
        }
        let pos = self.cursor;
        let last = self.lines.len() - 1;
        let page = self.view.get().height.max(1);
        let vertical = |e: &mut Self, row: usize| {
            let goal = match e.goal {
                Some(g) => g,
                None => e.column_of(pos),
            };
            e.goal = Some(goal);
            e.cursor = e.at_column(row, goal);
        };
        match action {
            EditAction::Up => vertical(self, pos.row.saturating_sub(1)),
            EditAction::Down => vertical(self, (pos.row + 1).min(last)),
            EditAction::PageUp => vertical(self, pos.row.saturating_sub(page)),
            EditAction::PageDown => vertical(self, (pos.row + page).min(last)),
            other => {
                self.goal = None;
                self.cursor = match other {
                    EditAction::Left => self.prev_pos(pos),
                    EditAction::Right => self.next_pos(pos),
                    EditAction::WordLeft => self.word_left(pos),
                    EditAction::WordRight => self.word_right(pos),
                    EditAction::LineStart => Pos::new(pos.row, 0),
                    EditAction::LineEnd => Pos::new(pos.row, self.line(pos.row).len()),
                    EditAction::Top => Pos::default(),
                    EditAction::Bottom => Pos::new(last, self.line(last).len()),
                    _ => pos,
                };
            }
        }
        if select && self.anchor == Some(self.cursor) {
            self.anchor = None;
        }
        self.history.seal();
    }
}
