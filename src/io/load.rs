//! Loading a [`Matrix`] from a file or a reader, choosing the format from the file name.
//!
//! | extension                              | format                                   |
//! |----------------------------------------|------------------------------------------|
//! | `.npy`                                 | numpy array ([`parse_npy`])              |
//! | `.txt`, `.csv`, `.tsv`, none, unknown  | channel text, UTF-8 ([`parse_text`])     |
//! | `.safetensors`                         | not supported yet: a clear error for now |
//!
//! Extensions are matched without regard to case. Standard input (`-` on the command line)
//! goes through [`load_reader`] and is always read as text.

use std::io::Read;
use std::path::Path;

use crate::core::Matrix;
use crate::io::npy::{NpyError, parse_npy};
use crate::io::text::{ParseError, parse_text};

/// Why a matrix could not be loaded. Every message starts with the file's name.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file or reader could not be read.
    #[error("cannot read {name}: {source}")]
    Io {
        /// The path as given, or the reader's name.
        name: String,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// A text input is not valid UTF-8.
    #[error("{name} is not UTF-8 text: invalid byte at offset {offset}")]
    NotUtf8 {
        /// The path as given, or the reader's name.
        name: String,
        /// 0-based byte offset of the first invalid byte.
        offset: usize,
    },
    /// A text input does not parse.
    #[error("{name}: {source}")]
    Text {
        /// The path as given, or the reader's name.
        name: String,
        /// Where and what.
        source: ParseError,
    },
    /// A `.npy` file does not load.
    #[error("{name}: {source}")]
    Npy {
        /// The path as given.
        name: String,
        /// What is wrong with it.
        source: NpyError,
    },
    /// A format quantscope recognises but cannot read yet.
    #[error(
        "{name}: {format} files are not supported yet; save the tensor with numpy.save as .npy, or write it as text"
    )]
    Unsupported {
        /// The path as given.
        name: String,
        /// The format, e.g. `.safetensors`.
        format: &'static str,
    },
}

/// The formats [`load_path`] chooses between.
enum Format {
    Text,
    Npy,
    Unsupported(&'static str),
}

impl Format {
    fn of(path: &Path) -> Self {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        match ext.as_deref() {
            Some("npy") => Self::Npy,
            Some("safetensors") => Self::Unsupported(".safetensors"),
            _ => Self::Text,
        }
    }
}

/// Loads a matrix from a file, choosing the format from its extension (see the
/// [module documentation](self)). `.safetensors` is recognised but not read yet.
pub fn load_path(path: &Path) -> Result<Matrix, LoadError> {
    let name = path.display().to_string();
    let format = Format::of(path);
    if let Format::Unsupported(format) = format {
        return Err(LoadError::Unsupported { name, format });
    }
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(source) => return Err(LoadError::Io { name, source }),
    };
    match format {
        Format::Npy => parse_npy(&bytes).map_err(|source| LoadError::Npy { name, source }),
        _ => text_from_bytes(name, &bytes),
    }
}

/// Loads a matrix from a reader (standard input, say) as channel text.
///
/// `name` is only used in messages: pass `"<stdin>"` or similar.
pub fn load_reader(name: &str, mut reader: impl Read) -> Result<Matrix, LoadError> {
    let mut bytes = Vec::new();
    if let Err(source) = reader.read_to_end(&mut bytes) {
        return Err(LoadError::Io {
            name: name.to_owned(),
            source,
        });
    }
    text_from_bytes(name.to_owned(), &bytes)
}

fn text_from_bytes(name: String, bytes: &[u8]) -> Result<Matrix, LoadError> {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            return Err(LoadError::NotUtf8 {
                name,
                offset: e.valid_up_to(),
            });
        }
    };
    parse_text(text).map_err(|source| LoadError::Text { name, source })
}
