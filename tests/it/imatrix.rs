//! llama.cpp importance matrices: both formats read equal to `libgguf.load_imatrix`, bit for
//! bit (fixtures in tests/golden/imatrix/, written by `generate_imatrix.py` with a writer
//! that follows llama-imatrix's), entries found by name, and every defect refused with a
//! message naming the file, the entry and what was expected.

use std::path::PathBuf;

use quantscope::core::importance::{Activations, importance_of};
use quantscope::io::imatrix::{Imatrix, ImatrixError, ImatrixFormat};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/imatrix")
}

fn fixture() -> serde_json::Value {
    let text = std::fs::read_to_string(dir().join("small.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn open(name: &str) -> Imatrix {
    Imatrix::open(&dir().join(name)).unwrap()
}

/// A JSON float as written by the generator (`"nan"`, `"inf"` for those).
fn float(v: &serde_json::Value) -> f32 {
    match v {
        serde_json::Value::String(s) => s.parse().unwrap(),
        v => v.as_f64().unwrap() as f32,
    }
}

/// Every entry of `file` read as libgguf read it, bit for bit.
fn reads_like_libgguf(file: &str) {
    let fx = fixture();
    let want = fx["readings"][file].as_object().unwrap();
    let im = open(file);
    assert_eq!(im.entries().len(), want.len(), "{file}");
    for (name, values) in want {
        let got = im.read(name).unwrap();
        let want: Vec<u32> = values
            .as_array()
            .unwrap()
            .iter()
            .map(|v| float(v).to_bits())
            .collect();
        let got: Vec<u32> = got.values.iter().map(|v| v.to_bits()).collect();
        assert_eq!(got, want, "{file}: {name}");
    }
}

#[test]
fn both_formats_read_equal_to_libgguf() {
    reads_like_libgguf("small.gguf");
    reads_like_libgguf("small.dat");
    let fx = fixture();
    assert!(
        fx["library"].as_str().unwrap().starts_with("libgguf 0.2.2"),
        "{}",
        fx["library"]
    );
}

#[test]
fn the_keys_say_how_the_matrix_was_made() {
    let fx = fixture();
    let g = open("small.gguf");
    assert_eq!(g.format(), ImatrixFormat::Gguf);
    assert_eq!(g.chunk_count, fx["gguf"]["chunk_count"].as_u64());
    assert_eq!(g.chunk_size, fx["gguf"]["chunk_size"].as_u64());
    assert_eq!(g.datasets, ["calibration.txt"]);
    let names: Vec<&str> = g.entries().iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "blk.0.attn_q.weight",
            "blk.0.ffn_down.weight",
            "blk.1.ffn_down_exps.weight",
            "output.weight"
        ]
    );
    let moe = g.entry("blk.1.ffn_down_exps.weight").unwrap();
    assert_eq!((moe.matrices, moe.columns()), (2, 32));
    let d = open("small.dat");
    assert_eq!(d.format(), ImatrixFormat::Legacy);
    assert_eq!(d.chunk_count, g.chunk_count);
    assert_eq!(d.datasets, ["calibration.txt"]);
    assert_eq!(d.chunk_size, None);
}

#[test]
fn activations_give_the_importance_the_imatrix_holds() {
    let x = quantscope::io::load_path(&dir().join("small_x.npy")).unwrap();
    let (values, _) = x.into_parts();
    let imp = importance_of(&Activations::new(values, "small_x.npy")).unwrap();
    let from_file = open("small.gguf")
        .importance("blk.0.attn_q.weight", (4, 64), None)
        .unwrap();
    let bits = |v: &[f32]| v.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(imp.values()), bits(from_file.values()));
}

#[test]
fn a_tensor_finds_its_entry_by_its_own_or_its_gguf_name() {
    let g = open("small.gguf");
    let own = g
        .importance("blk.0.ffn_down.weight", (8, 256), None)
        .unwrap();
    let hf = g
        .importance("model.layers.0.mlp.down_proj.weight", (8, 256), None)
        .unwrap();
    assert_eq!(own.values(), hf.values());
    let picked = g
        .importance("anything", (3, 32), Some("output.weight"))
        .unwrap();
    assert_eq!(picked.columns(), 32);
    // Experts split the rows.
    let moe = g.importance("blk.1.ffn_down_exps.weight", (8, 32), None);
    // Its second expert saw no token.
    let e = moe.unwrap_err().to_string();
    assert!(
        e.contains("blk.1.ffn_down_exps.weight\" (expert 1 of 2): llama-imatrix saw no token"),
        "{e}"
    );
    let e = g
        .importance("model.layers.0.mlp.up_proj.weight", (8, 256), None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no entry for tensor \"model.layers.0.mlp.up_proj.weight\" (nor for its GGUF name \"blk.0.ffn_up.weight\"); similar entries: \"blk.0.ffn_down.weight\""),
        "{e}"
    );
    assert!(e.ends_with("pick one with --imatrix-tensor NAME"), "{e}");
    let e = g
        .importance("x", (1, 32), Some("nope"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("no entry for tensor \"nope\""), "{e}");
}

#[test]
fn a_width_other_than_the_tensors_is_refused() {
    let g = open("small.gguf");
    let e = g
        .importance("blk.0.attn_q.weight", (4, 128), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("small.gguf: entry \"blk.0.attn_q.weight\" for tensor \"blk.0.attn_q.weight\": it holds 64 values, the tensor has 128 columns"), "{e}");
}

/// The message of `file`'s refusal for its one entry.
fn refusal(file: &str) -> String {
    match Imatrix::open(&dir().join(file)) {
        Err(e) => e.to_string(),
        Ok(im) => im
            .importance("blk.0.attn_q.weight", (2, 32), None)
            .unwrap_err()
            .to_string(),
    }
}

#[test]
fn defects_are_refused_one_message_each() {
    let fx = fixture();
    let r = &fx["readings"];
    // libgguf takes a zero count as importance 1, a NaN and a negative value as they are.
    assert_eq!(r["bad_zero_counts.gguf"]["blk.0.attn_q.weight"][0], 1.0);
    assert_eq!(r["bad_nan.gguf"]["blk.0.attn_q.weight"][9], "nan");
    for (file, want) in [
        (
            "bad_zero_counts.gguf",
            "llama-imatrix saw no token for it (its count is 0)",
        ),
        (
            "bad_nan.gguf",
            "column 9 (0-based) is NaN: importance must be finite",
        ),
        (
            "bad_nan.dat",
            "column 9 (0-based) is NaN: importance must be finite",
        ),
        (
            "bad_negative.gguf",
            "column 3 (0-based) is -0.03125: importance is a mean of x² and cannot be negative",
        ),
        ("bad_negative.dat", "cannot be negative"),
        (
            "bad_model.gguf",
            "bad_model.gguf is not an importance matrix: it is a GGUF file with general.type \"model\"",
        ),
        (
            "bad_no_counts.gguf",
            "entry \"blk.0.attn_q.weight\" has a in_sum2 tensor but no counts tensor",
        ),
    ] {
        let e = refusal(file);
        assert!(e.contains(want), "{file}: {e}");
        assert!(e.contains(file), "{file}: {e}");
    }
    // The reading itself is libgguf's, defects and all.
    let nan = open("bad_nan.gguf").read("blk.0.attn_q.weight").unwrap();
    assert!(nan.values[9].is_nan());
    let zero = open("bad_zero_counts.gguf")
        .read("blk.0.attn_q.weight")
        .unwrap();
    assert_eq!(zero.values, vec![1.0; 32]);
    assert_eq!(zero.zero_counts, vec![0]);
}

#[test]
fn truncated_and_foreign_files_are_refused_never_a_panic() {
    for name in ["small.gguf", "small.dat"] {
        let bytes = std::fs::read(dir().join(name)).unwrap();
        for cut in (0..bytes.len()).step_by(7) {
            match Imatrix::parse(name, bytes[..cut].to_vec()) {
                Err(e) => assert!(!e.to_string().is_empty()),
                // A file cut inside its trailer (the legacy chunk count and dataset, the
                // GGUF's last padding) still holds every entry.
                Ok(im) => {
                    assert!(cut + 32 >= bytes.len(), "{name}: {cut}");
                    for e in im.entries() {
                        im.read(&e.name).unwrap();
                    }
                }
            }
        }
    }
    let bytes = std::fs::read(dir().join("small.gguf")).unwrap();
    let e = Imatrix::parse("cut.gguf", bytes[..bytes.len() - 40].to_vec())
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("imatrix cut.gguf: "), "{e}");
    assert!(e.contains("past the end") || e.contains("truncated"), "{e}");
    let bytes = std::fs::read(dir().join("small.dat")).unwrap();
    let e = Imatrix::parse("cut.dat", bytes[..100].to_vec())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(
            "cut.dat (legacy .dat): entry \"blk.0.attn_q.weight\" holds 64 values (256 bytes)"
        ),
        "{e}"
    );
    assert!(e.contains("the file is truncated"), "{e}");
    let e = Imatrix::parse("notes.txt", b"some text, not statistics".to_vec())
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("notes.txt is not an importance matrix: it does not start with \"GGUF\""),
        "{e}"
    );
    assert!(matches!(
        Imatrix::parse("empty", Vec::new()),
        Err(ImatrixError::NotImatrix { .. })
    ));
}

#[test]
fn a_missing_file_names_itself() {
    let e = Imatrix::open(&dir().join("absent.gguf"))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("cannot read imatrix "), "{e}");
    assert!(e.contains("absent.gguf"), "{e}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// The fixtures with bytes overwritten anywhere: a reading or a refusal, never a
    /// panic (what the fuzz target checks on any bytes).
    #[test]
    fn damaged_files_never_panic(
        dat in proptest::bool::ANY,
        edits in proptest::collection::vec((0usize..4096, proptest::num::u8::ANY), 1..6),
    ) {
        let name = if dat { "small.dat" } else { "small.gguf" };
        let mut bytes = std::fs::read(dir().join(name)).unwrap();
        for (at, b) in edits {
            let n = bytes.len();
            bytes[at % n] = b;
        }
        if let Ok(im) = Imatrix::parse(name, bytes) {
            for e in im.entries() {
                if let Ok(r) = im.read(&e.name) {
                    proptest::prop_assert_eq!(r.values.len(), e.values);
                }
                let _ = im.importance(&e.name, (e.matrices.max(1), e.columns()), None);
            }
        }
    }
}
