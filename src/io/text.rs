//! The channel text format: what a user pastes into the editor or keeps in a `.txt`/`.csv`.
//!
//! One channel (matrix row) per line, or several channels on one line separated by `;`:
//!
//! ```text
//! # attention weights, rows are output channels
//! q_proj.0: 0.12, -0.5, 0.03, 1e-3
//! q_proj.1: -.5 +2 3. .5          # commas and/or whitespace separate values
//! 1, 2, 3, 4; 5, 6, 7, 8          # two unlabelled channels on one line
//! ```
//!
//! - `#` starts a comment that runs to the end of the line; blank lines and empty `;`
//!   segments are skipped. A leading UTF-8 byte-order mark is ignored.
//! - An optional label before the first `:` of a segment names the channel. It is trimmed,
//!   must not be empty, and may contain letters and digits (any script), spaces and
//!   `_ . - [ ]`.
//! - Values are separated by commas and/or whitespace. A trailing comma is fine; two commas
//!   in a row (`1,,2`) or a comma before the first value is an "empty value" error.
//! - A value is a decimal number: optional sign, digits with an optional `.` (`3.`, `.5`),
//!   optional exponent (`1e-3`, `1E+3`). Hex, fractions, `inf` and `nan` are refused. Each
//!   value is rounded once, correctly, to the nearest `f32`; one whose magnitude is too
//!   large for `f32` (`1e39`) is an error rather than an infinity.
//! - Every channel must have as many values as the first one.
//!
//! Errors carry a 1-based line and a 1-based column counted in characters (not bytes; a tab
//! is one character), so the editor can put the cursor on them. Parsing never panics and runs in linear time.

use std::fmt::{self, Write as _};

use ndarray::Array2;

use crate::core::{Matrix, MatrixError};

/// How many characters of the offending token a [`ParseError`] message shows.
const SHOWN_TOKEN_CHARS: usize = 40;

/// A problem in the text, with where it is.
///
/// `col` points at the first character of `text`; when `text` is empty, at the offending
/// character (the second comma of `1,,2`, the `:` of an empty label); for a channel of the
/// wrong length, at the channel's first character. For [`ParseErrorKind::NoValues`] there is no
/// position: `line` and `col` are both 1 and the message has no `line …, col …:` prefix.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    /// 1-based line number.
    pub line: usize,
    /// 1-based column, counted in characters (Unicode scalar values), not bytes.
    pub col: usize,
    /// What is wrong.
    pub kind: ParseErrorKind,
    /// The offending token (a value, a label), or empty when the error is not about one.
    pub text: String,
}

/// What is wrong in a [`ParseError`].
///
/// The messages here stand alone; [`ParseError`]'s message adds the position and the token.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParseErrorKind {
    /// The token is not a decimal number.
    #[error("not a number")]
    NotANumber,
    /// The token spells NaN (`nan`, `NaN`, …).
    #[error("NaN is not allowed")]
    NaN,
    /// The token spells an infinity (`inf`, `-Infinity`, …).
    #[error("infinity is not allowed")]
    Infinity,
    /// The number is finite but its magnitude is too large for `f32`.
    #[error("out of range for f32")]
    OutOfRange,
    /// Two commas in a row, or a comma before the first value of a channel.
    #[error("empty value")]
    EmptyValue,
    /// Nothing but whitespace before a `:`.
    #[error("empty label before ':'")]
    EmptyLabel,
    /// The label contains a character outside letters, digits, spaces and `_ . - [ ]`.
    #[error("not a valid label: use letters, digits, spaces and _ . - [ ]")]
    InvalidLabel,
    /// A label followed by no values (`a:`).
    #[error("label has no values")]
    LabelWithoutValues,
    /// A channel's length differs from the first channel's.
    #[error("channel {channel} has {len} values but channel 1 has {expected}")]
    RaggedChannel {
        /// 1-based number of the offending channel.
        channel: usize,
        /// Its number of values.
        len: usize,
        /// The number of values of channel 1.
        expected: usize,
    },
    /// The input holds nothing but blanks and comments.
    #[error("no values: the input has no channels")]
    NoValues,
    /// The input holds more numbers than the caller allows (see [`parse_text_limited`]).
    #[error("too many values: the input has more than {max} numbers")]
    TooManyValues {
        /// The limit that was exceeded.
        max: usize,
    },
    /// The values could not form a matrix (not expected: the parser checks first).
    #[error(transparent)]
    Matrix(#[from] MatrixError),
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !matches!(self.kind, ParseErrorKind::NoValues) {
            write!(f, "line {}, col {}: ", self.line, self.col)?;
        }
        let token = Shown(&self.text);
        match &self.kind {
            ParseErrorKind::NotANumber
            | ParseErrorKind::OutOfRange
            | ParseErrorKind::InvalidLabel => write!(f, "\"{token}\" is {}", self.kind),
            ParseErrorKind::NaN | ParseErrorKind::Infinity => {
                write!(f, "\"{token}\": {}", self.kind)
            }
            ParseErrorKind::LabelWithoutValues => write!(f, "label \"{token}\" has no values"),
            kind => write!(f, "{kind}"),
        }
    }
}

impl std::error::Error for ParseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ParseErrorKind::Matrix(e) => Some(e),
            _ => None,
        }
    }
}

/// A token shortened for messages, so that a 10 MB "number" does not become a 10 MB message.
struct Shown<'a>(&'a str);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.char_indices().nth(SHOWN_TOKEN_CHARS) {
            Some((cut, _)) => write!(f, "{}…", &self.0[..cut]),
            None => f.write_str(self.0),
        }
    }
}

/// Parses channel text into a [`Matrix`], with no limit on the number of values.
///
/// See the [module documentation](self) for the format.
pub fn parse_text(src: &str) -> Result<Matrix, ParseError> {
    parse_text_limited(src, usize::MAX)
}

/// Parses channel text into a [`Matrix`], refusing input with more than `max_values` numbers.
///
/// The error ([`ParseErrorKind::TooManyValues`]) points at the first value over the limit,
/// and is reported as soon as it is reached, before the rest of the input is read. Use it
/// to refuse absurd pastes gracefully; [`parse_text`] is this with `usize::MAX`.
pub fn parse_text_limited(src: &str, max_values: usize) -> Result<Matrix, ParseError> {
    let src = src.strip_prefix('\u{feff}').unwrap_or(src);
    let mut acc = Accumulator {
        values: Vec::new(),
        labels: Vec::new(),
        width: None,
        max_values,
    };
    for (index, line) in src.split('\n').enumerate() {
        acc.line(line).map_err(|e| e.at_line(index + 1, line))?;
    }
    acc.finish()
}

/// Writes a matrix in the channel text format, so that [`parse_text`] reads it back.
///
/// One channel per line, `label: ` first when the channel is labelled, values separated by
/// `, `, each in the shortest form that reads back as the same `f32`. Labels are written as
/// they are: the round trip holds for labels the parser accepts (non-empty, no surrounding
/// spaces, only letters, digits, spaces and `_ . - [ ]`).
#[must_use]
pub fn format_text(matrix: &Matrix) -> String {
    let mut out = String::new();
    for (row, label) in matrix.values().rows().into_iter().zip(matrix.labels()) {
        if let Some(label) = label {
            out.push_str(label);
            out.push_str(": ");
        }
        for (i, value) in row.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            // Writing into a String cannot fail.
            let _ = write!(out, "{value}");
        }
        out.push('\n');
    }
    out
}

/// An error found inside one line: a byte offset into that line, resolved to a column later.
struct LineError {
    byte: usize,
    kind: ParseErrorKind,
    text: String,
}

impl LineError {
    fn new(byte: usize, kind: ParseErrorKind, text: &str) -> Self {
        Self {
            byte,
            kind,
            text: text.to_owned(),
        }
    }

    /// Resolves the byte offset to a column; done once, for the one error returned.
    fn at_line(self, line: usize, src: &str) -> ParseError {
        let col = src
            .get(..self.byte)
            .map_or(1, |before| before.chars().count() + 1);
        ParseError {
            line,
            col,
            kind: self.kind,
            text: self.text,
        }
    }
}

/// The channels read so far.
struct Accumulator {
    values: Vec<f32>,
    labels: Vec<Option<String>>,
    width: Option<usize>,
    max_values: usize,
}

impl Accumulator {
    fn line(&mut self, line: &str) -> Result<(), LineError> {
        let content = line.find('#').map_or(line, |hash| &line[..hash]);
        let mut start = 0;
        for segment in content.split(';') {
            self.segment(segment, start)?;
            start += segment.len() + 1;
        }
        Ok(())
    }

    /// Reads one `;`-separated segment that starts at byte `base` of its line.
    fn segment(&mut self, segment: &str, base: usize) -> Result<(), LineError> {
        let Some(first) = segment.find(|c: char| !c.is_whitespace()) else {
            return Ok(());
        };
        let channel_start = base + first;
        let (label, values, values_base) = match segment.find(':') {
            Some(colon) => {
                let raw = &segment[..colon];
                let label = raw.trim();
                if label.is_empty() {
                    return Err(LineError::new(base + colon, ParseErrorKind::EmptyLabel, ""));
                }
                if !label
                    .chars()
                    .all(|c| c.is_alphanumeric() || " _.-[]".contains(c))
                {
                    return Err(LineError::new(
                        channel_start,
                        ParseErrorKind::InvalidLabel,
                        label,
                    ));
                }
                (Some(label), &segment[colon + 1..], base + colon + 1)
            }
            None => (None, segment, base),
        };
        let row_start = self.values.len();
        self.values_of(values, values_base)?;
        let len = self.values.len() - row_start;
        if len == 0 {
            let text = label.unwrap_or_default();
            return Err(LineError::new(
                channel_start,
                ParseErrorKind::LabelWithoutValues,
                text,
            ));
        }
        match self.width {
            None => self.width = Some(len),
            Some(expected) if expected != len => {
                let kind = ParseErrorKind::RaggedChannel {
                    channel: self.labels.len() + 1,
                    len,
                    expected,
                };
                return Err(LineError::new(
                    channel_start,
                    kind,
                    label.unwrap_or_default(),
                ));
            }
            Some(_) => {}
        }
        self.labels.push(label.map(str::to_owned));
        Ok(())
    }

    /// Reads the comma/whitespace-separated values of a segment starting at byte `base`.
    fn values_of(&mut self, text: &str, base: usize) -> Result<(), LineError> {
        let mut chars = text.char_indices().peekable();
        let mut seen_value = false;
        let mut pending_comma = false;
        while let Some((i, c)) = chars.next() {
            if c == ',' {
                if pending_comma || !seen_value {
                    return Err(LineError::new(base + i, ParseErrorKind::EmptyValue, ""));
                }
                pending_comma = true;
                continue;
            }
            if c.is_whitespace() {
                continue;
            }
            let mut end = text.len();
            while let Some(&(j, d)) = chars.peek() {
                if d == ',' || d.is_whitespace() {
                    end = j;
                    break;
                }
                chars.next();
            }
            let token = &text[i..end];
            if self.values.len() >= self.max_values {
                let kind = ParseErrorKind::TooManyValues {
                    max: self.max_values,
                };
                return Err(LineError::new(base + i, kind, token));
            }
            let value = parse_value(token).map_err(|kind| LineError::new(base + i, kind, token))?;
            self.values.push(value);
            seen_value = true;
            pending_comma = false;
        }
        Ok(())
    }

    fn finish(self) -> Result<Matrix, ParseError> {
        let no_position = |kind| ParseError {
            line: 1,
            col: 1,
            kind,
            text: String::new(),
        };
        let Some(width) = self.width else {
            return Err(no_position(ParseErrorKind::NoValues));
        };
        let rows = self.labels.len();
        let values = Array2::from_shape_vec((rows, width), self.values)
            .map_err(|_| no_position(MatrixError::Empty { rows, cols: width }.into()))?;
        Matrix::with_labels(values, self.labels).map_err(|e| no_position(e.into()))
    }
}

/// Parses one value token.
fn parse_value(token: &str) -> Result<f32, ParseErrorKind> {
    if !is_decimal(token.as_bytes()) {
        let word = token.trim_start_matches(['+', '-']).to_ascii_lowercase();
        return Err(match word.as_str() {
            "nan" => ParseErrorKind::NaN,
            "inf" | "infinity" => ParseErrorKind::Infinity,
            _ => ParseErrorKind::NotANumber,
        });
    }
    // Parsing straight to f32 rounds once; going through f64 could round twice.
    let value: f32 = token.parse().map_err(|_| ParseErrorKind::NotANumber)?;
    if value.is_finite() {
        Ok(value)
    } else {
        Err(ParseErrorKind::OutOfRange)
    }
}

/// `[+-]? (digits ('.' digits*)? | '.' digits) ([eE] [+-]? digits)?`
fn is_decimal(s: &[u8]) -> bool {
    fn digits(s: &[u8]) -> usize {
        s.iter().take_while(|b| b.is_ascii_digit()).count()
    }
    let mut i = usize::from(matches!(s.first(), Some(b'+' | b'-')));
    let int = digits(&s[i..]);
    i += int;
    let mut frac = 0;
    if s.get(i) == Some(&b'.') {
        i += 1;
        frac = digits(&s[i..]);
        i += frac;
    }
    if int == 0 && frac == 0 {
        return false;
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        i += 1;
        i += usize::from(matches!(s.get(i), Some(b'+' | b'-')));
        let exp = digits(&s[i..]);
        if exp == 0 {
            return false;
        }
        i += exp;
    }
    i == s.len()
}
