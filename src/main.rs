//! The `quantscope` binary: a thin shell over the library.

use std::path::Path;
use std::process::ExitCode;

use clap::Parser;
use quantscope::app::Model;
use quantscope::cli::{BUILTIN_EXAMPLE, Cli, Command, report, scan};
use quantscope::io::npy::parse_npy;
use quantscope::tui;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match &cli.command {
        Some(Command::Report(args)) => report(args),
        Some(Command::Scan(args)) => scan(args),
        None => explorer(&cli),
    }
}

/// Opens a file for the explorer: text is loaded as it is (the editor shows parse errors),
/// `.npy` is parsed into a read-only matrix. A missing text file starts empty.
fn open(path: &Path) -> Result<Model, String> {
    let is_npy = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"));
    if is_npy {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let matrix = parse_npy(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().to_string(),
        );
        return Ok(Model::with_tensor(name, matrix));
    }
    match std::fs::read(path) {
        Ok(bytes) => {
            let text = String::from_utf8(bytes).map_err(|e| {
                format!(
                    "{}: not UTF-8 text (invalid byte at offset {})",
                    path.display(),
                    e.utf8_error().valid_up_to()
                )
            })?;
            Ok(Model::with_text(&text, Some(path.to_path_buf())))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut model = Model::with_text("", Some(path.to_path_buf()));
            model.status = Some(format!("new file {}: Ctrl-S saves it", path.display()));
            Ok(model)
        }
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

fn explorer(cli: &Cli) -> ExitCode {
    if let Err(e) = color_eyre::install() {
        eprintln!("error: {e}");
    }
    let model = match &cli.file {
        Some(path) => match open(path) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        },
        None => Model::with_text(BUILTIN_EXAMPLE, None),
    };
    match tui::run(model, tui::Options::from_env(cli.ascii)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:?}");
            ExitCode::FAILURE
        }
    }
}
