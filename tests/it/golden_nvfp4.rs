//! Golden fixtures for two-level NVFP4 (`core::format::nvfp4_two`), made by
//! `tests/golden/generate_nvfp4.py` with compressed-tensors and NVIDIA ModelOpt run on CPU:
//! the tensor scale, every block's E4M3 scale byte, every code and every reconstruction must
//! match bit for bit, and a tensor the reference reconstructs as NaN or infinity is refused.

use quantscope::core::Matrix;
use quantscope::core::analyse;
use quantscope::core::format::nvfp4_two::{self, Convention, Refused};
use quantscope::core::presets::{PresetOptions, preset};
use serde_json::Value;

use crate::common::golden;

const FIXTURES: [&str; 3] = ["compressed-tensors.json", "inputs.json", "modelopt.json"];

fn fixture(name: &str) -> Value {
    assert!(FIXTURES.contains(&name), "{name} is not in FIXTURES");
    golden::json("nvfp4", name)
}

fn flat_f32(v: &Value) -> Vec<f32> {
    v.as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r.as_array().unwrap().iter())
        .map(|x| match x.as_str() {
            Some("nan") => f32::NAN,
            Some("inf") => f32::INFINITY,
            Some("-inf") => f32::NEG_INFINITY,
            Some(other) => panic!("{other}"),
            None => x.as_f64().unwrap() as f32,
        })
        .collect()
}

fn flat_u8(v: &Value) -> Vec<u8> {
    v.as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r.as_array().unwrap().iter())
        .map(|x| u8::try_from(x.as_i64().unwrap()).unwrap())
        .collect()
}

/// Checks every case; returns how many were refused.
fn check(name: &str, c: Convention) -> usize {
    let fx = fixture(name);
    let inputs = fixture("inputs.json");
    let mut refused = 0;
    for (case, m) in fx["cases"]
        .as_array()
        .unwrap()
        .iter()
        .zip(inputs["matrices"].as_array().unwrap())
    {
        let label = m["name"].as_str().unwrap();
        assert_eq!(case["matrix"].as_str().unwrap(), label);
        let x = flat_f32(&m["input"]);
        let want = flat_f32(&case["dequantized"]);
        let mut values = vec![0.0f32; x.len()];
        match nvfp4_two::encode(c, &x, &mut values) {
            Ok(e) => {
                assert!(
                    want.iter().all(|v| v.is_finite()),
                    "{label}: refused nothing"
                );
                let ts = case["tensor_scale"].as_f64().unwrap() as f32;
                assert_eq!(
                    e.tensor_scale.to_bits(),
                    ts.to_bits(),
                    "{label}: tensor scale"
                );
                assert_eq!(e.scales, flat_u8(&case["scales"]), "{label}: block scales");
                assert_eq!(e.codes, flat_u8(&case["codes"]), "{label}: codes");
                for (i, (g, w)) in values.iter().zip(&want).enumerate() {
                    assert_eq!(
                        g.to_bits(),
                        w.to_bits(),
                        "{label}: value {i}: {g:e} vs {w:e}"
                    );
                }
            }
            Err(r) => {
                // Refused exactly where the library gives a value that is not finite.
                let bad = want.iter().filter(|v| !v.is_finite()).count();
                assert!(bad > 0, "{label}: refused ({r}) but the library is finite");
                match r {
                    Refused::ZeroScale2 => assert!(want.iter().all(|v| v.is_nan())),
                    Refused::Infinite { count, .. } => assert_eq!(count, bad, "{label}"),
                }
                refused += 1;
            }
        }
    }
    refused
}

/// The analysis of the presets `nvfp4-ct` and `nvfp4-modelopt` gives the fixtures' codes and
/// values too, and refuses the same tensors with the reason.
#[test]
fn the_presets_analyse_as_the_libraries() {
    let inputs = fixture("inputs.json");
    for (name, file) in [
        ("nvfp4-ct", "compressed-tensors.json"),
        ("nvfp4-modelopt", "modelopt.json"),
    ] {
        let fx = fixture(file);
        let config = preset(name, PresetOptions::default()).unwrap();
        for (case, m) in fx["cases"]
            .as_array()
            .unwrap()
            .iter()
            .zip(inputs["matrices"].as_array().unwrap())
        {
            let x = flat_f32(&m["input"]);
            let cols = m["shape"][1].as_u64().unwrap() as usize;
            let rows: Vec<&[f32]> = x.chunks(cols).collect();
            let matrix = Matrix::from_rows(&rows).unwrap();
            let want = flat_f32(&case["dequantized"]);
            match analyse(&matrix, &config) {
                Ok(r) => {
                    let got: Vec<f32> = (0..x.len())
                        .map(|i| r.dequantized(i / cols, i % cols))
                        .collect();
                    assert!(
                        got.iter()
                            .zip(&want)
                            .all(|(a, b)| a.to_bits() == b.to_bits()),
                        "{name} {}",
                        m["name"]
                    );
                    let codes: Vec<i64> = (0..x.len())
                        .map(|i| i64::from(r.code(i / cols, i % cols)))
                        .collect();
                    let want_codes: Vec<i64> =
                        flat_u8(&case["codes"]).into_iter().map(i64::from).collect();
                    assert_eq!(codes, want_codes, "{name} {}", m["name"]);
                }
                Err(e) => {
                    assert!(want.iter().any(|v| !v.is_finite()), "{name}: {e}");
                    let msg = e.to_string();
                    assert!(msg.contains("NaN") || msg.contains("infinity"), "{msg}");
                }
            }
        }
    }
}

#[test]
fn compressed_tensors() {
    // The f32 maximum's tensor reconstructs to infinity.
    assert_eq!(
        check("compressed-tensors.json", Convention::CompressedTensors),
        1
    );
}

#[test]
fn modelopt() {
    // The all-zero tensor's scale_2 is 0 and its values NaN.
    assert_eq!(check("modelopt.json", Convention::ModelOpt), 1);
}

#[test]
fn every_fixture_file_is_read_by_a_test() {
    let files = golden::file_names("nvfp4");
    assert_eq!(files, FIXTURES);
}
