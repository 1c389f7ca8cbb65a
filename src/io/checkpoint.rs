//! A file of many tensors, whatever its format: one `.safetensors` file, a sharded
//! safetensors checkpoint (a directory or its `model.safetensors.index.json`), or a `.gguf`
//! file. `report --list-tensors`, `report --tensor`, `scan` and the explorer's tensor picker
//! all go through [`Checkpoint`], so each sees every format the same way.

use std::path::{Path, PathBuf};

use crate::core::Matrix;
use crate::io::gguf::{Gguf, GgufError};
use crate::io::safetensors::{Safetensors, SafetensorsError, TensorInfo, candidates, is_loadable};
use crate::io::sharded::{Sharded, ShardedError};

/// What can be done with a tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Floating values (F32, F16, BF16, F64): loaded and analysed under any configuration.
    Float,
    /// A GGUF block-quantized type that quantscope decodes: inspected as stored.
    Quantized,
    /// Anything else (integers, booleans, 8-bit floats, GGUF types without a decoder).
    Other,
}

impl Kind {
    /// Its name in listings, as JSON writes it: `float`, `quantized`, `other`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Float => "float",
            Self::Quantized => "quantized",
            Self::Other => "other",
        }
    }
}

/// One tensor of a checkpoint, as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The tensor's name.
    pub name: String,
    /// Its type as the file names it (`F16`, `BF16`, `Q4_K`).
    pub dtype: String,
    /// Its shape, rows first.
    pub shape: Vec<usize>,
    /// Its size in the file, in bytes.
    pub bytes: u64,
    /// The shard file holding it, for a sharded checkpoint.
    pub shard: Option<String>,
    /// What can be done with it.
    pub kind: Kind,
}

impl Entry {
    /// Why the explorer cannot open this tensor, or `None` when it can.
    #[must_use]
    pub fn not_loadable(&self) -> Option<&'static str> {
        if self.kind == Kind::Other {
            Some("not a floating tensor or a decodable GGUF type")
        } else if self.shape.is_empty() {
            Some("a scalar: there is no channel to analyse")
        } else {
            None
        }
    }

    fn from_safetensors(t: &TensorInfo, shard: Option<&Path>) -> Self {
        Self {
            name: t.name.clone(),
            dtype: t.dtype.to_string(),
            shape: t.shape.clone(),
            bytes: t.bytes(),
            shard: shard.map(|p| {
                p.file_name().map_or_else(
                    || p.display().to_string(),
                    |n| n.to_string_lossy().into_owned(),
                )
            }),
            kind: if is_loadable(t.dtype) {
                Kind::Float
            } else {
                Kind::Other
            },
        }
    }
}

/// Why a checkpoint could not be opened, or one of its tensors loaded.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// A `.safetensors` file.
    #[error(transparent)]
    Safetensors(#[from] SafetensorsError),
    /// A sharded checkpoint.
    #[error(transparent)]
    Sharded(#[from] ShardedError),
    /// A `.gguf` file.
    #[error(transparent)]
    Gguf(#[from] GgufError),
    /// Several tensors could be loaded and none was named.
    #[error(
        "{file} holds {count} tensors quantscope can open; pass --tensor NAME to choose one, e.g. {} (--list-tensors lists them all)",
        .candidates.join(", ")
    )]
    Ambiguous {
        /// The checkpoint.
        file: String,
        /// Tensors that could be loaded.
        count: usize,
        /// The first few of their names, quoted.
        candidates: Vec<String>,
    },
    /// Nothing to load.
    #[error("{file} has no tensor quantscope can open among its {count} (see --list-tensors)")]
    Nothing {
        /// The checkpoint.
        file: String,
        /// Tensors in it.
        count: usize,
    },
}

/// An opened checkpoint.
#[derive(Debug, Clone)]
pub enum Checkpoint {
    /// One `.safetensors` file.
    Safetensors(Safetensors),
    /// Shards and their index.
    Sharded(Sharded),
    /// A `.gguf` file.
    Gguf(Gguf),
}

impl Checkpoint {
    /// True for the paths [`Checkpoint::open`] takes: `.safetensors` and `.gguf` files, a
    /// directory, or a `*.index.json` file.
    #[must_use]
    pub fn is_checkpoint(path: &Path) -> bool {
        has_extension(path, "safetensors")
            || has_extension(path, "gguf")
            || Sharded::is_sharded(path)
    }

    /// Opens the checkpoint at `path`, choosing the format from its name: `.gguf`, a
    /// directory or `*.index.json` (sharded), anything else as `.safetensors`.
    pub fn open(path: &Path) -> Result<Self, CheckpointError> {
        Ok(if has_extension(path, "gguf") {
            Self::Gguf(Gguf::open(path)?)
        } else if Sharded::is_sharded(path) {
            Self::Sharded(Sharded::open(path)?)
        } else {
            Self::Safetensors(Safetensors::open(path)?)
        })
    }

    /// The path it was opened from.
    #[must_use]
    pub fn path(&self) -> PathBuf {
        match self {
            Self::Safetensors(s) => s.path().to_path_buf(),
            Self::Sharded(s) => s.path().to_path_buf(),
            Self::Gguf(g) => g.path().to_path_buf(),
        }
    }

    /// Every tensor: sorted by name for safetensors (one file or sharded), in file order for
    /// GGUF (as llama.cpp and gguf-py list them).
    #[must_use]
    pub fn entries(&self) -> Vec<Entry> {
        match self {
            Self::Safetensors(s) => s
                .tensors()
                .iter()
                .map(|t| Entry::from_safetensors(t, None))
                .collect(),
            Self::Sharded(s) => s
                .tensors()
                .map(|(t, shard)| Entry::from_safetensors(t, Some(shard.path())))
                .collect(),
            Self::Gguf(g) => g
                .tensors()
                .iter()
                .map(|t| Entry {
                    name: t.name.clone(),
                    dtype: t.ggml_type.name.to_owned(),
                    shape: t.shape.clone(),
                    bytes: t.bytes,
                    shard: None,
                    kind: if t.ggml_type.is_float() {
                        Kind::Float
                    } else if crate::io::stored::decodes(t.ggml_type) {
                        Kind::Quantized
                    } else {
                        Kind::Other
                    },
                })
                .collect(),
        }
    }

    /// Loads tensor `name` as a matrix: a floating tensor's values, or a quantized GGUF
    /// tensor's dequantized values (what its stored codes reconstruct to).
    pub fn load(&self, name: &str) -> Result<Matrix, CheckpointError> {
        Ok(match self {
            Self::Safetensors(s) => s.load(name)?,
            Self::Sharded(s) => s.load(name)?,
            Self::Gguf(g) => {
                let t = g.info(name)?;
                if t.ggml_type.is_float() {
                    g.load(name)?
                } else {
                    crate::io::stored::dequantize(g, t)?
                }
            }
        })
    }

    /// The one tensor that can be opened, or an error saying there is none or there are
    /// several (naming a few, matrices first).
    pub fn load_only(&self) -> Result<Matrix, CheckpointError> {
        if let Self::Safetensors(s) = self {
            return Ok(s.load_only()?);
        }
        let entries = self.entries();
        let open: Vec<&Entry> = entries
            .iter()
            .filter(|e| e.not_loadable().is_none())
            .collect();
        match open.as_slice() {
            [only] => self.load(&only.name),
            [] => Err(CheckpointError::Nothing {
                file: self.path().display().to_string(),
                count: entries.len(),
            }),
            many => Err(CheckpointError::Ambiguous {
                file: self.path().display().to_string(),
                count: many.len(),
                candidates: candidates(many.iter().map(|t| (t.name.as_str(), t.shape.len()))),
            }),
        }
    }
}

/// True when `path` ends in `.ext` (any case).
fn has_extension(path: &Path, ext: &str) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case(ext))
}
