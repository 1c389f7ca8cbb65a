//! `quantscope scan`: its flags, a progress bar on standard error when that is a terminal,
//! and the output. The scan itself is [`crate::scan`].

use std::io::{self, IsTerminal};
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::{ConfigArgs, fail, is_safetensors, write_stdout};
use crate::io::export::Format;
use crate::scan::{Progress, ScanOptions, scan_with, write_scan};

/// Arguments of `quantscope scan`.
#[derive(Debug, Args)]
pub struct ScanArgs {
    /// The .safetensors file to scan.
    pub file: PathBuf,
    /// Output format.
    #[arg(long, short, default_value = "table", value_parser = ["table", "json", "csv", "markdown", "md"])]
    pub format: String,
    /// Tensors analysed at once, each held in memory while it is analysed [default: one per
    /// core].
    #[arg(long, short)]
    pub jobs: Option<NonZeroUsize>,
    /// The quantization scheme, compared per tensor and per channel; its own granularity
    /// gives the bits/weight column.
    #[command(flatten)]
    pub config: ConfigArgs,
}

/// An indicatif bar fed by the scan's threads.
struct Bar(ProgressBar);

impl Progress for Bar {
    fn start(&self, total: usize) {
        self.0.set_length(total as u64);
    }

    fn tensor_done(&self, name: &str) {
        self.0.set_message(name.to_owned());
        self.0.inc(1);
    }
}

fn progress_bar() -> ProgressBar {
    if !io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{bar:30} {pos}/{len} tensors, {elapsed} {wide_msg}")
    {
        bar.set_style(style);
    }
    bar
}

/// Runs `quantscope scan`; returns the process exit code.
#[must_use]
pub fn scan(args: &ScanArgs, ascii: bool) -> ExitCode {
    let config = match args.config.to_config() {
        Ok(c) => c,
        Err(e) => return fail(&e.to_string()),
    };
    if !is_safetensors(&args.file) {
        return fail(&format!(
            "{} is not a .safetensors file: scan reads the tensors of a .safetensors checkpoint (report analyses one matrix)",
            args.file.display()
        ));
    }
    let bar = Bar(progress_bar());
    let options = ScanOptions {
        jobs: args.jobs.map(NonZeroUsize::get),
    };
    let result = scan_with(&args.file, &config, options, &bar);
    bar.0.finish_and_clear();
    let scan = match result {
        Ok(s) => s,
        Err(e) => return fail(&e.to_string()),
    };
    let format = args.format.parse::<Format>().unwrap_or(Format::Table);
    // Written into a buffer first, so a failure leaves nothing on stdout.
    let mut buf = Vec::new();
    if let Err(e) = write_scan(&mut buf, &scan, format) {
        return fail(&format!("could not format the scan: {e}"));
    }
    if !scan.failed.is_empty() {
        eprintln!(
            "warning: {} of the tensors could not be analysed; the output lists them",
            scan.failed.len()
        );
    }
    write_stdout(&buf, ascii)
}
