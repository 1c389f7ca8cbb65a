//! Input and output: the text parser, file loaders and the report exporters.

pub mod assets;
pub mod demo;
pub mod export;
pub mod load;
pub mod npy;
pub mod safetensors;
pub mod save;
pub mod text;

pub use load::{LoadError, load_path, load_path_tensor, load_reader};
pub use npy::{NpyError, parse_npy};
pub use safetensors::{Safetensors, SafetensorsError, TensorInfo, list_tensors, load_tensor};
pub use text::{
    Note, NoteKind, Notes, ParseError, ParseErrorKind, Parsed, format_text, parse_text,
    parse_text_limited, parse_text_with_notes,
};
