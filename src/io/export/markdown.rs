//! GitHub-flavoured Markdown: the table format's content as one `##` section each, with
//! pipe tables, for pasting into an issue. Text is escaped so labels cannot break a table
//! or turn into emphasis and links.

use std::io::{self, Write};

use crate::io::export::doc::{Align, Doc, Grid, Part};

/// Writes `doc` as Markdown.
pub(super) fn write(out: &mut impl Write, doc: &Doc) -> io::Result<()> {
    writeln!(out, "{}", escape(&doc.header))?;
    for section in &doc.sections {
        writeln!(out)?;
        writeln!(out, "## {}", section.title)?;
        for part in &section.parts {
            writeln!(out)?;
            match part {
                Part::Text(text) => writeln!(out, "{}", escape(text))?,
                Part::Formula(lines) => writeln!(out, "```text\n{}\n```", lines.join("\n"))?,
                Part::Grid(grid) => write_grid(out, grid)?,
                // Charts are for the HTML and PDF formats, which build their own.
                Part::Figure(_) => {}
            }
        }
    }
    Ok(())
}

fn write_grid(out: &mut impl Write, grid: &Grid) -> io::Result<()> {
    let header: Vec<String> = grid.columns.iter().map(|c| escape(&c.name)).collect();
    writeln!(out, "| {} |", header.join(" | "))?;
    let rule: Vec<&str> = grid
        .columns
        .iter()
        .map(|c| match c.align {
            Align::Left => "---",
            Align::Right => "--:",
        })
        .collect();
    writeln!(out, "|{}|", rule.join("|"))?;
    for row in &grid.rows {
        // Padding that lines up the plain-text table means nothing in Markdown.
        let cells: Vec<String> = row
            .iter()
            .map(|c| escape(&c.split_whitespace().collect::<Vec<_>>().join(" ")))
            .collect();
        writeln!(out, "| {} |", cells.join(" | "))?;
    }
    Ok(())
}

/// Backslash-escapes the punctuation that could end a table cell (`|`), start emphasis,
/// code, links or HTML, and puts control characters out as spaces.
pub(super) fn escape(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '\\' | '|' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '~' => {
                s.push('\\');
                s.push(ch);
            }
            c if c.is_control() => s.push(' '),
            c => s.push(c),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escapes_what_breaks_a_table_or_formats() {
        assert_eq!(escape("a|b"), r"a\|b");
        assert_eq!(escape(r"x\|y"), r"x\\\|y");
        assert_eq!(escape("*w*\n_[l](u)"), r"\*w\* \_\[l\](u)");
        assert_eq!(escape("plain 1.5e-5"), "plain 1.5e-5");
    }
}
