//! The references at their edges, from fixtures the real libraries made on the generator's
//! machine (`tests/golden/generate_edges.py`, files in `tests/golden/edges/`): bitsandbytes'
//! NF4 double quantization and the torch mean it subtracts, ONNX Runtime at 16 bits with and
//! without `reduce_range`, PyTorch's observers with `reduce_range` and the functions that
//! clamp their codes, and ggml (through libgguf) on MXFP4, NVFP4 and the k-quants at the f32
//! maximum and other values past the formats' reach.

use std::path::PathBuf;

use ndarray::Array2;
use quantscope::core::config::CodeClamp;
use quantscope::core::format::{Format, KQuant, nf4};
use quantscope::core::presets::Overrides;
use quantscope::core::{Matrix, Options, PresetOptions, Scheme, analyse_with, preset};
use serde_json::Value;

use crate::common::files;
use crate::common::golden::{self, f32_of, f32s, fnv1a, hex};
use crate::common::models;

/// Every fixture file a test below reads; `every_fixture_file_is_read_by_a_test` checks that
/// tests/golden/edges holds these and no others.
const FIXTURES: [&str; 23] = [
    "ggml_fp4_edges.json",
    "ggml_kquant_edges.json",
    "nf4_dq.json",
    "ort_16bit_int16_asym.json",
    "ort_16bit_int16_asym_reduce.json",
    "ort_16bit_int16_sym.json",
    "ort_16bit_int16_sym_reduce.json",
    "ort_16bit_uint16_asym.json",
    "ort_16bit_uint16_asym_reduce.json",
    "ort_16bit_uint16_sym.json",
    "ort_16bit_uint16_sym_reduce.json",
    "torch_mean.json",
    "torch_reduce_qint8_asym_channel.json",
    "torch_reduce_qint8_asym_channel_fake.json",
    "torch_reduce_qint8_sym_channel.json",
    "torch_reduce_qint8_sym_channel_fake.json",
    "torch_reduce_qint8_sym_tensor.json",
    "torch_reduce_qint8_sym_tensor_fake.json",
    "torch_reduce_quint8_asym_channel.json",
    "torch_reduce_quint8_asym_channel_fake.json",
    "torch_reduce_quint8_asym_tensor.json",
    "torch_reduce_quint8_asym_tensor_fake.json",
    "torch_reduce_refused.json",
];

fn fixture(name: &str) -> Value {
    assert!(FIXTURES.contains(&name), "{name} is not in FIXTURES");
    golden::json("edges", name)
}

fn usize_of(v: &Value) -> usize {
    v.as_u64().unwrap() as usize
}

fn assert_bits(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(
            g.to_bits(),
            w.to_bits(),
            "{what}: value {i}: {g:e} vs {w:e}"
        );
    }
}

fn f32_hash(v: &[f32]) -> String {
    fnv1a(v.iter().flat_map(|x| x.to_le_bytes()))
}

// ---------------------------------------------------------------------------------------
// The generator's inputs
// ---------------------------------------------------------------------------------------

/// splitmix64 of `seed + i * golden gamma`.
fn splitmix(seed: u64, i: u64) -> u64 {
    let mut z = seed.wrapping_add(i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The top 24 bits of a hash as a float in [0, 1).
fn unit(h: u64) -> f64 {
    (h >> 40) as f64 / f64::from(1u32 << 24)
}

/// The generator's `absmax_like`.
fn absmax_like(n: usize, kind: &str, seed: u64) -> Vec<f32> {
    (0..n as u64)
        .map(|i| {
            let h = splitmix(seed, i);
            let u = unit(h);
            let low = (h & 255) as i32;
            let pick = (h >> 8) & 0xFFFF;
            let v = match kind {
                "narrow" => 0.5 + u / 2.0,
                "decades" => u * 2f64.powi(-(low % 24)),
                "wide" => u * 2f64.powi(-(low % 96)),
                "outliers" if pick.is_multiple_of(97) => 1.0 + u,
                "outliers" => u / 128.0,
                "zeros" if pick.is_multiple_of(3) => 0.0,
                "zeros" => u,
                other => panic!("unknown kind {other}"),
            };
            v as f32
        })
        .collect()
}

/// The generator's `weights`, row-major.
fn weights(rows: usize, cols: usize, seed: u64) -> Vec<f32> {
    let mut out = Vec::with_capacity(rows * cols);
    for r in 0..rows {
        for c in 0..cols {
            let i = 2 * (r * cols + c) as u64;
            let mut v = (unit(splitmix(seed, i)) + unit(splitmix(seed, i + 1)) - 1.0)
                * 2f64.powi(-((r % 13) as i32));
            if c % 211 == 5 {
                v *= 16.0;
            }
            out.push(v as f32);
        }
    }
    out
}

fn matrix(rows: usize, cols: usize, values: Vec<f32>) -> Matrix {
    Matrix::new(Array2::from_shape_vec((rows, cols), values).unwrap()).unwrap()
}

// ---------------------------------------------------------------------------------------
// NF4 with double quantization (bitsandbytes)
// ---------------------------------------------------------------------------------------

/// Every NF4 block's absmax of a flattened tensor, as bitsandbytes' first level finds them.
fn nf4_absmax(x: &[f32]) -> Vec<f32> {
    let mut codes = [0u8; nf4::BLOCK];
    x.chunks(nf4::BLOCK)
        .map(|b| nf4::encode_block(b, &mut codes[..b.len()]))
        .collect()
}

/// One case of nf4_dq.json against `DoubleQuant::new` on the same absmax values.
fn check_dq(case: &Value, x: &[f32], what: &str) {
    let absmax = nf4_absmax(x);
    assert_eq!(absmax.len(), usize_of(&case["blocks"]), "{what}: blocks");
    assert_eq!(f32_hash(&absmax), case["absmax_hash"], "{what}: absmax");
    let dq = nf4::DoubleQuant::new(&absmax);
    let offset = f32_of(&case["offset"]);
    assert_eq!(
        dq.offset.to_bits(),
        offset.to_bits(),
        "{what}: offset {:e}, bitsandbytes' absmax.mean() {offset:e}",
        dq.offset
    );
    assert_eq!(
        fnv1a(dq.codes.iter().copied()),
        case["dq_codes_hash"],
        "{what}: absmax codes"
    );
    assert_eq!(
        f32_hash(&dq.scales),
        case["dq_scales_hash"],
        "{what}: second-level scales"
    );
    let stored = dq.absmax_all();
    assert_eq!(
        f32_hash(&stored),
        case["stored_absmax_hash"],
        "{what}: stored absmax"
    );
    if let Some(want) = case.get("stored_absmax") {
        assert_bits(&stored, &f32s(want), &format!("{what}: stored absmax"));
        let codes: Vec<u64> = dq.codes.iter().map(|&c| u64::from(c)).collect();
        let want: Vec<u64> = case["dq_codes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap())
            .collect();
        assert_eq!(codes, want, "{what}: absmax codes");
    }
}

/// The smallest case: 8 blocks, absmax 1 and seven 2^-24. torch adds them in order
/// (1 + 2^-24 rounds back to 1), so the mean is 0.125 and rows 1..7 store -0.0055664033.
#[test]
fn nf4_dq_offset_is_bitsandbytes_on_generated_matrices() {
    let fx = fixture("nf4_dq.json");
    let mut checked = 0;
    for case in fx["cases"].as_array().unwrap() {
        let shape: Vec<usize> = case["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(usize_of)
            .collect();
        let (rows, cols) = (shape[0], shape[1]);
        let x = match case["matrix"].as_str().unwrap() {
            m if m == "minilm" || m.starts_with("overflow") => continue,
            "weights" => {
                let x = weights(rows, cols, case["seed"].as_u64().unwrap());
                assert_eq!(
                    f32_hash(&x[..rows.min(4) * cols]),
                    case["input_hash"],
                    "input"
                );
                x
            }
            _ => {
                let mut x = vec![0.0f32; rows * cols];
                x[0] = 1.0;
                for r in 1..rows {
                    x[r * cols] = 2f32.powi(-24);
                }
                x
            }
        };
        check_dq(case, &x, &format!("{rows}x{cols}"));
        checked += 1;
    }
    assert_eq!(checked, 6);
}

/// The same case through the `nf4-dq` preset: the stored absmax is each block's step.
#[test]
fn nf4_dq_preset_stores_bitsandbytes_absmax() {
    let fx = fixture("nf4_dq.json");
    let case = &fx["cases"][0];
    let want = f32s(&case["stored_absmax"]);
    assert_eq!(want[1], -0.005_566_403_3);
    let mut x = vec![0.0f32; 8 * 64];
    x[0] = 1.0;
    for r in 1..8 {
        x[r * 64] = 2f32.powi(-24);
    }
    let config = preset("nf4-dq", PresetOptions::default()).unwrap();
    let report = analyse_with(&matrix(8, 64, x), &config, Options::ONE_CONFIG).unwrap();
    let steps: Vec<f32> = report.blocks.iter().map(|b| b.scale).collect();
    assert_bits(&steps, &want, "nf4-dq stored absmax");
}

/// torch's f32 `mean()` on 1 .. 1 000 000 values of five spreads, at every thread count the
/// fixture holds (one for short vectors: threads split only 32 768 values or more).
#[test]
fn torch_mean_matches_torch_at_every_length_and_thread_count() {
    let fx = fixture("torch_mean.json");
    let (mut checked, mut differs) = (0, 0);
    for case in fx["cases"].as_array().unwrap() {
        let n = usize_of(&case["n"]);
        let kind = case["kind"].as_str().unwrap();
        let x = absmax_like(n, kind, case["seed"].as_u64().unwrap());
        let what = format!("n = {n}, {kind}");
        assert_eq!(
            f32_hash(&x[..n.min(1024)]),
            case["head_hash"],
            "{what}: input"
        );
        for s in case["samples"].as_array().unwrap() {
            let i = usize_of(&s[0]);
            assert_eq!(x[i].to_bits(), f32_of(&s[1]).to_bits(), "{what}: x[{i}]");
        }
        for (threads, want) in case["mean"].as_object().unwrap() {
            let threads: usize = threads.parse().unwrap();
            let got = nf4::torch_mean(&x, threads);
            let want = f32_of(want);
            assert_eq!(
                got.to_bits(),
                want.to_bits(),
                "{what}, {threads} threads: {got:e} vs torch {want:e}"
            );
            checked += 1;
        }
        differs += usize::from(f32_of(&case["mean"]["1"]) != f32_of(&case["f64_mean"]));
    }
    assert!(checked > 200, "{checked} means checked");
    // The f64 mean rounded to f32 is not torch's on many of these.
    assert_eq!(differs as u64, fx["f64_mean_differs"].as_u64().unwrap());
    assert!(differs > 20);
}

// ---------------------------------------------------------------------------------------
// Integer presets: ONNX Runtime at 16 bits, PyTorch with reduce_range
// ---------------------------------------------------------------------------------------

/// A golden-schema fixture's settings (see tests/golden/README.md), as the command line's
/// flags give them.
fn overrides_of(fx: &Value) -> Overrides {
    let ov = &fx["overrides"];
    Overrides {
        scheme: ov["scheme"].as_str().map(|s| s.parse::<Scheme>().unwrap()),
        reduce_range: ov["reduce_range"].as_bool().unwrap_or(false),
        granularity: ov["granularity"].as_str().map(|g| g.parse().unwrap()),
        bits: ov["bits"].as_u64().map(|b| b as u8),
        code_clamp: ov["code_clamp"]
            .as_str()
            .map(|c| c.parse::<CodeClamp>().unwrap()),
        ..Overrides::default()
    }
}

/// One golden-schema fixture through its preset and settings: every block's scale and zero
/// point, every code and every value, bit for bit. Returns the values checked.
fn check_golden(name: &str) -> usize {
    let fx = fixture(name);
    let input: Vec<Vec<f32>> = fx["input"].as_array().unwrap().iter().map(f32s).collect();
    let (rows, cols) = (input.len(), input[0].len());
    let m = matrix(rows, cols, input.concat());
    let config = overrides_of(&fx)
        .resolve(fx["preset"].as_str().unwrap())
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let report =
        analyse_with(&m, &config, Options::ONE_CONFIG).unwrap_or_else(|e| panic!("{name}: {e}"));
    let blocks = fx["blocks"].as_array().unwrap();
    assert_eq!(report.blocks.len(), blocks.len(), "{name}: blocks");
    for (i, (got, want)) in report.blocks.iter().zip(blocks).enumerate() {
        assert_eq!(
            got.rows.0,
            usize_of(&want["rows"][0]),
            "{name}: block {i} rows"
        );
        assert_eq!(
            got.cols.1,
            usize_of(&want["cols"][1]),
            "{name}: block {i} columns"
        );
        let scale = f32_of(&want["scale"]);
        assert_eq!(
            got.scale.to_bits(),
            scale.to_bits(),
            "{name}: block {i} scale {:e} vs {scale:e}",
            got.scale
        );
        assert_eq!(
            i64::from(got.zero_point),
            want["zero_point"].as_i64().unwrap(),
            "{name}: block {i} zero point"
        );
    }
    let codes = fx["codes"].as_array().unwrap();
    let values = fx["dequantized"].as_array().unwrap();
    for r in 0..rows {
        let want_codes = codes[r].as_array().unwrap();
        let want_values = f32s(&values[r]);
        for c in 0..cols {
            assert_eq!(
                i64::from(report.code(r, c)),
                want_codes[c].as_i64().unwrap(),
                "{name}: code at ({r}, {c}) of {}",
                input[r][c]
            );
            let got = report.dequantized(r, c);
            assert_eq!(
                got.to_bits(),
                want_values[c].to_bits(),
                "{name}: value at ({r}, {c}): {got:e} vs {:e}",
                want_values[c]
            );
        }
    }
    rows * cols
}

/// One test per golden-schema fixture, named after it.
macro_rules! golden {
    ($($test:ident => $file:literal,)*) => {
        $(
            #[test]
            fn $test() {
                assert!(check_golden($file) > 0);
            }
        )*
    };
}

golden! {
    ort_16bit_int16_asym => "ort_16bit_int16_asym.json",
    ort_16bit_int16_asym_reduce => "ort_16bit_int16_asym_reduce.json",
    ort_16bit_int16_sym => "ort_16bit_int16_sym.json",
    ort_16bit_int16_sym_reduce => "ort_16bit_int16_sym_reduce.json",
    ort_16bit_uint16_asym => "ort_16bit_uint16_asym.json",
    ort_16bit_uint16_asym_reduce => "ort_16bit_uint16_asym_reduce.json",
    ort_16bit_uint16_sym => "ort_16bit_uint16_sym.json",
    ort_16bit_uint16_sym_reduce => "ort_16bit_uint16_sym_reduce.json",
    torch_reduce_qint8_asym_channel => "torch_reduce_qint8_asym_channel.json",
    torch_reduce_qint8_asym_channel_fake => "torch_reduce_qint8_asym_channel_fake.json",
    torch_reduce_qint8_sym_channel => "torch_reduce_qint8_sym_channel.json",
    torch_reduce_qint8_sym_channel_fake => "torch_reduce_qint8_sym_channel_fake.json",
    torch_reduce_qint8_sym_tensor => "torch_reduce_qint8_sym_tensor.json",
    torch_reduce_qint8_sym_tensor_fake => "torch_reduce_qint8_sym_tensor_fake.json",
    torch_reduce_quint8_asym_channel => "torch_reduce_quint8_asym_channel.json",
    torch_reduce_quint8_asym_channel_fake => "torch_reduce_quint8_asym_channel_fake.json",
    torch_reduce_quint8_asym_tensor => "torch_reduce_quint8_asym_tensor.json",
    torch_reduce_quint8_asym_tensor_fake => "torch_reduce_quint8_asym_tensor_fake.json",
}

/// ONNX Runtime's code ranges at every width it has (4, 8, 16 bits), whichever ORT preset
/// the width is reached from: `ort-int8 --bits 4` is ORT's INT4, `ort-int4 --bits 16` its
/// INT16 (`get_qmin_qmax_for_qType`).
#[test]
fn ort_ranges_follow_the_final_width() {
    use Scheme::{Asymmetric as A, Symmetric as S};
    let range = |name: &str, bits: u8, scheme: Scheme, reduce_range: bool| {
        Overrides {
            scheme: Some(scheme),
            reduce_range,
            bits: Some(bits),
            ..Overrides::default()
        }
        .resolve(name)
        .map(|c| c.code_range())
        .map_err(|e| e.to_string())
    };
    for signed_preset in ["ort-int8", "ort-int4"] {
        for (bits, scheme, rr, want) in [
            (4, S, false, (-8, 7)),
            (4, A, false, (-8, 7)),
            (4, S, true, (-4, 3)),
            (4, A, true, (-4, 3)),
            (8, S, false, (-127, 127)),
            (8, A, false, (-128, 127)),
            (8, S, true, (-64, 64)),
            (8, A, true, (-64, 64)),
            (16, S, false, (-32767, 32767)),
            (16, A, false, (-32768, 32767)),
            (16, S, true, (-16384, 16384)),
            (16, A, true, (-16384, 16384)),
        ] {
            assert_eq!(
                range(signed_preset, bits, scheme, rr),
                Ok(want),
                "{signed_preset} {bits} {scheme:?} {rr}"
            );
        }
    }
    for unsigned_preset in ["ort-uint8", "ort-uint4"] {
        for (bits, rr, want) in [
            (4, false, (0, 15)),
            (4, true, (0, 7)),
            (8, false, (0, 255)),
            (8, true, (0, 127)),
            (16, false, (0, 65535)),
            (16, true, (0, 32767)),
        ] {
            for scheme in [S, A] {
                assert_eq!(
                    range(unsigned_preset, bits, scheme, rr),
                    Ok(want),
                    "{unsigned_preset} {bits} {rr}"
                );
            }
        }
    }
    // ORT has no 6-bit type, so no reduced range for one.
    let err = range("ort-int8", 6, S, true).unwrap_err();
    assert!(
        err.contains("ONNX Runtime") && err.contains("4, 8 and 16"),
        "{err}"
    );
}

/// PyTorch refuses a reduced range for symmetric quint8 (its observers raise
/// NotImplementedError), and so does the preset, with torch's reason.
#[test]
fn torch_quint8_symmetric_reduce_range_is_refused() {
    let fx = fixture("torch_reduce_refused.json");
    let o = overrides_of(&fx);
    let err = o
        .resolve(fx["preset"].as_str().unwrap())
        .unwrap_err()
        .to_string();
    let torch = fx["messages"]["channel"].as_str().unwrap();
    assert!(
        err.contains(torch) && err.contains("NotImplementedError"),
        "{err}"
    );
    // Asymmetric quint8 and symmetric qint8 with a reduced range are fine.
    let ok = |name: &str, scheme| {
        Overrides {
            scheme: Some(scheme),
            reduce_range: true,
            ..Overrides::default()
        }
        .resolve(name)
    };
    assert!(ok("torch-quint8", Scheme::Asymmetric).is_ok());
    assert!(ok("torch-qint8", Scheme::Symmetric).is_ok());
}

// ---------------------------------------------------------------------------------------
// ggml (libgguf): MXFP4, NVFP4 and the k-quants past their reach
// ---------------------------------------------------------------------------------------

fn format_of(name: &str) -> Format {
    match name {
        "MXFP4" => Format::Mxfp4,
        "NVFP4" => Format::Nvfp4,
        "Q2_K" => Format::K(KQuant::Q2K),
        "Q3_K" => Format::K(KQuant::Q3K),
        "Q4_K" => Format::K(KQuant::Q4K),
        "Q5_K" => Format::K(KQuant::Q5K),
        "Q6_K" => Format::K(KQuant::Q6K),
        other => panic!("unknown format {other}"),
    }
}

/// MXFP4 and NVFP4 on rows holding the f32 maximum and values past NVFP4's largest scale:
/// ggml's bytes and values, never an infinite reconstruction (MXFP4 at 3.4e38: exponent
/// 253, code 5, 2.5521178e38; NVFP4: scale 448, code 0, 0).
#[test]
fn ggml_fp4_at_the_f32_maximum() {
    let fx = fixture("ggml_fp4_edges.json");
    let input: Vec<Vec<f32>> = fx["input"].as_array().unwrap().iter().map(f32s).collect();
    let about = fx["rows"].as_array().unwrap();
    for case in fx["cases"].as_array().unwrap() {
        let name = case["format"].as_str().unwrap();
        let format = format_of(name);
        for (r, x) in input.iter().enumerate() {
            let what = format!("{name} row {r} ({})", about[r].as_str().unwrap());
            let e = format
                .encode_row(x)
                .unwrap_or_else(|err| panic!("{what}: {err}"));
            assert_eq!(hex(&format.pack(&e)), case["bytes"][r], "{what}: bytes");
            let values = e.decode();
            assert!(values.iter().all(|v| v.is_finite()), "{what}: {values:?}");
            assert_bits(&values, &f32s(&case["dequantized"][r]), &what);
        }
    }
}

/// The generator's `apply_ops`: a row's edits, in f32.
fn apply_edits(base: &[f32], edits: &Value) -> Vec<f32> {
    let mut x = base.to_vec();
    for e in edits.as_array().unwrap() {
        let at = |i: usize| usize_of(&e[i]);
        match e[0].as_str().unwrap() {
            "set" => x[at(1)] = f32_of(&e[2]),
            "scale" => x.iter_mut().for_each(|v| *v *= f32_of(&e[1])),
            "scale_cols" => x[at(1)..at(2)].iter_mut().for_each(|v| *v *= f32_of(&e[3])),
            "zero_cols" => x[at(1)..at(2)].fill(0.0),
            other => panic!("unknown edit {other}"),
        }
    }
    x
}

/// The k-quants on rows of huge, tiny and subnormal values: where ggml's values come back NaN
/// or infinite, quantscope refuses the row and names the super-block; everywhere else its
/// bytes and values are ggml's (all zero where ggml's are, as for Q3_K and Q6_K at 2^60).
#[test]
fn ggml_kquants_past_their_reach_are_refused_or_exact() {
    let fx = fixture("ggml_kquant_edges.json");
    let base = weights(1, 512, 0xC0);
    let rows: Vec<Vec<f32>> = fx["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| apply_edits(&base, &r["edits"]))
        .collect();
    assert_eq!(f32_hash(&rows.concat()), fx["input_hash"], "input");
    let (mut refused, mut exact) = (0, 0);
    for case in fx["cases"].as_array().unwrap() {
        let name = case["format"].as_str().unwrap();
        let format = format_of(name);
        for (r, (x, want)) in rows
            .iter()
            .zip(case["rows"].as_array().unwrap())
            .enumerate()
        {
            let what = format!(
                "{name} row {r} ({})",
                fx["rows"][r]["about"].as_str().unwrap()
            );
            let bad = want["nonfinite_super_blocks"].as_array().unwrap();
            match format.encode_row(x) {
                Ok(e) => {
                    assert!(
                        bad.is_empty(),
                        "{what}: ggml's super-blocks {bad:?} are not finite, quantscope encoded it"
                    );
                    assert_eq!(fnv1a(format.pack(&e)), want["bytes"], "{what}: bytes");
                    let values = e.decode();
                    assert_eq!(f32_hash(&values), want["values"], "{what}: values");
                    assert_eq!(
                        values.iter().all(|&v| v == 0.0),
                        want["all_zero"],
                        "{what}: all zero"
                    );
                    exact += 1;
                }
                Err(err) => {
                    let first = bad
                        .first()
                        .unwrap_or_else(|| panic!("{what}: refused ({err}), ggml encodes it"));
                    let msg = err.to_string();
                    let b = usize_of(first);
                    assert!(
                        msg.contains(&format!(
                            "super-block {b} (columns {}..{})",
                            256 * b,
                            256 * b + 256
                        )),
                        "{what}: {msg}"
                    );
                    refused += 1;
                }
            }
        }
    }
    assert!(
        refused >= 40 && exact >= 40,
        "{refused} refused, {exact} exact"
    );
}

/// The analysis names the row, as the legacy presets name the block whose f16 scale
/// overflows.
#[test]
fn a_kquant_row_ggml_cannot_encode_is_refused_by_row() {
    let mut x = weights(3, 256, 0xC1);
    x[2 * 256 + 9] = f32::MAX;
    let m = matrix(3, 256, x);
    for name in ["q2_k", "q4_k", "q5_k"] {
        let config = preset(name, PresetOptions::default()).unwrap();
        let Err(err) = analyse_with(&m, &config, Options::ONE_CONFIG) else {
            panic!("{name}: a row whose values come back NaN is analysed");
        };
        let err = err.to_string();
        assert!(
            err.starts_with("row 2, super-block 0 (columns 0..256): "),
            "{name}: {err}"
        );
        assert!(
            err.contains("NaN") && err.contains("3.4028235e38"),
            "{name}: {err}"
        );
    }
    // Q3_K and Q6_K give finite values there, as ggml does.
    for name in ["q3_k", "q6_k"] {
        let config = preset(name, PresetOptions::default()).unwrap();
        assert!(
            analyse_with(&m, &config, Options::ONE_CONFIG).is_ok(),
            "{name}"
        );
    }
}

/// Absmax values whose f32 sum overflows: torch's mean is inf and bitsandbytes returns NaN
/// for every value; the `nf4-dq` preset refuses the matrix, naming the first block.
#[test]
fn nf4_dq_refuses_a_mean_that_overflows() {
    let fx = fixture("nf4_dq.json");
    let case = fx["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["matrix"].as_str().unwrap().starts_with("overflow"))
        .unwrap();
    assert_eq!(f32_of(&case["offset"]), f32::INFINITY);
    assert_eq!(case["nan_values"], 256);
    let mut x = vec![0.0f32; 4 * 64];
    x[0] = 3e38;
    x[64] = 3e38;
    x[2 * 64 + 1] = 1.0;
    x[3 * 64 + 5] = -2.0;
    let config = preset("nf4-dq", PresetOptions::default()).unwrap();
    let Err(err) = analyse_with(&matrix(4, 64, x), &config, Options::ONE_CONFIG) else {
        panic!("a matrix whose values come back NaN is analysed");
    };
    let err = err.to_string();
    assert!(err.starts_with("row 0, block 0 (columns 0..64): "), "{err}");
    assert!(err.contains("mean") && err.contains("NaN"), "{err}");
}

/// all-MiniLM-L6-v2's `model.safetensors` (see tests/it/minilm.rs).
fn minilm() -> PathBuf {
    let path = std::env::var_os("QUANTSCOPE_MINILM")
        .map(PathBuf::from)
        .or_else(|| models::fetch_once("fetch-minilm", "QUANTSCOPE_MINILM"))
        .expect(
            "all-MiniLM-L6-v2 could not be fetched and QUANTSCOPE_MINILM is not set: \
             `eval \"$(bash .ci/run fetch-minilm)\"` fetches it",
        );
    assert!(
        path.is_file(),
        "QUANTSCOPE_MINILM={} is not a file",
        path.display()
    );
    path
}

/// MiniLM's six 384x1536 `encoder.layer.*.output.dense.weight`: bitsandbytes' offset and
/// every stored absmax (four of six differ by an ulp of the offset from the f64 mean).
#[test]
fn nf4_dq_offset_is_bitsandbytes_on_minilm() {
    let fx = fixture("nf4_dq.json");
    let path = minilm();
    let mut checked = 0;
    for case in fx["cases"].as_array().unwrap() {
        if case["matrix"] != "minilm" {
            continue;
        }
        let name = case["tensor"].as_str().unwrap();
        let m = quantscope::io::safetensors::load_tensor(&path, name).unwrap();
        let x: Vec<f32> = m.values().iter().copied().collect();
        assert_eq!(
            f32_hash(&x[..4 * m.values().ncols()]),
            case["input_hash"],
            "{name}"
        );
        check_dq(case, &x, name);
        checked += 1;
    }
    assert_eq!(checked, 6, "the fixture's MiniLM cases");
}

#[test]
fn every_fixture_file_is_read_by_a_test() {
    let files = files::json_files(&golden::dir("edges"));
    assert_eq!(
        files, FIXTURES,
        "tests/golden/edges/*.json and FIXTURES differ"
    );
}

/// `--explain` on MXFP4 at the f32 maximum says why the top levels are out of reach.
#[test]
fn explain_says_why_mxfp4_levels_overflow_at_the_f32_maximum() {
    let mut row = vec!["0".to_string(); 32];
    row[0] = "3.4028235e38".into();
    row[1] = "1".into();
    let f = crate::common::files::temp_file("max.txt", (row.join(" ") + "\n").as_bytes());
    let out = crate::common::run::quantscope(&[
        "report",
        f.to_str().unwrap(),
        "--preset",
        "mxfp4",
        "--explain",
        "--no-ladder",
    ]);
    let text = crate::common::run::text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::run::text(&out.stderr)
    );
    // ggml's floor(log2f(amax)) is 128: log2f rounds 127.99999... up.
    assert!(
        text.contains("= 128 (log2f rounds up: amax is below 2^128) → e = 128 - 2 + 127 = 253"),
        "{text}"
    );
    assert!(
        text.contains("levels 4 and 6 × 2^126 pass f32's largest value"),
        "{text}"
    );
    assert!(text.contains("8 and 12 × 2^125"), "{text}");
}
