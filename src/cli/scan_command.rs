//! `quantscope scan`: its flags, a progress bar on standard error when that is a terminal,
//! and the output. The scan itself is [`crate::scan`].

use std::io::{self, IsTerminal};
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::{ConfigArgs, EXIT_PARTIAL, fail, write_stdout};
use crate::io::checkpoint::Checkpoint;
use crate::io::export::Format;
use crate::io::imatrix::Imatrix;
use crate::scan::{Progress, Scan, ScanOptions, SkipReason, scan_methods, write_scan};

/// Arguments of `quantscope scan`.
#[derive(Debug, Args)]
pub struct ScanArgs {
    /// The checkpoint to scan: a .safetensors or .gguf file, or a sharded checkpoint (a
    /// directory or its model.safetensors.index.json).
    pub file: PathBuf,
    /// Output format.
    #[arg(long, short, default_value = "table", value_parser = ["table", "json", "csv", "markdown", "md"])]
    pub format: String,
    /// Tensors analysed at once, each held in memory while it is analysed [default: one per
    /// core].
    #[arg(long, short)]
    pub jobs: Option<NonZeroUsize>,
    /// Also run every preset and format on each float tensor (the format ladder) and show
    /// the most accurate one within BITS bits per weight, e.g. --budget 4.5.
    #[arg(long, value_name = "BITS", value_parser = budget, allow_hyphen_values = true)]
    pub budget: Option<f64>,
    /// A llama.cpp importance matrix (llama-imatrix's GGUF or legacy .dat): each tensor
    /// with an entry (by its name, or its llama.cpp GGUF name) gains its
    /// importance-weighted error (imatrix_mse) per tensor, per channel and under the
    /// configuration, which quantizes with it where llama.cpp's quantizer does.
    #[arg(long, value_name = "FILE")]
    pub imatrix: Option<PathBuf>,
    /// Calibration activations for --method (and --act-quant, --smoothquant): a .npy file,
    /// a checkpoint's tensor as FILE:TENSOR, channel text, or `built-in` (256 seeded tokens
    /// made for each tensor's width). The methods run on each tensor whose input width is
    /// theirs; the others are listed as skipped, with why.
    #[arg(long, value_name = "FILE[:TENSOR]")]
    pub activations: Option<String>,
    /// The methods beyond rounding, run on every tensor the activations fit and ranked by
    /// the first one's output error.
    #[command(flatten)]
    pub method: super::method::MethodArgs,
    /// The quantization scheme, compared per tensor and per channel; its own granularity
    /// gives the bits/weight column.
    #[command(flatten)]
    pub config: ConfigArgs,
}

/// The methods `args` ask for under `config`, with their activations read; `None` when none
/// is asked; a message for flags that do not go together or activations that cannot be read.
fn method_scan(
    args: &ScanArgs,
    config: &crate::core::Config,
) -> Result<Option<crate::scan::MethodScan>, String> {
    use crate::scan::MethodScan;
    match (args.method.is_empty(), args.activations.as_deref()) {
        (true, None) => Ok(None),
        (true, Some(_)) => Err(
            "scan uses --activations for the methods: add --method rtn,awq,gptq (or --act-quant, --smoothquant)"
                .to_string(),
        ),
        (false, None) => Err(args.method.needs_activations()),
        (false, Some(spec)) => {
            let request = args.method.request(config);
            if spec == super::importance::BUILT_IN && !std::path::Path::new(spec).exists() {
                return Ok(Some(MethodScan::built_in(request)));
            }
            let tokens = crate::io::activations::open_activations(spec).map_err(|e| e.to_string())?;
            MethodScan::read(request, tokens.as_ref()).map(Some)
        }
    }
}

/// A bits-per-weight budget: a finite number above 0.
fn budget(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(b) if b.is_finite() && b > 0.0 => Ok(b),
        _ => Err(format!(
            "{s:?} is not a budget: give bits per weight as a number above 0, such as 4.5"
        )),
    }
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
    if !Checkpoint::is_checkpoint(&args.file) {
        return fail(&format!(
            "{} is not a checkpoint: scan reads the tensors of a .safetensors or .gguf file, or of a sharded checkpoint (a directory or its model.safetensors.index.json); report analyses one matrix",
            args.file.display()
        ));
    }
    let imatrix = match args.imatrix.as_deref().map(Imatrix::open).transpose() {
        Ok(i) => i,
        Err(e) => return fail(&e.to_string()),
    };
    let methods = match method_scan(args, &config) {
        Ok(m) => m,
        Err(e) => return fail(&e),
    };
    let bar = Bar(progress_bar());
    let options = ScanOptions {
        jobs: args.jobs.map(NonZeroUsize::get),
        budget: args.budget,
    };
    let result = scan_methods(
        &args.file,
        &config,
        options,
        (imatrix.as_ref(), methods.as_ref()),
        &bar,
    );
    bar.0.finish_and_clear();
    let scan = match result {
        Ok(s) => s,
        Err(e) => return fail(&e.to_string()),
    };
    if scan.rows.is_empty() && scan.stored.is_empty() {
        return fail(&nothing_analysed(&scan));
    }
    let format = args.format.parse::<Format>().unwrap_or(Format::Table);
    // Written into a buffer first, so a failure leaves nothing on stdout.
    let mut buf = Vec::new();
    if let Err(e) = write_scan(&mut buf, &scan, format) {
        return fail(&format!("could not format the scan: {e}"));
    }
    let written = write_stdout(&buf, ascii);
    if scan.failed.is_empty() || written != ExitCode::SUCCESS {
        return written;
    }
    let n = scan.failed.len();
    super::warn(&format!(
        "{n} of {} tensors could not be analysed (the output lists them; exit status {EXIT_PARTIAL}):\n{}",
        n + scan.rows.len() + scan.stored.len(),
        failures(&scan, "  ")
    ));
    ExitCode::from(EXIT_PARTIAL)
}

/// The failed tensors, one line each, after `indent`.
fn failures(scan: &Scan, indent: &str) -> String {
    scan.failed
        .iter()
        .map(|f| format!("{indent}{}: {}", f.name, f.error))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Why a scan analysed no tensor: the tensors it skipped, by reason, and those that failed.
fn nothing_analysed(scan: &Scan) -> String {
    let mut lines = vec![format!("{}: no tensor was analysed", scan.file)];
    if scan.skipped.is_empty() && scan.failed.is_empty() {
        lines.push("  the file holds no tensors".to_owned());
    }
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    for (reason, what) in [
        (
            SkipReason::NotFloating,
            "not floating (F32, F16, BF16 or F64)",
        ),
        (SkipReason::OneDimensional, "one-dimensional"),
        (SkipReason::Empty, "empty"),
    ] {
        let n = scan.skipped_count(&[reason]);
        if n > 0 {
            lines.push(format!("  {n} tensor{} skipped: {what}", plural(n)));
        }
    }
    if !scan.failed.is_empty() {
        let n = scan.failed.len();
        lines.push(format!("  {n} tensor{} failed:", plural(n)));
        lines.push(failures(scan, "    "));
    }
    lines.join("\n")
}
