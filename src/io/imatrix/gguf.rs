//! The GGUF imatrix: the header through the GGUF reader, then each entry's `in_sum2` and
//! `counts` tensors paired by name.

use std::collections::BTreeMap;
use std::io::Read;

use super::{Data, EntryInfo, Imatrix, ImatrixError, ImatrixFormat, Location, Reading};
use crate::io::gguf::parse::{ReadError, read_header};
use crate::io::gguf::{Header, TensorInfo, Value};

const SUMS: &str = ".in_sum2";
const COUNTS: &str = ".counts";

/// Reads the header and pairs the statistics tensors.
pub(super) fn read(
    file: String,
    r: impl Read,
    len: u64,
    data: Data,
) -> Result<Imatrix, ImatrixError> {
    let header = read_header(r, len).map_err(|e| match e {
        ReadError::Parse(source) => ImatrixError::Gguf {
            file: file.clone(),
            source,
        },
        ReadError::Io(source) => ImatrixError::Io {
            file: file.clone(),
            source,
        },
    })?;
    let general_type = match header.get("general.type") {
        Some(Value::String { text, .. }) => Some(text.clone()),
        _ => None,
    };
    if let Some(t) = general_type.as_deref().filter(|&t| t != "imatrix") {
        return Err(ImatrixError::NotImatrix {
            file,
            why: format!(
                "it is a GGUF file with general.type \"{}\"; llama-imatrix writes general.type \"imatrix\" with NAME.in_sum2 and NAME.counts tensors",
                crate::io::printable(t)
            ),
        });
    }
    let mut pairs: BTreeMap<&str, (Option<&TensorInfo>, Option<&TensorInfo>)> = BTreeMap::new();
    for t in &header.tensors {
        if let Some(name) = t.name.strip_suffix(SUMS) {
            pairs.entry(name).or_default().0 = Some(t);
        } else if let Some(name) = t.name.strip_suffix(COUNTS) {
            pairs.entry(name).or_default().1 = Some(t);
        }
    }
    if pairs.is_empty() {
        return Err(ImatrixError::NotImatrix {
            file,
            why: format!(
                "it is a GGUF file of {} tensor{} without NAME.in_sum2 and NAME.counts statistics (general.type {}); llama-imatrix writes those",
                header.tensors.len(),
                if header.tensors.len() == 1 { "" } else { "s" },
                general_type.map_or_else(|| "absent".to_owned(), |t| format!("\"{t}\""))
            ),
        });
    }
    let mut entries = Vec::with_capacity(pairs.len());
    // In file order, by the in_sum2 tensor's place.
    let mut order: Vec<(usize, EntryInfo)> = Vec::new();
    for (name, pair) in pairs {
        let (sums, counts) = match pair {
            (Some(s), Some(c)) => (s, c),
            (Some(_), None) => return Err(unpaired(&file, name, "in_sum2", "counts")),
            (None, Some(_)) => return Err(unpaired(&file, name, "counts", "in_sum2")),
            (None, None) => continue,
        };
        for t in [sums, counts] {
            if t.ggml_type.name != "F32" {
                return Err(ImatrixError::TensorType {
                    file,
                    tensor: t.name.clone(),
                    ggml_type: t.ggml_type,
                });
            }
        }
        let (n_sums, n_counts) = (sums.elements(), counts.elements());
        if n_counts == 0 || n_sums == 0 || !n_sums.is_multiple_of(n_counts) {
            return Err(ImatrixError::Shape {
                file,
                entry: name.to_owned(),
                sums: n_sums,
                counts: n_counts,
            });
        }
        let place = header
            .tensors
            .iter()
            .position(|t| std::ptr::eq(t, sums))
            .unwrap_or(usize::MAX);
        order.push((
            place,
            EntryInfo {
                name: name.to_owned(),
                values: usize::try_from(n_sums).unwrap_or(usize::MAX),
                matrices: usize::try_from(n_counts).unwrap_or(usize::MAX),
                at: Location::Gguf {
                    sums: header.data_start + sums.offset,
                    counts: header.data_start + counts.offset,
                },
            },
        ));
    }
    order.sort_by_key(|(p, _)| *p);
    entries.extend(order.into_iter().map(|(_, e)| e));
    Ok(Imatrix {
        file,
        format: ImatrixFormat::Gguf,
        entries,
        chunk_count: number(&header, "imatrix.chunk_count"),
        chunk_size: number(&header, "imatrix.chunk_size"),
        datasets: strings(&header, "imatrix.datasets"),
        data,
    })
}

fn unpaired(file: &str, entry: &str, have: &'static str, missing: &'static str) -> ImatrixError {
    ImatrixError::Unpaired {
        file: file.to_owned(),
        entry: entry.to_owned(),
        have,
        missing,
    }
}

/// An unsigned integer key.
fn number(header: &Header, key: &str) -> Option<u64> {
    match header.get(key)? {
        Value::U32(v) => Some(u64::from(*v)),
        Value::U64(v) => Some(*v),
        Value::I32(v) => u64::try_from(*v).ok(),
        Value::I64(v) => u64::try_from(*v).ok(),
        _ => None,
    }
}

/// The strings of an array key (its first elements).
fn strings(header: &Header, key: &str) -> Vec<String> {
    match header.get(key) {
        Some(Value::Array { head, .. }) => head
            .iter()
            .filter_map(|v| match v {
                Value::String { text, .. } => Some(text.clone()),
                _ => None,
            })
            .collect(),
        Some(Value::String { text, .. }) => vec![text.clone()],
        _ => Vec::new(),
    }
}

/// Reads `n` little-endian f32 values at `at`.
pub(super) fn floats(im: &Imatrix, at: u64, n: usize) -> Result<Vec<f32>, ImatrixError> {
    let mut bytes = Vec::new();
    let len = n.checked_mul(4).ok_or_else(|| ImatrixError::Io {
        file: im.file.clone(),
        source: std::io::Error::other("entry too large"),
    })?;
    bytes.try_reserve_exact(len).map_err(|_| ImatrixError::Io {
        file: im.file.clone(),
        source: std::io::Error::other(format!("{len} bytes cannot be allocated")),
    })?;
    bytes.resize(len, 0);
    im.data
        .read_at(at, &mut bytes)
        .map_err(|source| ImatrixError::Io {
            file: im.file.clone(),
            source,
        })?;
    Ok(bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

/// `in_sum2 / counts` per expert in f32; a vector of 1s where the count is not positive
/// (0, negative or NaN), as llama-quantize and libgguf make it.
pub(super) fn average(
    im: &Imatrix,
    e: &EntryInfo,
    sums_at: u64,
    counts_at: u64,
) -> Result<Reading, ImatrixError> {
    let mut values = floats(im, sums_at, e.values)?;
    let counts = floats(im, counts_at, e.matrices)?;
    let per = e.columns();
    let mut zero_counts = Vec::new();
    for (m, (chunk, &c)) in values.chunks_exact_mut(per).zip(&counts).enumerate() {
        if c > 0.0 {
            for v in chunk {
                *v /= c;
            }
        } else {
            chunk.fill(1.0);
            zero_counts.push(m);
        }
    }
    Ok(Reading {
        values,
        zero_counts,
        counts,
    })
}
