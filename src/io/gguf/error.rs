//! Why a GGUF file, its header, or one of its tensors could not be read. [`ParseError`]
//! names the field at fault; [`GgufError`] adds the file's name.

use super::GgmlType;

/// Why a GGUF header is not valid. Each message names the field at fault (a metadata key, a
/// tensor's name) and the numbers that do not fit; the caller adds the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The file does not start with `GGUF`.
    #[error("not a GGUF file: it starts with {found:?}, not the bytes \"GGUF\"")]
    NotGguf {
        /// The first bytes, escaped.
        found: String,
    },
    /// A big-endian file (its version reads byte-swapped).
    #[error(
        "a big-endian GGUF file (version {version} with its bytes swapped): quantscope reads little-endian GGUF files only"
    )]
    BigEndian {
        /// The version read the other way round.
        version: u32,
    },
    /// A version other than 2 or 3.
    #[error("unsupported GGUF version {version} (supported: 2 and 3)")]
    UnsupportedVersion {
        /// The version in the file.
        version: u32,
    },
    /// The file ends inside a field.
    #[error(
        "the file ends inside {field}: it needs {need} bytes at byte {at}, but only {have} remain (the file is truncated)"
    )]
    Truncated {
        /// The field being read.
        field: String,
        /// Where it starts.
        at: u64,
        /// Bytes it needs.
        need: u64,
        /// Bytes left in the file.
        have: u64,
    },
    /// A count that the rest of the file cannot hold.
    #[error(
        "{field} says {count}, but each takes at least {min_each} bytes and only {remaining} remain: the count is wrong or the file is truncated"
    )]
    CountTooLarge {
        /// The count's field.
        field: String,
        /// The count in the file.
        count: u64,
        /// The fewest bytes one item takes.
        min_each: u64,
        /// Bytes left after the count.
        remaining: u64,
    },
    /// A string longer than the rest of the file.
    #[error(
        "{field} is a string of {len} bytes, but only {remaining} remain: its length is wrong or the file is truncated"
    )]
    StringTooLong {
        /// The string's field.
        field: String,
        /// The length in the file.
        len: u64,
        /// Bytes left after the length.
        remaining: u64,
    },
    /// A key or tensor name that is not UTF-8.
    #[error("{field} is not UTF-8 (invalid byte at offset {offset} of the name)")]
    NotUtf8 {
        /// The name's field.
        field: String,
        /// 0-based offset of the first invalid byte.
        offset: usize,
    },
    /// A metadata value of a type GGUF does not define.
    #[error("metadata key \"{key}\" has value type {id}, which GGUF does not define (0 to 12)")]
    UnknownValueType {
        /// The key.
        key: String,
        /// The type number.
        id: u32,
    },
    /// Arrays nested too deeply.
    #[error("metadata key \"{key}\" nests arrays more than {max} deep")]
    NestedTooDeep {
        /// The key.
        key: String,
        /// The limit.
        max: usize,
    },
    /// A key that appears twice.
    #[error("metadata key \"{key}\" appears twice")]
    DuplicateKey {
        /// The key.
        key: String,
    },
    /// `general.alignment` that is not a power of two, or not a `u32`.
    #[error("general.alignment is {value}: it must be a UINT32 power of two")]
    BadAlignment {
        /// The value as written.
        value: String,
    },
    /// Two tensors of one name.
    #[error("tensor \"{tensor}\" appears twice")]
    DuplicateTensor {
        /// The name.
        tensor: String,
    },
    /// More than four dimensions.
    #[error("tensor \"{tensor}\" has {n_dims} dimensions; GGUF allows 1 to {max}")]
    BadDimCount {
        /// The name.
        tensor: String,
        /// Its number of dimensions.
        n_dims: u32,
        /// ggml's limit.
        max: u32,
    },
    /// A shape whose size overflows.
    #[error("tensor \"{tensor}\" has absurd dimensions {dims:?}: its size overflows 64 bits")]
    ShapeOverflow {
        /// The name.
        tensor: String,
        /// The dimensions as stored (innermost first).
        dims: Vec<u64>,
    },
    /// A tensor type ggml does not define.
    #[error("tensor \"{tensor}\" has type {id}, which is not a ggml type quantscope knows")]
    UnknownTensorType {
        /// The name.
        tensor: String,
        /// The type number.
        id: u32,
    },
    /// A row that is not made of whole blocks.
    #[error(
        "tensor \"{tensor}\" is {ggml_type} with rows of {row_len} values, not a multiple of its block of {block_len}"
    )]
    PartialBlock {
        /// The name.
        tensor: String,
        /// Its type.
        ggml_type: GgmlType,
        /// Values per row (the first dimension).
        row_len: u64,
        /// Values per block.
        block_len: u32,
    },
    /// A data offset that is not a multiple of the alignment.
    #[error(
        "tensor \"{tensor}\" starts at data offset {offset}, not a multiple of the alignment {alignment}"
    )]
    Misaligned {
        /// The name.
        tensor: String,
        /// Its offset in the data section.
        offset: u64,
        /// The file's alignment.
        alignment: u64,
    },
    /// A tensor whose bytes run past the end of the file.
    #[error(
        "tensor \"{tensor}\" takes bytes {offset}..{end} of the data section, past its end ({data_len} bytes): the file is truncated or its offsets lie"
    )]
    DataPastEnd {
        /// The name.
        tensor: String,
        /// Its offset in the data section.
        offset: u64,
        /// One past its last byte (saturated).
        end: u64,
        /// Length of the data section.
        data_len: u64,
    },
    /// Two tensors that share bytes.
    #[error("tensors \"{first}\" and \"{second}\" overlap: their data share bytes")]
    Overlap {
        /// The tensor that starts first.
        first: String,
        /// The tensor that starts inside it.
        second: String,
    },
    /// The data section would start past the end of the file.
    #[error(
        "the data section would start at byte {data_start}, past the end of the file ({file_len} bytes)"
    )]
    NoDataSection {
        /// Where the data section starts (after the header, aligned).
        data_start: u64,
        /// Length of the file.
        file_len: u64,
    },
}

/// Why a GGUF file or one of its tensors could not be read. Messages start with the file.
#[derive(Debug, thiserror::Error)]
pub enum GgufError {
    /// The file could not be opened or read.
    #[error("cannot read {file}: {source}")]
    Io {
        /// The path as given.
        file: String,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The header is not valid.
    #[error("{file}: {source}")]
    Header {
        /// The path as given.
        file: String,
        /// What is wrong with it.
        source: ParseError,
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
    /// A tensor type whose values quantscope cannot read.
    #[error(
        "{file}: tensor \"{tensor}\" is {ggml_type}; quantscope reads F32, F16, BF16 and F64 tensors, and decodes Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K to Q6_K, IQ1_S to IQ4_NL, TQ1_0, TQ2_0, MXFP4 and NVFP4"
    )]
    Unsupported {
        /// The path as given.
        file: String,
        /// The tensor.
        tensor: String,
        /// Its type.
        ggml_type: GgmlType,
    },
    /// A tensor with no values.
    #[error("{file}: tensor \"{tensor}\" is empty: shape {shape:?} has no elements")]
    Empty {
        /// The path as given.
        file: String,
        /// The tensor.
        tensor: String,
        /// Its shape, rows first.
        shape: Vec<usize>,
    },
    /// Not enough memory for the tensor as `f32`.
    #[error("{file}: tensor \"{tensor}\" needs {bytes} bytes as f32, more than can be allocated")]
    TooLarge {
        /// The path as given.
        file: String,
        /// The tensor.
        tensor: String,
        /// Bytes it needs.
        bytes: u64,
    },
    /// A NaN, an infinity, or an F64 beyond `f32`'s range.
    #[error(
        "{file}: tensor \"{tensor}\", row {row}, column {col} (0-based) is {value:e}: only finite values (within f32's range) are allowed"
    )]
    NotFinite {
        /// The path as given.
        file: String,
        /// The tensor.
        tensor: String,
        /// 0-based row.
        row: usize,
        /// 0-based column.
        col: usize,
        /// The value as stored.
        value: f64,
    },
    /// The file holds no tensor [`load_path`](crate::io::load_path) could pick by itself.
    #[error("{file} holds {count} tensors; pass --tensor NAME to choose one, e.g. {} (--list-tensors lists them all)", .candidates.join(", "))]
    Ambiguous {
        /// The path as given.
        file: String,
        /// Tensors in the file.
        count: usize,
        /// A few of their names, quoted.
        candidates: Vec<String>,
    },
}
