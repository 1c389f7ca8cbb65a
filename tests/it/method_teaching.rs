//! The teaching material on methods beyond rounding (assets/scenarios/act-quant-tokens.txt,
//! smoothquant-alpha.txt, assets/exercises/smoothquant-factor.toml, assets/demo/methods.toml):
//! every claim their texts make, checked with the core's functions on their data.

use ndarray::{Array2, ArrayView2, Axis};
use quantscope::core::importance::Tokens;
use quantscope::core::method::act_quant::{self, ActGranularity};
use quantscope::core::method::smoothquant;
use quantscope::teach::assets;
use quantscope::teach::exercise::Ask;

use super::common::run::{quantscope, text};

/// A scenario's weights and its own activations.
fn layer(name: &str) -> (assets::Scenario, Array2<f32>, Array2<f32>) {
    let s = assets::scenario(name).expect("built in");
    let w = s.matrix().unwrap().values().to_owned();
    let t = s.activations().expect("#! token lines");
    let (n, width) = t.shape();
    let mut data = vec![0.0f32; n * width];
    t.read(0, &mut data).unwrap();
    (s, w, Array2::from_shape_vec((n, width), data).unwrap())
}

/// `‖X̂_t Ŵᵀ − X_t Wᵀ‖² / ‖X_t Wᵀ‖²` per token `t`: how much of each token's output W8A8
/// loses.
fn relative_error_per_token(
    w: &ArrayView2<'_, f32>,
    x: &ArrayView2<'_, f32>,
    g: ActGranularity,
) -> Vec<f64> {
    let q = act_quant::w8a8(w, x, g).unwrap();
    let y = x.dot(&w.t());
    let yq = q.activations.values.dot(&q.weights.values.t());
    y.axis_iter(Axis(0))
        .zip(yq.axis_iter(Axis(0)))
        .map(|(a, b)| {
            let e: f64 = a
                .iter()
                .zip(b)
                .map(|(&p, &q)| f64::from(p - q).powi(2))
                .sum();
            let s: f64 = a.iter().map(|&p| f64::from(p).powi(2)).sum();
            e / s
        })
        .collect()
}

#[test]
fn per_tensor_collapses_the_quiet_tokens_and_per_token_rescues_them() {
    let (s, w, x) = layer("act-quant-tokens");
    assert!(s.look.join(" ").contains("values up to 72"));
    let amax = x.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    assert!((72.0..73.0).contains(&amax), "{amax}");
    let quiet = [1usize, 2, 4, 5];
    let loud = [0usize, 3];
    for &t in &quiet {
        let m = x.row(t).iter().fold(0.0f32, |m, v| m.max(v.abs()));
        assert!(m < 0.25, "token {t}: {m}");
        // "more than twice every quiet value"
        assert!(amax / 127.0 > 2.0 * m, "token {t}");
    }
    for &t in &loud {
        assert!(x.row(t).iter().any(|v| v.abs() > 50.0), "token {t}");
    }
    let tensor = act_quant::absmax_int8(&x.view(), false);
    let token = act_quant::absmax_int8(&x.view(), true);
    for &t in &quiet {
        assert!(
            tensor.codes.row(t).iter().all(|&c| c == 0),
            "token {t} per tensor"
        );
        assert!(
            token.codes.row(t).iter().any(|&c| c.abs() == 127),
            "token {t} per token"
        );
    }
    let per_tensor = relative_error_per_token(&w.view(), &x.view(), ActGranularity::PerTensor);
    let per_token = relative_error_per_token(&w.view(), &x.view(), ActGranularity::PerToken);
    for &t in &quiet {
        // all of its signal lost; kept to within a percent
        assert_eq!(per_tensor[t], 1.0, "token {t}");
        assert!(per_token[t] < 0.01, "token {t}: {}", per_token[t]);
    }
    // "the output MSE over all six tokens hides it": less than a tenfold difference
    let mse = |g| {
        act_quant::w8a8(&w.view(), &x.view(), g)
            .unwrap()
            .error
            .overall
            .output_mse
    };
    let (t, k) = (
        mse(ActGranularity::PerTensor),
        mse(ActGranularity::PerToken),
    );
    assert!(k < t && t < 10.0 * k, "{t} {k}");
    // and report --scenario uses the scenario's tokens
    let o = quantscope(&[
        "report",
        "--scenario",
        "act-quant-tokens",
        "--act-quant",
        "per-tensor",
        "-f",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["methods"]["tokens"], 6);
    let got = v["methods"]["w8a8"][0]["output_mse"].as_f64().unwrap();
    assert!((got - t).abs() <= 1e-12 * t, "{got} {t}");
}

/// The largest `|code|` over the columns `cols`: how many of int8's levels they keep.
fn largest_code(codes: &Array2<i8>, cols: &[usize]) -> i8 {
    codes
        .rows()
        .into_iter()
        .flat_map(|r| cols.iter().map(move |&c| r[c].saturating_abs()))
        .max()
        .unwrap_or(0)
}

#[test]
fn smoothquants_alpha_trades_activation_collapse_for_weight_collapse() {
    let (s, w, x) = layer("smoothquant-alpha");
    let quiet: Vec<usize> = (0..8).filter(|&j| j != 2).collect();
    let amax = smoothquant::act_max(&x.view());
    for &j in &quiet {
        assert!(amax[2] > 40.0 * amax[j], "column {j}: {amax:?}");
    }
    let wmax = smoothquant::weight_max(&w.view());
    let side = |alpha: f64| {
        let f = smoothquant::factors(&amax, &wmax, alpha);
        let (xs, ws) = smoothquant::smooth(&w.view(), &x.view(), &f);
        let a = act_quant::absmax_int8(&xs.view(), false);
        let b = act_quant::absmax_int8(&ws.view(), true);
        (
            f,
            largest_code(&a.codes, &quiet),
            largest_code(&b.codes, &quiet),
        )
    };
    // α = 0: the quiet columns' activations on a few codes; the weights keep their range
    let (_, act0, w0) = side(0.0);
    assert!(act0 <= 3, "{act0}");
    assert_eq!(w0, 127);
    // α = 1: column 2 of W multiplied by 58 (max|X_2|), and every row's other weights on a
    // few codes; the activations keep their range
    let (f1, act1, w1) = side(1.0);
    assert!((58.0..59.0).contains(&f1[2]), "{}", f1[2]);
    assert!(s.look.join(" ").contains("multiplied by 58"));
    assert_eq!(act1, 127);
    assert!(w1 <= 5, "{w1}");
    // best: an α strictly between, with less error than either end
    let sweep = smoothquant::sweep(&w.view(), &x.view(), &mut |_, _| true).unwrap();
    let best = &sweep.steps[sweep.best_per_tensor];
    assert!(best.alpha > 0.0 && best.alpha < 1.0, "{}", best.alpha);
    let e = |st: &smoothquant::AlphaStep| st.per_tensor.overall.output_mse;
    assert!(e(best) < e(&sweep.steps[0]) && e(best) < e(&sweep.steps[20]));
    // before rounding, the smoothed layer is the layer
    let f = smoothquant::factors(&amax, &wmax, best.alpha);
    let (xs, ws) = smoothquant::smooth(&w.view(), &x.view(), &f);
    let d = (&xs.dot(&ws.t()) - &x.dot(&w.t()))
        .iter()
        .fold(0.0f32, |m, v| m.max(v.abs()));
    assert!(d < 1e-3, "{d}");
}

#[test]
fn the_smoothquant_exercise_s_choices_are_the_core_s() {
    let ex = assets::exercise("smoothquant-factor").expect("built in");
    let choice = |i: usize| match &ex.steps[i].ask {
        Ask::Choice { options, correct } => options[*correct].clone(),
        other => panic!("step {i}: {other:?}"),
    };
    let s = smoothquant::factors(&[64.0], &[0.25], 0.5);
    assert_eq!(s, vec![16.0]);
    assert_eq!(choice(0), "16");
    assert_eq!((64.0 / s[0], 0.25 * s[0]), (4.0, 4.0));
    assert_eq!(choice(1), "4 and 4");
    let s1 = smoothquant::factors(&[64.0], &[0.25], 1.0);
    assert_eq!(s1, vec![64.0]);
    assert!(choice(2).starts_with("s_j = 64: X'_j reaches 1 and W'_j reaches 16"));
    // the data's column 0 is the column of the intro: max|W_0| = 0.25
    let m = assets::exercise_matrix(&ex).unwrap();
    assert_eq!(smoothquant::weight_max(&m.values())[0], 0.25);
}

#[test]
fn the_methods_demo_loads_both_scenarios() {
    let d = quantscope::teach::script::demo_script("methods").expect("built in");
    let names: Vec<_> = d
        .steps
        .iter()
        .filter_map(|s| s.scenario.as_ref().map(|s| s.name.clone()))
        .collect();
    assert_eq!(names, ["act-quant-tokens", "smoothquant-alpha"]);
}

#[test]
fn a_scenario_header_opens_the_explorer_with_its_method() {
    use quantscope::core::method::act_quant::ActGranularity;
    use quantscope::core::method::choice::Choice;
    use quantscope::core::method::run::{Alpha, Method};
    let s = assets::scenario("smoothquant-alpha").unwrap();
    let want = Choice::W8A8 {
        activations: ActGranularity::PerTensor,
        smoothquant: Some(Alpha::Best),
    };
    assert_eq!(s.method, Some(want));
    let mut m = quantscope::app::Model::with_text("1, 2\n", None);
    quantscope::runtime::settle(&mut m);
    m.load_scenario(&s);
    quantscope::runtime::settle(&mut m);
    assert_eq!(m.method, want);
    let got = m
        .analysis
        .methods
        .clone()
        .expect("SmoothQuant ran on the scenario's tokens");
    let smoothed = got.w8a8[0].smoothquant.as_ref().unwrap();
    assert!(smoothed.best);
    assert!(smoothed.error.overall.output_mse < got.w8a8[0].error.overall.output_mse);
    // a scenario without the keys keeps the method the user chose
    let q = assets::scenario("quiet-loud").unwrap();
    assert_eq!(q.method, None);
    m.load_scenario(&q);
    assert_eq!(m.method, want);
    // the keys in a user's header: one line each, named in errors
    let h = assets::parse_header("mine", "#! method: gptq\n1, 2\n").unwrap();
    assert_eq!(h.method, Some(Choice::Weights(Method::Gptq)));
    let e = assets::parse_header("mine", "#! method: awq\n#! act-quant: per-token\n1, 2\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 2"), "{e}");
    assert!(e.contains("runs one method"), "{e}");
    let e = assets::parse_header("mine", "#! smoothquant: 2\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 1") && e.contains("from 0 to 1"), "{e}");
    let e = assets::parse_header("mine", "#! method: gptq\n#! method: awq\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("given twice"), "{e}");
    // typed into the editor and applied (Alt-k's path): the method follows
    let mut m =
        quantscope::app::Model::with_text("#! method: gptq\nr0: 0.1, -0.7, 0.33, 0.2\n", None);
    m.apply_text_header("typed");
    quantscope::runtime::settle(&mut m);
    assert_eq!(m.method, Choice::Weights(Method::Gptq));
    assert!(m.analysis.methods.is_some());
}
