//! A reader for numpy's `.npy` files (what `numpy.save` writes), written by hand.
//!
//! Supported: format versions 1.0, 2.0 and 3.0; dtypes `f2` (half), `f4` and `f8` in either
//! byte order (`<` or `>`); C and Fortran order. The header's Python dict literal is parsed
//! properly (keys in any order, any whitespace, trailing commas, Python 2's `3L` integers).
//!
//! The array becomes a [`Matrix`] with one row per index of the first axis:
//!
//! | shape            | matrix                                  |
//! |------------------|-----------------------------------------|
//! | `()`             | refused: a scalar is not a matrix       |
//! | `(n,)`           | one channel of `n` values               |
//! | `(r, c)`         | `r` channels of `c` values              |
//! | `(O, I, kH, kW)` | `O` channels of `I*kH*kW` values (trailing axes flattened in C order) |
//!
//! Arrays with no elements, non-finite values, other dtypes (integers, complex, structured)
//! and files whose data is shorter or longer than the shape says are refused with a
//! message. Sizes are checked with overflow-checked arithmetic against the bytes present
//! before anything is allocated, so a hostile header cannot make the reader allocate more
//! than about twice the file's size. The reader never panics.

use half::f16;
use ndarray::{Array2, ArrayD, IxDyn, ShapeBuilder};

use crate::core::{Matrix, MatrixError};

/// Why a `.npy` file could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NpyError {
    /// The file does not start with `\x93NUMPY`.
    #[error("not a .npy file: it does not start with the bytes \\x93NUMPY")]
    BadMagic,
    /// A format version other than 1.0, 2.0 or 3.0.
    #[error("unsupported .npy format version {major}.{minor} (supported: 1.0, 2.0, 3.0)")]
    UnsupportedVersion {
        /// Major version byte.
        major: u8,
        /// Minor version byte.
        minor: u8,
    },
    /// The file ends before the end of the header.
    #[error(
        "truncated .npy file: the header needs {needed} bytes but the file has only {available}"
    )]
    TruncatedHeader {
        /// Bytes needed up to the end of the header.
        needed: usize,
        /// Bytes in the file.
        available: usize,
    },
    /// The header is not the dict literal numpy writes.
    #[error("the .npy header is not valid: {0}")]
    InvalidHeader(String),
    /// A dtype other than `<f2`, `<f4`, `<f8` (or their big-endian forms).
    #[error(
        "unsupported dtype '{descr}'{}: quantscope reads float16, float32 and float64 arrays ('<f2', '<f4', '<f8', or big-endian '>f2', '>f4', '>f8')",
        describe(.descr)
    )]
    UnsupportedDtype {
        /// The `descr` of the header, as written (a structured dtype is shown as a list).
        descr: String,
    },
    /// The shape is `()`.
    #[error("the array is 0-dimensional (a single number); a matrix needs at least one axis")]
    ZeroDimensional,
    /// Some axis has length 0.
    #[error("the array is empty: shape {shape} has no elements")]
    ZeroSize {
        /// The shape, written like Python's tuple.
        shape: String,
    },
    /// The element count or byte size overflows `usize`.
    #[error("absurd shape {shape}: its size does not fit in memory addresses")]
    ShapeOverflow {
        /// The shape, written like Python's tuple.
        shape: String,
    },
    /// Fewer data bytes than the shape needs.
    #[error(
        "the data is shorter than the shape says: shape {shape} needs {expected} bytes but the file has {found}"
    )]
    DataTooShort {
        /// The shape, written like Python's tuple.
        shape: String,
        /// Bytes the shape and dtype need.
        expected: usize,
        /// Bytes present after the header.
        found: usize,
    },
    /// More data bytes than the shape needs.
    #[error("{extra} extra bytes after the data: shape {shape} needs {expected} bytes but the file has {found}", extra = .found - .expected)]
    TrailingBytes {
        /// The shape, written like Python's tuple.
        shape: String,
        /// Bytes the shape and dtype need.
        expected: usize,
        /// Bytes present after the header.
        found: usize,
    },
    /// A float64 value too large in magnitude for float32.
    #[error(
        "row {row}, column {col} (0-based, trailing axes flattened into columns) is {value:e}, out of range for f32"
    )]
    OutOfRange {
        /// 0-based row (index of the first axis).
        row: usize,
        /// 0-based column (C-order index over the trailing axes).
        col: usize,
        /// The value as stored.
        value: f64,
    },
    /// A NaN or infinity in the data.
    #[error(
        "row {row}, column {col} (0-based, trailing axes flattened into columns) is {value}: only finite values are allowed"
    )]
    NotFinite {
        /// 0-based row (index of the first axis).
        row: usize,
        /// 0-based column (C-order index over the trailing axes).
        col: usize,
        /// The value.
        value: f32,
    },
    /// Any other reason the values could not form a [`Matrix`].
    #[error(transparent)]
    Matrix(MatrixError),
}

/// A dtype name for people, after the code, for the error message.
fn describe(descr: &str) -> String {
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

/// Element types the reader accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dtype {
    F16,
    F32,
    F64,
}

impl Dtype {
    /// Parses a `descr`: returns the type and whether it is big-endian.
    fn from_descr(descr: &str) -> Option<(Self, bool)> {
        let (big, code) = match descr.split_at_checked(1)? {
            ("<", code) => (false, code),
            (">", code) => (true, code),
            _ => return None,
        };
        let dtype = match code {
            "f2" => Self::F16,
            "f4" => Self::F32,
            "f8" => Self::F64,
            _ => return None,
        };
        Some((dtype, big))
    }

    fn size(self) -> usize {
        match self {
            Self::F16 => 2,
            Self::F32 => 4,
            Self::F64 => 8,
        }
    }
}

/// Reads a `.npy` file's bytes into a [`Matrix`] (unlabelled).
///
/// See the [module documentation](self) for what is accepted and how shapes map to rows.
pub fn parse_npy(bytes: &[u8]) -> Result<Matrix, NpyError> {
    let (
        Header {
            descr,
            fortran_order,
            shape,
        },
        data,
    ) = split_header(bytes)?;
    let shape_text = shape_to_string(&shape);
    let overflow = || NpyError::ShapeOverflow {
        shape: shape_to_string(&shape),
    };
    let Some((dtype, big_endian)) = Dtype::from_descr(&descr) else {
        return Err(NpyError::UnsupportedDtype { descr });
    };
    let Some((&first, trailing)) = shape.split_first() else {
        return Err(NpyError::ZeroDimensional);
    };
    if shape.contains(&0) {
        return Err(NpyError::ZeroSize { shape: shape_text });
    }
    let (rows, cols) = if trailing.is_empty() {
        (1, first)
    } else {
        (
            first,
            trailing
                .iter()
                .try_fold(1_usize, |acc, &d| acc.checked_mul(d))
                .ok_or_else(overflow)?,
        )
    };
    let count = rows.checked_mul(cols).ok_or_else(overflow)?;
    let expected = count.checked_mul(dtype.size()).ok_or_else(overflow)?;
    let found = data.len();
    if found < expected {
        return Err(NpyError::DataTooShort {
            shape: shape_text,
            expected,
            found,
        });
    }
    if found > expected {
        return Err(NpyError::TrailingBytes {
            shape: shape_text,
            expected,
            found,
        });
    }
    // Only now, with the size checked against the bytes present, allocate.
    let flat = decode(data, dtype, big_endian);
    let values = if fortran_order && shape.len() > 1 {
        ArrayD::from_shape_vec(IxDyn(&shape).f(), flat)
            .map_err(|_| overflow())?
            .as_standard_layout()
            .into_owned()
            .into_shape_with_order((rows, cols))
    } else {
        Array2::from_shape_vec((rows, cols), flat)
    }
    .map_err(|_| overflow())?;
    Matrix::new(values).map_err(|e| match e {
        MatrixError::NotFinite { row, col, value } => {
            let index = file_index(row, col, &shape, fortran_order);
            match read_f64(data, index, big_endian).filter(|v| dtype == Dtype::F64 && v.is_finite())
            {
                Some(value) => NpyError::OutOfRange { row, col, value },
                None => NpyError::NotFinite { row, col, value },
            }
        }
        other => NpyError::Matrix(other),
    })
}

/// Decodes the data bytes (whose length is a multiple of the element size) into `f32`s.
fn decode(data: &[u8], dtype: Dtype, big_endian: bool) -> Vec<f32> {
    macro_rules! convert {
        ($n:literal, $f:expr) => {
            data.chunks_exact($n)
                .map(|chunk| {
                    let mut raw = [0_u8; $n];
                    raw.copy_from_slice(chunk);
                    if big_endian {
                        raw.reverse();
                    }
                    $f(raw)
                })
                .collect()
        };
    }
    match dtype {
        Dtype::F16 => convert!(2, |raw| f16::from_le_bytes(raw).to_f32()),
        Dtype::F32 => convert!(4, f32::from_le_bytes),
        // Values beyond f32's range become infinities here; `parse_npy` reports them.
        Dtype::F64 => convert!(8, |raw| f64::from_le_bytes(raw) as f32),
    }
}

/// Where the element at matrix `(row, col)` sits in the file, counted in elements.
fn file_index(row: usize, col: usize, shape: &[usize], fortran_order: bool) -> usize {
    let trailing = shape.get(1..).unwrap_or_default();
    if !fortran_order || trailing.is_empty() {
        let cols: usize = trailing.iter().product();
        return row * cols + col;
    }
    // Unravel `col` over the trailing axes in C order, then ravel everything in F order.
    let mut index = vec![0; shape.len()];
    index[0] = row;
    let mut rest = col;
    for (slot, &dim) in index[1..].iter_mut().zip(trailing).rev() {
        *slot = rest % dim;
        rest /= dim;
    }
    index
        .iter()
        .zip(shape)
        .rev()
        .fold(0, |acc, (&i, &dim)| acc * dim + i)
}

/// The `f64` at element `index` of the data, if it is there.
fn read_f64(data: &[u8], index: usize, big_endian: bool) -> Option<f64> {
    let start = index.checked_mul(8)?;
    let mut raw: [u8; 8] = data.get(start..start.checked_add(8)?)?.try_into().ok()?;
    if big_endian {
        raw.reverse();
    }
    Some(f64::from_le_bytes(raw))
}

/// Writes a shape like Python writes a tuple: `()`, `(5,)`, `(2, 3)`.
fn shape_to_string(shape: &[usize]) -> String {
    match shape {
        [] => "()".to_owned(),
        [n] => format!("({n},)"),
        _ => {
            let parts: Vec<String> = shape.iter().map(ToString::to_string).collect();
            format!("({})", parts.join(", "))
        }
    }
}

const MAGIC: &[u8] = b"\x93NUMPY";

/// How deeply the header's literals may nest (a guard against stack exhaustion).
const MAX_DEPTH: usize = 16;

/// The three keys of a `.npy` header.
struct Header {
    descr: String,
    fortran_order: bool,
    shape: Vec<usize>,
}

/// Reads the preamble and header; returns them and the data bytes that follow.
fn split_header(bytes: &[u8]) -> Result<(Header, &[u8]), NpyError> {
    let truncated = |needed| NpyError::TruncatedHeader {
        needed,
        available: bytes.len(),
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
    let end = start.saturating_add(header_len);
    let Some(text) = bytes.get(start..end) else {
        return Err(truncated(end));
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

/// A Python literal, as much of the language as `.npy` headers use.
enum Value<'a> {
    Str(&'a str),
    Bool(bool),
    /// A non-negative integer; `None` when it does not fit in `usize`.
    Int(Option<usize>),
    /// A tuple or a list, with its source text (to name structured dtypes).
    Seq(Vec<Value<'a>>, &'a str),
}

/// Parses the header dict and checks it has exactly the three keys, of the right types.
fn parse_header(text: &str) -> Result<Header, String> {
    let mut p = Literal {
        s: text,
        pos: 0,
        depth: 0,
    };
    let (mut descr, mut fortran_order, mut shape) = (None, None, None);
    p.expect('{')?;
    while !p.eat('}') {
        let Value::Str(key) = p.value()? else {
            return Err("dict keys must be strings".to_owned());
        };
        p.expect(':')?;
        let value = p.value()?;
        let slot_taken = match key {
            "descr" => descr.replace(value).is_some(),
            "fortran_order" => fortran_order.replace(value).is_some(),
            "shape" => shape.replace(value).is_some(),
            _ => {
                return Err(format!(
                    "unexpected key '{key}' (expected 'descr', 'fortran_order', 'shape')"
                ));
            }
        };
        if slot_taken {
            return Err(format!("key '{key}' appears twice"));
        }
        if !p.eat(',') {
            p.expect_close('}')?;
            break;
        }
    }
    p.skip_ws();
    if p.pos < text.len() {
        return Err(format!(
            "unexpected text after the dict at offset {}",
            p.pos
        ));
    }
    let descr = match descr.ok_or("missing key 'descr'")? {
        Value::Str(s) => s.to_owned(),
        Value::Seq(_, src) => src.to_owned(),
        _ => return Err("'descr' must be a string or a list".to_owned()),
    };
    let Value::Bool(fortran_order) = fortran_order.ok_or("missing key 'fortran_order'")? else {
        return Err("'fortran_order' must be True or False".to_owned());
    };
    let Value::Seq(dims, src) = shape.ok_or("missing key 'shape'")? else {
        return Err("'shape' must be a tuple".to_owned());
    };
    let shape = dims
        .iter()
        .map(|d| match d {
            Value::Int(Some(n)) => Ok(*n),
            Value::Int(None) => Err(format!(
                "the shape {src} has a dimension too large for this machine"
            )),
            _ => Err(format!("the shape {src} must hold non-negative integers")),
        })
        .collect::<Result<_, _>>()?;
    Ok(Header {
        descr,
        fortran_order,
        shape,
    })
}

/// A cursor over the header text.
struct Literal<'a> {
    s: &'a str,
    pos: usize,
    depth: usize,
}

impl<'a> Literal<'a> {
    fn rest(&self) -> &'a str {
        self.s.get(self.pos..).unwrap_or_default()
    }

    fn skip_ws(&mut self) {
        let rest = self.rest();
        self.pos += rest.len() - rest.trim_start().len();
    }

    /// Skips whitespace, then consumes `c` if it comes next.
    fn eat(&mut self, c: char) -> bool {
        self.skip_ws();
        let found = self.rest().starts_with(c);
        if found {
            self.pos += c.len_utf8();
        }
        found
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.unexpected(&format!("'{c}'")))
        }
    }

    /// After an item: the closing bracket, since no comma followed.
    fn expect_close(&mut self, close: char) -> Result<(), String> {
        if self.eat(close) {
            Ok(())
        } else {
            Err(self.unexpected(&format!("',' or '{close}'")))
        }
    }

    fn unexpected(&self, wanted: &str) -> String {
        match self.rest().chars().next() {
            Some(c) => format!("expected {wanted} at offset {} but found {c:?}", self.pos),
            None => format!("expected {wanted} but the header ends"),
        }
    }

    fn value(&mut self) -> Result<Value<'a>, String> {
        self.skip_ws();
        let rest = self.rest();
        let start = self.pos;
        match rest.chars().next() {
            Some(quote @ ('\'' | '"')) => {
                let body = &rest[1..];
                let len = body.find(quote).ok_or("a string is not closed")?;
                self.pos += len + 2;
                Ok(Value::Str(&body[..len]))
            }
            Some(open @ ('(' | '[')) => {
                let close = if open == '(' { ')' } else { ']' };
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return Err("literals nested too deeply".to_owned());
                }
                self.pos += 1;
                let mut items = Vec::new();
                while !self.eat(close) {
                    items.push(self.value()?);
                    if !self.eat(',') {
                        self.expect_close(close)?;
                        break;
                    }
                }
                self.depth -= 1;
                Ok(Value::Seq(items, &self.s[start..self.pos]))
            }
            Some('0'..='9') => {
                let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
                self.pos += digits;
                let n = rest[..digits].parse().ok();
                // Python 2's NumPy wrote long integers as `3L`.
                if self.rest().starts_with(['L', 'l']) {
                    self.pos += 1;
                }
                Ok(Value::Int(n))
            }
            _ if rest.starts_with("True") => {
                self.pos += 4;
                Ok(Value::Bool(true))
            }
            _ if rest.starts_with("False") => {
                self.pos += 5;
                Ok(Value::Bool(false))
            }
            _ => Err(self.unexpected("a value")),
        }
    }
}
