//! Importance and the layer's output error: activations read from files (whole or a chunk
//! of tokens at a time, the same numbers either way), and the output metrics against a
//! straightforward f64 computation (proptest).

use ndarray::Array2;
use proptest::prelude::*;
use quantscope::core::importance::{
    Activations, Importance, ImportanceSource, Tokens, importance_of,
};
use quantscope::core::output::{Calibration, output_errors};
use quantscope::core::presets::{PresetOptions, preset};
use quantscope::core::{Matrix, Options, analyse_with};
use quantscope::io::activations::{open_activations, open_activations_with};

use crate::common::files;

/// Every token of `t`.
fn all(t: &dyn Tokens) -> Vec<f32> {
    let (n, w) = t.shape();
    let mut out = vec![0.0; n * w];
    t.read(0, &mut out).unwrap();
    out
}

fn npy_f32(shape: &str, values: &[f32]) -> Vec<u8> {
    files::npy_bytes(
        (1, 0),
        &files::npy_header("<f4", false, shape),
        &files::f32_bytes(values),
    )
}

#[test]
fn npy_activations_read_whole_or_streamed_alike() {
    let values: Vec<f32> = (0..24).map(|i| i as f32 * 0.5 - 3.0).collect();
    let f = files::temp_file("x.npy", &npy_f32("(2, 3, 4)", &values));
    let spec = f.to_str().unwrap();
    let whole = open_activations(spec).unwrap();
    let streamed = open_activations_with(spec, 0).unwrap();
    // The last axis is the width; the others count tokens.
    assert_eq!(whole.shape(), (6, 4));
    assert_eq!(streamed.shape(), (6, 4));
    assert_eq!(all(whole.as_ref()), values);
    assert_eq!(all(streamed.as_ref()), values);
    let mut part = vec![0.0; 8];
    streamed.read(3, &mut part).unwrap();
    assert_eq!(part, values[12..20]);
    assert!(streamed.read(5, &mut part).is_err());
    let a = importance_of(whole.as_ref()).unwrap();
    let b = importance_of(streamed.as_ref()).unwrap();
    assert_eq!(a.values(), b.values());
}

#[test]
fn safetensors_tensors_and_text_are_activations_too() {
    let x: Vec<f32> = (0..12).map(|i| i as f32).collect();
    let st = files::temp_file(
        "acts.safetensors",
        &files::safetensors_bytes(&[
            ("layer0.input", "F32", &[3, 4], files::f32_bytes(&x)),
            ("ids", "I64", &[2], vec![0; 16]),
        ]),
    );
    let spec = format!("{}:layer0.input", st.display());
    for limit in [0, u64::MAX] {
        let t = open_activations_with(&spec, limit).unwrap();
        assert_eq!(t.shape(), (3, 4));
        assert_eq!(all(t.as_ref()), x);
        assert!(t.name().ends_with("acts.safetensors:layer0.input"));
    }
    let e = open_activations(&format!("{}:layer0.inptu", st.display()))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("has no tensor \"layer0.inptu\""), "{e}");
    let e = open_activations(&format!("{}:ids", st.display()))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains(":ids: I64 values; activations are F32"), "{e}");
    // Its one float tensor needs no name; of two, one must be named.
    assert_eq!(
        open_activations(st.to_str().unwrap()).unwrap().shape(),
        (3, 4)
    );
    let two = files::temp_file(
        "two.safetensors",
        &files::safetensors_bytes(&[
            ("a", "F32", &[1, 2], files::f32_bytes(&[1.0, 2.0])),
            ("b", "F32", &[1, 2], files::f32_bytes(&[1.0, 2.0])),
        ]),
    );
    let e = open_activations(two.to_str().unwrap())
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("is a checkpoint of several tensors: give the one to read as"),
        "{e}"
    );
    let txt = files::temp_file("x.txt", b"1 2 3\n4 5 6\n");
    let t = open_activations(txt.to_str().unwrap()).unwrap();
    assert_eq!(t.shape(), (2, 3));
    let e = open_activations("/no/such/acts.npy")
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.starts_with("cannot read activations /no/such/acts.npy: no such file"),
        "{e}"
    );
}

#[test]
fn a_value_that_is_not_finite_is_refused_with_its_token() {
    let mut values = vec![1.0f32; 12];
    values[7] = f32::NAN;
    let f = files::temp_file("nan.npy", &npy_f32("(4, 3)", &values));
    let spec = f.to_str().unwrap();
    let streamed = open_activations_with(spec, 0).unwrap();
    let e = importance_of(streamed.as_ref()).unwrap_err().to_string();
    assert!(e.contains("token 2, column 1 (0-based) is NaN"), "{e}");
    // Read whole, the message names the file once, then the token.
    let e = open_activations(spec).err().unwrap().to_string();
    assert_eq!(
        e,
        format!(
            "activations {spec}: token 2, column 1 (0-based) is NaN: only finite values are allowed"
        )
    );
}

/// The metrics of `report` in f64, value by value: per row `‖X e‖²`, `‖X w‖²` and
/// `Σ a e² / Σ a`, and `Σ_t (Σ_c |x_tc e_c|)²`, the size of the terms of `‖X e‖²` (a product
/// in f32 is exact to a few parts in a million of it, not of a sum whose terms cancel).
fn naive(m: &Matrix, hat: &[Vec<f32>], x: &Array2<f32>, a: &[f32]) -> Vec<(f64, f64, f64, f64)> {
    let w = m.values();
    (0..m.shape().0)
        .map(|i| {
            let e: Vec<f64> = (0..m.shape().1)
                .map(|c| f64::from(w[(i, c)]) - f64::from(hat[i][c]))
                .collect();
            let (mut err, mut sig, mut size) = (0.0, 0.0, 0.0);
            for t in x.rows() {
                let ye: f64 = t.iter().zip(&e).map(|(&x, e)| f64::from(x) * e).sum();
                let terms: f64 = t
                    .iter()
                    .zip(&e)
                    .map(|(&x, e)| (f64::from(x) * e).abs())
                    .sum();
                size += terms * terms;
                let yw: f64 = t
                    .iter()
                    .zip(w.row(i))
                    .map(|(&x, &w)| f64::from(x) * f64::from(w))
                    .sum();
                err += ye * ye;
                sig += yw * yw;
            }
            let num: f64 = e.iter().zip(a).map(|(e, &a)| f64::from(a) * e * e).sum();
            let den: f64 = a.iter().map(|&a| f64::from(a)).sum();
            (err, sig, num / den, size)
        })
        .collect()
}

/// The output errors of `report` on `m` measured with an importance alone (no tokens).
fn imatrix_errors(
    m: &Matrix,
    report: &quantscope::core::Report,
    imp: &Importance,
) -> quantscope::core::importance::OutputErrors {
    output_errors(
        m,
        report,
        Calibration {
            importance: Some(imp),
            tokens: None,
        },
        &mut |_, _| true,
    )
    .unwrap()
    .unwrap()
}

fn close(got: f64, want: f64, rel: f64) -> bool {
    (got - want).abs() <= rel * want.abs().max(1e-30)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// output_mse, output_sqnr_db and imatrix_mse per channel and overall, against the
    /// formulas in f64 (the product in f32 costs at most a few parts in a million here).
    #[test]
    fn output_metrics_match_a_plain_f64_computation(
        rows in 1usize..40,
        cols in 1usize..70,
        tokens in 1usize..20,
        seed in 0u64..1000,
        which in 0usize..3,
    ) {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        };
        let data: Vec<Vec<f32>> = (0..rows)
            .map(|r| (0..cols).map(|_| next() * (1 + r % 3) as f32).collect())
            .collect();
        let refs: Vec<&[f32]> = data.iter().map(Vec::as_slice).collect();
        let m = Matrix::from_rows(&refs).unwrap();
        let x = Array2::from_shape_fn((tokens, cols), |(_, c)| next() * if c % 7 == 3 { 10.0 } else { 1.0 });
        let a: Vec<f32> = (0..cols).map(|_| (next().abs() * 4.0).floor()).collect();
        let name = ["lesson", "ort-int8", "ort-int4"][which];
        let report = analyse_with(&m, &preset(name, PresetOptions::default()).unwrap(), Options::ONE_CONFIG).unwrap();
        let hat: Vec<Vec<f32>> = (0..rows).map(|r| report.row_dequantized(r)).collect();
        let acts = Activations::new(x.clone(), "x");
        let imp = Importance::new(a.clone(), cols, ImportanceSource::Activations { name: "a".into(), tokens: 1 }).unwrap();
        let got = output_errors(&m, &report, Calibration { importance: Some(&imp), tokens: Some(&acts) }, &mut |_, _| true)
            .unwrap()
            .unwrap();
        let want = naive(&m, &hat, &x, &a);
        let t = tokens as f64;
        let (mut err, mut sig, mut num, mut den) = (0.0, 0.0, 0.0, 0.0);
        let weight: f64 = a.iter().map(|&a| f64::from(a)).sum();
        let (mut size_all, mut cancelled) = (0.0, false);
        for (i, &(e, sg, im, size)) in want.iter().enumerate() {
            let g = got.channels[i];
            // Exact to 1e-4 of the result, or of its terms' size where they cancel.
            let slack = 1e-4 * size / t;
            prop_assert!(
                (g.output_mse.unwrap() - e / t).abs() <= 1e-4 * e / t + slack || e / t < 1e-12,
                "row {} {:?} {} (terms {})", i, g, e / t, size / t
            );
            size_all += size;
            // Where the terms cancel to a few parts in a thousand, the decibels are not
            // checked to 1e-3.
            let clean = e > 1e-3 * size;
            cancelled |= !clean;
            match g.output_sqnr_db {
                Some(db) if clean => prop_assert!((db - 10.0 * (sg / e).log10()).abs() < 1e-3),
                Some(_) => {}
                None => prop_assert!(e < 1e-12 || sg == 0.0),
            }
            if weight > 0.0 {
                prop_assert!(close(g.imatrix_mse.unwrap(), im, 1e-12));
            } else {
                prop_assert!(g.imatrix_mse.is_none());
            }
            err += e;
            sig += sg;
            num += im * weight;
            den += weight;
        }
        let o = got.overall;
        let n = t * rows as f64;
        prop_assert!(
            (o.output_mse.unwrap() - err / n).abs() <= 1e-4 * err / n + 1e-4 * size_all / n
                || err < 1e-12
        );
        if let Some(db) = o.output_sqnr_db.filter(|_| !cancelled) {
            prop_assert!((db - 10.0 * (sig / err).log10()).abs() < 1e-3);
        }
        if den > 0.0 {
            prop_assert!(close(o.imatrix_mse.unwrap(), num / den, 1e-9));
        }
        prop_assert_eq!(got.tokens, Some(tokens));
    }
}

#[test]
fn importance_alone_gives_imatrix_mse_and_the_columns_at_risk() {
    // A quiet row on a loud column: per tensor, its values collapse to 0.
    let loud: Vec<f32> = (0..8).map(|c| (c as f32 - 3.5) * 2.0).collect();
    let quiet: Vec<f32> = (0..8).map(|c| (c as f32 - 3.5) * 0.01).collect();
    let m = Matrix::from_rows(&[&loud, &quiet]).unwrap();
    let report = analyse_with(
        &m,
        &preset("lesson", PresetOptions::default()).unwrap(),
        Options::ONE_CONFIG,
    )
    .unwrap();
    let mut a = vec![1.0f32; 8];
    a[2] = 100.0;
    let imp = Importance::new(
        a,
        8,
        ImportanceSource::Activations {
            name: "a".into(),
            tokens: 1,
        },
    )
    .unwrap();
    let got = imatrix_errors(&m, &report, &imp);
    assert!(got.overall.output_mse.is_none() && got.tokens.is_none());
    assert!(got.channels[1].imatrix_mse.unwrap() > 0.0);
    // Every quiet value reconstructs to 0: column 2, the loudest, comes first.
    assert_eq!(got.columns_at_risk_total, 8);
    assert_eq!(got.columns_at_risk[0].column, 2);
    assert_eq!(got.columns_at_risk[0].zeroed, 1);
    assert!((got.columns_at_risk[0].share - 100.0 / 107.0).abs() < 1e-12);
    // Nothing to compute from: nothing.
    assert!(
        output_errors(&m, &report, Calibration::default(), &mut |_, _| true)
            .unwrap()
            .is_none()
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A `.npy` file with bytes overwritten: a shape the bytes hold, or an error, never a
    /// panic (what the fuzz target checks on any bytes).
    #[test]
    fn damaged_npy_activations_never_panic(
        edits in proptest::collection::vec((0usize..200, any::<u8>()), 1..6),
    ) {
        let mut bytes = npy_f32("(3, 5)", &[0.5; 15]);
        for (at, b) in edits {
            let n = bytes.len();
            bytes[at % n] = b;
        }
        if let Ok(Some((t, w))) = quantscope::io::activations::npy_tokens(&bytes) {
            prop_assert!(w >= 1 && t * w <= bytes.len());
        }
    }
}

/// A 4 x 256 matrix with a quiet row and an outlier.
fn wide() -> Matrix {
    let rows: Vec<Vec<f32>> = (0..4)
        .map(|r| {
            (0..256)
                .map(|c| {
                    let v = ((r * 31 + c * 17) as f32 * 0.173).sin() * [1.0, 0.01, 3.0, 0.2][r];
                    if (r, c) == (2, 77) { 40.0 } else { v }
                })
                .collect()
        })
        .collect();
    let refs: Vec<&[f32]> = rows.iter().map(Vec::as_slice).collect();
    Matrix::from_rows(&refs).unwrap()
}

fn loud_importance(n: usize) -> Importance {
    let a = (0..n)
        .map(|c| {
            if c % 29 == 3 {
                300.0
            } else {
                1.0 + (c % 7) as f32
            }
        })
        .collect();
    Importance::new(
        a,
        n,
        ImportanceSource::Activations {
            name: "a".into(),
            tokens: 9,
        },
    )
    .unwrap()
}

#[test]
fn llama_cpp_formats_and_presets_quantize_with_the_importance() {
    use quantscope::core::analyse_weighted;
    use quantscope::core::format::{Encoded, Format, Legacy};
    let m = wide();
    let imp = loud_importance(256);
    let bits = |v: &[f32]| v.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    for (name, f) in [
        ("q4_k", Format::Q4K),
        ("q2_k", Format::Q2K),
        ("q4_0", Format::Legacy(Legacy::Q4_0)),
        ("q5_1", Format::Legacy(Legacy::Q5_1)),
    ] {
        let c = preset(name, PresetOptions::default()).unwrap();
        let r = analyse_weighted(&m, &c, Some(&imp), Options::default()).unwrap();
        assert!(r.quantized_with.is_some(), "{name}");
        let plain = analyse_with(&m, &c, Options::default()).unwrap();
        assert!(plain.quantized_with.is_none());
        let mut differs = false;
        for row in 0..4 {
            let x = m.values().row(row).to_vec();
            let mut enc = Encoded::default();
            let mut want = vec![0.0; 256];
            f.encode_row_weighted(&x, Some(imp.values()), &mut enc, &mut want)
                .unwrap();
            assert_eq!(
                bits(&r.row_dequantized(row)),
                bits(&want),
                "{name} row {row}"
            );
            differs |= r.row_dequantized(row) != plain.row_dequantized(row);
            // Every reconstruction is on its block's grid.
            let b = r.block_index(row, 0);
            assert!(r.levels(b).contains(&want[0]), "{name} row {row}");
        }
        assert!(differs, "{name}: the importance changed nothing");
        // The ladder: the active rung is the weighted report's; the others are the preset's.
        let active = r.ladder.iter().find(|g| g.active).unwrap();
        assert_eq!(active.overall, r.overall, "{name}");
        for (a, b) in r
            .ladder
            .iter()
            .zip(&plain.ladder)
            .filter(|(a, _)| !a.active)
        {
            assert_eq!(a.overall, b.overall, "{name} {}", a.granularity);
        }
    }
    // A preset with a setting changed, an integer preset of another library, and q8_0 (its
    // quantizer reads no importance): as without.
    let mut q4 = preset("q4_0", PresetOptions::default()).unwrap();
    q4.granularity = quantscope::core::Granularity::Group(64);
    let ort = preset("ort-int8", PresetOptions::default()).unwrap();
    let q8 = preset("q8_0", PresetOptions::default()).unwrap();
    for c in [q4, ort, q8] {
        let r = analyse_weighted(&m, &c, Some(&imp), Options::default()).unwrap();
        assert!(r.quantized_with.is_none());
        assert_eq!(r, analyse_with(&m, &c, Options::default()).unwrap());
    }
    // An importance of another width is refused.
    let e =
        analyse_weighted(&m, &ort, Some(&loud_importance(128)), Options::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "importance: it holds 128 values, the tensor has 256 columns"
    );
}

// The command line: `report --imatrix`, `--activations`, `--imatrix-tensor`.

use crate::common::run;

fn golden(name: &str) -> String {
    format!("{}/tests/golden/imatrix/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// A text matrix of `rows` x `cols` (one row quiet), as a temporary file.
fn matrix_file(rows: usize, cols: usize) -> files::TempFile {
    let text: String = (0..rows)
        .map(|r| {
            let scale = if r == 1 { 0.01 } else { 1.0 };
            let row: Vec<String> = (0..cols)
                .map(|c| format!("{}", ((r * 7 + c * 3) as f32 * 0.37).sin() * scale))
                .collect();
            row.join(" ") + "\n"
        })
        .collect();
    files::temp_file("w.txt", text.as_bytes())
}

#[test]
fn report_json_names_the_output_errors_per_channel_and_overall() {
    let m = matrix_file(4, 64);
    let v = run::json(&[
        "report",
        m.to_str().unwrap(),
        "--preset",
        "q4_0",
        "--imatrix",
        &golden("small.gguf"),
        "--imatrix-tensor",
        "blk.0.attn_q.weight",
        "--activations",
        &golden("small_x.npy"),
        "-f",
        "json",
        "--formats",
        "q4_0,q8_0,ort-int4",
    ]);
    for k in ["output_mse", "output_sqnr_db", "imatrix_mse"] {
        assert!(v["overall"][k].is_number(), "overall.{k}");
        for c in v["channels"].as_array().unwrap() {
            assert!(c[k].is_number(), "{k}: {c}");
        }
        for r in v["ladder"].as_array().unwrap() {
            assert!(r[k].is_number(), "ladder {k}: {r}");
        }
        for e in v["formats"].as_array().unwrap() {
            assert!(e[k].is_number(), "formats {k}: {e}");
        }
    }
    let imp = &v["importance"];
    assert!(
        imp["quantized_with"]
            .as_str()
            .unwrap()
            .contains("entry blk.0.attn_q.weight")
    );
    assert_eq!(imp["tokens"], 40);
    assert_eq!(imp["top"][0][0], 5);
    assert!(imp["top_percent_share"].as_f64().unwrap() > 0.4);
    assert!(v["ranking_changes"].is_array());
    let q40 = v["formats"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "q4_0")
        .unwrap();
    assert_eq!(q40["weighted"], true);
    let q80 = v["formats"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "q8_0")
        .unwrap();
    assert_eq!(q80["weighted"], false);
    // Without either flag the keys are absent, as before.
    let plain = run::json(&["report", m.to_str().unwrap(), "-f", "json"]);
    assert!(plain.get("importance").is_none());
    assert!(plain["overall"].get("output_mse").is_none());
}

#[test]
fn csv_markdown_and_html_carry_the_same_numbers() {
    let m = matrix_file(3, 32);
    let base = [
        "report",
        m.to_str().unwrap(),
        "--imatrix",
        &golden("small.dat"),
        "--imatrix-tensor",
        "output.weight",
    ];
    let run = |extra: &[&str]| {
        let args: Vec<&str> = base.iter().copied().chain(extra.iter().copied()).collect();
        let o = run::quantscope(&args);
        assert_eq!(o.status.code(), Some(0), "{}", run::text(&o.stderr));
        run::text(&o.stdout)
    };
    let csv = run(&["-f", "csv"]);
    let header = csv.lines().next().unwrap();
    assert!(
        header.contains(",clipped,output_mse,output_sqnr_db,imatrix_mse,"),
        "{header}"
    );
    assert!(header.contains("imatrix_mse_tensor"), "{header}");
    // Importance without activations: no output error, an imatrix MSE.
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    let at = header.split(',').position(|h| h == "imatrix_mse").unwrap();
    assert!(row[at - 2].is_empty() && !row[at].is_empty(), "{row:?}");
    let md = run(&["-f", "markdown"]);
    assert!(md.contains("## Importance"), "{md}");
    assert!(md.contains("## Output error"), "{md}");
    assert!(md.contains("hold"), "{md}");
    let html = run(&["-f", "html"]);
    assert!(html.contains("Importance") && html.contains("imatrix MSE"));
}

#[test]
fn bad_importance_inputs_are_refused_with_exit_status_2() {
    let m = matrix_file(2, 64);
    let m = m.to_str().unwrap();
    let narrow = matrix_file(2, 48);
    for (args, want) in [
        (
            vec![
                "report",
                m,
                "--activations",
                &golden("small_x.npy"),
                "--imatrix",
                &golden("small.gguf"),
            ],
            "holds 4 entries and the matrix has no tensor name: pick one with --imatrix-tensor NAME",
        ),
        (
            vec![
                "report",
                narrow.to_str().unwrap(),
                "--activations",
                &golden("small_x.npy"),
            ],
            "have 64 columns per token, the tensor has 48 columns",
        ),
        (
            vec![
                "report",
                m,
                "--imatrix",
                &golden("small.gguf"),
                "--imatrix-tensor",
                "blk.9.ffn_up.weight",
            ],
            "has no entry for tensor \"blk.9.ffn_up.weight\"",
        ),
        (
            vec![
                "report",
                m,
                "--imatrix",
                &golden("small.gguf"),
                "--imatrix-tensor",
                "output.weight",
            ],
            "it holds 32 values, the tensor has 64 columns",
        ),
        (
            vec!["report", m, "--imatrix", &golden("bad_zero_counts.gguf")],
            "llama-imatrix saw no token for it",
        ),
        (
            vec!["report", m, "--imatrix", &golden("bad_nan.gguf")],
            "is NaN: importance must be finite",
        ),
        (
            vec!["report", m, "--imatrix", &golden("bad_negative.dat")],
            "cannot be negative",
        ),
        (
            vec!["report", m, "--imatrix", &golden("bad_model.gguf")],
            "is not an importance matrix",
        ),
        (
            vec!["report", m, "--imatrix", &golden("small_x.npy")],
            "is not an importance matrix",
        ),
        (
            vec!["report", m, "--activations", "/no/such/file.npy"],
            "cannot read activations /no/such/file.npy: no such file",
        ),
    ] {
        let err = run::assert_refused(&args);
        assert!(err.contains(want), "{args:?}: {err}");
    }
    // --imatrix-tensor needs --imatrix (clap's usage error, also status 2).
    let o = run::quantscope(&["report", m, "--imatrix-tensor", "x"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn scan_finds_each_tensors_entry_and_weighs_its_errors() {
    let vals = |n: usize| -> Vec<u8> {
        files::f32_bytes(
            &(0..n)
                .map(|i| ((i * 13) as f32 * 0.31).sin())
                .collect::<Vec<_>>(),
        )
    };
    let st = files::temp_file(
        "model.safetensors",
        &files::safetensors_bytes(&[
            ("blk.0.attn_q.weight", "F32", &[4, 64], vals(256)),
            (
                "model.layers.0.mlp.down_proj.weight",
                "F32",
                &[3, 256],
                vals(768),
            ),
            ("other.weight", "F32", &[2, 16], vals(32)),
        ]),
    );
    let path = st.to_str().unwrap();
    let v = run::json(&[
        "scan",
        path,
        "--imatrix",
        &golden("small.gguf"),
        "--preset",
        "q4_0",
        "-f",
        "json",
    ]);
    let rows = v["tensors"].as_array().unwrap();
    let row = |n: &str| rows.iter().find(|r| r["name"] == n).unwrap();
    let q = &row("blk.0.attn_q.weight")["imatrix"];
    assert_eq!(q["entry"], "blk.0.attn_q.weight");
    assert_eq!(q["quantized_with"], true);
    for k in ["imatrix_mse_tensor", "imatrix_mse_channel", "imatrix_mse"] {
        assert!(q[k].as_f64().unwrap() > 0.0, "{k}");
    }
    assert_eq!(
        row("model.layers.0.mlp.down_proj.weight")["imatrix"]["entry"],
        "blk.0.ffn_down.weight"
    );
    assert!(row("other.weight").get("imatrix").is_none());
    assert!(v["imatrix"].as_str().unwrap().ends_with("small.gguf"));
    let o = run::quantscope(&["scan", path, "--imatrix", &golden("small.gguf")]);
    let table = run::text(&o.stdout);
    assert!(table.contains("imatrix MSE T"), "{table}");
    assert!(
        table.contains("- for the 1 tensor without an entry"),
        "{table}"
    );
    // An entry that does not fit its tensor fails that tensor (exit status 1).
    let bad = files::temp_file(
        "bad.safetensors",
        &files::safetensors_bytes(&[
            ("output.weight", "F32", &[2, 48], vals(96)),
            ("blk.0.attn_q.weight", "F32", &[4, 64], vals(256)),
        ]),
    );
    let o = run::quantscope(&[
        "scan",
        bad.to_str().unwrap(),
        "--imatrix",
        &golden("small.gguf"),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(run::text(&o.stderr).contains("it holds 32 values, the tensor has 48 columns"));
    let err = run::assert_refused(&["scan", path, "--imatrix", &golden("bad_model.gguf")]);
    assert!(err.contains("is not an importance matrix"), "{err}");
}

#[test]
fn worked_arithmetic_shows_the_weights_the_search_used() {
    use quantscope::core::analyse_weighted;
    use quantscope::core::explain::{FormatBlock, explain_channel};
    let m = wide();
    let imp = loud_importance(256);
    for name in ["q4_k", "q6_k", "q2_k"] {
        let c = preset(name, PresetOptions::default()).unwrap();
        let r = analyse_weighted(&m, &c, Some(&imp), Options::ONE_CONFIG).unwrap();
        let e = explain_channel(&m, &r, 2);
        let w = e.format.as_ref().unwrap();
        // The blocks are the report's: the row was encoded again with the importance.
        for b in &w.blocks {
            let FormatBlock::KQuant { cols, step, .. } = *b else {
                panic!("{name}")
            };
            assert_eq!(step, r.blocks.at(r.block_index(2, cols.0)).scale, "{name}");
        }
        let sw = w.weights.as_ref().unwrap();
        assert!(sw.weighted && sw.values.len() == 256, "{name}");
        if name == "q6_k" {
            assert_eq!(
                sw.values,
                imp.values(),
                "Q6_K weighs by the importance alone"
            );
            assert!(sw.sigma2.is_empty());
        } else {
            // a · sqrt(σ² + x²): the loud columns weigh most.
            let x = m.values().row(2).to_vec();
            let s2 = sw.sigma2[0];
            for c in [0, 3, 77, 100] {
                let want = imp.values()[c] * (s2 + x[c] * x[c]).sqrt();
                assert_eq!(sw.values[c], want, "{name} column {c}");
            }
        }
        let lines = quantscope::io::export::worked_arithmetic(&e);
        assert!(
            lines
                .iter()
                .any(|l| l.contains("search weights (with the importance a of each column)")),
            "{name}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.trim_start().starts_with("weights: ")),
            "{name}"
        );
    }
    // Without importance: the reference's weights, said so.
    let c = preset("q4_k", PresetOptions::default()).unwrap();
    let r = analyse_with(&m, &c, Options::ONE_CONFIG).unwrap();
    let sw = explain_channel(&m, &r, 0).format.unwrap().weights.unwrap();
    assert!(!sw.weighted);
    assert_eq!(sw.rule, "w = sqrt(Σx²/32 over the sub-block) + |x|");
}

// Real models: all-MiniLM-L6-v2 with an importance matrix of its first layer's real
// activations, Gemma 3 270M Q4_K_M with a synthetic one (tests/golden/imatrix/, written by
// generate_imatrix_models.py).

use crate::common::models;

fn real_model(variable: &str, fetch: &str) -> std::path::PathBuf {
    std::env::var_os(variable)
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_file())
        .or_else(|| models::fetch_once(fetch, variable))
        .unwrap_or_else(|| panic!("{variable} is not set and `bash .ci/run {fetch}` failed"))
}

fn models_fixture() -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(golden("models.json")).unwrap()).unwrap()
}

#[test]
fn minilm_layer_quantizes_with_its_imatrix_exactly() {
    use quantscope::core::format::{Encoded, Format};
    use quantscope::io::imatrix::Imatrix;
    let path = real_model("QUANTSCOPE_MINILM", "fetch-minilm");
    let fx = models_fixture();
    let f = &fx["ffn_down"];
    let tensor = f["tensor"].as_str().unwrap();
    let m = quantscope::io::load_path_tensor(&path, Some(tensor)).unwrap();
    // The checkpoint's name finds llama.cpp's entry.
    let imp = Imatrix::open(std::path::Path::new(&golden("minilm.gguf")))
        .unwrap()
        .importance(tensor, m.shape(), None)
        .unwrap();
    let mut bytes = Vec::new();
    for row in m.values().rows() {
        let x = row.to_vec();
        let mut enc = Encoded::default();
        let mut v = vec![0.0; x.len()];
        Format::Q4K
            .encode_row_weighted(&x, Some(imp.values()), &mut enc, &mut v)
            .unwrap();
        bytes.extend(Format::Q4K.pack(&enc));
    }
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01B3);
    }
    assert_eq!(
        format!("{h:016x}"),
        f["q4_k_bytes"].as_str().unwrap(),
        "libgguf's bytes"
    );
    // report --imatrix: the importance-weighted error of libgguf's reconstruction, and the
    // summary of the entry.
    let v = run::json(&[
        "report",
        path.to_str().unwrap(),
        "--tensor",
        tensor,
        "--preset",
        "q4_k",
        "--imatrix",
        &golden("minilm.gguf"),
        "-f",
        "json",
    ]);
    let got = v["overall"]["imatrix_mse"].as_f64().unwrap();
    let want = f["q4_k_imatrix_mse"].as_f64().unwrap();
    assert!((got - want).abs() <= 1e-9 * want, "{got} vs {want}");
    let e = &fx["entries"]["blk.0.ffn_down.weight"];
    assert_eq!(v["importance"]["top"][0][0], e["top_column"]);
    let share = v["importance"]["top_percent_share"].as_f64().unwrap();
    assert!((share - e["top_percent_share"].as_f64().unwrap()).abs() < 1e-9);
    assert!(
        v["importance"]["quantized_with"]
            .as_str()
            .unwrap()
            .contains("blk.0.ffn_down.weight")
    );
    // Without the importance Q4_K's weighted error is higher, as libgguf's is.
    let plain = analyse_with(
        &m,
        &preset("q4_k", PresetOptions::default()).unwrap(),
        Options::ONE_CONFIG,
    )
    .unwrap();
    let o = imatrix_errors(&m, &plain, &imp);
    let want = f["q4_k_plain_imatrix_mse"].as_f64().unwrap();
    let got_plain = o.overall.imatrix_mse.unwrap();
    assert!(
        (got_plain - want).abs() <= 1e-9 * want,
        "{got_plain} vs {want}"
    );
    assert!(got < got_plain);
}

#[test]
fn a_gemma_tensor_finds_its_entry_by_its_gguf_name() {
    let path = real_model("QUANTSCOPE_GEMMA", "fetch-gemma");
    let fx = models_fixture();
    for (tensor, preset) in [
        ("blk.3.ffn_down.weight", "q4_k"),
        ("blk.3.attn_output.weight", "q4_0"),
    ] {
        let v = run::json(&[
            "report",
            path.to_str().unwrap(),
            "--tensor",
            tensor,
            "--preset",
            preset,
            "--imatrix",
            &golden("gemma.gguf"),
            "--no-ladder",
            "-f",
            "json",
        ]);
        assert!(
            v["importance"]["quantized_with"]
                .as_str()
                .unwrap()
                .contains(tensor)
        );
        assert_eq!(
            v["importance"]["top"][0][0],
            fx["gemma"][tensor]["top_column"]
        );
        assert!(v["overall"]["imatrix_mse"].as_f64().unwrap() > 0.0);
    }
    // Shown as stored, the flags need a preset.
    let err = run::assert_refused(&[
        "report",
        path.to_str().unwrap(),
        "--tensor",
        "blk.3.ffn_down.weight",
        "--imatrix",
        &golden("gemma.gguf"),
    ]);
    assert!(
        err.contains("give a preset (such as --preset q4_k)"),
        "{err}"
    );
}
