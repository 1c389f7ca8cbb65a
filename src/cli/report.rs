//! `quantscope report`: its flags, the matrix it loads, the analysis it runs and the
//! document it writes.

use std::fmt::Write as _;
use std::io::{self, IsTerminal};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;

use super::{
    BUILTIN_EXAMPLE, ConfigArgs, emit, fail, files, find_scenario, importance, list_scenarios,
    method, parsed, write_stdout,
};
use crate::core::add_output_errors;
use crate::core::config::Config;
use crate::core::format_ladder::{FORMATS, Selection};
use crate::core::output::OutputStage;
use crate::core::presets::Overrides;
use crate::core::{Matrix, Options, PRESETS, analyse_weighted};
use crate::io::export::{
    Document, ExportOptions, Extras, Format, Paper, Versus, write_report_with,
};
use crate::io::load::{load_path_noted, load_reader_noted};

/// Arguments of `quantscope report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The matrix: a text/csv/tsv/npy file, a checkpoint (.safetensors, .gguf, a sharded
    /// directory or its index.json), or `-` for standard input. Without it, the built-in
    /// quiet-row example.
    pub file: Option<PathBuf>,
    /// The tensor to load from a checkpoint FILE (.safetensors, .gguf, a sharded directory
    /// or its index.json; see --list-tensors); needed when it holds more than one. A quantized
    /// GGUF tensor is shown as stored, unless a preset, a setting, --formats, --compare,
    /// --explain or --values asks for an analysis of its dequantized values.
    #[arg(long, value_name = "NAME")]
    pub tensor: Option<String>,
    /// List the tensors of a checkpoint FILE (name, dtype, shape, bytes; the shard of each
    /// for a sharded one) in --format, and exit.
    #[arg(long, conflicts_with = "tensor")]
    pub list_tensors: bool,
    /// List the key/value metadata of a .gguf FILE (long arrays shortened) in --format, and
    /// exit.
    #[arg(long, conflicts_with_all = ["tensor", "list_tensors"])]
    pub metadata: bool,
    /// Output format. html: one self-contained page with charts (no scripts, no network);
    /// pdf: the same as a vector PDF (needs --output or a redirected standard output).
    #[arg(long, short, default_value = "table", value_parser = ["table", "json", "csv", "markdown", "md", "html", "pdf"])]
    pub format: String,
    /// Write the output to FILE instead of standard output (replacing it).
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Page size of --format pdf: a4 or letter.
    #[arg(long, default_value = "a4", value_parser = parsed::<Paper>)]
    pub paper: Paper,
    /// Include every value's code and reconstruction.
    #[arg(long)]
    pub values: bool,
    /// Skip the granularity ladder (times one configuration alone).
    #[arg(long)]
    pub no_ladder: bool,
    /// Add the format ladder: every preset and format (k-quants, MXFP4, NVFP4, NF4, FP8) on
    /// the same matrix, by bits per weight, the Pareto front marked. LIST: names from
    /// --list-presets, or all (the default), formats, presets.
    #[arg(long, value_name = "LIST", num_args = 0..=1, default_missing_value = "all", value_parser = parsed::<Selection>)]
    pub formats: Option<Selection>,
    /// Compare with another configuration of the same matrix, as A against the report's
    /// own (B): a preset or format name, then settings as the flags spell them without
    /// `--`, comma-separated: `ort-int8`, `lesson,granularity=channel`,
    /// `int4-g128,granularity=group:32,bits=3`.
    #[arg(long, value_name = "SPEC", value_parser = compare_spec)]
    pub compare: Option<CompareSpec>,
    /// Also write the reconstructed matrix (the dequantized values: what the configuration
    /// or format gives back for every value) to FILE, as NumPy's .npy or a .safetensors
    /// file with one F32 tensor (named as --tensor, else `dequantized`), to measure it
    /// elsewhere (perplexity, say). The report is written as usual.
    #[arg(long, value_name = "FILE.npy|FILE.safetensors", value_parser = dequantized_path)]
    pub write_dequantized: Option<PathBuf>,
    /// Print how long loading, analysing and writing took, on standard error.
    #[arg(long)]
    pub timings: bool,
    /// List the presets and formats with one line each, and exit.
    #[arg(long)]
    pub list_presets: bool,
    /// Report a scenario's data with its suggested settings (flags still override them).
    #[arg(long, value_name = "NAME|FILE", conflicts_with_all = ["file", "tensor"])]
    pub scenario: Option<String>,
    /// List the built-in scenarios with their titles, and exit.
    #[arg(long)]
    pub list_scenarios: bool,
    /// Add the worked arithmetic (scale, zero point, every value's trip to its code) of the
    /// first channels, up to 16, to the table and markdown formats.
    #[arg(long)]
    pub explain: bool,
    /// The quantization configuration.
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Which weights matter: an importance matrix, activations.
    #[command(flatten)]
    pub importance: importance::ImportanceArgs,
    /// Methods beyond rounding, compared by the output error.
    #[command(flatten)]
    pub method: method::MethodArgs,
}

/// Loads the matrix to report, and prints the notes on a text input's values (values that
/// underflow `f32`, a skipped header row) on standard error: they are worth knowing but
/// not errors.
fn load(file: Option<&PathBuf>, tensor: Option<&str>) -> Result<Matrix, String> {
    let (matrix, notes) = load_noted(file, tensor)?;
    for note in &notes.list {
        eprintln!("note: {}", crate::io::printable(&note.to_string()));
    }
    if notes.count > notes.list.len() {
        eprintln!(
            "note: and {} more like these",
            notes.count - notes.list.len()
        );
    }
    Ok(matrix)
}

fn load_noted(
    file: Option<&PathBuf>,
    tensor: Option<&str>,
) -> Result<(Matrix, crate::io::text::Notes), String> {
    match file {
        None if tensor.is_some() => Err("--tensor needs a checkpoint FILE to load from".into()),
        None => crate::io::text::parse_text(BUILTIN_EXAMPLE)
            .map(|m| (m, crate::io::text::Notes::default()))
            .map_err(|e| e.to_string()),
        Some(p) if p.as_os_str() == "-" && tensor.is_some() => Err(
            "standard input is read as text; --tensor needs a checkpoint FILE to load from".into(),
        ),
        Some(p) if p.as_os_str() == "-" => {
            let stdin = io::stdin();
            if stdin.is_terminal() {
                return Err(
                    "reading the matrix from standard input, but it is a terminal: pipe a file in"
                        .into(),
                );
            }
            load_reader_noted("<stdin>", stdin.lock()).map_err(|e| e.to_string())
        }
        Some(p) => load_path_noted(p, tensor).map_err(|e| e.to_string()),
    }
}

/// Channels `report --explain` works through.
const EXPLAIN_CHANNELS: usize = 16;

/// `report --compare SPEC`: the configuration A, and the text it was given as.
#[derive(Debug, Clone)]
pub struct CompareSpec {
    /// As typed.
    pub text: String,
    /// The configuration it names.
    pub config: crate::core::Config,
}

/// A path ending in `.npy` or `.safetensors`.
fn dequantized_path(text: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(text);
    match crate::io::dequantized::Kind::of(&path) {
        Some(_) => Ok(path),
        None => Err(format!(
            "{text:?} must end in .npy or .safetensors (the two files the reconstruction is written as)"
        )),
    }
}

/// Parses `NAME[,key=value...]`: a preset or format, then settings as the flags spell them.
fn compare_spec(text: &str) -> Result<CompareSpec, String> {
    let mut parts = text.split(',');
    let name = parts.next().unwrap_or("").trim();
    let mut overrides = Overrides::default();
    for part in parts {
        let Some((key, value)) = part.split_once('=') else {
            return Err(format!(
                "{part:?} is not a setting: write key=value, such as granularity=channel"
            ));
        };
        crate::core::names::apply_setting(&mut overrides, key.trim(), value.trim())
            .map_err(|e| e.to_string())?;
    }
    let config = overrides.resolve(name).map_err(|e| e.to_string())?;
    Ok(CompareSpec {
        text: text.to_string(),
        config,
    })
}

/// The clipping modes `--list-presets` names, with whose they are.
const CLIPPINGS: [(&str, &str); 4] = [
    (
        "none",
        "min-max: the block's own range (every library's default)",
    ),
    (
        "percentile:P",
        "the central P percent of each block's values (numpy's linear-interpolated quantile)",
    ),
    (
        "mse",
        "quantscope's own search: the range shrunk by 1, 0.98, ... 0.2, the first with the least squared error",
    ),
    (
        "mse-weighted",
        "quantscope's own: mse with each value's squared error weighted by its column's importance (needs --imatrix or --activations)",
    ),
];

/// `report --list-presets`: the presets, then the formats of the format ladder, then the
/// clipping modes.
fn list_presets(ascii: bool) -> ExitCode {
    let width = PRESETS
        .iter()
        .map(|p| p.name)
        .chain(FORMATS.iter().map(|f| f.name))
        .map(str::len)
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for p in PRESETS {
        let _ = writeln!(out, "{:width$}  {}", p.name, p.about);
    }
    let _ = writeln!(
        out,
        "\nFormats with their own block layouts (a --preset like the others; their settings are fixed):"
    );
    for f in FORMATS {
        let _ = writeln!(out, "{:width$}  {}", f.name, f.about);
    }
    let _ = writeln!(out, "\nClipping (--clip, with the integer presets):");
    for (name, about) in CLIPPINGS {
        let _ = writeln!(out, "{name:width$}  {about}");
    }
    write_stdout(out.as_bytes(), ascii)
}

/// Runs `quantscope report`; returns the process exit code.
#[must_use]
pub fn report(args: &ReportArgs, ascii: bool) -> ExitCode {
    if args.list_presets {
        return list_presets(ascii);
    }
    let document = args.format.parse::<Document>().ok();
    if let Some(refused) = document_refused(args, document) {
        return refused;
    }
    if args.list_tensors || args.metadata {
        let format = args.format.parse::<Format>().unwrap_or(Format::Table);
        return if args.metadata {
            files::metadata(args.file.as_ref(), format, ascii, args.output.as_deref())
        } else {
            files::list_tensors(args.file.as_ref(), format, ascii, args.output.as_deref())
        };
    }
    if let Some(code) = files::stored_report(args, ascii) {
        return code;
    }
    if args.list_scenarios {
        return list_scenarios(ascii);
    }
    let started = Instant::now();
    let (config, matrix, scenario_tokens) = match input(args) {
        Ok(i) => i,
        Err(e) => return fail(&e),
    };
    let calibration = match args.importance.open_imatrix().and_then(|im| {
        let loaded = args
            .importance
            .load(im.as_ref(), &matrix, args.tensor.as_deref())?;
        importance::with_tokens(loaded, scenario_tokens)
    }) {
        Ok(c) => c,
        Err(e) => return fail(&e),
    };
    let stage = if calibration.tokens.is_none() && calibration.importance.is_none() {
        None
    } else {
        match OutputStage::new(&matrix, calibration.calibration()) {
            Ok(s) => Some(s),
            Err(e) => return fail(&e.to_string()),
        }
    };
    let loaded = started.elapsed();
    let t = Instant::now();
    let (report, a, format_ladder, methods) =
        match analysed(args, &matrix, &config, &calibration, stage.as_ref()) {
            Ok(r) => r,
            Err(e) => return fail(&e),
        };
    let versus = a.as_ref().map(|(a, comparison)| Versus { a, comparison });
    if let Err(e) = write_dequantized(args, &report) {
        return fail(&format!("--write-dequantized: {e}"));
    }
    let analysed = t.elapsed();
    let t = Instant::now();
    // The report is written into a buffer first, so a failure leaves nothing on stdout.
    let found = (format_ladder.as_ref(), methods.as_ref());
    let buf = match format_report(args, &matrix, &report, found, versus) {
        Ok(buf) => buf,
        Err(e) => return fail(&format!("could not format the report: {e}")),
    };
    // A PDF is bytes, not text to respell in ASCII.
    let code = emit(
        &buf,
        ascii && document != Some(Document::Pdf),
        args.output.as_deref(),
    );
    if code != ExitCode::SUCCESS {
        return code;
    }
    let written = t.elapsed();
    if args.timings {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        eprintln!(
            "timings: load {:.3} ms, analyse {:.3} ms, write {:.3} ms",
            ms(loaded),
            ms(analysed),
            ms(written)
        );
    }
    ExitCode::SUCCESS
}

/// The configuration and matrix `report` analyses (a scenario's, or a file's with the
/// flags'), and a scenario's own activations (`#! token:` lines) unless --activations or
/// --imatrix names others.
fn input(
    args: &ReportArgs,
) -> Result<(Config, Matrix, Option<crate::core::importance::Activations>), String> {
    if let Some(name) = &args.scenario {
        let scenario = find_scenario(name)?;
        let config = args
            .config
            .to_config_over(scenario.preset, scenario.overrides)
            .map_err(|e| e.to_string())?;
        let matrix = scenario
            .matrix()
            .map_err(|e| format!("scenario {}: {e}", scenario.name))?;
        let tokens = if args.importance.is_empty() {
            scenario.activations()
        } else {
            None
        };
        return Ok((config, matrix, tokens));
    }
    let config = args.config.to_config().map_err(|e| e.to_string())?;
    let matrix = load(args.file.as_ref(), args.tensor.as_deref())?;
    Ok((config, matrix, None))
}

/// With `--write-dequantized FILE`: the matrix `report`'s configuration reconstructs,
/// written to FILE.
fn write_dequantized(args: &ReportArgs, report: &crate::core::Report) -> Result<(), String> {
    let Some(path) = &args.write_dequantized else {
        return Ok(());
    };
    let matrix = crate::core::reconstruct::reconstruction(report).map_err(|e| e.to_string())?;
    let name = args.tensor.as_deref().unwrap_or("dequantized");
    crate::io::dequantized::write_file(path, &matrix, name)
}

/// The report's analyses: the report (with its output errors when a stage is given), A
/// against it with `--compare`, the format ladder with `--formats`, the methods with
/// `--method`, `--act-quant` or `--smoothquant`.
type Analysed = (
    crate::core::Report,
    Option<(crate::core::Report, crate::core::compare::Comparison)>,
    Option<crate::core::format_ladder::FormatLadder>,
    Option<crate::core::method::run::Methods>,
);

fn analysed(
    args: &ReportArgs,
    matrix: &Matrix,
    config: &crate::core::Config,
    calibration: &importance::Loaded,
    stage: Option<&OutputStage<'_>>,
) -> Result<Analysed, String> {
    let methods = args
        .method
        .run(config, matrix, calibration.tokens.as_deref(), args.explain)?;
    let options = Options {
        ladder: !args.no_ladder,
        // Every code is written out: keep them rather than recompute each one.
        keep_codes: args.values,
    };
    let mut report = analyse_weighted(matrix, config, calibration.quantize_with(), options)
        .map_err(|e| match e {
            crate::core::AnalyseError::ClipNeedsImportance if calibration.measure_only => {
                "--clip mse-weighted weighs each column's squared errors by the importance, \
                 which --measure-only keeps from quantizing: drop one of the two"
                    .to_string()
            }
            e => e.to_string(),
        })?;
    if let Some(stage) = stage {
        add_output_errors(stage, &mut report, &mut |_, _| true).map_err(|e| e.to_string())?;
    }
    let a = compared(args, matrix, &report, calibration, stage)?;
    let format_ladder = args.formats.as_ref().and_then(|selection| {
        let preset = args.config.preset.as_deref().unwrap_or("lesson");
        let inputs = crate::core::format_ladder::Inputs {
            importance: calibration.quantize_with(),
            output: stage,
        };
        crate::core::format_ladder::format_ladder_inputs(
            matrix,
            selection,
            Some((preset, config)),
            inputs,
            &mut |_, _| true,
        )
        .map(|mut l| {
            let tokens = calibration.tokens.as_deref();
            args.method
                .add_entries(&mut l, methods.as_ref(), matrix, tokens);
            l
        })
    });
    Ok((report, a, format_ladder, methods))
}

/// Why an HTML or PDF document cannot be written as asked (a listing has no analysis to
/// chart; a PDF is not written to a terminal), as the exit status of the message.
fn document_refused(args: &ReportArgs, document: Option<Document>) -> Option<ExitCode> {
    if let Some(d) = document
        && (args.list_tensors || args.metadata)
    {
        return Some(fail(&format!(
            "--format {} is for an analysis; list tensors or metadata in table, json, csv or markdown",
            d.name()
        )));
    }
    if document == Some(Document::Pdf) && args.output.is_none() && io::stdout().is_terminal() {
        return Some(fail(
            "a PDF is binary: write it to a file with --output FILE, or redirect standard output",
        ));
    }
    None
}

/// With `--compare SPEC`: the matrix under A (with the same importance and activations),
/// and A against `report` (B).
fn compared(
    args: &ReportArgs,
    matrix: &Matrix,
    report: &crate::core::Report,
    calibration: &importance::Loaded,
    stage: Option<&OutputStage<'_>>,
) -> Result<Option<(crate::core::Report, crate::core::compare::Comparison)>, String> {
    let Some(spec) = &args.compare else {
        return Ok(None);
    };
    let options = Options {
        ladder: !args.no_ladder,
        keep_codes: args.values,
    };
    let mut a = analyse_weighted(matrix, &spec.config, calibration.quantize_with(), options)
        .map_err(|e| format!("--compare {}: {e}", spec.text))?;
    if let Some(stage) = stage {
        add_output_errors(stage, &mut a, &mut |_, _| true)
            .map_err(|e| format!("--compare {}: {e}", spec.text))?;
    }
    let comparison = crate::core::compare::compare(&a, report).map_err(|e| e.to_string())?;
    Ok(Some((a, comparison)))
}

/// `report` in the format `args` ask for, with its extras (and its charts, for HTML and PDF).
fn format_report(
    args: &ReportArgs,
    matrix: &Matrix,
    report: &crate::core::Report,
    (format_ladder, methods): (
        Option<&crate::core::format_ladder::FormatLadder>,
        Option<&crate::core::method::run::Methods>,
    ),
    versus: Option<Versus<'_>>,
) -> Result<Vec<u8>, String> {
    let options = ExportOptions {
        values: args.values,
        ladder: !args.no_ladder,
    };
    let explanations: Vec<_> = if args.explain {
        (0..report.shape.0.min(EXPLAIN_CHANNELS))
            .map(|row| crate::core::explain::explain_channel(matrix, report, row))
            .collect()
    } else {
        Vec::new()
    };
    let extras = Extras {
        explain: &explanations,
        format_ladder,
        compare: versus,
        methods,
    };
    if let Ok(d) = args.format.parse::<Document>() {
        return crate::io::export::rich::document(matrix, report, d, &options, &extras, args.paper);
    }
    let format = args.format.parse::<Format>().unwrap_or(Format::Table);
    let mut buf = Vec::new();
    write_report_with(&mut buf, report, format, &options, &extras).map_err(|e| e.to_string())?;
    Ok(buf)
}
