//! Arrays as notebooks print them: numpy's `array([[...]], dtype=float32)` and `print(a)`
//! form (`[[0.1 0.2]\n [0.3 0.4]]`), PyTorch's `tensor([[...]])`, and nested JSON arrays.
//!
//! The outermost list holds the channels; a channel that is itself nested (a 3-D array) is
//! flattened in order. A single flat list is one channel. Values are separated by commas
//! and/or whitespace; a wrapper's trailing arguments (`, dtype=float32)`,
//! `, device='cuda:0', requires_grad=True)`) are skipped.

use super::line::{parse_value, precision_note};
use super::{NoteKind, ParseErrorKind};

/// Wrappers that may come before the opening bracket, longest first.
const WRAPPERS: [&str; 6] = [
    "torch.tensor(",
    "np.array(",
    "numpy.array(",
    "tensor(",
    "array(",
    "Tensor(",
];

/// An error at a byte offset of the whole text.
#[derive(Debug)]
pub struct At {
    /// Byte offset.
    pub byte: usize,
    /// What is wrong.
    pub kind: ParseErrorKind,
    /// The offending token.
    pub text: String,
}

fn at(byte: usize, kind: ParseErrorKind, text: &str) -> At {
    At {
        byte,
        kind,
        text: text.to_owned(),
    }
}

/// The channels read from a bracketed array.
#[derive(Debug, Default)]
pub struct Arrays {
    /// Values, channel after channel.
    pub values: Vec<f32>,
    /// How many values each channel has (equal for all).
    pub width: usize,
    /// How many channels.
    pub rows: usize,
    /// Notes on values, at byte offsets.
    pub notes: Vec<(usize, NoteKind)>,
}

/// Whether `src` (after blanks and `#` comment lines) starts like a bracketed array: a
/// wrapper such as `array(`, or a `[` on a line without a `:` (a line like `[a]: 1, 2` is
/// a labelled channel; printed arrays and JSON have no `:`).
#[must_use]
pub fn looks_bracketed(src: &str) -> bool {
    let body = skip_comments(src, 0);
    let rest = &src[body..];
    let first_line = rest.split('\n').next().unwrap_or("");
    (rest.starts_with('[') && !first_line.contains(':'))
        || WRAPPERS.iter().any(|w| rest.starts_with(w))
}

/// The byte offset of the first character that is not blank or in a `#` comment line.
fn skip_comments(src: &str, mut i: usize) -> usize {
    loop {
        let rest = &src[i..];
        let trimmed = rest.trim_start();
        i += rest.len() - trimmed.len();
        if trimmed.starts_with('#') {
            i += trimmed.find('\n').unwrap_or(trimmed.len());
        } else {
            return i;
        }
    }
}

struct Reader<'a> {
    src: &'a str,
    i: usize,
    out: Arrays,
    max_values: usize,
    /// Values of the channel being read.
    row_start: usize,
}

/// Reads a bracketed array (see the module documentation), refusing more than `max_values`
/// numbers.
pub fn parse(src: &str, max_values: usize) -> Result<Arrays, At> {
    let mut i = skip_comments(src, 0);
    let wrapped = WRAPPERS.iter().find(|w| src[i..].starts_with(**w));
    if let Some(w) = wrapped {
        i += w.len();
    }
    let mut r = Reader {
        src,
        i,
        out: Arrays::default(),
        max_values,
        row_start: 0,
    };
    r.blanks();
    if !r.src[r.i..].starts_with('[') {
        return Err(r.unexpected());
    }
    r.top()?;
    if wrapped.is_some() {
        r.wrapper_tail()?;
    }
    r.blanks();
    if r.i < src.len() {
        return Err(r.unexpected());
    }
    if r.out.rows == 0 || r.out.width == 0 {
        return Err(at(0, ParseErrorKind::NoValues, ""));
    }
    Ok(r.out)
}

impl Reader<'_> {
    fn peek(&self) -> Option<char> {
        self.src[self.i..].chars().next()
    }

    fn blanks(&mut self) {
        let rest = &self.src[self.i..];
        self.i += rest.len() - rest.trim_start().len();
    }

    /// Blanks and at most one comma.
    fn separator(&mut self) {
        self.blanks();
        if self.peek() == Some(',') {
            self.i += 1;
            self.blanks();
        }
    }

    fn unexpected(&self) -> At {
        match self.peek() {
            None => at(self.i, ParseErrorKind::Unclosed, ""),
            Some(c) => {
                let token = token_at(self.src, self.i);
                let text = if token.is_empty() {
                    c.to_string()
                } else {
                    token.to_owned()
                };
                at(self.i, ParseErrorKind::NotANumber, &text)
            }
        }
    }

    /// The outermost list: its items are channels, or values of a single channel.
    fn top(&mut self) -> Result<(), At> {
        self.i += 1;
        self.separator();
        if self.peek() != Some('[') {
            // A flat list: one channel.
            self.row_start = self.out.values.len();
            self.list_body()?;
            return self.end_row(0);
        }
        while self.peek() == Some('[') {
            let row_at = self.i;
            self.row_start = self.out.values.len();
            self.nested()?;
            self.end_row(row_at)?;
            self.separator();
        }
        self.close()
    }

    fn close(&mut self) -> Result<(), At> {
        match self.peek() {
            Some(']') => {
                self.i += 1;
                Ok(())
            }
            _ => Err(self.unexpected()),
        }
    }

    /// A list at any depth inside a channel: its values are appended in order.
    fn nested(&mut self) -> Result<(), At> {
        self.i += 1;
        self.separator();
        if self.peek() == Some('[') {
            while self.peek() == Some('[') {
                self.nested()?;
                self.separator();
            }
            return self.close();
        }
        self.list_body()
    }

    /// Values up to and including the closing `]`.
    fn list_body(&mut self) -> Result<(), At> {
        loop {
            self.separator();
            match self.peek() {
                Some(']') => {
                    self.i += 1;
                    return Ok(());
                }
                None => return Err(at(self.i, ParseErrorKind::Unclosed, "")),
                Some(_) => self.value()?,
            }
        }
    }

    fn value(&mut self) -> Result<(), At> {
        let token = token_at(self.src, self.i);
        if token.is_empty() {
            return Err(self.unexpected());
        }
        if token == "..." || token == "…" {
            return Err(at(self.i, ParseErrorKind::Summarised, token));
        }
        if self.out.values.len() >= self.max_values {
            let kind = ParseErrorKind::TooManyValues {
                max: self.max_values,
            };
            return Err(at(self.i, kind, token));
        }
        let value = parse_value(token).map_err(|kind| at(self.i, kind, token))?;
        if let Some(note) = precision_note(token, value) {
            self.out.notes.push((self.i, note));
        }
        self.out.values.push(value);
        self.i += token.len();
        Ok(())
    }

    /// Checks the channel just read against the first one's length.
    fn end_row(&mut self, row_at: usize) -> Result<(), At> {
        let len = self.out.values.len() - self.row_start;
        self.out.rows += 1;
        if self.out.rows == 1 {
            self.out.width = len;
        } else if len != self.out.width {
            let kind = ParseErrorKind::RaggedChannel {
                channel: self.out.rows,
                len,
                expected: self.out.width,
            };
            return Err(at(row_at, kind, ""));
        }
        if len == 0 {
            return Err(at(row_at, ParseErrorKind::NoValues, ""));
        }
        Ok(())
    }

    /// `, dtype=float32)` and the like after the array: anything up to the matching `)`.
    fn wrapper_tail(&mut self) -> Result<(), At> {
        let mut depth = 1usize;
        for (j, c) in self.src[self.i..].char_indices() {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => {
                    depth -= 1;
                    if depth == 0 {
                        self.i += j + 1;
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
        Err(at(self.src.len(), ParseErrorKind::Unclosed, ""))
    }
}

/// The token starting at `i`: up to a separator or a bracket.
fn token_at(src: &str, i: usize) -> &str {
    let rest = &src[i..];
    let end = rest
        .find(|c: char| c == ',' || c == '[' || c == ']' || c == ')' || c.is_whitespace())
        .unwrap_or(rest.len());
    &rest[..end]
}
