//! Starting the explorer: on a file, a scenario, the built-in example, a demo script or
//! practice mode. Files are opened before the terminal is touched, so a bad file is a plain
//! error message and exit code 2.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use clap::Args;

use crate::app::LoadedTensor;
use crate::app::model::Overlay;
use crate::app::{Model, update::start_practice};
use crate::cli::config::Config;
use crate::cli::{BUILTIN_EXAMPLE, Cli, fail, find_scenario, list_scenarios, write_stdout};
use crate::io::LoadError;
use crate::io::checkpoint::Checkpoint;
use crate::io::load::load_npy;
use crate::runtime::files::load_tensor_of;
use crate::tui;

/// Arguments of `quantscope demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// A built-in script's name (see --list) or a script file (.toml); default quiet-row.
    pub script: Option<String>,
    /// List the built-in demo scripts, and exit.
    #[arg(long)]
    pub list: bool,
    /// How the explorer looks and takes input.
    #[command(flatten)]
    pub look: crate::cli::Look,
}

/// Arguments of `quantscope practice`.
#[derive(Debug, Args)]
pub struct PracticeArgs {
    /// The exercise to start with: a built-in's name (see --list); default the first.
    pub exercise: Option<String>,
    /// List the built-in exercises, and exit.
    #[arg(long)]
    pub list: bool,
    /// How the explorer looks and takes input.
    #[command(flatten)]
    pub look: crate::cli::Look,
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().to_string(),
    )
}

/// Opens a file for the explorer through the loaders `report` uses: text as it is (the
/// editor shows parse errors), `.npy` as a read-only matrix, a checkpoint (`.safetensors`,
/// `.gguf`, sharded) through the tensor picker, or directly when it holds one tensor to
/// open. A missing text file starts empty.
fn open(path: &Path, preset: &'static str) -> Result<Model, String> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if ext == "npy" {
        // The loader `report` uses: streamed into the matrix, not read whole first.
        let (matrix, dtype) = load_npy(path).map_err(|e| e.to_string())?;
        let mut model = Model::with_tensor(LoadedTensor {
            name: file_name(path),
            dtype: dtype.to_owned(),
            matrix,
            stored: None,
        });
        start_with(&mut model, preset);
        return Ok(model);
    }
    if Checkpoint::is_checkpoint(path) {
        let file = Checkpoint::open(path).map_err(|e| e.to_string())?;
        let all = file.entries();
        let loadable: Vec<_> = all.iter().filter(|t| t.not_loadable().is_none()).collect();
        if let [only] = loadable.as_slice() {
            let mut model = Model::with_tensor(load_tensor_of(&file, &only.name)?);
            start_with(&mut model, preset);
            return Ok(model);
        }
        if loadable.is_empty() {
            return Err(format!(
                "{}: no floating or decodable tensor to open (see quantscope report --list-tensors)",
                path.display()
            ));
        }
        let mut model = Model::with_text("", None);
        start_with(&mut model, preset);
        model.overlay = Some(Overlay::tensor_picker(path.to_path_buf(), all));
        return Ok(model);
    }
    match crate::io::load::read_text_file(path) {
        Ok(bytes) => {
            let text = String::from_utf8(bytes).map_err(|e| {
                format!(
                    "{}: not UTF-8 text (invalid byte at offset {})",
                    path.display(),
                    e.utf8_error().valid_up_to()
                )
            })?;
            let mut model = Model::with_text(&text, Some(path.to_path_buf()));
            // The config's preset, unless the text's own #! lines name one.
            start_with(&mut model, preset);
            model.apply_text_header(&file_name(path));
            Ok(model)
        }
        Err(LoadError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            let mut model = Model::with_text("", Some(path.to_path_buf()));
            start_with(&mut model, preset);
            model.status = Some(format!("new file {}: Ctrl-S saves it", path.display()));
            Ok(model)
        }
        Err(e) => Err(e.to_string()),
    }
}

/// Starts `model` with `preset` (the config file's), its own settings.
fn start_with(model: &mut Model, preset: &'static str) {
    if let Err(e) = model.apply_settings(preset, crate::core::presets::Overrides::default()) {
        model.status = Some(format!("the config file's preset {preset}: {e}"));
    }
}

/// The explorer on the built-in example, with its scenario's caption: what `quantscope`
/// opens with no file (README's first screen).
#[must_use]
pub fn builtin() -> Model {
    let mut model = Model::with_text(BUILTIN_EXAMPLE, None);
    if let Ok(scenario) = crate::teach::assets::scenario("quiet-loud") {
        model.load_scenario(&scenario);
        model.status = None;
    }
    model
}

fn run(model: Model, cli: &Cli, look: &crate::cli::Look, config: &Config) -> ExitCode {
    if let Some(why) = tui::no_terminal() {
        return fail(&format!(
            "the explorer needs a terminal ({why}); `quantscope report [FILE]` prints the same analysis without one"
        ));
    }
    if let Err(e) = color_eyre::install() {
        eprintln!("error: {e}");
    }
    // A flag given wins over the config file.
    let options = tui::Options {
        mouse: config.mouse && !look.no_mouse,
        theme: look.theme.unwrap_or(config.theme),
        ..tui::Options::from_env(cli.ascii || config.ascii)
    };
    match tui::run(model, options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:?}");
            ExitCode::FAILURE
        }
    }
}

/// `quantscope [FILE]`: the explorer.
#[must_use]
pub fn explore(cli: &Cli, config: &Config) -> ExitCode {
    if cli.list_scenarios {
        return list_scenarios(cli.ascii || config.ascii);
    }
    let model = if let Some(name) = &cli.scenario {
        match find_scenario(name) {
            Ok(s) => {
                let mut m = Model::with_text(&s.text, None);
                m.load_scenario(&s);
                m
            }
            Err(e) => return fail(&e),
        }
    } else if let Some(path) = &cli.file {
        match open(path, config.preset) {
            Ok(m) => m,
            Err(e) => return fail(&e),
        }
    } else {
        builtin()
    };
    let mut model = model;
    if let Err(e) = load_importance(&mut model, &cli.importance) {
        return fail(&e);
    }
    run(model, cli, &cli.look, config)
}

/// `--imatrix`, `--imatrix-tensor`, `--activations`: loaded before the terminal is touched
/// and checked against a loaded tensor (text is checked once it parses, in the explorer).
fn load_importance(
    model: &mut Model,
    args: &crate::cli::importance::ImportanceArgs,
) -> Result<(), String> {
    if args.is_empty() {
        return args.measure_only_alone();
    }
    let imatrix = args.imatrix.as_ref().map(|p| p.display().to_string());
    let (tensor, matrix) = match &model.source {
        crate::app::Source::Tensor { name, matrix, .. } => (
            Some(name.rsplit(" / ").next().unwrap_or(name).to_string()),
            Some(std::sync::Arc::clone(matrix)),
        ),
        crate::app::Source::Text { .. } => (None, None),
    };
    let request = crate::runtime::importance::Request {
        imatrix: imatrix.as_deref(),
        pick: args.imatrix_tensor.as_deref(),
        activations: args.activations.as_deref(),
        tensor: tensor.as_deref(),
    };
    let loaded = crate::runtime::importance::load(&request, matrix.as_deref())?;
    model.importance.loaded = Some(std::sync::Arc::new(loaded));
    model.importance.mode = if args.measure_only {
        crate::app::model::ImportanceMode::Measure
    } else {
        crate::app::model::ImportanceMode::Weigh
    };
    model.request_analysis();
    Ok(())
}

/// `quantscope demo [SCRIPT]`.
#[must_use]
pub fn demo(args: &DemoArgs, cli: &Cli, config: &Config) -> ExitCode {
    let ascii = cli.ascii || config.ascii;
    if args.list {
        let out: String =
            crate::teach::script::demo_scripts()
                .iter()
                .fold(String::new(), |mut out, d| {
                    let _ = writeln!(out, "{}  {}", d.name, d.title);
                    out
                });
        return write_stdout(out.as_bytes(), ascii);
    }
    let name = args.script.as_deref().unwrap_or("quiet-row");
    let path = Path::new(name);
    let script = if path.is_file() {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => return fail(&format!("{}: {e}", path.display())),
        };
        crate::teach::script::parse_demo(&file_name(path), &text)
    } else {
        crate::teach::script::demo_script(name)
    };
    let script = match script {
        Ok(s) => s,
        Err(e) => return fail(&format!("{e} (see quantscope demo --list)")),
    };
    let mut model = Model::with_text("", None);
    model.demo = Some(crate::app::demo::Demo::new(script));
    crate::app::demo::go_to(&mut model, 1);
    run(model, cli, &args.look, config)
}

/// `quantscope practice [EXERCISE]`.
#[must_use]
pub fn practice(args: &PracticeArgs, cli: &Cli, config: &Config) -> ExitCode {
    let ascii = cli.ascii || config.ascii;
    let names = crate::teach::assets::exercise_names();
    if args.list {
        let out: String =
            crate::teach::assets::exercises()
                .iter()
                .fold(String::new(), |mut out, e| {
                    let _ = writeln!(out, "{}  {}", e.name, e.title);
                    out
                });
        return write_stdout(out.as_bytes(), ascii);
    }
    let index = match &args.exercise {
        None => 0,
        Some(n) => match names.iter().position(|x| x == n) {
            Some(i) => i,
            None => {
                return fail(&format!(
                    "no built-in exercise {n:?} (see quantscope practice --list)"
                ));
            }
        },
    };
    let mut model = builtin();
    start_practice(&mut model, index);
    if model.practice.is_none() {
        return fail(
            model
                .status
                .as_deref()
                .unwrap_or("could not start practice mode"),
        );
    }
    run(model, cli, &args.look, config)
}
