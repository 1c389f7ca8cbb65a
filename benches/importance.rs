//! Times quantscope's work with an importance vector, for `benches/compare_importance.py`,
//! which times the references on the same arrays in the same run (a timing program, not a
//! criterion benchmark: built by `cargo bench --no-run`, run once per round).
//!
//! ```text
//! importance encode W.npy A.npy TYPE...   weighted k-quant encoding of every row
//! importance output W.npy X.npy PRESET    the output error X·(W − Ŵ)ᵀ of W under PRESET
//! importance bytes W.npy A.npy TYPE...    an i-quant or ternary encoder alone, into bytes
//! ```
//!
//! `encode`: for each type (`Q2_K` .. `Q6_K`), every row of `W` encoded with the importance
//! vector `A` (one f32 per column) as `llama-quantize --imatrix` does
//! ([`Format::encode_row_weighted`]: the codes, the packed scales and each row's
//! reconstruction), rows in parallel on rayon's pool; one warm-up run, then one timed run.
//! Prints `TYPE MS`. With `QS_BYTES_DIR` set, also writes the packed bytes of the timed run
//! to `QS_BYTES_DIR/TYPE.bin`, for the script to compare with libgguf's.
//!
//! `bytes`: for each type (`IQ1_S` .. `IQ4_NL`, `TQ1_0`, `TQ2_0`, as
//! `benches/compare_formats.py --iquants` names them), every row of `W` encoded into ggml's
//! bytes and nothing else ([`IQuant::encode_row`] with the importance vector `A` when the
//! type reads one, [`Ternary::encode_row`]), what `libgguf.quantize_rows` returns, rows in
//! parallel on rayon's pool; one warm-up run, then `QS_RUNS` timed runs (default 1). Prints
//! `TYPE MS` (the best run) and, with `QS_BYTES_DIR` set, writes the bytes to
//! `QS_BYTES_DIR/TYPE.bin`.
//!
//! `output`: `W` analysed under `PRESET` (no ladder), then its output errors with the
//! activations `X` (read as `report --activations X` reads them) through one
//! [`OutputStage`]: the first call also forms `‖X w_i‖²` (two products), later calls take
//! it from the stage, so they are one product of `X` by `(W − Ŵ)ᵀ` and its sums. Prints
//! `first MS`, then `output MS` for one more call.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use quantscope::core::format::{Encoded, Format, IQuant, Ternary};
use quantscope::core::output::{Calibration, OutputStage};
use quantscope::core::{Options, PresetOptions, analyse_with, preset};
use quantscope::io::activations::open_activations;
use quantscope::io::load_path;
use rayon::prelude::*;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo bench` passes `--bench`; this program takes no flags.
    let args: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let result = match args.as_slice() {
        ["encode", w, a, types @ ..] if !types.is_empty() => encode(w, a, types),
        ["output", w, x, p] => output(w, x, p),
        ["bytes", w, a, types @ ..] if !types.is_empty() => bytes(w, a, types),
        [] => Ok(()),
        _ => Err(
            "usage: importance encode W.npy A.npy TYPE... | output W.npy X.npy PRESET | bytes W.npy A.npy TYPE..."
                .into(),
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}

/// The rows of the `.npy` matrix at `path`, row-major, and its column count.
fn load(path: &str) -> Result<(Vec<f32>, usize), String> {
    let m = load_path(Path::new(path)).map_err(|e| format!("{path}: {e}"))?;
    let view = m.values();
    Ok((view.iter().copied().collect(), view.ncols()))
}

fn encode(w: &str, a: &str, types: &[&str]) -> Result<(), String> {
    let (x, cols) = load(w)?;
    let (imp, width) = load(a)?;
    if imp.len() != cols || width != cols {
        return Err(format!("{a}: {} values for {cols} columns", imp.len()));
    }
    let bytes_dir = std::env::var_os("QS_BYTES_DIR");
    for &name in types {
        let format = Format::ENCODERS
            .into_iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| format!("unknown type {name}"))?;
        let mut values = vec![0.0f32; x.len()];
        let mut rows: Vec<Encoded> = Vec::new();
        let mut ms = 0.0;
        for _ in 0..2 {
            let t = Instant::now();
            rows = x
                .par_chunks(cols)
                .zip(values.par_chunks_mut(cols))
                .map(|(row, out)| {
                    let mut e = Encoded::default();
                    format
                        .encode_row_weighted(row, Some(&imp), &mut e, out)
                        .map(|()| e)
                })
                .collect::<Result<_, _>>()
                .map_err(|e| format!("{name}: {e}"))?;
            ms = t.elapsed().as_secs_f64() * 1e3;
        }
        println!("{name} {ms:.2}");
        if let Some(dir) = &bytes_dir {
            let bytes: Vec<u8> = rows.iter().flat_map(|e| format.pack(e)).collect();
            let path = Path::new(dir).join(format!("{name}.bin"));
            std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// An encoder of ggml's bytes: an i-quant or a ternary type.
#[derive(Clone, Copy)]
enum Bytes {
    I(IQuant),
    T(Ternary),
}

impl Bytes {
    fn of(name: &str) -> Option<Self> {
        let i = IQuant::ALL.into_iter().find(|q| q.name() == name);
        let t = Ternary::ALL.into_iter().find(|t| t.name() == name);
        i.map(Self::I).or(t.map(Self::T))
    }

    fn row_bytes(self, cols: usize) -> usize {
        match self {
            Self::I(q) => cols / q.block_len() * q.block_bytes(),
            Self::T(t) => cols / quantscope::core::format::ternary::BLOCK * t.block_bytes(),
        }
    }

    fn encode(self, row: &[f32], imp: &[f32], out: &mut [u8]) -> Result<(), String> {
        match self {
            // Every i-quant reads the importance (compare_formats.py gives libgguf the same).
            Self::I(q) => q.encode_row(row, Some(imp), out).map_err(|e| e.to_string()),
            Self::T(t) => {
                t.encode_row(row, out);
                Ok(())
            }
        }
    }
}

fn bytes(w: &str, a: &str, types: &[&str]) -> Result<(), String> {
    let (x, cols) = load(w)?;
    let (imp, width) = load(a)?;
    if imp.len() != cols || width != cols {
        return Err(format!("{a}: {} values for {cols} columns", imp.len()));
    }
    let runs: usize = std::env::var("QS_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(1);
    let bytes_dir = std::env::var_os("QS_BYTES_DIR");
    for &name in types {
        let enc = Bytes::of(name).ok_or_else(|| format!("unknown type {name}"))?;
        let per_row = enc.row_bytes(cols);
        let mut out = vec![0u8; x.len() / cols * per_row];
        let mut best = f64::INFINITY;
        for run in 0..=runs {
            let t = Instant::now();
            x.par_chunks(cols)
                .zip(out.par_chunks_mut(per_row))
                .try_for_each(|(row, o)| enc.encode(row, &imp, o))
                .map_err(|e| format!("{name}: {e}"))?;
            if run > 0 {
                best = best.min(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        println!("{name} {best:.2}");
        if let Some(dir) = &bytes_dir {
            let path = Path::new(dir).join(format!("{name}.bin"));
            std::fs::write(&path, &out).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(())
}

fn output(w: &str, x: &str, name: &str) -> Result<(), String> {
    let m = load_path(Path::new(w)).map_err(|e| format!("{w}: {e}"))?;
    let config = preset(name, PresetOptions::default()).map_err(|e| e.to_string())?;
    let report = analyse_with(&m, &config, Options::ONE_CONFIG).map_err(|e| e.to_string())?;
    let tokens = open_activations(x).map_err(|e| e.to_string())?;
    let calibration = Calibration {
        importance: None,
        tokens: Some(tokens.as_ref()),
    };
    let stage = OutputStage::new(&m, calibration).map_err(|e| e.to_string())?;
    let mut mse = 0.0;
    for label in ["first", "output"] {
        let t = Instant::now();
        let errors = stage
            .errors(&report, &mut |_, _| true)
            .map_err(|e| e.to_string())?
            .ok_or("no output errors")?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        mse = errors.overall.output_mse.unwrap_or(f64::NAN);
        println!("{label} {ms:.2}");
    }
    println!("output_mse {mse:e}");
    Ok(())
}
