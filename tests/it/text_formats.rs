//! What people paste from notebooks and spreadsheets: numpy and PyTorch printed arrays,
//! nested JSON, CSV/TSV header rows; notes on values `f32` cannot hold; and the editor's
//! line cache, which must parse exactly as the whole text does.

use std::sync::Arc;

use proptest::prelude::*;
use quantscope::app::editor::{EditAction, Editor, Pos};
use quantscope::io::text::{LineCache, NoteKind, parse_text, parse_text_with_notes};
use quantscope::io::{ParseErrorKind, parse_text_limited};

use crate::common::core as core_helpers;

use core_helpers::matrix_rows as rows;

fn parsed(src: &str) -> Vec<Vec<f32>> {
    rows(&parse_text(src).unwrap_or_else(|e| panic!("{src:?}: {e}")))
}

#[test]
fn numpy_torch_and_json_arrays_are_read_channel_by_channel() {
    let two = vec![vec![0.1, -0.2], vec![0.3, 0.4]];
    for src in [
        "array([[ 0.1, -0.2],\n       [ 0.3,  0.4]], dtype=float32)",
        "np.array([[0.1, -0.2], [0.3, 0.4]])",
        "[[ 0.1 -0.2]\n [ 0.3  0.4]]",
        "tensor([[ 0.1000, -0.2000],\n        [ 0.3000,  0.4000]], dtype=torch.float16, requires_grad=True)",
        "tensor([[0.1, -0.2], [0.3, 0.4]], device='cuda:0', grad_fn=<AddBackward0>)",
        "[[0.1, -0.2], [0.3, 0.4]]",
        "# copied from a notebook\n\n[[0.1,-0.2],[0.3,0.4]]\n",
    ] {
        assert_eq!(parsed(src), two, "{src}");
    }
    assert_eq!(parsed("array([1., 2., 3.])"), vec![vec![1.0, 2.0, 3.0]]);
    assert_eq!(parsed("[1.e-03, -0., 5]"), vec![vec![1e-3, -0.0, 5.0]]);
    // A 3-D array: each channel is flattened in order.
    assert_eq!(
        parsed("[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]"),
        vec![vec![1.0, 2.0, 3.0, 4.0], vec![5.0, 6.0, 7.0, 8.0]]
    );
}

#[test]
fn array_errors_say_where_and_why() {
    let cases = [
        (
            "array([[1, 2],\n       [3, ...]])",
            2,
            12,
            ParseErrorKind::Summarised,
        ),
        (
            "[[1, 2], [3]]",
            1,
            10,
            ParseErrorKind::RaggedChannel {
                channel: 2,
                len: 1,
                expected: 2,
            },
        ),
        ("[[1, 2], [3, x]]", 1, 14, ParseErrorKind::NotANumber),
        ("[[1, 2], [3, 4]", 1, 16, ParseErrorKind::Unclosed),
        ("[[1, nan]]", 1, 6, ParseErrorKind::NaN),
        ("tensor([[1, 2]]", 1, 16, ParseErrorKind::Unclosed),
    ];
    for (src, line, col, kind) in cases {
        let e = parse_text(src).expect_err(src);
        assert_eq!((e.line, e.col, &e.kind), (line, col, &kind), "{src}: {e}");
    }
    let e = parse_text("array([[1, 2],\n       [3, ...]])").unwrap_err();
    assert!(e.to_string().contains("printed in summary"), "{e}");
    let e = parse_text_limited("[[1, 2], [3, 4]]", 3).unwrap_err();
    assert_eq!(
        (e.col, e.kind),
        (14, ParseErrorKind::TooManyValues { max: 3 })
    );
}

#[test]
fn a_label_in_brackets_is_still_a_label() {
    let m = parse_text("[q0]: 1, 2\n[q1]: 3, 4").unwrap();
    assert_eq!(m.labels()[0].as_deref(), Some("[q0]"));
    assert_eq!(rows(&m), vec![vec![1.0, 2.0], vec![3.0, 4.0]]);
}

#[test]
fn a_csv_header_row_is_skipped_with_a_note_and_first_cells_label_rows() {
    let p = parse_text_with_notes(
        "name,w0,w1,w2\nquiet,0.05,-0.08,0.12\nloud,2.21,-3.1,1.77\n",
        usize::MAX,
    )
    .unwrap();
    assert_eq!(
        rows(&p.matrix),
        vec![vec![0.05, -0.08, 0.12], vec![2.21, -3.1, 1.77]]
    );
    assert_eq!(p.matrix.labels()[1].as_deref(), Some("loud"));
    assert_eq!(p.notes.list.len(), 1);
    assert!(matches!(&p.notes.list[0].kind, NoteKind::HeaderSkipped(n) if n[0] == "name"));
    assert_eq!(
        p.notes.list[0].to_string().split(':').next(),
        Some("line 1, col 1")
    );
    // pandas' to_csv: an index column under an empty header cell.
    let p = parse_text_with_notes(",0,1\n0,1.5,2.5\n1,3.5,4.5\n", usize::MAX).unwrap();
    assert_eq!(
        rows(&p.matrix),
        vec![vec![0.0, 1.5, 2.5], vec![1.0, 3.5, 4.5]]
    );
    // TSV.
    let p = parse_text_with_notes("a\tb\n1\t2\n3\t4", usize::MAX).unwrap();
    assert_eq!(rows(&p.matrix), vec![vec![1.0, 2.0], vec![3.0, 4.0]]);
    // A first row mixing numbers and a typo is not a header: the typo is an error.
    let e = parse_text("1, 2, x\n3, 4, 5").unwrap_err();
    assert_eq!((e.line, e.col, e.kind), (1, 7, ParseErrorKind::NotANumber));
    // One line of names alone is not data.
    assert!(parse_text("a, b, c").is_err());
}

#[test]
fn values_that_underflow_or_turn_subnormal_are_noted_not_silent() {
    let p = parse_text_with_notes("a: 1e-50, 1, 2e-40, 0.0, 0e5\nb: 1, 2, 3, 4, 5", usize::MAX)
        .unwrap();
    assert_eq!(p.matrix.values()[[0, 0]], 0.0);
    assert_eq!(p.notes.count, 2, "{:?}", p.notes);
    assert_eq!(
        p.notes.list[0].to_string(),
        "line 1, col 4: 1e-50 is too small for f32 and reads as 0"
    );
    assert_eq!(
        p.notes.list[1].to_string(),
        "line 1, col 14: 2e-40 is subnormal in f32 (stored with fewer significant bits)"
    );
    let p = parse_text_with_notes("[[1e-46, 1]]", usize::MAX).unwrap();
    assert_eq!(p.notes.count, 1);
}

#[test]
fn decimal_commas_are_separators() {
    // `1,5` is two values: commas always separate (README says so).
    assert_eq!(parsed("1,5 2,5"), vec![vec![1.0, 5.0, 2.0, 5.0]]);
}

#[test]
fn control_characters_in_a_bad_token_are_escaped_in_the_message() {
    let e = parse_text("1, 2\u{1b}[31m, 3").unwrap_err();
    let message = e.to_string();
    assert!(!message.contains('\u{1b}'), "{message:?}");
    assert!(message.contains("\\u{1b}"), "{message:?}");
}

#[test]
fn the_line_cache_reparses_only_changed_lines_and_agrees_with_the_whole_parse() {
    let text = "# header\nname,a,b\nq0,1,2\nq1,3,4";
    let mut editor = Editor::new(text);
    let mut cache = LineCache::default();
    let first = cache.parse(editor.lines(), usize::MAX).unwrap();
    assert_eq!(first.matrix, parse_text(text).unwrap());
    // Unchanged text: the same result, not a new parse.
    let again = cache.parse(editor.lines(), usize::MAX).unwrap();
    assert!(Arc::ptr_eq(&first, &again));
    // Change a value.
    editor.set_cursor(Pos::new(3, 6));
    editor.type_char('5');
    let changed = cache.parse(editor.lines(), usize::MAX).unwrap();
    assert_eq!(changed.matrix, parse_text(&editor.text()).unwrap());
    assert_eq!(changed.matrix.values()[[1, 1]], 45.0);
}

fn any_line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("1, 2, 3".to_string()),
        Just("a: 4 5 6".to_string()),
        Just("x,y,z".to_string()),
        Just("r,7,8,9".to_string()),
        Just("# c".to_string()),
        Just(String::new()),
        Just("1e-50 2 3".to_string()),
        Just("[[1, 2, 3]]".to_string()),
        Just("1; 2 3 4".to_string()),
        "[0-9a-z,.; #:\\[\\]-]{0,12}",
    ]
}

proptest! {
    /// Editing line by line through the cache (unchanged lines keep their identity and
    /// their parse) gives what a fresh parse of the whole text gives: the same matrix or
    /// the same error, the same notes.
    #[test]
    fn cached_parses_equal_fresh_parses(
        start in prop::collection::vec(any_line(), 1..8),
        edits in prop::collection::vec((0..10_usize, any_line()), 1..10),
        limit in 1..40_usize,
    ) {
        let mut editor = Editor::new(&start.join("\n"));
        let mut cache = LineCache::default();
        for (row, line) in edits {
            let row = row % editor.lines().len();
            let before = editor.lines().to_vec();
            editor.set_cursor(Pos::new(row, 0));
            editor.apply(EditAction::LineEnd, true);
            editor.insert_str(&line);
            for (i, l) in editor.lines().iter().enumerate() {
                if i != row {
                    prop_assert!(Arc::ptr_eq(l, &before[i]), "line {} was copied", i);
                }
            }
            let cached = cache.parse(editor.lines(), limit);
            let fresh = parse_text_with_notes(&editor.text(), limit);
            match (cached, fresh) {
                (Ok(c), Ok(f)) => {
                    prop_assert_eq!(&c.matrix, &f.matrix);
                    prop_assert_eq!(&c.notes, &f.notes);
                }
                (Err(c), Err(f)) => prop_assert_eq!(c, f),
                (c, f) => prop_assert!(false, "cache {:?} vs fresh {:?}", c, f),
            }
        }
    }
}
