//! The channel text parser (`quantscope::io::parse_text`): accepted input, exact error
//! messages and positions, formatting back to text, size limits and linear time, and
//! properties over generated and arbitrary text. (Array, CSV and other notations are in
//! tests/it/text_formats.rs.)

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use quantscope::core::Matrix;
use quantscope::io::{ParseError, ParseErrorKind, format_text, parse_text, parse_text_limited};

use crate::common::core as core_helpers;

use core_helpers::matrix_rows as rows;

fn parse_err(src: &str) -> ParseError {
    match parse_text(src) {
        Ok(m) => panic!("{src:?} parsed as {m:?}"),
        Err(e) => e,
    }
}

// ---------------------------------------------------------------- text: accepted input

#[test]
fn accepted_texts_give_the_expected_rows() {
    let cases: &[(&str, &[&[f32]])] = &[
        ("1, 2,3  4", &[&[1.0, 2.0, 3.0, 4.0]]),
        ("1\t2,\t3\t,4", &[&[1.0, 2.0, 3.0, 4.0]]),
        ("1, 2, 3,", &[&[1.0, 2.0, 3.0]]),
        ("1 , 2 ,3", &[&[1.0, 2.0, 3.0]]),
        ("1 2\n3 4", &[&[1.0, 2.0], &[3.0, 4.0]]),
        ("1 2\r\n3 4\r\n", &[&[1.0, 2.0], &[3.0, 4.0]]),
        ("1 2; 3 4;; ; 5 6", &[&[1.0, 2.0], &[3.0, 4.0], &[5.0, 6.0]]),
        ("1 2,; 3 4,;", &[&[1.0, 2.0], &[3.0, 4.0]]),
        (
            "\n\n  # comment\n1 2 # trailing: comment, 9 9 9\n\n3 4#5",
            &[&[1.0, 2.0], &[3.0, 4.0]],
        ),
        (
            "1e-3 -.5 +2 3. .5 1E+3 -0 007 1.5e0",
            &[&[1e-3, -0.5, 2.0, 3.0, 0.5, 1e3, 0.0, 7.0, 1.5]],
        ),
        ("\u{feff}1 2", &[&[1.0, 2.0]]),
        ("1e-50 3.4028235e38", &[&[0.0, f32::MAX]]),
        ("1\u{a0}2\u{3000}3", &[&[1.0, 2.0, 3.0]]),
    ];
    for (src, expected) in cases {
        let m = parse_text(src).unwrap_or_else(|e| panic!("{src:?}: {e}"));
        assert_eq!(
            rows(&m),
            expected.iter().map(|r| r.to_vec()).collect::<Vec<_>>(),
            "{src:?}"
        );
    }
}

#[test]
fn minus_zero_keeps_its_sign() {
    let m = parse_text("-0, 0").unwrap();
    assert!(m.values()[[0, 0]].is_sign_negative());
    assert!(m.values()[[0, 1]].is_sign_positive());
}

#[test]
fn labels_are_trimmed_and_optional_per_channel() {
    let m = parse_text("q_proj.7: 0.1, -0.2\n  layer [3] - a.b :1 2; 3 4\nλ_é: 5 6").unwrap();
    let labels: Vec<Option<&str>> = m.labels().iter().map(Option::as_deref).collect();
    assert_eq!(
        labels,
        [Some("q_proj.7"), Some("layer [3] - a.b"), None, Some("λ_é")]
    );
    assert_eq!(rows(&m)[0], [0.1, -0.2]);
}

#[test]
fn values_are_rounded_once_to_the_nearest_f32() {
    // Halfway between 1 and the next f32 (1 + 2^-23), plus a hair: must round up.
    let m = parse_text("1.00000005960464477539062500001").unwrap();
    assert_eq!(m.values()[[0, 0]], 1.0 + f32::EPSILON);
}

// ---------------------------------------------------------------- text: errors

#[test]
fn error_messages_are_exact() {
    let cases = [
        (
            "1 2 3\n4 5 6\n1, 2, 0.4x",
            r#"line 3, col 7: "0.4x" is not a number"#,
        ),
        (
            "1 2 3 4\n# c\n5 6 7 8\n1 2 3 4 5",
            "line 4, col 1: channel 3 has 5 values but channel 1 has 4",
        ),
        (
            "1 2; 3",
            "line 1, col 6: channel 2 has 1 value but channel 1 has 2",
        ),
        ("", "no values: the input has no channels"),
        (
            "  \n# only comments\n\n ; ;\t",
            "no values: the input has no channels",
        ),
        ("1,,2", "line 1, col 3: empty value"),
        ("1, ,2", "line 1, col 4: empty value"),
        (",1", "line 1, col 1: empty value"),
        ("a: ,1", "line 1, col 4: empty value"),
        ("1 2,,", "line 1, col 5: empty value"),
        ("nan", r#"line 1, col 1: "nan": NaN is not allowed"#),
        ("1 NaN", r#"line 1, col 3: "NaN": NaN is not allowed"#),
        ("-nan", r#"line 1, col 1: "-nan": NaN is not allowed"#),
        ("inf", r#"line 1, col 1: "inf": infinity is not allowed"#),
        (
            "0 -Infinity",
            r#"line 1, col 3: "-Infinity": infinity is not allowed"#,
        ),
        ("+INF", r#"line 1, col 1: "+INF": infinity is not allowed"#),
        ("1e39", r#"line 1, col 1: "1e39" is out of range for f32"#),
        (
            "2 -1e400",
            r#"line 1, col 3: "-1e400" is out of range for f32"#,
        ),
        (": 1 2", "line 1, col 1: empty label before ':'"),
        ("1 2\n   : 1 2", "line 2, col 4: empty label before ':'"),
        (
            "a/b: 1",
            r#"line 1, col 1: "a/b" is not a valid label: use letters, digits, spaces and _ . - [ ]"#,
        ),
        ("a:", r#"line 1, col 1: label "a" has no values"#),
        (
            "1 2; b :  # nothing",
            r#"line 1, col 6: label "b" has no values"#,
        ),
        (
            "a: 1 2\nbb: 1 2 3",
            "line 2, col 1: channel 2 has 3 values but channel 1 has 2",
        ),
    ];
    for (src, message) in cases {
        assert_eq!(parse_err(src).to_string(), message, "{src:?}");
    }
}

#[test]
fn non_numbers_are_refused_with_the_token() {
    for token in [
        "0x10", "1/2", "1..2", ".", "-", "e5", "1e", "1e+", "--1", "+-1", "1_000", "1.5f", "١",
        "½", "infinite", "nana", "0b1", "1e5.0",
    ] {
        let e = parse_err(&format!("0 {token}"));
        assert_eq!(
            (e.line, e.col, &e.kind, e.text.as_str()),
            (1, 3, &ParseErrorKind::NotANumber, token),
            "{token:?}"
        );
    }
}

#[test]
fn only_the_first_colon_ends_a_label() {
    // "0 1" is a valid label (digits and a space), so "2:3" is the bad value.
    let e = parse_err("0 1:2:3");
    assert_eq!((e.col, e.text.as_str()), (5, "2:3"));
    let e = parse_err("a: 1:2");
    assert_eq!((e.col, e.text.as_str()), (4, "1:2"));
}

#[test]
fn only_a_leading_byte_order_mark_is_ignored() {
    assert_eq!(
        parse_text("\u{feff}1 2").map(|m| rows(&m)),
        Ok(vec![vec![1.0, 2.0]])
    );
    let e = parse_err("1 2\n\u{feff}3 4");
    assert_eq!(
        (e.line, e.col, e.kind, e.text.as_str()),
        (2, 1, ParseErrorKind::NotANumber, "\u{feff}3")
    );
}

#[test]
fn columns_count_chars_after_separators_labels_tabs_and_unicode() {
    let cases = [
        ("1 2; 3 x", 1, 8),
        ("a: 1 2; bb: 3 y", 1, 15),
        ("\t1\tx", 1, 4),
        ("λ.ß: 1 x", 1, 8),
        ("é: 1 2\n# ünïcödé — comment\nλλλ: 1 z", 3, 8),
        ("1 2 # ü\nü: 3 z", 2, 6),
        ("\u{feff}1 z", 1, 3),
        ("1 2;\t;  ü: 3 ,,", 1, 15),
    ];
    for (src, line, col) in cases {
        let e = parse_err(src);
        assert_eq!((e.line, e.col), (line, col), "{src:?}: {e}");
    }
}

#[test]
fn error_fields_name_the_token() {
    let e = parse_err("w.1: 1 2\nw.2: 3 4x");
    assert_eq!(
        e,
        ParseError {
            line: 2,
            col: 8,
            kind: ParseErrorKind::NotANumber,
            text: "4x".to_owned()
        }
    );
    let e = parse_err("w.1: 1 2\nw.2: 3");
    assert_eq!(
        e.kind,
        ParseErrorKind::RaggedChannel {
            channel: 2,
            len: 1,
            expected: 2
        }
    );
    assert_eq!(e.text, "w.2");
}

#[test]
fn long_tokens_are_shortened_in_messages_but_kept_in_the_error() {
    let token = "x".repeat(100_000);
    let e = parse_err(&token);
    assert_eq!(e.text.len(), 100_000);
    assert_eq!(
        e.to_string(),
        format!("line 1, col 1: \"{}…\" is not a number", "x".repeat(40))
    );
}

#[test]
fn the_value_limit_is_enforced_at_the_first_value_over_it() {
    assert_eq!(
        parse_text_limited("1 2 3\n4 5 6", 6).map(|m| m.shape()),
        Ok((2, 3))
    );
    let e = parse_text_limited("1 2 3\n4 5 6", 5).unwrap_err();
    assert_eq!(
        e.to_string(),
        "line 2, col 5: too many values: the input has more than 5 numbers"
    );
    assert_eq!(e.kind, ParseErrorKind::TooManyValues { max: 5 });
    let e = parse_text_limited("1", 0).unwrap_err();
    assert_eq!(e.kind, ParseErrorKind::TooManyValues { max: 0 });
}

// ---------------------------------------------------------------- text: format and size

#[test]
fn format_text_writes_labels_and_shortest_values() {
    let m = Matrix::with_labels(
        ndarray::array![[0.1, -2.0, 1e-7], [3.0, 0.0, -0.0]],
        vec![Some("q.0".to_owned()), None],
    )
    .unwrap();
    assert_eq!(format_text(&m), "q.0: 0.1, -2, 0.0000001\n3, 0, -0\n");
}

/// Ten megabytes of pasted channels, built deterministically.
fn big_paste(lines: bool) -> String {
    let mut s = String::with_capacity(10_500_000);
    let mut x: u32 = 12_345;
    let mut row = 0;
    while s.len() < 10_000_000 {
        s.push_str(if lines { "\nlayer.7: " } else { "; layer.7: " });
        for _ in 0..64 {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let _ = write!(s, "{:.6}, ", f64::from(x) / f64::from(u32::MAX) - 0.5);
        }
        row += 1;
    }
    assert!(row > 10_000);
    s
}

#[test]
fn ten_megabytes_parse_in_linear_time() {
    for lines in [true, false] {
        let src = big_paste(lines);
        let start = Instant::now();
        let m = parse_text(&src).unwrap();
        let took = start.elapsed();
        assert_eq!(m.shape().1, 64);
        // Well under a second in release builds; the bound leaves room for debug builds on slow
        // machines while still catching anything quadratic (which would take hours).
        assert!(took < Duration::from_secs(5), "{took:?} (lines: {lines})");
        // An error at the very end is found just as fast, and positioned correctly.
        let bad = format!("{src}x");
        let start = Instant::now();
        let e = parse_err(&bad);
        assert!(start.elapsed() < Duration::from_secs(5));
        let last_line = bad.rsplit('\n').next().unwrap();
        assert_eq!(
            (e.line, e.col),
            (bad.split('\n').count(), last_line.chars().count())
        );
    }
}

fn label_strategy() -> impl Strategy<Value = Option<String>> {
    prop::option::of("[a-zA-Zλé0-9_.\\[\\]-]([a-zA-Z0-9_. \\[\\]-]{0,10}[a-zA-Z0-9_.\\[\\]-])?")
}

fn matrix_strategy() -> impl Strategy<Value = Matrix> {
    (1..8_usize, 1..8_usize).prop_flat_map(|(r, c)| {
        let finite = any::<f32>().prop_filter("finite", |v| v.is_finite());
        (
            prop::collection::vec(finite, r * c),
            prop::collection::vec(label_strategy(), r),
        )
            .prop_map(move |(values, labels)| {
                Matrix::with_labels(
                    ndarray::Array2::from_shape_vec((r, c), values).unwrap(),
                    labels,
                )
                .unwrap()
            })
    })
}

/// Fragments that exercise every branch of the parser when shuffled together.
fn tricky_text() -> impl Strategy<Value = String> {
    let pieces = vec![
        "1", "-.5", "+2", "3.", "1e39", "nan", "-inf", "e", ".", ",", ",,", ";", ":", "#", " ",
        "\t", "\n", "\r\n", "é", "λ:", "a:", "[0]", "\u{feff}", "\u{a0}", "0x1", "𝟙", "\u{0}",
    ];
    prop::collection::vec(prop::sample::select(pieces), 0..300).prop_map(|v| v.concat())
}

/// Checks the invariants every error must satisfy.
fn check_position(src: &str, e: &ParseError) -> Result<(), TestCaseError> {
    let src = src.strip_prefix('\u{feff}').unwrap_or(src);
    let line = src.split('\n').nth(e.line - 1);
    prop_assert!(line.is_some(), "line {} out of range", e.line);
    let chars = line.map_or(0, |l| l.chars().count());
    prop_assert!(
        e.col >= 1 && e.col <= chars + 1,
        "col {} beyond line of {chars} chars",
        e.col
    );
    if !e.text.is_empty() {
        let at: String = line.unwrap_or_default().chars().skip(e.col - 1).collect();
        prop_assert!(
            at.starts_with(&e.text),
            "{:?} is not at col {} of {:?}",
            e.text,
            e.col,
            line
        );
    }
    Ok(())
}

proptest! {
    #[test]
    fn format_then_parse_gives_the_matrix_back(m in matrix_strategy()) {
        let text = format_text(&m);
        let back = parse_text(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(&back, &m);
        let bits = |m: &Matrix| m.values().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        prop_assert_eq!(bits(&back), bits(&m));
    }

    #[test]
    fn arbitrary_strings_never_panic(src in any::<String>()) {
        if let Err(e) = parse_text(&src) { check_position(&src, &e)?; }
    }

    #[test]
    fn tricky_strings_never_panic_and_errors_point_at_their_token(src in tricky_text(), limit in 0..50_usize) {
        if let Err(e) = parse_text(&src) { check_position(&src, &e)?; }
        if let Err(e) = parse_text_limited(&src, limit) { check_position(&src, &e)?; }
    }

    #[test]
    fn huge_repetitions_never_panic(piece in tricky_text(), times in 1..2000_usize) {
        let src = piece.repeat(times);
        if let Err(e) = parse_text(&src) { check_position(&src, &e)?; }
    }
}
