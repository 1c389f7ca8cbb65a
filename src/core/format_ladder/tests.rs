//! The format ladder's tests: bits per weight, refusals, the Pareto front, the active entry.
use super::*;

fn matrix(rows: usize, cols: usize) -> Matrix {
    let data: Vec<Vec<f32>> = (0..rows)
        .map(|r| {
            let spread = 10f32.powi(r as i32 % 4 - 2);
            (0..cols)
                .map(|c| ((r * 31 + c * 7) as f32 * 0.173).sin() * spread)
                .collect()
        })
        .collect();
    let refs: Vec<&[f32]> = data.iter().map(Vec::as_slice).collect();
    Matrix::from_rows(&refs).unwrap()
}

#[test]
fn formats_take_their_layouts_bits() {
    let l = format_ladder(&matrix(4, 512), &Selection::formats(), None);
    let bpw = |n: &str| {
        l.entries
            .iter()
            .find(|e| e.name == n)
            .unwrap()
            .bits_per_weight
            .unwrap()
    };
    assert_eq!(bpw("q2_k"), 2.625);
    assert_eq!(bpw("q3_k"), 3.4375);
    assert_eq!(bpw("q4_k"), 4.5);
    assert_eq!(bpw("q5_k"), 5.5);
    assert_eq!(bpw("q6_k"), 6.5625);
    assert_eq!(bpw("mxfp4"), 4.25);
    assert_eq!(bpw("nvfp4"), 4.5);
    assert_eq!(bpw("nf4"), 4.5);
    // 2048 values: 32 blocks, one absmax scale, one offset.
    assert_eq!(bpw("nf4-dq"), (4.0 * 2048.0 + 8.0 * 32.0 + 64.0) / 2048.0);
    assert_eq!(bpw("fp8-e4m3"), 8.0 + 4.0 * 32.0 / 2048.0);
    assert_eq!(bpw("fp8-e4m3-tensor"), 8.0 + 32.0 / 2048.0);
    assert_eq!(bpw("mxfp4-ocp"), 4.25);
    assert_eq!(bpw("mxfp6-e2m3"), 6.25);
    assert_eq!(bpw("mxfp6-e3m2"), 6.25);
    assert_eq!(bpw("mxfp8-e4m3"), 8.25);
    assert_eq!(bpw("mxfp8-e5m2"), 8.25);
    assert_eq!(bpw("mxint8"), 8.25);
    // E2M1 codes, an E4M3 scale per 16, one f32 per tensor.
    for name in ["nvfp4-ct", "nvfp4-modelopt"] {
        assert_eq!(bpw(name), (4.0 * 2048.0 + 8.0 * 128.0 + 32.0) / 2048.0);
    }
    // Measured entries by bits per weight; the i-quants llama.cpp refuses without an
    // importance matrix have no cost and come last.
    let costs: Vec<Option<f64>> = l.entries.iter().map(|e| e.bits_per_weight).collect();
    let measured = costs.iter().take_while(|b| b.is_some()).count();
    assert!(costs[measured..].iter().all(Option::is_none), "{costs:?}");
    let unmeasured: Vec<&str> = l.entries[measured..]
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(unmeasured, ["iq1_s", "iq2_xxs", "iq2_xs"]);
    assert!(costs[..measured].windows(2).all(|w| w[0] <= w[1]));
    for e in &l.entries[..measured] {
        let sum: f64 = e.parts.iter().map(|p| p.bits_per_weight).sum();
        assert!(
            (sum - e.bits_per_weight.unwrap()).abs() < 1e-12,
            "{}",
            e.name
        );
    }
    let q4k = l.entries.iter().find(|e| e.name == "q4_k").unwrap();
    let parts: Vec<f64> = q4k.parts.iter().map(|p| p.bits_per_weight).collect();
    assert_eq!(parts, [4.0, 0.375, 0.125]);
}

#[test]
fn rows_that_blocks_do_not_divide_fall_back_as_llama_quantize_does() {
    // Rows of 96: Q4_K's 256 do not divide them, Q5_0's 32 do.
    let l = format_ladder(&matrix(3, 96), &Selection::formats(), None);
    let q4k = l
        .entries
        .iter()
        .find(|e| e.name.starts_with("q4_k"))
        .unwrap();
    assert_eq!(q4k.name, "q4_k -> q5_0 (rows of 96)");
    assert_eq!(q4k.bits_per_weight, Some(5.5));
    assert!(q4k.measured().is_some());
    assert_eq!(q4k.fallback.map(|f| f.to), Some("q5_0"));
    let q6k = l
        .entries
        .iter()
        .find(|e| e.name.starts_with("q6_k"))
        .unwrap();
    assert_eq!(q6k.name, "q6_k -> q8_0 (rows of 96)");
    assert_eq!(q6k.bits_per_weight, Some(8.5));
    let mx = l.entries.iter().find(|e| e.name == "mxfp4").unwrap();
    assert!(mx.measured().is_some());
    // Rows of 48: no fallback fits Q4_K's; MXFP4 has none.
    let l = format_ladder(&matrix(3, 48), &Selection::formats(), None);
    let q4k = l.entries.iter().find(|e| e.name == "q4_k").unwrap();
    assert!(q4k.result.as_ref().unwrap_err().contains("fit neither"));
    assert!(!q4k.pareto);
    assert_eq!(q4k.bits_per_weight, None);
    let mx = l.entries.iter().find(|e| e.name == "mxfp4").unwrap();
    assert!(mx.result.as_ref().unwrap_err().contains("no fallback"));
    assert_eq!(mx.bits_per_weight, None);
    // After every measured entry.
    let first_unmeasured = l
        .entries
        .iter()
        .position(|e| e.measured().is_none())
        .unwrap();
    assert!(
        l.entries[first_unmeasured..]
            .iter()
            .all(|e| e.measured().is_none())
    );
}

#[test]
fn the_front_has_no_entry_beaten_on_both_counts() {
    let l = format_ladder(&matrix(8, 256), &Selection::all(), None);
    let measured: Vec<(&Entry, f64, f64)> = l
        .entries
        .iter()
        .filter_map(|e| Some((e, e.bits_per_weight?, e.measured()?.overall.rmse)))
        .collect();
    assert!(measured.iter().any(|(e, _, _)| e.pareto));
    for (e, b, r) in &measured {
        let beaten = measured
            .iter()
            .any(|(_, ob, or)| ob <= b && or <= r && (ob < b || or < r));
        assert_eq!(e.pareto, !beaten, "{}", e.name);
    }
}

#[test]
fn a_quiet_row_collapses_under_a_per_tensor_scale_only() {
    let loud: Vec<f32> = (0..256).map(|i| (i as f32 * 0.37).sin() * 1000.0).collect();
    let quiet: Vec<f32> = (0..256).map(|i| (i as f32 * 0.53).cos() * 1e-3).collect();
    let m = Matrix::from_rows(&[&loud, &quiet]).unwrap();
    let l = format_ladder(&m, &Selection::parse("lesson,q4_k,fp8-e4m3").unwrap(), None);
    let get = |n: &str| l.entries.iter().find(|e| e.name == n).unwrap();
    assert_eq!(get("lesson").measured().unwrap().collapsed_channels, 1);
    assert_eq!(get("q4_k").measured().unwrap().collapsed_channels, 0);
    assert_eq!(get("fp8-e4m3").measured().unwrap().collapsed_channels, 0);
}

#[test]
fn the_active_configuration_marks_its_preset_or_joins_the_ladder() {
    let m = matrix(2, 64);
    let sel = Selection::parse("ort-int8,mxfp4").unwrap();
    let ort = preset("ort-int8", PresetOptions::default()).unwrap();
    let l = format_ladder(&m, &sel, Some(("ort-int8", &ort)));
    assert_eq!(l.entries.len(), 2);
    assert!(l.entries.iter().any(|e| e.name == "ort-int8" && e.active));
    let mut other = ort;
    other.bits = 6;
    let l = format_ladder(&m, &sel, Some(("ort-int8", &other)));
    assert_eq!(l.entries.len(), 3);
    let a = l.entries.iter().find(|e| e.name == "active").unwrap();
    assert!(a.active && a.about.contains("int6"));
}

#[test]
fn selections_parse_groups_and_refuse_unknown_names() {
    assert_eq!(Selection::parse("formats").unwrap(), Selection::formats());
    let s = Selection::parse("q4_k, q4_0,q4_k").unwrap();
    assert_eq!(s.names, vec!["q4_k", "q4_0"]);
    assert!(
        Selection::parse("q9_k")
            .unwrap_err()
            .to_string()
            .contains("q9_k")
    );
    assert!(Selection::parse(" , ").is_err());
}

#[test]
fn an_entry_quantized_with_the_importance_names_the_weighted_quantizer() {
    let q4k = FORMATS.iter().find(|f| f.name == "q4_k").unwrap();
    assert!(q4k.about.contains("quantize_row_q4_K_ref"));
    let weighted = about_of(q4k.about, true);
    assert!(
        weighted.starts_with(
            "llama.cpp Q4_K (quantize_q4_K with the importance as quant_weights): super-blocks"
        ),
        "{weighted}"
    );
    assert_eq!(about_of(q4k.about, false), q4k.about);
    // Text that names no reference function is kept.
    assert_eq!(about_of("int4 symmetric", true), "int4 symmetric");
    // The ladder on a matrix with an importance: the q4_k entry says so.
    let m = Matrix::new(ndarray::Array2::from_shape_fn((2, 256), |(r, c)| {
        ((r * 31 + c * 7) % 23) as f32 / 11.0 - 1.0
    }))
    .unwrap();
    let imp = crate::core::importance::Importance::new(
        (0..256).map(|c| 1.0 + (c % 5) as f32).collect(),
        256,
        crate::core::importance::ImportanceSource::Activations {
            name: "test".into(),
            tokens: 1,
        },
    )
    .unwrap();
    let inputs = Inputs {
        importance: Some(&imp),
        output: None,
    };
    let l = format_ladder_inputs(
        &m,
        &Selection::parse("q4_k").unwrap(),
        None,
        inputs,
        &mut |_, _| true,
    )
    .unwrap();
    let e = l.entries.iter().find(|e| e.name == "q4_k").unwrap();
    assert!(
        e.about.contains("quantize_q4_K with the importance"),
        "{}",
        e.about
    );
}

#[test]
fn a_stop_asked_within_an_entry_ends_it_at_the_next_row_with_no_ladder() {
    use std::time::Instant;
    // IQ3_XXS on 128 rows of 4096 (seconds unoptimised): long enough to be stopped in the
    // middle, with and without the importance (the analysis's own row loop).
    let m = matrix(128, 4096);
    let started = Instant::now();
    let whole = format_ladder(&m, &Selection::parse("iq3_xxs").unwrap(), None);
    let whole_time = started.elapsed();
    assert!(whole.entries[0].measured().is_some());
    let imp = crate::core::importance::Importance::new(
        (0..4096).map(|c| 1.0 + (c % 5) as f32).collect(),
        4096,
        crate::core::importance::ImportanceSource::Activations {
            name: "test".into(),
            tokens: 1,
        },
    )
    .unwrap();
    let sel = Selection::parse("q8_0,iq3_xxs").unwrap();
    for importance in [None, Some(&imp)] {
        let inputs = Inputs {
            importance,
            output: None,
        };
        let mut heard = Vec::new();
        let mut asked = None;
        let l = format_ladder_tracked(&m, &sel, None, inputs, &mut |p| {
            heard.push(p);
            let stop = p.within.is_some_and(|w| w.name == "iq3_xxs");
            if stop {
                asked = Some(Instant::now());
            }
            !stop
        });
        let waited = asked.expect("told of the entry in progress").elapsed();
        assert!(l.is_none(), "stopped: no ladder, not a part of one");
        // q8_0's entry, then iq3_xxs under way (told once, then stopped).
        let last = heard.last().copied().unwrap();
        assert_eq!((last.done, last.total), (1, 2));
        let w = last.within.unwrap();
        assert_eq!((w.name, w.of), ("iq3_xxs", 128));
        assert!(w.rows < 128, "{w:?}");
        assert!(
            heard[..heard.len() - 1]
                .iter()
                .all(|p| p.within.is_none_or(|w| w.name != "iq3_xxs"))
        );
        // The next row ends it, long before the entry would have ended.
        assert!(waited < whole_time / 4, "{waited:?} of {whole_time:?}");
    }
}
