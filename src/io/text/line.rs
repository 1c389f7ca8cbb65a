//! One line of the channel text: its `;`-separated channels, each an optional label and
//! values. A line is parsed on its own, so that the editor's lines can be parsed once and
//! kept while other lines change.

use super::{Note, NoteKind, ParseErrorKind};

/// An error inside one line: a byte offset into that line, resolved to a column later.
#[derive(Debug, Clone, PartialEq)]
pub struct LineError {
    /// Byte offset into the line.
    pub byte: usize,
    /// What is wrong.
    pub kind: ParseErrorKind,
    /// The offending token.
    pub text: String,
}

impl LineError {
    pub(super) fn new(byte: usize, kind: ParseErrorKind, text: &str) -> Self {
        Self {
            byte,
            kind,
            text: text.to_owned(),
        }
    }
}

/// One channel found on a line.
#[derive(Debug, Clone, PartialEq)]
pub struct Channel {
    /// Its label, if it has one.
    pub label: Option<String>,
    /// Its values.
    pub values: Vec<f32>,
    /// Byte offset of the channel's first character in its line.
    pub start: usize,
}

/// A parsed line: its channels and the notes on its values (byte offsets into the line).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LineParse {
    /// The channels, in order (none for a blank or comment line).
    pub channels: Vec<Channel>,
    /// Values that lost precision or underflowed, with their byte offsets.
    pub notes: Vec<(usize, NoteKind)>,
}

/// How a line's first cell is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LineOptions {
    /// A first comma- or tab-separated cell that is not a number is the channel's label
    /// (as in a CSV file with an index column, once a header row was seen).
    pub first_cell_labels: bool,
}

/// Parses one line (without its `\n`).
pub fn parse_line(line: &str, options: LineOptions) -> Result<LineParse, LineError> {
    let content = line.find('#').map_or(line, |hash| &line[..hash]);
    let mut out = LineParse::default();
    let mut start = 0;
    for segment in content.split(';') {
        segment_into(&mut out, segment, start, options)?;
        start += segment.len() + 1;
    }
    Ok(out)
}

fn is_label(label: &str) -> bool {
    label
        .chars()
        .all(|c| c.is_alphanumeric() || " _.-[]".contains(c))
}

/// Reads one `;`-separated segment that starts at byte `base` of its line.
fn segment_into(
    out: &mut LineParse,
    segment: &str,
    base: usize,
    options: LineOptions,
) -> Result<(), LineError> {
    let Some(first) = segment.find(|c: char| !c.is_whitespace()) else {
        return Ok(());
    };
    let channel_start = base + first;
    let (label, values, values_base) = split_label(segment, base, options)?;
    let mut values_out = Vec::new();
    values_of(&mut values_out, &mut out.notes, values, values_base)?;
    if values_out.is_empty() {
        let text = label.unwrap_or_default();
        return Err(LineError::new(
            channel_start,
            ParseErrorKind::LabelWithoutValues,
            text,
        ));
    }
    out.channels.push(Channel {
        label: label.map(str::to_owned),
        values: values_out,
        start: channel_start,
    });
    Ok(())
}

/// A segment's label (if any), its values' text and where that text starts.
fn split_label(
    segment: &str,
    base: usize,
    options: LineOptions,
) -> Result<(Option<&str>, &str, usize), LineError> {
    let first = segment.find(|c: char| !c.is_whitespace()).unwrap_or(0);
    match segment.find(':') {
        Some(colon) => {
            let label = segment[..colon].trim();
            if label.is_empty() {
                return Err(LineError::new(base + colon, ParseErrorKind::EmptyLabel, ""));
            }
            if !is_label(label) {
                return Err(LineError::new(
                    base + first,
                    ParseErrorKind::InvalidLabel,
                    label,
                ));
            }
            Ok((Some(label), &segment[colon + 1..], base + colon + 1))
        }
        None => Ok(match first_cell_label(segment, options) {
            Some((label, rest)) => (Some(label), &segment[rest..], base + rest),
            None => (None, segment, base),
        }),
    }
}

/// The byte offset and text of value `n` (0-based) of the channel starting at byte `start`
/// of `line`, read as [`parse_line`] reads it.
#[must_use]
pub fn nth_value(
    line: &str,
    start: usize,
    options: LineOptions,
    n: usize,
) -> Option<(usize, &str)> {
    let content = line.find('#').map_or(line, |hash| &line[..hash]);
    let segment_start = content[..start.min(content.len())]
        .rfind(';')
        .map_or(0, |i| i + 1);
    let segment_end = content[segment_start..]
        .find(';')
        .map_or(content.len(), |i| segment_start + i);
    let segment = &content[segment_start..segment_end];
    let (_, values, base) = split_label(segment, segment_start, options).ok()?;
    tokens(values)
        .filter_map(|t| match t {
            Token::Value(i, text) => Some((base + i, text)),
            Token::Comma(_) => None,
        })
        .nth(n)
}

/// With [`LineOptions::first_cell_labels`], the label in a first cell that is not a number
/// (`name,1,2` or `name\t1\t2`), and where the values start.
fn first_cell_label(segment: &str, options: LineOptions) -> Option<(&str, usize)> {
    if !options.first_cell_labels {
        return None;
    }
    let end = segment.find([',', '\t'])?;
    let cell = segment[..end].trim();
    if cell.is_empty() || parse_value(cell).is_ok() || !is_label(cell) {
        return None;
    }
    let word = cell.trim_start_matches(['+', '-']).to_ascii_lowercase();
    if matches!(word.as_str(), "nan" | "inf" | "infinity") {
        return None;
    }
    Some((cell, end + 1))
}

/// A piece of a channel's values.
#[derive(Debug, Clone, Copy)]
enum Token<'a> {
    /// A comma at this byte offset.
    Comma(usize),
    /// A value's text at this byte offset.
    Value(usize, &'a str),
}

/// The commas and value tokens of `text` (whitespace, ASCII or not, separates).
fn tokens(text: &str) -> impl Iterator<Item = Token<'_>> {
    let mut i = 0;
    std::iter::from_fn(move || {
        let bytes = text.as_bytes();
        while i < bytes.len() {
            let b = bytes[i];
            if b == b',' {
                i += 1;
                return Some(Token::Comma(i - 1));
            }
            if b.is_ascii_whitespace() {
                i += 1;
                continue;
            }
            if !b.is_ascii() {
                let c = text[i..].chars().next().unwrap_or(' ');
                if c.is_whitespace() {
                    i += c.len_utf8();
                    continue;
                }
            }
            let start = i;
            i = token_end(text, i);
            return Some(Token::Value(start, &text[start..i]));
        }
        None
    })
}

/// Reads the comma/whitespace-separated values of a segment starting at byte `base`.
fn values_of(
    values: &mut Vec<f32>,
    notes: &mut Vec<(usize, NoteKind)>,
    text: &str,
    base: usize,
) -> Result<(), LineError> {
    let mut seen_value = false;
    let mut pending_comma = false;
    for token in tokens(text) {
        match token {
            Token::Comma(i) => {
                if pending_comma || !seen_value {
                    return Err(LineError::new(base + i, ParseErrorKind::EmptyValue, ""));
                }
                pending_comma = true;
            }
            Token::Value(i, token) => {
                let value =
                    parse_value(token).map_err(|kind| LineError::new(base + i, kind, token))?;
                if let Some(note) = precision_note(token, value) {
                    notes.push((base + i, note));
                }
                values.push(value);
                seen_value = true;
                pending_comma = false;
            }
        }
    }
    Ok(())
}

/// The end of the token starting at `start`: the next comma or whitespace.
fn token_end(text: &str, start: usize) -> usize {
    let bytes = text.as_bytes();
    let mut j = start;
    while j < bytes.len() {
        let b = bytes[j];
        if b == b',' || b.is_ascii_whitespace() {
            return j;
        }
        if b.is_ascii() {
            j += 1;
        } else {
            let c = text[j..].chars().next().unwrap_or(' ');
            if c.is_whitespace() {
                return j;
            }
            j += c.len_utf8();
        }
    }
    bytes.len()
}

/// What to say about a value that `f32` cannot hold as written: it reads as zero, or as a
/// subnormal with fewer significant bits.
pub(super) fn precision_note(token: &str, value: f32) -> Option<NoteKind> {
    if value == 0.0 {
        let mantissa = token.split(['e', 'E']).next().unwrap_or("");
        mantissa
            .bytes()
            .any(|b| (b'1'..=b'9').contains(&b))
            .then(|| NoteKind::Underflow(shorten(token)))
    } else if value.is_subnormal() {
        Some(NoteKind::Subnormal(shorten(token)))
    } else {
        None
    }
}

fn shorten(token: &str) -> String {
    match token.char_indices().nth(super::SHOWN_TOKEN_CHARS) {
        Some((cut, _)) => format!("{}…", &token[..cut]),
        None => token.to_owned(),
    }
}

/// Parses one value token.
pub(super) fn parse_value(token: &str) -> Result<f32, ParseErrorKind> {
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

/// The header row of a CSV or TSV paste: a first line of comma- or tab-separated cells that
/// are all names, or that starts with an empty cell followed by names or numbers (the
/// header of a spreadsheet's or pandas' index column). Returns its names. A row that mixes
/// numbers and words is not a header: its words are reported as errors.
pub(super) fn header_names(line: &str) -> Option<Vec<String>> {
    let content = line.find('#').map_or(line, |hash| &line[..hash]);
    if content.contains(':') || content.contains(';') {
        return None;
    }
    let delimiter = if content.contains('\t') { '\t' } else { ',' };
    if !content.contains(delimiter) {
        return None;
    }
    let cells: Vec<&str> = content.split(delimiter).map(str::trim).collect();
    // A name: not a number, not a spelling of NaN or infinity (those are values refused
    // later, not names).
    let is_name = |c: &str| {
        !c.is_empty() && matches!(parse_value(c), Err(ParseErrorKind::NotANumber)) && is_label(c)
    };
    let names = cells.iter().all(|c| is_name(c));
    let index_column = cells.first().is_some_and(|c| c.is_empty())
        && cells.len() > 1
        && cells[1..].iter().all(|c| !c.is_empty());
    (names || index_column).then(|| {
        cells
            .iter()
            .filter(|c| !c.is_empty())
            .map(|c| (*c).to_owned())
            .collect()
    })
}

/// A note found in a line, located.
pub(super) fn locate(line_number: usize, line: &str, byte: usize, kind: NoteKind) -> Note {
    Note {
        line: line_number,
        col: super::column(line, byte),
        kind,
    }
}
