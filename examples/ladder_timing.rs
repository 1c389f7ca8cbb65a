//! Times the format ladder entry by entry on a matrix from a file, to see where the ladder's
//! time goes: for each preset and format (or those named after the file), one warm-up run and
//! then `REPS` timed runs of that entry alone (`core::format_ladder` with a one-name selection),
//! rows in parallel; prints `NAME MEDIAN_MS` per line, then the sum and one whole-ladder run.
//!
//! Usage: `cargo run --release --example ladder_timing -- FILE.npy [REPS] [NAME...]`

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use quantscope::core::format_ladder::{self, Selection};
use quantscope::io::load_path;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((path, rest)) = args.split_first() else {
        eprintln!("usage: ladder_timing FILE.npy [REPS] [NAME...]");
        return ExitCode::from(2);
    };
    let (reps, names) = match rest.split_first() {
        Some((r, names)) if r.parse::<usize>().is_ok() => (r.parse().unwrap_or(3), names),
        _ => (3, rest),
    };
    let matrix = match load_path(Path::new(path)) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{path}: {e}");
            return ExitCode::from(2);
        }
    };
    let all = Selection::all();
    let names: Vec<&'static str> = if names.is_empty() {
        all.names.clone()
    } else {
        match Selection::parse(&names.join(",")) {
            Ok(s) => s.names,
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        }
    };
    let mut total = 0.0;
    for name in &names {
        let sel = Selection { names: vec![name] };
        let mut times = Vec::new();
        for i in 0..=reps {
            let t = Instant::now();
            let l = format_ladder::format_ladder(&matrix, &sel, None);
            std::hint::black_box(&l);
            if i > 0 {
                times.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        total += median;
        println!("{name} {median:.1}");
    }
    println!("sum {total:.1}");
    let sel = Selection { names };
    let t = Instant::now();
    std::hint::black_box(format_ladder::format_ladder(&matrix, &sel, None));
    println!("whole {:.1}", t.elapsed().as_secs_f64() * 1e3);
    ExitCode::SUCCESS
}
