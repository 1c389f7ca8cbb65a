//! The command line: clap definitions, their conversion into plain option structs, and the
//! headless commands `report` and `scan` (in [`scan`]).

mod explore;
mod scan;

pub use explore::{DemoArgs, PracticeArgs, demo, explore, practice};
pub use scan::{ScanArgs, scan};

use std::fmt::Write as _;
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand};

use crate::core::config::{
    Arith, AsymZeroPoint, Axis, Clipping, CodeClamp, Config, ConfigError, Degenerate, Granularity,
    NonFinite, QuantExpr, RangeKind, RangeSource, Rounding, ScaleDtype, Scheme, SymScale,
    SymZeroPoint,
};
use crate::core::presets::Overrides;
use crate::core::{Matrix, Options, PRESETS, analyse_with};
use crate::io::export::write_tensor_list;
use crate::io::export::{ExportOptions, Format, write_report_explained};
use crate::io::load::{load_path_noted, load_reader_noted};
use crate::io::safetensors::list_tensors;

/// quantscope: see what integer quantization does to a weight matrix.
///
/// With no command, opens the explorer on FILE (text, csv, tsv, npy or safetensors) or on a
/// built-in example where a quiet row collapses under a shared int4 scale.
#[derive(Debug, Parser)]
#[command(name = "quantscope", version, args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// A file to open in the explorer: channel text (.txt, .csv, .tsv: one channel per line,
    /// or a printed numpy/PyTorch array or JSON), a .npy file, or a .safetensors file (a
    /// tensor picker opens).
    pub file: Option<PathBuf>,
    /// Only ASCII characters: no block or braille glyphs in the explorer, symbols spelled
    /// out (`->`, `x^`) in every command's output (for terminals and fonts that lack them).
    #[arg(long, global = true)]
    pub ascii: bool,
    /// Open a scenario: a built-in's name (see --list-scenarios) or a scenario file.
    #[arg(long, value_name = "NAME|FILE", conflicts_with = "file")]
    pub scenario: Option<String>,
    /// List the built-in scenarios with their titles, and exit.
    #[arg(long)]
    pub list_scenarios: bool,
    /// The command to run instead of the explorer.
    #[command(subcommand)]
    pub command: Option<Command>,
}

impl Cli {
    /// The command line of this process, parsed; or, when it does not parse (or asks for
    /// `--help` or `--version`), the exit code after clap's message has been printed. An
    /// error's control characters are escaped, as in every message that quotes input.
    pub fn parse_args() -> Result<Self, ExitCode> {
        match Self::try_parse() {
            Ok(cli) => Ok(cli),
            Err(e) if e.use_stderr() => {
                eprint!("{}", crate::io::printable(&e.render().to_string()));
                Err(ExitCode::from(
                    u8::try_from(e.exit_code()).unwrap_or(EXIT_USAGE),
                ))
            }
            Err(e) => {
                let _ = e.print();
                Err(ExitCode::SUCCESS)
            }
        }
    }
}

/// Headless commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Analyse a matrix and print the report (table, json, csv or markdown).
    Report(ReportArgs),
    /// Analyse every floating tensor of a .safetensors file per tensor and per channel, and
    /// rank them by how much per-channel scales gain.
    #[command(
        after_help = "Exit status: 0 when every floating tensor of 2 or more dimensions was analysed; 1 when some were analysed and others failed (the output lists them, and so does stderr); 2 for bad flags or files, or when no tensor was analysed (stderr says why, stdout is empty)."
    )]
    Scan(ScanArgs),
    /// Play a demo script at the presenter's pace (Space or Right: next, Left: back).
    Demo(DemoArgs),
    /// Practise: exercises with answer checking, hints and a score, and recall cards.
    Practice(PracticeArgs),
}

/// Arguments of `quantscope report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The matrix: a text/csv/tsv/npy/safetensors file, or `-` for standard input. Without
    /// it, the built-in quiet-row example.
    pub file: Option<PathBuf>,
    /// The tensor to load from a .safetensors FILE (see --list-tensors); needed when the
    /// file holds more than one floating tensor.
    #[arg(long, value_name = "NAME")]
    pub tensor: Option<String>,
    /// List the tensors of a .safetensors FILE (name, dtype, shape, bytes) in --format, and exit.
    #[arg(long, conflicts_with = "tensor")]
    pub list_tensors: bool,
    /// Output format.
    #[arg(long, short, default_value = "table", value_parser = ["table", "json", "csv", "markdown", "md"])]
    pub format: String,
    /// Include every value's code and reconstruction.
    #[arg(long)]
    pub values: bool,
    /// Skip the granularity ladder (times one configuration alone).
    #[arg(long)]
    pub no_ladder: bool,
    /// Print how long loading, analysing and writing took, on standard error.
    #[arg(long)]
    pub timings: bool,
    /// List the presets with one line each, and exit.
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
}

/// Flags that build a [`Config`]: a preset, then overrides of its fields.
#[derive(Debug, Args, Default, Clone)]
pub struct ConfigArgs {
    /// Start from a preset (see `quantscope report --list-presets`; default lesson); the
    /// flags below override its fields.
    #[arg(long, short)]
    pub preset: Option<String>,
    /// Code width, 1 to 16.
    #[arg(long, short)]
    pub bits: Option<u8>,
    /// Signed codes.
    #[arg(long, conflicts_with = "unsigned")]
    pub signed: bool,
    /// Unsigned codes.
    #[arg(long)]
    pub unsigned: bool,
    /// symmetric or asymmetric.
    #[arg(long, value_parser = ["symmetric", "asymmetric", "sym", "asym"])]
    pub scheme: Option<String>,
    /// ONNX Runtime's / PyTorch's reduced code range (presets that name those libraries).
    #[arg(long)]
    pub reduce_range: bool,
    /// full (int4: -8..7) or narrow (int4: -7..7); or a custom range `QMIN..QMAX`
    /// (`--range -3..5` works).
    #[arg(long, allow_hyphen_values = true)]
    pub range: Option<String>,
    /// tight (the block's min and max) or include-zero (widened to contain 0).
    #[arg(long, value_parser = ["tight", "include-zero"])]
    pub range_source: Option<String>,
    /// half-even, half-away or half-up.
    #[arg(long, value_parser = ["half-even", "half-away", "half-up"])]
    pub rounding: Option<String>,
    /// tensor, channel or group:G.
    #[arg(long, short)]
    pub granularity: Option<String>,
    /// Channel axis for per-channel: 0 (rows, output channels) or 1 (columns).
    #[arg(long, value_parser = ["0", "1"])]
    pub axis: Option<String>,
    /// none, percentile:P (keep the central P percent) or mse.
    #[arg(long)]
    pub clip: Option<String>,
    /// Storage of scales: f32, f16 or bf16.
    #[arg(long, value_parser = ["f32", "f16", "bf16"])]
    pub scale_dtype: Option<String>,
    /// Bits of one stored zero point (0 when implied).
    #[arg(long)]
    pub zero_point_bits: Option<u8>,
    /// Symmetric scale: max-code, half-span, signed-extreme or signed-min-max.
    #[arg(long, value_parser = ["max-code", "half-span", "signed-extreme", "signed-min-max"])]
    pub sym_scale: Option<String>,
    /// Symmetric zero point: zero, mid-half-even or mid-floor.
    #[arg(long, value_parser = ["zero", "mid-half-even", "mid-floor"])]
    pub sym_zero_point: Option<String>,
    /// Asymmetric zero point: round-of-shift, shift-of-round or float-min.
    #[arg(long, value_parser = ["round-of-shift", "shift-of-round", "float-min"])]
    pub asym_zero_point: Option<String>,
    /// Clamp the asymmetric zero point into the code range: true or false.
    #[arg(long)]
    pub clamp_zero_point: Option<bool>,
    /// Value to code: divide, reciprocal or reciprocal-add-zero.
    #[arg(long, value_parser = ["divide", "reciprocal", "reciprocal-add-zero"])]
    pub quant_expr: Option<String>,
    /// Where codes are clamped: range ([qmin, qmax]) or type (the whole integer type, as
    /// ONNX Runtime does even with a reduced range).
    #[arg(long, value_parser = ["range", "type"])]
    pub code_clamp: Option<String>,
    /// The code of a value whose ratio x/s is not a number (a subnormal scale): zero-point
    /// (NaN gets the zero point, infinities clamp), nan-to-zero (NaN gets code 0, as MLAS) or
    /// zero (every one gets code 0, as gguf-py).
    #[arg(long, value_parser = ["zero-point", "nan-to-zero", "zero"])]
    pub non_finite: Option<String>,
    /// Precision of scale arithmetic: f64 or f32.
    #[arg(long, value_parser = ["f64", "f32"])]
    pub arith: Option<String>,
    /// Which blocks are degenerate, and what they get: one (ONNX Runtime: a scale below the
    /// smallest normal f32, so tiny values too, gets scale 1 and zero point 0), flat (lesson,
    /// calculator: only a scale of exactly 0, an all-zero block, gets scale 1 and zero point
    /// 0; a tight constant block is widened to include 0 first), epsilon (PyTorch: the scale
    /// is raised to 2^-23) or zero (GGUF, MLAS: d = 0 is kept and reconstructs to 0).
    #[arg(long, value_parser = ["one", "flat", "epsilon", "zero"])]
    pub degenerate: Option<String>,
}

fn pick<T: Copy>(value: &str, table: &[(&str, T)]) -> T {
    // clap's value_parser already restricted the value to the table's names.
    table
        .iter()
        .find(|(name, _)| *name == value)
        .map_or(table[0].1, |(_, v)| *v)
}

/// Parses `none`, `mse` or `percentile:P`.
pub fn parse_clipping(s: &str) -> Result<Clipping, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "none" | "minmax" | "min-max" => Ok(Clipping::None),
        "mse" => Ok(Clipping::Mse),
        t => t
            .strip_prefix("percentile:")
            .and_then(|p| p.parse::<f64>().ok())
            .filter(|p| *p > 0.0 && *p <= 100.0)
            .map(Clipping::Percentile)
            .ok_or_else(|| {
                format!("clipping must be none, mse or percentile:P with 0 < P <= 100, not {s:?}")
            }),
    }
}

/// Parses `full`, `narrow` or `QMIN..QMAX`.
pub fn parse_range(s: &str) -> Result<RangeKind, String> {
    match s.trim() {
        "full" => Ok(RangeKind::Full),
        "narrow" => Ok(RangeKind::Narrow),
        t => t
            .split_once("..")
            .and_then(|(a, b)| {
                Some(RangeKind::Custom {
                    qmin: a.trim().parse().ok()?,
                    qmax: b.trim().parse().ok()?,
                })
            })
            .ok_or_else(|| format!("range must be full, narrow or QMIN..QMAX, not {s:?}")),
    }
}

/// Why the flags do not make a configuration.
#[derive(Debug, thiserror::Error)]
pub enum FlagError {
    /// A core validation error.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A malformed flag value.
    #[error("{0}")]
    Value(String),
}

impl ConfigArgs {
    /// The overrides these flags describe.
    #[expect(clippy::too_many_lines, reason = "one short statement per flag")]
    pub fn to_overrides(&self) -> Result<Overrides, FlagError> {
        let mut o = Overrides {
            reduce_range: self.reduce_range,
            ..Overrides::default()
        };
        o.scheme = self.scheme.as_deref().map(|s| {
            pick(
                s,
                &[
                    ("symmetric", Scheme::Symmetric),
                    ("sym", Scheme::Symmetric),
                    ("asymmetric", Scheme::Asymmetric),
                    ("asym", Scheme::Asymmetric),
                ],
            )
        });
        o.bits = self.bits;
        o.signed = match (self.signed, self.unsigned) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        };
        o.range = self
            .range
            .as_deref()
            .map(parse_range)
            .transpose()
            .map_err(FlagError::Value)?;
        o.range_source = self.range_source.as_deref().map(|s| {
            pick(
                s,
                &[
                    ("tight", RangeSource::Tight),
                    ("include-zero", RangeSource::IncludeZero),
                ],
            )
        });
        o.rounding = self.rounding.as_deref().map(|s| {
            pick(
                s,
                &[
                    ("half-even", Rounding::HalfEven),
                    ("half-away", Rounding::HalfAway),
                    ("half-up", Rounding::HalfUp),
                ],
            )
        });
        o.granularity = self
            .granularity
            .as_deref()
            .map(str::parse::<Granularity>)
            .transpose()?;
        o.axis = self
            .axis
            .as_deref()
            .map(|a| pick(a, &[("0", Axis::Rows), ("1", Axis::Columns)]));
        o.clipping = self
            .clip
            .as_deref()
            .map(parse_clipping)
            .transpose()
            .map_err(FlagError::Value)?;
        o.scale_dtype = self.scale_dtype.as_deref().map(|s| {
            pick(
                s,
                &[
                    ("f32", ScaleDtype::F32),
                    ("f16", ScaleDtype::F16),
                    ("bf16", ScaleDtype::Bf16),
                ],
            )
        });
        o.zero_point_bits = self.zero_point_bits;
        o.sym_scale = self.sym_scale.as_deref().map(|s| {
            pick(
                s,
                &[
                    ("max-code", SymScale::MaxCode),
                    ("half-span", SymScale::HalfSpan),
                    ("signed-extreme", SymScale::SignedExtreme),
                    ("signed-min-max", SymScale::SignedMinMax),
                ],
            )
        });
        o.sym_zero_point = self.sym_zero_point.as_deref().map(|s| {
            pick(
                s,
                &[
                    ("zero", SymZeroPoint::Zero),
                    ("mid-half-even", SymZeroPoint::MidHalfEven),
                    ("mid-floor", SymZeroPoint::MidFloor),
                ],
            )
        });
        o.asym_zero_point = self.asym_zero_point.as_deref().map(|s| {
            pick(
                s,
                &[
                    ("round-of-shift", AsymZeroPoint::RoundOfShift),
                    ("shift-of-round", AsymZeroPoint::ShiftOfRound),
                    ("float-min", AsymZeroPoint::FloatMin),
                ],
            )
        });
        o.clamp_zero_point = self.clamp_zero_point;
        o.quant_expr = self.quant_expr.as_deref().map(|s| {
            pick(
                s,
                &[
                    ("divide", QuantExpr::Divide),
                    ("reciprocal", QuantExpr::Reciprocal),
                    ("reciprocal-add-zero", QuantExpr::ReciprocalAddZero),
                ],
            )
        });
        o.code_clamp = self
            .code_clamp
            .as_deref()
            .map(|s| pick(s, &[("range", CodeClamp::Range), ("type", CodeClamp::Type)]));
        o.non_finite = self.non_finite.as_deref().map(|s| {
            pick(
                s,
                &[
                    ("zero-point", NonFinite::ZeroPoint),
                    ("nan-to-zero", NonFinite::NanToZero),
                    ("zero", NonFinite::Zero),
                ],
            )
        });
        o.arith = self
            .arith
            .as_deref()
            .map(|s| pick(s, &[("f64", Arith::F64), ("f32", Arith::F32)]));
        o.degenerate = self.degenerate.as_deref().map(|s| {
            pick(
                s,
                &[
                    ("one", Degenerate::One),
                    ("flat", Degenerate::Flat),
                    ("epsilon", Degenerate::Epsilon),
                    ("zero", Degenerate::Zero),
                ],
            )
        });
        Ok(o)
    }

    /// The configuration these flags describe: the preset, then each override.
    pub fn to_config(&self) -> Result<Config, FlagError> {
        Ok(self
            .to_overrides()?
            .resolve(self.preset.as_deref().unwrap_or("lesson"))?)
    }

    /// The configuration of these flags on top of a scenario's suggestion: the scenario's
    /// preset and settings, then the flags (a `--preset` flag replaces the scenario's preset
    /// and its settings).
    pub fn to_config_over(&self, preset: &str, suggested: Overrides) -> Result<Config, FlagError> {
        let flags = self.to_overrides()?;
        Ok(match &self.preset {
            Some(p) => flags.resolve(p)?,
            None => suggested.then(flags).resolve(preset)?,
        })
    }
}

/// The matrix the explorer and `report` open when given no file: the `quiet-loud`
/// scenario, a quiet row beside a loud one (the seed lesson's example).
pub const BUILTIN_EXAMPLE: &str = include_str!("../assets/scenarios/quiet-loud.txt");

/// A scenario by built-in name, or from a file when `name` is a path to one.
pub fn find_scenario(name: &str) -> Result<crate::io::assets::Scenario, String> {
    let path = std::path::Path::new(name);
    if path.is_file() {
        return crate::io::assets::read_scenario(path).map_err(|e| e.to_string());
    }
    crate::io::assets::scenario(name).map_err(|e| format!("{e} (see --list-scenarios)"))
}

/// `--list-scenarios`: one line per built-in scenario.
#[must_use]
pub fn list_scenarios(ascii: bool) -> ExitCode {
    let scenarios = crate::io::assets::scenarios();
    let width = scenarios.iter().map(|s| s.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for s in &scenarios {
        let _ = writeln!(out, "{:width$}  {}", s.name, s.title);
    }
    write_stdout(out.as_bytes(), ascii)
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
        None if tensor.is_some() => Err("--tensor needs a .safetensors FILE to load from".into()),
        None => crate::io::text::parse_text(BUILTIN_EXAMPLE)
            .map(|m| (m, crate::io::text::Notes::default()))
            .map_err(|e| e.to_string()),
        Some(p) if p.as_os_str() == "-" && tensor.is_some() => Err(
            "standard input is read as text; --tensor needs a .safetensors FILE to load from"
                .into(),
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

/// True when `path` ends in `.safetensors` (any case).
fn is_safetensors(path: &std::path::Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("safetensors"))
}

/// `report --list-tensors`: the tensor table of a .safetensors file.
fn list_tensors_command(file: Option<&PathBuf>, format: Format, ascii: bool) -> ExitCode {
    let Some(path) = file.filter(|p| p.as_os_str() != "-") else {
        return fail("--list-tensors needs a .safetensors FILE");
    };
    if !is_safetensors(path) {
        return fail(&format!(
            "{} is not a .safetensors file: --list-tensors lists the tensors of a .safetensors file",
            path.display()
        ));
    }
    let tensors = match list_tensors(path) {
        Ok(t) => t,
        Err(e) => return fail(&e.to_string()),
    };
    let mut buf = Vec::new();
    if let Err(e) = write_tensor_list(&mut buf, &tensors, format) {
        return fail(&format!("could not format the list: {e}"));
    }
    write_stdout(&buf, ascii)
}

/// Writes a finished output to standard output; a closed pipe is not an error.
/// Writes `buf` to standard output, spelled in ASCII when `ascii` (`--ascii`); a closed pipe
/// is not an error.
pub(crate) fn write_stdout(buf: &[u8], ascii: bool) -> ExitCode {
    let text;
    let buf = if ascii {
        text = crate::io::export::ascii::to_ascii(&String::from_utf8_lossy(buf)).into_owned();
        text.as_bytes()
    } else {
        buf
    };
    let mut stdout = io::stdout().lock();
    match stdout.write_all(buf).and_then(|()| stdout.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => fail(&format!("could not write the output: {e}")),
    }
}

/// Channels `report --explain` works through.
const EXPLAIN_CHANNELS: usize = 16;

/// Exit code for bad input or flags, and for a scan that analysed no tensor.
const EXIT_USAGE: u8 = 2;

/// Exit code for a scan that analysed some tensors while others failed.
const EXIT_PARTIAL: u8 = 1;

/// Runs `quantscope report`; returns the process exit code.
#[must_use]
pub fn report(args: &ReportArgs, ascii: bool) -> ExitCode {
    if args.list_presets {
        let width = PRESETS.iter().map(|p| p.name.len()).max().unwrap_or(0);
        let mut out = String::new();
        for p in PRESETS {
            let _ = writeln!(out, "{:width$}  {}", p.name, p.about);
        }
        return write_stdout(out.as_bytes(), ascii);
    }
    if args.list_tensors {
        let format = args.format.parse::<Format>().unwrap_or(Format::Table);
        return list_tensors_command(args.file.as_ref(), format, ascii);
    }
    if args.list_scenarios {
        return list_scenarios(ascii);
    }
    let started = Instant::now();
    let (config, matrix) = if let Some(name) = &args.scenario {
        let scenario = match find_scenario(name) {
            Ok(s) => s,
            Err(e) => return fail(&e),
        };
        let config = match args
            .config
            .to_config_over(scenario.preset, scenario.overrides)
        {
            Ok(c) => c,
            Err(e) => return fail(&e.to_string()),
        };
        match scenario.matrix() {
            Ok(m) => (config, m),
            Err(e) => return fail(&format!("scenario {}: {e}", scenario.name)),
        }
    } else {
        let config = match args.config.to_config() {
            Ok(c) => c,
            Err(e) => return fail(&e.to_string()),
        };
        match load(args.file.as_ref(), args.tensor.as_deref()) {
            Ok(m) => (config, m),
            Err(e) => return fail(&e),
        }
    };
    let loaded = started.elapsed();
    let t = Instant::now();
    let report = match analyse_with(
        &matrix,
        &config,
        Options {
            ladder: !args.no_ladder,
        },
    ) {
        Ok(r) => r,
        Err(e) => return fail(&e.to_string()),
    };
    let analysed = t.elapsed();
    let format = args.format.parse::<Format>().unwrap_or(Format::Table);
    let options = ExportOptions {
        values: args.values,
        ladder: !args.no_ladder,
    };
    let t = Instant::now();
    // The report is written into a buffer first, so a failure leaves nothing on stdout.
    let mut buf = Vec::new();
    let explanations: Vec<_> = if args.explain {
        (0..report.shape.0.min(EXPLAIN_CHANNELS))
            .map(|row| crate::core::explain::explain_channel(&matrix, &report, row))
            .collect()
    } else {
        Vec::new()
    };
    if let Err(e) = write_report_explained(&mut buf, &report, format, &options, &explanations) {
        return fail(&format!("could not format the report: {e}"));
    }
    let code = write_stdout(&buf, ascii);
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

/// Prints `message` as an error on stderr, its control characters escaped (it may quote
/// input); returns the exit code for bad input.
pub(crate) fn fail(message: &str) -> ExitCode {
    eprintln!("error: {}", crate::io::printable(message));
    ExitCode::from(EXIT_USAGE)
}

/// Prints `message` as a warning on stderr, its control characters escaped.
pub(crate) fn warn(message: &str) {
    eprintln!("warning: {}", crate::io::printable(message));
}
