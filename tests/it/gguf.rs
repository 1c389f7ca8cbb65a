//! The GGUF reader on the fixtures gguf-py wrote (tests/data/gguf/generate.py): tensor
//! infos, metadata of every value type, float tensors, and the version and alignment rules.

use std::path::PathBuf;

use quantscope::io::gguf::{Gguf, GgufError, ParseError, Value, ValueType, parse_header};
use quantscope::io::stored;

use crate::common::explorer;
use crate::common::files;
use crate::common::run;
use crate::common::screen as screen_text;

use screen_text::screen;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/gguf")
        .join(name)
}

fn bytes(name: &str) -> Vec<u8> {
    std::fs::read(fixture(name)).unwrap()
}

#[test]
fn tensor_infos_match_what_gguf_py_wrote() {
    let g = Gguf::open(&fixture("types.gguf")).unwrap();
    let h = g.header();
    assert_eq!(h.version, 3);
    assert_eq!(h.alignment, 32);
    let list: Vec<(&str, &str, Vec<usize>, u64)> = h
        .tensors
        .iter()
        .map(|t| (t.name.as_str(), t.ggml_type.name, t.shape.clone(), t.bytes))
        .collect();
    // gguf-py's tensor.shape reversed (rows first), its n_bytes, in file order.
    let expected: Vec<(&str, &str, Vec<usize>, u64)> = vec![
        ("f32", "F32", vec![3, 5], 60),
        ("f16", "F16", vec![4, 7], 56),
        ("bf16", "BF16", vec![2, 3], 12),
        ("f64", "F64", vec![2, 2], 32),
        ("f32_3d", "F32", vec![2, 3, 4], 96),
        ("norm", "F32", vec![6], 24),
        ("q4_0", "Q4_0", vec![3, 64], 108),
        ("q4_0.dequant", "F32", vec![3, 64], 768),
        ("q4_1", "Q4_1", vec![3, 96], 180),
        ("q4_1.dequant", "F32", vec![3, 96], 1152),
        ("q5_0", "Q5_0", vec![5, 32], 110),
        ("q5_0.dequant", "F32", vec![5, 32], 640),
        ("q5_1", "Q5_1", vec![3, 64], 144),
        ("q5_1.dequant", "F32", vec![3, 64], 768),
        ("q8_0", "Q8_0", vec![4, 96], 408),
        ("q8_0.dequant", "F32", vec![4, 96], 1536),
        ("mxfp4", "MXFP4", vec![3, 64], 102),
        ("mxfp4.dequant", "F32", vec![3, 64], 768),
        ("q2_k", "Q2_K", vec![3, 256], 252),
        ("q2_k.dequant", "F32", vec![3, 256], 3072),
        ("q3_k", "Q3_K", vec![3, 512], 660),
        ("q3_k.dequant", "F32", vec![3, 512], 6144),
        ("q4_k", "Q4_K", vec![4, 256], 576),
        ("q4_k.dequant", "F32", vec![4, 256], 4096),
        ("q5_k", "Q5_K", vec![3, 256], 528),
        ("q5_k.dequant", "F32", vec![3, 256], 3072),
        ("q6_k", "Q6_K", vec![3, 512], 1260),
        ("q6_k.dequant", "F32", vec![3, 512], 6144),
        ("nvfp4", "NVFP4", vec![3, 128], 216),
        ("nvfp4.dequant", "F32", vec![3, 128], 1536),
    ];
    assert_eq!(list, expected);
    // gguf-py's data_offset is absolute: the first tensor's is 1568.
    assert_eq!(h.data_start + h.tensors[0].offset, 1568);
    assert_eq!(h.data_start + h.tensors[29].offset, 34752);
}

#[test]
fn metadata_of_every_value_type() {
    let g = Gguf::open(&fixture("metadata.gguf")).unwrap();
    let h = g.header();
    assert_eq!(h.alignment, 64);
    let get = |k: &str| h.get(k).unwrap_or_else(|| panic!("{k}"));
    assert_eq!(get("t.u8"), &Value::U8(200));
    assert_eq!(get("t.i8"), &Value::I8(-100));
    assert_eq!(get("t.u16"), &Value::U16(60000));
    assert_eq!(get("t.i16"), &Value::I16(-30000));
    assert_eq!(get("t.u32"), &Value::U32(4_000_000_000));
    assert_eq!(get("t.i32"), &Value::I32(-2_000_000_000));
    assert_eq!(get("t.f32"), &Value::F32(0.1));
    assert_eq!(get("t.bool"), &Value::Bool(true));
    assert_eq!(get("t.u64"), &Value::U64((1 << 63) + 5));
    assert_eq!(get("t.i64"), &Value::I64(-(1 << 62)));
    assert_eq!(get("t.f64"), &Value::F64(-1e300));
    assert_eq!(get("t.string").short(80), "\"héllo \\\"world\\\"\"");
    assert_eq!(get("t.array_f32").short(80), "[0.5, -1.5, 2.25]");
    assert_eq!(get("t.array_f32").type_name(), "ARRAY[FLOAT32]");
    assert_eq!(get("t.array_nested").short(80), "[[1, 2], [3, 4, 5]]");
    let tokens = get("tokenizer.ggml.tokens");
    let Value::Array { elem, len, head } = tokens else {
        panic!("{tokens:?}")
    };
    assert_eq!((*elem, *len, head.len()), (ValueType::String, 1000, 16));
    let short = tokens.short(60);
    assert!(short.starts_with("[\"tok0\", \"tok1\""), "{short}");
    assert!(short.ends_with("more)]"), "{short}");
    assert!(short.len() < 120, "{short}");
    // Tensors start at multiples of 64.
    assert!(h.tensors.iter().all(|t| t.offset % 64 == 0));
    assert_eq!(h.data_start % 64, 0);
}

#[test]
fn float_tensors_load_as_matrices() {
    let g = Gguf::open(&fixture("types.gguf")).unwrap();
    for (name, shape) in [
        ("f32", (3, 5)),
        ("f16", (4, 7)),
        ("bf16", (2, 3)),
        ("f64", (2, 2)),
        ("f32_3d", (6, 4)),
        ("norm", (1, 6)),
    ] {
        let m = g.load(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(m.shape(), shape, "{name}");
    }
    let e = g.load("q4_k").unwrap_err();
    assert!(matches!(e, GgufError::Unsupported { .. }), "{e}");
    let e = g.load("nope").unwrap_err().to_string();
    assert!(e.contains("no tensor named \"nope\""), "{e}");
}

#[test]
fn version_two_reads_and_other_versions_are_refused() {
    let mut b = bytes("types.gguf");
    let len = b.len() as u64;
    b[4] = 2;
    assert_eq!(parse_header(&b, len).unwrap().version, 2);
    b[4] = 1;
    assert_eq!(
        parse_header(&b, len).unwrap_err(),
        ParseError::UnsupportedVersion { version: 1 }
    );
    // A big-endian file: the version reads byte-swapped.
    b[4..8].copy_from_slice(&3_u32.to_be_bytes());
    let e = parse_header(&b, len).unwrap_err();
    assert_eq!(e, ParseError::BigEndian { version: 3 });
    assert!(
        e.to_string().contains("little-endian GGUF files only"),
        "{e}"
    );
}

#[test]
fn quantized_tensors_decode_bit_exact_with_gguf_py() {
    let g = Gguf::open(&fixture("types.gguf")).unwrap();
    for name in [
        "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "mxfp4", "q2_k", "q3_k", "q4_k", "q5_k", "q6_k",
        "nvfp4",
    ] {
        let t = g.info(name).unwrap();
        let ours = stored::dequantize(&g, t).unwrap();
        let theirs = g.load(&format!("{name}.dequant")).unwrap();
        assert_eq!(ours.shape(), theirs.shape(), "{name}");
        let bits = |m: &quantscope::core::Matrix| -> Vec<u32> {
            m.values().iter().map(|v| v.to_bits()).collect()
        };
        assert_eq!(bits(&ours), bits(&theirs), "{name}");
    }
}

#[test]
fn stored_codes_show_use_collapse_and_layout() {
    let g = Gguf::open(&fixture("types.gguf")).unwrap();
    for (name, levels, bpw) in [
        ("q4_0", 16, 4.5),
        ("q8_0", 256, 8.5),
        ("q4_k", 16, 4.5),
        ("q6_k", 64, 6.5625),
        ("mxfp4", 15, 4.25),
    ] {
        let s = stored::inspect(&g, g.info(name).unwrap()).unwrap();
        assert_eq!(s.levels, levels, "{name}");
        assert_eq!(s.bits_per_weight, bpw, "{name}");
        // Row 1 is all zeros: collapsed, every block of it too.
        assert!(s.rows[1].collapsed, "{name}");
        assert_eq!(
            s.rows[1].collapsed_blocks,
            s.shape.1 / s.block_len,
            "{name}"
        );
        assert_eq!(s.collapsed_rows, 1, "{name}: {:?}", s.rows);
        assert!(s.rows[0].used > 1 && s.rows[0].used <= levels, "{name}");
        assert!(s.scales.quantiles.is_some(), "{name}");
        // gguf-py stores d = 0 for an all-zero block; MXFP4's exponent byte is never 0.
        assert_eq!(s.scales.zero > 0, name != "mxfp4", "{name}");
        let parts: f64 = s.layout.iter().map(|p| p.bits_per_weight).sum();
        assert!((parts - bpw).abs() < 1e-12, "{name}");
    }
}

#[test]
fn the_explorer_opens_gguf_tensors_through_the_checkpoint_loader() {
    use quantscope::io::checkpoint::{Checkpoint, Kind};
    let path = fixture("types.gguf");
    let c = Checkpoint::open(&path).unwrap();
    let entries = c.entries();
    let kind = |n: &str| entries.iter().find(|e| e.name == n).map(|e| e.kind);
    assert_eq!(kind("f16"), Some(Kind::Float));
    assert_eq!(kind("q6_k"), Some(Kind::Quantized));
    // What the picker shows: the type of each tensor; all of these open.
    assert!(entries.iter().all(|e| e.not_loadable().is_none()));
    let t = quantscope::runtime::files::load_tensor(&path, "q6_k").unwrap();
    assert_eq!(t.dtype, "q6_k");
    assert_eq!(t.name, "types.gguf / q6_k");
    assert_eq!(
        t.matrix,
        Gguf::open(&path).unwrap().load("q6_k.dequant").unwrap()
    );
}

#[test]
fn the_picker_lists_gguf_types_and_a_quantized_tensor_opens_in_the_stored_view() {
    use quantscope::app::{Effect, Model, Overlay, Source, translate, update};
    use quantscope::runtime::settle;
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let path = fixture("types.gguf");
    let mut m = explorer::open_picker(path.clone());
    let Some(Overlay::Tensors(picker)) = &m.overlay else {
        panic!("no picker: {:?}", m.status)
    };
    let q4k = picker.tensors.iter().find(|t| t.name == "q4_k").unwrap();
    assert_eq!((q4k.dtype.as_str(), q4k.not_loadable()), ("Q4_K", None));
    let key = |m: &mut Model, code: KeyCode| {
        if let Some(msg) = translate(m, &KeyEvent::new(code, KeyModifiers::NONE)) {
            update(m, msg);
        }
    };
    for c in "q4_k".chars() {
        key(&mut m, KeyCode::Char(c));
    }
    assert!(
        screen(&m, 80, 24).contains("Q4_K"),
        "the type is shown per tensor"
    );
    key(&mut m, KeyCode::Enter);
    assert!(
        m.effects
            .iter()
            .any(|e| matches!(e, Effect::LoadTensor { name, .. } if name == "q4_k")),
        "{:?}",
        m.effects
    );
    settle(&mut m);
    let Source::Tensor {
        dtype,
        matrix,
        stored,
        ..
    } = &m.source
    else {
        panic!("not loaded: {:?}", m.status)
    };
    assert_eq!(dtype, "q4_k");
    let g = Gguf::open(&path).unwrap();
    assert_eq!(**matrix, g.load("q4_k.dequant").unwrap());
    let s = stored
        .as_ref()
        .expect("a quantized tensor opens in the stored view");
    assert_eq!(**s, stored::inspect(&g, g.info("q4_k").unwrap()).unwrap());
    // The panes analyse the dequantized values.
    assert_eq!(
        m.analysis.report.as_ref().map(|r| r.shape),
        Some(matrix.shape())
    );
    // It opens in the stored view: its rows' levels, collapse, layout and scales.
    assert!(matches!(m.overlay, Some(Overlay::Stored(_))));
    let shown = screen(&m, 80, 24);
    for needle in [
        "q4_k: Q4_K as stored",
        "1/16 ✗ COLLAPSED",
        "Layout: 4.5 bits/weight",
        "Scales: 32 sub-blocks, 8 zero",
        "Q4_K as stored; Esc: the panes analyse its dequantized values",
    ] {
        assert!(shown.contains(needle), "{needle:?} not on\n{shown}");
    }
    // Esc: the panes, and the Data pane's summary of the stored codes.
    key(&mut m, KeyCode::Esc);
    let shown = screen(&m, 80, 24);
    for needle in [
        "stored as Q4_K, 4.5 bits/w",
        "4 x 256, 4 blocks of 256",
        "levels/row: mean ",
        "collapsed: 1 row, 1 block",
        "|scale| median ",
        "analysed: its dequantized values",
    ] {
        assert!(shown.contains(needle), "{needle:?} not on\n{shown}");
    }
    // S reopens the stored view from the panes.
    key(&mut m, KeyCode::Char('S'));
    assert!(matches!(m.overlay, Some(Overlay::Stored(_))));
    // A float tensor of the same file has no stored view.
    let f16 = quantscope::runtime::files::load_tensor(&path, "f16").unwrap();
    assert!(f16.stored.is_none());
}

/// Runs the binary; stdout, stderr (both must be UTF-8) and the exit code.
fn quantscope(args: &[&str]) -> (String, String, Option<i32>) {
    let o = run::quantscope(args);
    (
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8(o.stderr).unwrap(),
        o.status.code(),
    )
}

/// stdout of a run that must succeed.
fn ok(args: &[&str]) -> String {
    let (out, err, code) = quantscope(args);
    assert_eq!(code, Some(0), "{args:?}: {err}");
    out
}

#[test]
fn report_lists_a_gguf_files_tensors_and_metadata_in_every_format() {
    let types = fixture("types.gguf");
    let types = types.to_str().unwrap();
    let list = |format| ok(&["report", types, "--list-tensors", "--format", format]);
    let table = list("table");
    assert!(
        table
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()
                == ["q4_k", "Q4_K", "[4,", "256]", "576"]),
        "{table}"
    );
    assert!(table.contains("30 tensors, 34520 bytes"), "{table}");
    let json: serde_json::Value = serde_json::from_str(&list("json")).unwrap();
    let tensors = json["tensors"].as_array().unwrap();
    assert_eq!(tensors.len(), 30);
    let q6k = tensors.iter().find(|t| t["name"] == "q6_k").unwrap();
    assert_eq!(
        (&q6k["dtype"], &q6k["kind"], &q6k["shape"], &q6k["bytes"]),
        (
            &serde_json::json!("Q6_K"),
            &serde_json::json!("quantized"),
            &serde_json::json!([3, 512]),
            &serde_json::json!(1260)
        )
    );
    // The same columns as a safetensors listing (tests/it/scan.rs), the kind included.
    let csv = list("csv");
    assert_eq!(csv.lines().count(), 31, "{csv}");
    assert_eq!(
        csv.lines().next(),
        Some("name,dtype,shape,bytes,loadable,kind")
    );
    assert!(
        csv.lines()
            .any(|l| l == "q8_0,Q8_0,4x96,408,true,quantized"),
        "{csv}"
    );
    assert!(
        csv.lines().any(|l| l == "f16,F16,4x7,56,true,float"),
        "{csv}"
    );
    // Every cell escaped: the type's underscore and the shape's brackets too.
    let md = list("markdown");
    assert!(md.contains(r"| q5\_0 | Q5\_0 | \[5, 32\] | 110 |"), "{md}");
    assert!(!md.contains("| Q4_K |"), "{md}");

    let metadata = fixture("metadata.gguf");
    let metadata = metadata.to_str().unwrap();
    let meta = |format| ok(&["report", metadata, "--metadata", "--format", format]);
    let table = meta("table");
    let tokens = table
        .lines()
        .find(|l| l.starts_with("tokenizer.ggml.tokens"))
        .unwrap();
    // The 1000 tokens are shortened, saying how many are left out.
    assert!(
        tokens.contains("ARRAY[STRING]") && tokens.contains("\"tok0\", \"tok1\""),
        "{tokens}"
    );
    assert!(tokens.ends_with("more)]") && tokens.len() < 200, "{tokens}");
    assert!(
        table.contains("t.i64                  INT64           -4611686018427387904"),
        "{table}"
    );
    assert!(table.trim_end().ends_with("17 keys"), "{table}");
    let json: serde_json::Value = serde_json::from_str(&meta("json")).unwrap();
    assert_eq!(
        json["t.u64"]["value"],
        serde_json::json!(9_223_372_036_854_775_813_u64)
    );
    assert_eq!(json["tokenizer.ggml.tokens"]["len"], 1000);
    assert_eq!(
        json["tokenizer.ggml.tokens"]["head"]
            .as_array()
            .unwrap()
            .len(),
        16
    );
    let csv = meta("csv");
    assert_eq!(csv.lines().next(), Some("key,type,value"));
    assert!(csv.lines().any(|l| l == "t.bool,BOOL,true"), "{csv}");
    let md = meta("markdown");
    assert!(md.contains("| t.u8 | UINT8 | 200 |"), "{md}");
    assert!(md.contains(r"| t.array\_f32 | ARRAY\[FLOAT32\] |"), "{md}");
}

#[test]
fn report_shows_a_quantized_gguf_tensor_as_stored_unless_a_configuration_is_asked() {
    let path = fixture("types.gguf");
    let path = path.to_str().unwrap();
    let table = ok(&["report", path, "--tensor", "q4_k"]);
    for needle in [
        "q4_k (Q4_K) as stored in",
        "the original weights are not in the file",
        "4.5 bits per weight in all",
        "levels used per row: mean 12.25 of 16, fewest 1",
        "collapsed as stored (one value, or every scale 0): 1 of 4 rows, 1 of 4 blocks",
    ] {
        assert!(table.contains(needle), "{needle:?} not in\n{table}");
    }
    let json: serde_json::Value = serde_json::from_str(&ok(&[
        "report", path, "--tensor", "q4_k", "--format", "json",
    ]))
    .unwrap();
    assert_eq!(json["tensor"]["ggml_type"], "Q4_K");
    assert_eq!(json["tensor"]["collapsed_rows"], 1);
    assert_eq!(json["tensor"]["rows"].as_array().unwrap().len(), 4);
    let csv = ok(&["report", path, "--tensor", "q4_k", "--format", "csv"]);
    assert_eq!(csv.lines().count(), 5, "{csv}");
    assert_eq!(csv.lines().nth(2), Some("1,1,16,1,1,true"), "{csv}");
    // A preset asks for an analysis: of the dequantized values, and a note says so.
    let (out, err, code) = quantscope(&["report", path, "--tensor", "q4_k", "--preset", "q8_0"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("quantscope: int8"), "{out}");
    assert!(out.contains("matrix 4 x 256"), "{out}");
    assert!(
        err.contains("dequantized values (the original weights are not in the file)"),
        "{err}"
    );
    // A format is a preset too: the stored Q4_K values quantized again as Q4_K.
    let (out, err, code) = quantscope(&["report", path, "--tensor", "q4_k", "--preset", "q4_k"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("quantscope: q4_k: llama.cpp Q4_K"), "{out}");
    // A bad preset is the one message, with no note before it.
    let (out, err, code) = quantscope(&["report", path, "--tensor", "q4_k", "--preset", "q4_kk"]);
    assert_eq!((out.as_str(), code), ("", Some(2)));
    assert!(err.starts_with("error: unknown preset \"q4_kk\""), "{err}");
    // A float tensor is analysed as usual, without the note.
    let (out, err, code) = quantscope(&["report", path, "--tensor", "f32", "--no-ladder"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("matrix 3 x 5") && !err.contains("dequantized"),
        "{out}{err}"
    );
}

#[test]
fn scan_covers_float_and_stored_tensors_in_every_format() {
    let path = fixture("types.gguf");
    let path = path.to_str().unwrap();
    let table = ok(&["scan", path]);
    let Some((_, stored)) = table.split_once("Quantized tensors, as stored") else {
        panic!("no stored section in\n{table}")
    };
    let q4k: Vec<&str> = stored
        .lines()
        .find(|l| l.trim_start().starts_with("q4_k "))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(
        q4k,
        [
            "q4_k", "Q4_K", "[4,", "256]", "12.2", "of", "16", "1", "1", "1", "of", "4", "4.5"
        ]
    );
    assert!(
        table.lines().any(|l| l.trim_start().starts_with("f16 ")),
        "{table}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["scan", path, "--format", "json"])).unwrap();
    let stored = json["stored"].as_array().unwrap();
    assert_eq!(stored.len(), 12, "every decodable quantized type");
    assert!(stored.iter().all(|s| s["collapsed_rows"] == 1));
    // Float tensors: the 2-D and 3-D floats and the dequantized copies gguf-py wrote.
    assert_eq!(json["tensors"].as_array().unwrap().len(), 17);
    let csv = ok(&["scan", path, "--format", "csv"]);
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .ends_with("stored_bits_per_weight")
    );
    assert!(
        csv.lines()
            .any(|l| l == "q4_k,Q4_K,4x256,4,256,,,,,,,,,,,,,,,16,12.25,1,1,1,4,8,4.5"),
        "{csv}"
    );
    assert!(
        ok(&["scan", path, "--format", "markdown"])
            .contains(r"| q6\_k | Q6\_K | \[3, 512\] | 43.0 of 64 | 1 | 1 | 2 of 6 | 6.5625 |")
    );
}

#[test]
fn a_scan_of_only_quantized_matrices_says_so_instead_of_an_empty_table() {
    // Hand-written GGUF v3: "q" a Q8_0 matrix of 2 x 32, "norm" an F32 vector of 4.
    let mut b = b"GGUF".to_vec();
    b.extend(3_u32.to_le_bytes());
    b.extend(2_u64.to_le_bytes()); // tensors
    b.extend(0_u64.to_le_bytes()); // keys
    for (name, dims, ty, offset) in [
        ("q", vec![32_u64, 2], 8_u32, 0_u64),
        ("norm", vec![4], 0, 96),
    ] {
        b.extend((name.len() as u64).to_le_bytes());
        b.extend(name.as_bytes());
        b.extend((dims.len() as u32).to_le_bytes());
        for d in dims {
            b.extend(d.to_le_bytes());
        }
        b.extend(ty.to_le_bytes());
        b.extend(offset.to_le_bytes());
    }
    b.resize(b.len().next_multiple_of(32), 0);
    for row in 0..2_i8 {
        b.extend(half::f16::from_f32(0.5).to_le_bytes());
        b.extend((0..32_i8).map(|i| (i - 16 + row).to_le_bytes()[0]));
    }
    b.resize(b.len() + 96 - 68, 0);
    b.extend(
        [1.0_f32, 2.0, 3.0, 4.0]
            .iter()
            .flat_map(|v| v.to_le_bytes()),
    );
    let path = files::temp_file("only_quantized.gguf", &b);
    let path = path.to_str().unwrap();
    let table = ok(&["scan", path]);
    assert!(
        table.contains("no floating tensor of two or more dimensions to analyse"),
        "{table}"
    );
    assert!(!table.contains("gain dB"), "no empty float table:\n{table}");
    assert!(
        table.lines().any(|l| l.trim_start().starts_with("q ")
            && l.contains("Q8_0")
            && l.contains("32.0 of 256")),
        "{table}"
    );
    let md = ok(&["scan", path, "--format", "markdown"]);
    assert!(
        md.contains("no floating tensor of two or more dimensions to analyse"),
        "{md}"
    );
    assert!(!md.contains("| gain dB |"), "{md}");
}
