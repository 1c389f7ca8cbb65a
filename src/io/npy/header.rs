//! The `.npy` preamble and header: the magic, the version, the header's length, and the
//! Python dict literal `{'descr': .., 'fortran_order': .., 'shape': (..)}`.
//!
//! The literal itself is parsed by `py_literal` (the parser `npyz` uses) and the dtype string
//! by `npyz`'s [`TypeStr`]; what stays here, and why:
//!
//! - **The preamble** (magic, version, header length checked against the file): `npyz`
//!   allocates the header's declared length (up to 4 GiB for format 2.0) before reading it,
//!   and says only "magic not found" or "failed to fill whole buffer" for a short file. Here
//!   the length is checked against the bytes present first, and each error says what is
//!   missing.
//! - **The dict's keys and value types**: `npyz` reads the dict into a map, so a repeated key
//!   silently keeps its last value and an unknown key is ignored (numpy refuses both), and
//!   its messages do not say which value is wrong. The checks below name the key.
//! - **A nesting guard**: `py_literal`'s parser recurses once per bracket, so a header of a
//!   million `(` would exhaust the stack (an abort, not an error), and it backtracks: each
//!   level of nesting multiplies its time, by about three for `{` (a dict is tried, then a
//!   set) and about two for `[` and `(`: sixteen levels of `{` cost 3^16 (about 43 million)
//!   attempts.
//!   Brackets are counted first, and a header nested deeper than [`MAX_DEPTH`], or with `{`
//!   inside `{` deeper than [`MAX_BRACES`], is refused. numpy writes one dict holding a
//!   tuple (a structured dtype's list of tuples nests a few levels more).

use std::str::FromStr;

use npyz::{Endianness, TypeChar, TypeStr};
use py_literal::Value;

use super::NpyError;

/// The bytes every `.npy` file starts with.
pub(super) const MAGIC: &[u8] = b"\x93NUMPY";

/// How deeply the header's literals may nest (a guard against stack exhaustion and the
/// parser's backtracking).
pub(super) const MAX_DEPTH: usize = 8;

/// How deeply `{` may nest in the header (the dict numpy writes, and one more).
pub(super) const MAX_BRACES: usize = 2;

/// Element types the reader accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dtype {
    F16,
    F32,
    F64,
    /// bfloat16, which no `.npy` header names: only safetensors files hand it to the
    /// streamed decoding.
    Bf16,
}

impl Dtype {
    /// Bytes per value.
    pub(crate) fn size(self) -> usize {
        match self {
            Self::F16 | Self::Bf16 => 2,
            Self::F32 => 4,
            Self::F64 => 8,
        }
    }

    /// The name `stored_dtype` reports.
    pub(super) fn name(self) -> &'static str {
        match self {
            Self::F16 => "f16",
            Self::F32 => "f32",
            Self::F64 => "f64",
            Self::Bf16 => "bf16",
        }
    }
}

/// A header's three keys, checked.
pub(super) struct Header {
    /// The element type and whether it is big-endian; `Err` holds the `descr` as written
    /// when it is not one quantscope reads (reported after the shape has been checked).
    pub(super) dtype: Result<(Dtype, bool), String>,
    pub(super) fortran_order: bool,
    pub(super) shape: Vec<usize>,
}

/// Checks the preamble of a file of `total` bytes starting with `bytes`: returns where the
/// header text starts and ends.
pub(super) fn preamble(bytes: &[u8], total: usize) -> Result<(usize, usize), NpyError> {
    let truncated = |needed| NpyError::TruncatedHeader {
        needed,
        available: total,
    };
    if !bytes.starts_with(MAGIC) {
        let is_prefix = !bytes.is_empty() && MAGIC.starts_with(bytes);
        return Err(if is_prefix {
            truncated(10)
        } else {
            NpyError::BadMagic
        });
    }
    let Some(&[major, minor]) = bytes.get(6..8) else {
        return Err(truncated(10));
    };
    let len_size = match (major, minor) {
        (1, 0) => 2,
        (2 | 3, 0) => 4,
        _ => return Err(NpyError::UnsupportedVersion { major, minor }),
    };
    let start = 8 + len_size;
    let header_len = match bytes.get(8..start) {
        Some(&[a, b]) => usize::from(u16::from_le_bytes([a, b])),
        Some(&[a, b, c, d]) => {
            usize::try_from(u32::from_le_bytes([a, b, c, d])).unwrap_or(usize::MAX)
        }
        _ => return Err(truncated(start)),
    };
    Ok((start, start.saturating_add(header_len)))
}

/// Reads the preamble and header from the first bytes of a file of `total` bytes; returns
/// them and the data bytes of `bytes` that follow.
pub(super) fn split_header(bytes: &[u8], total: usize) -> Result<(Header, &[u8]), NpyError> {
    let (start, end) = preamble(bytes, total)?;
    let Some(text) = bytes.get(start..end) else {
        return Err(NpyError::TruncatedHeader {
            needed: end,
            available: total,
        });
    };
    let text = std::str::from_utf8(text).map_err(|e| {
        NpyError::InvalidHeader(format!(
            "it is not text (invalid byte at header offset {})",
            e.valid_up_to()
        ))
    })?;
    let header = parse_header(text).map_err(NpyError::InvalidHeader)?;
    Ok((header, &bytes[end..]))
}

/// Parses the header dict and checks it has exactly the three keys, of the right types.
fn parse_header(text: &str) -> Result<Header, String> {
    let text = prepare(text.trim_end())?;
    let value = Value::from_str(&text).map_err(|e| syntax(&text, &e))?;
    let Value::Dict(items) = value else {
        return Err(format!("expected a dict but found {}", kind(&value)));
    };
    let (mut descr, mut fortran_order, mut shape) = (None, None, None);
    for (key, value) in items {
        let Value::String(key) = key else {
            return Err("dict keys must be strings".to_owned());
        };
        let slot = match key.as_str() {
            "descr" => &mut descr,
            "fortran_order" => &mut fortran_order,
            "shape" => &mut shape,
            _ => {
                return Err(format!(
                    "unexpected key '{key}' (expected 'descr', 'fortran_order', 'shape')"
                ));
            }
        };
        if slot.replace(value).is_some() {
            return Err(format!("key '{key}' appears twice"));
        }
    }
    let descr = descr.ok_or("missing key 'descr'")?;
    let Value::Boolean(fortran_order) = fortran_order.ok_or("missing key 'fortran_order'")? else {
        return Err("'fortran_order' must be True or False".to_owned());
    };
    let (Value::Tuple(dims) | Value::List(dims)) = shape.ok_or("missing key 'shape'")? else {
        return Err("'shape' must be a tuple".to_owned());
    };
    let src = || python(&Value::Tuple(dims.clone()));
    let shape = dims
        .iter()
        .map(|d| match d {
            Value::Integer(n) if !n.to_string().starts_with('-') => {
                usize::try_from(n).map_err(|_| {
                    format!(
                        "the shape {} has a dimension too large for this machine",
                        src()
                    )
                })
            }
            _ => Err(format!(
                "the shape {} must hold non-negative integers",
                src()
            )),
        })
        .collect::<Result<_, _>>()?;
    let dtype = match &descr {
        Value::String(s) => Ok(dtype(s).ok_or_else(|| s.clone())),
        Value::List(_) => Ok(Err(python(&descr))),
        _ => Err("'descr' must be a string or a list".to_owned()),
    }?;
    Ok(Header {
        dtype,
        fortran_order,
        shape,
    })
}

/// One of the three accepted dtypes, from a `descr` string, via `npyz`'s parser.
fn dtype(descr: &str) -> Option<(Dtype, bool)> {
    let ty = TypeStr::from_str(descr).ok()?;
    let big = match ty.endianness() {
        Endianness::Little => false,
        Endianness::Big => true,
        Endianness::Irrelevant => return None,
    };
    let dtype = match (ty.type_char(), ty.size_field()) {
        (TypeChar::Float, 2) => Dtype::F16,
        (TypeChar::Float, 4) => Dtype::F32,
        (TypeChar::Float, 8) => Dtype::F64,
        _ => return None,
    };
    Some((dtype, big))
}

/// A dtype name for people, after the code, for the error message.
pub(super) fn describe(descr: &str) -> String {
    let code = descr.trim_start_matches(['<', '>', '|', '=']);
    let name = match code {
        "i1" | "i2" | "i4" | "i8" => "signed integer",
        "u1" | "u2" | "u4" | "u8" => "unsigned integer",
        "b1" => "boolean",
        "f16" | "f12" | "g" => "long double",
        "c8" | "c16" | "c32" => "complex",
        c if c.starts_with('V') => "raw bytes, e.g. bfloat16 saved via ml_dtypes",
        c if c.starts_with('U') || c.starts_with('S') => "string",
        c if c.starts_with('O') => "Python object",
        c if c.starts_with('[') => "structured",
        _ => return String::new(),
    };
    format!(" ({name})")
}

/// A literal as Python writes it (`('a', '<f4')`), for messages.
fn python(value: &Value) -> String {
    value
        .format_ascii()
        .unwrap_or_else(|_| format!("{value:?}"))
}

/// What kind of literal a value is, for messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::String(_) => "a string",
        Value::Bytes(_) => "bytes",
        Value::Integer(_) | Value::Float(_) | Value::Complex(_) => "a number",
        Value::Tuple(_) => "a tuple",
        Value::List(_) => "a list",
        Value::Dict(_) => "a dict",
        Value::Set(_) => "a set",
        Value::Boolean(_) => "a boolean",
        Value::None => "None",
    }
}

/// The header text ready for `py_literal`: refused when its brackets nest deeper than
/// [`MAX_DEPTH`], or its braces deeper than [`MAX_BRACES`]; Python 2's long integers (`3L`,
/// written by numpy under Python 2) lose their suffix and line breaks become spaces, two
/// things Python reads and `py_literal` does not. String literals are left as they are.
/// Offsets are unchanged but for the `L`s.
fn prepare(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut depth = 0_usize;
    let mut braces = 0_usize;
    let mut quote = None;
    let mut escaped = false;
    let mut after_digit = false;
    for c in text.chars() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            out.push(c);
            continue;
        }
        match c {
            '\'' | '"' => quote = Some(c),
            '(' | '[' | '{' => {
                depth += 1;
                braces += usize::from(c == '{');
                if depth > MAX_DEPTH || braces > MAX_BRACES {
                    return Err("literals nested too deeply".to_owned());
                }
            }
            ')' | ']' => depth = depth.saturating_sub(1),
            '}' => {
                depth = depth.saturating_sub(1);
                braces = braces.saturating_sub(1);
            }
            'L' | 'l' if after_digit => {
                after_digit = false;
                continue;
            }
            _ => {}
        }
        after_digit = c.is_ascii_digit();
        // Line breaks inside brackets are whitespace to Python, not to `py_literal`.
        out.push(if c.is_whitespace() { ' ' } else { c });
    }
    Ok(out)
}

/// One line from `py_literal`'s error: pest's report spans several lines (an arrow, the
/// source line, a caret, the grammar's rule names); only the position is kept, as a 0-based
/// offset like the other header messages, with the character found there.
fn syntax(source: &str, e: &py_literal::ParseError) -> String {
    let report = e.to_string();
    let offset = report
        .split_once("--> ")
        .and_then(|(_, rest)| rest.split(char::is_whitespace).next())
        .and_then(|at| at.split_once(':'))
        .and_then(|(line, col)| Some((line.parse::<usize>().ok()?, col.parse::<usize>().ok()?)))
        .map(|(line, col)| {
            let before: usize = source
                .split_inclusive('\n')
                .take(line.saturating_sub(1))
                .map(str::len)
                .sum();
            before + col.saturating_sub(1)
        });
    match offset {
        Some(at) => match source.get(at..).and_then(|rest| rest.chars().next()) {
            Some(c) => format!("it is not a Python literal: {c:?} at offset {at} is unexpected"),
            None => "it is not a Python literal: the header ends too early".to_owned(),
        },
        None => format!("it is not a Python literal: {}", report.replace('\n', " ")),
    }
}
