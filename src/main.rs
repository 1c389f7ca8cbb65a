//! The `quantscope` binary: a thin shell over the library.

use std::process::ExitCode;

use quantscope::cli::{Cli, Command, completions, demo, explore, man, practice, report, scan};

fn main() -> ExitCode {
    let cli = match Cli::parse_args() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let config = match quantscope::cli::load_config() {
        Ok(config) => config,
        Err(code) => return code,
    };
    let ascii = cli.ascii || config.ascii;
    quantscope::runtime::init_threads();
    match &cli.command {
        Some(Command::Report(args)) => report(args, ascii),
        Some(Command::Scan(args)) => scan(args, ascii),
        Some(Command::Demo(args)) => demo(args, &cli, &config),
        Some(Command::Practice(args)) => practice(args, &cli, &config),
        Some(Command::Completions(args)) => completions(args),
        Some(Command::Man) => man(),
        None => explore(&cli, &config),
    }
}
