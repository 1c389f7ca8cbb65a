//! llama.cpp importance matrices, in both formats `llama-imatrix` writes, read into the
//! per-column vectors `llama-quantize --imatrix` passes to its quantizers.
//!
//! - **GGUF** (`general.type` = `imatrix`): per weight tensor `NAME`, an F32 tensor
//!   `NAME.in_sum2` (the sums of `x²` of each input column, `ne = [columns, experts]`) and
//!   `NAME.counts` (tokens counted, one per expert); keys `imatrix.chunk_count`,
//!   `imatrix.chunk_size`, `imatrix.datasets`. The importance of expert `j` is
//!   `in_sum2[j] / counts[j]` in f32, and 1 for every column when the count is 0 (what
//!   `load_imatrix` in llama.cpp's `tools/quantize/quantize.cpp` does).
//! - **legacy `.dat`**: an `i32` entry count; per entry an `i32` name length, the name, `i32`
//!   `ncall`, `i32` `nval` and `nval` f32 values (llama-imatrix stores the mean of `x²`
//!   times `ncall`); then an `i32` chunk count and the dataset's name (both optional). The
//!   importance is the values divided by `ncall` in f32 (the values as stored when `ncall`
//!   is not positive).
//!
//! [`Imatrix::read`] returns what `libgguf.load_imatrix` returns, bit for bit (the tests
//! compare with fixtures it made). [`Imatrix::importance`] then finds a tensor's entry
//! ([`names`]) and refuses what `llama-quantize` would use without complaint but what
//! cannot be an importance: a count of 0, a NaN or an infinity, a negative value, a width
//! other than the tensor's.
//!
//! Only the header (or the legacy entries' names and sizes) is read by [`Imatrix::open`];
//! an entry's values are read when asked for, so a large mixture-of-experts imatrix costs
//! little to open.

mod dat;
mod error;
mod gguf;
pub mod names;

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

pub use error::ImatrixError;

use crate::core::importance::{Importance, ImportanceSource};

/// Which of llama-imatrix's formats a file is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImatrixFormat {
    /// The GGUF imatrix.
    Gguf,
    /// The legacy `.dat` format.
    Legacy,
}

impl ImatrixFormat {
    /// `GGUF` or `legacy .dat`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Gguf => "GGUF",
            Self::Legacy => "legacy .dat",
        }
    }
}

/// Where an entry's numbers are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Location {
    /// `in_sum2` and `counts` at these file offsets.
    Gguf { sums: u64, counts: u64 },
    /// The values at this offset, and the entry's `ncall`.
    Legacy { values: u64, ncall: i32 },
}

/// One entry of an importance matrix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryInfo {
    /// The weight tensor's name (llama.cpp's GGUF name, such as `blk.3.ffn_down.weight`).
    pub name: String,
    /// Values in all (`columns * experts`).
    pub values: usize,
    /// Experts (1 for a dense tensor; the legacy format always says 1).
    pub matrices: usize,
    at: Location,
}

impl EntryInfo {
    /// Columns of each expert's vector.
    #[must_use]
    pub fn columns(&self) -> usize {
        self.values / self.matrices.max(1)
    }
}

/// An entry's importance as `llama-quantize` computes it, with what it was computed from.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    /// The averaged vector(s), expert after expert.
    pub values: Vec<f32>,
    /// The experts whose count is 0 (their vector is all 1s, as llama.cpp makes it; for
    /// the legacy format, every expert when `ncall` is 0 or less).
    pub zero_counts: Vec<usize>,
    /// The counts (GGUF; one per expert) or `ncall` (legacy), as stored.
    pub counts: Vec<f32>,
}

/// The bytes an imatrix is read from.
#[derive(Debug, Clone)]
enum Data {
    Path(PathBuf),
    Bytes(Vec<u8>),
}

impl Data {
    fn read_at(&self, at: u64, buf: &mut [u8]) -> std::io::Result<()> {
        match self {
            Self::Path(p) => {
                let mut f = File::open(p)?;
                f.seek(SeekFrom::Start(at))?;
                f.read_exact(buf)
            }
            Self::Bytes(b) => {
                let start = usize::try_from(at).unwrap_or(usize::MAX);
                let src = start
                    .checked_add(buf.len())
                    .and_then(|end| b.get(start..end))
                    .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::UnexpectedEof))?;
                buf.copy_from_slice(src);
                Ok(())
            }
        }
    }
}

/// An opened importance matrix: its entries, and the keys that say how it was made.
#[derive(Debug, Clone)]
pub struct Imatrix {
    file: String,
    format: ImatrixFormat,
    entries: Vec<EntryInfo>,
    /// `imatrix.chunk_count`, or the legacy file's chunk count.
    pub chunk_count: Option<u64>,
    /// `imatrix.chunk_size` (GGUF only).
    pub chunk_size: Option<u64>,
    /// `imatrix.datasets` (the first few), or the legacy file's dataset name.
    pub datasets: Vec<String>,
    data: Data,
}

impl Imatrix {
    /// Opens the file at `path`: a GGUF imatrix when it starts with `GGUF`, otherwise the
    /// legacy format.
    pub fn open(path: &Path) -> Result<Self, ImatrixError> {
        let file = path.display().to_string();
        let io = |source| ImatrixError::Io {
            file: file.clone(),
            source,
        };
        let f = File::open(path).map_err(io)?;
        let len = f.metadata().map_err(io)?.len();
        let reader = std::io::BufReader::with_capacity(1 << 16, f);
        Self::read_from(file.clone(), reader, len, Data::Path(path.to_path_buf()))
    }

    /// Reads an importance matrix held in `bytes`, called `name` in messages (for tests
    /// and fuzzing).
    pub fn parse(name: &str, bytes: Vec<u8>) -> Result<Self, ImatrixError> {
        let len = bytes.len() as u64;
        let cursor = std::io::Cursor::new(bytes.clone());
        Self::read_from(name.to_owned(), cursor, len, Data::Bytes(bytes))
    }

    fn read_from(
        file: String,
        mut r: impl Read + Seek,
        len: u64,
        data: Data,
    ) -> Result<Self, ImatrixError> {
        let mut magic = [0u8; 4];
        let n = crate::io::read_up_to(&mut r, &mut magic).map_err(|source| ImatrixError::Io {
            file: file.clone(),
            source,
        })?;
        r.seek(SeekFrom::Start(0))
            .map_err(|source| ImatrixError::Io {
                file: file.clone(),
                source,
            })?;
        if n == 4 && &magic == b"GGUF" {
            gguf::read(file, r, len, data)
        } else {
            dat::read(file, r, len, data)
        }
    }

    /// The file's name as given.
    #[must_use]
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The file's format.
    #[must_use]
    pub fn format(&self) -> ImatrixFormat {
        self.format
    }

    /// Every entry, in file order.
    #[must_use]
    pub fn entries(&self) -> &[EntryInfo] {
        &self.entries
    }

    /// The entry called `name`.
    #[must_use]
    pub fn entry(&self, name: &str) -> Option<&EntryInfo> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// Entry `name`'s importance as `llama-quantize` (and `libgguf.load_imatrix`) computes
    /// it, whatever its values.
    pub fn read(&self, name: &str) -> Result<Reading, ImatrixError> {
        let e = self.entry(name).ok_or_else(|| ImatrixError::NoEntry {
            file: self.file.clone(),
            tensor: name.to_owned(),
            tried: Vec::new(),
            hint: names::hint(self.entries.iter().map(|e| e.name.as_str()), name),
        })?;
        match e.at {
            Location::Gguf { sums, counts } => gguf::average(self, e, sums, counts),
            Location::Legacy { values, ncall } => dat::average(self, e, values, ncall),
        }
    }

    /// The importance for the tensor `tensor` of `rows` x `columns`: the entry `pick` when
    /// given (`--imatrix-tensor`), else the entry of the tensor's own name, else of its
    /// GGUF name ([`names::gguf_name`]). Refuses a count of 0, a value that is not finite
    /// or is negative, and a width or expert count that does not fit the tensor.
    pub fn importance(
        &self,
        tensor: &str,
        (rows, columns): (usize, usize),
        pick: Option<&str>,
    ) -> Result<Importance, ImatrixError> {
        let entry = self.find(tensor, pick)?;
        let reading = self.read(&entry.name)?;
        if let Some((m, &c)) =
            (reading.counts.iter().enumerate()).find(|(_, c)| !c.is_finite() || **c < 0.0)
        {
            return Err(ImatrixError::BadCount {
                file: self.file.clone(),
                entry: entry.name.clone(),
                matrix: m,
                value: c,
            });
        }
        if let Some(&m) = reading.zero_counts.first() {
            return Err(ImatrixError::ZeroCount {
                file: self.file.clone(),
                entry: entry.name.clone(),
                matrix: m,
                matrices: entry.matrices,
                format: self.format,
            });
        }
        let source = ImportanceSource::Imatrix {
            file: self.file.clone(),
            entry: entry.name.clone(),
            chunks: self.chunk_count,
            datasets: self.datasets.clone(),
        };
        let bad = |source| ImatrixError::Values {
            file: self.file.clone(),
            entry: entry.name.clone(),
            tensor: tensor.to_owned(),
            source,
        };
        let imp = Importance::new(reading.values, entry.columns(), source).map_err(bad)?;
        imp.check_shape(rows, columns).map_err(bad)?;
        Ok(imp)
    }

    /// The entry for `tensor` (or `pick`).
    fn find(&self, tensor: &str, pick: Option<&str>) -> Result<&EntryInfo, ImatrixError> {
        let names: Vec<&str> = self.entries.iter().map(|e| e.name.as_str()).collect();
        if let Some(p) = pick {
            return self.entry(p).ok_or_else(|| ImatrixError::NoEntry {
                file: self.file.clone(),
                tensor: p.to_owned(),
                tried: Vec::new(),
                hint: names::hint(names.iter().copied(), p),
            });
        }
        let mut tried = vec![tensor.to_owned()];
        if let Some(e) = self.entry(tensor) {
            return Ok(e);
        }
        if let Some(g) = names::gguf_name(tensor) {
            if let Some(e) = self.entry(&g) {
                return Ok(e);
            }
            tried.push(g);
        }
        let key = tried.last().map_or(tensor, String::as_str);
        Err(ImatrixError::NoEntry {
            file: self.file.clone(),
            tensor: tensor.to_owned(),
            hint: names::hint(names.iter().copied(), key),
            tried,
        })
    }
}
