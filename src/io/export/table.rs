//! Plain-text table for a terminal: section titles, then aligned columns indented two
//! spaces. No colour; meaning is carried by words (`COLLAPSED`) and `*` marks.

use std::io::{self, Write};

use crate::io::export::doc::{Align, Doc, Grid, Part};

/// Space between columns.
const GAP: &str = "  ";
/// Indent of everything inside a section.
const INDENT: &str = "  ";

/// Writes `doc` as plain text.
pub(super) fn write(out: &mut impl Write, doc: &Doc) -> io::Result<()> {
    writeln!(out, "{}", doc.header)?;
    for section in &doc.sections {
        writeln!(out)?;
        writeln!(out, "{}", section.title)?;
        for part in &section.parts {
            match part {
                Part::Text(text) => writeln!(out, "{INDENT}{text}")?,
                Part::Formula(lines) => {
                    for line in lines {
                        writeln!(out, "{INDENT}{line}")?;
                    }
                }
                Part::Grid(grid) => write_grid(out, grid)?,
                // Charts are for the HTML and PDF formats, which build their own.
                Part::Figure(_) => {}
            }
        }
    }
    Ok(())
}

pub(super) fn write_grid(out: &mut impl Write, grid: &Grid) -> io::Result<()> {
    let fit = |i: usize, cell: &str| match grid.columns[i].max_width {
        Some(w) if width(cell) > w => {
            let mut s: String = cell.chars().take(w.saturating_sub(1)).collect();
            s.push('…');
            s
        }
        _ => cell.to_string(),
    };
    let header: Vec<String> = grid.columns.iter().map(|c| c.name.clone()).collect();
    let rows: Vec<Vec<String>> = grid
        .rows
        .iter()
        .map(|row| {
            row.iter()
                .enumerate()
                .map(|(i, cell)| fit(i, cell))
                .collect()
        })
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| width(h)).collect();
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(width(cell));
        }
    }
    for row in std::iter::once(&header).chain(&rows) {
        let mut line = String::from(INDENT);
        for (i, cell) in row.iter().enumerate() {
            if i > 0 {
                line.push_str(GAP);
            }
            let pad = " ".repeat(widths[i] - width(cell));
            match grid.columns[i].align {
                Align::Left => {
                    line.push_str(cell);
                    line.push_str(&pad);
                }
                Align::Right => {
                    line.push_str(&pad);
                    line.push_str(cell);
                }
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// Display width, counting characters (cells are ASCII apart from `…`).
fn width(s: &str) -> usize {
    s.chars().count()
}
