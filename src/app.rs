//! The explorer's state and logic, Elm-style: a [`Model`], the [`Message`]s that change it,
//! one [`update()`] function, and the keymap table that translates keys into messages and
//! also generates the help overlay and the hint line. No drawing and no terminal I/O here:
//! work such as analysis and saving is requested through [`Effect`]s that the runtime runs.

pub mod demo;
pub mod editor;
pub mod keymap;
pub mod model;
pub mod practice;
pub mod setting;
pub mod update;
pub mod worker;

pub use model::{Effect, ErrorMetric, Focus, Model, Overlay, Source};
pub use setting::{Direction, SETTINGS, Setting};
pub use update::{Message, translate, update};

/// A tensor loaded from a file, for the explorer.
#[derive(Debug, Clone)]
pub struct LoadedTensor {
    /// What to call it, e.g. `model.safetensors / layer.0.weight`.
    pub name: String,
    /// The type it is stored as in the file (`f16`, `bf16`, `f32`, `f64`); the values are
    /// analysed as `f32`, which holds every f16 and bf16 value exactly.
    pub dtype: String,
    /// The values.
    pub matrix: crate::core::Matrix,
}

/// Loads tensor `name` of a checkpoint (a .safetensors or .gguf file, or a sharded one),
/// named for display as `file / tensor`; a quantized GGUF tensor as its dequantized values.
pub fn load_tensor_named(path: &std::path::Path, name: &str) -> Result<LoadedTensor, String> {
    let opened = crate::io::checkpoint::Checkpoint::open(path).map_err(|e| e.to_string())?;
    load_tensor_of(&opened, name)
}

/// Loads tensor `name` of an opened checkpoint, named for display as `file / tensor`.
pub fn load_tensor_of(
    opened: &crate::io::checkpoint::Checkpoint,
    name: &str,
) -> Result<LoadedTensor, String> {
    let path = opened.path();
    let file = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().to_string(),
    );
    let dtype = opened
        .entries()
        .into_iter()
        .find(|t| t.name == name)
        .map_or_else(String::new, |t| t.dtype.to_ascii_lowercase());
    opened
        .load(name)
        .map(|matrix| LoadedTensor {
            name: format!("{file} / {name}"),
            dtype,
            matrix,
        })
        .map_err(|e| e.to_string())
}

/// Runs every queued analysis inline, feeding the results back through [`update()`] (what the
/// runtime does on its worker thread). For tests and headless use.
pub fn settle(model: &mut Model) {
    loop {
        let loads: Vec<(std::path::PathBuf, String)> = model
            .effects
            .iter()
            .filter_map(|e| match e {
                Effect::LoadTensor { path, name } => Some((path.clone(), name.clone())),
                _ => None,
            })
            .collect();
        model
            .effects
            .retain(|e| !matches!(e, Effect::LoadTensor { .. }));
        for (path, name) in loads {
            update(
                model,
                Message::TensorLoaded(load_tensor_named(&path, &name)),
            );
        }
        if !model.effects.iter().any(|e| matches!(e, Effect::Analyse)) {
            return;
        }
        model.effects.retain(|e| !matches!(e, Effect::Analyse));
        let job = model.job();
        worker::compute(&job, |result| {
            update(model, Message::Analysed(result));
            true
        });
    }
}
