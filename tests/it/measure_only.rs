//! The importance as a measure only (`--measure-only`), and the output errors of every rung
//! under `--clip mse-weighted`: the command line's answers against the core's.

use crate::common::{files, run};
use quantscope::core::importance::{Activations, BuiltIn};
use quantscope::core::output::{Calibration, OutputStage};
use quantscope::core::presets::{PresetOptions, preset};
use quantscope::core::{Matrix, Options, analyse_weighted};

/// Four rows of 64 values, one of them quiet, as text and as a matrix.
fn data() -> (files::TempFile, Matrix) {
    let rows: Vec<Vec<f32>> = (0..4)
        .map(|r| {
            let scale = if r == 1 { 0.01 } else { 1.0 };
            (0..64)
                .map(|c| ((r * 7 + c * 3) as f32 * 0.37).sin() * scale)
                .collect()
        })
        .collect();
    let text: String = rows
        .iter()
        .map(|r| {
            r.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" ")
                + "\n"
        })
        .collect();
    let flat: Vec<f32> = rows.concat();
    let m = Matrix::new(ndarray::Array2::from_shape_vec((4, 64), flat).unwrap()).unwrap();
    (files::temp_file("w.txt", text.as_bytes()), m)
}

/// The built-in activations for 64 columns, and their importance.
fn built_in() -> (Activations, quantscope::core::importance::Importance) {
    let x = Activations::built_in(64, &BuiltIn::default());
    let imp = quantscope::core::importance::importance_of(&x).unwrap();
    (x, imp)
}

#[test]
fn measure_only_quantizes_without_the_importance_and_still_measures_with_it() {
    let (f, m) = data();
    let path = f.to_str().unwrap();
    let base = [
        "report",
        path,
        "--preset",
        "q4_0",
        "--no-ladder",
        "-f",
        "json",
        "--values",
    ];
    let weighed = run::json(&[&base[..], &["--activations", "built-in"]].concat());
    let measured =
        run::json(&[&base[..], &["--activations", "built-in", "--measure-only"]].concat());
    let plain = run::json(&base);
    let with = |v: &serde_json::Value| v["importance"]["quantized_with"].clone();
    assert!(with(&weighed).is_string(), "{}", weighed["importance"]);
    assert!(with(&measured).is_null(), "{}", measured["importance"]);
    // The codes are the plain search's, and the measures are there.
    for (a, b) in measured["channels"]
        .as_array()
        .unwrap()
        .iter()
        .zip(plain["channels"].as_array().unwrap())
    {
        assert_eq!(a["codes"], b["codes"]);
    }
    assert_ne!(weighed["channels"], measured["channels"]);
    let out = |v: &serde_json::Value, k: &str| v["overall"][k].as_f64().unwrap();
    // Against the core: the plain Q4_0 measured on the built-in activations.
    let (x, imp) = built_in();
    let stage = OutputStage::new(
        &m,
        Calibration {
            importance: Some(&imp),
            tokens: Some(&x),
        },
    )
    .unwrap();
    let q4_0 = preset("q4_0", PresetOptions::default()).unwrap();
    let r = analyse_weighted(&m, &q4_0, None, Options::ONE_CONFIG).unwrap();
    let e = stage.errors(&r, &mut |_, _| true).unwrap().unwrap();
    assert_eq!(out(&measured, "output_mse"), e.overall.output_mse.unwrap());
    assert_eq!(
        out(&measured, "imatrix_mse"),
        e.overall.imatrix_mse.unwrap()
    );
    // The importance's search makes less of the error it minimises.
    assert!(out(&weighed, "imatrix_mse") < out(&measured, "imatrix_mse"));
}

#[test]
fn measure_only_is_refused_where_it_cannot_hold_with_both_sides_named() {
    let (f, _) = data();
    let path = f.to_str().unwrap();
    // Nothing to measure with.
    let err = run::assert_refused(&["report", path, "--measure-only"]);
    assert!(
        err.contains("--measure-only") && err.contains("--activations"),
        "{err}"
    );
    // A clipping that weighs by what only measures.
    let err = run::assert_refused(&[
        "report",
        path,
        "--activations",
        "built-in",
        "--measure-only",
        "--clip",
        "mse-weighted",
    ]);
    assert!(
        err.contains("--measure-only") && err.contains("--clip mse-weighted"),
        "{err}"
    );
}

#[test]
fn every_rung_has_its_output_error_under_the_weighted_mse_search() {
    let (f, m) = data();
    let v = run::json(&[
        "report",
        f.to_str().unwrap(),
        "--preset",
        "ort-int4",
        "--clip",
        "mse-weighted",
        "--activations",
        "built-in",
        "-f",
        "json",
    ]);
    let ladder = v["ladder"].as_array().expect("a ladder");
    assert!(ladder.len() >= 3, "{ladder:?}");
    let (x, imp) = built_in();
    let stage = OutputStage::new(
        &m,
        Calibration {
            importance: Some(&imp),
            tokens: Some(&x),
        },
    )
    .unwrap();
    let base = preset("ort-int4", PresetOptions::default()).unwrap();
    let mut c = base;
    c.clipping = quantscope::core::config::Clipping::MseWeighted;
    for rung in ladder {
        let got = rung["output_mse"]
            .as_f64()
            .expect("the rung's output error");
        // The rung as the ladder quantized it: the weighted search at its granularity.
        let label = rung["granularity"].as_str().unwrap();
        c.granularity = label.parse().unwrap();
        let r = analyse_weighted(&m, &c, Some(&imp), Options::ONE_CONFIG).unwrap();
        let want = stage
            .errors(&r, &mut |_, _| true)
            .unwrap()
            .unwrap()
            .overall
            .output_mse
            .unwrap();
        assert_eq!(got, want, "{label}");
    }
}
