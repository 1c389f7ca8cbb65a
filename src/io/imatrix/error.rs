//! Why an importance matrix, or a tensor's entry in it, cannot be used. Every message names
//! the file, the entry or tensor, and what was expected.

use super::ImatrixFormat;
use crate::core::importance::ImportanceError;
use crate::io::gguf::{GgmlType, ParseError};

/// Why an importance matrix cannot be read or used for a tensor.
#[derive(Debug, thiserror::Error)]
pub enum ImatrixError {
    /// The file could not be read.
    #[error("cannot read imatrix {file}: {source}")]
    Io {
        /// The path as given.
        file: String,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// A GGUF file whose header is not valid.
    #[error("imatrix {file}: {source}")]
    Gguf {
        /// The path as given.
        file: String,
        /// What is wrong with the header.
        source: ParseError,
    },
    /// Not an importance matrix at all.
    #[error("{file} is not an importance matrix: {why}")]
    NotImatrix {
        /// The path as given.
        file: String,
        /// What it is instead, and what llama-imatrix writes.
        why: String,
    },
    /// The legacy format ends, or holds a size that cannot be, inside an entry.
    #[error("imatrix {file} (legacy .dat): {detail}")]
    Legacy {
        /// The path as given.
        file: String,
        /// Which entry and field, and what the file holds.
        detail: String,
    },
    /// An `in_sum2` tensor without its `counts`, or the other way round.
    #[error(
        "imatrix {file}: entry \"{entry}\" has a {have} tensor but no {missing} tensor (llama-imatrix writes {entry}.in_sum2 and {entry}.counts together)"
    )]
    Unpaired {
        /// The path as given.
        file: String,
        /// The entry.
        entry: String,
        /// The suffix present.
        have: &'static str,
        /// The suffix absent.
        missing: &'static str,
    },
    /// A statistics tensor that is not F32.
    #[error("imatrix {file}: tensor \"{tensor}\" is {ggml_type}; llama-imatrix writes F32")]
    TensorType {
        /// The path as given.
        file: String,
        /// The tensor.
        tensor: String,
        /// Its type.
        ggml_type: GgmlType,
    },
    /// Sums and counts whose sizes do not fit each other.
    #[error(
        "imatrix {file}: entry \"{entry}\" has {sums} sums and {counts} counts: the sums must be whole vectors, one per count"
    )]
    Shape {
        /// The path as given.
        file: String,
        /// The entry.
        entry: String,
        /// Values of `in_sum2`.
        sums: u64,
        /// Values of `counts`.
        counts: u64,
    },
    /// A count that is not a finite number of tokens.
    #[error(
        "imatrix {file}: entry \"{entry}\", count {matrix} is {value}: a count of tokens must be finite and not negative"
    )]
    BadCount {
        /// The path as given.
        file: String,
        /// The entry.
        entry: String,
        /// Which count (expert).
        matrix: usize,
        /// The count.
        value: f32,
    },
    /// One name for two entries.
    #[error("imatrix {file}: entry \"{entry}\" appears twice")]
    DuplicateEntry {
        /// The path as given.
        file: String,
        /// The entry.
        entry: String,
    },
    /// No entry for the tensor.
    #[error("imatrix {file} has no entry for tensor \"{tensor}\"{}{hint}; pick one with --imatrix-tensor NAME", tried_note(.tried))]
    NoEntry {
        /// The path as given.
        file: String,
        /// The tensor.
        tensor: String,
        /// The names looked for (the tensor's own, its GGUF name).
        tried: Vec<String>,
        /// Similar entries, or how many there are.
        hint: String,
    },
    /// An entry whose count is 0: llama-imatrix saw no token for it.
    #[error(
        "imatrix {file}: entry \"{entry}\"{}: llama-imatrix saw no token for it ({}), so it holds no importance (llama-quantize would quantize with importance 1 for every column)",
        expert_note(*.matrix, *.matrices),
        zero_what(*.format)
    )]
    ZeroCount {
        /// The path as given.
        file: String,
        /// The entry.
        entry: String,
        /// The first expert whose count is 0.
        matrix: usize,
        /// Experts of the entry.
        matrices: usize,
        /// The file's format.
        format: ImatrixFormat,
    },
    /// Values that cannot be an importance for the tensor (not finite, negative, another
    /// width).
    #[error("imatrix {file}: entry \"{entry}\" for tensor \"{tensor}\": {source}")]
    Values {
        /// The path as given.
        file: String,
        /// The entry.
        entry: String,
        /// The tensor.
        tensor: String,
        /// What is wrong.
        source: ImportanceError,
    },
}

fn tried_note(tried: &[String]) -> String {
    match tried {
        [_, g] => format!(" (nor for its GGUF name \"{g}\")"),
        _ => String::new(),
    }
}

fn expert_note(matrix: usize, matrices: usize) -> String {
    if matrices > 1 {
        format!(" (expert {matrix} of {matrices})")
    } else {
        String::new()
    }
}

fn zero_what(format: ImatrixFormat) -> &'static str {
    match format {
        ImatrixFormat::Gguf => "its count is 0",
        ImatrixFormat::Legacy => "its ncall is 0",
    }
}
