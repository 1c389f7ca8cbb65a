//! A sharded safetensors checkpoint: `model.safetensors.index.json` (its `weight_map` says
//! which shard holds each tensor) beside `model-00001-of-0000N.safetensors` files, or a
//! directory of `.safetensors` files.
//!
//! [`Sharded::open`] reads the index (when there is one) and every shard's header, and
//! checks them against each other before anything else: a shard the index names must exist,
//! and every tensor the index maps to a shard must be in that shard's header. Tensors are
//! then read from their own shard exactly as from a single file (positioned reads, one
//! tensor at a time). Without an index, a directory's shards may not share a tensor name.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::core::Matrix;
use crate::io::safetensors::{Safetensors, SafetensorsError, TensorInfo};

/// The index file Hugging Face writes beside the shards.
pub const INDEX_NAME: &str = "model.safetensors.index.json";

/// The largest index file read (the index of a 400-shard checkpoint is a few MB).
const MAX_INDEX_BYTES: u64 = 64 << 20;

/// Why a sharded checkpoint could not be opened or read.
#[derive(Debug, thiserror::Error)]
pub enum ShardedError {
    /// The index or directory could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The index is not the JSON Hugging Face writes.
    #[error(
        "{index}: not a safetensors index ({message}); it should hold {{\"weight_map\": {{tensor: shard file}}}}"
    )]
    Index {
        /// The index file.
        index: String,
        /// What is wrong.
        message: String,
    },
    /// A shard the index names is not there.
    #[error(
        "{index} maps {count} tensors (e.g. \"{tensor}\") to {shard}, which does not exist: the checkpoint is incomplete"
    )]
    MissingShard {
        /// The index file.
        index: String,
        /// The missing shard's path.
        shard: String,
        /// Tensors mapped to it.
        count: usize,
        /// One of them.
        tensor: String,
    },
    /// A tensor the index maps to a shard that does not hold it.
    #[error(
        "{index} maps tensor \"{tensor}\" to {shard}, but that shard has no tensor of that name"
    )]
    NotInShard {
        /// The index file.
        index: String,
        /// The tensor.
        tensor: String,
        /// The shard.
        shard: String,
    },
    /// Two shards of a directory hold a tensor of one name.
    #[error("tensor \"{tensor}\" is in both {first} and {second}")]
    Duplicate {
        /// The tensor.
        tensor: String,
        /// One shard.
        first: String,
        /// The other.
        second: String,
    },
    /// A directory with no `.safetensors` file and no index.
    #[error("{dir} holds no .safetensors file and no {INDEX_NAME}")]
    Empty {
        /// The directory.
        dir: String,
    },
    /// A shard's header is invalid, or a tensor could not be read.
    #[error(transparent)]
    Shard(#[from] SafetensorsError),
    /// No tensor has the name asked for.
    #[error("{checkpoint} has no tensor named \"{tensor}\"{hint}")]
    NoSuchTensor {
        /// The checkpoint.
        checkpoint: String,
        /// The name asked for.
        tensor: String,
        /// Similar names, or how to list them.
        hint: String,
    },
}

#[derive(Deserialize)]
struct Index {
    weight_map: BTreeMap<String, String>,
}

/// An opened sharded checkpoint: every shard's validated header.
#[derive(Debug, Clone)]
pub struct Sharded {
    /// The index file, or the directory when there is none.
    path: PathBuf,
    /// The shards, in file-name order.
    shards: Vec<Safetensors>,
    /// Every tensor: its name and the index of its shard, sorted by name.
    tensors: Vec<(String, usize)>,
}

impl Sharded {
    /// True for a path [`Sharded::open`] takes: a directory or an `*.index.json` file.
    #[must_use]
    pub fn is_sharded(path: &Path) -> bool {
        path.is_dir()
            || path.file_name().is_some_and(|n| {
                n.to_string_lossy()
                    .to_ascii_lowercase()
                    .ends_with(".index.json")
            })
    }

    /// Opens a checkpoint from its index file, or from a directory (its
    /// [`INDEX_NAME`] when present, else every `.safetensors` file in it).
    pub fn open(path: &Path) -> Result<Self, ShardedError> {
        if path.is_dir() {
            let index = path.join(INDEX_NAME);
            if index.is_file() {
                return Self::from_index(&index);
            }
            return Self::from_dir(path);
        }
        Self::from_index(path)
    }

    fn from_index(index: &Path) -> Result<Self, ShardedError> {
        let name = index.display().to_string();
        let io = |source| ShardedError::Io {
            path: name.clone(),
            source,
        };
        let bytes = crate::io::load::read_capped_file(index, MAX_INDEX_BYTES).map_err(io)?;
        let parsed: Index = serde_json::from_slice(&bytes).map_err(|e| ShardedError::Index {
            index: name.clone(),
            message: e.to_string(),
        })?;
        let dir = index.parent().unwrap_or(Path::new("."));
        let mut files: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (tensor, shard) in &parsed.weight_map {
            files.entry(shard.as_str()).or_default().push(tensor);
        }
        let mut shards = Vec::with_capacity(files.len());
        let mut tensors = Vec::with_capacity(parsed.weight_map.len());
        for (i, (shard, names)) in files.iter().enumerate() {
            let shard_path = dir.join(shard);
            if !shard_path.is_file() {
                return Err(ShardedError::MissingShard {
                    index: name,
                    shard: shard_path.display().to_string(),
                    count: names.len(),
                    tensor: names.first().map_or_else(String::new, |t| (*t).to_owned()),
                });
            }
            let opened = Safetensors::open(&shard_path)?;
            for t in names {
                if opened.header().tensor(t).is_none() {
                    return Err(ShardedError::NotInShard {
                        index: name,
                        tensor: (*t).to_owned(),
                        shard: shard_path.display().to_string(),
                    });
                }
                tensors.push(((*t).to_owned(), i));
            }
            shards.push(opened);
        }
        tensors.sort();
        Ok(Self {
            path: index.to_path_buf(),
            shards,
            tensors,
        })
    }

    fn from_dir(dir: &Path) -> Result<Self, ShardedError> {
        let io = |source| ShardedError::Io {
            path: dir.display().to_string(),
            source,
        };
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(io)?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.is_file()
                    && p.extension()
                        .is_some_and(|e| e.eq_ignore_ascii_case("safetensors"))
            })
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(ShardedError::Empty {
                dir: dir.display().to_string(),
            });
        }
        let mut shards = Vec::with_capacity(files.len());
        let mut owner: BTreeMap<String, usize> = BTreeMap::new();
        for (i, f) in files.iter().enumerate() {
            let opened = Safetensors::open(f)?;
            for t in opened.tensors() {
                if let Some(&j) = owner.get(&t.name) {
                    return Err(ShardedError::Duplicate {
                        tensor: t.name.clone(),
                        first: files[j].display().to_string(),
                        second: f.display().to_string(),
                    });
                }
                owner.insert(t.name.clone(), i);
            }
            shards.push(opened);
        }
        Ok(Self {
            path: dir.to_path_buf(),
            shards,
            tensors: owner.into_iter().collect(),
        })
    }

    /// The index file, or the directory.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The shards, in file-name order.
    #[must_use]
    pub fn shards(&self) -> &[Safetensors] {
        &self.shards
    }

    /// Every tensor with its shard, sorted by name.
    pub fn tensors(&self) -> impl Iterator<Item = (&TensorInfo, &Safetensors)> {
        self.tensors.iter().filter_map(|(name, i)| {
            let shard = self.shards.get(*i)?;
            Some((shard.header().tensor(name)?, shard))
        })
    }

    /// The shard holding tensor `name`.
    pub fn shard_of(&self, name: &str) -> Result<&Safetensors, ShardedError> {
        self.tensors
            .binary_search_by(|(t, _)| t.as_str().cmp(name))
            .ok()
            .and_then(|i| self.shards.get(self.tensors[i].1))
            .ok_or_else(|| ShardedError::NoSuchTensor {
                checkpoint: self.path.display().to_string(),
                tensor: name.to_owned(),
                hint: crate::io::safetensors::name_hint(
                    self.tensors.iter().map(|(t, _)| t.as_str()),
                    name,
                ),
            })
    }

    /// Loads tensor `name` from its shard.
    pub fn load(&self, name: &str) -> Result<Matrix, ShardedError> {
        Ok(self.shard_of(name)?.load(name)?)
    }
}
