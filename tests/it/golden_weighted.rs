//! Quantizing with an importance vector, exact to llama.cpp: every llama.cpp type's bytes
//! against `libgguf.quantize_rows(x, type, imatrix=a)` (ggml's own C without floating-point
//! contraction), fixtures in tests/golden/weighted/ written by `generate_weighted.py`.

use quantscope::core::format::{Encoded, Format, KQuant, Legacy};

use crate::common::golden::{self, XorShift, bulk_matrix, f32_rows, fnv1a, hex};

/// The format fixtures' input matrices by name (rows of f32).
fn inputs() -> Vec<(String, Vec<Vec<f32>>)> {
    let mut out = Vec::new();
    for f in ["ggml_q4_K.json", "legacy_q4_0.json"] {
        for case in golden::json("formats", f)["cases"].as_array().unwrap() {
            let rows = f32_rows(&case["input"]);
            out.push((case["matrix"].as_str().unwrap().to_owned(), rows));
        }
    }
    out
}

/// The generator's importance vector `kind` for `n` columns.
fn importance(kind: &str, n: usize) -> Vec<f32> {
    let mut g = XorShift(0x1337_0000 + n as u64);
    (0..n)
        .map(|c| {
            let u = g.uniform();
            let mut v = (0.25 + u).powi(2);
            if c % 37 == 5 {
                v *= 400.0;
            }
            if kind == "zeros" && (c % 5 == 0 || c < 32) {
                v = 0.0;
            }
            if kind == "dominant" {
                v = if c == 7 {
                    1e4
                } else if c == n - 3 {
                    1e3
                } else {
                    1.0
                };
            }
            if kind == "tiny" {
                v *= 1e-30;
            }
            v as f32
        })
        .collect()
}

/// Row `x` encoded with `a`, as ggml's bytes; its reconstruction checked against the
/// decoder of those bytes.
fn encode(f: Format, x: &[f32], a: &[f32]) -> Vec<u8> {
    let mut enc = Encoded::default();
    let mut values = vec![0.0f32; x.len()];
    f.encode_row_weighted(x, Some(a), &mut enc, &mut values)
        .unwrap();
    let bytes = f.pack(&enc);
    let back = f.unpack(&bytes, x.len()).unwrap().decode();
    let bits = |v: &[f32]| v.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&values), bits(&back), "{}: values", f.name());
    bytes
}

const TYPES: [(&str, Format); 10] = [
    ("Q2_K", Format::K(KQuant::Q2K)),
    ("Q3_K", Format::K(KQuant::Q3K)),
    ("Q4_K", Format::K(KQuant::Q4K)),
    ("Q5_K", Format::K(KQuant::Q5K)),
    ("Q6_K", Format::K(KQuant::Q6K)),
    ("Q4_0", Format::Legacy(Legacy::Q4_0)),
    ("Q4_1", Format::Legacy(Legacy::Q4_1)),
    ("Q5_0", Format::Legacy(Legacy::Q5_0)),
    ("Q5_1", Format::Legacy(Legacy::Q5_1)),
    ("Q8_0", Format::Legacy(Legacy::Q8_0)),
];

fn check_type(name: &str, f: Format) {
    let fx = golden::json("weighted", &format!("{}.json", name.to_lowercase()));
    assert!(fx["library"].as_str().unwrap().starts_with("libgguf 0.2.2"));
    let mats = inputs();
    let mut checked = 0;
    for case in fx["cases"].as_array().unwrap() {
        let m = case["matrix"].as_str().unwrap();
        let kind = case["importance"].as_str().unwrap();
        let rows = &mats.iter().find(|(n, _)| n == m).unwrap().1;
        let a = importance(kind, rows[0].len());
        for (r, (x, want)) in rows
            .iter()
            .zip(case["bytes"].as_array().unwrap())
            .enumerate()
        {
            let got = if f == Format::Legacy(Legacy::Q8_0) {
                // ggml's quantize_q8_0 ignores the importance: the q8_0 preset, as without.
                q8_0_preset(x)
            } else {
                hex(&encode(f, x, &a))
            };
            assert_eq!(got, want.as_str().unwrap(), "{name} {m} {kind} row {r}");
            checked += 1;
        }
    }
    assert!(checked >= 26, "{name}: {checked} rows");
}

/// A row's bytes under the q8_0 preset: its codes and f16 scales packed.
fn q8_0_preset(x: &[f32]) -> String {
    use quantscope::core::format::LegacyBlock;
    use quantscope::core::presets::{PresetOptions, preset};
    let m = quantscope::core::Matrix::from_rows(&[x]).unwrap();
    let c = preset("q8_0", PresetOptions::default()).unwrap();
    let r = quantscope::core::analyse_with(&m, &c, quantscope::core::Options::ONE_CONFIG).unwrap();
    let mut out = Vec::new();
    for (b, chunk) in (0..x.len()).collect::<Vec<_>>().chunks(32).enumerate() {
        let codes: [u8; 32] = std::array::from_fn(|i| r.code(0, chunk[i]) as i8 as u8);
        let block = LegacyBlock {
            d: half::f16::from_f32(r.blocks.at(b).scale).to_bits(),
            m: None,
        };
        let mut bytes = [0u8; 34];
        Legacy::Q8_0.pack(&block, &codes, &mut bytes);
        out.extend(bytes);
    }
    hex(&out)
}

#[test]
fn q2_k_with_importance_equals_libgguf() {
    check_type("Q2_K", Format::K(KQuant::Q2K));
}

#[test]
fn q3_k_with_importance_equals_libgguf() {
    check_type("Q3_K", Format::K(KQuant::Q3K));
}

#[test]
fn q4_k_with_importance_equals_libgguf() {
    check_type("Q4_K", Format::K(KQuant::Q4K));
}

#[test]
fn q5_k_with_importance_equals_libgguf() {
    check_type("Q5_K", Format::K(KQuant::Q5K));
}

#[test]
fn q6_k_with_importance_equals_libgguf() {
    check_type("Q6_K", Format::K(KQuant::Q6K));
}

#[test]
fn legacy_types_with_importance_equal_libgguf() {
    for (name, f) in &TYPES[5..9] {
        check_type(name, *f);
    }
}

#[test]
fn q8_0_with_importance_is_the_preset() {
    check_type("Q8_0", Format::Legacy(Legacy::Q8_0));
}

#[test]
fn bulk_hashes_with_importance() {
    let fx = golden::json("weighted", "bulk.json");
    let (rows, cols) = (64, 1024);
    let x = bulk_matrix(rows, cols);
    let bytes_of = |v: &[f32]| v.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>();
    assert_eq!(fnv1a(bytes_of(&x)), fx["input"].as_str().unwrap());
    let a = importance("loud", cols);
    assert_eq!(fnv1a(bytes_of(&a)), fx["importance"].as_str().unwrap());
    for (name, f) in &TYPES[..9] {
        let mut all = Vec::new();
        for row in x.chunks(cols) {
            all.extend(encode(*f, row, &a));
        }
        assert_eq!(fnv1a(all), fx["bytes"][name].as_str().unwrap(), "{name}");
    }
}

#[test]
fn formats_whose_reference_reads_no_importance_ignore_it() {
    let x: Vec<f32> = (0..256).map(|i| ((i * 7) as f32 * 0.13).sin()).collect();
    let a = importance("dominant", 256);
    for f in [Format::Mxfp4, Format::Nvfp4, Format::Nf4] {
        assert!(!f.reads_importance());
        let mut with = Encoded::default();
        let mut v = vec![0.0; 256];
        f.encode_row_weighted(&x, Some(&a), &mut with, &mut v)
            .unwrap();
        assert_eq!(with, f.encode_row(&x).unwrap(), "{}", f.name());
    }
    // Legacy types encode only with importance (the presets encode them without).
    let e = Format::Legacy(Legacy::Q4_0).encode_row(&x).unwrap_err();
    assert_eq!(e.to_string(), "Q4_0 is decode-only here");
    let mut enc = Encoded::default();
    let e = Format::Q4K
        .encode_row_weighted(&x, Some(&a[..128]), &mut enc, &mut [0.0; 256])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "importance holds 128 values, the row has 256"
    );
}

#[test]
fn every_fixture_file_is_read_by_a_test() {
    let names = golden::file_names("weighted");
    let mut want: Vec<String> = TYPES
        .iter()
        .map(|(n, _)| format!("{}.json", n.to_lowercase()))
        .chain(["bulk.json".to_owned()])
        .collect();
    want.sort();
    assert_eq!(names, want);
}
