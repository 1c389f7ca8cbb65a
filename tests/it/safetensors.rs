//! The safetensors reader on files written byte by byte here: valid files of every loadable
//! dtype, a conv weight, and every malformed case (each must give its own error, never a
//! panic), plus properties over arbitrary and mutated bytes.

use std::path::Path;

use half::{bf16, f16};
use proptest::prelude::*;
use quantscope::io::safetensors::{
    Dtype, HeaderError, MAX_HEADER_LEN, Safetensors, SafetensorsError, list_tensors, load_tensor,
    parse_header,
};
use quantscope::io::{LoadError, load_path, load_path_tensor};

use crate::common::files;

use files::{
    f32_bytes as f32s, safetensors_bytes_with, safetensors_raw as raw_file, temp_file as temp,
};

/// One tensor to write: name, dtype name, shape, raw little-endian bytes.
struct T<'a> {
    name: &'a str,
    dtype: &'a str,
    shape: &'a [u64],
    data: Vec<u8>,
}

/// A safetensors file: the header is written in the order given, data back to back, then
/// a `__metadata__` entry.
fn file_bytes(tensors: &[T<'_>]) -> Vec<u8> {
    let tensors: Vec<(&str, &str, &[u64], Vec<u8>)> = tensors
        .iter()
        .map(|t| (t.name, t.dtype, t.shape, t.data.clone()))
        .collect();
    safetensors_bytes_with(&tensors, &["\"__metadata__\":{\"format\":\"pt\"}"])
}

/// Four tensors of four dtypes, written in an order that is not by name.
fn mixed() -> Vec<u8> {
    file_bytes(&[
        T {
            name: "w.f32",
            dtype: "F32",
            shape: &[2, 3],
            data: f32s(&[1.0, -2.0, 3.5, 0.25, -0.125, 6.0]),
        },
        T {
            name: "a.f16",
            dtype: "F16",
            shape: &[2, 2],
            data: [0.5_f32, -1.5, 2.0, 65504.0]
                .iter()
                .flat_map(|&x| f16::from_f32(x).to_le_bytes())
                .collect(),
        },
        T {
            name: "b.bf16",
            dtype: "BF16",
            shape: &[3],
            data: [1.0_f32, -3.0, 0.007_812_5]
                .iter()
                .flat_map(|&x| bf16::from_f32(x).to_le_bytes())
                .collect(),
        },
        T {
            name: "ids",
            dtype: "I64",
            shape: &[1, 2],
            data: [7_i64, 9].iter().flat_map(|x| x.to_le_bytes()).collect(),
        },
    ])
}

#[test]
fn lists_every_tensor_sorted_by_name_with_dtype_shape_and_bytes() {
    let path = temp("mixed.safetensors", &mixed());
    let list = list_tensors(&path).unwrap();
    let got: Vec<(&str, Dtype, Vec<usize>, u64)> = list
        .iter()
        .map(|t| (t.name.as_str(), t.dtype, t.shape.clone(), t.bytes()))
        .collect();
    assert_eq!(
        got,
        [
            ("a.f16", Dtype::F16, vec![2, 2], 8),
            ("b.bf16", Dtype::BF16, vec![3], 6),
            ("ids", Dtype::I64, vec![1, 2], 16),
            ("w.f32", Dtype::F32, vec![2, 3], 24),
        ]
    );
    let file = Safetensors::open(&path).unwrap();
    assert_eq!(file.header().metadata["format"], "pt");
    assert_eq!(file.header().data_len, 54);
}

/// Values in a 16-bit tensor long enough to span several runs of the direct read (2^18
/// values each), ending inside a run of the widening (1024 values).
const LONG_16: usize = (1 << 19) + 1_000_003;

/// The 16-bit values `is_finite` keeps, repeated and cut to [`LONG_16`], written as a
/// one-dimensional tensor of `dtype` and loaded: each value loads as `widen` widens it, in
/// its place. Returns how many distinct finite values there are.
fn every_finite_16_bit_loads(
    dtype: &str,
    is_finite: fn(u16) -> bool,
    widen: fn(u16) -> f32,
) -> usize {
    let finite: Vec<u16> = (0..=0xffff_u16).filter(|&b| is_finite(b)).collect();
    let n = LONG_16;
    let bits: Vec<u16> = finite.iter().copied().cycle().take(n).collect();
    let bytes: Vec<u8> = bits.iter().flat_map(|b| b.to_le_bytes()).collect();
    let path = temp(
        &format!("every_{dtype}.safetensors"),
        &file_bytes(&[T {
            name: "h",
            dtype,
            shape: &[n as u64],
            data: bytes,
        }]),
    );
    let m = load_tensor(&path, "h").unwrap();
    assert_eq!(m.shape(), (1, n));
    let want: Vec<u32> = bits.iter().map(|&b| widen(b).to_bits()).collect();
    let got: Vec<u32> = m.values().iter().map(|x| x.to_bits()).collect();
    assert!(got == want, "some {dtype} loaded as another value");
    finite.len()
}

/// Every finite `f16` (subnormals and both signs), 63 488 values.
#[test]
fn every_finite_f16_loads_as_widened_one_value_at_a_time() {
    every_finite_16_bit_loads(
        "F16",
        |b| f16::from_bits(b).is_finite(),
        |b| f16::from_bits(b).to_f32(),
    );
}

/// Every finite `bf16` (subnormals and both signs), 65 280 values.
#[test]
fn every_finite_bf16_loads_as_widened_one_value_at_a_time() {
    let count = every_finite_16_bit_loads(
        "BF16",
        |b| bf16::from_bits(b).is_finite(),
        |b| bf16::from_bits(b).to_f32(),
    );
    assert_eq!(count, 65_280);
}

#[test]
fn loads_f32_f16_and_bf16_and_refuses_integers_by_dtype() {
    let path = temp("mixed2.safetensors", &mixed());
    let m = load_tensor(&path, "w.f32").unwrap();
    assert_eq!(m.shape(), (2, 3));
    assert_eq!(
        m.values().iter().copied().collect::<Vec<_>>(),
        [1.0, -2.0, 3.5, 0.25, -0.125, 6.0]
    );
    let m = load_tensor(&path, "a.f16").unwrap();
    assert_eq!(
        m.values().iter().copied().collect::<Vec<_>>(),
        [0.5, -1.5, 2.0, 65504.0]
    );
    let m = load_tensor(&path, "b.bf16").unwrap();
    assert_eq!(m.shape(), (1, 3), "1-D is one channel");
    assert_eq!(
        m.values().iter().copied().collect::<Vec<_>>(),
        [1.0, -3.0, 0.007_812_5]
    );
    let e = load_tensor(&path, "ids").unwrap_err();
    assert!(
        matches!(
            e,
            SafetensorsError::UnsupportedDtype {
                dtype: Dtype::I64,
                ..
            }
        ),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(msg.starts_with(&path.display().to_string()), "{msg}");
    assert!(msg.contains("\"ids\" is I64"), "{msg}");
}

#[test]
fn a_conv_weight_flattens_its_trailing_axes_in_c_order() {
    let values: Vec<f32> = (0..2 * 3 * 2 * 2).map(|i| i as f32 * 0.5 - 3.0).collect();
    let bytes = file_bytes(&[T {
        name: "conv.weight",
        dtype: "F32",
        shape: &[2, 3, 2, 2],
        data: f32s(&values),
    }]);
    let path = temp("conv.safetensors", &bytes);
    let m = load_tensor(&path, "conv.weight").unwrap();
    assert_eq!(m.shape(), (2, 12));
    assert_eq!(m.values().row(1).to_vec(), values[12..].to_vec());
    // The only floating tensor: load_path picks it without a name.
    assert_eq!(load_path(&path).unwrap(), m);
}

#[test]
fn f64_loads_and_values_beyond_f32_or_not_finite_are_refused_with_their_place() {
    let data: Vec<u8> = [1.5_f64, -2.25, 1e300, 4.0]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let path = temp(
        "f64.safetensors",
        &file_bytes(&[
            T {
                name: "ok",
                dtype: "F64",
                shape: &[1, 2],
                data: data[..16].to_vec(),
            },
            T {
                name: "big",
                dtype: "F64",
                shape: &[2, 1],
                data: data[16..].to_vec(),
            },
            T {
                name: "nan",
                dtype: "F32",
                shape: &[2, 2],
                data: f32s(&[1.0, 2.0, 3.0, f32::NAN]),
            },
        ]),
    );
    let m = load_tensor(&path, "ok").unwrap();
    assert_eq!(m.values().iter().copied().collect::<Vec<_>>(), [1.5, -2.25]);
    let e = load_tensor(&path, "big").unwrap_err();
    assert!(
        matches!(e, SafetensorsError::NotFinite { row: 0, col: 0, value, .. } if value == 1e300),
        "{e:?}"
    );
    let e = load_tensor(&path, "nan").unwrap_err();
    assert!(
        matches!(e, SafetensorsError::NotFinite { row: 1, col: 1, .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("\"nan\", row 1, column 1"), "{e}");
}

#[test]
fn scalars_empty_tensors_and_unknown_names_are_refused() {
    let path = temp(
        "odd.safetensors",
        &file_bytes(&[
            T {
                name: "scalar",
                dtype: "F32",
                shape: &[],
                data: f32s(&[1.0]),
            },
            T {
                name: "empty",
                dtype: "F32",
                shape: &[0, 4],
                data: vec![],
            },
            T {
                name: "layer.weight",
                dtype: "F32",
                shape: &[1, 1],
                data: f32s(&[1.0]),
            },
        ]),
    );
    assert!(matches!(
        load_tensor(&path, "scalar"),
        Err(SafetensorsError::ZeroDimensional { .. })
    ));
    assert!(matches!(
        load_tensor(&path, "empty"),
        Err(SafetensorsError::Empty { .. })
    ));
    let e = load_tensor(&path, "weight").unwrap_err();
    assert!(
        e.to_string()
            .ends_with("has no tensor named \"weight\"; did you mean \"layer.weight\"?"),
        "{e}"
    );
    let e = load_tensor(&path, "zzz").unwrap_err();
    assert!(e.to_string().contains("it has 3 tensors"), "{e}");
}

#[test]
fn load_path_wants_a_name_when_several_tensors_could_load() {
    let path = temp("several.safetensors", &mixed());
    let e = load_path(&path).unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(
            &e,
            LoadError::Safetensors(SafetensorsError::Ambiguous { count: 3, .. })
        ),
        "{e:?}"
    );
    assert!(msg.contains("pass --tensor NAME"), "{msg}");
    assert!(msg.contains("\"w.f32\""), "matrices are named first: {msg}");
    let m = load_path_tensor(&path, Some("w.f32")).unwrap();
    assert_eq!(m.shape(), (2, 3));

    let ints = temp(
        "ints.safetensors",
        &file_bytes(&[T {
            name: "ids",
            dtype: "I32",
            shape: &[2],
            data: vec![0; 8],
        }]),
    );
    let e = load_path(&ints).unwrap_err();
    assert!(
        matches!(
            &e,
            LoadError::Safetensors(SafetensorsError::NoFloatTensor { count: 1, .. })
        ),
        "{e:?}"
    );

    let text = temp("m.txt", b"1 2\n3 4\n");
    let e = load_path_tensor(&text, Some("x")).unwrap_err();
    assert!(matches!(e, LoadError::NotSafetensors { .. }), "{e:?}");
    assert!(e.to_string().starts_with(&text.display().to_string()));
}

/// A malformed file: its name, its bytes, and a test of the error it must give.
type Case = (&'static str, Vec<u8>, fn(&HeaderError) -> bool);

/// The header error of `bytes`, both from the pure parser and through a real file.
fn header_error(name: &str, bytes: &[u8]) -> HeaderError {
    let pure = parse_header(bytes, bytes.len() as u64).unwrap_err();
    let path = temp(name, bytes);
    match Safetensors::open(&path) {
        Err(SafetensorsError::Header { file, source }) => {
            assert_eq!(source, pure, "file and bytes disagree");
            assert_eq!(file, path.display().to_string());
            let msg = SafetensorsError::Header { file, source }.to_string();
            assert!(msg.starts_with(&path.display().to_string()), "{msg}");
        }
        other => panic!("{name}: expected a header error, got {other:?}"),
    }
    pure
}

fn entry(name: &str, dtype: &str, shape: &str, begin: u64, end: u64) -> String {
    format!(
        "\"{name}\":{{\"dtype\":\"{dtype}\",\"shape\":{shape},\"data_offsets\":[{begin},{end}]}}"
    )
}

#[test]
fn truncated_files_are_refused_at_every_length() {
    let good = mixed();
    for len in 0..good.len() {
        let cut = &good[..len];
        let e = parse_header(cut, len as u64).unwrap_err();
        let ok = match len {
            0..8 => matches!(e, HeaderError::TooShort { .. }),
            _ if len < 8 + u64::from_le_bytes(good[..8].try_into().unwrap()) as usize => {
                matches!(e, HeaderError::HeaderPastEnd { .. })
            }
            _ => matches!(e, HeaderError::OffsetsPastEnd { .. }),
        };
        assert!(ok, "length {len}: {e:?}");
    }
    assert!(matches!(
        header_error("short.safetensors", &good[..5]),
        HeaderError::TooShort { len: 5 }
    ));
    let e = header_error("cut.safetensors", &good[..good.len() - 1]);
    assert!(
        matches!(&e, HeaderError::OffsetsPastEnd { tensor, .. } if tensor == "ids"),
        "{e:?}"
    );
    assert!(e.to_string().contains("truncated"), "{e}");
}

#[test]
fn header_lengths_beyond_the_file_or_the_limit_allocate_nothing() {
    let mut bytes = (1_u64 << 60).to_le_bytes().to_vec();
    bytes.extend_from_slice(b"{}");
    assert!(matches!(
        header_error("huge.safetensors", &bytes),
        HeaderError::HeaderTooLong { header_len } if header_len == 1 << 60
    ));
    let mut bytes = MAX_HEADER_LEN.to_le_bytes().to_vec();
    bytes.extend_from_slice(b"{}");
    assert!(matches!(
        header_error("beyond.safetensors", &bytes),
        HeaderError::HeaderPastEnd {
            header_len: MAX_HEADER_LEN,
            available: 2
        }
    ));
    let mut bytes = u64::MAX.to_le_bytes().to_vec();
    bytes.extend_from_slice(&[b' '; 64]);
    assert!(matches!(
        header_error("max.safetensors", &bytes),
        HeaderError::HeaderTooLong { .. }
    ));
}

#[test]
fn headers_that_are_not_json_or_not_the_right_json_are_refused() {
    let cases: Vec<Case> = vec![
        ("notjson", raw_file("this is not json", &[]), |e| {
            matches!(e, HeaderError::Json(_))
        }),
        ("array", raw_file("[1, 2]", &[]), |e| {
            matches!(e, HeaderError::Json(_))
        }),
        (
            "utf8",
            {
                let mut b = 4_u64.to_le_bytes().to_vec();
                b.extend_from_slice(b"{\xff}\x00");
                b
            },
            |e| matches!(e, HeaderError::NotUtf8 { offset: 1 }),
        ),
        (
            "missing",
            raw_file("{\"x\":{\"dtype\":\"F32\",\"shape\":[1]}}", &[0; 4]),
            |e| matches!(e, HeaderError::Entry { tensor, message } if tensor == "x" && message.contains("data_offsets")),
        ),
        (
            "negative",
            raw_file(&format!("{{{}}}", entry("x", "F32", "[-1]", 0, 4)), &[0; 4]),
            |e| matches!(e, HeaderError::Entry { tensor, .. } if tensor == "x"),
        ),
        (
            "dtype",
            raw_file(&format!("{{{}}}", entry("x", "F31", "[1]", 0, 4)), &[0; 4]),
            |e| matches!(e, HeaderError::UnknownDtype { tensor, dtype } if tensor == "x" && dtype == "F31"),
        ),
        (
            "duplicate",
            raw_file(
                &format!(
                    "{{{},{}}}",
                    entry("x", "F32", "[1]", 0, 4),
                    entry("x", "F32", "[1]", 4, 8)
                ),
                &[0; 8],
            ),
            |e| matches!(e, HeaderError::Duplicate { tensor } if tensor == "x"),
        ),
        ("metadata", raw_file("{\"__metadata__\": [1]}", &[]), |e| {
            matches!(e, HeaderError::Metadata)
        }),
        (
            "rank",
            raw_file(
                &format!("{{{}}}", entry("x", "F32", &format!("{:?}", [1; 65]), 0, 4)),
                &[0; 4],
            ),
            |e| matches!(e, HeaderError::TooManyAxes { rank: 65, .. }),
        ),
    ];
    for (name, bytes, expected) in cases {
        let e = header_error(&format!("{name}.safetensors"), &bytes);
        assert!(expected(&e), "{name}: {e:?}");
    }
}

#[test]
#[expect(clippy::too_many_lines, reason = "one table of cases")]
fn headers_that_lie_about_shapes_and_offsets_are_refused_naming_the_tensor() {
    let e2 = |a: String, b: String, data: usize| raw_file(&format!("{{{a},{b}}}"), &vec![0; data]);
    let cases: Vec<Case> = vec![
        (
            "size",
            raw_file(
                &format!("{{{}}}", entry("w", "F32", "[2, 3]", 0, 20)),
                &[0; 20],
            ),
            |e| matches!(e, HeaderError::SizeMismatch { tensor, expected: 24, found: 20, .. } if tensor == "w"),
        ),
        (
            "f16size",
            raw_file(
                &format!("{{{}}}", entry("w", "F16", "[4]", 0, 16)),
                &[0; 16],
            ),
            |e| {
                matches!(
                    e,
                    HeaderError::SizeMismatch {
                        expected: 8,
                        found: 16,
                        ..
                    }
                )
            },
        ),
        (
            "past",
            raw_file(&format!("{{{}}}", entry("w", "F32", "[2]", 0, 8)), &[0; 4]),
            |e| matches!(e, HeaderError::OffsetsPastEnd { tensor, end: 8, data_len: 4, .. } if tensor == "w"),
        ),
        (
            "far",
            raw_file(
                &format!("{{{}}}", entry("w", "F32", "[2]", u64::MAX - 8, u64::MAX)),
                &[0; 8],
            ),
            |e| matches!(e, HeaderError::OffsetsPastEnd { .. }),
        ),
        (
            "reversed",
            raw_file(&format!("{{{}}}", entry("w", "F32", "[1]", 8, 4)), &[0; 8]),
            |e| matches!(e, HeaderError::OffsetsReversed { tensor, begin: 8, end: 4 } if tensor == "w"),
        ),
        (
            "overlap",
            e2(
                entry("a", "F32", "[2]", 0, 8),
                entry("b", "F32", "[2]", 4, 12),
                12,
            ),
            |e| matches!(e, HeaderError::Overlap { first, second } if first == "a" && second == "b"),
        ),
        (
            "same",
            e2(
                entry("a", "F32", "[2]", 0, 8),
                entry("b", "F32", "[2]", 0, 8),
                8,
            ),
            |e| matches!(e, HeaderError::Overlap { .. }),
        ),
        (
            "hole",
            e2(
                entry("a", "F32", "[1]", 0, 4),
                entry("b", "F32", "[1]", 8, 12),
                12,
            ),
            |e| matches!(e, HeaderError::Hole { begin: 4, end: 8 }),
        ),
        (
            "trailing",
            raw_file(&format!("{{{}}}", entry("w", "F32", "[1]", 0, 4)), &[0; 9]),
            |e| matches!(e, HeaderError::Hole { begin: 4, end: 9 }),
        ),
        (
            "overflow",
            raw_file(
                &format!(
                    "{{{}}}",
                    entry("w", "F32", "[4294967296, 4294967296, 2]", 0, 4)
                ),
                &[0; 4],
            ),
            |e| matches!(e, HeaderError::ShapeOverflow { tensor, .. } if tensor == "w"),
        ),
        (
            "bytes-overflow",
            raw_file(
                &format!("{{{}}}", entry("w", "F64", "[4611686018427387904]", 0, 4)),
                &[0; 4],
            ),
            |e| matches!(e, HeaderError::ShapeOverflow { .. }),
        ),
        (
            "absurd",
            raw_file(
                &format!("{{{}}}", entry("w", "F32", "[1000000000, 100000000]", 0, 4)),
                &[0; 4],
            ),
            |e| {
                matches!(
                    e,
                    HeaderError::SizeMismatch {
                        expected: 400_000_000_000_000_000,
                        ..
                    }
                )
            },
        ),
        (
            "nibbles",
            raw_file(&format!("{{{}}}", entry("w", "F4", "[3]", 0, 2)), &[0; 2]),
            |e| matches!(e, HeaderError::PartialByte { elements: 3, .. }),
        ),
    ];
    for (name, bytes, expected) in cases {
        let e = header_error(&format!("lie-{name}.safetensors"), &bytes);
        assert!(expected(&e), "{name}: {e:?}");
    }
    // The file name and the tensor name are both in the message.
    let path = temp(
        "lie.safetensors",
        &raw_file(
            &format!("{{{}}}", entry("w", "F32", "[2, 3]", 0, 20)),
            &[0; 20],
        ),
    );
    let msg = load_tensor(&path, "w").unwrap_err().to_string();
    assert_eq!(
        msg,
        format!(
            "{}: tensor \"w\": shape [2, 3] of F32 needs 24 bytes, but its data_offsets [0, 20] hold 20",
            path.display()
        )
    );
}

#[test]
fn an_empty_header_and_odd_but_valid_files_parse() {
    let h = parse_header(&raw_file("{}", &[]), 10).unwrap();
    assert!(h.tensors.is_empty());
    // Trailing spaces pad the header; an empty tensor takes no bytes; F4 packs two values.
    let header = format!(
        "{{{},{},{}}}   ",
        entry("e", "F32", "[0, 3]", 0, 0),
        entry("n", "F4", "[4]", 0, 2),
        entry("s", "U8", "[]", 2, 3)
    );
    let h = parse_header(&raw_file(&header, &[0; 3]), 8 + header.len() as u64 + 3).unwrap();
    let names: Vec<&str> = h.tensors.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["e", "n", "s"]);
    assert_eq!(h.tensor("n").unwrap().bytes(), 2);
    assert!(h.tensor("zz").is_none());
}

fn no_panic_on(path: &Path) {
    if let Ok(file) = Safetensors::open(path) {
        let names: Vec<String> = file.tensors().iter().map(|t| t.name.clone()).collect();
        for name in names {
            let _ = file.load(&name);
        }
    }
    let _ = load_path(path);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256),
                                   extra in 0_u64..1 << 40) {
        let _ = parse_header(&bytes, bytes.len() as u64);
        let _ = parse_header(&bytes, bytes.len() as u64 + extra);
        let _ = parse_header(&bytes, 0);
    }

    #[test]
    fn arbitrary_headers_with_a_true_length_never_panic(header in "\\PC{0,120}", data in proptest::collection::vec(any::<u8>(), 0..64)) {
        let bytes = raw_file(&header, &data);
        let _ = parse_header(&bytes, bytes.len() as u64);
    }

    #[test]
    fn mutated_valid_files_never_panic(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
    ) {
        let mut bytes = mixed();
        for (at, value) in edits {
            let i = at.index(bytes.len());
            bytes[i] = value;
        }
        if truncate {
            bytes.truncate(cut.index(bytes.len()));
        }
        let _ = parse_header(&bytes, bytes.len() as u64);
        let path = temp("mutated.safetensors", &bytes);
        no_panic_on(&path);
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
    }

    #[test]
    fn valid_files_round_trip(rows in 1_usize..5, cols in 1_usize..7, seed in any::<u32>()) {
        let values: Vec<f32> = (0..rows * cols)
            .map(|i| ((i as u32).wrapping_mul(2_654_435_761) ^ seed) as f32 / 1e9 - 2.0)
            .collect();
        let shape = [rows as u64, cols as u64];
        let bytes = file_bytes(&[T { name: "w", dtype: "F32", shape: &shape, data: f32s(&values) }]);
        let h = parse_header(&bytes, bytes.len() as u64).unwrap();
        prop_assert_eq!(h.tensors[0].shape.clone(), vec![rows, cols]);
        let path = temp("roundtrip.safetensors", &bytes);
        let m = load_tensor(&path, "w").unwrap();
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
        prop_assert_eq!(m.values().iter().copied().collect::<Vec<_>>(), values);
    }
}

#[test]
fn f32_longer_than_one_read_loads_exactly_and_bad_f16_and_bf16_values_are_placed() {
    // More values than one run of the direct read (1 MiB of f32), with distinct bits each.
    let n: usize = (1 << 18) + 37;
    let xs: Vec<f32> = (0..n)
        .map(|i| f32::from_bits(0x3f80_0000 ^ (i as u32).wrapping_mul(2_654_435_761) >> 9))
        .collect();
    let cols = 2;
    let rows = n.div_ceil(cols) as u64;
    let mut ys = xs.clone();
    ys.resize(rows as usize * cols, -0.0);
    let mut inf16: Vec<u8> = [1.0_f32, 2.0, 3.0, 4.0, 5.0, 6.0]
        .iter()
        .flat_map(|&x| f16::from_f32(x).to_le_bytes())
        .collect();
    inf16[8..10].copy_from_slice(&f16::INFINITY.to_le_bytes());
    let mut nan16: Vec<u8> = [1.0_f32, 2.0, 3.0, 4.0]
        .iter()
        .flat_map(|&x| bf16::from_f32(x).to_le_bytes())
        .collect();
    nan16[6..8].copy_from_slice(&bf16::NAN.to_le_bytes());
    let path = temp(
        "long.safetensors",
        &file_bytes(&[
            T {
                name: "long",
                dtype: "F32",
                shape: &[rows, cols as u64],
                data: f32s(&ys),
            },
            T {
                name: "inf16",
                dtype: "F16",
                shape: &[3, 2],
                data: inf16,
            },
            T {
                name: "nan16",
                dtype: "BF16",
                shape: &[2, 2],
                data: nan16,
            },
        ]),
    );
    let m = load_tensor(&path, "long").unwrap();
    let got: Vec<u32> = m.values().iter().map(|v| v.to_bits()).collect();
    let want: Vec<u32> = ys.iter().map(|v| v.to_bits()).collect();
    assert_eq!(got, want);
    let e = load_tensor(&path, "inf16").unwrap_err();
    assert!(
        matches!(e, SafetensorsError::NotFinite { row: 2, col: 0, value, .. } if value == f64::INFINITY),
        "{e:?}"
    );
    let e = load_tensor(&path, "nan16").unwrap_err();
    assert!(
        matches!(e, SafetensorsError::NotFinite { row: 1, col: 1, .. }),
        "{e:?}"
    );
}
