//! Why a safetensors file, its header, or one of its tensors could not be read. Messages
//! are for people: [`SafetensorsError`] starts with the file's name, and both name the
//! tensor at fault where there is one.

use super::{Dtype, MAX_HEADER_LEN, MAX_RANK};

/// Why a header is not valid. Messages name the tensor at fault; the caller adds the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// Fewer than 8 bytes: not even the header length is there.
    #[error(
        "the file is {len} bytes long, too short for a safetensors file (it starts with an 8-byte header length)"
    )]
    TooShort {
        /// Length of the file.
        len: u64,
    },
    /// The header length is over [`MAX_HEADER_LEN`].
    #[error(
        "the header length says {header_len} bytes, more than the {MAX_HEADER_LEN}-byte limit: this is not a safetensors file, or it is damaged"
    )]
    HeaderTooLong {
        /// The length the file states.
        header_len: u64,
    },
    /// The header length runs past the end of the file.
    #[error(
        "the header length says {header_len} bytes but only {available} bytes follow it: the file is truncated or not a safetensors file"
    )]
    HeaderPastEnd {
        /// The length the file states.
        header_len: u64,
        /// Bytes after the 8-byte length.
        available: u64,
    },
    /// The header is not UTF-8.
    #[error("the header is not UTF-8 text (invalid byte at header offset {offset})")]
    NotUtf8 {
        /// 0-based offset in the header of the first invalid byte.
        offset: usize,
    },
    /// The header is not a JSON object of the expected form.
    #[error("the header is not valid safetensors JSON: {0}")]
    Json(String),
    /// Two entries have the same name.
    #[error("tensor \"{tensor}\" appears twice in the header")]
    Duplicate {
        /// The repeated name.
        tensor: String,
    },
    /// An entry is not `{"dtype": .., "shape": [..], "data_offsets": [begin, end]}`.
    #[error("tensor \"{tensor}\": {message}")]
    Entry {
        /// The entry's name.
        tensor: String,
        /// What is wrong with it.
        message: String,
    },
    /// `__metadata__` is not an object.
    #[error("__metadata__ must be an object of strings")]
    Metadata,
    /// A dtype safetensors does not define.
    #[error("tensor \"{tensor}\" has unknown dtype \"{dtype}\"")]
    UnknownDtype {
        /// The entry's name.
        tensor: String,
        /// The dtype as written.
        dtype: String,
    },
    /// More than [`MAX_RANK`] axes.
    #[error("tensor \"{tensor}\" has {rank} axes, more than {MAX_RANK}")]
    TooManyAxes {
        /// The entry's name.
        tensor: String,
        /// Its number of axes.
        rank: usize,
    },
    /// The shape's size overflows 64 bits.
    #[error("tensor \"{tensor}\" has absurd shape {shape:?}: its size overflows 64 bits")]
    ShapeOverflow {
        /// The entry's name.
        tensor: String,
        /// The shape as written.
        shape: Vec<u64>,
    },
    /// `begin > end`.
    #[error("tensor \"{tensor}\" has data_offsets [{begin}, {end}] that end before they begin")]
    OffsetsReversed {
        /// The entry's name.
        tensor: String,
        /// First byte.
        begin: u64,
        /// One past the last byte.
        end: u64,
    },
    /// `end` is past the data section.
    #[error(
        "tensor \"{tensor}\" has data_offsets [{begin}, {end}] past the end of the data ({data_len} bytes): the file is truncated or its header lies"
    )]
    OffsetsPastEnd {
        /// The entry's name.
        tensor: String,
        /// First byte.
        begin: u64,
        /// One past the last byte.
        end: u64,
        /// Length of the data section.
        data_len: u64,
    },
    /// The byte range does not match the shape and dtype.
    #[error(
        "tensor \"{tensor}\": shape {shape:?} of {dtype} needs {expected} bytes, but its data_offsets [{begin}, {end}] hold {found}"
    )]
    SizeMismatch {
        /// The entry's name.
        tensor: String,
        /// Its dtype.
        dtype: Dtype,
        /// Its shape.
        shape: Vec<u64>,
        /// Bytes the shape and dtype need.
        expected: u64,
        /// Bytes the offsets hold.
        found: u64,
        /// First byte.
        begin: u64,
        /// One past the last byte.
        end: u64,
    },
    /// A sub-byte dtype whose values do not fill whole bytes.
    #[error(
        "tensor \"{tensor}\": {elements} values of {dtype} do not fill a whole number of bytes"
    )]
    PartialByte {
        /// The entry's name.
        tensor: String,
        /// Its dtype.
        dtype: Dtype,
        /// Its number of values.
        elements: u64,
    },
    /// Two tensors share bytes.
    #[error("tensors \"{first}\" and \"{second}\" overlap: their data_offsets share bytes")]
    Overlap {
        /// The tensor that begins first.
        first: String,
        /// The tensor that begins inside it.
        second: String,
    },
    /// Bytes of the data section belong to no tensor.
    #[error(
        "bytes {begin}..{end} of the data section belong to no tensor (safetensors files have no holes)"
    )]
    Hole {
        /// First unclaimed byte.
        begin: u64,
        /// One past the last unclaimed byte.
        end: u64,
    },
}

/// Why a safetensors file or one of its tensors could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SafetensorsError {
    /// The file could not be opened or read.
    #[error("cannot read {file}: {source}")]
    Io {
        /// The path as given.
        file: String,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The header is malformed.
    #[error("{file}: {source}")]
    Header {
        /// The path as given.
        file: String,
        /// What is wrong with it.
        source: HeaderError,
    },
    /// No tensor has the name asked for.
    #[error("{file} has no tensor named \"{tensor}\"{hint}")]
    NoSuchTensor {
        /// The path as given.
        file: String,
        /// The name asked for.
        tensor: String,
        /// Similar names, or how to list them.
        hint: String,
    },
    /// The tensor's dtype is not one quantscope loads.
    #[error(
        "{file}: tensor \"{tensor}\" is {dtype}; quantscope loads only floating tensors of dtype F32, F16, BF16 or F64"
    )]
    UnsupportedDtype {
        /// The path as given.
        file: String,
        /// The tensor's name.
        tensor: String,
        /// Its dtype.
        dtype: Dtype,
    },
    /// The tensor is a scalar.
    #[error(
        "{file}: tensor \"{tensor}\" is 0-dimensional (a single number); a matrix needs at least one axis"
    )]
    ZeroDimensional {
        /// The path as given.
        file: String,
        /// The tensor's name.
        tensor: String,
    },
    /// The tensor has no values.
    #[error("{file}: tensor \"{tensor}\" is empty: shape {shape:?} has no elements")]
    Empty {
        /// The path as given.
        file: String,
        /// The tensor's name.
        tensor: String,
        /// Its shape.
        shape: Vec<usize>,
    },
    /// Not enough memory for the tensor as `f32`.
    #[error("{file}: tensor \"{tensor}\" needs {bytes} bytes as f32, more than can be allocated")]
    TooLarge {
        /// The path as given.
        file: String,
        /// The tensor's name.
        tensor: String,
        /// Bytes it needs as `f32`.
        bytes: u64,
    },
    /// A NaN, an infinity, or an F64 value beyond `f32`'s range.
    #[error(
        "{file}: tensor \"{tensor}\", row {row}, column {col} (0-based, trailing axes flattened into columns) is {value:e}: only finite values (within f32's range) are allowed"
    )]
    NotFinite {
        /// The path as given.
        file: String,
        /// The tensor's name.
        tensor: String,
        /// 0-based row.
        row: usize,
        /// 0-based column.
        col: usize,
        /// The value as stored.
        value: f64,
    },
    /// The file holds no tensor [`load_path`](crate::io::load_path) could pick by itself.
    #[error(
        "{file} has no floating tensor of one or more dimensions (F32, F16, BF16, F64) among its {}", crate::io::export::num::count(*count, "tensor")
    )]
    NoFloatTensor {
        /// The path as given.
        file: String,
        /// Tensors in the file.
        count: usize,
    },
    /// Several tensors could be loaded and none was named.
    #[error(
        "{file} holds {count} floating tensors; pass --tensor NAME to choose one, e.g. {} (--list-tensors lists them all)",
        .candidates.join(", ")
    )]
    Ambiguous {
        /// The path as given.
        file: String,
        /// Loadable tensors in the file.
        count: usize,
        /// The first few of their names, quoted.
        candidates: Vec<String>,
    },
}
