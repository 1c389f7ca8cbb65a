//! Times `core::format` on a matrix from an `.npy` file, for `benches/compare_formats.py`:
//! for each format named on the command line, one warm-up run and then one timed run of the
//! whole work an analysis needs (quantize, dequantize, MAE/RMSE/max error/SQNR in f64,
//! collapsed rows, levels used per row), rows in parallel. Prints `NAME MS MAE` per line.
//!
//! With `--importance IMP.npy` first (one row of one weight per column), every format
//! whose reference reads an importance vector quantizes with it (the i-quants that need one
//! are refused without it).
//!
//! Usage: `cargo run --release --example format_timing -- [--importance IMP.npy] FILE.npy
//! Q4_K Q6_K MXFP4 IQ4_XS ...`

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use quantscope::core::format::{Format, IQuant, Ternary, run_rows_weighted};
use quantscope::io::load_path;

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let importance = if args.first().map(String::as_str) == Some("--importance") && args.len() > 1 {
        let file = args.remove(1);
        args.remove(0);
        match load_path(Path::new(&file)) {
            Ok(m) => Some(m.values().iter().copied().collect::<Vec<f32>>()),
            Err(e) => {
                eprintln!("{file}: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        None
    };
    let Some((path, names)) = args.split_first() else {
        eprintln!("usage: format_timing [--importance IMP.npy] FILE.npy FORMAT...");
        return ExitCode::from(2);
    };
    let matrix = match load_path(Path::new(path)) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{path}: {e}");
            return ExitCode::from(2);
        }
    };
    let view = matrix.values();
    let cols = view.ncols();
    let x: Vec<f32> = view.iter().copied().collect();
    let mut values = vec![0.0f32; x.len()];
    for name in names {
        let lattice = IQuant::ALL.into_iter().map(Format::I);
        let ternary = Ternary::ALL.into_iter().map(Format::T);
        let mut all = Format::ENCODERS.into_iter().chain(lattice).chain(ternary);
        let Some(format) = all.find(|f| f.name() == name) else {
            eprintln!("unknown format {name}");
            return ExitCode::from(2);
        };
        let mut ms = 0.0;
        let mut mae = 0.0;
        for _ in 0..2 {
            let t = Instant::now();
            match run_rows_weighted(format, &x, cols, importance.as_deref(), &mut values) {
                Ok(s) => mae = s.error.mae(),
                Err(e) => {
                    eprintln!("{name}: {e}");
                    return ExitCode::from(2);
                }
            }
            ms = t.elapsed().as_secs_f64() * 1e3;
        }
        println!("{name} {ms:.1} {mae:e}");
    }
    ExitCode::SUCCESS
}
