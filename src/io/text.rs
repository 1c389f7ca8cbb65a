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
//! - Commas always separate values: `1,5` is two values, 1 and 5, never one and a half.
//!   Write decimals with a point.
//!
//! What people copy from notebooks and spreadsheets is read too:
//!
//! - numpy's and PyTorch's printed arrays (`array([[0.1, -0.2], [0.3, 0.4]],
//!   dtype=float32)`, `print(a)`'s `[[0.1 -0.2]\n [0.3 0.4]]`, `tensor([[...]])`) and nested
//!   JSON arrays: the outer list holds the channels (see [`brackets`]);
//! - a CSV or TSV header row (a first line of names, or one starting with an empty cell as
//!   pandas writes it) is skipped with a note, and then a first cell that is a name is the
//!   channel's label (`q0,0.1,0.2`).
//!
//! A value too small for `f32` (`1e-50` reads as 0) or one that becomes subnormal (fewer
//! significant bits) is kept, with a [`Note`] saying so.
//!
//! Errors carry a 1-based line and a 1-based column counted in characters (not bytes; a tab
//! is one character), so the editor can put the cursor on them. Parsing never panics and
//! runs in linear time.

pub mod brackets;
mod cache;
pub mod line;

use std::fmt::{self, Write as _};

use ndarray::Array2;

use crate::core::{Matrix, MatrixError};

pub use cache::LineCache;
use line::{LineError, LineOptions, LineParse, header_names, locate, parse_line};

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
    #[error(
        "channel {channel} has {} but channel 1 has {expected}",
        crate::io::export::num::count(*len, "value")
    )]
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
    /// A bracket was opened and not closed.
    #[error("unclosed bracket: the array ends early")]
    Unclosed,
    /// A printed array that numpy or PyTorch shortened with `...`.
    #[error(
        "the array was printed in summary; print it whole (numpy: np.set_printoptions(threshold=sys.maxsize), torch: torch.set_printoptions(profile=\"full\"))"
    )]
    Summarised,
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
            ParseErrorKind::NotANumber if self.text.is_empty() => write!(f, "{}", self.kind),
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
        let (shown, cut) = match self.0.char_indices().nth(SHOWN_TOKEN_CHARS) {
            Some((cut, _)) => (&self.0[..cut], true),
            None => (self.0, false),
        };
        // Control characters (a pasted escape sequence, a NUL) are shown escaped, so that a
        // message never drives the terminal.
        for c in shown.chars() {
            if c.is_control() {
                write!(f, "{}", c.escape_default())?;
            } else {
                f.write_char(c)?;
            }
        }
        if cut {
            f.write_str("…")?;
        }
        Ok(())
    }
}

/// Something worth knowing about the text that is not an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub col: usize,
    /// What it is about.
    pub kind: NoteKind,
}

/// What a [`Note`] says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoteKind {
    /// A nonzero value too small for `f32`, read as 0.
    Underflow(String),
    /// A value that is subnormal in `f32` (fewer significant bits than the others).
    Subnormal(String),
    /// A CSV or TSV header row was skipped; its names.
    HeaderSkipped(Vec<String>),
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, col {}: ", self.line, self.col)?;
        match &self.kind {
            NoteKind::Underflow(t) => {
                write!(f, "{} is too small for f32 and reads as 0", Shown(t))
            }
            NoteKind::Subnormal(t) => write!(
                f,
                "{} is subnormal in f32 (stored with fewer significant bits)",
                Shown(t)
            ),
            NoteKind::HeaderSkipped(names) => {
                let shown: Vec<&str> = names.iter().take(4).map(String::as_str).collect();
                let more = if names.len() > 4 { ", …" } else { "" };
                write!(
                    f,
                    "header row skipped ({}{more}); a name in a row's first cell labels it",
                    Shown(&shown.join(", "))
                )
            }
        }
    }
}

/// The notes on a text: at most [`MAX_NOTES`] of them, and how many there were.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Notes {
    /// The first notes, in text order.
    pub list: Vec<Note>,
    /// How many notes there were in all.
    pub count: usize,
}

impl Notes {
    fn push(&mut self, note: Note) {
        self.count += 1;
        if self.list.len() < MAX_NOTES {
            self.list.push(note);
        }
    }
}

/// Text parsed into a matrix, with the notes on it.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The channels.
    pub matrix: Matrix,
    /// Values that lost precision, a skipped header.
    pub notes: Notes,
}

/// The most notes kept (the count says how many there were).
pub const MAX_NOTES: usize = 100;

/// The 1-based column of byte `byte` of `line`, counted in characters.
fn column(line: &str, byte: usize) -> usize {
    line.get(..byte)
        .map_or(1, |before| before.chars().count() + 1)
}

/// Parses channel text into a [`Matrix`], with no limit on the number of values.
///
/// See the [module documentation](self) for the format.
pub fn parse_text(src: &str) -> Result<Matrix, ParseError> {
    parse_text_limited(src, usize::MAX)
}

/// Parses channel text into a [`Matrix`], refusing input with more than `max_values` numbers.
///
/// The error ([`ParseErrorKind::TooManyValues`]) points at the first value over the limit.
/// Use it to refuse absurd pastes gracefully; [`parse_text`] is this with `usize::MAX`.
pub fn parse_text_limited(src: &str, max_values: usize) -> Result<Matrix, ParseError> {
    parse_text_with_notes(src, max_values).map(|p| p.matrix)
}

/// Parses channel text into a [`Matrix`] and the [`Note`]s on it (values that underflow
/// `f32`, a skipped header row), refusing more than `max_values` numbers.
pub fn parse_text_with_notes(src: &str, max_values: usize) -> Result<Parsed, ParseError> {
    let src = src.strip_prefix('\u{feff}').unwrap_or(src);
    if brackets::looks_bracketed(src) {
        return parse_bracketed(src, max_values);
    }
    let lines: Vec<&str> = src.split('\n').collect();
    assemble(&lines, max_values, |row, options| {
        parse_line(lines[row], options).map(std::sync::Arc::new)
    })
}

/// Reads a bracketed array, locating errors and notes by line and column.
fn parse_bracketed(src: &str, max_values: usize) -> Result<Parsed, ParseError> {
    let locate_byte = |byte: usize| {
        let before = &src[..byte.min(src.len())];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let line = before.matches('\n').count() + 1;
        (line, before[line_start..].chars().count() + 1)
    };
    let arrays = brackets::parse(src, max_values).map_err(|e| {
        if matches!(e.kind, ParseErrorKind::NoValues) {
            return ParseError {
                line: 1,
                col: 1,
                kind: e.kind,
                text: String::new(),
            };
        }
        let (line, col) = locate_byte(e.byte);
        ParseError {
            line,
            col,
            kind: e.kind,
            text: e.text,
        }
    })?;
    let mut notes = Notes::default();
    for (byte, kind) in arrays.notes {
        let (line, col) = locate_byte(byte);
        notes.push(Note { line, col, kind });
    }
    let no_position = |kind| ParseError {
        line: 1,
        col: 1,
        kind,
        text: String::new(),
    };
    let (rows, width) = (arrays.rows, arrays.width);
    let values = Array2::from_shape_vec((rows, width), arrays.values)
        .map_err(|_| no_position(MatrixError::Empty { rows, cols: width }.into()))?;
    let matrix =
        Matrix::with_labels(values, vec![None; rows]).map_err(|e| no_position(e.into()))?;
    Ok(Parsed { matrix, notes })
}

/// Builds the matrix from the lines' parses: `parsed(row, options)` gives line `row`'s
/// (from a cache or fresh). Checks what spans lines: the header row, equal channel lengths
/// and the value limit.
fn assemble<L, P>(lines: &[L], max_values: usize, mut parsed: P) -> Result<Parsed, ParseError>
where
    L: AsRef<str>,
    P: FnMut(usize, LineOptions) -> Result<std::sync::Arc<LineParse>, LineError>,
{
    let text = |row: usize| lines[row].as_ref();
    let mut options = LineOptions::default();
    let mut notes = Notes::default();
    let mut first_row = 0;
    let content = |row: usize| {
        let l = text(row);
        let c = l.find('#').map_or(l, |h| &l[..h]);
        !c.trim().is_empty()
    };
    if let Some(first) = (0..lines.len()).find(|&r| content(r))
        && (first + 1..lines.len()).any(content)
        && let Some(names) = header_names(text(first))
    {
        options.first_cell_labels = true;
        first_row = first + 1;
        notes.push(Note {
            line: first + 1,
            col: 1,
            kind: NoteKind::HeaderSkipped(names),
        });
    }
    let mut values: Vec<f32> = Vec::new();
    let mut labels: Vec<Option<String>> = Vec::new();
    let mut width: Option<usize> = None;
    for row in first_row..lines.len() {
        let line = text(row);
        let parse = parsed(row, options).map_err(|e| at_line(e, row + 1, line))?;
        for (byte, kind) in &parse.notes {
            notes.push(locate(row + 1, line, *byte, kind.clone()));
        }
        for channel in &parse.channels {
            let len = channel.values.len();
            if values.len() + len > max_values {
                let over = max_values - values.len();
                return Err(too_many(
                    line,
                    row + 1,
                    channel.start,
                    over,
                    max_values,
                    options,
                ));
            }
            match width {
                None => width = Some(len),
                Some(expected) if expected != len => {
                    let kind = ParseErrorKind::RaggedChannel {
                        channel: labels.len() + 1,
                        len,
                        expected,
                    };
                    let e =
                        LineError::new(channel.start, kind, channel.label.as_deref().unwrap_or(""));
                    return Err(at_line(e, row + 1, line));
                }
                Some(_) => {}
            }
            values.extend_from_slice(&channel.values);
            labels.push(channel.label.clone());
        }
    }
    let no_position = |kind| ParseError {
        line: 1,
        col: 1,
        kind,
        text: String::new(),
    };
    let Some(width) = width else {
        return Err(no_position(ParseErrorKind::NoValues));
    };
    let rows = labels.len();
    let values = Array2::from_shape_vec((rows, width), values)
        .map_err(|_| no_position(MatrixError::Empty { rows, cols: width }.into()))?;
    let matrix = Matrix::with_labels(values, labels).map_err(|e| no_position(e.into()))?;
    Ok(Parsed { matrix, notes })
}

/// The error for the value limit, at the first value over it (value `over` of the channel
/// starting at byte `start`).
fn too_many(
    line: &str,
    row: usize,
    start: usize,
    over: usize,
    max: usize,
    options: LineOptions,
) -> ParseError {
    let kind = ParseErrorKind::TooManyValues { max };
    let e = match line::nth_value(line, start, options, over) {
        Some((byte, token)) => LineError::new(byte, kind, token),
        None => LineError::new(start, kind, ""),
    };
    at_line(e, row, line)
}

/// Resolves a line's error to a line and column.
fn at_line(e: LineError, line: usize, src: &str) -> ParseError {
    ParseError {
        line,
        col: column(src, e.byte),
        kind: e.kind,
        text: e.text,
    }
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
