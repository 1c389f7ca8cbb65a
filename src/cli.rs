//! The command line: clap definitions, their conversion into plain option structs, and the
//! headless commands [`report()`] and [`scan`].

pub mod config;
mod explore;
mod files;
pub mod importance;
pub mod method;
mod report;
mod scan_command;

pub use explore::{DemoArgs, PracticeArgs, builtin, demo, explore, practice};
pub use report::{CompareSpec, ReportArgs, report};
pub use scan_command::{ScanArgs, scan};

use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::core::config::{
    Arith, AsymZeroPoint, Axis, Clipping, CodeClamp, Config, ConfigError, Degenerate, Granularity,
    NonFinite, QuantExpr, RangeKind, RangeSource, Rounding, ScaleDtype, Scheme, SymScale,
    SymZeroPoint,
};
use crate::core::names::Named;
use crate::core::presets::Overrides;

/// quantscope: see what integer quantization does to a weight matrix.
///
/// With no command, opens the explorer on FILE (text, csv, tsv, npy, safetensors, gguf or a
/// sharded checkpoint) or on a built-in example where a quiet row collapses under a shared
/// int4 scale.
#[derive(Debug, Parser)]
#[command(name = "quantscope", version, args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// A file to open in the explorer: channel text (.txt, .csv, .tsv: one channel per line,
    /// or a printed numpy/PyTorch array or JSON), a .npy file, or a checkpoint (a tensor
    /// picker opens): a .safetensors or .gguf file, or a sharded checkpoint (a directory or
    /// its model.safetensors.index.json).
    pub file: Option<PathBuf>,
    /// Only ASCII characters: no block or braille glyphs in the explorer, symbols spelled
    /// out (`->`, `x^`) in every command's output (for terminals and fonts that lack them).
    #[arg(long, global = true)]
    pub ascii: bool,
    /// How the explorer looks and takes input.
    #[command(flatten)]
    pub look: Look,
    /// Open a scenario: a built-in's name (see --list-scenarios) or a scenario file.
    #[arg(long, value_name = "NAME|FILE", conflicts_with = "file")]
    pub scenario: Option<String>,
    /// List the built-in scenarios with their titles, and exit.
    #[arg(long)]
    pub list_scenarios: bool,
    /// Which weights matter, in the explorer (Alt-I loads them from inside it too).
    #[command(flatten)]
    pub importance: importance::ImportanceArgs,
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

/// How the explorer looks and takes input (the explorer, `demo` and `practice`); each flag
/// given overrides the config file's setting.
#[derive(Debug, Args, Default, Clone)]
pub struct Look {
    /// Colours: dark (the terminal's own background and its 16 colours), light (black on
    /// white) or high-contrast (white on black, 7:1 or more); default dark, or the config
    /// file's `theme`.
    #[arg(long, value_name = "THEME", value_parser = parsed::<crate::ui::ThemeName>)]
    pub theme: Option<crate::ui::ThemeName>,
    /// Leave the mouse to the terminal (its own selection and copy) instead of clicks
    /// focusing panes and selecting rows and the wheel scrolling.
    #[arg(long)]
    pub no_mouse: bool,
}

/// Headless commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Analyse a matrix and print the report (table, json, csv, markdown, html or pdf).
    Report(Box<ReportArgs>),
    /// Analyse every floating tensor of a checkpoint (.safetensors, .gguf, sharded) per
    /// tensor and per channel, rank them by how much per-channel scales gain, and show a
    /// GGUF file's quantized tensors as stored.
    #[command(
        after_help = "Exit status: 0 when every floating tensor of 2 or more dimensions was analysed; 1 when some were analysed and others failed (the output lists them, and so does stderr); 2 for bad flags or files, or when no tensor was analysed (stderr says why, stdout is empty)."
    )]
    Scan(Box<ScanArgs>),
    /// Play a demo script at the presenter's pace (Space or Right: next, Left: back).
    Demo(DemoArgs),
    /// Practise: exercises with answer checking, hints and a score, and recall cards.
    Practice(PracticeArgs),
    /// Print a completion script for SHELL (bash, zsh or fish), generated from these
    /// flags: `quantscope completions bash > ~/.local/share/bash-completion/completions/quantscope`.
    Completions(CompletionsArgs),
    /// Print the man page (roff), every command and flag: `quantscope man | man -l -`.
    Man,
}

/// Arguments of `quantscope completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh or fish.
    #[arg(value_parser = ["bash", "zsh", "fish"])]
    pub shell: String,
}

/// `quantscope completions SHELL`: the completion script, from the clap definitions.
#[must_use]
pub fn completions(args: &CompletionsArgs) -> ExitCode {
    use clap::CommandFactory as _;
    use clap_complete::Shell;
    let shell = match args.shell.as_str() {
        "zsh" => Shell::Zsh,
        "fish" => Shell::Fish,
        _ => Shell::Bash,
    };
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "quantscope", &mut buf);
    write_stdout(&buf, false)
}

/// The man page in roff: the command's own page, then a section for each command with its
/// synopsis, description and options, all from the clap definitions.
pub fn man_page() -> std::io::Result<Vec<u8>> {
    use clap::CommandFactory as _;
    let top = Cli::command();
    let mut out = Vec::new();
    clap_mangen::Man::new(top.clone()).render(&mut out)?;
    for sub in top.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = format!("quantscope {}", sub.get_name());
        writeln!(out, ".SH \"{}\"", name.to_uppercase())?;
        let man = clap_mangen::Man::new(sub.clone().bin_name(name));
        man.render_synopsis_section(&mut out)?;
        man.render_description_section(&mut out)?;
        man.render_options_section(&mut out)?;
    }
    Ok(out)
}

/// `quantscope man`.
#[must_use]
pub fn man() -> ExitCode {
    match man_page() {
        Ok(page) => write_stdout(&page, false),
        Err(e) => fail(&format!("could not write the man page: {e}")),
    }
}

/// Flags that build a [`Config`]: a preset, then overrides of its fields. Each flag's
/// values are parsed by the type's own `FromStr` (`core::names`), and the named ones list
/// their values in `--help` from the same table.
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
    /// Symmetric (zero maps to a fixed code) or asymmetric (affine).
    #[arg(long, value_enum)]
    pub scheme: Option<Scheme>,
    /// ONNX Runtime's / PyTorch's reduced code range (presets that name those libraries).
    #[arg(long)]
    pub reduce_range: bool,
    /// full (int4: -8..7) or narrow (int4: -7..7); or a custom range `QMIN..QMAX`
    /// (`--range -3..5` works).
    #[arg(long, allow_hyphen_values = true, value_parser = parsed::<RangeKind>)]
    pub range: Option<RangeKind>,
    /// tight (the block's min and max) or include-zero (widened to contain 0).
    #[arg(long, value_enum)]
    pub range_source: Option<RangeSource>,
    /// Rounding of ratios to codes.
    #[arg(long, value_enum)]
    pub rounding: Option<Rounding>,
    /// tensor, channel or group:G.
    #[arg(long, short, value_parser = parsed::<Granularity>)]
    pub granularity: Option<Granularity>,
    /// Channel axis for per-channel: 0 (rows, output channels) or 1 (columns).
    #[arg(long, value_enum)]
    pub axis: Option<Axis>,
    /// none, percentile:P (keep the central P percent), mse (the range shrunk by 1, 0.98, ...
    /// 0.2, the least squared error kept) or mse-weighted (mse with each column's squared
    /// errors weighted by its importance; needs --imatrix or --activations). Both searches
    /// are quantscope's own.
    #[arg(long, value_parser = parsed::<Clipping>)]
    pub clip: Option<Clipping>,
    /// Storage of scales.
    #[arg(long, value_enum)]
    pub scale_dtype: Option<ScaleDtype>,
    /// Bits of one stored zero point (0 when implied).
    #[arg(long)]
    pub zero_point_bits: Option<u8>,
    /// Symmetric scale formula.
    #[arg(long, value_enum)]
    pub sym_scale: Option<SymScale>,
    /// Symmetric zero point.
    #[arg(long, value_enum)]
    pub sym_zero_point: Option<SymZeroPoint>,
    /// Asymmetric zero point.
    #[arg(long, value_enum)]
    pub asym_zero_point: Option<AsymZeroPoint>,
    /// Clamp the asymmetric zero point into the code range: true or false.
    #[arg(long)]
    pub clamp_zero_point: Option<bool>,
    /// Value to code: x / s, x × (1/s), or x × (1/s) + z rounded together.
    #[arg(long, value_enum)]
    pub quant_expr: Option<QuantExpr>,
    /// Where codes are clamped: range ([qmin, qmax], as torch.fake_quantize does) or type (the
    /// whole integer type, as ONNX Runtime and torch.quantize_per_channel do even with a
    /// reduced range).
    #[arg(long, value_enum)]
    pub code_clamp: Option<CodeClamp>,
    /// The code of a value whose ratio x/s is not a number (a subnormal scale): zero-point
    /// (NaN gets the zero point, infinities clamp), nan-to-zero (NaN gets code 0, as MLAS) or
    /// zero (every one gets code 0, as gguf-py).
    #[arg(long, value_enum)]
    pub non_finite: Option<NonFinite>,
    /// Precision of scale arithmetic.
    #[arg(long, value_enum)]
    pub arith: Option<Arith>,
    /// Which blocks are degenerate, and what they get: one (ONNX Runtime: a scale below the
    /// smallest normal f32, so tiny values too, gets scale 1 and zero point 0), flat (lesson,
    /// calculator: only a scale of exactly 0, an all-zero block, gets scale 1 and zero point
    /// 0; a tight constant block is widened to include 0 first), epsilon (PyTorch: the scale
    /// is raised to 2^-23) or zero (GGUF, MLAS: d = 0 is kept and reconstructs to 0).
    #[arg(long, value_enum)]
    pub degenerate: Option<Degenerate>,
}

/// A flag value parsed by the type's `FromStr` (its message names the accepted values).
fn parsed<T>(s: &str) -> Result<T, String>
where
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    s.parse::<T>().map_err(|e| e.to_string())
}

/// The configuration enums as clap value enums: the values and their aliases come from
/// `core::names` (one table per type).
macro_rules! value_enums {
    ($($ty:ty),+ $(,)?) => {$(
        impl clap::ValueEnum for $ty {
            fn value_variants<'a>() -> &'a [Self] {
                <$ty as Named>::VALUES
            }

            fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
                Some(clap::builder::PossibleValue::new(Named::name(*self)).aliases(self.aliases()))
            }
        }
    )+};
}

value_enums!(
    Scheme,
    RangeSource,
    Rounding,
    Axis,
    ScaleDtype,
    SymScale,
    SymZeroPoint,
    AsymZeroPoint,
    QuantExpr,
    CodeClamp,
    NonFinite,
    Arith,
    Degenerate,
);

/// Why the flags do not make a configuration.
#[derive(Debug, thiserror::Error)]
pub enum FlagError {
    /// A core validation error.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

impl ConfigArgs {
    /// The overrides these flags describe.
    pub fn to_overrides(&self) -> Result<Overrides, FlagError> {
        Ok(Overrides {
            scheme: self.scheme,
            reduce_range: self.reduce_range,
            bits: self.bits,
            signed: match (self.signed, self.unsigned) {
                (true, _) => Some(true),
                (_, true) => Some(false),
                _ => None,
            },
            range: self.range,
            range_source: self.range_source,
            rounding: self.rounding,
            granularity: self.granularity,
            axis: self.axis,
            clipping: self.clip,
            scale_dtype: self.scale_dtype,
            zero_point_bits: self.zero_point_bits,
            sym_scale: self.sym_scale,
            sym_zero_point: self.sym_zero_point,
            asym_zero_point: self.asym_zero_point,
            clamp_zero_point: self.clamp_zero_point,
            quant_expr: self.quant_expr,
            code_clamp: self.code_clamp,
            non_finite: self.non_finite,
            arith: self.arith,
            degenerate: self.degenerate,
        })
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
pub fn find_scenario(name: &str) -> Result<crate::teach::assets::Scenario, String> {
    let path = std::path::Path::new(name);
    if path.is_file() {
        return crate::teach::assets::read_scenario(path).map_err(|e| e.to_string());
    }
    crate::teach::assets::scenario(name).map_err(|e| format!("{e} (see --list-scenarios)"))
}

/// `--list-scenarios`: one line per built-in scenario.
#[must_use]
pub fn list_scenarios(ascii: bool) -> ExitCode {
    let scenarios = crate::teach::assets::scenarios();
    let width = scenarios.iter().map(|s| s.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for s in &scenarios {
        let _ = writeln!(out, "{:width$}  {}", s.name, s.title);
    }
    write_stdout(out.as_bytes(), ascii)
}

/// `buf`, spelled in ASCII when `ascii` (`--ascii`).
fn spelled(buf: &[u8], ascii: bool) -> std::borrow::Cow<'_, [u8]> {
    if ascii {
        let text = crate::io::export::ascii::to_ascii(&String::from_utf8_lossy(buf)).into_owned();
        std::borrow::Cow::Owned(text.into_bytes())
    } else {
        std::borrow::Cow::Borrowed(buf)
    }
}

/// Writes `buf` to standard output, spelled in ASCII when `ascii` (`--ascii`); a closed pipe
/// is not an error.
pub(crate) fn write_stdout(buf: &[u8], ascii: bool) -> ExitCode {
    let buf = spelled(buf, ascii);
    let buf = buf.as_ref();
    let mut stdout = io::stdout().lock();
    match stdout.write_all(buf).and_then(|()| stdout.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => fail(&format!("could not write the output: {e}")),
    }
}

/// The config file's settings, or the exit code after its error has been printed.
pub fn load_config() -> Result<config::Config, ExitCode> {
    config::load().map_err(|e| fail(&format!("the config file {e}")))
}

/// Exit code for bad input or flags, and for a scan that analysed no tensor.
const EXIT_USAGE: u8 = 2;

/// Exit code for a scan that analysed some tensors while others failed.
const EXIT_PARTIAL: u8 = 1;

/// Writes a finished output to `output`, or to standard output without one; spelled in
/// ASCII when `ascii`.
pub(crate) fn emit(buf: &[u8], ascii: bool, output: Option<&std::path::Path>) -> ExitCode {
    let Some(path) = output else {
        return write_stdout(buf, ascii);
    };
    match std::fs::write(path, spelled(buf, ascii)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&format!("could not write {}: {e}", path.display())),
    }
}

/// Prints `message` as an error on stderr, its control characters escaped (it may quote
/// input); returns the exit code for bad input.
pub(crate) fn fail(message: &str) -> ExitCode {
    eprintln!("error: {}", crate::io::printable(message));
    ExitCode::from(EXIT_USAGE)
}

/// Prints `message` as a note on stderr, its control characters escaped.
pub(crate) fn note(message: &str) {
    eprintln!("note: {}", crate::io::printable(message));
}

/// Prints `message` as a warning on stderr, its control characters escaped.
pub(crate) fn warn(message: &str) {
    eprintln!("warning: {}", crate::io::printable(message));
}
