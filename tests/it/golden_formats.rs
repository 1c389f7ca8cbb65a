//! Golden fixtures for `core::format`, made by the reference implementations
//! (`tests/golden/generate_formats.py`): ggml's `quantize_row_*_ref` / `dequantize_row_*`
//! (checked there against gguf-py), FP8 formulas cast by ml_dtypes, and bitsandbytes' NF4.
//! Codes, block metadata, ggml's bytes and reconstructions must match bit for bit.

use ndarray::Array2;
use quantscope::core::format::{
    Encoded, Format, Fp8Formula, Fp8Kind, Fp8Layout, Fp8Scheme, KQuant, Legacy, Meta, nf4,
};
use serde_json::Value;

use crate::common::files;
use crate::common::files::f32_bytes;
use crate::common::golden::{self, bulk_matrix, bytes_of, f32s, fnv1a};

/// Every fixture file a test below reads; `every_fixture_file_is_read_by_a_test` checks that
/// tests/golden/formats holds these and no others, so a new file cannot go unchecked.
const FIXTURES: [&str; 16] = [
    "bulk.json",
    "fp8_e4m3.json",
    "fp8_e5m2.json",
    "ggml_mxfp4.json",
    "ggml_nvfp4.json",
    "ggml_q2_K.json",
    "ggml_q3_K.json",
    "ggml_q4_K.json",
    "ggml_q5_K.json",
    "ggml_q6_K.json",
    "legacy_q4_0.json",
    "legacy_q4_1.json",
    "legacy_q5_0.json",
    "legacy_q5_1.json",
    "legacy_q8_0.json",
    "nf4.json",
];

fn fixture(name: &str) -> Value {
    assert!(FIXTURES.contains(&name), "{name} is not in FIXTURES");
    golden::json("formats", name)
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

fn assert_bits(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(
            g.to_bits(),
            w.to_bits(),
            "{what}: value {i}: {g:e} vs {w:e}"
        );
    }
}

fn format_of(name: &str) -> Format {
    match name {
        "Q2_K" => Format::Q2K,
        "Q3_K" => Format::Q3K,
        "Q4_K" => Format::Q4K,
        "Q5_K" => Format::Q5K,
        "Q6_K" => Format::Q6K,
        "MXFP4" => Format::Mxfp4,
        "NVFP4" => Format::Nvfp4,
        "Q4_0" => Format::Legacy(Legacy::Q4_0),
        "Q4_1" => Format::Legacy(Legacy::Q4_1),
        "Q5_0" => Format::Legacy(Legacy::Q5_0),
        "Q5_1" => Format::Legacy(Legacy::Q5_1),
        "Q8_0" => Format::Legacy(Legacy::Q8_0),
        other => panic!("unknown format {other}"),
    }
}

/// The fixture's metadata of one row against an encoded row's.
fn check_meta(e: &Encoded, blocks: &Value, what: &str) {
    let blocks = blocks.as_array().unwrap();
    match &e.meta {
        Meta::K(sbs) => {
            assert_eq!(sbs.len(), blocks.len(), "{what}: blocks");
            for (b, (sb, want)) in sbs.iter().zip(blocks).enumerate() {
                assert_eq!(
                    i64::from(sb.d),
                    want["d"].as_i64().unwrap(),
                    "{what}: block {b} d"
                );
                assert_eq!(
                    i64::from(sb.dmin),
                    want["dmin"].as_i64().unwrap(),
                    "{what}: block {b} dmin"
                );
                let scales: Vec<i64> = sb.scales.iter().map(|&s| i64::from(s)).collect();
                let mins: Vec<i64> = sb.mins.iter().map(|&s| i64::from(s)).collect();
                assert_eq!(scales, ints(&want["scales"]), "{what}: block {b} scales");
                assert_eq!(mins, ints(&want["mins"]), "{what}: block {b} mins");
            }
        }
        Meta::Mxfp4(es) => {
            let want: Vec<i64> = blocks.iter().map(|b| b["e"].as_i64().unwrap()).collect();
            let got: Vec<i64> = es.iter().map(|&e| i64::from(e)).collect();
            assert_eq!(got, want, "{what}: exponents");
        }
        Meta::Nvfp4(ss) => {
            for (b, (s, want)) in ss.iter().zip(blocks).enumerate() {
                let got: Vec<i64> = s.iter().map(|&x| i64::from(x)).collect();
                assert_eq!(got, ints(&want["scales"]), "{what}: block {b} scales");
            }
        }
        Meta::Legacy(ls) => {
            for (b, (l, want)) in ls.iter().zip(blocks).enumerate() {
                assert_eq!(
                    i64::from(l.d),
                    want["d"].as_i64().unwrap(),
                    "{what}: block {b} d"
                );
                assert_eq!(
                    l.m.map(i64::from),
                    want["m"].as_i64(),
                    "{what}: block {b} m"
                );
            }
        }
        Meta::Nf4(_) => panic!("{what}: NF4 has its own fixture"),
        Meta::Packed { .. } => panic!("{what}: the i-quants have their own fixtures"),
        Meta::Mx(_) => panic!("{what}: the MX formats have their own fixtures"),
    }
}

/// Every case of a ggml fixture: encode (unless the type is decode-only here), pack, unpack,
/// decode.
fn check_ggml(name: &str) -> usize {
    let fx = fixture(name);
    let format = format_of(fx["format"].as_str().unwrap());
    let mut rows = 0;
    for case in fx["cases"].as_array().unwrap() {
        let label = case["matrix"].as_str().unwrap();
        for r in 0..case["input"].as_array().unwrap().len() {
            let what = format!("{name} {label} row {r}");
            let x = f32s(&case["input"][r]);
            let bytes = bytes_of(case["bytes"][r].as_str().unwrap());
            let codes: Vec<i64> = ints(&case["codes"][r]);
            let want = f32s(&case["dequantized"][r]);
            let stored = format.unpack(&bytes, x.len()).unwrap();
            let stored_codes: Vec<i64> = stored.codes.iter().map(|&c| i64::from(c)).collect();
            assert_eq!(stored_codes, codes, "{what}: unpacked codes");
            check_meta(&stored, &case["blocks"][r], &what);
            assert_bits(&stored.decode(), &want, &format!("{what}: decoded bytes"));
            if matches!(format, Format::Legacy(_)) {
                rows += 1;
                continue;
            }
            let mut enc = Encoded::default();
            let mut values = vec![0.0f32; x.len()];
            format.encode_row_into(&x, &mut enc, &mut values).unwrap();
            check_meta(&enc, &case["blocks"][r], &what);
            let got: Vec<i64> = enc.codes.iter().map(|&c| i64::from(c)).collect();
            assert_eq!(got, codes, "{what}: codes");
            assert_eq!(format.pack(&enc), bytes, "{what}: bytes");
            assert_bits(&values, &want, &format!("{what}: dequantized"));
            assert_eq!(stored, enc, "{what}: unpack(pack(x))");
            rows += 1;
        }
    }
    assert!(rows > 0, "{name}: no rows");
    rows
}

#[test]
fn ggml_q2_k() {
    check_ggml("ggml_q2_K.json");
}

#[test]
fn ggml_q3_k() {
    check_ggml("ggml_q3_K.json");
}

#[test]
fn ggml_q4_k() {
    check_ggml("ggml_q4_K.json");
}

#[test]
fn ggml_q5_k() {
    check_ggml("ggml_q5_K.json");
}

#[test]
fn ggml_q6_k() {
    check_ggml("ggml_q6_K.json");
}

#[test]
fn ggml_mxfp4() {
    check_ggml("ggml_mxfp4.json");
}

#[test]
fn ggml_nvfp4() {
    check_ggml("ggml_nvfp4.json");
}

#[test]
fn legacy_q4_0() {
    check_ggml("legacy_q4_0.json");
}

#[test]
fn legacy_q4_1() {
    check_ggml("legacy_q4_1.json");
}

#[test]
fn legacy_q5_0() {
    check_ggml("legacy_q5_0.json");
}

#[test]
fn legacy_q5_1() {
    check_ggml("legacy_q5_1.json");
}

#[test]
fn legacy_q8_0() {
    check_ggml("legacy_q8_0.json");
}

fn check_fp8(name: &str, kind: Fp8Kind) {
    let fx = fixture(name);
    let rows: Vec<Vec<f32>> = fx["input"].as_array().unwrap().iter().map(f32s).collect();
    let (r, c) = (rows.len(), rows[0].len());
    let x = Array2::from_shape_vec((r, c), rows.concat()).unwrap();
    let cases = fx["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 12, "{name}: three formulas by four layouts");
    for case in cases {
        let formula = match case["formula"].as_str().unwrap() {
            "divide" => Fp8Formula::Divide,
            "reciprocal" => Fp8Formula::Reciprocal,
            "inverse_scale" => Fp8Formula::InverseScale,
            other => panic!("{other}"),
        };
        let tile = ints(&case["tile"]);
        let layout = match case["layout"].as_str().unwrap() {
            "tensor" => Fp8Layout::Tensor,
            "channel" => Fp8Layout::Channel,
            _ => Fp8Layout::Tiles {
                rows: tile[0] as usize,
                cols: tile[1] as usize,
            },
        };
        let what = format!("{name} {formula:?} {layout:?}");
        let scheme = Fp8Scheme {
            kind,
            formula,
            layout,
        };
        let mut values = vec![0.0f32; r * c];
        let enc = scheme.encode(&x.view(), Some(&mut values));
        let want_scales: Vec<f32> = case["scales"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(f32s)
            .collect();
        assert_bits(&enc.scales, &want_scales, &format!("{what}: scales"));
        let want_codes: Vec<i64> = case["codes"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(ints)
            .collect();
        let got: Vec<i64> = enc.codes.iter().map(|&b| i64::from(b)).collect();
        assert_eq!(got, want_codes, "{what}: codes");
        let want: Vec<f32> = case["dequantized"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(f32s)
            .collect();
        assert_bits(&values, &want, &format!("{what}: dequantized"));
        assert_bits(&scheme.decode(&enc), &want, &format!("{what}: decode"));
    }
}

#[test]
fn fp8_e4m3() {
    check_fp8("fp8_e4m3.json", Fp8Kind::E4M3);
}

#[test]
fn fp8_e5m2() {
    check_fp8("fp8_e5m2.json", Fp8Kind::E5M2);
}

/// NF4 blocks of 64 over a flattened tensor (the last one may be partial): codes, absmax
/// values and reconstructions.
fn nf4_encode(flat: &[f32]) -> (Vec<u8>, Vec<f32>, Vec<f32>) {
    let mut codes = vec![0u8; flat.len()];
    let mut values = vec![0.0f32; flat.len()];
    let mut absmax = Vec::new();
    for ((x, c), v) in flat
        .chunks(nf4::BLOCK)
        .zip(codes.chunks_mut(nf4::BLOCK))
        .zip(values.chunks_mut(nf4::BLOCK))
    {
        let a = nf4::encode_block(x, c);
        nf4::decode_block(a, c, v);
        absmax.push(a);
    }
    (codes, absmax, values)
}

#[test]
fn bitsandbytes_nf4() {
    let fx = fixture("nf4.json");
    assert_bits(&nf4::DYNAMIC_MAP, &f32s(&fx["dynamic_map"]), "dynamic map");
    for case in fx["cases"].as_array().unwrap() {
        let what = format!("nf4 {}", case["matrix"].as_str().unwrap());
        let flat: Vec<f32> = case["input"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(f32s)
            .collect();
        let (codes, absmax, values) = nf4_encode(&flat);
        let got: Vec<i64> = codes.iter().map(|&c| i64::from(c)).collect();
        assert_eq!(got, ints(&case["codes"]), "{what}: codes");
        assert_bits(&absmax, &f32s(&case["absmax"]), &format!("{what}: absmax"));
        assert_bits(
            &values,
            &f32s(&case["dequantized"]),
            &format!("{what}: dequantized"),
        );

        let offset = case["offset"].as_f64().unwrap() as f32;
        let dq = nf4::DoubleQuant::with_offset(&absmax, offset);
        let got: Vec<i64> = dq.codes.iter().map(|&c| i64::from(c)).collect();
        assert_eq!(got, ints(&case["dq_codes"]), "{what}: absmax codes");
        assert_bits(
            &dq.scales,
            &f32s(&case["dq_scales"]),
            &format!("{what}: absmax scales"),
        );
        let mut dq_values = vec![0.0f32; flat.len()];
        for (i, (c, v)) in codes
            .chunks(nf4::BLOCK)
            .zip(dq_values.chunks_mut(nf4::BLOCK))
            .enumerate()
        {
            nf4::decode_block(dq.absmax(i), c, v);
        }
        assert_bits(
            &dq_values,
            &f32s(&case["dq_dequantized"]),
            &format!("{what}: dq values"),
        );
        // torch's f32 mean, whether or not it equals the f64 mean rounded (5x96: not).
        assert_eq!(
            nf4::DoubleQuant::new(&absmax),
            dq,
            "{what}: offset from the mean"
        );
    }
}

#[test]
fn bulk_hashes() {
    let fx = fixture("bulk.json");
    let shape = ints(&fx["shape"]);
    let (rows, cols) = (shape[0] as usize, shape[1] as usize);
    let x = bulk_matrix(rows, cols);
    assert_eq!(
        fnv1a(f32_bytes(&x)),
        fx["input"].as_str().unwrap(),
        "bulk input"
    );
    let formats = &fx["formats"];
    for (name, format) in [
        ("Q2_K", Format::Q2K),
        ("Q3_K", Format::Q3K),
        ("Q4_K", Format::Q4K),
        ("Q5_K", Format::Q5K),
        ("Q6_K", Format::Q6K),
        ("MXFP4", Format::Mxfp4),
        ("NVFP4", Format::Nvfp4),
    ] {
        let (mut bytes, mut values) = (Vec::new(), Vec::new());
        for row in x.chunks(cols) {
            let e = format.encode_row(row).unwrap();
            bytes.extend(format.pack(&e));
            values.extend(e.decode());
        }
        assert_eq!(
            fnv1a(bytes),
            formats[name]["bytes"].as_str().unwrap(),
            "{name} bytes"
        );
        assert_eq!(
            fnv1a(f32_bytes(&values)),
            formats[name]["dequantized"].as_str().unwrap(),
            "{name} values"
        );
    }
    if formats["NF4"].is_null() {
        return;
    }
    let (codes, absmax, values) = nf4_encode(&x);
    assert_eq!(
        fnv1a(codes.iter().copied()),
        formats["NF4"]["codes"].as_str().unwrap()
    );
    assert_eq!(
        fnv1a(f32_bytes(&absmax)),
        formats["NF4"]["absmax"].as_str().unwrap()
    );
    assert_eq!(
        fnv1a(f32_bytes(&values)),
        formats["NF4"]["dequantized"].as_str().unwrap()
    );
    let dqf = &formats["NF4-dq"];
    let dq = nf4::DoubleQuant::new(&absmax);
    assert_eq!(
        dq.offset,
        dqf["offset"].as_f64().unwrap() as f32,
        "bulk offset"
    );
    assert_eq!(
        fnv1a(dq.codes.iter().copied()),
        dqf["dq_codes"].as_str().unwrap()
    );
    assert_eq!(
        fnv1a(f32_bytes(&dq.scales)),
        dqf["dq_scales"].as_str().unwrap()
    );
    let mut dq_values = vec![0.0f32; x.len()];
    for (i, (c, v)) in codes
        .chunks(nf4::BLOCK)
        .zip(dq_values.chunks_mut(nf4::BLOCK))
        .enumerate()
    {
        nf4::decode_block(dq.absmax(i), c, v);
    }
    assert_eq!(
        fnv1a(f32_bytes(&dq_values)),
        dqf["dequantized"].as_str().unwrap()
    );
}

#[test]
fn every_kquant_has_a_fixture() {
    for k in KQuant::ALL {
        let name = format!("ggml_{}.json", k.name().replace('Q', "q"));
        assert!(golden::dir("formats").join(&name).exists(), "{name}");
    }
}

#[test]
fn every_fixture_file_is_read_by_a_test() {
    let files = files::json_files(&golden::dir("formats"));
    assert_eq!(
        files, FIXTURES,
        "tests/golden/formats/*.json and FIXTURES differ"
    );
}
