//! The methods' entries of the format ladder: `int4 g128 gptq` beside `int4 g128 rtn`,
//! `int4 g128 awq` beside its ratio 0, with the weights' errors of the method's own
//! reconstruction, the output error the method measured, the cost of GPTQ's and AWQ's stored
//! layout, and sorted and marked like every other entry; in the explorer's format ladder
//! when a method is set, and in `report --formats`.

use std::sync::Arc;

use ndarray::Array2;
use quantscope::app::calibration::Calibration;
use quantscope::app::worker::{Input, Job, Outcome, compute};
use quantscope::core::format_ladder::{
    Entry, FormatLadder, Inputs, Selection, add_method_entries, format_ladder_inputs,
};
use quantscope::core::importance::{Activations, BuiltIn, Tokens};
use quantscope::core::method::awq::{self, AwqConfig};
use quantscope::core::method::gptq::{self, GptqConfig};
use quantscope::core::method::ladder::{WeightError, entries};
use quantscope::core::method::run::{self, Method, Methods, Request, Scheme};
use quantscope::core::output::{Calibration as OutputCalibration, OutputStage};
use quantscope::core::{Matrix, PresetOptions, preset};

/// 8 rows of 256 columns with a loud row and a quiet one.
fn matrix() -> Matrix {
    Matrix::new(Array2::from_shape_fn((8, 256), |(r, c)| {
        let v = (((r * 131 + c * 71) % 97) as f32 / 48.0 - 1.0) * 0.05;
        match r {
            0 => v * 0.01,
            3 => v * 8.0,
            _ => v,
        }
    }))
    .unwrap()
}

fn tokens(width: usize) -> Activations {
    Activations::built_in(width, &BuiltIn::default())
}

fn x_of(t: &Activations) -> Array2<f32> {
    t.values().to_owned()
}

fn scheme() -> Scheme {
    Scheme {
        bits: 4,
        group: Some(128),
        sym: false,
    }
}

fn run_methods(m: &Matrix, x: &Array2<f32>, methods: Vec<Method>) -> Methods {
    let request = Request {
        methods,
        scheme: scheme(),
        ..Request::default()
    };
    run::run(&m.values(), &x.view(), &request, &mut |_, _| true).unwrap()
}

fn find<'a>(entries: &'a [Entry], name: &str) -> &'a Entry {
    entries
        .iter()
        .find(|e| e.name == name)
        .unwrap_or_else(|| panic!("no entry {name}"))
}

#[test]
fn gptq_and_awq_entries_measure_their_own_reconstructions() {
    let m = matrix();
    let t = tokens(256);
    let x = x_of(&t);
    let methods = run_methods(&m, &x, vec![Method::Awq, Method::Gptq]);
    let got = entries(&methods, m.shape(), Some("built-in"), false);
    let names: Vec<&str> = got.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "int4 g128 awq",
            "int4 g128 awq ratio 0",
            "int4 g128 gptq",
            "int4 g128 rtn"
        ]
    );
    let w = m.values();
    let g = gptq::gptq(
        &w,
        &x.view(),
        GptqConfig {
            group: Some(128),
            ..GptqConfig::default()
        },
        None,
        &mut |_, _| true,
    )
    .unwrap()
    .0;
    let gptq_entry = find(&got, "int4 g128 gptq");
    let measured = gptq_entry.measured().unwrap();
    let want = WeightError::of(&w, &g.w_hat.view());
    assert_eq!(measured.overall, want.overall);
    assert_eq!(measured.channels, want.channels);
    let out = measured.output.as_ref().unwrap();
    assert_eq!(out.overall.output_mse, Some(g.error.overall.output_mse));
    assert_eq!(out.tokens, Some(256));
    assert_eq!(out.activations.as_deref(), Some("built-in"));
    let rtn = find(&got, "int4 g128 rtn").measured().unwrap();
    assert_eq!(
        rtn.output.as_ref().unwrap().overall.output_mse,
        Some(g.error_rtn.overall.output_mse)
    );
    let plain = gptq::round_to_nearest(
        &w,
        GptqConfig {
            group: Some(128),
            ..GptqConfig::default()
        },
    );
    assert_eq!(rtn.overall, WeightError::of(&w, &plain.view()).overall);
    // AWQ: its chosen ratio's reconstruction, and ratio 0 = pseudo_quantize_tensor alone
    let a = awq::search(
        &w,
        &x.view(),
        AwqConfig {
            bits: 4,
            group: Some(128),
        },
        &mut |_, _| true,
    )
    .unwrap();
    let awq_entry = find(&got, "int4 g128 awq").measured().unwrap();
    assert_eq!(
        awq_entry.overall,
        WeightError::of(&w, &a.w_hat.view()).overall
    );
    let zero = find(&got, "int4 g128 awq ratio 0").measured().unwrap();
    let pq = awq::pseudo_quantize(
        &w,
        AwqConfig {
            bits: 4,
            group: Some(128),
        },
    );
    assert_eq!(zero.overall, WeightError::of(&w, &pq.values.view()).overall);
    assert_eq!(
        zero.output.as_ref().unwrap().overall.output_mse,
        Some(a.error_rtn.overall.output_mse)
    );
    // GPTQ beats rounding on the output here, not on the weights
    let mse = |e: &Entry| {
        e.measured()
            .unwrap()
            .output
            .as_ref()
            .unwrap()
            .overall
            .output_mse
    };
    assert!(mse(gptq_entry) < mse(find(&got, "int4 g128 rtn")));
    // the cost: 4-bit codes, and per group of 128 an f16 scale and a 4-bit zero point
    for e in &got {
        assert_eq!(e.bits_per_weight, Some(4.0 + 20.0 / 128.0), "{}", e.name);
        assert_eq!(e.total_bytes, Some((8 * 256 * 4 + 16 * 20) / 8));
        let sum: f64 = e.parts.iter().map(|p| p.bits_per_weight).sum();
        assert!((sum - 4.15625).abs() < 1e-12);
    }
}

#[test]
fn act_order_with_groups_pays_for_g_idx() {
    let m = matrix();
    let x = x_of(&tokens(256));
    let methods = run_methods(&m, &x, vec![Method::Gptq]);
    let got = entries(&methods, m.shape(), None, true);
    let g = find(&got, "int4 g128 gptq");
    // 32 bits per input column over 8 rows: 4 bits per weight more
    assert_eq!(g.bits_per_weight, Some(4.0 + 20.0 / 128.0 + 4.0));
    assert!(
        g.parts
            .iter()
            .any(|p| p.name == "g_idx: int32 x 256 columns")
    );
    // its baseline rounds in the original order: no g_idx
    assert_eq!(
        find(&got, "int4 g128 rtn").bits_per_weight,
        Some(4.0 + 20.0 / 128.0)
    );
}

/// The ladder with output errors on `t`, and with the methods' entries added.
fn ladders(m: &Matrix, t: &Activations, methods: &Methods) -> (FormatLadder, FormatLadder) {
    let stage = OutputStage::new(
        m,
        OutputCalibration {
            importance: None,
            tokens: Some(t),
        },
    )
    .unwrap();
    let inputs = Inputs {
        importance: None,
        output: Some(&stage),
    };
    let plain = format_ladder_inputs(m, &Selection::all(), None, inputs, &mut |_, _| true).unwrap();
    let mut with = plain.clone();
    add_method_entries(
        &mut with,
        entries(methods, m.shape(), Some(&t.name()), false),
    );
    (plain, with)
}

#[test]
fn the_entries_are_sorted_and_marked_like_the_others() {
    let m = matrix();
    let t = tokens(256);
    let methods = run_methods(&m, &x_of(&t), vec![Method::Gptq]);
    let (plain, with) = ladders(&m, &t, &methods);
    assert_eq!(with.entries.len(), plain.entries.len() + 2);
    // by bits per weight, then RMSE; the unmeasured last
    let keys: Vec<Option<(f64, f64)>> = with
        .entries
        .iter()
        .map(|e| Some((e.bits_per_weight?, e.measured()?.overall.rmse)))
        .collect();
    let first_none = keys.iter().position(Option::is_none).unwrap_or(keys.len());
    assert!(keys[first_none..].iter().all(Option::is_none));
    for pair in keys[..first_none].windows(2) {
        let (a, b) = (pair[0].unwrap(), pair[1].unwrap());
        assert!(a.0 < b.0 || (a.0 == b.0 && a.1 <= b.1), "{a:?} {b:?}");
    }
    // the fronts drawn again over every entry: an entry is on a front iff nothing beats it
    let points: Vec<Option<(f64, f64, f64)>> = with
        .entries
        .iter()
        .map(|e| {
            let me = e.measured()?;
            Some((
                e.bits_per_weight?,
                me.overall.rmse,
                me.output.as_ref()?.overall.output_mse?,
            ))
        })
        .collect();
    let beaten = |i: usize, k: fn(&(f64, f64, f64)) -> f64| {
        let Some(p) = points[i] else { return false };
        points.iter().enumerate().any(|(j, q)| {
            j != i
                && q.is_some_and(|q| q.0 <= p.0 && k(&q) <= k(&p) && (q.0 < p.0 || k(&q) < k(&p)))
        })
    };
    for (i, e) in with.entries.iter().enumerate() {
        if points[i].is_some() {
            assert_eq!(e.pareto, !beaten(i, |p| p.1), "{}", e.name);
            assert_eq!(e.pareto_output, !beaten(i, |p| p.2), "{}", e.name);
        }
    }
    // the entries the ladder had keep their figures
    for e in &plain.entries {
        let same = with.entries.iter().find(|w| w.name == e.name).unwrap();
        assert_eq!(same.result, e.result);
    }
    // the same bits per weight: among the entries of that cost (a preset's int4 g128 with
    // an f16 scale and a 4-bit zero point too), ordered by RMSE
    let g = with
        .entries
        .iter()
        .position(|e| e.name == "int4 g128 gptq")
        .unwrap();
    let r = with
        .entries
        .iter()
        .position(|e| e.name == "int4 g128 rtn")
        .unwrap();
    let bits = with.entries[g].bits_per_weight;
    let between = &with.entries[g.min(r)..=g.max(r)];
    assert!(between.iter().all(|e| e.bits_per_weight == bits), "{g} {r}");
    // adding nothing changes nothing
    let mut same = plain.clone();
    add_method_entries(&mut same, Vec::new());
    assert_eq!(same, plain);
}

#[test]
fn the_explorer_format_ladder_gains_the_method_entries() {
    let m = Arc::new(matrix());
    let mut config = preset("ort-int8", PresetOptions::default()).unwrap();
    config.bits = 4;
    config.granularity = quantscope::core::Granularity::Group(128);
    config.scheme = quantscope::core::Scheme::Asymmetric;
    let job = |method: Option<Method>| Job {
        generation: 1,
        input: Input::Matrix(Arc::clone(&m)),
        config,
        pinned: None,
        formats: Some("ort-int8"),
        calibration: Some(Arc::new(Calibration::built_in())),
        method: method.map(|me| Request {
            methods: vec![me],
            scheme: Scheme::of(&config),
            ..Request::default()
        }),
        weigh: true,
    };
    let ladder_of = |j: &Job| {
        let mut got = None;
        compute(j, |r| {
            if let Outcome::FormatLadder(l) = r.outcome {
                got = Some(l);
            }
            true
        });
        got.expect("a format ladder")
    };
    let with = ladder_of(&job(Some(Method::Gptq)));
    let without = ladder_of(&job(None));
    assert_eq!(with.entries.len(), without.entries.len() + 2);
    let g = find(&with.entries, "int4 g128 gptq");
    let x = x_of(&tokens(256));
    let want = run_methods(&m, &x, vec![Method::Gptq]);
    let mse = g
        .measured()
        .unwrap()
        .output
        .as_ref()
        .unwrap()
        .overall
        .output_mse;
    assert_eq!(mse, Some(want.weights[0].error.overall.output_mse));
    assert!(without.entries.iter().all(|e| !e.name.contains("gptq")));
}

#[test]
fn report_formats_lists_the_method_entries() {
    use crate::common::files::{f32_bytes, npy_bytes, npy_header, temp_file};
    use crate::common::run::{quantscope, text};
    let m = matrix();
    let data: Vec<f32> = m.values().iter().copied().collect();
    let header = npy_header("<f4", false, "(8, 256)");
    let w = temp_file(
        "ladder_w.npy",
        &npy_bytes((1, 0), &header, &f32_bytes(&data)),
    );
    let o = quantscope(&[
        "report",
        w.to_str().unwrap(),
        "--activations",
        "built-in",
        "--bits",
        "4",
        "--granularity",
        "group:128",
        "--scheme",
        "asymmetric",
        "--method",
        "awq,gptq",
        "--formats",
        "all",
        "--no-ladder",
        "-f",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let formats = v["formats"].as_array().unwrap();
    let entry = |name: &str| {
        formats
            .iter()
            .find(|e| e["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {formats:?}"))
    };
    let weights = v["methods"]["weights"].as_array().unwrap();
    let method = |name: &str| weights.iter().find(|w| w["method"] == name).unwrap();
    for (name, which, key) in [
        ("int4 g128 gptq", "gptq", "output_mse"),
        ("int4 g128 rtn", "gptq", "rtn_output_mse"),
        ("int4 g128 awq", "awq", "output_mse"),
        ("int4 g128 awq ratio 0", "awq", "rtn_output_mse"),
    ] {
        let e = entry(name);
        assert_eq!(e["bits_per_weight"], 4.15625, "{name}");
        assert_eq!(e["output_mse"], method(which)[key], "{name}");
        assert!(e["output_mse"].is_f64(), "{name}");
    }
    // the table says them too
    let o = quantscope(&[
        "report",
        w.to_str().unwrap(),
        "--activations",
        "built-in",
        "--bits",
        "4",
        "--granularity",
        "group:128",
        "--method",
        "gptq",
        "--formats",
        "all",
        "--no-ladder",
    ]);
    let out = text(&o.stdout);
    assert!(out.contains("int4 g128 gptq"), "{out}");
    assert!(out.contains("int4 g128 rtn"), "{out}");
}

#[test]
fn the_formats_view_lists_the_method_entries_at_80x24() {
    use crate::common::explorer::{act, builtin_model};
    use quantscope::app::keymap::Action;
    use quantscope::app::setting::{Direction, Setting};
    let mut m = builtin_model();
    quantscope::app::update(&mut m, quantscope::app::Message::Resized(80, 24));
    act(&mut m, Action::Change(Setting::Method, Direction::Forward));
    act(&mut m, Action::Change(Setting::Method, Direction::Forward));
    assert_eq!(m.method.title(), "GPTQ");
    act(&mut m, Action::Formats);
    let ladder = m.analysis.format_ladder.clone().expect("the format ladder");
    let scheme = m.analysis.methods.as_ref().unwrap().scheme.short();
    let name = format!("{scheme} gptq");
    let at = ladder.entries.iter().position(|e| e.name == name).unwrap();
    // scroll the view to it: its line is on the screen, with its output error
    for _ in 0..at {
        crate::common::explorer::key(
            &mut m,
            crossterm::event::KeyCode::Down,
            crossterm::event::KeyModifiers::NONE,
        );
    }
    m.set_caption(None);
    let s = crate::common::screen::screen(&m, 80, 24);
    assert!(s.contains(&name), "{s}");
    assert!(s.contains(&format!("{scheme} rtn")), "{s}");
    insta::assert_snapshot!("method_formats_gptq_80x24", s);
}
