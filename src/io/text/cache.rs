//! The parse of the editor's lines, kept between analyses: a line that did not change since
//! the last parse (the same shared line, by identity) is not parsed again, and text that did
//! not change at all gives the last result back at once. A key press on a 5 MB paste of
//! many lines then parses one line.

use std::collections::HashMap;
use std::sync::Arc;

use super::line::{LineError, LineOptions, LineParse, parse_line};
use super::{ParseError, Parsed, brackets, parse_text_with_notes};

/// A line's parse, and the options it was parsed with.
type Entry = (Arc<String>, LineOptions, Result<Arc<LineParse>, LineError>);

/// The last text parsed (its lines, by identity), the limit, and the result.
type Last = (Vec<Arc<String>>, usize, Result<Arc<Parsed>, ParseError>);

/// Parses of lines, by the identity of the shared line (see the module documentation).
#[derive(Debug, Default)]
pub struct LineCache {
    /// Keyed by the line's address; the entry holds the line, so the address stays its own.
    lines: HashMap<usize, Entry>,
    /// The last text parsed, and what it gave.
    last: Option<Last>,
}

fn same_lines(a: &[Arc<String>], b: &[Arc<String>]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| Arc::ptr_eq(x, y))
}

impl LineCache {
    /// Parses `lines` (the text's lines, without their `\n`) as [`super::parse_text_with_notes`]
    /// would parse them joined, reusing what it can.
    pub fn parse(
        &mut self,
        lines: &[Arc<String>],
        max_values: usize,
    ) -> Result<Arc<Parsed>, ParseError> {
        if let Some((last, max, result)) = &self.last
            && *max == max_values
            && same_lines(last, lines)
        {
            return result.clone();
        }
        let result = if starts_bracketed(lines) {
            self.lines.clear();
            let text = lines
                .iter()
                .map(|l| l.as_str())
                .collect::<Vec<_>>()
                .join("\n");
            parse_text_with_notes(&text, max_values).map(Arc::new)
        } else {
            self.parse_lines(lines, max_values).map(Arc::new)
        };
        self.last = Some((lines.to_vec(), max_values, result.clone()));
        result
    }

    fn parse_lines(
        &mut self,
        lines: &[Arc<String>],
        max_values: usize,
    ) -> Result<Parsed, ParseError> {
        let mut kept: HashMap<usize, Entry> = HashMap::with_capacity(lines.len());
        let old = &mut self.lines;
        let texts: Vec<&str> = lines
            .iter()
            .enumerate()
            .map(|(i, l)| {
                if i == 0 {
                    l.strip_prefix('\u{feff}').unwrap_or(l)
                } else {
                    l.as_str()
                }
            })
            .collect();
        let result = super::assemble(&texts, max_values, |row, options| {
            let line = &lines[row];
            let key = Arc::as_ptr(line) as usize;
            let entry = match old.remove(&key).or_else(|| kept.remove(&key)) {
                Some(entry) if entry.1 == options && texts[row].len() == line.len() => entry,
                _ => (
                    Arc::clone(line),
                    options,
                    parse_line(texts[row], options).map(Arc::new),
                ),
            };
            let parse = entry.2.clone();
            kept.insert(key, entry);
            parse
        });
        self.lines = kept;
        result
    }
}

/// Whether the text's first content line starts a bracketed array.
fn starts_bracketed(lines: &[Arc<String>]) -> bool {
    lines
        .iter()
        .map(|l| l.trim_start_matches('\u{feff}').trim_start())
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .is_some_and(brackets::looks_bracketed)
}
