//! Input and output: the text parser, file loaders and the report exporters.

pub mod activations;
pub mod checkpoint;
pub mod dequantized;
pub mod export;
pub mod gguf;
pub mod imatrix;
pub mod load;
pub mod npy;
pub mod safetensors;
pub mod save;
pub mod sharded;
pub mod stored;
pub mod text;

pub use load::{LoadError, load_path, load_path_tensor, load_reader};
pub use npy::{NpyError, parse_npy};
pub use safetensors::{Safetensors, SafetensorsError, TensorInfo, list_tensors, load_tensor};
pub use text::{
    Note, NoteKind, Notes, ParseError, ParseErrorKind, Parsed, format_text, parse_text,
    parse_text_limited, parse_text_with_notes,
};

/// `s` with every control character but the line break escaped as Rust writes it (`\0`,
/// `\t`, `\u{1b}`), so that a message or a table quoting input (a token, a path, a tensor
/// name) cannot move the cursor, recolour or clear a terminal. Borrowed when there is
/// nothing to escape.
#[must_use]
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(|c| c.is_control() && c != '\n') {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c.is_control() && c != '\n' {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Reads into `buf` until it is full or the reader ends; returns the bytes read.
pub(crate) fn read_up_to(r: &mut impl std::io::Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut have = 0;
    while have < buf.len() {
        match r.read(&mut buf[have..]) {
            Ok(0) => break,
            Ok(n) => have += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(have)
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn control_characters_are_escaped_and_line_breaks_kept() {
        assert_eq!(
            printable("x\u{1b}[31mred\0z\t\r\u{7f}\u{9b}"),
            "x\\u{1b}[31mred\\0z\\t\\r\\u{7f}\\u{9b}"
        );
        assert_eq!(printable("two\nlines"), "two\nlines");
        assert!(matches!(
            printable("plain é"),
            std::borrow::Cow::Borrowed("plain é")
        ));
    }
}
