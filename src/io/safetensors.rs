//! A reader for `.safetensors` files (Hugging Face's tensor format), written by hand.
//!
//! [`list_tensors`] reads only the header and lists every tensor, whatever its dtype.
//! [`load_tensor`] loads one tensor of dtype F32, F16, BF16 or F64 into a [`Matrix`]
//! (converted to `f32`); the other dtypes (integers, BOOL, 8-bit and smaller floats, C64)
//! are refused with a message naming the dtype. Shapes map to rows as for `.npy`:
//!
//! | shape            | matrix                                                   |
//! |------------------|----------------------------------------------------------|
//! | `[]`             | refused: a scalar is not a matrix                        |
//! | `[n]`            | one channel of `n` values                                |
//! | `[r, c]`         | `r` channels of `c` values                               |
//! | `[O, I, kH, kW]` | `O` channels of `I*kH*kW` values (trailing axes flattened) |
//!
//! # Memory: positioned reads instead of a memory map
//!
//! The usual way to read safetensors is to memory-map the file. The crate forbids `unsafe`,
//! and mapping a file is unsafe in Rust (another process may change the file under the
//! map), so this reader uses positioned reads instead, which bound memory the same way: it
//! reads the 8-byte length and the header, validates the header completely
//! ([`header::parse_header`]), then seeks to the one tensor asked for and reads only its byte
//! range. The data are read straight into the matrix's `f32` memory (allocated once, from
//! the validated size), a run at a time, through the `.npy` reader's streamed decoding; 16-
//! and 64-bit values are widened or narrowed on the way. The peak is the tensor's size as
//! `f32` plus a buffer of 64 KiB at most; the rest of the file is never read. A header that
//! claims more bytes than the file holds is refused before anything is allocated from it.
//!
//! Every error names the file, and the tensor where there is one. The reader never panics.

mod dtype;
mod error;
pub mod header;

use std::fs::File;
use std::io::Read;
use std::path::Path;

pub use dtype::{Dtype, is_loadable};
pub use error::{HeaderError, SafetensorsError};
pub use header::{Header, MAX_HEADER_LEN, MAX_RANK, TensorInfo, parse_header};

use crate::core::{Matrix, MatrixError};
use crate::io::npy::{Dtype as NpyDtype, f32_count, read_tensor};
use crate::io::read_up_to;

/// How many candidate names an "ambiguous" error shows.
const CANDIDATES_SHOWN: usize = 5;

/// An opened safetensors file: its path and validated header. Each load opens the file
/// again, so one `Safetensors` can load tensors from several threads at once.
#[derive(Debug, Clone)]
pub struct Safetensors {
    path: std::path::PathBuf,
    header: Header,
}

impl Safetensors {
    /// Reads and validates the header of the file at `path`.
    pub fn open(path: &Path) -> Result<Self, SafetensorsError> {
        let file = path.display().to_string();
        let io = |source| SafetensorsError::Io {
            file: file.clone(),
            source,
        };
        let mut f = File::open(path).map_err(io)?;
        let file_len = f.metadata().map_err(io)?.len();
        let mut len_bytes = [0_u8; 8];
        let have = read_up_to(&mut f, &mut len_bytes).map_err(io)?;
        // Check the length before allocating the header's buffer.
        let header_err = |source| SafetensorsError::Header {
            file: file.clone(),
            source,
        };
        if have < 8 {
            return Err(header_err(HeaderError::TooShort { len: have as u64 }));
        }
        let header_len = u64::from_le_bytes(len_bytes);
        if header_len > MAX_HEADER_LEN {
            return Err(header_err(HeaderError::HeaderTooLong { header_len }));
        }
        let available = file_len.saturating_sub(8);
        if header_len > available {
            return Err(header_err(HeaderError::HeaderPastEnd {
                header_len,
                available,
            }));
        }
        let mut bytes = vec![0_u8; 8 + header_len as usize];
        bytes[..8].copy_from_slice(&len_bytes);
        f.read_exact(&mut bytes[8..]).map_err(io)?;
        let header = parse_header(&bytes, file_len).map_err(header_err)?;
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

    /// Every tensor, sorted by name.
    #[must_use]
    pub fn tensors(&self) -> &[TensorInfo] {
        &self.header.tensors
    }

    /// The tensors [`load`](Self::load) can read: F32, F16, BF16 or F64 with at least one axis.
    pub fn loadable(&self) -> impl Iterator<Item = &TensorInfo> {
        self.tensors()
            .iter()
            .filter(|t| is_loadable(t.dtype) && !t.shape.is_empty())
    }

    /// Loads the tensor called `name` into a matrix (see the [module documentation](self)).
    pub fn load(&self, name: &str) -> Result<Matrix, SafetensorsError> {
        let file = self.path.display().to_string();
        let Some(info) = self.header.tensor(name) else {
            return Err(SafetensorsError::NoSuchTensor {
                hint: self.hint(name),
                file,
                tensor: name.to_owned(),
            });
        };
        let tensor = || info.name.clone();
        if !is_loadable(info.dtype) {
            return Err(SafetensorsError::UnsupportedDtype {
                file,
                tensor: tensor(),
                dtype: info.dtype,
            });
        }
        let Some((&first, trailing)) = info.shape.split_first() else {
            return Err(SafetensorsError::ZeroDimensional {
                file,
                tensor: tensor(),
            });
        };
        if info.elements() == 0 {
            return Err(SafetensorsError::Empty {
                file,
                tensor: tensor(),
                shape: info.shape.clone(),
            });
        }
        // The header was validated: these products fit in u64 and match the byte range.
        let (rows, cols) = if trailing.is_empty() {
            (1, first)
        } else {
            (first, trailing.iter().product())
        };
        let too_large = || SafetensorsError::TooLarge {
            file: file.clone(),
            tensor: tensor(),
            bytes: info.elements().saturating_mul(4),
        };
        let count = f32_count(info.elements()).ok_or_else(too_large)?;
        let dtype = match info.dtype {
            Dtype::F32 => NpyDtype::F32,
            Dtype::F16 => NpyDtype::F16,
            Dtype::F64 => NpyDtype::F64,
            // BF16, the one other dtype `load` lets through.
            _ => NpyDtype::Bf16,
        };
        let start = self.header.data_start + info.data_offsets.0;
        let (values, first_bad, stored) =
            read_tensor(&self.path, start, count, dtype).map_err(|source| {
                SafetensorsError::Io {
                    file: file.clone(),
                    source,
                }
            })?;
        Matrix::from_flat(values, rows, cols, first_bad).map_err(|e| match e {
            MatrixError::NotFinite { row, col, value } => SafetensorsError::NotFinite {
                file,
                tensor: tensor(),
                row,
                col,
                // An F64 beyond f32's range as stored, not as the infinity it became.
                value: stored.unwrap_or(f64::from(value)),
            },
            // Non-empty and unlabelled by construction; report as empty if it ever happens.
            _ => SafetensorsError::Empty {
                file,
                tensor: tensor(),
                shape: info.shape.clone(),
            },
        })
    }

    /// A hint for a name that is not in the file: names containing it, or how to list them.
    fn hint(&self, name: &str) -> String {
        name_hint(self.tensors().iter().map(|t| t.name.as_str()), name)
    }

    /// The one loadable tensor, or an error saying there is none or there are several.
    pub fn load_only(&self) -> Result<Matrix, SafetensorsError> {
        let loadable: Vec<&TensorInfo> = self.loadable().collect();
        match loadable.as_slice() {
            [only] => self.load(&only.name),
            [] => Err(SafetensorsError::NoFloatTensor {
                file: self.path.display().to_string(),
                count: self.tensors().len(),
            }),
            many => Err(SafetensorsError::Ambiguous {
                file: self.path.display().to_string(),
                count: many.len(),
                candidates: candidates(many.iter().map(|t| (t.name.as_str(), t.shape.len()))),
            }),
        }
    }
}

/// The names (quoted) an "ambiguous" error shows of the tensors `many`, given as (name,
/// number of axes): at most [`CANDIDATES_SHOWN`], matrices first, since they are what people
/// usually mean to quantize.
pub(crate) fn candidates<'a>(many: impl Iterator<Item = (&'a str, usize)> + Clone) -> Vec<String> {
    many.clone()
        .filter(|&(_, axes)| axes >= 2)
        .chain(many.filter(|&(_, axes)| axes < 2))
        .take(CANDIDATES_SHOWN)
        .map(|(name, _)| format!("\"{name}\""))
        .collect()
}

/// A hint for a tensor name that is not among `names`: up to five names containing it
/// (ignoring case), or how many there are and how to list them.
pub(crate) fn name_hint<'a>(names: impl Iterator<Item = &'a str> + Clone, name: &str) -> String {
    let lower = name.to_lowercase();
    let similar: Vec<String> = names
        .clone()
        .filter(|t| !lower.is_empty() && t.to_lowercase().contains(&lower))
        .take(CANDIDATES_SHOWN)
        .map(|t| format!("\"{t}\""))
        .collect();
    if similar.is_empty() {
        format!(
            " (it has {}; --list-tensors lists them)",
            crate::io::export::num::count(names.count(), "tensor")
        )
    } else {
        format!("; did you mean {}?", similar.join(", "))
    }
}

/// Lists every tensor of the file at `path` (any dtype), sorted by name. Reads only the
/// header.
pub fn list_tensors(path: &Path) -> Result<Vec<TensorInfo>, SafetensorsError> {
    Ok(Safetensors::open(path)?.header.tensors)
}

/// Loads the tensor called `name` from the file at `path` into a [`Matrix`]. Reads only the
/// header and that tensor's bytes.
pub fn load_tensor(path: &Path, name: &str) -> Result<Matrix, SafetensorsError> {
    Safetensors::open(path)?.load(name)
}

/// A shape as `[384, 1536]`.
#[must_use]
pub fn format_shape(shape: &[usize]) -> String {
    let parts: Vec<String> = shape.iter().map(ToString::to_string).collect();
    format!("[{}]", parts.join(", "))
}
