//! The safetensors header, parsed and validated from bytes alone (no file access), so it can
//! be fuzzed and tested without touching the disk.
//!
//! ```text
//! ┌─────────────┬────────────────────────────┬────────────────────────────────────┐
//! │ N: u64, LE  │ N bytes of UTF-8 JSON      │ the data section: every tensor's   │
//! │ (8 bytes)   │ {"name": {"dtype": "F32",  │ bytes, C order, little-endian;     │
//! │             │   "shape": [..],           │ data_offsets count from its start  │
//! │             │   "data_offsets": [b, e]}, │                                    │
//! │             │  "__metadata__": {..}}     │                                    │
//! └─────────────┴────────────────────────────┴────────────────────────────────────┘
//! ```
//!
//! [`parse_header`] checks everything a reader later relies on, with overflow-checked
//! arithmetic and before anything is sized from the file's numbers: the header length is
//! within the file and at most [`MAX_HEADER_LEN`]; every entry names a known dtype and has a
//! shape of at most [`MAX_RANK`] axes; each tensor's `begin <= end <= data length` and
//! `end - begin` equals the shape's element count times the dtype's size; and, as the format
//! requires, the tensors tile the data section exactly (sorted by offset, each begins where
//! the previous one ended, with no overlap, no hole and nothing after the last).
//!
//! # Why the validation is written here rather than taken from the `safetensors` crate
//!
//! The dtypes are the crate's own ([`Dtype`]). Its header check (`SafeTensors::read_metadata`)
//! validates the same things, but says less about what is wrong, which is what a person with a
//! damaged file needs; on the same bad headers it gives (safetensors 0.8.0):
//!
//! | file                                | the crate                                      | here                                   |
//! |-------------------------------------|------------------------------------------------|----------------------------------------|
//! | a hole between `a` and `b`          | invalid offset for tensor `b`                  | bytes 4..8 belong to no tensor          |
//! | `b` inside `a`                      | invalid offset for tensor `b`                  | tensors "a" and "b" overlap             |
//! | shape `[3]` of F32 in 8 bytes       | invalid shape, data type, or offset for tensor | needs 12 bytes, data_offsets hold 8     |
//! | offsets past the end of the file    | incomplete metadata, file not fully covered    | past the end of the data (8 bytes)      |
//! | the same name twice                 | accepted (the last entry wins)                 | tensor "a" appears twice                |
//!
//! and it takes the whole file as one slice in memory, where this reader has only the header.

use std::collections::{BTreeMap, HashSet};
use std::fmt;

use serde::Deserialize;
use serde::de::{self, MapAccess, Visitor};

use super::dtype::{bits, is_loadable, parse_dtype};
use super::{Dtype, HeaderError};

/// The largest header accepted, in bytes (the limit of the reference implementation).
pub const MAX_HEADER_LEN: u64 = 100_000_000;

/// The most axes a tensor may have (numpy's limit).
pub const MAX_RANK: usize = 64;

/// Bytes before the header: its length as a little-endian `u64`.
const LEN_BYTES: u64 = 8;

/// One tensor as the header describes it, after validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorInfo {
    /// The tensor's name (the header's key).
    pub name: String,
    /// Its element type.
    pub dtype: Dtype,
    /// Its shape, outermost axis first (`[]` for a scalar).
    pub shape: Vec<usize>,
    /// `[begin, end)` of its bytes, relative to the start of the data section.
    pub data_offsets: (u64, u64),
}

impl TensorInfo {
    /// Size of the tensor's data in bytes.
    #[must_use]
    pub fn bytes(&self) -> u64 {
        self.data_offsets.1 - self.data_offsets.0
    }

    /// Why the explorer cannot open this tensor, or `None` when it can (a floating tensor
    /// with at least one axis).
    #[must_use]
    pub fn not_loadable(&self) -> Option<&'static str> {
        if !is_loadable(self.dtype) {
            Some("not a floating tensor: quantscope reads F32, F16, BF16 and F64")
        } else if self.shape.is_empty() {
            Some("a scalar: there is no channel to analyse")
        } else {
            None
        }
    }

    /// Number of values (the product of the shape; 1 for a scalar).
    #[must_use]
    pub fn elements(&self) -> u64 {
        // Validated not to overflow when the header was parsed.
        self.shape.iter().map(|&d| d as u64).product()
    }
}

/// A parsed and validated header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// Every tensor, sorted by name.
    pub tensors: Vec<TensorInfo>,
    /// The `__metadata__` map (empty without one). Non-string values are kept as JSON text.
    pub metadata: BTreeMap<String, String>,
    /// Where the data section starts in the file: `8 + N`.
    pub data_start: u64,
    /// Length of the data section in bytes.
    pub data_len: u64,
}

impl Header {
    /// The tensor called `name`, if there is one.
    #[must_use]
    pub fn tensor(&self, name: &str) -> Option<&TensorInfo> {
        self.tensors
            .binary_search_by(|t| t.name.as_str().cmp(name))
            .ok()
            .and_then(|i| self.tensors.get(i))
    }
}

/// An entry as written, before validation.
#[derive(Deserialize)]
struct RawEntry {
    dtype: String,
    shape: Vec<u64>,
    data_offsets: [u64; 2],
}

/// The header object as written: entries in file order, each already checked for form.
struct RawHeader {
    entries: Vec<(String, Result<RawEntry, String>)>,
    metadata: Option<serde_json::Value>,
    duplicate: Option<String>,
}

impl<'de> Deserialize<'de> for RawHeader {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(RawHeaderVisitor)
    }
}

struct RawHeaderVisitor;

impl<'de> Visitor<'de> for RawHeaderVisitor {
    type Value = RawHeader;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object mapping tensor names to {dtype, shape, data_offsets}")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawHeader, A::Error> {
        let mut out = RawHeader {
            entries: Vec::new(),
            metadata: None,
            duplicate: None,
        };
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            // Each value is read as generic JSON first, so that an entry of the wrong form
            // is reported with its tensor's name rather than only a line and column.
            let value: serde_json::Value = map.next_value()?;
            if key == "__metadata__" {
                if out.metadata.replace(value).is_some() {
                    out.duplicate.get_or_insert(key);
                }
                continue;
            }
            if !seen.insert(key.clone()) {
                out.duplicate.get_or_insert(key);
                continue;
            }
            let entry = serde_json::from_value::<RawEntry>(value).map_err(|e| e.to_string());
            out.entries.push((key, entry));
        }
        Ok(out)
    }
}

/// Parses and validates the header at the start of a safetensors file.
///
/// `bytes` is the file's beginning: at least the 8-byte length and the header it announces
/// (more is ignored); `file_len` is the whole file's length, against which the header
/// length and every tensor's offsets are checked. Nothing is allocated from a number in the
/// file before that number is checked. Never panics.
pub fn parse_header(bytes: &[u8], file_len: u64) -> Result<Header, HeaderError> {
    let present = file_len.min(bytes.len() as u64);
    let Some(len_bytes) = bytes.first_chunk::<8>().filter(|_| present >= LEN_BYTES) else {
        return Err(HeaderError::TooShort { len: present });
    };
    let header_len = u64::from_le_bytes(*len_bytes);
    if header_len > MAX_HEADER_LEN {
        return Err(HeaderError::HeaderTooLong { header_len });
    }
    let available = present - LEN_BYTES;
    if header_len > available {
        return Err(HeaderError::HeaderPastEnd {
            header_len,
            available,
        });
    }
    // Both fit in usize: header_len <= MAX_HEADER_LEN and the bytes are in memory.
    let json = &bytes[LEN_BYTES as usize..(LEN_BYTES + header_len) as usize];
    let text = std::str::from_utf8(json).map_err(|e| HeaderError::NotUtf8 {
        offset: e.valid_up_to(),
    })?;
    let raw: RawHeader =
        serde_json::from_str(text).map_err(|e| HeaderError::Json(e.to_string()))?;
    if let Some(tensor) = raw.duplicate {
        return Err(HeaderError::Duplicate { tensor });
    }
    let metadata = match raw.metadata {
        None => BTreeMap::new(),
        Some(serde_json::Value::Object(map)) => map
            .into_iter()
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => (k, s),
                other => (k, other.to_string()),
            })
            .collect(),
        Some(_) => return Err(HeaderError::Metadata),
    };
    let data_start = LEN_BYTES + header_len;
    let data_len = file_len - data_start;
    let mut tensors = raw
        .entries
        .into_iter()
        .map(|(name, entry)| match entry {
            Ok(entry) => validate(name, entry, data_len),
            Err(message) => Err(HeaderError::Entry {
                tensor: name,
                message,
            }),
        })
        .collect::<Result<Vec<_>, _>>()?;
    check_tiling(&mut tensors, data_len)?;
    tensors.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Header {
        tensors,
        metadata,
        data_start,
        data_len,
    })
}

/// Checks one entry on its own: dtype, shape, offsets and size.
fn validate(tensor: String, raw: RawEntry, data_len: u64) -> Result<TensorInfo, HeaderError> {
    let Some(dtype) = parse_dtype(&raw.dtype) else {
        return Err(HeaderError::UnknownDtype {
            tensor,
            dtype: raw.dtype,
        });
    };
    if raw.shape.len() > MAX_RANK {
        return Err(HeaderError::TooManyAxes {
            tensor,
            rank: raw.shape.len(),
        });
    }
    let Some(bits) = raw
        .shape
        .iter()
        .try_fold(1_u64, |acc, &d| acc.checked_mul(d))
        .and_then(|n| n.checked_mul(bits(dtype)).map(|bits| (n, bits)))
    else {
        return Err(HeaderError::ShapeOverflow {
            tensor,
            shape: raw.shape,
        });
    };
    let (elements, bits) = bits;
    let Ok(shape) = raw
        .shape
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<Result<Vec<usize>, _>>()
    else {
        return Err(HeaderError::ShapeOverflow {
            tensor,
            shape: raw.shape,
        });
    };
    let [begin, end] = raw.data_offsets;
    if begin > end {
        return Err(HeaderError::OffsetsReversed { tensor, begin, end });
    }
    if end > data_len {
        return Err(HeaderError::OffsetsPastEnd {
            tensor,
            begin,
            end,
            data_len,
        });
    }
    if bits % 8 != 0 {
        return Err(HeaderError::PartialByte {
            tensor,
            dtype,
            elements,
        });
    }
    let expected = bits / 8;
    if end - begin != expected {
        return Err(HeaderError::SizeMismatch {
            tensor,
            dtype,
            shape: raw.shape,
            expected,
            found: end - begin,
            begin,
            end,
        });
    }
    Ok(TensorInfo {
        name: tensor,
        dtype,
        shape,
        data_offsets: (begin, end),
    })
}

/// Checks that the tensors, sorted by offset, tile `[0, data_len)` exactly.
fn check_tiling(tensors: &mut [TensorInfo], data_len: u64) -> Result<(), HeaderError> {
    tensors.sort_by_key(|t| t.data_offsets);
    let mut at = 0_u64;
    let mut last: Option<&TensorInfo> = None;
    for t in tensors.iter() {
        let (begin, end) = t.data_offsets;
        if begin < at {
            return Err(HeaderError::Overlap {
                first: last.map_or_else(String::new, |l| l.name.clone()),
                second: t.name.clone(),
            });
        }
        if begin > at {
            return Err(HeaderError::Hole {
                begin: at,
                end: begin,
            });
        }
        if end > begin {
            at = end;
            last = Some(t);
        }
    }
    if at < data_len {
        return Err(HeaderError::Hole {
            begin: at,
            end: data_len,
        });
    }
    Ok(())
}
