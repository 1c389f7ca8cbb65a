//! The channel text's editor: lines, a cursor, a selection, undo and redo.
//!
//! It is written for large pastes: a key costs time in proportion to the line it edits,
//! never to the whole text, and drawing (the editor pane of the view) looks only at the lines on
//! screen. The cursor's column is a byte offset into its line, always on a character
//! boundary. Lines are shared (`Arc`) with the analysis thread, which keeps the parse of
//! every line it has seen: an edit copies the one line it changes when the analysis holds
//! it, so unchanged lines keep their identity and are not parsed again.

mod history;
pub mod motion;

use std::cell::Cell;
use std::sync::Arc;

pub use history::{Change, History, Run};

/// A place in the text: a line and a byte offset into it (on a character boundary).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Hash)]
pub struct Pos {
    /// 0-based line.
    pub row: usize,
    /// Byte offset into the line.
    pub col: usize,
}

impl Pos {
    /// The position `row`, `col`.
    #[must_use]
    pub const fn new(row: usize, col: usize) -> Self {
        Self { row, col }
    }
}

/// What an editing key does (the keymap binds keys to these).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EditAction {
    /// Undo the last change (a run of typing counts as one).
    Undo,
    /// Redo what was undone.
    Redo,
    /// One character left.
    Left,
    /// One character right.
    Right,
    /// One line up.
    Up,
    /// One line down.
    Down,
    /// To the start of the previous word.
    WordLeft,
    /// To the end of the next word.
    WordRight,
    /// To the start of the line.
    LineStart,
    /// To the end of the line.
    LineEnd,
    /// One screen up.
    PageUp,
    /// One screen down.
    PageDown,
    /// To the start of the text.
    Top,
    /// To the end of the text.
    Bottom,
    /// Delete the character before the cursor (or the selection).
    DeleteBack,
    /// Delete the character under the cursor (or the selection).
    DeleteForward,
    /// Delete the word before the cursor.
    DeleteWordBack,
    /// Delete the word after the cursor.
    DeleteWordForward,
    /// Cut from the cursor to the end of the line.
    KillLine,
    /// Cut the selection.
    Cut,
    /// Paste the text last cut.
    Yank,
    /// Start a new line.
    Newline,
    /// Delete the whole text (to paste other data over it; undo brings it back).
    ClearAll,
}

impl EditAction {
    /// The sentence the help overlay shows.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            Self::Undo => "undo (a run of typing is undone at once)",
            Self::Redo => "redo",
            Self::Left => "cursor left (with Shift: select)",
            Self::Right => "cursor right (with Shift: select)",
            Self::Up => "cursor up (with Shift: select)",
            Self::Down => "cursor down (with Shift: select)",
            Self::WordLeft => "previous word",
            Self::WordRight => "next word",
            Self::LineStart => "start of the line",
            Self::LineEnd => "end of the line",
            Self::PageUp => "a screen up",
            Self::PageDown => "a screen down",
            Self::Top => "start of the text",
            Self::Bottom => "end of the text",
            Self::DeleteBack => "delete the character before the cursor, or the selection",
            Self::DeleteForward => "delete the character at the cursor, or the selection",
            Self::DeleteWordBack => "delete the word before the cursor",
            Self::DeleteWordForward => "delete the word after the cursor",
            Self::KillLine => "cut to the end of the line",
            Self::Cut => "cut the selection",
            Self::Yank => "paste what was cut last",
            Self::Newline => "new line",
            Self::ClearAll => {
                "clear all: delete the whole text, to type or paste your own (Ctrl-Z brings it back)"
            }
        }
    }

    /// Whether the action only moves the cursor (Shift then extends the selection).
    #[must_use]
    pub fn is_motion(self) -> bool {
        matches!(
            self,
            Self::Left
                | Self::Right
                | Self::Up
                | Self::Down
                | Self::WordLeft
                | Self::WordRight
                | Self::LineStart
                | Self::LineEnd
                | Self::PageUp
                | Self::PageDown
                | Self::Top
                | Self::Bottom
        )
    }
}

/// Where the view of the text is scrolled to; kept up to date by the drawing code, which is
/// the one place that knows the pane's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct View {
    /// First line shown.
    pub top: usize,
    /// First display column shown.
    pub left: usize,
    /// Lines that fit (0 before the first frame).
    pub height: usize,
}

/// The editor's state.
#[derive(Debug, Clone)]
pub struct Editor {
    lines: Vec<Arc<String>>,
    cursor: Pos,
    /// The other end of the selection, when there is one.
    anchor: Option<Pos>,
    /// The display column vertical moves aim for.
    goal: Option<usize>,
    history: History,
    /// The state the text was last saved (or loaded) in.
    saved: u64,
    /// Counts every change of the text, undo and redo included.
    revision: u64,
    /// Text cut by Ctrl-K, Ctrl-X and the word deletions, for Ctrl-Y.
    yank: String,
    view: Cell<View>,
}

impl Default for Editor {
    fn default() -> Self {
        Self::new("")
    }
}

impl Editor {
    /// An editor holding `text` (lines split at `\n`; a `\r` before it is dropped), with the
    /// cursor at the start and nothing to undo. The text counts as saved.
    #[must_use]
    pub fn new(text: &str) -> Self {
        let lines = split_lines(text).map(|l| Arc::new(l.to_owned())).collect();
        Self {
            lines,
            cursor: Pos::default(),
            anchor: None,
            goal: None,
            history: History::default(),
            saved: 0,
            revision: 0,
            yank: String::new(),
            view: Cell::new(View::default()),
        }
    }

    /// An editor holding `text` that is not saved anywhere yet (it counts as modified until
    /// saved).
    #[must_use]
    pub fn unsaved(text: &str) -> Self {
        let mut editor = Self::new(text);
        editor.saved = u64::MAX;
        editor
    }

    /// The lines (never empty: an empty text is one empty line).
    #[must_use]
    pub fn lines(&self) -> &[Arc<String>] {
        &self.lines
    }

    /// Line `row`, or `""` past the end.
    #[must_use]
    pub fn line(&self, row: usize) -> &str {
        self.lines.get(row).map_or("", |l| l.as_str())
    }

    /// The whole text, lines joined with `\n`.
    #[must_use]
    pub fn text(&self) -> String {
        let len = self.lines.iter().map(|l| l.len() + 1).sum::<usize>();
        let mut out = String::with_capacity(len);
        for (i, line) in self.lines.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(line);
        }
        out
    }

    /// The text is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.lines.len() == 1 && self.lines[0].is_empty()
    }

    /// The cursor.
    #[must_use]
    pub fn cursor(&self) -> Pos {
        self.cursor
    }

    /// The selection as an ordered range, when there is one.
    #[must_use]
    pub fn selection(&self) -> Option<(Pos, Pos)> {
        let anchor = self.anchor?;
        (anchor != self.cursor).then(|| (anchor.min(self.cursor), anchor.max(self.cursor)))
    }

    /// The text differs from the last saved (or loaded) state. Undoing back to it clears
    /// this again.
    #[must_use]
    pub fn modified(&self) -> bool {
        self.history.state() != self.saved
    }

    /// Records that the current text was saved.
    pub fn mark_saved(&mut self) {
        self.saved = self.history.state();
        self.history.seal();
    }

    /// Counts every change of the text (so a caller can tell whether it changed).
    #[must_use]
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// The scroll position the last frame used.
    #[must_use]
    pub fn view(&self) -> View {
        self.view.get()
    }

    /// Keeps the scroll position of the frame being drawn.
    pub fn set_view(&self, view: View) {
        self.view.set(view);
    }

    /// Moves the cursor to `pos` (clamped into the text, onto a character boundary) and
    /// clears the selection.
    pub fn set_cursor(&mut self, pos: Pos) {
        self.cursor = self.clamp(pos);
        self.anchor = None;
        self.goal = None;
        self.history.seal();
    }

    /// Selects the whole text.
    pub fn select_all(&mut self) {
        self.anchor = Some(Pos::default());
        let row = self.lines.len() - 1;
        self.cursor = Pos::new(row, self.lines[row].len());
        self.history.seal();
    }

    /// Moves the cursor to the end of the text.
    pub fn move_to_end(&mut self) {
        let row = self.lines.len() - 1;
        self.set_cursor(Pos::new(row, self.lines[row].len()));
    }

    fn clamp(&self, pos: Pos) -> Pos {
        let row = pos.row.min(self.lines.len() - 1);
        let line = &self.lines[row];
        let mut col = pos.col.min(line.len());
        while !line.is_char_boundary(col) {
            col -= 1;
        }
        Pos::new(row, col)
    }

    /// Inserts `text` at the cursor (replacing the selection), as one change; `\r\n` and
    /// `\r` become line breaks. Returns whether the text changed.
    pub fn insert_str(&mut self, text: &str) -> bool {
        let text = if text.contains('\r') {
            text.replace("\r\n", "\n").replace('\r', "\n")
        } else {
            text.to_owned()
        };
        let removed = self.delete_selection_text();
        if text.is_empty() && removed.is_none() {
            return false;
        }
        self.history.seal();
        let start = self.cursor;
        let end = self.raw_insert(start, &text);
        self.cursor = end;
        self.goal = None;
        self.history.record(
            Change {
                start,
                removed: removed.unwrap_or_default(),
                inserted: text,
                cursor_before: start,
                cursor_after: end,
                state_before: 0,
                state_after: 0,
            },
            Run::None,
        );
        self.revision += 1;
        true
    }

    /// Types one character at the cursor (replacing the selection).
    pub fn type_char(&mut self, c: char) -> bool {
        if self.selection().is_some() || c == '\n' {
            let mut buf = [0; 4];
            return self.insert_str(c.encode_utf8(&mut buf));
        }
        self.anchor = None;
        let start = self.cursor;
        let line = Arc::make_mut(&mut self.lines[start.row]);
        line.insert(start.col, c);
        self.cursor = Pos::new(start.row, start.col + c.len_utf8());
        self.goal = None;
        if self.history.run() == Run::Typing {
            let cursor = self.cursor;
            self.history.extend(|last| {
                last.inserted.push(c);
                last.cursor_after = cursor;
            });
        } else {
            self.history.record(
                Change {
                    start,
                    removed: String::new(),
                    inserted: c.to_string(),
                    cursor_before: start,
                    cursor_after: self.cursor,
                    state_before: 0,
                    state_after: 0,
                },
                Run::Typing,
            );
        }
        self.revision += 1;
        true
    }

    /// Applies an editing action; `select` extends the selection for motions. Returns
    /// whether the text changed.
    pub fn apply(&mut self, action: EditAction, select: bool) -> bool {
        if action.is_motion() {
            self.motion(action, select);
            return false;
        }
        match action {
            EditAction::Undo => self.undo(),
            EditAction::Redo => self.redo(),
            EditAction::DeleteBack => self.delete_back(),
            EditAction::DeleteForward => self.delete_forward(),
            EditAction::DeleteWordBack => {
                let to = self.word_left(self.cursor);
                self.cut_range(to, self.cursor)
            }
            EditAction::DeleteWordForward => {
                let to = self.word_right(self.cursor);
                self.cut_range(self.cursor, to)
            }
            EditAction::KillLine => {
                let line_end = Pos::new(self.cursor.row, self.line(self.cursor.row).len());
                let to = if line_end == self.cursor && self.cursor.row + 1 < self.lines.len() {
                    Pos::new(self.cursor.row + 1, 0)
                } else {
                    line_end
                };
                self.cut_range(self.cursor, to)
            }
            EditAction::Cut => match self.selection() {
                Some((a, b)) => self.cut_range(a, b),
                None => false,
            },
            EditAction::Yank => {
                let text = self.yank.clone();
                self.insert_str(&text)
            }
            EditAction::Newline => self.insert_str("\n"),
            EditAction::ClearAll => {
                let end = Pos::new(self.lines.len() - 1, self.lines[self.lines.len() - 1].len());
                self.cut_range(Pos::default(), end)
            }
            _ => false,
        }
    }

    fn undo(&mut self) -> bool {
        let Some(change) = self.history.undo() else {
            return false;
        };
        let end = end_of(change.start, &change.inserted);
        self.raw_delete(change.start, end);
        self.raw_insert(change.start, &change.removed);
        self.cursor = self.clamp(change.cursor_before);
        self.anchor = None;
        self.goal = None;
        self.revision += 1;
        true
    }

    fn redo(&mut self) -> bool {
        let Some(change) = self.history.redo() else {
            return false;
        };
        let end = end_of(change.start, &change.removed);
        self.raw_delete(change.start, end);
        self.raw_insert(change.start, &change.inserted);
        self.cursor = self.clamp(change.cursor_after);
        self.anchor = None;
        self.goal = None;
        self.revision += 1;
        true
    }

    fn delete_back(&mut self) -> bool {
        if let Some((a, b)) = self.selection() {
            return self.delete_range(a, b, Run::None);
        }
        let from = self.prev_pos(self.cursor);
        if from == self.cursor {
            return false;
        }
        self.delete_range(from, self.cursor, Run::DeletingBack)
    }

    fn delete_forward(&mut self) -> bool {
        if let Some((a, b)) = self.selection() {
            return self.delete_range(a, b, Run::None);
        }
        let to = self.next_pos(self.cursor);
        if to == self.cursor {
            return false;
        }
        self.delete_range(self.cursor, to, Run::DeletingForward)
    }

    /// Deletes `a..b` into the yank buffer.
    fn cut_range(&mut self, a: Pos, b: Pos) -> bool {
        if a == b {
            return false;
        }
        self.yank = self.text_between(a, b);
        self.history.seal();
        self.delete_range(a, b, Run::None)
    }

    /// Deletes `a..b` as a change; runs of single deletions merge into one entry.
    fn delete_range(&mut self, a: Pos, b: Pos, run: Run) -> bool {
        let before = self.cursor;
        let removed = self.raw_delete(a, b);
        self.cursor = a;
        self.anchor = None;
        self.goal = None;
        let merged = run != Run::None && self.history.run() == run;
        if merged {
            self.history.extend(|last| {
                if run == Run::DeletingBack {
                    last.removed.insert_str(0, &removed);
                    last.start = a;
                } else {
                    last.removed.push_str(&removed);
                }
                last.cursor_after = a;
            });
        } else {
            self.history.record(
                Change {
                    start: a,
                    removed,
                    inserted: String::new(),
                    cursor_before: before,
                    cursor_after: a,
                    state_before: 0,
                    state_after: 0,
                },
                run,
            );
        }
        self.revision += 1;
        true
    }

    /// Deletes the selection without recording it (the caller records the change).
    fn delete_selection_text(&mut self) -> Option<String> {
        let (a, b) = self.selection()?;
        let removed = self.raw_delete(a, b);
        self.cursor = a;
        self.anchor = None;
        Some(removed)
    }

    /// Replaces lines `rows` (a range of line numbers; past the end means to the end) by
    /// `text`, as one change that undo takes back. The other lines are not touched.
    pub fn replace_rows(&mut self, rows: std::ops::Range<usize>, text: &str) -> bool {
        let last = self.lines.len() - 1;
        let start = Pos::new(rows.start.min(last), 0);
        let end = if rows.end <= last {
            Pos::new(rows.end, 0)
        } else {
            Pos::new(last, self.lines[last].len())
        };
        let removed = self.text_between(start, end.max(start));
        if removed == text {
            return false;
        }
        self.history.seal();
        let before = self.cursor;
        let old_lines = self.lines.len();
        self.raw_delete(start, end.max(start));
        let after = self.raw_insert(start, text);
        // The cursor stays on its line: moved by the lines added or removed above it, or
        // put after the new text when its line was replaced.
        self.cursor = if before.row >= rows.end && rows.end <= last {
            let row = (before.row + self.lines.len()).saturating_sub(old_lines);
            self.clamp(Pos::new(row, before.col))
        } else if before.row >= rows.start {
            after
        } else {
            before
        };
        self.anchor = None;
        self.goal = None;
        self.history.record(
            Change {
                start,
                removed,
                inserted: text.to_owned(),
                cursor_before: before,
                cursor_after: self.cursor,
                state_before: 0,
                state_after: 0,
            },
            Run::None,
        );
        self.revision += 1;
        true
    }

    /// The text between two positions (`a <= b`).
    #[must_use]
    pub fn text_between(&self, a: Pos, b: Pos) -> String {
        if a.row == b.row {
            return self.line(a.row)[a.col..b.col].to_owned();
        }
        let mut out = self.line(a.row)[a.col..].to_owned();
        for row in a.row + 1..b.row {
            out.push('\n');
            out.push_str(self.line(row));
        }
        out.push('\n');
        out.push_str(&self.line(b.row)[..b.col]);
        out
    }

    /// Inserts `text` at `at` without recording it; returns the end of the inserted text.
    fn raw_insert(&mut self, at: Pos, text: &str) -> Pos {
        if text.is_empty() {
            return at;
        }
        let mut parts = text.split('\n');
        let first = parts.next().unwrap_or("");
        let rest: Vec<&str> = parts.collect();
        let line = Arc::make_mut(&mut self.lines[at.row]);
        if rest.is_empty() {
            line.insert_str(at.col, first);
            return Pos::new(at.row, at.col + first.len());
        }
        let tail = line.split_off(at.col);
        line.push_str(first);
        let last_len = rest.last().map_or(0, |l| l.len());
        let mut new_lines: Vec<Arc<String>> =
            rest.iter().map(|l| Arc::new((*l).to_owned())).collect();
        if let Some(last) = new_lines.last_mut() {
            Arc::make_mut(last).push_str(&tail);
        }
        let added = new_lines.len();
        self.lines.splice(at.row + 1..=at.row, new_lines);
        Pos::new(at.row + added, last_len)
    }

    /// Deletes `a..b` (`a <= b`) without recording it; returns the deleted text.
    fn raw_delete(&mut self, a: Pos, b: Pos) -> String {
        if a == b {
            return String::new();
        }
        if a.row == b.row {
            let line = Arc::make_mut(&mut self.lines[a.row]);
            return line.drain(a.col..b.col).collect();
        }
        let removed = self.text_between(a, b);
        let tail = self.lines[b.row][b.col..].to_owned();
        let line = Arc::make_mut(&mut self.lines[a.row]);
        line.truncate(a.col);
        line.push_str(&tail);
        self.lines.drain(a.row + 1..=b.row);
        removed
    }
}

/// The lines of `text`: split at `\n`, a `\r` before it dropped.
fn split_lines(text: &str) -> impl Iterator<Item = &str> {
    text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l))
}

/// Where text inserted at `start` ends.
fn end_of(start: Pos, text: &str) -> Pos {
    match text.rfind('\n') {
        Some(last) => Pos::new(
            start.row + text.matches('\n').count(),
            text.len() - last - 1,
        ),
        None => Pos::new(start.row, start.col + text.len()),
    }
}

#[cfg(test)]
mod tests;
