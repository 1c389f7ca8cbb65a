//! The explorer's state and logic, Elm-style: a [`Model`], the [`Message`]s that change it,
//! one [`update()`] function, and the keymap table that translates keys into messages and
//! also generates the help overlay and the hint line. No drawing and no terminal I/O here:
//! work such as analysis, loading and saving is requested through [`Effect`]s that
//! [`crate::runtime`] performs, and its results come back as [`Message`]s.

pub mod analysis;
pub mod calibration;
pub mod demo;
pub mod editor;
pub mod effect;
pub mod input;
pub mod keymap;
pub mod model;
pub mod overlay;
pub mod palette;
pub mod practice;
pub mod setting;
pub mod update;
pub mod worker;

pub use input::{mode, translate};
pub use model::{Effect, ErrorMetric, Focus, Model, Overlay, Source, StoredView};
pub use setting::{Direction, SETTINGS, Setting};
pub use update::{Message, update};

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
    /// For a quantized GGUF tensor, what its stored codes say (the values are then its
    /// dequantized values: the original weights are not in the file).
    pub stored: Option<std::sync::Arc<crate::io::stored::Stored>>,
}
