//! Golden fixtures for the OCP Microscaling formats (`core::format::mx`), made by
//! `tests/golden/generate_mx.py`: the specification's formula in numpy float32 with
//! ml_dtypes' casts (and ggml's MXFP4 by libgguf on the same matrices). Scale bytes, codes
//! and reconstructions must match bit for bit.

use quantscope::core::format::mx::{self, MX_BLOCK, MxKind};
use quantscope::core::format::{Format, Meta};
use serde_json::Value;

use crate::common::golden::{self, f32_rows};

/// Every fixture file; `every_fixture_file_is_read_by_a_test` checks the directory holds
/// these and no others.
const FIXTURES: [&str; 8] = [
    "inputs.json",
    "mxfp4-ocp.json",
    "mxfp4_ggml.json",
    "mxfp6-e2m3.json",
    "mxfp6-e3m2.json",
    "mxfp8-e4m3.json",
    "mxfp8-e5m2.json",
    "mxint8.json",
];

fn fixture(name: &str) -> Value {
    assert!(FIXTURES.contains(&name), "{name} is not in FIXTURES");
    golden::json("mx", name)
}

fn rows_int(v: &Value) -> Vec<Vec<i64>> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_i64().unwrap())
                .collect()
        })
        .collect()
}

/// The input matrices by name.
fn inputs() -> Vec<(String, Vec<Vec<f32>>)> {
    fixture("inputs.json")["matrices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["name"].as_str().unwrap().to_string(),
                f32_rows(&m["input"]),
            )
        })
        .collect()
}

/// One row through the block encoder: scale bytes, codes, reconstruction.
fn encode_row(kind: MxKind, row: &[f32]) -> (Vec<u8>, Vec<u8>, Vec<f32>) {
    let table = kind.table();
    let (mut scales, mut codes, mut values) = (Vec::new(), Vec::new(), Vec::new());
    let (blocks, rest) = row.as_chunks::<MX_BLOCK>();
    assert!(rest.is_empty());
    for b in blocks {
        let mut c = [0u8; MX_BLOCK];
        let mut v = [0.0f32; MX_BLOCK];
        let e = mx::encode_block(kind, b, &mut c);
        mx::decode_block(&table, e, &c, &mut v);
        let mut bytes = vec![0u8; kind.block_bytes()];
        mx::pack(kind, e, &c, &mut bytes);
        let mut back = [0u8; MX_BLOCK];
        assert_eq!(mx::unpack(kind, &bytes, &mut back), e);
        assert_eq!(back, c, "{kind:?}: stored layout");
        scales.push(e);
        codes.extend(c);
        values.extend(v);
    }
    // The row format gives the same, and reads its own bytes back.
    let f = Format::Mx(kind);
    let enc = f.encode_row(row).unwrap();
    assert_eq!(enc.codes, codes, "{kind:?}: Format::encode_row codes");
    assert_eq!(
        enc.meta,
        Meta::Mx(scales.clone()),
        "{kind:?}: Format::encode_row scales"
    );
    let back = f.unpack(&f.pack(&enc), row.len()).unwrap();
    assert_eq!(back, enc, "{kind:?}: pack and unpack");
    let decoded = back.decode();
    assert!(
        decoded
            .iter()
            .zip(&values)
            .all(|(a, b)| a.to_bits() == b.to_bits()),
        "{kind:?}: Encoded::decode"
    );
    (scales, codes, values)
}

fn check(name: &str, kind: MxKind) {
    let fx = fixture(name);
    assert_eq!(fx["emax_elem"].as_i64().unwrap(), i64::from(kind.emax()));
    assert_eq!(fx["max"].as_f64().unwrap() as f32, kind.max());
    let inputs = inputs();
    let cases = fx["cases"].as_array().unwrap();
    assert_eq!(cases.len(), inputs.len());
    let mut values_checked = 0;
    for (case, (label, x)) in cases.iter().zip(&inputs) {
        assert_eq!(case["matrix"].as_str().unwrap(), label);
        let scales = rows_int(&case["scales"]);
        let codes = rows_int(&case["codes"]);
        let deq = f32_rows(&case["dequantized"]);
        for (r, row) in x.iter().enumerate() {
            let (s, c, v) = encode_row(kind, row);
            let what = format!("{name} {label} row {r}");
            let s: Vec<i64> = s.into_iter().map(i64::from).collect();
            let c: Vec<i64> = c.into_iter().map(i64::from).collect();
            assert_eq!(s, scales[r], "{what}: scales");
            assert_eq!(c, codes[r], "{what}: codes");
            for (i, (g, w)) in v.iter().zip(&deq[r]).enumerate() {
                assert_eq!(
                    g.to_bits(),
                    w.to_bits(),
                    "{what}: value {i}: {g:e} vs {w:e}"
                );
            }
            values_checked += row.len();
        }
    }
    assert!(values_checked > 2000, "{name}: {values_checked} values");
}

#[test]
fn mxfp8_e4m3() {
    check("mxfp8-e4m3.json", MxKind::Fp8E4M3);
}

#[test]
fn mxfp8_e5m2() {
    check("mxfp8-e5m2.json", MxKind::Fp8E5M2);
}

#[test]
fn mxfp6_e2m3() {
    check("mxfp6-e2m3.json", MxKind::Fp6E2M3);
}

#[test]
fn mxfp6_e3m2() {
    check("mxfp6-e3m2.json", MxKind::Fp6E3M2);
}

#[test]
fn mxfp4_ocp() {
    check("mxfp4-ocp.json", MxKind::Fp4E2M1);
}

#[test]
fn mxint8() {
    check("mxint8.json", MxKind::Int8);
}

/// ggml's MXFP4 (libgguf) is this crate's `mxfp4` on the same matrices, and it parts from the
/// OCP rule only where the docs say: ties between E2M1 points (to the smaller magnitude,
/// where the OCP rule rounds half to even), the sign of zero, and the exponent of a block
/// whose amax is just below a power of two (`log2f` rounds it up) or below 2^-125 (ggml's
/// byte wraps around, where the OCP rule clamps to 2^-127).
#[test]
fn ggml_mxfp4_parts_from_the_ocp_rule_only_on_ties_zeros_and_exponents() {
    let fx = fixture("mxfp4_ggml.json");
    let ocp = fixture("mxfp4-ocp.json");
    let mut ties = 0;
    let mut exps = 0;
    for ((case, ocase), (label, x)) in fx["cases"]
        .as_array()
        .unwrap()
        .iter()
        .zip(ocp["cases"].as_array().unwrap())
        .zip(inputs())
    {
        let deq = f32_rows(&case["dequantized"]);
        let ocp_scales = rows_int(&ocase["scales"]);
        for (r, row) in x.iter().enumerate() {
            let hex = case["bytes"][r].as_str().unwrap();
            let bytes: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            let ours = Format::Mxfp4.encode_row(row).unwrap();
            let packed = Format::Mxfp4.pack(&ours);
            let values = ours.decode();
            let (_, ocp_codes, ocp_values) = encode_row(MxKind::Fp4E2M1, row);
            for (b, block) in row.chunks_exact(MX_BLOCK).enumerate() {
                let amax = block.iter().fold(0.0f32, |m, v| m.max(v.abs()));
                if amax >= 2f32.powi(127) {
                    // ggml's handling of the f32 maximum (`log2f` gives 128) is the edge
                    // tests' concern; this test compares the rounding rules.
                    continue;
                }
                let span = b * MX_BLOCK..(b + 1) * MX_BLOCK;
                assert_eq!(
                    packed[b * 17..(b + 1) * 17],
                    bytes[b * 17..(b + 1) * 17],
                    "{label} row {r} block {b}: ggml bytes"
                );
                for (g, w) in values[span.clone()].iter().zip(&deq[r][span]) {
                    assert_eq!(g.to_bits(), w.to_bits(), "{label} row {r} block {b}");
                }
                let e = bytes[b * 17];
                if i64::from(e) != ocp_scales[r][b] {
                    // Only where ggml's byte wraps below E8M0's range (the OCP rule clamps
                    // to 2^-127) or log2f rounds the amax up to the next power of two.
                    let exact = ((amax.to_bits() >> 23) & 0xFF) as i32 - 127;
                    assert!(
                        amax < 2f32.powi(-125) || amax.log2().floor() as i32 != exact,
                        "{label} row {r} block {b}: exponent {e} vs {}",
                        ocp_scales[r][b]
                    );
                    exps += 1;
                    continue;
                }
                let d = mx::scale_of(e);
                for i in b * MX_BLOCK..(b + 1) * MX_BLOCK {
                    let (g, o) = (values[i], ocp_values[i]);
                    if g.to_bits() == o.to_bits() {
                        continue;
                    }
                    if g == o {
                        // A zero whose sign only the OCP cast keeps.
                        assert_eq!(ocp_codes[i], 8, "{label} row {r} value {i}");
                        continue;
                    }
                    // A tie: x / d is the midpoint of the two, ggml took the smaller.
                    let t = row[i].abs() / d;
                    assert_eq!(
                        t,
                        f32::midpoint(g.abs(), o.abs()) / d,
                        "{label} row {r} value {i}"
                    );
                    assert!(g.abs() < o.abs());
                    ties += 1;
                }
            }
        }
    }
    assert!(ties >= 20, "{ties} ties");
    assert!(exps >= 1, "{exps} exponents");
}

#[test]
fn every_fixture_file_is_read_by_a_test() {
    let files = golden::file_names("mx");
    assert_eq!(files, FIXTURES);
}
