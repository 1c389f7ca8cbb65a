//! Hand-made GGUF files that lie: truncated, counts and lengths past the end, unknown types,
//! misaligned or overlapping data. Each must give its own clear error (naming the field),
//! never a panic or a huge allocation; the CLI exits with status 2. Float tensors load
//! bit for bit, and a value that is not finite is placed.

use std::path::PathBuf;

use half::{bf16, f16};
use proptest::prelude::*;
use quantscope::core::Matrix;
use quantscope::io::gguf::{Gguf, GgufError, ParseError, parse_header};
use quantscope::io::stored;

use crate::common::files;
use crate::common::run;

/// A GGUF file written byte by byte.
#[derive(Clone)]
struct File {
    version: u32,
    /// `None`: the true number of tensors.
    tensor_count: Option<u64>,
    /// `None`: the true number of pairs.
    kv_count: Option<u64>,
    /// Key, then the type and value bytes.
    kv: Vec<(Vec<u8>, Vec<u8>)>,
    /// Name, dims, type, offset.
    tensors: Vec<(String, Vec<u64>, u32, u64)>,
    data: Vec<u8>,
}

fn string(s: &[u8]) -> Vec<u8> {
    let mut out = (s.len() as u64).to_le_bytes().to_vec();
    out.extend(s);
    out
}

fn u32v(v: u32) -> Vec<u8> {
    let mut out = 4_u32.to_le_bytes().to_vec();
    out.extend(v.to_le_bytes());
    out
}

impl File {
    /// One F32 tensor "w" of 2 x 8 values and one string key.
    fn good() -> Self {
        Self {
            version: 3,
            tensor_count: None,
            kv_count: None,
            kv: vec![(b"general.name".to_vec(), {
                let mut v = 8_u32.to_le_bytes().to_vec();
                v.extend(string(b"tiny"));
                v
            })],
            tensors: vec![("w".into(), vec![8, 2], 0, 0)],
            data: (0..16).flat_map(|i| (i as f32).to_le_bytes()).collect(),
        }
    }

    fn bytes(&self) -> Vec<u8> {
        let mut out = b"GGUF".to_vec();
        out.extend(self.version.to_le_bytes());
        out.extend(
            self.tensor_count
                .unwrap_or(self.tensors.len() as u64)
                .to_le_bytes(),
        );
        out.extend(self.kv_count.unwrap_or(self.kv.len() as u64).to_le_bytes());
        for (k, v) in &self.kv {
            out.extend(string(k));
            out.extend(v);
        }
        for (name, dims, ty, offset) in &self.tensors {
            out.extend(string(name.as_bytes()));
            out.extend((dims.len() as u32).to_le_bytes());
            for d in dims {
                out.extend(d.to_le_bytes());
            }
            out.extend(ty.to_le_bytes());
            out.extend(offset.to_le_bytes());
        }
        while !out.len().is_multiple_of(32) {
            out.push(0);
        }
        out.extend(&self.data);
        out
    }
}

fn err(f: &File) -> ParseError {
    let b = f.bytes();
    match parse_header(&b, b.len() as u64) {
        Ok(h) => panic!("parsed: {h:?}"),
        Err(e) => e,
    }
}

#[test]
fn the_good_file_parses() {
    let b = File::good().bytes();
    let h = parse_header(&b, b.len() as u64).unwrap();
    assert_eq!(h.tensors[0].shape, [2, 8]);
    assert_eq!(h.data_len, 64);
}

#[test]
fn truncated_files_name_the_field() {
    let b = File::good().bytes();
    let cases: [(usize, &str); 7] = [
        (2, "the magic"),
        (6, "the version"),
        (12, "tensor_count"),
        (30, "kv_count says 1"),
        (38, "metadata key 0"),
        (80, "tensor_count says 1"),
        (95, "the data offset of tensor \"w\""),
    ];
    for (cut, field) in cases {
        let e = parse_header(&b[..cut], cut as u64).unwrap_err();
        assert!(
            matches!(
                &e,
                ParseError::Truncated { .. }
                    | ParseError::StringTooLong { .. }
                    | ParseError::CountTooLarge { .. }
            ),
            "{cut}: {e:?}"
        );
        assert!(e.to_string().contains(field), "{cut}: {e}");
    }
    // The header whole, the data cut short.
    let e = parse_header(&b[..b.len() - 1], b.len() as u64 - 1).unwrap_err();
    assert!(
        matches!(e, ParseError::DataPastEnd { ref tensor, .. } if tensor == "w"),
        "{e:?}"
    );
}

#[test]
fn lying_counts_and_lengths_are_refused_before_allocating() {
    let mut f = File::good();
    f.kv_count = Some(u64::MAX);
    let e = err(&f);
    assert!(
        matches!(&e, ParseError::CountTooLarge { field, count, .. } if field == "kv_count" && *count == u64::MAX),
        "{e:?}"
    );
    let mut f = File::good();
    f.tensor_count = Some(1 << 40);
    assert!(matches!(err(&f), ParseError::CountTooLarge { field, .. } if field == "tensor_count"));
    // A string length of 2^63.
    let mut f = File::good();
    f.kv[0].1 = 8_u32.to_le_bytes().to_vec();
    f.kv[0].1.extend((1_u64 << 63).to_le_bytes());
    let e = err(&f);
    assert!(
        matches!(&e, ParseError::StringTooLong { len, .. } if *len == 1 << 63),
        "{e:?}"
    );
    assert!(
        e.to_string().contains("metadata key \"general.name\""),
        "{e}"
    );
    // A key whose length is 2^63.
    let mut f = File::good();
    f.kv[0].0 = vec![b'k'; 3];
    let mut b = f.bytes();
    b[24..32].copy_from_slice(&(1_u64 << 63).to_le_bytes());
    let e = parse_header(&b, b.len() as u64).unwrap_err();
    assert!(matches!(e, ParseError::StringTooLong { .. }), "{e:?}");
    // An array claiming 2^62 elements.
    let mut f = File::good();
    let mut v = 9_u32.to_le_bytes().to_vec();
    v.extend(5_u32.to_le_bytes());
    v.extend((1_u64 << 62).to_le_bytes());
    f.kv[0].1 = v;
    let e = err(&f);
    assert!(
        matches!(&e, ParseError::CountTooLarge { field, .. } if field.contains("array length")),
        "{e:?}"
    );
}

#[test]
fn unknown_types_are_named() {
    let mut f = File::good();
    f.kv[0].1 = 13_u32.to_le_bytes().to_vec();
    assert_eq!(
        err(&f),
        ParseError::UnknownValueType {
            key: "general.name".into(),
            id: 13
        }
    );
    let mut f = File::good();
    f.tensors[0].2 = 4; // Q4_2, removed from ggml long ago
    let e = err(&f);
    assert_eq!(
        e,
        ParseError::UnknownTensorType {
            tensor: "w".into(),
            id: 4
        }
    );
    let mut f = File::good();
    f.kv[0] = (b"general.alignment".to_vec(), u32v(48));
    assert!(matches!(err(&f), ParseError::BadAlignment { .. }));
    let mut f = File::good();
    f.tensors[0].1 = vec![8, 2, 1, 1, 1];
    assert!(matches!(err(&f), ParseError::BadDimCount { n_dims: 5, .. }));
    let mut f = File::good();
    f.tensors[0].1 = vec![u64::MAX, 4];
    assert!(matches!(err(&f), ParseError::ShapeOverflow { .. }));
    let mut f = File::good();
    f.tensors[0].2 = 2; // Q4_0, but rows of 8 values
    assert!(matches!(
        err(&f),
        ParseError::PartialBlock {
            row_len: 8,
            block_len: 32,
            ..
        }
    ));
}

#[test]
fn misplaced_data_is_refused() {
    let mut f = File::good();
    f.tensors[0].3 = 4;
    assert_eq!(
        err(&f),
        ParseError::Misaligned {
            tensor: "w".into(),
            offset: 4,
            alignment: 32
        }
    );
    let mut f = File::good();
    f.tensors[0].3 = 64;
    assert!(matches!(
        err(&f),
        ParseError::DataPastEnd {
            offset: 64,
            end: 128,
            data_len: 64,
            ..
        }
    ));
    let mut f = File::good();
    f.tensors[0].3 = u64::MAX - 31;
    assert!(matches!(
        err(&f),
        ParseError::DataPastEnd { end: u64::MAX, .. }
    ));
    let mut f = File::good();
    f.tensors.push(("v".into(), vec![8], 0, 32));
    assert_eq!(
        err(&f),
        ParseError::Overlap {
            first: "w".into(),
            second: "v".into()
        }
    );
    let mut f = File::good();
    f.tensors.push(("w".into(), vec![8], 0, 0));
    assert_eq!(err(&f), ParseError::DuplicateTensor { tensor: "w".into() });
    let mut f = File::good();
    f.kv.push(f.kv[0].clone());
    assert!(matches!(err(&f), ParseError::DuplicateKey { .. }));
    let mut b = File::good().bytes();
    b[0] = b'X';
    assert!(matches!(
        parse_header(&b, b.len() as u64),
        Err(ParseError::NotGguf { .. })
    ));
}

/// 16-bit tensors longer than several runs of the direct read (2^18 values) load bit for
/// bit as `half` widens each value; a NaN F16 and an F64 beyond `f32`'s range are refused
/// at their row and column, the F64 with its value as stored.
#[test]
fn float_tensors_load_exactly_and_bad_values_are_placed() {
    let (rows, cols) = (700_usize, 1000_usize);
    let finite = |f: fn(u16) -> bool| -> Vec<u16> {
        (0..=0xffff_u16)
            .filter(|&b| f(b))
            .cycle()
            .take(rows * cols)
            .collect()
    };
    let h = finite(|b| f16::from_bits(b).is_finite());
    let b = finite(|b| bf16::from_bits(b).is_finite());
    let le = |bits: &[u16]| -> Vec<u8> { bits.iter().flat_map(|v| v.to_le_bytes()).collect() };
    let d = [1.0_f64, 2.0, 3.0, 4.0, 5.0, 1e300];
    let nan = [0x3c00_u16, 0x4000, 0x7e00, 0x4200];
    let mut data = le(&h);
    data.extend(le(&b));
    data.extend(d.iter().flat_map(|v| v.to_le_bytes()));
    data.resize(2_800_064, 0);
    data.extend(le(&nan));
    let (r, c) = (rows as u64, cols as u64);
    let f = File {
        tensors: vec![
            ("h".into(), vec![c, r], 1, 0),
            ("b".into(), vec![c, r], 30, 1_400_000),
            ("d".into(), vec![3, 2], 28, 2_800_000),
            ("nan".into(), vec![2, 2], 1, 2_800_064),
        ],
        data,
        ..File::good()
    };
    let file = files::temp_file("floats.gguf", &f.bytes());
    let g = Gguf::open(&file).unwrap();
    let bits = |m: &Matrix| -> Vec<u32> { m.values().iter().map(|v| v.to_bits()).collect() };
    let widened = |stored: &[u16], widen: fn(u16) -> f32| -> Vec<u32> {
        stored.iter().map(|&v| widen(v).to_bits()).collect()
    };
    let m = g.load("h").unwrap();
    assert_eq!(m.shape(), (rows, cols));
    let want = widened(&h, |v| f16::from_bits(v).to_f32());
    assert!(bits(&m) == want, "some f16 loaded as another value");
    let m = g.load("b").unwrap();
    let want = widened(&b, |v| bf16::from_bits(v).to_f32());
    assert!(bits(&m) == want, "some bf16 loaded as another value");
    let e = g.load("d").unwrap_err();
    assert!(
        matches!(e, GgufError::NotFinite { row: 1, col: 2, value, .. } if value == 1e300),
        "{e:?}"
    );
    let e = g.load("nan").unwrap_err();
    assert!(
        matches!(e, GgufError::NotFinite { row: 1, col: 0, value, .. } if value.is_nan()),
        "{e:?}"
    );
}

/// A Q8_0 tensor whose block scale is infinite dequantizes to values that are not finite:
/// refused at the first of them (row 1, column 32: the second row's second block), with
/// the rows before it decoded as stored.
#[test]
fn a_quantized_block_with_an_infinite_scale_is_placed() {
    // Each block: an f16 scale, then 32 int8 codes (value = scale * code).
    let block = |d: f16, q: i8| -> Vec<u8> {
        let mut b = d.to_le_bytes().to_vec();
        b.extend(std::iter::repeat_n(q.to_le_bytes()[0], 32));
        b
    };
    let one = f16::from_f32(0.5);
    let mut data = block(one, 2);
    data.extend(block(one, -4));
    data.extend(block(one, 6));
    data.extend(block(f16::INFINITY, 1));
    let f = File {
        tensors: vec![("q".into(), vec![64, 2], 8, 0)],
        data,
        ..File::good()
    };
    let file = files::temp_file("inf_scale.gguf", &f.bytes());
    let g = Gguf::open(&file).unwrap();
    let e = stored::dequantize(&g, g.info("q").unwrap()).unwrap_err();
    assert!(
        matches!(e, GgufError::NotFinite { row: 1, col: 32, value, .. } if value.is_infinite()),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(msg.contains("\"q\""), "{msg}");
}

/// A Q8_0 tensor of several reads (2.7 MB stored, read about 1 MiB at a time and decoded in
/// parallel) dequantizes to `scale * code` in every place; the same tensor with one infinite
/// block scale in its third read is refused at that block's first value.
#[test]
fn a_quantized_tensor_of_several_reads_dequantizes_in_place() {
    let (rows, cols) = (40_000_usize, 64_usize);
    let scale = |r: usize, b: usize| f16::from_f32(((r * 3 + b) % 1000 + 1) as f32 / 1024.0);
    let code = |r: usize, c: usize| ((r * 7 + c * 5) % 255) as i32 - 127;
    let mut data = Vec::new();
    for r in 0..rows {
        for b in 0..cols / 32 {
            data.extend(scale(r, b).to_le_bytes());
            data.extend((0..32).map(|j| code(r, b * 32 + j).to_le_bytes()[0]));
        }
    }
    let len = data.len() as u64;
    let mut bad = data.clone();
    let at = (35_001 * 2 + 1) * 34;
    bad[at..at + 2].copy_from_slice(&f16::NEG_INFINITY.to_le_bytes());
    data.extend(bad);
    let f = File {
        tensors: vec![
            ("ok".into(), vec![cols as u64, rows as u64], 8, 0),
            ("bad".into(), vec![cols as u64, rows as u64], 8, len),
        ],
        data,
        ..File::good()
    };
    let file = files::temp_file("long_q8.gguf", &f.bytes());
    let g = Gguf::open(&file).unwrap();
    let m = stored::dequantize(&g, g.info("ok").unwrap()).unwrap();
    assert_eq!(m.shape(), (rows, cols));
    let want: Vec<u32> = (0..rows * cols)
        .map(|i| {
            let (r, c) = (i / cols, i % cols);
            (scale(r, c / 32).to_f32() * code(r, c) as f32).to_bits()
        })
        .collect();
    let got: Vec<u32> = m.values().iter().map(|v| v.to_bits()).collect();
    assert!(got == want, "some value dequantized as another");
    let e = stored::dequantize(&g, g.info("bad").unwrap()).unwrap_err();
    assert!(
        matches!(
            e,
            GgufError::NotFinite {
                row: 35_001,
                col: 32,
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn the_cli_refuses_bad_files_with_status_2() {
    let dir = files::temp_dir();
    let mut cases: Vec<(&str, Vec<u8>, &str)> = Vec::new();
    let good = File::good().bytes();
    cases.push(("truncated.gguf", good[..40].to_vec(), "truncated"));
    let mut f = File::good();
    f.kv_count = Some(1 << 50);
    cases.push(("count.gguf", f.bytes(), "kv_count says"));
    let mut f = File::good();
    f.tensors[0].3 = 64;
    cases.push(("offset.gguf", f.bytes(), "past its end"));
    let mut f = File::good();
    f.tensors[0].2 = 99;
    cases.push(("type.gguf", f.bytes(), "has type 99"));
    let mut f = File::good();
    f.tensors[0].3 = 4;
    cases.push((
        "misaligned.gguf",
        f.bytes(),
        "not a multiple of the alignment 32",
    ));
    let mut f = File::good();
    f.kv[0].1 = 8_u32.to_le_bytes().to_vec();
    f.kv[0].1.extend((1_u64 << 63).to_le_bytes());
    cases.push((
        "string.gguf",
        f.bytes(),
        "a string of 9223372036854775808 bytes",
    ));
    for (name, bytes, expected) in cases {
        let path: PathBuf = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        for args in [
            vec!["report", path.to_str().unwrap(), "--list-tensors"],
            vec!["report", path.to_str().unwrap()],
            vec!["scan", path.to_str().unwrap()],
        ] {
            let out = run::quantscope(&args);
            let stderr = run::text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
            assert!(stderr.contains(expected), "{args:?}: {stderr}");
            assert!(stderr.contains(name), "{args:?}: {stderr}");
            assert!(out.stdout.is_empty());
        }
    }
}

proptest! {
    #[test]
    fn mutated_files_never_panic(
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0..3_u8), 1..8),
    ) {
        let mut b = File::good().bytes();
        for (at, byte, op) in edits {
            let i = at.index(b.len().max(1));
            match op {
                0 if i < b.len() => b[i] = byte,
                1 => b.insert(i.min(b.len()), byte),
                _ => b.truncate(i),
            }
            let _ = parse_header(&b, b.len() as u64);
            let _ = parse_header(&b, (b.len() as u64).saturating_mul(3));
        }
    }
}
