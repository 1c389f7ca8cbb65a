//! Loading a [`Matrix`] from a file or a reader, choosing the format from the file name.
//!
//! | path                                   | format                                          |
//! |----------------------------------------|-------------------------------------------------|
//! | `*.npy`                                | numpy array ([`read_npy_file`])                 |
//! | `*.txt`, `.csv`, `.tsv`, none, unknown | channel text, UTF-8 ([`crate::io::parse_text`]) |
//! | `*.safetensors`, `*.gguf`              | one tensor of a [`Checkpoint`]                  |
//! | a directory, `*.index.json`            | one tensor of a sharded [`Checkpoint`]          |
//!
//! Extensions are matched without regard to case. Standard input (`-` on the command line)
//! goes through [`load_reader`] and is always read as text.
//!
//! Channel text is read up to [`MAX_TEXT_BYTES`] (256 MiB): a larger file, or a stream that
//! does not end (`/dev/zero`), is refused once that much has been read (a regular file's size
//! is checked before reading it), instead of being read until memory runs out. `.npy`,
//! `.safetensors` and `.gguf` files are not capped: their headers say how much they hold,
//! and are checked against the file before anything is allocated.
//!
//! A checkpoint holds many tensors: [`load_path_tensor`] loads the one named, and
//! [`load_path`] loads the checkpoint's only tensor it can open, or says that there are
//! several and names a few for `--tensor`. Only the headers and that tensor's bytes are read.
//! A quantized GGUF tensor loads as the values its stored codes reconstruct to.

use std::io::Read;
use std::path::Path;

use crate::core::Matrix;
use crate::io::checkpoint::{Checkpoint, CheckpointError};
use crate::io::npy::{NpyError, ReadNpyError, read_npy_file, stored_dtype};
use crate::io::safetensors::SafetensorsError;
use crate::io::text::{Notes, ParseError, parse_text_with_notes};

/// The most bytes of channel text a file or reader may hold: 256 MiB (about 20 million
/// values as text). Larger matrices belong in `.npy` or `.safetensors` files.
pub const MAX_TEXT_BYTES: u64 = 256 << 20;

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
    /// A text input is longer than [`MAX_TEXT_BYTES`].
    #[error(
        "{name} holds more than {} MiB of text, the most channel text that is read; save a matrix this large as .npy or .safetensors",
        MAX_TEXT_BYTES >> 20
    )]
    TooLarge {
        /// The path as given, or the reader's name.
        name: String,
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
    /// A `.safetensors` file, or the tensor asked for in it, does not load.
    #[error(transparent)]
    Safetensors(#[from] SafetensorsError),
    /// A `.gguf` file or a sharded checkpoint, or the tensor asked for in it, does not load.
    #[error(transparent)]
    Checkpoint(CheckpointError),
    /// A tensor name was given for a file that is not a checkpoint.
    #[error(
        "{name} is a {format} file, not .safetensors or .gguf: it holds one matrix and no tensor named \"{tensor}\" to pick"
    )]
    NotSafetensors {
        /// The path as given.
        name: String,
        /// The file's format, e.g. `.npy`.
        format: &'static str,
        /// The tensor name given.
        tensor: String,
    },
}

/// The formats [`load_path`] chooses between.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Text,
    Npy,
    /// `.safetensors`, `.gguf`, a directory or `*.index.json`.
    Checkpoint,
}

impl Format {
    fn of(path: &Path) -> Self {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        if Checkpoint::is_checkpoint(path) {
            return Self::Checkpoint;
        }
        match ext.as_deref() {
            Some("npy") => Self::Npy,
            _ => Self::Text,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Npy => ".npy",
            Self::Checkpoint => "checkpoint",
        }
    }
}

impl From<CheckpointError> for LoadError {
    fn from(e: CheckpointError) -> Self {
        match e {
            CheckpointError::Safetensors(e) => Self::Safetensors(e),
            e => Self::Checkpoint(e),
        }
    }
}

/// Loads a matrix from a file, choosing the format from its extension (see the
/// [module documentation](self)). A `.safetensors` file must hold exactly one floating
/// tensor of one or more dimensions; use [`load_path_tensor`] to pick one by name.
pub fn load_path(path: &Path) -> Result<Matrix, LoadError> {
    load_path_tensor(path, None)
}

/// Loads a matrix from a file like [`load_path`], or, with `tensor`, the tensor of that
/// name from a `.safetensors` file (a name given for any other format is an error).
pub fn load_path_tensor(path: &Path, tensor: Option<&str>) -> Result<Matrix, LoadError> {
    load_path_noted(path, tensor).map(|(m, _)| m)
}

/// [`load_path_tensor`], with the notes on a text file's values (values that underflow
/// `f32`, a skipped header row; none for binary files).
pub fn load_path_noted(path: &Path, tensor: Option<&str>) -> Result<(Matrix, Notes), LoadError> {
    let name = path.display().to_string();
    let format = Format::of(path);
    match (format, tensor) {
        (Format::Checkpoint, tensor) => {
            let file = Checkpoint::open(path)?;
            let matrix = match tensor {
                Some(tensor) => file.load(tensor)?,
                None => file.load_only()?,
            };
            return Ok((matrix, Notes::default()));
        }
        (_, Some(tensor)) => {
            return Err(LoadError::NotSafetensors {
                name,
                format: format.name(),
                tensor: tensor.to_owned(),
            });
        }
        _ => {}
    }
    if format == Format::Npy {
        return load_npy(path).map(|(m, _)| (m, Notes::default()));
    }
    let bytes = read_text_file(path)?;
    text_from_bytes(name, &bytes)
}

/// Loads a `.npy` file, streamed straight into the matrix (holding the file's bytes too
/// would double the peak); returns it with the element type stored (`f16`, `f32`, `f64`).
pub fn load_npy(path: &Path) -> Result<(Matrix, &'static str), LoadError> {
    let name = path.display().to_string();
    let read = std::fs::File::open(path)
        .map_err(ReadNpyError::Io)
        .and_then(|mut file| {
            let dtype = stored_dtype(&mut file).unwrap_or("f32");
            read_npy_file(&file).map(|m| (m, dtype))
        });
    read.map_err(|e| match e {
        ReadNpyError::Io(source) => LoadError::Io { name, source },
        ReadNpyError::Npy(source) => LoadError::Npy { name, source },
    })
}

/// The bytes of a text file, refused with [`LoadError::TooLarge`] beyond
/// [`MAX_TEXT_BYTES`]: a regular file by its size, before it is read; anything else (a
/// device, a pipe) once that much has been read.
pub fn read_text_file(path: &Path) -> Result<Vec<u8>, LoadError> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|source| LoadError::Io {
        name: name.clone(),
        source,
    })?;
    if let Ok(meta) = file.metadata()
        && meta.is_file()
        && meta.len() > MAX_TEXT_BYTES
    {
        return Err(LoadError::TooLarge { name });
    }
    read_capped(&name, file)
}

/// The bytes of the file at `path`, refused (as `InvalidData`) beyond `max` bytes.
pub fn read_capped_file(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("the file is larger than {max} bytes"),
        ));
    }
    Ok(bytes)
}

/// Everything `reader` holds, up to [`MAX_TEXT_BYTES`].
fn read_capped(name: &str, reader: impl Read) -> Result<Vec<u8>, LoadError> {
    let mut bytes = Vec::new();
    if let Err(source) = reader.take(MAX_TEXT_BYTES + 1).read_to_end(&mut bytes) {
        return Err(LoadError::Io {
            name: name.to_owned(),
            source,
        });
    }
    if bytes.len() as u64 > MAX_TEXT_BYTES {
        return Err(LoadError::TooLarge {
            name: name.to_owned(),
        });
    }
    Ok(bytes)
}

/// Loads a matrix from a reader (standard input, say) as channel text, of at most
/// [`MAX_TEXT_BYTES`].
///
/// `name` is only used in messages: pass `"<stdin>"` or similar.
pub fn load_reader(name: &str, reader: impl Read) -> Result<Matrix, LoadError> {
    load_reader_noted(name, reader).map(|(m, _)| m)
}

/// [`load_reader`], with the notes on the text's values.
pub fn load_reader_noted(name: &str, reader: impl Read) -> Result<(Matrix, Notes), LoadError> {
    let bytes = read_capped(name, reader)?;
    text_from_bytes(name.to_owned(), &bytes)
}

fn text_from_bytes(name: String, bytes: &[u8]) -> Result<(Matrix, Notes), LoadError> {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            return Err(LoadError::NotUtf8 {
                name,
                offset: e.valid_up_to(),
            });
        }
    };
    parse_text_with_notes(text, usize::MAX)
        .map(|p| (p.matrix, p.notes))
        .map_err(|source| LoadError::Text { name, source })
}
