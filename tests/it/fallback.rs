//! llama.cpp's fallbacks (`tensor_type_fallback` in llama.cpp's `src/llama-quant.cpp`):
//! a k-quant on rows its 256-value super-blocks do not divide is quantized as the fallback
//! type llama-quantize would use, in the format ladder, with `--preset`, in `scan` and in
//! `scan --budget`, and rows that no fallback fits are refused with the reason.

use std::path::PathBuf;

use quantscope::core::fallback::{FallbackError, resolve};
use quantscope::core::format_ladder::{Selection, format_info, format_ladder};
use quantscope::core::{
    AnalyseError, Config, Matrix, Options, PresetOptions, Report, analyse_with, preset,
};
use quantscope::io::export::Format;
use quantscope::io::load_tensor;
use quantscope::scan::{ScanOptions, scan, scan_with, write_scan};

use crate::common::explorer;
use crate::common::files;
use crate::common::models;
use crate::common::run;
use crate::common::screen as screen_text;

use explorer::{act, key};
use files::{TempFile, f32_bytes, safetensors_bytes, temp_file};
use quantscope::app::Model;
use quantscope::app::keymap::Action;
use quantscope::runtime::settle;
use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use run::{assert_refused, quantscope, text};
use screen_text::screen;

fn minilm() -> PathBuf {
    let Some(path) = std::env::var_os("QUANTSCOPE_MINILM")
        .map(PathBuf::from)
        .or_else(|| models::fetch_once("fetch-minilm", "QUANTSCOPE_MINILM"))
    else {
        panic!(
            "all-MiniLM-L6-v2 could not be fetched and QUANTSCOPE_MINILM is not set; \
             `eval \"$(bash .ci/run fetch-minilm)\"` fetches it"
        );
    };
    path
}

fn config(name: &str) -> Config {
    preset(name, PresetOptions::default()).unwrap()
}

fn analysis(m: &Matrix, name: &str) -> Result<Report, AnalyseError> {
    analyse_with(m, &config(name), Options::ONE_CONFIG)
}

/// Rows whose spreads differ by decades.
fn matrix(rows: usize, cols: usize) -> Matrix {
    let data: Vec<Vec<f32>> = (0..rows)
        .map(|r| {
            (0..cols)
                .map(|c| ((r * 13 + c * 5) as f32 * 0.291).sin() * 10f32.powi(r as i32 % 3 - 1))
                .collect()
        })
        .collect();
    let refs: Vec<&[f32]> = data.iter().map(Vec::as_slice).collect();
    Matrix::from_rows(&refs).unwrap()
}

/// Every figure of two reports that could differ, value by value.
fn assert_same_analysis(a: &Report, b: &Report) {
    assert_eq!(a.shape, b.shape);
    assert_eq!(a.overall, b.overall);
    assert_eq!(a.memory, b.memory);
    assert_eq!(a.config, b.config);
    assert_eq!(a.channels.len(), b.channels.len());
    for (x, y) in a.channels.iter().zip(&b.channels) {
        assert_eq!(x.metrics, y.metrics);
    }
    let (rows, cols) = a.shape;
    for r in 0..rows {
        for c in 0..cols {
            assert_eq!(a.code(r, c), b.code(r, c), "({r}, {c})");
            assert_eq!(
                a.dequantized(r, c).to_bits(),
                b.dequantized(r, c).to_bits(),
                "({r}, {c})"
            );
        }
    }
}

#[test]
fn minilm_rows_of_384_under_q4_k_are_q5_0s_exactly() {
    let path = minilm();
    let query = load_tensor(&path, "encoder.layer.0.attention.self.query.weight").unwrap();
    assert_eq!(query.shape(), (384, 384));

    // --preset q4_k: Q5_0's analysis, labelled.
    let q4k = analysis(&query, "q4_k").unwrap();
    let q5_0 = analysis(&query, "q5_0").unwrap();
    assert_same_analysis(&q4k, &q5_0);
    let f = q4k.fallback.expect("q4_k falls back on rows of 384");
    assert_eq!(f.label(), "q4_k -> q5_0 (rows of 384)");
    assert_eq!(q5_0.fallback, None);
    assert_eq!(q4k.memory.bits_per_weight, 5.5);
    assert!(q4k.applied().starts_with("q4_k -> q5_0 (rows of 384): "));

    // The format ladder: the entry is Q5_0's, with its bits per weight and figures.
    let l = format_ladder(&query, &Selection::parse("q5_0,q4_k,q6_k").unwrap(), None);
    let get = |n: &str| l.entries.iter().find(|e| e.name == n).unwrap();
    let fb = get("q4_k -> q5_0 (rows of 384)");
    let preset = get("q5_0");
    assert_eq!(fb.bits_per_weight, preset.bits_per_weight);
    assert_eq!(fb.total_bytes, preset.total_bytes);
    assert_eq!(fb.parts, preset.parts);
    assert_eq!(fb.measured().unwrap(), preset.measured().unwrap());
    assert_eq!(fb.measured().unwrap().overall, q5_0.overall);
    assert!(fb.about.contains("llama.cpp's fallback"), "{}", fb.about);
    assert_eq!(
        fb.fallback.map(|f| (f.from, f.to, f.cols)),
        Some(("q4_k", "q5_0", 384))
    );
    let q6k = get("q6_k -> q8_0 (rows of 384)");
    assert_eq!(q6k.bits_per_weight, Some(8.5));
    assert_eq!(
        q6k.measured().unwrap().overall,
        analysis(&query, "q8_0").unwrap().overall
    );

    // Rows of 1536 are whole super-blocks: Q4_K as itself.
    let out = load_tensor(&path, "encoder.layer.0.output.dense.weight").unwrap();
    assert_eq!(out.shape(), (384, 1536));
    let l = format_ladder(&out, &Selection::parse("q4_k").unwrap(), None);
    assert_eq!(l.entries[0].name, "q4_k");
    assert_eq!(l.entries[0].fallback, None);
    assert_eq!(l.entries[0].bits_per_weight, Some(4.5));
}

#[test]
fn every_k_quant_falls_back_to_the_type_llama_quantize_uses() {
    let m = matrix(4, 96);
    for (from, to, bits) in [
        ("q2_k", "q4_0", 4.5),
        ("q3_k", "q4_0", 4.5),
        ("q4_k", "q5_0", 5.5),
        ("q5_k", "q5_1", 6.0),
        ("q6_k", "q8_0", 8.5),
    ] {
        let r = analysis(&m, from).unwrap();
        assert_same_analysis(&r, &analysis(&m, to).unwrap());
        assert_eq!(r.memory.bits_per_weight, bits, "{from}");
        assert_eq!(
            r.fallback.unwrap().label(),
            format!("{from} -> {to} (rows of 96)")
        );
    }
}

#[test]
fn a_row_length_no_fallback_fits_is_refused_with_the_reason() {
    let m = matrix(2, 100);
    let want = "q4_k needs rows of a multiple of 256 values and its llama.cpp fallback q5_0 a \
                multiple of 32; rows of 100 fit neither (llama-quantize keeps such a tensor in F16)";
    match analysis(&m, "q4_k") {
        Err(AnalyseError::Fallback(e @ FallbackError::NeitherFits { .. })) => {
            assert_eq!(e.to_string(), want);
        }
        other => panic!("{other:?}"),
    }
    // MXFP4 and NVFP4 are ggml types without a fallback: llama-quantize stops there.
    let mx = resolve(format_info("mxfp4").unwrap(), 48).unwrap_err();
    assert!(mx.to_string().contains("defines no fallback"), "{mx}");

    let l = format_ladder(&m, &Selection::formats(), None);
    let q4k = l.entries.iter().find(|e| e.name == "q4_k").unwrap();
    assert_eq!(q4k.result.as_ref().unwrap_err(), want);
    assert!(!q4k.pareto);
    // No bits per weight, and after every measured entry.
    assert_eq!((q4k.bits_per_weight, q4k.total_bytes), (None, None));
    let unmeasured = l
        .entries
        .iter()
        .position(|e| e.measured().is_none())
        .unwrap();
    assert!(
        l.entries[unmeasured..]
            .iter()
            .all(|e| e.measured().is_none())
    );
    assert!(
        l.entries[..unmeasured]
            .iter()
            .any(|e| e.measured().is_some())
    );
    assert!(l.entries[unmeasured..].iter().any(|e| e.name == "q4_k"));

    // The command line: refused, with the reason.
    let rows: String = (0..2)
        .map(|r| {
            (0..100)
                .map(|c| format!("{}", (r * 100 + c) as f32 / 64.0 - 1.5))
                .collect::<Vec<_>>()
                .join(" ")
                + "\n"
        })
        .collect();
    let file = temp_file("rows_of_100.txt", rows.as_bytes());
    let path = file.to_str().unwrap();
    let err = assert_refused(&["report", path, "--preset", "q4_k", "--no-ladder"]);
    assert!(err.contains("rows of 100 fit neither"), "{err}");
    // And applied through its fallback where it fits.
    let rows96: String = (0..2)
        .map(|r| {
            (0..96)
                .map(|c| format!("{}", (r * 96 + c) as f32 / 64.0 - 1.5))
                .collect::<Vec<_>>()
                .join(" ")
                + "\n"
        })
        .collect();
    let file96 = temp_file("rows_of_96.txt", rows96.as_bytes());
    let o = quantscope(&[
        "report",
        file96.to_str().unwrap(),
        "--preset",
        "q4_k",
        "--no-ladder",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.lines()
            .next()
            .unwrap()
            .starts_with("quantscope: q4_k -> q5_0 (rows of 96): "),
        "{out}"
    );
}

/// Rows of 96 (Q4_K falls back to Q5_0), 100 (no fallback fits) and 256 (Q4_K itself).
fn checkpoint() -> (TempFile, Matrix) {
    let m96 = matrix(4, 96);
    let v96: Vec<f32> = m96.values().iter().copied().collect();
    let v100: Vec<f32> = matrix(2, 100).values().iter().copied().collect();
    let v256: Vec<f32> = matrix(4, 256).values().iter().copied().collect();
    let file = temp_file(
        "fallbacks.safetensors",
        &safetensors_bytes(&[
            ("rows_of_100", "F32", &[2, 100], f32_bytes(&v100)),
            ("rows_of_256", "F32", &[4, 256], f32_bytes(&v256)),
            ("rows_of_96", "F32", &[4, 96], f32_bytes(&v96)),
        ]),
    );
    (file, m96)
}

#[test]
fn scan_applies_the_fallback_and_says_so() {
    let (file, m96) = checkpoint();
    let s = scan(&file, &config("q4_k")).unwrap();
    let row = |n: &str| s.rows.iter().find(|r| r.name == n).unwrap();
    let r96 = row("rows_of_96");
    assert_eq!(r96.fallback.unwrap().label(), "q4_k -> q5_0 (rows of 96)");
    assert_eq!(r96.bits_per_weight, 5.5);
    assert_eq!(r96.tensor.metrics, analysis(&m96, "q5_0").unwrap().overall);
    assert_eq!(row("rows_of_256").fallback, None);
    assert_eq!(row("rows_of_256").bits_per_weight, 4.5);
    let failed = s.failed.iter().find(|f| f.name == "rows_of_100").unwrap();
    assert!(
        failed.error.contains("rows of 100 fit neither"),
        "{}",
        failed.error
    );

    let mut out = Vec::new();
    write_scan(&mut out, &s, Format::Table).unwrap();
    let table = String::from_utf8(out).unwrap();
    assert!(
        table.contains("q4_k -> q5_0 (rows of 96): 1 tensor"),
        "{table}"
    );
    let mut out = Vec::new();
    write_scan(&mut out, &s, Format::Json).unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let t = json["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "rows_of_96")
        .unwrap();
    assert_eq!(t["fallback"]["from"], "q4_k");
    assert_eq!(t["fallback"]["to"], "q5_0");
    assert_eq!(t["fallback"]["cols"], 96);
}

#[test]
fn scan_budget_measures_the_k_quants_through_their_fallbacks() {
    let (file, m96) = checkpoint();
    let s = scan_with(
        &file,
        &config("lesson"),
        ScanOptions {
            budget: Some(5.5),
            ..ScanOptions::default()
        },
        &quantscope::scan::NoProgress,
    )
    .unwrap();
    let r96 = s.rows.iter().find(|r| r.name == "rows_of_96").unwrap();
    let best = r96.best.clone().expect("something fits 5.5 bits");
    // The budget's ladder is the one with the fallbacks measured: Q4_K's entry is Q5_0's.
    let ladder = format_ladder(&m96, &Selection::all(), None);
    let fb = ladder
        .entries
        .iter()
        .find(|e| e.name == "q4_k -> q5_0 (rows of 96)")
        .unwrap();
    assert!(fb.measured().is_some());
    assert!(
        ladder
            .entries
            .iter()
            .filter(|e| e.name.starts_with('q') && e.name.contains("_k"))
            .all(|e| e.fallback.is_some() && e.measured().is_some())
    );
    let want = ladder.best_within(5.5).unwrap();
    assert_eq!(best.name, want.name);
    assert_eq!(best.metrics, want.measured().unwrap().overall);
    // Q5_0's error is no larger than the chosen one's: without the fallback, nothing at
    // 5.5 bits or below could be measured as Q4_K here.
    assert!(best.metrics.rmse <= fb.measured().unwrap().overall.rmse);
    assert!(best.bits_per_weight <= 5.5);
}

/// Rows of 96 as the explorer's text, spreads over three decades.
fn text_of_rows_of_96() -> String {
    let m = matrix(4, 96);
    let v = m.values();
    (0..4)
        .map(|r| {
            (0..96)
                .map(|c| format!("{}", v[[r, c]]))
                .collect::<Vec<_>>()
                .join(" ")
                + "\n"
        })
        .collect()
}

/// The explorer's format ladder on rows of 96: Q4_K's entry is its fallback, selected at
/// 80x24 and 120x40; Enter makes Q4_K the configuration, analysed as Q5_0 and titled so.
#[test]
fn the_explorers_ladder_lists_the_fallback_and_enter_applies_it() {
    let mut m = Model::with_text(&text_of_rows_of_96(), None);
    settle(&mut m);
    m.size = (80, 24);
    act(&mut m, Action::Formats);
    let entries = m.analysis.format_ladder.clone().unwrap().entries.clone();
    let at = entries
        .iter()
        .position(|e| e.name == "q4_k -> q5_0 (rows of 96)")
        .unwrap();
    assert_eq!(entries[at].bits_per_weight, Some(5.5));
    for _ in 0..at {
        key(&mut m, KeyCode::Down, KeyModifiers::NONE);
    }
    let s = screen(&m, 80, 24);
    assert!(s.contains("q4_k -> q5_0 (rows of 96)"), "{s}");
    assert!(s.contains("llama.cpp's fallback"), "{s}");
    insta::assert_snapshot!("fallback_ladder_80x24", s);
    m.size = (120, 40);
    let wide = screen(&m, 120, 40);
    assert!(wide.contains("q4_k -> q5_0 (rows of 96)"), "{wide}");
    assert!(wide.contains("iq1_s -> iq4_nl (rows of 96)"), "{wide}");
    insta::assert_snapshot!("fallback_ladder_120x40", wide);

    key(&mut m, KeyCode::Enter, KeyModifiers::NONE);
    assert!(m.overlay.is_none());
    assert_eq!(m.config.format.map(|f| f.name), Some("q4_k"));
    let report = m.analysis.report.clone().expect("the report arrives");
    assert_eq!(
        report.fallback.unwrap().label(),
        "q4_k -> q5_0 (rows of 96)"
    );
    assert_eq!(report.memory.bits_per_weight, 5.5);
    let s = screen(&m, 120, 40);
    assert!(s.contains("q4_k -> q5_0 (rows of 96)"), "{s}");
    // The Settings pane shows the bits applied, not Q4_K's.
    assert!(s.contains("5  [0, 31] as q5_0"), "{s}");
    assert!(s.contains("fixed by q5_0"), "{s}");
}
