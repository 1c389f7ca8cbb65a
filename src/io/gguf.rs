//! A reader for GGUF files (llama.cpp's model format), versions 2 and 3, little-endian.
//!
//! [`Gguf::open`] reads and validates the header only ([`parse`]): the key/value metadata
//! of every type, the tensor infos, `general.alignment` and where the data starts. Nothing
//! is sized from a number in the file before that number is checked against the file's
//! length, and every error names the field at fault. A big-endian file is refused.
//!
//! Tensors are read with positioned reads (the crate forbids `unsafe`, so no memory map),
//! one tensor at a time:
//!
//! - F32, F16, BF16 and F64 tensors load as a [`Matrix`] ([`Gguf::load`]), read straight
//!   into its `f32` memory and converted on the way, like a safetensors tensor;
//! - every tensor's stored bytes can be read row by row ([`Gguf::read_rows`]), which is how
//!   quantized blocks reach their decoders.
//!
//! Shapes are given rows first, as numpy and safetensors give them: GGUF stores the
//! dimensions innermost first (`ne[0]` is a row's length), so a `[2048, 640]` weight in
//! gguf-py's `tensor.shape` is `[640, 2048]` here: 640 rows of 2048 values.

mod error;
mod metadata;
pub mod parse;
mod types;

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

pub use error::{GgufError, ParseError};
pub use metadata::{MetadataJson, Value};
pub use parse::read_header;
pub use types::{GgmlType, ValueType};

use crate::core::{Matrix, MatrixError};
use crate::io::npy::{Dtype as NpyDtype, f32_count, read_tensor};

/// One tensor as the header describes it, after validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorInfo {
    /// The tensor's name.
    pub name: String,
    /// Its ggml type.
    pub ggml_type: GgmlType,
    /// Its dimensions as stored, innermost first (`ne[0]` is a row's length).
    pub dims: Vec<u64>,
    /// Its shape rows first (the dimensions reversed).
    pub shape: Vec<usize>,
    /// Where its bytes start, from the start of the data section.
    pub offset: u64,
    /// Its size in bytes.
    pub bytes: u64,
}

impl TensorInfo {
    /// Number of values.
    #[must_use]
    pub fn elements(&self) -> u64 {
        self.dims.iter().product()
    }

    /// Values per row (`ne[0]`).
    #[must_use]
    pub fn row_len(&self) -> usize {
        self.shape.last().copied().unwrap_or(0)
    }

    /// Number of rows: the product of every dimension but the first.
    #[must_use]
    pub fn rows(&self) -> usize {
        self.shape.iter().rev().skip(1).product()
    }

    /// Bytes of one stored row.
    #[must_use]
    pub fn row_bytes(&self) -> u64 {
        self.dims[0] / u64::from(self.ggml_type.block_len) * u64::from(self.ggml_type.block_bytes)
    }
}

/// A parsed and validated header.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    /// The format version (2 or 3).
    pub version: u32,
    /// The key/value pairs, in file order.
    pub metadata: Vec<(String, Value)>,
    /// The tensors, in file order.
    pub tensors: Vec<TensorInfo>,
    /// The data section's alignment (`general.alignment`, default 32).
    pub alignment: u64,
    /// Where the data section starts in the file.
    pub data_start: u64,
    /// Length of the data section.
    pub data_len: u64,
}

impl Header {
    /// The tensor called `name`, if there is one.
    #[must_use]
    pub fn tensor(&self, name: &str) -> Option<&TensorInfo> {
        self.tensors.iter().find(|t| t.name == name)
    }

    /// The value of metadata key `key`, if present.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.metadata.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// Parses and validates a GGUF header held in `bytes`, the start of a file of `file_len`
/// bytes (for tests and fuzzing; [`Gguf::open`] reads from the file).
pub fn parse_header(bytes: &[u8], file_len: u64) -> Result<Header, ParseError> {
    read_header(bytes, file_len).map_err(|e| match e {
        parse::ReadError::Parse(e) => e,
        // A slice fails only by ending, which the length check reports as truncation.
        parse::ReadError::Io(_) => ParseError::Truncated {
            field: "the header".to_owned(),
            at: bytes.len() as u64,
            need: 1,
            have: 0,
        },
    })
}

/// An opened GGUF file: its path and validated header. Each read opens the file again, so
/// one `Gguf` can be read from several threads at once.
#[derive(Debug, Clone)]
pub struct Gguf {
    path: PathBuf,
    header: Header,
}

impl Gguf {
    /// Reads and validates the header of the file at `path`.
    pub fn open(path: &Path) -> Result<Self, GgufError> {
        let file = path.display().to_string();
        let io = |source| GgufError::Io {
            file: file.clone(),
            source,
        };
        let f = File::open(path).map_err(io)?;
        let len = f.metadata().map_err(io)?.len();
        let header =
            read_header(BufReader::with_capacity(1 << 16, f), len).map_err(|e| match e {
                parse::ReadError::Parse(source) => GgufError::Header {
                    file: file.clone(),
                    source,
                },
                parse::ReadError::Io(source) => io(source),
            })?;
        Ok(Self {
            path: path.to_path_buf(),
            header,
        })
    }

    /// The file's path.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The validated header.
    #[must_use]
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Every tensor, in file order.
    #[must_use]
    pub fn tensors(&self) -> &[TensorInfo] {
        &self.header.tensors
    }

    fn file(&self) -> String {
        self.path.display().to_string()
    }

    /// The tensor called `name`, or an error with similar names.
    pub fn info(&self, name: &str) -> Result<&TensorInfo, GgufError> {
        self.header
            .tensor(name)
            .ok_or_else(|| GgufError::NoSuchTensor {
                file: self.file(),
                tensor: name.to_owned(),
                hint: crate::io::safetensors::name_hint(
                    self.tensors().iter().map(|t| t.name.as_str()),
                    name,
                ),
            })
    }

    /// Reads rows `rows` of tensor `t` as stored (`t.row_bytes()` bytes each), in order.
    pub fn read_rows(
        &self,
        t: &TensorInfo,
        rows: std::ops::Range<usize>,
    ) -> Result<Vec<u8>, GgufError> {
        let io = |source| GgufError::Io {
            file: self.file(),
            source,
        };
        let row_bytes = t.row_bytes();
        let start = self.header.data_start + t.offset + rows.start as u64 * row_bytes;
        let len = (rows.end.saturating_sub(rows.start)) as u64 * row_bytes;
        let mut buf = Vec::new();
        buf.try_reserve_exact(usize::try_from(len).unwrap_or(usize::MAX))
            .map_err(|_| GgufError::TooLarge {
                file: self.file(),
                tensor: t.name.clone(),
                bytes: len,
            })?;
        let mut f = File::open(&self.path).map_err(io)?;
        f.seek(SeekFrom::Start(start)).map_err(io)?;
        f.take(len).read_to_end(&mut buf).map_err(io)?;
        if (buf.len() as u64) < len {
            return Err(io(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the file is shorter than when its header was read",
            )));
        }
        Ok(buf)
    }

    /// Loads floating tensor `name` (F32, F16, BF16, F64) into a matrix: one row per row of
    /// the tensor (every dimension but the first), converted to `f32`.
    pub fn load(&self, name: &str) -> Result<Matrix, GgufError> {
        let t = self.info(name)?;
        if !t.ggml_type.is_float() {
            return Err(GgufError::Unsupported {
                file: self.file(),
                tensor: t.name.clone(),
                ggml_type: t.ggml_type,
            });
        }
        if t.elements() == 0 {
            return Err(GgufError::Empty {
                file: self.file(),
                tensor: t.name.clone(),
                shape: t.shape.clone(),
            });
        }
        let (rows, cols) = (t.rows(), t.row_len());
        let too_large = || GgufError::TooLarge {
            file: self.file(),
            tensor: t.name.clone(),
            bytes: t.elements().saturating_mul(4),
        };
        let count = f32_count(t.elements()).ok_or_else(too_large)?;
        let dtype = match t.ggml_type.name {
            "F32" => NpyDtype::F32,
            "F16" => NpyDtype::F16,
            "BF16" => NpyDtype::Bf16,
            // F64, the one other float type.
            _ => NpyDtype::F64,
        };
        let start = self.header.data_start + t.offset;
        let (values, first_bad, stored) =
            read_tensor(&self.path, start, count, dtype).map_err(|source| GgufError::Io {
                file: self.file(),
                source,
            })?;
        Matrix::from_flat(values, rows, cols, first_bad).map_err(|e| match e {
            MatrixError::NotFinite { row, col, value } => GgufError::NotFinite {
                file: self.file(),
                tensor: t.name.clone(),
                row,
                col,
                // An F64 beyond f32's range as stored, not as the infinity it became.
                value: stored.unwrap_or(f64::from(value)),
            },
            _ => GgufError::Empty {
                file: self.file(),
                tensor: t.name.clone(),
                shape: t.shape.clone(),
            },
        })
    }
}
