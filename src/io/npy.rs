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
//!
//! [`parse_npy`] reads bytes already in memory; [`read_npy`] reads a file (any seekable
//! stream) without holding its bytes: header first, then the data converted chunk by chunk
//! straight into the matrix's values, so loading peaks at the matrix's size, not twice it.

use std::io::{Read, Seek, SeekFrom};

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
    let (header, data) = split_header(bytes, bytes.len())?;
    match build(header, data.len(), &mut SliceData(data)) {
        Ok(result) => result,
        Err(never) => match never {},
    }
}

/// Why a `.npy` stream could not be read: the stream failed, or its content is refused.
#[derive(Debug, thiserror::Error)]
pub enum ReadNpyError {
    /// Reading or seeking failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The content is not a matrix quantscope reads (the same errors as [`parse_npy`]).
    #[error(transparent)]
    Npy(#[from] NpyError),
}

/// Reads a `.npy` file from a seekable stream into a [`Matrix`], exactly as [`parse_npy`]
/// reads its bytes, without holding the file's bytes in memory: the header is read first,
/// then the data straight into the matrix's `f32` values, converted chunk by chunk. Peak
/// memory is the matrix plus a small buffer (plus one copy of the matrix for a Fortran-order
/// file, as [`parse_npy`] needs too).
pub fn read_npy<R: Read + Seek>(reader: &mut R) -> Result<Matrix, ReadNpyError> {
    let total = reader.seek(SeekFrom::End(0))?;
    let total = usize::try_from(total).unwrap_or(usize::MAX);
    reader.seek(SeekFrom::Start(0))?;
    // The preamble is at most 12 bytes; it says how long the header is.
    let mut head = vec![0; total.min(12)];
    reader.read_exact(&mut head)?;
    let end = match preamble(&head, total) {
        Ok((_, end)) => end,
        Err(e) => return Err(e.into()),
    };
    // `end` may lie: never read (or allocate) past the file.
    let have = head.len();
    head.resize(end.min(total).max(have), 0);
    reader.read_exact(&mut head[have..])?;
    let (header, _) = split_header(&head, total)?;
    let found = total.saturating_sub(end);
    let mut data = StreamData {
        reader,
        start: end as u64,
    };
    Ok(build(header, found, &mut data)??)
}

/// The element type a `.npy` stream stores, as `f16`, `f32` or `f64`, read from its header
/// (the stream is left wherever the header ended); `None` when the header is not one
/// [`read_npy`] reads.
pub fn stored_dtype<R: Read + Seek>(reader: &mut R) -> Option<&'static str> {
    let total = usize::try_from(reader.seek(SeekFrom::End(0)).ok()?).unwrap_or(usize::MAX);
    reader.seek(SeekFrom::Start(0)).ok()?;
    let mut head = vec![0; total.min(12)];
    reader.read_exact(&mut head).ok()?;
    let (_, end) = preamble(&head, total).ok()?;
    let have = head.len();
    head.resize(end.min(total).max(have), 0);
    reader.read_exact(&mut head[have..]).ok()?;
    let (header, _) = split_header(&head, total).ok()?;
    Dtype::from_descr(&header.descr).map(|(d, _)| match d {
        Dtype::F16 => "f16",
        Dtype::F32 => "f32",
        Dtype::F64 => "f64",
    })
}

/// The data bytes after the header, wherever they are.
trait Data {
    /// Why the bytes could not be read.
    type Error;
    /// Decodes all `count` elements (the bytes are known to be exactly that many).
    fn decode(
        &mut self,
        count: usize,
        dtype: Dtype,
        big_endian: bool,
    ) -> Result<Vec<f32>, Self::Error>;
    /// The `f64` at element `index`, if it is there.
    fn f64_at(&mut self, index: usize, big_endian: bool) -> Option<f64>;
}

/// Data in memory.
struct SliceData<'a>(&'a [u8]);

impl Data for SliceData<'_> {
    type Error = std::convert::Infallible;
    fn decode(
        &mut self,
        _: usize,
        dtype: Dtype,
        big_endian: bool,
    ) -> Result<Vec<f32>, Self::Error> {
        let mut out = Vec::with_capacity(self.0.len() / dtype.size());
        decode(self.0, dtype, big_endian, &mut out);
        Ok(out)
    }
    fn f64_at(&mut self, index: usize, big_endian: bool) -> Option<f64> {
        read_f64(self.0, index, big_endian)
    }
}

/// Data in a seekable stream, starting at byte `start`.
struct StreamData<'a, R> {
    reader: &'a mut R,
    start: u64,
}

/// Bytes converted per read of a stream (a multiple of every element size).
const CHUNK: usize = 1 << 16;

impl<R: Read + Seek> Data for StreamData<'_, R> {
    type Error = std::io::Error;
    fn decode(
        &mut self,
        count: usize,
        dtype: Dtype,
        big_endian: bool,
    ) -> std::io::Result<Vec<f32>> {
        self.reader.seek(SeekFrom::Start(self.start))?;
        let mut out = Vec::with_capacity(count);
        let mut buf = vec![0; CHUNK];
        let mut left = count * dtype.size();
        while left > 0 {
            let n = left.min(CHUNK);
            self.reader.read_exact(&mut buf[..n])?;
            decode(&buf[..n], dtype, big_endian, &mut out);
            left -= n;
        }
        Ok(out)
    }
    fn f64_at(&mut self, index: usize, big_endian: bool) -> Option<f64> {
        let at = self
            .start
            .checked_add(u64::try_from(index.checked_mul(8)?).ok()?)?;
        self.reader.seek(SeekFrom::Start(at)).ok()?;
        let mut raw = [0; 8];
        self.reader.read_exact(&mut raw).ok()?;
        read_f64(&raw, 0, big_endian)
    }
}

/// The matrix a header and `found` data bytes describe.
fn build<D: Data>(
    Header {
        descr,
        fortran_order,
        shape,
    }: Header,
    found: usize,
    data: &mut D,
) -> Result<Result<Matrix, NpyError>, D::Error> {
    let shape_text = shape_to_string(&shape);
    let overflow = || NpyError::ShapeOverflow {
        shape: shape_to_string(&shape),
    };
    let Some((dtype, big_endian)) = Dtype::from_descr(&descr) else {
        return Ok(Err(NpyError::UnsupportedDtype { descr }));
    };
    let Some((&first, trailing)) = shape.split_first() else {
        return Ok(Err(NpyError::ZeroDimensional));
    };
    if shape.contains(&0) {
        return Ok(Err(NpyError::ZeroSize { shape: shape_text }));
    }
    let sizes = || {
        let (rows, cols) = if trailing.is_empty() {
            (1, first)
        } else {
            let cols = trailing
                .iter()
                .try_fold(1_usize, |acc, &d| acc.checked_mul(d))?;
            (first, cols)
        };
        let count = rows.checked_mul(cols)?;
        Some((rows, cols, count, count.checked_mul(dtype.size())?))
    };
    let Some((rows, cols, count, expected)) = sizes() else {
        return Ok(Err(overflow()));
    };
    if found < expected {
        return Ok(Err(NpyError::DataTooShort {
            shape: shape_text,
            expected,
            found,
        }));
    }
    if found > expected {
        return Ok(Err(NpyError::TrailingBytes {
            shape: shape_text,
            expected,
            found,
        }));
    }
    // Only now, with the size checked against the bytes present, allocate.
    let flat = data.decode(count, dtype, big_endian)?;
    let values = if fortran_order && shape.len() > 1 {
        ArrayD::from_shape_vec(IxDyn(&shape).f(), flat)
            .map_err(|_| overflow())
            .map(|a| a.as_standard_layout().into_owned())
            .and_then(|a| {
                a.into_shape_with_order((rows, cols))
                    .map_err(|_| overflow())
            })
    } else {
        Array2::from_shape_vec((rows, cols), flat).map_err(|_| overflow())
    };
    let values = match values {
        Ok(v) => v,
        Err(e) => return Ok(Err(e)),
    };
    Ok(Matrix::new(values).map_err(|e| match e {
        MatrixError::NotFinite { row, col, value } => {
            let index = file_index(row, col, &shape, fortran_order);
            let stored = data.f64_at(index, big_endian);
            match stored.filter(|v| dtype == Dtype::F64 && v.is_finite()) {
                Some(value) => NpyError::OutOfRange { row, col, value },
                None => NpyError::NotFinite { row, col, value },
            }
        }
        other => NpyError::Matrix(other),
    }))
}

/// Decodes data bytes (a multiple of the element size) into `f32`s, appended to `out`.
fn decode(data: &[u8], dtype: Dtype, big_endian: bool, out: &mut Vec<f32>) {
    macro_rules! convert {
        ($n:literal, $f:expr) => {
            out.extend(data.chunks_exact($n).map(|chunk| {
                let mut raw = [0_u8; $n];
                raw.copy_from_slice(chunk);
                if big_endian {
                    raw.reverse();
                }
                $f(raw)
            }))
        };
    }
    match dtype {
        Dtype::F16 => convert!(2, |raw| f16::from_le_bytes(raw).to_f32()),
        Dtype::F32 => convert!(4, f32::from_le_bytes),
        // Values beyond f32's range become infinities here; `build` reports them.
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

/// Checks the preamble of a file of `total` bytes starting with `bytes`: returns where the
/// header text starts and ends.
fn preamble(bytes: &[u8], total: usize) -> Result<(usize, usize), NpyError> {
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
fn split_header(bytes: &[u8], total: usize) -> Result<(Header, &[u8]), NpyError> {
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

#[cfg(test)]
mod tests {
    use std::io::Cursor;
    use std::path::PathBuf;

    use super::*;

    fn npy(version: u8, header: &str, data: &[u8]) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend([version, 0]);
        if version == 1 {
            out.extend(u16::try_from(header.len()).unwrap().to_le_bytes());
        } else {
            out.extend(u32::try_from(header.len()).unwrap().to_le_bytes());
        }
        out.extend(header.as_bytes());
        out.extend(data);
        out
    }

    fn header(descr: &str, fortran: bool, shape: &str) -> String {
        let fortran = if fortran { "True" } else { "False" };
        format!("{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape}, }}\n")
    }

    fn bytes_of<T: Copy, const N: usize>(values: &[T], f: fn(T) -> [u8; N]) -> Vec<u8> {
        values.iter().flat_map(|&v| f(v)).collect()
    }

    /// `read_npy` on a stream gives what `parse_npy` gives on the bytes: the same matrix or
    /// the same error.
    fn same(bytes: &[u8]) {
        let want = parse_npy(bytes);
        let got = read_npy(&mut Cursor::new(bytes));
        match (want, got) {
            (Ok(a), Ok(b)) => assert_eq!(a, b),
            (Err(a), Err(ReadNpyError::Npy(b))) => assert_eq!(format!("{a:?}"), format!("{b:?}")),
            (a, b) => panic!("parse_npy {a:?}, read_npy {b:?}"),
        }
    }

    #[test]
    fn streaming_reads_like_parsing() {
        let six = bytes_of(&[1.5f32, -0.25, 3.0, 4.0, 5.0, 6.0], f32::to_le_bytes);
        let big = bytes_of(&[1.5f32, -0.25], f32::to_be_bytes);
        let wide = bytes_of(&[1.5f64, -0.25, 1e300, 2.0], f64::to_le_bytes);
        let long: Vec<f32> = (0..40_000u16).map(|i| f32::from(i) * 0.5).collect();
        let mut cases = vec![
            npy(1, &header("<f4", false, "(2, 3)"), &six),
            npy(1, &header("<f4", true, "(2, 3)"), &six),
            npy(1, &header("<f4", true, "(1, 2, 3)"), &six),
            npy(2, &header("<f4", false, "(6,)"), &six),
            npy(3, &header(">f4", false, "(2,)"), &big),
            npy(1, &header("<f2", false, "(3,)"), &six),
            npy(1, &header("<f8", false, "(2, 2)"), &wide),
            npy(1, &header("<f8", true, "(2, 2)"), &wide),
            npy(
                1,
                &header("<f4", false, "(200, 200)"),
                &bytes_of(&long, f32::to_le_bytes),
            ),
            npy(1, &header("<f4", false, "(2, 3)"), &six[..20]),
            npy(1, &header("<f4", false, "(1, 5)"), &six),
            npy(1, &header("<i4", false, "(6,)"), &six),
            npy(1, &header("<f4", false, "()"), &six),
            npy(1, &header("<f4", false, "(0, 3)"), &[]),
            npy(1, &header("<f4", false, "(99999999999, 99999999999)"), &six),
            npy(1, "{'descr': '<f4'", &six),
            npy(4, &header("<f4", false, "(6,)"), &six),
            b"\x93NUM".to_vec(),
            b"not numpy at all".to_vec(),
            Vec::new(),
        ];
        let mut nan = six.clone();
        nan[8..12].copy_from_slice(&f32::NAN.to_le_bytes());
        cases.push(npy(1, &header("<f4", false, "(2, 3)"), &nan));
        // A header length far beyond the file.
        let mut lying = npy(2, &header("<f4", false, "(6,)"), &six);
        lying[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        cases.push(lying);
        for bytes in &cases {
            same(bytes);
            for cut in [0, 1, 9, 11, 12, 40] {
                same(&bytes[..cut.min(bytes.len())]);
            }
        }
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data");
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "npy") {
                same(&std::fs::read(path).unwrap());
            }
        }
    }
}
