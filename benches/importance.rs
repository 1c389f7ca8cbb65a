//! Times quantscope's work with an importance vector, for `benches/compare_importance.py`,
//! which times the references on the same arrays in the same run (a timing program, not a
//! criterion benchmark: built by `cargo bench --no-run`, run once per round).
//!
//! ```text
//! importance encode W.npy A.npy TYPE...   weighted k-quant encoding of every row
//! importance output W.npy X.npy PRESET    the output error X·(W − Ŵ)ᵀ of W under PRESET
//! ```
//!
//! `encode`: for each type (`Q2_K` .. `Q6_K`), every row of `W` encoded with the importance
//! vector `A` (one f32 per column) as `llama-quantize --imatrix` does
//! ([`Format::encode_row_weighted`]: the codes, the packed scales and each row's
//! reconstruction), rows in parallel on rayon's pool; one warm-up run, then one timed run.
//! Prints `TYPE MS`. With `QS_BYTES_DIR` set, also writes the packed bytes of the timed run
//! to `QS_BYTES_DIR/TYPE.bin`, for the script to compare with libgguf's.
//!
//! `output`: `W` analysed under `PRESET` (no ladder), then its output errors with the
//! activations `X` (read as `report --activations X` reads them) through one
//! [`OutputStage`]: the first call also forms `‖X w_i‖²` (two products), later calls take
//! it from the stage, so they are one product of `X` by `(W − Ŵ)ᵀ` and its sums. Prints
//! `first MS`, then `output MS` for one more call.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use quantscope::core::format::{Encoded, Format};
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
        [] => Ok(()),
        _ => Err("usage: importance encode W.npy A.npy TYPE... | output W.npy X.npy PRESET".into()),
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
