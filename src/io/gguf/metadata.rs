//! GGUF metadata values, and how they are shown: long strings and arrays shortened.

use std::fmt::Write as _;

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use super::ValueType;

/// A metadata value. Arrays keep only their first [`ARRAY_HEAD`](super::parse::ARRAY_HEAD) elements (see
/// [`super::parse`]); strings at most [`super::parse::MAX_STRING_KEPT`] bytes.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `UINT8`.
    U8(u8),
    /// `INT8`.
    I8(i8),
    /// `UINT16`.
    U16(u16),
    /// `INT16`.
    I16(i16),
    /// `UINT32`.
    U32(u32),
    /// `INT32`.
    I32(i32),
    /// `FLOAT32`.
    F32(f32),
    /// `BOOL`.
    Bool(bool),
    /// `STRING`: its first bytes as UTF-8 (invalid bytes replaced) and its whole length.
    String {
        /// The text kept.
        text: String,
        /// The string's length in the file, in bytes.
        len: u64,
    },
    /// `ARRAY`: the element type, the length, and the first elements.
    Array {
        /// Type of every element.
        elem: ValueType,
        /// Number of elements in the file.
        len: u64,
        /// The first [`ARRAY_HEAD`](super::parse::ARRAY_HEAD) of them.
        head: Vec<Value>,
    },
    /// `UINT64`.
    U64(u64),
    /// `INT64`.
    I64(i64),
    /// `FLOAT64`.
    F64(f64),
}

impl Value {
    /// The value's type.
    #[must_use]
    pub fn value_type(&self) -> ValueType {
        match self {
            Self::U8(_) => ValueType::U8,
            Self::I8(_) => ValueType::I8,
            Self::U16(_) => ValueType::U16,
            Self::I16(_) => ValueType::I16,
            Self::U32(_) => ValueType::U32,
            Self::I32(_) => ValueType::I32,
            Self::F32(_) => ValueType::F32,
            Self::Bool(_) => ValueType::Bool,
            Self::String { .. } => ValueType::String,
            Self::Array { .. } => ValueType::Array,
            Self::U64(_) => ValueType::U64,
            Self::I64(_) => ValueType::I64,
            Self::F64(_) => ValueType::F64,
        }
    }

    /// The type as gguf-py names it, arrays with their element type: `UINT32`,
    /// `ARRAY[STRING]`.
    #[must_use]
    pub fn type_name(&self) -> String {
        match self {
            Self::Array { elem, .. } => format!("ARRAY[{}]", elem.name()),
            v => v.value_type().name().to_owned(),
        }
    }

    /// The value in at most about `max` characters: numbers in full, strings quoted and cut,
    /// arrays as `[a, b, c, ... (N more)]`.
    #[must_use]
    pub fn short(&self, max: usize) -> String {
        let mut out = String::new();
        self.write_short(&mut out, max);
        out
    }

    fn write_short(&self, out: &mut String, max: usize) {
        let _ = match self {
            Self::U8(v) => write!(out, "{v}"),
            Self::I8(v) => write!(out, "{v}"),
            Self::U16(v) => write!(out, "{v}"),
            Self::I16(v) => write!(out, "{v}"),
            Self::U32(v) => write!(out, "{v}"),
            Self::I32(v) => write!(out, "{v}"),
            Self::F32(v) => write!(out, "{}", float(f64::from(*v))),
            Self::Bool(v) => write!(out, "{v}"),
            Self::U64(v) => write!(out, "{v}"),
            Self::I64(v) => write!(out, "{v}"),
            Self::F64(v) => write!(out, "{}", float(*v)),
            Self::String { text, len } => {
                let chars = text.chars().count();
                if chars <= max && *len == text.len() as u64 {
                    write!(out, "{text:?}")
                } else {
                    let cut: String = text.chars().take(max.saturating_sub(2).max(8)).collect();
                    let quoted = format!("{cut:?}");
                    write!(
                        out,
                        "{}...\" ({len} bytes)",
                        quoted.strip_suffix('"').unwrap_or(&quoted)
                    )
                }
            }
            Self::Array { len, head, .. } => {
                out.push('[');
                let start = out.len();
                let mut shown = 0_u64;
                for v in head {
                    if out.len() - start > max {
                        break;
                    }
                    if shown > 0 {
                        out.push_str(", ");
                    }
                    v.write_short(out, max / 4);
                    shown += 1;
                }
                if shown < *len {
                    let _ = write!(
                        out,
                        "{}... ({} more)",
                        if shown > 0 { ", " } else { "" },
                        len - shown
                    );
                }
                out.push(']');
                Ok(())
            }
        };
    }
}

/// A float as Python prints it: in full between 1e-4 and 1e16, else with an exponent.
fn float(v: f64) -> String {
    if v == 0.0 || !v.is_finite() || (1e-4..1e16).contains(&v.abs()) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// Every key/value pair, for `report --metadata` in JSON: each key maps to
/// `{"type", "value"}`, arrays to `{"type", "len", "head"}` with the first elements.
pub struct MetadataJson<'a>(pub &'a [(String, Value)]);

impl Serialize for MetadataJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0 {
            map.serialize_entry(k, &Json(v))?;
        }
        map.end()
    }
}

/// One value as JSON.
struct Json<'a>(&'a Value);

impl Serialize for Json<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("type", &self.0.type_name())?;
        match self.0 {
            Value::Array { len, head, .. } => {
                map.serialize_entry("len", len)?;
                let head: Vec<Bare<'_>> = head.iter().map(Bare).collect();
                map.serialize_entry("head", &head)?;
            }
            v => map.serialize_entry("value", &Bare(v))?,
        }
        map.end()
    }
}

/// A value without its type: a number, a bool, a string, or an array's kept elements.
struct Bare<'a>(&'a Value);

impl Serialize for Bare<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::U8(v) => s.serialize_u8(*v),
            Value::I8(v) => s.serialize_i8(*v),
            Value::U16(v) => s.serialize_u16(*v),
            Value::I16(v) => s.serialize_i16(*v),
            Value::U32(v) => s.serialize_u32(*v),
            Value::I32(v) => s.serialize_i32(*v),
            Value::F32(v) => s.serialize_f32(*v),
            Value::Bool(v) => s.serialize_bool(*v),
            Value::U64(v) => s.serialize_u64(*v),
            Value::I64(v) => s.serialize_i64(*v),
            Value::F64(v) => s.serialize_f64(*v),
            Value::String { text, .. } => s.serialize_str(text),
            Value::Array { head, .. } => s.collect_seq(head.iter().map(Bare)),
        }
    }
}
