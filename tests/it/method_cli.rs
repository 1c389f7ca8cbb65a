//! `report --method`, `--act-quant`, `--smoothquant`: the numbers the real binary writes
//! (JSON, CSV, table) equal the core functions' on the layers of the methods' golden
//! fixtures (`tests/golden/methods/`), which agree with the reference code; bad input is one
//! message and exit status 2.

use ndarray::Array2;
use quantscope::core::method::act_quant::{self, ActGranularity};
use quantscope::core::method::awq::{self, AwqConfig};
use quantscope::core::method::gptq::{self, GptqConfig};
use quantscope::core::method::{LayerError, run, smoothquant};
use serde_json::Value;

use super::common::files::{TempFile, f32_bytes, npy_bytes, npy_header, temp_file};
use super::common::run::{assert_refused, quantscope, text};
use super::methods::{fixture, inputs};

/// `a` as a little-endian f32 `.npy` file.
fn npy(name: &str, a: &Array2<f32>) -> TempFile {
    let (r, c) = a.dim();
    let header = npy_header("<f4", false, &format!("({r}, {c})"));
    let data: Vec<f32> = a.iter().copied().collect();
    temp_file(name, &npy_bytes((1, 0), &header, &f32_bytes(&data)))
}

/// `report W --activations X ARGS -f json --no-ladder`: its `methods` value and stderr.
fn methods_json(w: &TempFile, x: &TempFile, args: &[&str]) -> (Value, String) {
    let mut all = vec![
        "report",
        w.to_str().unwrap(),
        "--activations",
        x.to_str().unwrap(),
        "--no-ladder",
        "-f",
        "json",
    ];
    all.extend(args);
    let o = quantscope(&all);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{all:?}: {err}");
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    (v["methods"].clone(), err)
}

/// `got` is `want` as written in shortest round-trip form and read back by serde_json, whose
/// parser (without its `float_roundtrip` feature) may miss the last bit.
fn read_back(what: &str, got: Option<f64>, want: Option<f64>) {
    match (got, want) {
        (Some(g), Some(w)) => assert!(
            (g - w).abs() <= 1e-15 * w.abs(),
            "{what}: {g:e} written for {w:e}"
        ),
        _ => assert_eq!(got, want, "{what}"),
    }
}

/// The JSON's errors are `e`'s, over the layer and per channel.
fn same(what: &str, j: &Value, prefix: &str, e: &LayerError) {
    let key = format!("{prefix}output_mse");
    let o = &e.overall;
    read_back(
        &format!("{what} {key}"),
        j[&key].as_f64(),
        Some(o.output_mse),
    );
    let chans = j["channels"].as_array().unwrap();
    assert_eq!(chans.len(), e.channels.len(), "{what}");
    for (i, (c, want)) in chans.iter().zip(&e.channels).enumerate() {
        let at = format!("{what} channel {i}");
        read_back(&at, c[&key].as_f64(), Some(want.output_mse));
        let db = format!("{prefix}output_sqnr_db");
        read_back(&at, c[&db].as_f64(), want.output_sqnr_db);
    }
}

fn close(what: &str, got: f64, want: f64, rel: f64) {
    assert!(
        (got - want).abs() <= rel * want.abs(),
        "{what}: {got:e} vs the reference's {want:e}"
    );
}

#[test]
fn awq_from_the_command_line_is_the_core_search() {
    let f = fixture("awq.json");
    for case in f["cases"].as_array().unwrap() {
        let spec = &case["input"];
        let (w, x) = inputs(spec);
        let bits = spec["w_bit"].as_u64().unwrap();
        let group = spec["q_group_size"].as_i64().unwrap();
        let (wf, xf) = (npy("w.npy", &w), npy("x.npy", &x));
        let gran = if group > 0 {
            format!("group:{group}")
        } else {
            "channel".to_string()
        };
        let b = bits.to_string();
        let (m, _) = methods_json(&wf, &xf, &["--method", "awq", "-b", &b, "-g", &gran]);
        let config = AwqConfig {
            bits: u32::try_from(bits).unwrap(),
            group: usize::try_from(group).ok(),
        };
        let core = awq::search(&w.view(), &x.view(), config, &mut |_, _| true).unwrap();
        let j = &m["weights"][0];
        assert_eq!(j["method"], "awq");
        same("awq", j, "", &core.error);
        same("awq rtn", j, "rtn_", &core.error_rtn);
        assert_eq!(j["awq_ratio"].as_f64(), Some(core.ratios[core.best].ratio));
        // and the reference's own figures
        assert_eq!(j["awq_ratio"], case["best_ratio"]);
        let want = case["output_mse"].as_f64().unwrap();
        close("awq", j["output_mse"].as_f64().unwrap(), want, 1e-4);
        let want = case["output_mse_rtn"].as_f64().unwrap();
        close("awq rtn", j["rtn_output_mse"].as_f64().unwrap(), want, 1e-4);
    }
}

#[test]
fn gptq_and_rtn_from_the_command_line_are_the_core_functions() {
    let f = fixture("gptq.json");
    for case in f["cases"].as_array().unwrap() {
        let spec = &case["input"];
        let name = spec["name"].as_str().unwrap();
        let (w, x) = inputs(spec);
        let (wf, xf) = (npy("w.npy", &w), npy("x.npy", &x));
        let bits = spec["bits"].as_u64().unwrap();
        let group = spec["groupsize"].as_i64().unwrap();
        let sym = spec["sym"].as_bool().unwrap();
        let act_order = spec["actorder"].as_bool().unwrap();
        let b = bits.to_string();
        let gran = if group > 0 {
            format!("group:{group}")
        } else {
            "channel".to_string()
        };
        let scheme = if sym { "symmetric" } else { "asymmetric" };
        let mut args = vec![
            "--method", "gptq,rtn", "-b", &b, "-g", &gran, "--scheme", scheme,
        ];
        if act_order {
            args.push("--act-order");
        }
        let (m, err) = methods_json(&wf, &xf, &args);
        let config = GptqConfig {
            bits: u32::try_from(bits).unwrap(),
            sym,
            group: usize::try_from(group).ok(),
            act_order,
            ..GptqConfig::default()
        };
        let (core, _) = gptq::gptq(&w.view(), &x.view(), config, None, &mut |_, _| true).unwrap();
        let j = &m["weights"][0];
        assert_eq!(j["method"], "gptq", "{name}");
        same(name, j, "", &core.error);
        same(name, j, "rtn_", &core.error_rtn);
        assert_eq!(j["gptq_dead_columns"], case["dead_columns"], "{name}");
        let want = case["output_mse"].as_f64().unwrap();
        close(name, j["output_mse"].as_f64().unwrap(), want, 0.01);
        // rtn alone is GPTQ's quantizer on W: the same as the figure beside GPTQ
        let r = &m["weights"][1];
        assert_eq!(r["method"], "rtn");
        same(name, r, "", &core.error_rtn);
        let singular = spec["tokens"].as_u64() < spec["cols"].as_u64();
        assert_eq!(j["gptq_singular"].as_bool(), Some(singular), "{name}");
        assert_eq!(err.contains("is singular"), singular, "{name}: {err}");
    }
}

#[test]
fn w8a8_and_smoothquant_from_the_command_line_are_the_core_functions() {
    let f = fixture("smoothquant.json");
    let spec = &f["cases"][0]["input"];
    let (w, x) = inputs(spec);
    let (wf, xf) = (npy("w.npy", &w), npy("x.npy", &x));
    let (m, _) = methods_json(&wf, &xf, &["--smoothquant", "best"]);
    let sweep = smoothquant::sweep(&w.view(), &x.view(), &mut |_, _| true).unwrap();
    let rows = m["w8a8"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "both granularities without --act-quant");
    for (j, g, best) in [
        (&rows[0], ActGranularity::PerTensor, sweep.best_per_tensor),
        (&rows[1], ActGranularity::PerToken, sweep.best_per_token),
    ] {
        assert_eq!(j["activations"], g.name());
        let plain = act_quant::w8a8(&w.view(), &x.view(), g).unwrap();
        same(g.name(), j, "", &plain.error);
        let step = &sweep.steps[best];
        assert_eq!(j["smoothquant_alpha"].as_f64(), Some(step.alpha));
        assert_eq!(j["smoothquant_best"], true);
        let e = match g {
            ActGranularity::PerTensor => &step.per_tensor,
            ActGranularity::PerToken => &step.per_token,
        };
        same(g.name(), j, "smoothquant_", e);
        // smoothing helps here: the loud column is the activations' problem
        assert!(e.overall.output_mse < plain.error.overall.output_mse);
    }
    // the reference's best α per token
    let best = &f["cases"][0]["best_alpha"];
    assert_eq!(
        rows[1]["smoothquant_alpha"], best["per_token_mse"],
        "{best}"
    );
    // a fixed α, per token only
    let (m, _) = methods_json(
        &wf,
        &xf,
        &["--smoothquant", "0.5", "--act-quant", "per-token"],
    );
    let step = smoothquant::at_alpha(&w.view(), &x.view(), 0.5).unwrap();
    let j = &m["w8a8"][0];
    assert_eq!(m["w8a8"].as_array().map(Vec::len), Some(1));
    assert_eq!(j["smoothquant_best"], false);
    same("α 0.5", j, "smoothquant_", &step.per_token);
}

#[test]
fn csv_and_table_carry_the_same_methods() {
    let f = fixture("awq.json");
    let (w, x) = inputs(&f["cases"][0]["input"]);
    let (wf, xf) = (npy("w.npy", &w), npy("x.npy", &x));
    let common = [
        "--method",
        "rtn,awq,gptq",
        "--act-quant",
        "token",
        "--smoothquant",
        "best",
        "-g",
        "group:128",
    ];
    let (m, _) = methods_json(&wf, &xf, &common);
    let mut args = vec![
        "report",
        wf.to_str().unwrap(),
        "--activations",
        xf.to_str().unwrap(),
        "--no-ladder",
        "-f",
        "csv",
    ];
    args.extend(common);
    let o = quantscope(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let csv = text(&o.stdout);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("no column {name} in {header:?}"))
    };
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), w.nrows());
    for (k, method) in ["rtn", "awq", "gptq"].iter().enumerate() {
        let j = &m["weights"][k];
        for (i, row) in rows.iter().enumerate() {
            let want = j["channels"][i]["output_mse"].as_f64().unwrap();
            let got: f64 = row[col(&format!("{method}_output_mse"))].parse().unwrap();
            read_back(&format!("{method} channel {i}"), Some(got), Some(want));
        }
    }
    let ratio: f64 = rows[0][col("awq_ratio")].parse().unwrap();
    assert_eq!(Some(ratio), m["weights"][1]["awq_ratio"].as_f64());
    let alpha: f64 = rows[0][col("w8a8_token_smoothquant_alpha")]
        .parse()
        .unwrap();
    assert_eq!(Some(alpha), m["w8a8"][0]["smoothquant_alpha"].as_f64());
    for i in 0..rows.len() {
        let want = m["w8a8"][0]["channels"][i]["smoothquant_output_mse"].as_f64();
        let got = rows[i][col("w8a8_token_smoothquant_output_mse")]
            .parse()
            .ok();
        read_back(&format!("w8a8 channel {i}"), got, want);
    }
    // the table: a Methods section naming the ratio and the α
    args[6] = "table";
    let o = quantscope(&args);
    let table = text(&o.stdout);
    let section = table
        .split("\nMethods\n")
        .nth(1)
        .expect("a Methods section");
    let ratio = format!("ratio {ratio}");
    assert!(section.contains(&ratio), "{section}");
    assert!(section.contains(&format!("{alpha} (best)")), "{section}");
    assert!(section.contains("awq RTN"), "{section}");
}

#[test]
fn bad_input_is_one_message_and_status_2() {
    let f = fixture("awq.json");
    let (w, x) = inputs(&f["cases"][0]["input"]);
    let (wf, xf) = (npy("w.npy", &w), npy("x.npy", &x));
    let ws = wf.to_str().unwrap();
    let xs = xf.to_str().unwrap();
    // no activations
    let err = assert_refused(&["report", ws, "--method", "awq"]);
    assert!(err.contains("needs activations"), "{err}");
    assert!(err.contains("--activations built-in"), "{err}");
    // a group that does not divide the columns (AWQ reshapes rows into groups)
    let err = assert_refused(&[
        "report",
        ws,
        "--activations",
        xs,
        "--method",
        "awq",
        "-g",
        "group:48",
    ]);
    assert!(
        err.contains("group size 48 does not divide the 128 columns"),
        "{err}"
    );
    // activations of another width
    let narrow = npy(
        "x.npy",
        &Array2::from_shape_fn((x.nrows(), 64), |(t, c)| x[(t, c)]),
    );
    let err = assert_refused(&[
        "report",
        ws,
        "--activations",
        narrow.to_str().unwrap(),
        "--method",
        "gptq",
    ]);
    assert!(err.contains("64 columns per token"), "{err}");
    // a NaN in the weights
    let mut bad = w.clone();
    bad[(2, 5)] = f32::NAN;
    let badf = npy("w.npy", &bad);
    let err = assert_refused(&[
        "report",
        badf.to_str().unwrap(),
        "--activations",
        xs,
        "--method",
        "rtn",
    ]);
    assert!(err.contains("row 2, column 5 (0-based"), "{err}");
    assert!(err.contains("is NaN"), "{err}");
    // bits the methods do not take, an α outside [0, 1], an unknown method
    let err = assert_refused(&[
        "report",
        ws,
        "--activations",
        xs,
        "--method",
        "gptq",
        "-b",
        "12",
    ]);
    assert!(err.contains("12 bits"), "{err}");
    let err = assert_refused(&["report", ws, "--activations", xs, "--smoothquant", "1.5"]);
    assert!(err.contains("from 0 to 1"), "{err}");
    let err = assert_refused(&["report", ws, "--activations", xs, "--method", "hqq"]);
    assert!(err.contains("expected rtn, awq or gptq"), "{err}");
    let err = assert_refused(&[
        "report",
        ws,
        "--activations",
        xs,
        "--method",
        "gptq",
        "--gptq-damp=-1",
    ]);
    assert!(err.contains("dampening"), "{err}");
}

#[test]
fn explain_adds_one_awq_ratios_scales_and_one_gptq_columns_push() {
    let f = fixture("awq.json");
    let (w, x) = inputs(&f["cases"][0]["input"]);
    let request = run::Request {
        methods: vec![run::Method::Awq, run::Method::Gptq],
        scheme: run::Scheme {
            bits: 4,
            group: Some(128),
            sym: false,
        },
        explain: Some(0),
        ..run::Request::default()
    };
    let m = run::run(&w.view(), &x.view(), &request, &mut |_, _| true).unwrap();
    let worked = m.worked.expect("asked for");
    let a = worked.awq.expect("AWQ ran");
    let search = awq::search(&w.view(), &x.view(), request.awq_config(), &mut |_, _| true).unwrap();
    assert_eq!(a.ratio, search.ratios[search.best].ratio);
    for &(j, mean, raw, s) in &a.columns {
        assert_eq!(mean, search.x_mean[j]);
        assert_eq!(s, search.ratios[search.best].scales[j], "column {j}");
        assert_eq!(
            raw / a.norm,
            s,
            "column {j}: s is the clamped power over the norm"
        );
    }
    let p = worked.gptq.expect("GPTQ ran");
    assert_eq!(p.row, 0);
    // the generator's dead column is 9: the first live column is 0
    assert_eq!(p.column, 0);
    assert_eq!(p.err, (p.w - p.q) / p.d);
    assert!(!p.onward.is_empty());
    for &(j, u, before, after) in &p.onward {
        assert_eq!(after, before - p.err * u, "column {j}");
    }
    // the table prints them
    let (wf, xf) = (npy("w.npy", &w), npy("x.npy", &x));
    let o = quantscope(&[
        "report",
        wf.to_str().unwrap(),
        "--activations",
        xf.to_str().unwrap(),
        "--method",
        "awq,gptq",
        "-g",
        "group:128",
        "--scheme",
        "asymmetric",
        "--no-ladder",
        "--explain",
    ]);
    let table = text(&o.stdout);
    let section = table
        .split("\nMethods\n")
        .nth(1)
        .expect("a Methods section");
    assert!(
        section.contains(&format!("AWQ at ratio {}", a.ratio)),
        "{section}"
    );
    assert!(section.contains("GPTQ, row 0, column 0"), "{section}");
    assert!(section.contains("err = (w − q) / U_ii"), "{section}");
}
