//! The `.npy` reader (`quantscope::io::parse_npy`): shapes, dtypes and versions, files written
//! by numpy, every error, and properties over arbitrary and mutated bytes.
//!
//! The files in `tests/data/` were written by numpy 2.4 (`numpy.save`, and
//! `numpy.lib.format.write_array(f, a, version=(2, 0))` / `(3, 0)` for the v2/v3 files), from
//! the arrays named in each test below.

use std::path::PathBuf;

use proptest::prelude::*;
use quantscope::io::{NpyError, parse_npy};

use crate::common::core as core_helpers;
use crate::common::files;

use core_helpers::matrix_rows as rows;
use files::{f32_bytes as f32s, npy_bytes as npy, npy_header as header};

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

/// The header's parser backtracks, and each level of nesting multiplies its time (by about
/// three for `{`, which it tries as a dict and then as a set: sixteen of them took minutes),
/// so nesting is refused past eight levels, and braces past two, before it runs.
#[test]
fn npy_header_nesting_is_bounded_before_parsing() {
    let nested = |open: &str, close: &str, n: usize| {
        format!(
            "{{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': {}1{} }}",
            open.repeat(n),
            close.repeat(n)
        )
    };
    let refused = [
        nested("[1, ", "]", 8),
        nested("(1, ", ")", 8),
        format!("{}{}", "{".repeat(16), "}".repeat(16)),
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': {'y': {}}}".to_owned(),
    ];
    for text in &refused {
        let e = npy_err(&npy((1, 0), text, &[0; 4]));
        let why = "literals nested too deeply".to_owned();
        assert_eq!(e, NpyError::InvalidHeader(why), "{text}");
    }
    // At the limits the header is parsed, and checked key by key.
    let unexpected = "unexpected key 'x' (expected 'descr', 'fortran_order', 'shape')".to_owned();
    for text in [
        nested("[1, ", "]", 7),
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': {'y': 1}}".to_owned(),
    ] {
        let e = npy_err(&npy((1, 0), &text, &[0; 4]));
        assert_eq!(e, NpyError::InvalidHeader(unexpected.clone()), "{text}");
    }
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
