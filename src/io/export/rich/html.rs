//! One self-contained HTML page: inline CSS and SVG, no script, and a Content Security
//! Policy that forbids loading anything, so the page reads the same offline, printed or in a
//! narrow window (wide tables scroll inside their box; charts scale to the width).

use std::io::{self, Write};

use crate::io::export::doc::{Align, Doc, Figure, Grid, Part};
use crate::io::export::svg::escape;

/// A figure's table is shown openly up to this many rows, and folded into `<details>`
/// beyond (its caption still gives the key numbers).
const OPEN_ROWS: usize = 12;

const CSS: &str = "\
:root{color-scheme:light;--ink:#1a1a1a;--faint:#d8d8d8;--alert:#b3261e}
body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:var(--ink);margin:0 auto;padding:1rem;max-width:62rem}
h1{font-size:1.5em;margin:.2rem 0}
h2{font-size:1.2em;border-bottom:1px solid var(--faint);margin-top:1.8rem;padding-bottom:.2rem}
p.header{font-family:'DejaVu Sans Mono',monospace;font-size:.95em;overflow-wrap:anywhere}
nav ul{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.3rem 1rem}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:.9em;margin:.4rem 0}
th,td{padding:.1rem .5rem;border-bottom:1px solid var(--faint);white-space:nowrap;text-align:left}
td.r,th.r{text-align:right;font-variant-numeric:tabular-nums}
td.alert{color:var(--alert);font-weight:bold}
pre{font:.9em/1.3 'DejaVu Sans Mono',monospace;overflow-x:auto;background:#f6f6f6;padding:.4rem}
figure{margin:1rem 0;break-inside:avoid}
figure svg{display:block;width:100%;max-width:40rem;height:auto}
figcaption{font-size:.9em;margin-top:.3rem}
@media print{body{font-size:9pt;max-width:none;padding:0}nav{display:none}.scroll{overflow:visible}
table,pre{break-inside:auto}tr{break-inside:avoid}h2{break-after:avoid}}
@page{margin:14mm}
";

/// Writes `doc` as an HTML page.
pub(super) fn write(out: &mut impl Write, doc: &Doc) -> io::Result<()> {
    writeln!(out, "<!DOCTYPE html>")?;
    writeln!(out, r#"<html lang="en"><head><meta charset="utf-8">"#)?;
    writeln!(
        out,
        r#"<meta name="viewport" content="width=device-width, initial-scale=1">"#
    )?;
    writeln!(
        out,
        r#"<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">"#
    )?;
    writeln!(out, "<title>{}</title>", escape(&doc.header))?;
    writeln!(out, "<style>\n{CSS}</style>\n</head>\n<body>\n<main>")?;
    writeln!(out, "<h1>quantscope report</h1>")?;
    writeln!(out, r#"<p class="header">{}</p>"#, escape(&doc.header))?;
    write!(out, r#"<nav aria-label="Sections"><ul>"#)?;
    for section in &doc.sections {
        write!(
            out,
            r##"<li><a href="#{}">{}</a></li>"##,
            anchor(section.title),
            escape(section.title)
        )?;
    }
    writeln!(out, "</ul></nav>")?;
    let mut figures = 0;
    for section in &doc.sections {
        writeln!(
            out,
            r#"<section id="{}"><h2>{}</h2>"#,
            anchor(section.title),
            escape(section.title)
        )?;
        for part in &section.parts {
            match part {
                Part::Text(text) => writeln!(out, "<p>{}</p>", escape(text))?,
                Part::Formula(lines) => {
                    let lines: Vec<String> = lines.iter().map(|l| escape(l)).collect();
                    writeln!(out, "<pre>{}</pre>", lines.join("\n"))?;
                }
                Part::Grid(grid) => write_grid(out, grid)?,
                Part::Figure(figure) => {
                    figures += 1;
                    write_figure(out, figure, figures)?;
                }
            }
        }
        writeln!(out, "</section>")?;
    }
    writeln!(out, "</main>\n</body>\n</html>")
}

/// `Worked arithmetic` -> `worked-arithmetic`.
fn anchor(title: &str) -> String {
    title
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

fn write_figure(out: &mut impl Write, figure: &Figure, n: usize) -> io::Result<()> {
    writeln!(out, r#"<figure id="figure-{n}">"#)?;
    writeln!(out, "{}", figure.svg.finish(&figure.title))?;
    writeln!(
        out,
        "<figcaption><b>Figure {n}. {}.</b> {}</figcaption>",
        escape(&figure.title),
        escape(&figure.caption)
    )?;
    if let Some(table) = &figure.table {
        if table.rows.len() > OPEN_ROWS {
            writeln!(
                out,
                "<details><summary>The numbers ({} rows)</summary>",
                table.rows.len()
            )?;
            write_grid(out, table)?;
            writeln!(out, "</details>")?;
        } else {
            write_grid(out, table)?;
        }
    }
    writeln!(out, "</figure>")
}

fn write_grid(out: &mut impl Write, grid: &Grid) -> io::Result<()> {
    let class = |a: Align| match a {
        Align::Left => "",
        Align::Right => r#" class="r""#,
    };
    write!(out, r#"<div class="scroll"><table><thead><tr>"#)?;
    for c in &grid.columns {
        write!(out, "<th{}>{}</th>", class(c.align), escape(&c.name))?;
    }
    writeln!(out, "</tr></thead><tbody>")?;
    for row in &grid.rows {
        write!(out, "<tr>")?;
        for (cell, c) in row.iter().zip(&grid.columns) {
            let cell = cell.split_whitespace().collect::<Vec<_>>().join(" ");
            if cell == "COLLAPSED" {
                write!(out, r#"<td class="alert">{cell}</td>"#)?;
            } else {
                write!(out, "<td{}>{}</td>", class(c.align), escape(&cell))?;
            }
        }
        writeln!(out, "</tr>")?;
    }
    writeln!(out, "</tbody></table></div>")
}
