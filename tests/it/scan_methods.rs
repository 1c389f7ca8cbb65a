//! `scan --activations X --method ...`: the methods on every tensor whose width the
//! activations fit, each tensor's numbers equal to the core's on it, ranked by the first
//! method's output error, the others listed with why; JSON and CSV keys as in `report`;
//! bad flags and activations refused with one message.

use ndarray::Array2;
use quantscope::core::method::run::{self, Method, Request, Scheme};
use quantscope::core::method::scanned::TensorMethods;
use quantscope::core::{PresetOptions, preset};
use quantscope::io::export::Format;
use quantscope::scan::{MethodScan, NoProgress, ScanOptions, scan_methods, write_scan};

use crate::common::files::{
    TempFile, f32_bytes, npy_bytes, npy_header, safetensors_bytes, temp_file,
};
use crate::common::run::{assert_refused, json, quantscope, text};

fn weights(rows: usize, cols: usize, seed: usize, loud: f32) -> Array2<f32> {
    Array2::from_shape_fn((rows, cols), |(r, c)| {
        loud * ((((r + seed) * 37 + c * 11) % 29) as f32 / 14.0 - 1.0) * 0.1
    })
}

/// Two tensors 32 wide (one louder), one 48 wide, and a bias.
fn checkpoint() -> (TempFile, Vec<(&'static str, Array2<f32>)>) {
    let tensors = vec![
        ("quiet.weight", weights(6, 32, 1, 1.0)),
        ("loud.weight", weights(4, 32, 5, 6.0)),
        ("wide.weight", weights(4, 48, 2, 1.0)),
    ];
    let mut entries: Vec<(&str, &str, Vec<u64>, Vec<u8>)> = tensors
        .iter()
        .map(|(n, a)| {
            let data: Vec<f32> = a.iter().copied().collect();
            (
                *n,
                "F32",
                vec![a.nrows() as u64, a.ncols() as u64],
                f32_bytes(&data),
            )
        })
        .collect();
    entries.push(("bias", "F32", vec![4], f32_bytes(&[0.1, 0.2, 0.3, 0.4])));
    let refs: Vec<(&str, &str, &[u64], Vec<u8>)> = entries
        .iter()
        .map(|(n, d, s, b)| (*n, *d, s.as_slice(), b.clone()))
        .collect();
    (
        temp_file("methods_scan.safetensors", &safetensors_bytes(&refs)),
        tensors,
    )
}

/// 64 tokens of 32 columns, column 7 loud.
fn activations() -> Array2<f32> {
    Array2::from_shape_fn((64, 32), |(t, c)| {
        let v = (((t * 13 + c * 7) % 31) as f32 / 15.0 - 1.0) * 0.8;
        if c == 7 { 15.0 * v } else { v }
    })
}

fn npy(name: &str, a: &Array2<f32>) -> TempFile {
    let (r, c) = a.dim();
    let header = npy_header("<f4", false, &format!("({r}, {c})"));
    let data: Vec<f32> = a.iter().copied().collect();
    temp_file(name, &npy_bytes((1, 0), &header, &f32_bytes(&data)))
}

fn request() -> Request {
    Request {
        methods: vec![Method::Gptq, Method::Awq],
        scheme: Scheme::of(&preset("lesson", PresetOptions::default()).unwrap()),
        ..Request::default()
    }
}

#[test]
fn each_tensor_the_activations_fit_gets_the_core_numbers_and_the_others_why() {
    let (file, tensors) = checkpoint();
    let x = activations();
    let a = quantscope::core::importance::Activations::new(x.clone(), "x.npy");
    let methods = MethodScan::read(request(), &a).unwrap();
    let config = preset("lesson", PresetOptions::default()).unwrap();
    let scan = scan_methods(
        &file,
        &config,
        ScanOptions::default(),
        (None, Some(&methods)),
        &NoProgress,
    )
    .unwrap();
    for (name, w) in &tensors {
        let row = scan.rows.iter().find(|r| r.name == *name).unwrap();
        let got = row.methods.as_ref().unwrap();
        if w.ncols() == 32 {
            let want = run::run(&w.view(), &x.view(), &request(), &mut |_, _| true).unwrap();
            assert_eq!(got, &TensorMethods::Ran(Box::new(want)), "{name}");
        } else {
            assert_eq!(
                got.why_not(),
                Some(
                    "activations x.npy have 32 columns per token, the tensor has 48 columns (its input features)"
                )
            );
        }
    }
    let info = scan.methods.as_ref().unwrap();
    assert_eq!(info.ranked_by(), "gptq_output_mse");
    assert_eq!(info.width, Some(32));
    // the table: ranked, the loud tensor first; the wide one not run, with why
    let mut out = Vec::new();
    write_scan(&mut out, &scan, Format::Table).unwrap();
    let t = String::from_utf8(out).unwrap();
    let section = t.split("Methods").nth(1).unwrap_or_default();
    let loud = section.find("loud.weight").unwrap();
    let quiet = section.find("quiet.weight").unwrap();
    assert!(loud < quiet, "{t}");
    assert!(
        section.contains("ranked by gptq_output_mse, largest first"),
        "{t}"
    );
    assert!(section.contains("not run on 1 tensor"), "{t}");
    assert!(section.contains("wide.weight"), "{t}");
    assert!(section.contains("gptq out MSE"), "{t}");
}

#[test]
fn json_and_csv_name_the_keys_as_report_does() {
    let (file, tensors) = checkpoint();
    let x = npy("scan_acts.npy", &activations());
    let args = [
        "scan",
        file.to_str().unwrap(),
        "--activations",
        x.to_str().unwrap(),
        "--method",
        "gptq,awq",
    ];
    let mut with_json = args.to_vec();
    with_json.extend(["-f", "json"]);
    let v = json(&with_json);
    let m = &v["methods"];
    assert_eq!(m["ranked_by"], "gptq_output_mse");
    assert_eq!(
        m["ranking"],
        serde_json::json!(["loud.weight", "quiet.weight"])
    );
    assert_eq!(m["skipped"][0]["name"], "wide.weight");
    let rows = v["tensors"].as_array().unwrap();
    let row = |n: &str| rows.iter().find(|r| r["name"] == n).unwrap();
    assert!(
        row("wide.weight")["methods_skipped"]
            .as_str()
            .unwrap()
            .contains("48 columns")
    );
    let w = &tensors[1].1;
    let want = run::run(&w.view(), &activations().view(), &request(), &mut |_, _| {
        true
    })
    .unwrap();
    let g = &row("loud.weight")["methods"]["weights"][0];
    assert_eq!(g["method"], "gptq");
    assert_eq!(
        g["output_mse"].as_f64(),
        Some(want.weights[0].error.overall.output_mse)
    );
    assert_eq!(
        g["rtn_output_mse"].as_f64(),
        Some(want.weights[0].rtn.overall.output_mse)
    );
    let a = &row("loud.weight")["methods"]["weights"][1];
    assert_eq!(a["awq_ratio"].as_f64(), want.weights[1].awq_ratio);
    // CSV: report's per-channel names, over each tensor
    let mut with_csv = args.to_vec();
    with_csv.extend(["-f", "csv"]);
    let o = quantscope(&with_csv);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let csv = text(&o.stdout);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    for key in [
        "methods_rank",
        "methods_skipped",
        "gptq_output_mse",
        "gptq_rtn_output_mse",
        "awq_output_mse",
        "awq_rtn_output_sqnr_db",
        "awq_ratio",
    ] {
        assert!(header.contains(&key), "{key}: {header:?}");
    }
    let col = |k: &str| header.iter().position(|h| *h == k).unwrap();
    for line in lines {
        let cells = fields(line);
        let cells: Vec<&str> = cells.iter().map(String::as_str).collect();
        assert_eq!(cells.len(), header.len(), "{line}");
        match cells[0] {
            "loud.weight" => {
                assert_eq!(cells[col("methods_rank")], "1");
                let mse: f64 = cells[col("gptq_output_mse")].parse().unwrap();
                assert_eq!(mse, want.weights[0].error.overall.output_mse);
            }
            "quiet.weight" => assert_eq!(cells[col("methods_rank")], "2"),
            "wide.weight" => {
                assert_eq!(cells[col("methods_rank")], "");
                assert!(line.contains("48 columns"), "{line}");
                assert_eq!(cells[col("gptq_output_mse")], "");
            }
            other => panic!("{other}"),
        }
    }
}

/// A CSV line's fields, quotes removed (RFC 4180: a quoted field may hold commas).
fn fields(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    for ch in line.chars() {
        match ch {
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out
}

#[test]
fn built_in_activations_fit_every_tensor() {
    let (file, _) = checkpoint();
    let v = json(&[
        "scan",
        file.to_str().unwrap(),
        "--activations",
        "built-in",
        "--method",
        "gptq",
        "--act-quant",
        "per-token",
        "-f",
        "json",
    ]);
    assert_eq!(v["methods"]["ranking"].as_array().unwrap().len(), 3);
    assert_eq!(v["methods"]["skipped"], serde_json::json!([]));
    let w8a8 = &v["tensors"][0]["methods"]["w8a8"][0];
    assert_eq!(w8a8["activations"], "token");
    assert!(w8a8["output_mse"].as_f64().unwrap() > 0.0);
}

#[test]
fn bad_flags_and_activations_are_refused() {
    let (file, _) = checkpoint();
    let f = file.to_str().unwrap();
    let e = assert_refused(&["scan", f, "--method", "gptq"]);
    assert!(
        e.contains("--method gptq compares by the layer's output error"),
        "{e}"
    );
    let e = assert_refused(&["scan", f, "--activations", "built-in"]);
    assert!(e.contains("add --method"), "{e}");
    let mut bad = activations();
    bad[(3, 5)] = f32::NAN;
    let x = npy("scan_nan.npy", &bad);
    let e = assert_refused(&[
        "scan",
        f,
        "--activations",
        x.to_str().unwrap(),
        "--method",
        "awq",
    ]);
    assert!(e.contains("token 3, column 5"), "{e}");
    let e = assert_refused(&["scan", f, "--activations", "missing.npy", "--method", "awq"]);
    assert!(e.contains("missing.npy"), "{e}");
}
