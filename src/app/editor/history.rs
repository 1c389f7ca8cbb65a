//! Undo and redo: each entry is one change (a range of text replaced by another), so that
//! undoing it replaces the inserted text by the removed text again. Typing a run of
//! characters, or deleting one character after another, extends the newest entry until the
//! run is broken (a cursor move, an undo, a save), so that one undo takes back one run.

use super::Pos;

/// The most entries kept; older ones are dropped.
const MAX_ENTRIES: usize = 1_000;
/// The most text (removed plus inserted bytes) kept over all entries; older entries are
/// dropped first, but the newest entry is always kept.
const MAX_BYTES: usize = 256 << 20;

/// One change: at `start`, `removed` was replaced by `inserted`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Where the change starts.
    pub start: Pos,
    /// The text that was there before.
    pub removed: String,
    /// The text that is there after.
    pub inserted: String,
    /// The cursor before the change.
    pub cursor_before: Pos,
    /// The cursor after the change.
    pub cursor_after: Pos,
    /// The text's state before the change (see [`History::state`]).
    pub state_before: u64,
    /// The text's state after it.
    pub state_after: u64,
}

impl Change {
    fn bytes(&self) -> usize {
        self.removed.len() + self.inserted.len()
    }
}

/// What a run of edits is doing, for merging them into one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Run {
    /// Nothing to merge with.
    None,
    /// Typing: the newest entry's inserted text ends at the cursor.
    Typing,
    /// Deleting backwards: the newest entry removed text that started at the cursor.
    DeletingBack,
    /// Deleting forwards: the newest entry removed text at the cursor.
    DeletingForward,
}

/// The undo and redo stacks, and the identity of the text's state.
#[derive(Debug, Clone)]
pub struct History {
    undo: Vec<Change>,
    redo: Vec<Change>,
    run: Run,
    /// Identifies the current text: every change makes a new state, undo and redo return to
    /// earlier ones. Two equal states mean equal text.
    state: u64,
    next_state: u64,
    bytes: usize,
}

impl Default for History {
    fn default() -> Self {
        Self {
            undo: Vec::new(),
            redo: Vec::new(),
            run: Run::None,
            state: 0,
            next_state: 1,
            bytes: 0,
        }
    }
}

impl History {
    /// The current state's identity.
    #[must_use]
    pub fn state(&self) -> u64 {
        self.state
    }

    /// The run the newest entry belongs to.
    #[must_use]
    pub fn run(&self) -> Run {
        self.run
    }

    /// Ends the current run: the next edit starts an entry of its own.
    pub fn seal(&mut self) {
        self.run = Run::None;
    }

    fn fresh_state(&mut self) -> u64 {
        let s = self.next_state;
        self.next_state += 1;
        self.state = s;
        s
    }

    /// Records a change and returns nothing; a newer change forgets what could be redone.
    pub fn record(&mut self, mut change: Change, run: Run) {
        self.redo.clear();
        change.state_before = self.state;
        change.state_after = self.fresh_state();
        self.bytes += change.bytes();
        self.undo.push(change);
        self.run = run;
        self.trim();
    }

    /// Extends the newest entry (of the current run) by `f`, giving it a new state.
    pub fn extend(&mut self, f: impl FnOnce(&mut Change)) {
        let state = self.fresh_state();
        if let Some(last) = self.undo.last_mut() {
            self.bytes -= last.bytes();
            f(last);
            last.state_after = state;
            self.bytes += last.bytes();
        }
        self.redo.clear();
        self.trim();
    }

    fn trim(&mut self) {
        let mut drop = 0;
        while self.undo.len() - drop > 1
            && (self.undo.len() - drop > MAX_ENTRIES || self.bytes > MAX_BYTES)
        {
            self.bytes -= self.undo[drop].bytes();
            drop += 1;
        }
        self.undo.drain(..drop);
    }

    /// The newest change, taken off the undo stack onto the redo stack.
    pub fn undo(&mut self) -> Option<Change> {
        let change = self.undo.pop()?;
        self.bytes -= change.bytes();
        self.state = change.state_before;
        self.run = Run::None;
        self.redo.push(change.clone());
        Some(change)
    }

    /// The newest undone change, put back on the undo stack.
    pub fn redo(&mut self) -> Option<Change> {
        let change = self.redo.pop()?;
        self.bytes += change.bytes();
        self.state = change.state_after;
        self.run = Run::None;
        self.undo.push(change.clone());
        Some(change)
    }
}
