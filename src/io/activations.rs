//! Calibration activations from files, as [`Tokens`]: a `.npy` array, a tensor of a
//! checkpoint (`FILE:TENSOR`: safetensors, GGUF or a sharded checkpoint), or channel text
//! (one token per line).
//!
//! The last axis is the width (the layer's input features) and every other axis counts
//! tokens: `[tokens, width]`, or `[batch, sequence, width]` read as `batch * sequence`
//! tokens. A `.npy` array (in C order) or a safetensors tensor larger than
//! [`IN_MEMORY_BYTES`] as `f32` is read a chunk of tokens at a time, each time it is needed
//! ([`Streamed`]), so activations larger than memory can be used; smaller ones, text and
//! GGUF tensors are read into memory once. Every value must be finite: a NaN or an infinity
//! is refused with its token and column, when its chunk is read.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use ndarray::Array2;

use crate::core::importance::{Activations, Tokens, TokensError};
use crate::io::checkpoint::Checkpoint;
use crate::io::load::{LoadError, load_path_tensor};
use crate::io::npy::{Dtype, ReadNpyError, RowLayout, decode, row_layout};
use crate::io::safetensors::{Safetensors, SafetensorsError, name_hint};

/// Activations at most this large as `f32` (512 MiB) are read into memory once; larger ones
/// are read a chunk of tokens at a time.
pub const IN_MEMORY_BYTES: u64 = 512 << 20;

/// Why activations could not be opened. Every message names the file.
#[derive(Debug, thiserror::Error)]
pub enum ActivationsError {
    /// Neither a file nor `FILE:TENSOR` of an existing file.
    #[error(
        "cannot read activations {spec}: no such file (give a .npy, safetensors, GGUF or text FILE, or FILE:TENSOR)"
    )]
    NoFile {
        /// As given.
        spec: String,
    },
    /// The file (or its tensor) does not load.
    #[error("activations: {0}")]
    Load(#[from] LoadError),
    /// The file could not be read.
    #[error("cannot read activations {file}: {source}")]
    Io {
        /// The path as given.
        file: String,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The tokens could not be read, or hold a value that is not finite (the message names
    /// the file).
    #[error("{0}")]
    Tokens(String),
    /// A safetensors file that does not open.
    #[error("activations: {0}")]
    Safetensors(#[from] SafetensorsError),
    /// The tensor is not there.
    #[error("activations {file} has no tensor \"{tensor}\"{hint}")]
    NoTensor {
        /// The path as given.
        file: String,
        /// The tensor asked for.
        tensor: String,
        /// Similar names.
        hint: String,
    },
    /// A tensor that is not floating, or a scalar.
    #[error("activations {file}:{tensor}: {why}")]
    NotActivations {
        /// The path as given.
        file: String,
        /// The tensor.
        tensor: String,
        /// What it is instead.
        why: String,
    },
    /// A checkpoint of several tensors and no tensor named.
    #[error(
        "activations {file} is a checkpoint of several tensors: give the one to read as {file}:TENSOR"
    )]
    WhichTensor {
        /// The path as given.
        file: String,
    },
}

/// Activations read from a file a chunk of tokens at a time.
#[derive(Debug, Clone)]
pub struct Streamed {
    path: PathBuf,
    name: String,
    data_start: u64,
    dtype: Dtype,
    big_endian: bool,
    tokens: usize,
    width: usize,
}

impl Tokens for Streamed {
    fn shape(&self) -> (usize, usize) {
        (self.tokens, self.width)
    }

    fn read(&self, first: usize, out: &mut [f32]) -> Result<(), TokensError> {
        let n = out.len() / self.width.max(1);
        if first + n > self.tokens {
            return Err(TokensError(format!(
                "{}: tokens {first}..{} asked for, it holds {}",
                self.name,
                first + n,
                self.tokens
            )));
        }
        let size = self.dtype.size();
        let at = self.data_start + (first * self.width * size) as u64;
        let mut bytes = vec![0u8; out.len() * size];
        let io = |e: std::io::Error| TokensError(format!("cannot read {}: {e}", self.name));
        let mut f = File::open(&self.path).map_err(io)?;
        f.seek(SeekFrom::Start(at)).map_err(io)?;
        f.read_exact(&mut bytes).map_err(io)?;
        let mut values = Vec::with_capacity(out.len());
        decode(&bytes, self.dtype, self.big_endian, &mut values);
        if let Some(i) = values.iter().position(|v| !v.is_finite()) {
            return Err(TokensError(format!(
                "activations {}: token {}, column {} (0-based) is {}: only finite values are allowed",
                self.name,
                first + i / self.width,
                i % self.width,
                values[i]
            )));
        }
        out.copy_from_slice(&values);
        Ok(())
    }

    fn name(&self) -> String {
        self.name.clone()
    }
}

impl Streamed {
    /// Every token, read into memory.
    fn into_memory(self) -> Result<Activations, TokensError> {
        let mut x = Array2::<f32>::zeros((self.tokens, self.width));
        if let Some(flat) = x.as_slice_mut() {
            self.read(0, flat)?;
        }
        Ok(Activations::new(x, self.name))
    }
}

/// Opens `spec` (`FILE` or `FILE:TENSOR`) as activations, streamed when larger than
/// [`IN_MEMORY_BYTES`].
pub fn open_activations(spec: &str) -> Result<Box<dyn Tokens>, ActivationsError> {
    open_activations_with(spec, IN_MEMORY_BYTES)
}

/// [`open_activations`], streamed when larger than `in_memory` bytes as `f32`.
pub fn open_activations_with(
    spec: &str,
    in_memory: u64,
) -> Result<Box<dyn Tokens>, ActivationsError> {
    let (path, tensor) = split_spec(spec)?;
    let file = path.display().to_string();
    let streamed = if let Some(t) = tensor.as_deref() {
        safetensors_tensor(&path, t)?
    } else if has_extension(&path, "npy") {
        npy_rows(&path, spec)?
    } else {
        None
    };
    if let Some(s) = streamed {
        let bytes = (s.tokens as u64).saturating_mul(s.width as u64 * 4);
        if bytes > in_memory {
            return Ok(Box::new(s));
        }
        return s
            .into_memory()
            .map(|a| Box::new(a) as Box<dyn Tokens>)
            .map_err(|e| ActivationsError::Tokens(e.0));
    }
    if tensor.is_none() && Checkpoint::is_checkpoint(&path) {
        let c = Checkpoint::open(&path).map_err(LoadError::from)?;
        if c.entries()
            .iter()
            .filter(|e| e.not_loadable().is_none())
            .count()
            > 1
        {
            return Err(ActivationsError::WhichTensor { file });
        }
    }
    let m = load_path_tensor(&path, tensor.as_deref())?;
    let (x, _) = m.into_parts();
    Ok(Box::new(Activations::new(x, spec)))
}

/// The `(tokens, width)` a `.npy` file's bytes hold as activations, checked as
/// [`open_activations`] checks them (`None` for a Fortran-order array, which loads whole).
pub fn npy_tokens(bytes: &[u8]) -> Result<Option<(usize, usize)>, crate::io::NpyError> {
    match row_layout(&mut std::io::Cursor::new(bytes)) {
        Ok(l) => Ok(l.map(|l| {
            let width = l.last_axis.max(1);
            (l.rows * l.cols / width, width)
        })),
        Err(ReadNpyError::Npy(e)) => Err(e),
        // A slice fails only by ending: the header is truncated.
        Err(ReadNpyError::Io(_)) => Err(crate::io::NpyError::TruncatedHeader {
            needed: bytes.len() + 1,
            available: bytes.len(),
        }),
    }
}

fn has_extension(path: &Path, ext: &str) -> bool {
    path.extension()
        .is_some_and(|e| e.to_string_lossy().eq_ignore_ascii_case(ext))
}

/// The file and the tensor of `FILE[:TENSOR]`: the whole text when it is a file, else the
/// part before the last `:` when that is one.
fn split_spec(spec: &str) -> Result<(PathBuf, Option<String>), ActivationsError> {
    let whole = PathBuf::from(spec);
    if whole.exists() {
        return Ok((whole, None));
    }
    if let Some((file, tensor)) = spec.rsplit_once(':') {
        let p = PathBuf::from(file);
        if p.exists() && !tensor.is_empty() {
            return Ok((p, Some(tensor.to_owned())));
        }
    }
    Err(ActivationsError::NoFile {
        spec: spec.to_owned(),
    })
}

/// A C-order `.npy` file's rows as tokens of its last axis (`None` for Fortran order,
/// which loads whole).
fn npy_rows(path: &Path, spec: &str) -> Result<Option<Streamed>, ActivationsError> {
    let file = path.display().to_string();
    let mut f = File::open(path).map_err(|source| ActivationsError::Io {
        file: file.clone(),
        source,
    })?;
    let layout: RowLayout = match row_layout(&mut f) {
        Ok(Some(l)) => l,
        Ok(None) => return Ok(None),
        Err(ReadNpyError::Io(source)) => return Err(ActivationsError::Io { file, source }),
        Err(ReadNpyError::Npy(source)) => {
            return Err(LoadError::Npy { name: file, source }.into());
        }
    };
    let width = layout.last_axis.max(1);
    Ok(Some(Streamed {
        path: path.to_path_buf(),
        name: spec.to_owned(),
        data_start: layout.data_start,
        dtype: layout.dtype,
        big_endian: layout.big_endian,
        tokens: layout.rows * layout.cols / width,
        width,
    }))
}

/// A safetensors tensor as tokens of its last axis (`None` for a GGUF or sharded
/// checkpoint's tensor, which loads whole).
fn safetensors_tensor(path: &Path, tensor: &str) -> Result<Option<Streamed>, ActivationsError> {
    if !has_extension(path, "safetensors") {
        return Ok(None);
    }
    let file = path.display().to_string();
    let st = Safetensors::open(path)?;
    let Some(info) = st.header().tensor(tensor) else {
        return Err(ActivationsError::NoTensor {
            hint: name_hint(st.tensors().iter().map(|t| t.name.as_str()), tensor),
            file,
            tensor: tensor.to_owned(),
        });
    };
    let not = |why: String| ActivationsError::NotActivations {
        file: file.clone(),
        tensor: tensor.to_owned(),
        why,
    };
    let dtype = match info.dtype {
        safetensors::Dtype::F32 => Dtype::F32,
        safetensors::Dtype::F16 => Dtype::F16,
        safetensors::Dtype::BF16 => Dtype::Bf16,
        safetensors::Dtype::F64 => Dtype::F64,
        d => {
            return Err(not(format!(
                "{d:?} values; activations are F32, F16, BF16 or F64"
            )));
        }
    };
    let Some(&width) = info.shape.last() else {
        return Err(not("a scalar, not [tokens, width]".to_owned()));
    };
    if info.elements() == 0 {
        return Err(not(format!("shape {:?} holds no values", info.shape)));
    }
    Ok(Some(Streamed {
        path: path.to_path_buf(),
        name: format!("{file}:{tensor}"),
        data_start: st.header().data_start + info.data_offsets.0,
        dtype,
        big_endian: false,
        tokens: (info.elements() / width as u64) as usize,
        width,
    }))
}
