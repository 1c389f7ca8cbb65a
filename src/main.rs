//! The `quantscope` binary: a thin shell over the library.

use std::process::ExitCode;

use clap::Parser;
use quantscope::cli::{Cli, Command, report};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match &cli.command {
        Some(Command::Report(args)) => report(args),
        None => {
            eprintln!("the explorer is not built yet: use `quantscope report`");
            ExitCode::from(2)
        }
    }
}
