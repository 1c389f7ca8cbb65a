//! The editor's edits, motions and history.

use proptest::prelude::*;

use super::{EditAction as A, Editor, Pos};

fn typed(e: &mut Editor, s: &str) {
    for c in s.chars() {
        e.type_char(c);
    }
}

#[test]
fn typing_is_one_undo_step_and_undo_back_to_the_saved_text_clears_modified() {
    let mut e = Editor::new("1, 2");
    e.move_to_end();
    assert!(!e.modified());
    typed(&mut e, ", 3, 4");
    assert_eq!(e.text(), "1, 2, 3, 4");
    assert!(e.modified());
    assert!(e.apply(A::Undo, false));
    assert_eq!(e.text(), "1, 2");
    assert!(!e.modified(), "back at the saved text");
    assert!(e.apply(A::Redo, false));
    assert_eq!(e.text(), "1, 2, 3, 4");
    assert!(e.modified());
    e.mark_saved();
    assert!(!e.modified());
    e.apply(A::Undo, false);
    assert!(e.modified(), "undoing past the save modifies it again");
}

#[test]
fn a_motion_ends_the_run_of_typing() {
    let mut e = Editor::default();
    typed(&mut e, "ab");
    e.apply(A::Left, false);
    typed(&mut e, "X");
    assert_eq!(e.text(), "aXb");
    e.apply(A::Undo, false);
    assert_eq!(e.text(), "ab");
    e.apply(A::Undo, false);
    assert_eq!(e.text(), "");
    assert!(!e.apply(A::Undo, false), "nothing left to undo");
}

#[test]
fn multi_line_insert_undo_and_redo_restore_lines_and_cursor() {
    let mut e = Editor::new("a: 1, 2\nb: 3, 4");
    e.set_cursor(Pos::new(0, 4));
    assert!(e.insert_str("9\n8, 7\r\n6, "));
    assert_eq!(e.text(), "a: 19\n8, 7\n6, , 2\nb: 3, 4");
    assert_eq!(e.cursor(), Pos::new(2, 3));
    e.apply(A::Undo, false);
    assert_eq!(e.text(), "a: 1, 2\nb: 3, 4");
    assert_eq!(e.cursor(), Pos::new(0, 4));
    e.apply(A::Redo, false);
    assert_eq!(e.text(), "a: 19\n8, 7\n6, , 2\nb: 3, 4");
    assert_eq!(e.cursor(), Pos::new(2, 3));
}

#[test]
fn backspaces_merge_and_join_lines() {
    let mut e = Editor::new("ab\ncd");
    e.set_cursor(Pos::new(1, 1));
    e.apply(A::DeleteBack, false);
    e.apply(A::DeleteBack, false);
    assert_eq!(e.text(), "abd");
    assert_eq!(e.cursor(), Pos::new(0, 2));
    e.apply(A::DeleteBack, false);
    assert_eq!(e.text(), "ad");
    e.apply(A::Undo, false);
    assert_eq!(e.text(), "ab\ncd", "one undo for the run of deletions");
    assert_eq!(e.cursor(), Pos::new(1, 1));
}

#[test]
fn delete_forward_at_the_end_of_a_line_joins_the_next() {
    let mut e = Editor::new("ab\ncd");
    e.set_cursor(Pos::new(0, 2));
    assert!(e.apply(A::DeleteForward, false));
    assert_eq!(e.text(), "abcd");
    e.move_to_end();
    assert!(!e.apply(A::DeleteForward, false));
}

#[test]
fn typing_replaces_the_selection_and_shift_motions_select() {
    let mut e = Editor::new("1, 2, 3");
    e.set_cursor(Pos::new(0, 3));
    e.apply(A::Right, true);
    assert_eq!(e.selection(), Some((Pos::new(0, 3), Pos::new(0, 4))));
    e.type_char('7');
    assert_eq!(e.text(), "1, 7, 3");
    e.select_all();
    e.apply(A::DeleteBack, false);
    assert_eq!(e.text(), "");
    e.apply(A::Undo, false);
    assert_eq!(e.text(), "1, 7, 3");
}

#[test]
fn kill_line_and_yank() {
    let mut e = Editor::new("keep: 1, 2\ncut: 3, 4");
    e.set_cursor(Pos::new(0, 4));
    e.apply(A::KillLine, false);
    assert_eq!(e.text(), "keep\ncut: 3, 4");
    e.move_to_end();
    e.apply(A::Yank, false);
    assert_eq!(e.text(), "keep\ncut: 3, 4: 1, 2");
    // At a line's end, Ctrl-K joins the next line.
    e.set_cursor(Pos::new(0, 4));
    e.apply(A::KillLine, false);
    assert_eq!(e.text(), "keepcut: 3, 4: 1, 2");
}

#[test]
fn word_motions_and_deletions_treat_numbers_as_words() {
    let mut e = Editor::new("a: -1.5e-3, 2.25");
    e.move_to_end();
    e.apply(A::WordLeft, false);
    assert_eq!(e.cursor(), Pos::new(0, 12));
    e.apply(A::WordLeft, false);
    assert_eq!(e.cursor(), Pos::new(0, 3));
    e.apply(A::DeleteWordForward, false);
    assert_eq!(e.text(), "a: , 2.25");
    e.apply(A::Yank, false);
    assert_eq!(e.text(), "a: -1.5e-3, 2.25");
    e.apply(A::WordRight, false);
    e.apply(A::WordRight, false);
    assert_eq!(e.cursor(), Pos::new(0, 16));
}

#[test]
fn motions_step_over_whole_characters_and_keep_the_column_across_lines() {
    let mut e = Editor::new("ä中b\nabcdef\nx");
    e.set_cursor(Pos::new(0, 0));
    e.apply(A::Right, false);
    assert_eq!(e.cursor(), Pos::new(0, 2), "ä is two bytes");
    e.apply(A::Right, false);
    assert_eq!(e.cursor(), Pos::new(0, 5), "中 is three");
    assert_eq!(e.column_of(e.cursor()), 3, "中 takes two cells");
    e.apply(A::Down, false);
    assert_eq!(e.cursor(), Pos::new(1, 3));
    e.apply(A::Down, false);
    assert_eq!(e.cursor(), Pos::new(2, 1), "clamped to the short line");
    e.apply(A::Up, false);
    assert_eq!(e.cursor(), Pos::new(1, 3), "the goal column is kept");
}

#[test]
fn an_edit_copies_only_the_line_it_changes() {
    let mut e = Editor::new("1, 2\n3, 4\n5, 6");
    let before: Vec<_> = e.lines().to_vec();
    e.set_cursor(Pos::new(1, 4));
    e.type_char('0');
    assert!(std::sync::Arc::ptr_eq(&before[0], &e.lines()[0]));
    assert!(!std::sync::Arc::ptr_eq(&before[1], &e.lines()[1]));
    assert!(std::sync::Arc::ptr_eq(&before[2], &e.lines()[2]));
    assert_eq!(before[1].as_str(), "3, 4", "the shared copy is untouched");
}

#[test]
fn revision_counts_every_change() {
    let mut e = Editor::new("1");
    let r = e.revision();
    e.apply(A::Left, false);
    assert_eq!(e.revision(), r);
    e.type_char('2');
    e.apply(A::Undo, false);
    assert_eq!(e.revision(), r + 2);
}

#[derive(Debug, Clone)]
enum Op {
    Type(char),
    Insert(String),
    Do(A, bool),
}

fn op() -> impl Strategy<Value = Op> {
    let actions = [
        A::Left,
        A::Right,
        A::Up,
        A::Down,
        A::WordLeft,
        A::WordRight,
        A::LineStart,
        A::LineEnd,
        A::Top,
        A::Bottom,
        A::DeleteBack,
        A::DeleteForward,
        A::DeleteWordBack,
        A::DeleteWordForward,
        A::KillLine,
        A::Cut,
        A::Yank,
        A::Newline,
    ];
    prop_oneof![
        prop::sample::select(vec!['1', ',', ' ', '.', 'é', '中', '\n']).prop_map(Op::Type),
        "[0-9a\n,. é]{0,12}".prop_map(Op::Insert),
        (prop::sample::select(actions.to_vec()), any::<bool>()).prop_map(|(a, s)| Op::Do(a, s)),
    ]
}

proptest! {
    /// Whatever is done, undoing every change gives the original text back (unmodified), and
    /// redoing every change gives the edited text again.
    #[test]
    fn undo_all_and_redo_all_round_trip(start in "[0-9,\n. é]{0,40}", ops in prop::collection::vec(op(), 0..60)) {
        let mut e = Editor::new(&start);
        for op in ops {
            match op {
                Op::Type(c) => { e.type_char(c); }
                Op::Insert(s) => { e.insert_str(&s); }
                Op::Do(a, s) => { e.apply(a, s); }
            }
            let c = e.cursor();
            prop_assert!(c.row < e.lines().len());
            prop_assert!(e.line(c.row).is_char_boundary(c.col));
        }
        let edited = e.text();
        while e.apply(A::Undo, false) {}
        prop_assert_eq!(e.text(), start.clone());
        prop_assert!(!e.modified());
        while e.apply(A::Redo, false) {}
        prop_assert_eq!(e.text(), edited);
    }
}
