//! `--ascii` output: every character outside ASCII spelled in ASCII, for terminals, fonts and
//! pipelines that cannot show more. The symbols the exporters use have readable spellings
//! (`→` is `->`, `x̂` is `x^`, `×` is `x`); any other character, such as a letter of a
//! label, is written as a `\u{…}` escape, so nothing is lost.

use std::borrow::Cow;
use std::fmt::Write as _;

/// The ASCII spelling of the symbols the exporters and the help use.
fn spelling(c: char) -> Option<&'static str> {
    Some(match c {
        '→' => "->",
        '←' => "<-",
        '×' | '✗' => "x",
        '·' | '●' => "*",
        '—' => "--",
        '–' | '−' => "-",
        '…' => "...",
        '≤' => "<=",
        '≥' => ">=",
        '≈' => "~",
        '±' => "+/-",
        '✓' => "v",
        '█' => "#",
        '▶' => ">",
        '‖' => "|",
        '²' => "^2",
        '\u{302}' => "^",
        '\u{a0}' => " ",
        _ => return None,
    })
}

/// `text` with every non-ASCII character spelled in ASCII (see the module documentation).
#[must_use]
pub fn to_ascii(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else if let Some(s) = spelling(c) {
            out.push_str(s);
        } else {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::to_ascii;

    #[test]
    fn symbols_are_spelled_and_other_characters_escaped() {
        assert_eq!(
            to_ascii("0.05 / 0.4 = 0.1 → round → 0 → x̂ = 0"),
            "0.05 / 0.4 = 0.1 -> round -> 0 -> x^ = 0"
        );
        assert_eq!(to_ascii("8 × 4 · é"), "8 x 4 * \\u{e9}");
        assert!(matches!(to_ascii("plain"), std::borrow::Cow::Borrowed(_)));
    }
}
