//! The `quantscope` binary: a thin shell over the library.

use std::process::ExitCode;

use quantscope::cli::{Cli, Command, demo, explore, practice, report, scan};

fn main() -> ExitCode {
    let cli = match Cli::parse_args() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    quantscope::runtime::init_threads();
    match &cli.command {
        Some(Command::Report(args)) => report(args, cli.ascii),
        Some(Command::Scan(args)) => scan(args, cli.ascii),
        Some(Command::Demo(args)) => demo(args, &cli),
        Some(Command::Practice(args)) => practice(args, &cli),
        None => explore(&cli),
    }
}
