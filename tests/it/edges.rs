//! Edge cases as a user meets them on the command line: reduced-range ties, infinite errors
//! in JSON, scans with nothing analysed, tiny scales, messages that quote input, odd
//! configurations and oversized input.

use std::process::{Command, Output};

use crate::common::files;
use crate::common::run;

use files::{f32_bytes, safetensors_bytes, temp_file as temp};
use run::{quantscope_with_input as quantscope, text};

/// The JSON report of `stdin` under `args`, with every value's code.
fn json(args: &[&str], stdin: &str) -> serde_json::Value {
    let mut all = vec!["report", "-", "--format", "json", "--values", "--no-ladder"];
    all.extend_from_slice(args);
    let o = quantscope(&all, Some(stdin.as_bytes()));
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn codes(v: &serde_json::Value, row: usize) -> Vec<i64> {
    v["channels"][row]["codes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_i64().unwrap())
        .collect()
}

#[test]
fn reduced_range_ties_keep_the_code_past_the_range_as_onnx_runtime_does() {
    // ONNX Runtime's quantize_data(x, UINT8, symmetric=False, reduce_range=True) gives
    // scale 2/127, zero point 64 and codes [96, 0, 128]: 1/s is a hair above 63.5, and the
    // clip is to the type's [0, 255], not the reduced [0, 127].
    let v = json(
        &[
            "--preset",
            "ort-uint8",
            "--reduce-range",
            "--granularity",
            "tensor",
        ],
        "0.5, -1, 1\n",
    );
    assert_eq!(codes(&v, 0), [96, 0, 128]);
    assert_eq!(v["blocks"][0]["zero_point"], 64);
    assert_eq!(v["channels"][0]["clipped"], 0);
    assert_eq!(v["config"]["qmax"], 127);
    assert_eq!(v["config"]["clamp"], serde_json::json!([0, 255]));
    assert_eq!(
        v["config"]["summary"],
        "uint8 asymmetric custom [0, 127] clamped to [0, 255], tensor"
    );
    // int4 symmetric reduced [-4, 3]: 3.5 / 1 is a tie that rounds to 4, kept.
    let v = json(
        &[
            "--preset",
            "ort-int4",
            "--reduce-range",
            "--granularity",
            "tensor",
        ],
        "3.5, -1, 0.25\n",
    );
    assert_eq!(codes(&v, 0), [4, -1, 0]);
    // The table header says where codes are clamped.
    let o = quantscope(
        &["report", "-", "--preset", "ort-int4", "--reduce-range"],
        Some(b"3.5, -1, 0.25\n"),
    );
    assert!(
        text(&o.stdout).contains("int4 symmetric custom [-4, 3] clamped to [-8, 7], channel"),
        "{}",
        text(&o.stdout)
    );
    // --code-clamp range keeps the reduced range (PyTorch's fake-quantize style).
    let v = json(
        &[
            "--preset",
            "ort-uint8",
            "--reduce-range",
            "--granularity",
            "tensor",
            "--code-clamp",
            "range",
        ],
        "0.5, -1, 1\n",
    );
    assert_eq!(codes(&v, 0), [96, 0, 127]);
    assert_eq!(v["channels"][0]["clipped"], 1);
}

#[test]
fn infinite_errors_are_strings_in_json_and_null_stays_none() {
    // (q - z) * s overflows: 127 * fl(2 * 3.4028235e38 / 254) is past f32::MAX, as ONNX
    // Runtime's DequantizeLinear also gives (tests/golden/*_edges.json, row 9).
    let v = json(
        &["--preset", "ort-int8", "--granularity", "tensor"],
        "3.4028235e38, 1\n",
    );
    let ch = &v["channels"][0];
    for key in ["mae", "rmse", "max_error"] {
        assert_eq!(ch[key], "inf", "{key}: {ch}");
        assert_eq!(v["overall"][key], "inf", "{key}");
    }
    assert_eq!(ch["sqnr_db"], "-inf");
    assert_eq!(ch["dequantized"], serde_json::json!(["inf", 0.0]));
    // The ladder's rungs too.
    let all = quantscope(
        &["report", "-", "--preset", "ort-int8", "--format", "json"],
        Some(b"3.4028235e38, 1\n"),
    );
    let all: serde_json::Value = serde_json::from_slice(&all.stdout).unwrap();
    assert!(
        all["ladder"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["mae"] == "inf" && r["sqnr_db"] == "-inf")
    );
    // An exact reconstruction still has a null SQNR ("none"), and finite numbers stay numbers.
    let exact = json(&["--preset", "ort-int8"], "1, -1\n");
    assert_eq!(exact["channels"][0]["sqnr_db"], serde_json::Value::Null);
    assert_eq!(exact["channels"][0]["mae"], 0.0);
    // CSV and the table keep writing inf.
    let csv = quantscope(
        &["report", "-", "--preset", "ort-int8", "--format", "csv"],
        Some(b"3.4028235e38, 1\n"),
    );
    assert!(
        text(&csv.stdout).contains(",inf,inf,inf,-inf,"),
        "{}",
        text(&csv.stdout)
    );
}

#[test]
fn an_infinite_scan_gain_is_a_string_in_json() {
    // Per channel both rows are exact (scales 1 and 0.5), per tensor the second is not: the
    // gain is infinite.
    let path = temp(
        "exact-channels.safetensors",
        &safetensors_bytes(&[("w", "F32", &[2, 2], f32_bytes(&[7.0, 1.0, 3.5, 0.5]))]),
    );
    let o = quantscope(&["scan", path.to_str().unwrap(), "--format", "json"], None);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let row = &v["tensors"][0];
    assert_eq!(row["gain_db"], "inf", "{row}");
    assert_eq!(row["channel"]["sqnr_db"], serde_json::Value::Null);
    assert!(row["tensor"]["mae"].as_f64().unwrap() > 0.0);
}

fn scan_of(name: &str, tensors: &[(&str, &str, &[u64], Vec<u8>)]) -> Output {
    let path = temp(name, &safetensors_bytes(tensors));
    quantscope(&["scan", path.to_str().unwrap(), "--format", "json"], None)
}

#[test]
fn a_scan_that_analyses_nothing_exits_2_and_says_why() {
    let nan = f32_bytes(&[1.0, f32::NAN, 2.0, 3.0]);
    let inf = f32_bytes(&[f32::INFINITY, 1.0, 2.0, 3.0]);
    for (name, tensors, why) in [
        (
            "non-finite.safetensors",
            vec![
                ("a", "F32", &[2u64, 2][..], nan.clone()),
                ("b", "F32", &[2, 2][..], inf),
            ],
            "2 tensors failed:\n    a: ",
        ),
        ("empty.safetensors", vec![], "the file holds no tensors"),
        (
            "integers.safetensors",
            vec![("ids", "I32", &[2, 2][..], vec![0; 16])],
            "1 tensor skipped: not floating",
        ),
        (
            "biases.safetensors",
            vec![
                ("b1", "F32", &[4][..], nan.clone()),
                ("b2", "F32", &[4][..], nan.clone()),
            ],
            "2 tensors skipped: one-dimensional",
        ),
    ] {
        let o = scan_of(name, &tensors);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert!(o.stdout.is_empty(), "{name}: {}", text(&o.stdout));
        assert!(err.starts_with("error: "), "{name}: {err}");
        assert!(err.contains("no tensor was analysed"), "{name}: {err}");
        assert!(err.contains(why), "{name}: {err}");
    }
}

#[test]
fn a_scan_where_some_tensors_fail_exits_1_with_the_output_and_a_warning() {
    let o = scan_of(
        "partial.safetensors",
        &[
            ("good", "F32", &[2, 2], f32_bytes(&[1.0, -1.0, 0.5, 0.25])),
            (
                "bad",
                "F32",
                &[2, 2],
                f32_bytes(&[1.0, f32::NAN, 0.5, 0.25]),
            ),
        ],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["tensors"].as_array().unwrap().len(), 1);
    assert_eq!(v["failed"][0]["name"], "bad");
    assert!(
        err.starts_with("warning: 1 of 2 tensors could not be analysed"),
        "{err}"
    );
    assert!(err.contains("\n  bad: "), "{err}");
    // Every tensor analysed: exit 0, nothing on stderr.
    let o = scan_of(
        "whole.safetensors",
        &[("good", "F32", &[2, 2], f32_bytes(&[1.0, -1.0, 0.5, 0.25]))],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(o.stderr.is_empty());
}

/// `-2, -1, 0, 1, 2, 3, 4` times `unit`, repeated to 32 values, as channel text.
fn tiny_row(unit: f32) -> String {
    let values: Vec<String> = (0..32)
        .map(|i| format!("{:e}", unit * (i % 7 - 2) as f32))
        .collect();
    values.join(", ") + "\n"
}

#[test]
fn a_subnormal_scale_gives_what_mlas_gives_under_its_preset() {
    // Scale 4e-45, zero point 5: 1/s is infinite, so 0 · (1/s) is NaN, which MLAS turns into
    // code 0 (tests/golden/int4-g128_asym_g32_tiny.json, row 0).
    let row = tiny_row(1e-44);
    let v = json(
        &["--preset", "int4-g128", "--granularity", "group:32"],
        &row,
    );
    assert_eq!(v["blocks"][0]["zero_point"], 5);
    assert_eq!(&codes(&v, 0)[..7], [0, 0, 0, 15, 15, 15, 15]);
    // Elsewhere the safe rule: 0 gets the zero point and reconstructs to 0.
    let safe = json(
        &[
            "--preset",
            "int4-g128",
            "--granularity",
            "group:32",
            "--non-finite",
            "zero-point",
        ],
        &row,
    );
    assert_eq!(&codes(&safe, 0)[..7], [0, 0, 5, 15, 15, 15, 15]);
    assert_eq!(safe["channels"][0]["dequantized"][2], 0.0);
}

#[test]
fn gguf_blocks_whose_scale_vanishes_get_gguf_py_codes_and_collapse() {
    // d = 4e-44 / 127 is 0 in f32 for Q8_0 (every code 0 already); for Q4_0 d = -5e-45 is
    // subnormal and 1/d = -inf: gguf-py's codes are all nibble 0, and (0 - 8) · -0.0 = +0.0.
    for preset in ["q8_0", "q4_0", "q4_1", "q5_0", "q5_1"] {
        for unit in [1e-44f32, 1e-40] {
            let v = json(&["--preset", preset], &tiny_row(unit));
            let ch = &v["channels"][0];
            assert!(
                codes(&v, 0).iter().all(|&c| c == 0),
                "{preset} {unit}: {ch}"
            );
            assert_eq!(ch["levels_used"], 1, "{preset} {unit}");
            assert_eq!(ch["collapsed"], true, "{preset} {unit}");
            assert_eq!(ch["clipped"], 0, "{preset} {unit}");
            assert_eq!(v["overall"]["collapsed_channels"], 1, "{preset} {unit}");
            let signs: Vec<bool> = ch["dequantized"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap().is_sign_negative())
                .collect();
            if preset != "q4_1" && preset != "q5_1" {
                // Q4_1/Q5_1 add the stored minimum, -0.0 in f16 here.
                assert!(signs.iter().all(|n| !n), "{preset} {unit}: {ch}");
            }
        }
    }
}

#[test]
fn the_lesson_keeps_a_tiny_rows_scale_where_onnx_runtime_does_not() {
    // absmax / 7 is a representable f32: the lesson's rule (only all zero or constant is
    // degenerate) keeps it, so the row gets real codes.
    let row = "1e-38, -2e-38, 5e-39, 0\n";
    let v = json(&["--preset", "lesson"], row);
    assert_eq!(v["blocks"][0]["degenerate"], false);
    assert_eq!(codes(&v, 0), [4, -7, 2, 0]);
    assert_eq!(v["channels"][0]["collapsed"], false);
    assert_eq!(v["config"]["conventions"]["degenerate"], "flat");
    // ONNX Runtime's rule makes the same row degenerate: scale 1, every code 0
    // (tests/golden/ort-int8_sym_channel_edges.json, row 8).
    let v = json(&["--preset", "ort-int8"], row);
    assert_eq!(v["blocks"][0]["degenerate"], true);
    assert_eq!(v["blocks"][0]["scale"], 1.0);
    assert_eq!(codes(&v, 0), [0, 0, 0, 0]);
    // --help says which rule each preset uses.
    let help = text(&quantscope(&["report", "--help"], None).stdout);
    for rule in [
        "one (ONNX Runtime",
        "flat (lesson, calculator",
        "epsilon (PyTorch",
        "zero (GGUF, MLAS",
    ] {
        assert!(help.contains(rule), "{rule}: {help}");
    }
}

#[test]
fn a_reversed_range_says_so_and_a_negative_one_is_accepted() {
    let o = quantscope(&["report", "--range", "5..2"], None);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.contains("code range 5..2 is reversed"), "{err}");
    assert!(!err.contains("does not fit"), "{err}");
    for args in [
        &["report", "--range", "-3..5", "--no-ladder"][..],
        &["report", "--range=-3..5", "--no-ladder"][..],
    ] {
        let o = quantscope(args, None);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o.stderr));
        assert!(text(&o.stdout).contains("custom [-3, 5]"), "{args:?}");
    }
}

/// No byte of `s` is a control character other than a line break.
fn no_controls(s: &[u8]) -> bool {
    !s.iter().any(|&b| (b < 0x20 && b != b'\n') || b == 0x7f)
}

#[test]
fn messages_that_quote_input_escape_its_control_characters() {
    // A token of the text, on stdin.
    let o = quantscope(&["report", "-"], Some(b"1, x\x1b[31mred\x00z, 2\n"));
    assert_eq!(o.status.code(), Some(2));
    assert!(no_controls(&o.stderr), "{:?}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains(r#""x\u{1b}[31mred\"#), "{err}");
    assert!(err.contains(r#"z" is not a number"#), "{err}");
    // A path.
    let o = quantscope(&["report", "/nonexistent/a\x1b]0;title\x07.txt"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(no_controls(&o.stderr), "{:?}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains(r"a\u{1b}]0;title\u{7}.txt"),
        "{}",
        text(&o.stderr)
    );
    // A tensor name from a file, in scan's warning and in its table (the header's JSON
    // spells ESC \u001b).
    let path = temp(
        "names.safetensors",
        &safetensors_bytes(&[
            (
                r"ok\u001b[2J",
                "F32",
                &[2, 2],
                f32_bytes(&[1.0, -1.0, 0.5, 0.25]),
            ),
            (
                r"bad\u001b[2J",
                "F32",
                &[2, 2],
                f32_bytes(&[1.0, f32::NAN, 0.5, 0.25]),
            ),
        ]),
    );
    let o = quantscope(&["scan", path.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(no_controls(&o.stderr), "{:?}", text(&o.stderr));
    assert!(no_controls(&o.stdout), "{:?}", text(&o.stdout));
    assert!(
        text(&o.stderr).contains(r"bad\u{1b}[2J"),
        "{}",
        text(&o.stderr)
    );
    assert!(
        text(&o.stdout).contains(r"ok\u{1b}[2J"),
        "{}",
        text(&o.stdout)
    );
    // A flag value clap refuses.
    let o = quantscope(&["report", "--bits", "1\r2"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(no_controls(&o.stderr), "{:?}", text(&o.stderr));
    assert!(text(&o.stderr).contains(r"'1\r2'"), "{}", text(&o.stderr));
    // A tensor name asked for.
    let o = quantscope(
        &["report", path.to_str().unwrap(), "--tensor", "x\u{1b}[2J"],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(no_controls(&o.stderr), "{:?}", text(&o.stderr));
}

#[test]
fn impossible_configurations_are_refused_with_the_reason() {
    for (args, why) in [
        (
            &["--bits", "1", "--signed", "--range", "narrow"][..],
            "a signed 1-bit range cannot be narrow",
        ),
        (
            &["--range", "2..5"][..],
            "the symmetric zero point 0 lies outside the code range [2, 5]",
        ),
        (
            &["--unsigned", "--range", "2..5"][..],
            "the symmetric zero point 0 lies outside the code range [2, 5]",
        ),
    ] {
        let mut all = vec!["report"];
        all.extend_from_slice(args);
        let o = quantscope(&all, None);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(o.stdout.is_empty(), "{args:?}");
        assert!(
            text(&o.stderr).contains(why),
            "{args:?}: {}",
            text(&o.stderr)
        );
    }
    // The same ranges where they make sense: 1-bit full, 2..5 asymmetric or with ONNX
    // Runtime's midpoint zero point.
    for args in [
        &["--bits", "1", "--signed", "--range", "full"][..],
        &["--range", "2..5", "--scheme", "asymmetric"][..],
        &[
            "--preset",
            "ort-uint4",
            "--scheme",
            "symmetric",
            "--range",
            "2..5",
        ][..],
    ] {
        let mut all = vec!["report", "--no-ladder"];
        all.extend_from_slice(args);
        let o = quantscope(&all, None);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o.stderr));
    }
}

#[cfg(unix)]
#[test]
fn text_input_is_refused_past_its_documented_size() {
    let too_large = "holds more than 256 MiB of text";
    // A stream that never ends: refused once 256 MiB have been read, not read until memory
    // runs out; the explorer refuses it before it opens the terminal.
    for args in [&["report", "/dev/zero"][..], &["/dev/zero"][..]] {
        let o = quantscope(args, None);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            text(&o.stderr).contains(too_large),
            "{args:?}: {}",
            text(&o.stderr)
        );
    }
    // Standard input, through a file so the test does not write 256 MiB into a pipe.
    let zero = std::fs::File::open("/dev/zero").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_quantscope"))
        .args(["report", "-"])
        .stdin(zero)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("<stdin> holds more than 256 MiB"),
        "{}",
        text(&o.stderr)
    );
    // A regular file over the size, refused by its size before it is read (sparse: it takes
    // no disk space).
    let path = temp("huge.txt", b"");
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(quantscope::io::load::MAX_TEXT_BYTES + 1)
        .unwrap();
    let o = quantscope(&["report", path.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains(too_large), "{}", text(&o.stderr));
    std::fs::remove_file(&path).unwrap();
    // A file under the size is read (and here parsed: spaces, so no values).
    let path = temp("blank.txt", &vec![b' '; 1 << 20]);
    let o = quantscope(&["report", path.to_str().unwrap()], None);
    assert!(text(&o.stderr).contains("no values"), "{}", text(&o.stderr));
}

#[test]
fn a_row_whose_stored_scales_are_all_zero_counts_as_collapsed() {
    // Values around 1e-9: Q8_0's f32 d is normal, so gguf-py's codes are ordinary
    // (tests/golden/q8_0_tiny.json, row 1, block 1), but the f16 d stored is 0 and the row
    // reconstructs to zeros. Every rung of the ladder counts it, whatever its codes.
    let tiny: Vec<String> = (0..64)
        .map(|i| format!("{:e}", 1e-9 * f64::from(i % 7 - 2)))
        .collect();
    let loud: Vec<String> = (0..64)
        .map(|i| format!("{}", f64::from(i % 5) - 2.0))
        .collect();
    let input = format!("{}\n{}\n", tiny.join(", "), loud.join(", "));
    let o = quantscope(
        &[
            "report", "-", "--preset", "q8_0", "--format", "json", "--values",
        ],
        Some(input.as_bytes()),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ch = &v["channels"][0];
    assert!(ch["levels_used"].as_u64().unwrap() > 1, "{ch}");
    assert!(
        ch["dequantized"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x == 0.0)
    );
    assert_eq!(ch["collapsed"], true, "{ch}");
    assert_eq!(v["channels"][1]["collapsed"], false);
    for rung in v["ladder"].as_array().unwrap() {
        assert_eq!(rung["collapsed_channels"], 1, "{rung}");
    }
}
