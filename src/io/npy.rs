//! A reader for numpy's `.npy` files (what `numpy.save` writes).
//!
//! Supported: format versions 1.0, 2.0 and 3.0; dtypes `f2` (half), `f4` and `f8` in either
//! byte order (`<` or `>`); C and Fortran order. The header's Python dict literal is parsed
//! by `py_literal` and its dtype string by `npyz` (keys in any order, any whitespace, trailing
//! commas); the `header` submodule says which checks stay here and why.
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
//!
//! The data is converted here rather than through `npyz`'s element reader: that reader
//! decodes one value per call, and loading a 4096 x 4096 `<f4` array took 66 ms through it
//! against 34 ms converting 64 KiB chunks (release build, the same file, warm cache).

use std::io::{Read, Seek, SeekFrom};

mod data;
mod header;

use ndarray::{ArrayD, IxDyn, ShapeBuilder};

use crate::core::{Matrix, MatrixError};
use data::{Data, SliceData, StreamData, file_index};
pub(crate) use data::{decode, f32_count, read_tensor};
pub(crate) use header::Dtype;
use header::{Header, describe, preamble, split_header};

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
    read_npy_from(reader, None)
}

/// [`read_npy`] of a file: the same matrix, its values read by both threads at once when
/// there is more than a run of them (see `StreamData`).
pub fn read_npy_file(file: &std::fs::File) -> Result<Matrix, ReadNpyError> {
    let mut reader = file;
    read_npy_from(&mut reader, Some(file))
}

/// [`read_npy`], reading the values by positioned reads from `file` when given (the file
/// `reader` reads).
fn read_npy_from<R: Read + Seek>(
    reader: &mut R,
    file: Option<&std::fs::File>,
) -> Result<Matrix, ReadNpyError> {
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
        file,
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
    header.dtype.ok().map(|(d, _)| d.name())
}

/// A header's checked sizes: the element type, its byte order, rows, columns and values.
struct Sized {
    dtype: Dtype,
    big_endian: bool,
    rows: usize,
    cols: usize,
    count: usize,
}

/// Checks a header against `found` data bytes: a dtype quantscope reads, a shape with
/// elements, and exactly the bytes the shape needs.
fn check_sizes(header: &Header, found: usize) -> Result<Sized, NpyError> {
    let shape = &header.shape;
    let shape_text = shape_to_string(shape);
    let overflow = || NpyError::ShapeOverflow {
        shape: shape_to_string(shape),
    };
    let (dtype, big_endian) = match &header.dtype {
        Ok(d) => *d,
        Err(descr) => {
            return Err(NpyError::UnsupportedDtype {
                descr: descr.clone(),
            });
        }
    };
    let Some((&first, trailing)) = shape.split_first() else {
        return Err(NpyError::ZeroDimensional);
    };
    if shape.contains(&0) {
        return Err(NpyError::ZeroSize { shape: shape_text });
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
        return Err(overflow());
    };
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
    Ok(Sized {
        dtype,
        big_endian,
        rows,
        cols,
        count,
    })
}

/// Where a C-order `.npy` file's values are, for reading runs of rows from it (each row is
/// `cols` values of `dtype`, one after the other from `data_start`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RowLayout {
    /// The element type.
    pub dtype: Dtype,
    /// Big-endian values.
    pub big_endian: bool,
    /// Rows (the first axis).
    pub rows: usize,
    /// Values per row (the other axes).
    pub cols: usize,
    /// The length of the last axis.
    pub last_axis: usize,
    /// Where the values start in the file.
    pub data_start: u64,
}

/// The layout of a `.npy` stream's values, checked as [`read_npy`] checks them; `None` for
/// a Fortran-order array of two or more axes (its rows are not runs of bytes).
pub(crate) fn row_layout<R: Read + Seek>(
    reader: &mut R,
) -> Result<Option<RowLayout>, ReadNpyError> {
    let total = reader.seek(SeekFrom::End(0))?;
    let total = usize::try_from(total).unwrap_or(usize::MAX);
    reader.seek(SeekFrom::Start(0))?;
    let mut head = vec![0; total.min(12)];
    reader.read_exact(&mut head)?;
    let (_, end) = preamble(&head, total)?;
    let have = head.len();
    head.resize(end.min(total).max(have), 0);
    reader.read_exact(&mut head[have..])?;
    let (header, _) = split_header(&head, total)?;
    let s = check_sizes(&header, total.saturating_sub(end))?;
    if header.fortran_order && header.shape.len() > 1 {
        return Ok(None);
    }
    Ok(Some(RowLayout {
        dtype: s.dtype,
        big_endian: s.big_endian,
        rows: s.rows,
        cols: s.cols,
        last_axis: header.shape.last().copied().unwrap_or(1),
        data_start: end as u64,
    }))
}

/// The matrix a header and `found` data bytes describe.
fn build<D: Data>(
    header: Header,
    found: usize,
    data: &mut D,
) -> Result<Result<Matrix, NpyError>, D::Error> {
    let Sized {
        dtype,
        big_endian,
        rows,
        cols,
        count,
    } = match check_sizes(&header, found) {
        Ok(s) => s,
        Err(e) => return Ok(Err(e)),
    };
    let Header {
        fortran_order,
        shape,
        ..
    } = header;
    let overflow = || NpyError::ShapeOverflow {
        shape: shape_to_string(&shape),
    };
    // Only now, with the size checked against the bytes present, allocate.
    let (flat, first_bad) = data.decode(count, dtype, big_endian)?;
    let matrix = if fortran_order && shape.len() > 1 {
        let values = ArrayD::from_shape_vec(IxDyn(&shape).f(), flat.to_vec())
            .map_err(|_| overflow())
            .map(|a| a.as_standard_layout().into_owned())
            .and_then(|a| {
                a.into_shape_with_order((rows, cols))
                    .map_err(|_| overflow())
            });
        match values {
            Ok(v) => Matrix::new(v),
            Err(e) => return Ok(Err(e)),
        }
    } else {
        Matrix::from_flat(flat, rows, cols, first_bad)
    };
    Ok(matrix.map_err(|e| match e {
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

#[cfg(test)]
mod tests {
    use std::io::{Cursor, Write};
    use std::path::PathBuf;

    use super::*;

    fn npy(version: u8, header: &str, data: &[u8]) -> Vec<u8> {
        let mut out = header::MAGIC.to_vec();
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
    /// 1.1 million f32 values over several runs of a stream, none of them the same.
    fn singles() -> Vec<f32> {
        (0..1_100_000u32)
            .map(|i| (i as f32 - 5e5) * 1.25e-3)
            .collect()
    }

    /// 9000 f64 values, more than a stream converts at once.
    fn doubles() -> Vec<f64> {
        (0..9_000u32).map(|i| f64::from(i) / 7.0 - 600.0).collect()
    }

    /// The same bytes as a file, read by `read_npy_file` (positioned reads from the threads
    /// when there is more than one run).
    fn from_file(bytes: &[u8]) -> Result<Matrix, ReadNpyError> {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(bytes).unwrap();
        read_npy_file(&file)
    }

    /// [`from_file`] on a thread of a rayon pool (as a scan's tasks read), which reads the
    /// runs one after another.
    fn from_file_in_pool(bytes: &[u8]) -> Result<Matrix, ReadNpyError> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        pool.install(|| from_file(bytes))
    }

    fn same(bytes: &[u8]) {
        let want = parse_npy(bytes);
        for (how, got) in [
            ("read_npy", read_npy(&mut Cursor::new(bytes))),
            ("read_npy_file", from_file(bytes)),
        ] {
            match (&want, got) {
                (Ok(a), Ok(b)) => assert_eq!(*a, b, "{how}"),
                (Err(a), Err(ReadNpyError::Npy(b))) => {
                    assert_eq!(format!("{a:?}"), format!("{b:?}"), "{how}");
                }
                (a, b) => panic!("parse_npy {a:?}, {how} {b:?}"),
            }
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
        // Longer than one read straight into the values (2^20 of them): every finite f16
        // (subnormals included) in both byte orders, f32 and f64 big-endian.
        let halves: Vec<u16> = (0..1_100_000u32)
            .map(|i| (i % 0x7c00) as u16 | (((i / 0x7c00) as u16 & 1) << 15))
            .collect();
        let (singles, doubles) = (singles(), doubles());
        cases.extend([
            npy(
                1,
                &header("<f2", false, "(1100, 1000)"),
                &bytes_of(&halves, u16::to_le_bytes),
            ),
            npy(
                1,
                &header(">f2", false, "(1100, 1000)"),
                &bytes_of(&halves, u16::to_be_bytes),
            ),
            npy(
                1,
                &header(">f4", false, "(1000, 1100)"),
                &bytes_of(&singles, f32::to_be_bytes),
            ),
            npy(
                1,
                &header("<f4", false, "(1100000,)"),
                &bytes_of(&singles, f32::to_le_bytes),
            ),
            npy(
                1,
                &header(">f8", false, "(9000,)"),
                &bytes_of(&doubles, f64::to_be_bytes),
            ),
        ]);
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

    #[test]
    fn values_that_are_not_finite_are_found_in_later_runs() {
        let halves: Vec<u16> = (0..1_100_000u32).map(|i| (i % 0x7c00) as u16).collect();
        let (singles, doubles) = (singles(), doubles());
        // Values that are not finite beyond the first run read straight into the values
        // (2^18 of them), where the stream checks each run as it reads it: the first one in
        // row-major order is reported, in every dtype and byte order.
        let mut late = singles;
        late[700_001] = f32::NEG_INFINITY;
        late[900_000] = f32::NAN;
        let mut early_and_late = late.clone();
        early_and_late[262_143] = f32::INFINITY;
        let mut late_halves = halves;
        late_halves[300_000] = 0x7c00;
        late_halves[1_000_000] = 0x7e00;
        let mut late_doubles = doubles;
        late_doubles[8_500] = 1e300;
        late_doubles[8_600] = f64::NAN;
        let cases = [
            npy(
                1,
                &header("<f4", false, "(1000, 1100)"),
                &bytes_of(&late, f32::to_le_bytes),
            ),
            npy(
                1,
                &header(">f4", false, "(1100, 1000)"),
                &bytes_of(&early_and_late, f32::to_be_bytes),
            ),
            npy(
                1,
                &header("<f2", false, "(1100, 1000)"),
                &bytes_of(&late_halves, u16::to_le_bytes),
            ),
            npy(
                1,
                &header("<f8", false, "(90, 100)"),
                &bytes_of(&late_doubles, f64::to_le_bytes),
            ),
        ];
        for bytes in &cases {
            same(bytes);
            let a = from_file(bytes).map_err(|e| format!("{e:?}"));
            assert_eq!(a, from_file_in_pool(bytes).map_err(|e| format!("{e:?}")));
        }
        // Where the first bad value of a later run is reported: value 700 001 of rows of
        // 1100 (the NaN after it is not), and value 8500 of rows of 100 (read as f64).
        let stream = |bytes: &[u8]| read_npy(&mut Cursor::new(bytes));
        for read in [stream, from_file, from_file_in_pool] {
            assert!(matches!(
                read(&cases[0]),
                Err(ReadNpyError::Npy(NpyError::NotFinite { row: 636, col: 401, value })) if value == f32::NEG_INFINITY
            ));
            assert!(matches!(
                read(&cases[1]),
                Err(ReadNpyError::Npy(NpyError::NotFinite { row: 262, col: 143, value })) if value == f32::INFINITY
            ));
            assert!(matches!(
                read(&cases[3]),
                Err(ReadNpyError::Npy(NpyError::OutOfRange { row: 85, col: 0, value })) if value == 1e300
            ));
        }
    }
}
