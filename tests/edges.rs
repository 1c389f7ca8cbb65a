//! Edge cases as a user meets them on the command line: reduced-range ties, infinite errors
//! in JSON, scans with nothing analysed, tiny scales, messages that quote input, odd
//! configurations and oversized input.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn quantscope(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_quantscope"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut input = child.stdin.take().unwrap();
    if let Some(bytes) = stdin {
        // The binary may stop reading early (oversized input): a broken pipe is fine.
        let _ = input.write_all(bytes);
    }
    drop(input);
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

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
