//! The GGUF header, read from any [`Read`] and validated against the file's length before
//! anything is sized from a number in it, so it can be fuzzed on bytes alone.
//!
//! ```text
//! ┌──────┬─────────┬──────────────┬──────────┬──────────────────┬──────────────────┬─────┬───────────┐
//! │ GGUF │ version │ tensor_count │ kv_count │ kv_count entries │ tensor_count     │ pad │ data      │
//! │      │ u32 (3) │ u64          │ u64      │ key, type, value │ infos: name,     │ to  │ (offsets  │
//! │      │         │              │          │                  │ dims, type, off. │ al. │ from here)│
//! └──────┴─────────┴──────────────┴──────────┴──────────────────┴──────────────────┴─────┴───────────┘
//! ```
//!
//! Every count is checked against the bytes left (each item takes at least a known number
//! of bytes), every string length too, before a buffer is made for it. Arrays keep their
//! first [`ARRAY_HEAD`] elements and skip the rest, so a tokenizer of 262 144 strings costs
//! a few hundred bytes of memory, and a hostile array costs no more. Names (keys and tensor
//! names) may be at most [`MAX_NAME`] bytes; a string value keeps at most
//! [`MAX_STRING_KEPT`] bytes (the rest is skipped and counted).

use std::collections::HashSet;
use std::io::{self, Read};

use super::{GgmlType, Header, ParseError, TensorInfo, Value, ValueType};

/// Elements of an array kept in memory; the rest are read past.
pub const ARRAY_HEAD: usize = 16;

/// The longest key or tensor name accepted, in bytes.
pub const MAX_NAME: u64 = 1 << 16;

/// The most bytes of one string value kept in memory.
pub const MAX_STRING_KEPT: u64 = 1 << 20;

/// How deeply arrays may nest in a value.
pub const MAX_NESTING: usize = 4;

/// ggml's most dimensions.
pub const MAX_DIMS: u32 = 4;

/// The alignment of the data section when `general.alignment` is absent.
pub const DEFAULT_ALIGNMENT: u64 = 32;

/// Bytes at the start of every GGUF file.
pub const MAGIC: &[u8; 4] = b"GGUF";

/// A reader that knows where it is and how much of the file is left.
struct Cursor<R> {
    r: R,
    at: u64,
    len: u64,
}

/// Why reading stopped: the header is invalid, or the reader failed.
#[derive(Debug)]
pub enum ReadError {
    /// The header is invalid.
    Parse(ParseError),
    /// The reader failed.
    Io(io::Error),
}

impl From<ParseError> for ReadError {
    fn from(e: ParseError) -> Self {
        Self::Parse(e)
    }
}

type Result<T> = std::result::Result<T, ReadError>;

impl<R: Read> Cursor<R> {
    fn remaining(&self) -> u64 {
        self.len.saturating_sub(self.at)
    }

    /// Reads exactly `buf.len()` bytes of `field`.
    fn fill(&mut self, buf: &mut [u8], field: &dyn Fn() -> String) -> Result<()> {
        let need = buf.len() as u64;
        if need > self.remaining() {
            return Err(ParseError::Truncated {
                field: field(),
                at: self.at,
                need,
                have: self.remaining(),
            }
            .into());
        }
        self.r.read_exact(buf).map_err(|e| {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                // The file is shorter than its length said (it changed under us).
                ReadError::Parse(ParseError::Truncated {
                    field: field(),
                    at: self.at,
                    need,
                    have: 0,
                })
            } else {
                ReadError::Io(e)
            }
        })?;
        self.at += need;
        Ok(())
    }

    fn array<const N: usize>(&mut self, field: &dyn Fn() -> String) -> Result<[u8; N]> {
        let mut b = [0; N];
        self.fill(&mut b, field)?;
        Ok(b)
    }

    fn u32(&mut self, field: &dyn Fn() -> String) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array(field)?))
    }

    fn u64(&mut self, field: &dyn Fn() -> String) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array(field)?))
    }

    /// Reads past `n` bytes (checked against the file first).
    fn skip(&mut self, n: u64, field: &dyn Fn() -> String) -> Result<()> {
        if n > self.remaining() {
            return Err(ParseError::Truncated {
                field: field(),
                at: self.at,
                need: n,
                have: self.remaining(),
            }
            .into());
        }
        let copied =
            io::copy(&mut (&mut self.r).take(n), &mut io::sink()).map_err(ReadError::Io)?;
        self.at += copied;
        if copied < n {
            return Err(ParseError::Truncated {
                field: field(),
                at: self.at,
                need: n - copied,
                have: 0,
            }
            .into());
        }
        Ok(())
    }

    /// A count of items that each take at least `min_each` bytes.
    fn count(&mut self, min_each: u64, field: &dyn Fn() -> String) -> Result<u64> {
        let count = self.u64(field)?;
        let remaining = self.remaining();
        if count.saturating_mul(min_each) > remaining {
            return Err(ParseError::CountTooLarge {
                field: field(),
                count,
                min_each,
                remaining,
            }
            .into());
        }
        Ok(count)
    }

    /// A string's length, checked against the file.
    fn string_len(&mut self, field: &dyn Fn() -> String) -> Result<u64> {
        let len = self.u64(field)?;
        if len > self.remaining() {
            return Err(ParseError::StringTooLong {
                field: field(),
                len,
                remaining: self.remaining(),
            }
            .into());
        }
        Ok(len)
    }

    /// A key or a tensor name: UTF-8, at most [`MAX_NAME`] bytes.
    fn name(&mut self, field: &dyn Fn() -> String) -> Result<String> {
        let len = self.string_len(field)?;
        if len > MAX_NAME {
            return Err(ParseError::StringTooLong {
                field: format!("{} (a name, at most {MAX_NAME} bytes)", field()),
                len,
                remaining: self.remaining(),
            }
            .into());
        }
        let mut bytes = vec![0; len as usize];
        self.fill(&mut bytes, field)?;
        String::from_utf8(bytes).map_err(|e| {
            ReadError::Parse(ParseError::NotUtf8 {
                field: field(),
                offset: e.utf8_error().valid_up_to(),
            })
        })
    }

    /// A string value: its first [`MAX_STRING_KEPT`] bytes, as UTF-8 (invalid bytes
    /// replaced), and its whole length.
    fn string_value(&mut self, field: &dyn Fn() -> String) -> Result<Value> {
        let len = self.string_len(field)?;
        let kept = len.min(MAX_STRING_KEPT);
        let mut bytes = vec![0; kept as usize];
        self.fill(&mut bytes, field)?;
        self.skip(len - kept, field)?;
        Ok(Value::String {
            text: String::from_utf8_lossy(&bytes).into_owned(),
            len,
        })
    }

    /// A value of type `ty` of metadata key `key`, with arrays nested `depth` deep so far.
    fn value(&mut self, ty: ValueType, key: &str, depth: usize) -> Result<Value> {
        let field = || format!("the value of metadata key \"{key}\"");
        let field = &field;
        Ok(match ty {
            ValueType::U8 => Value::U8(self.array::<1>(field)?[0]),
            ValueType::I8 => Value::I8(i8::from_le_bytes(self.array(field)?)),
            ValueType::U16 => Value::U16(u16::from_le_bytes(self.array(field)?)),
            ValueType::I16 => Value::I16(i16::from_le_bytes(self.array(field)?)),
            ValueType::U32 => Value::U32(self.u32(field)?),
            ValueType::I32 => Value::I32(i32::from_le_bytes(self.array(field)?)),
            ValueType::F32 => Value::F32(f32::from_le_bytes(self.array(field)?)),
            ValueType::Bool => Value::Bool(self.array::<1>(field)?[0] != 0),
            ValueType::U64 => Value::U64(self.u64(field)?),
            ValueType::I64 => Value::I64(i64::from_le_bytes(self.array(field)?)),
            ValueType::F64 => Value::F64(f64::from_le_bytes(self.array(field)?)),
            ValueType::String => self.string_value(field)?,
            ValueType::Array => {
                if depth >= MAX_NESTING {
                    return Err(ParseError::NestedTooDeep {
                        key: key.to_owned(),
                        max: MAX_NESTING,
                    }
                    .into());
                }
                let id = self.u32(&|| format!("the array type of metadata key \"{key}\""))?;
                let elem = ValueType::from_id(id).ok_or_else(|| ParseError::UnknownValueType {
                    key: key.to_owned(),
                    id,
                })?;
                let len = self.count(elem.min_bytes(), &|| {
                    format!("the array length of metadata key \"{key}\"")
                })?;
                let mut head = Vec::with_capacity(len.min(ARRAY_HEAD as u64) as usize);
                for i in 0..len {
                    let v = self.value(elem, key, depth + 1)?;
                    if i < ARRAY_HEAD as u64 {
                        head.push(v);
                    }
                }
                Value::Array { elem, len, head }
            }
        })
    }
}

/// Parses and validates a GGUF header from `r`, the start of a file of `file_len` bytes.
/// Reads only the header (up to the end of the tensor infos). Never panics.
pub fn read_header(r: impl Read, file_len: u64) -> std::result::Result<Header, ReadError> {
    let mut c = Cursor {
        r,
        at: 0,
        len: file_len,
    };
    let magic: [u8; 4] = c.array(&|| "the magic \"GGUF\"".to_owned())?;
    if &magic != MAGIC {
        return Err(ParseError::NotGguf {
            found: magic.escape_ascii().to_string(),
        }
        .into());
    }
    let version = c.u32(&|| "the version".to_owned())?;
    match version {
        2 | 3 => {}
        v if matches!(v.swap_bytes(), 1..=3) => {
            return Err(ParseError::BigEndian {
                version: v.swap_bytes(),
            }
            .into());
        }
        v => return Err(ParseError::UnsupportedVersion { version: v }.into()),
    }
    // A tensor info takes at least a name length, a dimension count, one dimension, a type
    // and an offset; a key/value pair a key length, a type and one byte of value.
    let tensor_count = c.u64(&|| "tensor_count".to_owned())?;
    let kv_count = c.count(8 + 4 + 1, &|| "kv_count".to_owned())?;
    let mut metadata = Vec::with_capacity(kv_count as usize);
    let mut keys = HashSet::new();
    for i in 0..kv_count {
        let key = c.name(&|| format!("metadata key {i}"))?;
        let id = c.u32(&|| format!("the value type of metadata key \"{key}\""))?;
        let ty = ValueType::from_id(id).ok_or_else(|| ParseError::UnknownValueType {
            key: key.clone(),
            id,
        })?;
        let value = c.value(ty, &key, 0)?;
        if !keys.insert(key.clone()) {
            return Err(ParseError::DuplicateKey { key }.into());
        }
        metadata.push((key, value));
    }
    let remaining = c.remaining();
    let min_info = 8 + 4 + 8 + 4 + 8;
    if tensor_count.saturating_mul(min_info) > remaining {
        return Err(ParseError::CountTooLarge {
            field: "tensor_count".to_owned(),
            count: tensor_count,
            min_each: min_info,
            remaining,
        }
        .into());
    }
    let alignment = alignment(&metadata)?;
    let mut tensors = Vec::with_capacity(tensor_count as usize);
    let mut names = HashSet::new();
    for i in 0..tensor_count {
        let t = tensor_info(&mut c, i)?;
        if !names.insert(t.name.clone()) {
            return Err(ParseError::DuplicateTensor { tensor: t.name }.into());
        }
        tensors.push(t);
    }
    let data_start = c.at.div_ceil(alignment).saturating_mul(alignment);
    if data_start > file_len {
        return Err(ParseError::NoDataSection {
            data_start,
            file_len,
        }
        .into());
    }
    let data_len = file_len - data_start;
    check_placement(&tensors, alignment, data_len)?;
    Ok(Header {
        version,
        metadata,
        tensors,
        alignment,
        data_start,
        data_len,
    })
}

/// `general.alignment`, or the default.
fn alignment(metadata: &[(String, Value)]) -> std::result::Result<u64, ParseError> {
    match metadata.iter().find(|(k, _)| k == "general.alignment") {
        None => Ok(DEFAULT_ALIGNMENT),
        Some((_, Value::U32(a))) if a.is_power_of_two() => Ok(u64::from(*a)),
        Some((_, v)) => Err(ParseError::BadAlignment {
            value: format!("{} {}", v.type_name(), v.short(40)),
        }),
    }
}

/// One tensor info, checked on its own.
fn tensor_info<R: Read>(c: &mut Cursor<R>, i: u64) -> Result<TensorInfo> {
    let name = c.name(&|| format!("the name of tensor {i}"))?;
    let n_dims = c.u32(&|| format!("the dimension count of tensor \"{name}\""))?;
    if n_dims == 0 || n_dims > MAX_DIMS {
        return Err(ParseError::BadDimCount {
            tensor: name,
            n_dims,
            max: MAX_DIMS,
        }
        .into());
    }
    let mut dims = Vec::with_capacity(n_dims as usize);
    for d in 0..n_dims {
        dims.push(c.u64(&|| format!("dimension {d} of tensor \"{name}\""))?);
    }
    let id = c.u32(&|| format!("the type of tensor \"{name}\""))?;
    let offset = c.u64(&|| format!("the data offset of tensor \"{name}\""))?;
    let Some(ggml_type) = GgmlType::from_id(id) else {
        return Err(ParseError::UnknownTensorType { tensor: name, id }.into());
    };
    let overflow = || ParseError::ShapeOverflow {
        tensor: name.clone(),
        dims: dims.clone(),
    };
    let elements = dims
        .iter()
        .try_fold(1_u64, |acc, &d| acc.checked_mul(d))
        .ok_or_else(overflow)?;
    let row_len = dims[0];
    if !row_len.is_multiple_of(u64::from(ggml_type.block_len)) {
        return Err(ParseError::PartialBlock {
            tensor: name,
            ggml_type,
            row_len,
            block_len: ggml_type.block_len,
        }
        .into());
    }
    let bytes = (elements / u64::from(ggml_type.block_len))
        .checked_mul(u64::from(ggml_type.block_bytes))
        .ok_or_else(overflow)?;
    let shape = dims
        .iter()
        .rev()
        .map(|&d| usize::try_from(d).map_err(|_| overflow()))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    Ok(TensorInfo {
        name,
        ggml_type,
        dims,
        shape,
        offset,
        bytes,
    })
}

/// Checks each tensor's offset (aligned, within the data) and that no two share bytes.
fn check_placement(
    tensors: &[TensorInfo],
    alignment: u64,
    data_len: u64,
) -> std::result::Result<(), ParseError> {
    for t in tensors {
        if !t.offset.is_multiple_of(alignment) {
            return Err(ParseError::Misaligned {
                tensor: t.name.clone(),
                offset: t.offset,
                alignment,
            });
        }
        let end = t.offset.saturating_add(t.bytes);
        if end > data_len {
            return Err(ParseError::DataPastEnd {
                tensor: t.name.clone(),
                offset: t.offset,
                end,
                data_len,
            });
        }
    }
    let mut by_offset: Vec<&TensorInfo> = tensors.iter().filter(|t| t.bytes > 0).collect();
    by_offset.sort_by_key(|t| t.offset);
    for pair in by_offset.windows(2) {
        if let [a, b] = pair
            && b.offset < a.offset + a.bytes
        {
            return Err(ParseError::Overlap {
                first: a.name.clone(),
                second: b.name.clone(),
            });
        }
    }
    Ok(())
}
