//! Tests of the input side of `quantscope::io`: the channel text parser, the `.npy` reader and
//! the path/reader loaders.
//!
//! The files in `tests/data/` were written by numpy 2.4 (`numpy.save`, and
//! `numpy.lib.format.write_array(f, a, version=(2, 0))` / `(3, 0)` for the v2/v3 files), from
//! the arrays named in each test below.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use quantscope::core::Matrix;
use quantscope::io::{
    LoadError, NpyError, ParseError, ParseErrorKind, format_text, load_path, load_reader,
    parse_npy, parse_text, parse_text_limited,
};

#[path = "common/files.rs"]
mod files;

use files::{f32_bytes as f32s, npy_bytes as npy, npy_header as header, temp_file};

fn parse_err(src: &str) -> ParseError {
    match parse_text(src) {
        Ok(m) => panic!("{src:?} parsed as {m:?}"),
        Err(e) => e,
    }
}

fn rows(m: &Matrix) -> Vec<Vec<f32>> {
    m.values().rows().into_iter().map(|r| r.to_vec()).collect()
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

// ---------------------------------------------------------------- npy: builders

fn f64s(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn npy_err(bytes: &[u8]) -> NpyError {
    match parse_npy(bytes) {
        Ok(m) => panic!("parsed as {m:?}"),
        Err(e) => e,
    }
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(name),
    )
    .unwrap()
}

// ---------------------------------------------------------------- npy: accepted files

#[test]
fn npy_shapes_map_to_channels() {
    let six = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let cases: &[(&str, bool, &[&[f32]])] = &[
        ("(2, 3)", false, &[&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]]),
        ("(6,)", false, &[&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]]),
        ("(6,)", true, &[&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]]),
        ("(3, 1, 2)", false, &[&[1.0, 2.0], &[3.0, 4.0], &[5.0, 6.0]]),
        // Column-major storage of [[1, 3, 5], [2, 4, 6]].
        ("(2, 3)", true, &[&[1.0, 3.0, 5.0], &[2.0, 4.0, 6.0]]),
    ];
    for (shape, fortran, expected) in cases {
        let m = parse_npy(&npy((1, 0), &header("<f4", *fortran, shape), &six)).unwrap();
        assert_eq!(
            rows(&m),
            expected.iter().map(|r| r.to_vec()).collect::<Vec<_>>(),
            "{shape} {fortran}"
        );
        assert!(m.labels().iter().all(Option::is_none));
    }
}

#[test]
fn npy_dtypes_and_versions() {
    let half: Vec<u8> = [1.5_f32, -0.25]
        .iter()
        .flat_map(|v| half::f16::from_f32(*v).to_le_bytes())
        .collect();
    let big: Vec<u8> = [1.5_f32, -0.25]
        .iter()
        .flat_map(|v| v.to_be_bytes())
        .collect();
    let big64: Vec<u8> = [1.5_f64, -0.25]
        .iter()
        .flat_map(|v| v.to_be_bytes())
        .collect();
    let cases = [
        npy((1, 0), &header("<f2", false, "(2,)"), &half),
        npy((1, 0), &header("<f4", false, "(2,)"), &f32s(&[1.5, -0.25])),
        npy((1, 0), &header("<f8", false, "(2,)"), &f64s(&[1.5, -0.25])),
        npy((1, 0), &header(">f4", false, "(2,)"), &big),
        npy((1, 0), &header(">f8", false, "(2,)"), &big64),
        npy((2, 0), &header("<f4", false, "(2,)"), &f32s(&[1.5, -0.25])),
        npy((3, 0), &header("<f4", false, "(2,)"), &f32s(&[1.5, -0.25])),
        // Keys in any order, double quotes, odd whitespace, no trailing comma, Python 2 longs.
        npy(
            (1, 0),
            "{ \"shape\" :(1 ,2L) ,'fortran_order':False,\n'descr':'<f4'}   \n",
            &f32s(&[1.5, -0.25]),
        ),
    ];
    for (i, bytes) in cases.iter().enumerate() {
        let m = parse_npy(bytes).unwrap_or_else(|e| panic!("case {i}: {e}"));
        assert_eq!(rows(&m), [[1.5, -0.25]], "case {i}");
    }
}

#[test]
fn npy_files_written_by_numpy() {
    // np.array([[0.5, -1.25, 3.0], [1e-3, 2.0, -0.0]], dtype='<f4')
    assert_eq!(
        rows(&parse_npy(&fixture("f32_2d.npy")).unwrap()),
        [[0.5, -1.25, 3.0], [1e-3, 2.0, -0.0]]
    );
    // np.array([0.5, -2.0, 65504.0, 0.099975586], dtype='<f2')
    assert_eq!(
        rows(&parse_npy(&fixture("f16_1d.npy")).unwrap()),
        [[0.5, -2.0, 65504.0, 0.099_975_586]]
    );
    // np.arange(24, dtype='<f8').reshape(2, 3, 2, 2) * 0.5 - 3
    let m = parse_npy(&fixture("f64_4d.npy")).unwrap();
    let expected: Vec<Vec<f32>> = (0..2)
        .map(|r| (0..12).map(|c| (r * 12 + c) as f32 * 0.5 - 3.0).collect())
        .collect();
    assert_eq!(rows(&m), expected);
    // np.asfortranarray(np.arange(24, dtype='<f4').reshape(2, 3, 4))
    let m = parse_npy(&fixture("f32_fortran.npy")).unwrap();
    let expected: Vec<Vec<f32>> = (0..2)
        .map(|r| (0..12).map(|c| (r * 12 + c) as f32).collect())
        .collect();
    assert_eq!(rows(&m), expected);
    // np.arange(6, dtype='>f4').reshape(2, 3)
    assert_eq!(
        rows(&parse_npy(&fixture("f32_big_endian.npy")).unwrap()),
        [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    );
    // np.array([[1.5, 2.5]], dtype='<f4'), written as format 2.0 and 3.0
    for name in ["f32_v2.npy", "f32_v3.npy"] {
        assert_eq!(
            rows(&parse_npy(&fixture(name)).unwrap()),
            [[1.5, 2.5]],
            "{name}"
        );
    }
}

// ---------------------------------------------------------------- npy: errors

fn assert_npy_messages(cases: &[(Vec<u8>, &str)]) {
    for (bytes, message) in cases {
        assert_eq!(npy_err(bytes).to_string(), *message);
    }
}

/// A version 1.0 file of `(1.0, 2.0, …)` in the given dtype.
fn counting(descr: &str, fortran: bool, shape: &str, count: usize) -> Vec<u8> {
    let data: Vec<u8> = match descr {
        "<f8" => f64s(&(1..=count).map(|v| v as f64).collect::<Vec<_>>()),
        _ => f32s(&(1..=count).map(|v| v as f32).collect::<Vec<_>>()),
    };
    npy((1, 0), &header(descr, fortran, shape), &data)
}

const FLOATS: &str = "quantscope reads float16, float32 and float64 arrays \
                      ('<f2', '<f4', '<f8', or big-endian '>f2', '>f4', '>f8')";

#[test]
fn npy_preamble_and_dtype_errors() {
    assert_npy_messages(&[
        (
            b"GIF89a not numpy".to_vec(),
            "not a .npy file: it does not start with the bytes \\x93NUMPY",
        ),
        (
            Vec::new(),
            "not a .npy file: it does not start with the bytes \\x93NUMPY",
        ),
        (
            b"\x93NUM".to_vec(),
            "truncated .npy file: the header needs 10 bytes but the file has only 4",
        ),
        (
            b"\x93NUMPY\x01\x00\x40".to_vec(),
            "truncated .npy file: the header needs 10 bytes but the file has only 9",
        ),
        (
            npy((1, 0), "{'descr'", &[])[..12].to_vec(),
            "truncated .npy file: the header needs 18 bytes but the file has only 12",
        ),
        (
            npy((4, 0), "{}", &[]),
            "unsupported .npy format version 4.0 (supported: 1.0, 2.0, 3.0)",
        ),
        (
            npy((1, 1), "{}", &[]),
            "unsupported .npy format version 1.1 (supported: 1.0, 2.0, 3.0)",
        ),
        (
            counting("<i4", false, "(2, 3)", 6),
            &format!("unsupported dtype '<i4' (signed integer): {FLOATS}"),
        ),
        (
            counting("|u1", false, "(24,)", 6),
            &format!("unsupported dtype '|u1' (unsigned integer): {FLOATS}"),
        ),
    ]);
}

#[test]
fn npy_shape_and_size_errors() {
    let six = |shape: &str| counting("<f4", false, shape, 6);
    assert_npy_messages(&[
        (
            six("()"),
            "the array is 0-dimensional (a single number); a matrix needs at least one axis",
        ),
        (
            six("(0, 4)"),
            "the array is empty: shape (0, 4) has no elements",
        ),
        (
            six("(3, 0, 2)"),
            "the array is empty: shape (3, 0, 2) has no elements",
        ),
        (
            six("(0, 1099511627776, 1099511627776)"),
            "the array is empty: shape (0, 1099511627776, 1099511627776) has no elements",
        ),
        (
            six("(2, 4)"),
            "the data is shorter than the shape says: shape (2, 4) needs 32 bytes but the file has 24",
        ),
        (
            six("(5,)"),
            "4 extra bytes after the data: shape (5,) needs 20 bytes but the file has 24",
        ),
        (
            six("(1099511627776, 1099511627776)"),
            "absurd shape (1099511627776, 1099511627776): its size does not fit in memory addresses",
        ),
        (
            six("(4611686018427387904,)"),
            "absurd shape (4611686018427387904,): its size does not fit in memory addresses",
        ),
        // Plausible alone, but far more than the file holds: refused before allocating 4 TB.
        (
            six("(1099511627776,)"),
            "the data is shorter than the shape says: shape (1099511627776,) needs 4398046511104 bytes but the file has 24",
        ),
    ]);
}

#[test]
fn npy_non_finite_values_are_located() {
    let with = |descr: &str, fortran: bool, shape: &str, at: usize, bad: f64| {
        let mut values: Vec<f64> = (1..=8).map(f64::from).collect();
        values[at] = bad;
        let data = if descr == "<f8" {
            f64s(&values)
        } else {
            f32s(&values.iter().map(|&v| v as f32).collect::<Vec<_>>())
        };
        npy((1, 0), &header(descr, fortran, shape), &data)
    };
    let at = "(0-based, trailing axes flattened into columns) is";
    assert_npy_messages(&[
        (
            with("<f4", false, "(2, 4)", 6, f64::NAN),
            &format!("row 1, column 2 {at} NaN: only finite values are allowed"),
        ),
        (
            with("<f8", false, "(8,)", 1, f64::NEG_INFINITY),
            &format!("row 0, column 1 {at} -inf: only finite values are allowed"),
        ),
        (
            with("<f8", false, "(2, 4)", 1, -1e300),
            &format!("row 0, column 1 {at} -1e300, out of range for f32"),
        ),
        // Column-major: element 4 of the file is logical (0, 2) of a (2, 4) array.
        (
            with("<f4", true, "(2, 4)", 4, f64::NAN),
            &format!("row 0, column 2 {at} NaN: only finite values are allowed"),
        ),
        (
            with("<f8", true, "(2, 4)", 4, 1e300),
            &format!("row 0, column 2 {at} 1e300, out of range for f32"),
        ),
        // Column-major (2, 2, 2): element 3 is logical (1, 1, 0), i.e. row 1, column 2.
        (
            with("<f8", true, "(2, 2, 2)", 3, 1e300),
            &format!("row 1, column 2 {at} 1e300, out of range for f32"),
        ),
        (
            with("<f8", false, "(2, 2, 2)", 3, 1e300),
            &format!("row 0, column 3 {at} 1e300, out of range for f32"),
        ),
    ]);
}

#[test]
fn npy_unsupported_dtypes_are_named() {
    for (descr, name) in [
        ("<c8", "complex"),
        ("|b1", "boolean"),
        ("<V2", "bfloat16"),
        ("=f4", "'=f4'"),
        ("<U3", "string"),
        // Not ASCII: named as written.
        ("é", "'é'"),
    ] {
        let e = npy_err(&npy((1, 0), &header(descr, false, "(1,)"), &[0; 12]));
        assert!(
            matches!(&e, NpyError::UnsupportedDtype { descr: d } if d == descr),
            "{e:?}"
        );
        assert!(e.to_string().contains(name), "{e}");
    }
    let structured =
        "{'descr': [('a', '<f4'), ('b', '<f4')], 'fortran_order': False, 'shape': (1,), }";
    let e = npy_err(&npy((1, 0), structured, &[0; 8]));
    assert_eq!(
        e.to_string().split(':').next(),
        Some("unsupported dtype '[('a', '<f4'), ('b', '<f4')]' (structured)")
    );
}

#[test]
fn npy_invalid_headers_say_why() {
    let deep = format!(
        "{{'descr': '<f4', 'fortran_order': False, 'shape': {}1{} }}",
        "(".repeat(100),
        ")".repeat(100)
    );
    let cases = [
        (
            "not a dict",
            "it is not a Python literal: 'n' at offset 0 is unexpected",
        ),
        (
            "{'descr': '<f4', 'fortran_order': False}",
            "missing key 'shape'",
        ),
        (
            "{'descr': '<f4', 'shape': (1,)}",
            "missing key 'fortran_order'",
        ),
        (
            "{'fortran_order': False, 'shape': (1,)}",
            "missing key 'descr'",
        ),
        (
            "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}",
            "key 'descr' appears twice",
        ),
        (
            "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}",
            "unexpected key 'x' (expected 'descr', 'fortran_order', 'shape')",
        ),
        (
            "{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}",
            "it is not a Python literal: '\\'' at offset 16 is unexpected",
        ),
        (
            "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)",
            "it is not a Python literal: ')' at offset 53 is unexpected",
        ),
        (
            "{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}",
            "'fortran_order' must be True or False",
        ),
        (
            "{'descr': '<f4', 'fortran_order': False, 'shape': 1}",
            "'shape' must be a tuple",
        ),
        (
            "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}",
            "the shape (-1,) must hold non-negative integers",
        ),
        (
            "{'descr': '<f4', 'fortran_order': False, 'shape': ('a',)}",
            "the shape ('a',) must hold non-negative integers",
        ),
        (
            "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,)}",
            "the shape (99999999999999999999999,) has a dimension too large for this machine",
        ),
        (
            "{'descr': 1, 'fortran_order': False, 'shape': (1,)}",
            "'descr' must be a string or a list",
        ),
        (
            "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x",
            "it is not a Python literal: 'x' at offset 56 is unexpected",
        ),
        ("{1: 2}", "dict keys must be strings"),
        (
            "{'descr': '<f4",
            "it is not a Python literal: the header ends too early",
        ),
        (&deep, "literals nested too deeply"),
    ];
    for (text, why) in cases {
        let e = npy_err(&npy((1, 0), text, &[0; 4]));
        assert_eq!(e, NpyError::InvalidHeader(why.to_owned()), "{text}");
        assert_eq!(
            e.to_string(),
            format!("the .npy header is not valid: {why}")
        );
    }
    let mut latin1 = npy(
        (1, 0),
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}\u{e9}",
        &[0; 4],
    );
    latin1.remove(latin1.len() - 6); // drop the first byte of the two-byte é, keep the header length
    latin1[8] -= 1;
    assert!(
        npy_err(&latin1)
            .to_string()
            .starts_with("the .npy header is not valid: it is not text")
    );
}

fn valid_npy() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::sample::select(vec!["<f2", "<f4", ">f4", "<f8"]),
        any::<bool>(),
        1..4_usize,
        1..4_usize,
    )
        .prop_map(|(descr, fortran, r, c)| {
            let size = match descr {
                "<f2" => 2,
                "<f8" => 8,
                _ => 4,
            };
            let data: Vec<u8> = (0..r * c * size).map(|i| (i % 7) as u8).collect();
            npy(
                (1, 0),
                &header(descr, fortran, &format!("({r}, {c})")),
                &data,
            )
        })
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let _ = parse_npy(&bytes);
        let mut prefixed = b"\x93NUMPY\x01\x00".to_vec();
        prefixed.extend(&bytes);
        let _ = parse_npy(&prefixed);
    }

    #[test]
    fn arbitrary_headers_never_panic(text in "[{}()\\[\\]':, a-z_<>0-9TrueFalsL\"\\n-]{0,120}", data in prop::collection::vec(any::<u8>(), 0..64)) {
        for version in [(1, 0), (3, 0)] {
            let _ = parse_npy(&npy(version, &text, &data));
        }
    }

    #[test]
    fn mutated_valid_files_never_panic(
        file in valid_npy(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0..3_u8), 1..6),
    ) {
        let parsed = parse_npy(&file);
        prop_assert!(parsed.is_ok(), "{:?}", parsed);
        let mut bytes = file;
        for (at, byte, op) in edits {
            let i = at.index(bytes.len().max(1));
            match op {
                0 if i < bytes.len() => bytes[i] = byte,
                1 => bytes.insert(i.min(bytes.len()), byte),
                _ => bytes.truncate(i),
            }
            let _ = parse_npy(&bytes);
        }
    }
}

// ---------------------------------------------------------------- load

#[test]
fn load_path_dispatches_on_the_extension() {
    let npy_bytes = npy(
        (1, 0),
        &header("<f4", false, "(1, 2)"),
        &f32s(&[1.5, -0.25]),
    );
    for name in ["w.txt", "w.csv", "w.TSV", "w", "w.weights"] {
        let path = temp_file(name, b"a: 1.5, -0.25\n");
        let m = load_path(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            (rows(&m), m.labels()[0].as_deref()),
            (vec![vec![1.5, -0.25]], Some("a")),
            "{name}"
        );
    }
    for name in ["w.npy", "w.NPY"] {
        let m = load_path(&temp_file(name, &npy_bytes)).unwrap();
        assert_eq!(rows(&m), [[1.5, -0.25]], "{name}");
    }
    // A .npy file read as text, or text read as .npy, fails with the format's own error.
    assert!(matches!(
        load_path(&temp_file("w.txt", &npy_bytes)),
        Err(LoadError::NotUtf8 { offset: 0, .. })
    ));
    assert!(matches!(
        load_path(&temp_file("w.npy", b"1 2")),
        Err(LoadError::Npy {
            source: NpyError::BadMagic,
            ..
        })
    ));
}

#[test]
fn load_errors_name_the_file() {
    let path = temp_file("bad.csv", b"1, 2\n3, x\n");
    assert_eq!(
        load_path(&path).unwrap_err().to_string(),
        format!("{}: line 2, col 4: \"x\" is not a number", path.display())
    );

    let path = temp_file("latin1.txt", b"1 2 \xe9");
    assert_eq!(
        load_path(&path).unwrap_err().to_string(),
        format!(
            "{} is not UTF-8 text: invalid byte at offset 4",
            path.display()
        )
    );

    let path = temp_file(
        "short.npy",
        &npy((1, 0), &header("<f4", false, "(3,)"), &[0; 8]),
    );
    assert_eq!(
        load_path(&path).unwrap_err().to_string(),
        format!(
            "{}: the data is shorter than the shape says: shape (3,) needs 12 bytes but the file has 8",
            path.display()
        )
    );

    let missing = temp_file("x.txt", b"").with_file_name("does-not-exist.npy");
    let e = load_path(&missing).unwrap_err();
    assert!(
        matches!(&e, LoadError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .starts_with(&format!("cannot read {}: ", missing.display())),
        "{e}"
    );

    let e = load_path(&temp_file("m.SafeTensors", b"{}")).unwrap_err();
    assert!(
        e.to_string().ends_with(
            "m.SafeTensors: the file is 2 bytes long, too short for a safetensors file (it starts with an 8-byte header length)"
        ),
        "{e}"
    );
}

struct FailingReader;

impl std::io::Read for FailingReader {
    fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
        Err(std::io::Error::other("pipe closed"))
    }
}

#[test]
fn load_reader_reads_text() {
    let m = load_reader("<stdin>", "1 2\n3 4\n".as_bytes()).unwrap();
    assert_eq!(rows(&m), [[1.0, 2.0], [3.0, 4.0]]);
    assert_eq!(
        load_reader("<stdin>", &b"1 2\n3"[..])
            .unwrap_err()
            .to_string(),
        "<stdin>: line 2, col 1: channel 2 has 1 value but channel 1 has 2"
    );
    assert_eq!(
        load_reader("<stdin>", &b"\xff"[..])
            .unwrap_err()
            .to_string(),
        "<stdin> is not UTF-8 text: invalid byte at offset 0"
    );
    assert_eq!(
        load_reader("<stdin>", FailingReader)
            .unwrap_err()
            .to_string(),
        "cannot read <stdin>: pipe closed"
    );
}
