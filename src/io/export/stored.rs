//! A quantized GGUF tensor as stored ([`Stored`]), and a GGUF file's metadata, in every
//! format.
//!
//! | format     | stored tensor                                                        |
//! |------------|----------------------------------------------------------------------|
//! | `table`    | summary, layout, scales, rows by levels used, the first block decoded |
//! | `markdown` | the same as GitHub tables                                            |
//! | `json`     | `{"tensor": Stored, "first_block": ..}`, every row's counts          |
//! | `csv`      | one line per row: `row,used,levels,collapsed_blocks,blocks,collapsed` |

use std::io::{self, Write};

use serde::Serialize;

use super::Format;
use super::csv::field;
use super::markdown::escape;
use super::num::{count, sig};
use crate::core::stored::{RowOrder, Stored};
use crate::io::gguf::{MetadataJson, Value};

/// Rows listed as using the fewest levels.
const FEWEST_SHOWN: usize = 8;

/// Values of the first block shown.
const BLOCK_SHOWN: usize = 32;

/// The first block of a row, decoded: for showing what is stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Block {
    /// The row.
    pub row: usize,
    /// Each sub-block's `(step, min)`: value = grid\[code\] x step - min.
    pub sub_blocks: Vec<(f32, f32)>,
    /// The stored codes.
    pub codes: Vec<u8>,
    /// The dequantized values.
    pub values: Vec<f32>,
}

#[derive(Serialize)]
struct Json<'a> {
    file: &'a str,
    note: &'static str,
    tensor: &'a Stored,
    first_block: &'a Block,
}

/// What the stored view can and cannot say.
pub const NOTE: &str = "stored codes as the file holds them: the original weights are not in the file, so no error against them is shown";

/// Writes the stored view of a tensor of `file` in `format`.
pub fn write_stored(
    out: &mut impl Write,
    file: &str,
    s: &Stored,
    block: &Block,
    format: Format,
) -> io::Result<()> {
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(
                &mut *out,
                &Json {
                    file,
                    note: NOTE,
                    tensor: s,
                    first_block: block,
                },
            )?;
            writeln!(out)
        }
        Format::Csv => {
            writeln!(out, "row,used,levels,collapsed_blocks,blocks,collapsed")?;
            let blocks = s.blocks_per_row();
            for (i, r) in s.rows.iter().enumerate() {
                writeln!(
                    out,
                    "{i},{},{},{},{blocks},{}",
                    r.used, s.levels, r.collapsed_blocks, r.collapsed
                )?;
            }
            Ok(())
        }
        Format::Table | Format::Markdown => {
            write_doc(out, file, s, block, format == Format::Markdown)
        }
    }
}

/// The table and Markdown forms: the same lines, tables drawn two ways.
fn write_doc(
    out: &mut impl Write,
    file: &str,
    s: &Stored,
    block: &Block,
    md: bool,
) -> io::Result<()> {
    let name = if md { escape(&s.name) } else { s.name.clone() };
    if md {
        writeln!(out, "# {name} ({}) as stored\n", s.ggml_type)?;
    } else {
        writeln!(out, "{name} ({}) as stored in {file}", s.ggml_type)?;
    }
    writeln!(
        out,
        "{} of {} values, in blocks of {}; {}",
        count(s.shape.0, "row"),
        s.shape.1,
        s.block_len,
        NOTE
    )?;
    heading(out, md, "Layout")?;
    let parts: Vec<Vec<String>> = s
        .layout
        .iter()
        .map(|p| {
            vec![
                p.name.to_owned(),
                p.bits.to_string(),
                sig(p.bits_per_weight, 4),
            ]
        })
        .collect();
    table(
        out,
        md,
        &["part", "bits per block", "bits per weight"],
        &parts,
    )?;
    writeln!(out, "{} bits per weight in all", sig(s.bits_per_weight, 6))?;
    heading(out, md, "Codes")?;
    writeln!(
        out,
        "levels used per row: mean {} of {}, fewest {}",
        sig(s.mean_used(), 4),
        s.levels,
        s.min_used()
    )?;
    writeln!(
        out,
        "collapsed as stored (one value, or every scale 0): {} of {} rows, {} of {} blocks",
        s.collapsed_rows, s.shape.0, s.collapsed_blocks, s.blocks
    )?;
    let by_use = s.row_order(RowOrder {
        fewest_first: true,
        collapsed_only: false,
    });
    let fewest: Vec<Vec<String>> = by_use
        .iter()
        .take(FEWEST_SHOWN)
        .map(|&i| {
            let r = s.rows[i];
            vec![
                i.to_string(),
                r.used.to_string(),
                r.collapsed_blocks.to_string(),
                if r.collapsed { "collapsed" } else { "" }.to_owned(),
            ]
        })
        .collect();
    heading(out, md, "Rows using the fewest levels")?;
    table(
        out,
        md,
        &["row", "levels used", "collapsed blocks", ""],
        &fewest,
    )?;
    write_scales(out, s, md)?;
    write_block(out, block, md)
}

/// A section title: a `##` heading, or a blank line and the title.
fn heading(out: &mut dyn Write, md: bool, title: &str) -> io::Result<()> {
    if md {
        writeln!(out, "\n## {title}\n")
    } else {
        writeln!(out, "\n{title}")
    }
}

/// The distribution of the effective scales.
fn write_scales(out: &mut dyn Write, s: &Stored, md: bool) -> io::Result<()> {
    heading(out, md, "Scales")?;
    let sc = &s.scales;
    writeln!(
        out,
        "{} sub-block scales: {} zero, {} negative",
        sc.count, sc.zero, sc.negative
    )?;
    if let Some([min, p1, p50, p99, max]) = sc.quantiles {
        writeln!(
            out,
            "|scale| of the others: min {}, 1% {}, median {}, 99% {}, max {}",
            sig(f64::from(min), 4),
            sig(f64::from(p1), 4),
            sig(f64::from(p50), 4),
            sig(f64::from(p99), 4),
            sig(f64::from(max), 4)
        )?;
        let hist: Vec<Vec<String>> = sc
            .log2_histogram
            .iter()
            .map(|(e, n)| vec![format!("2^{e}"), n.to_string()])
            .collect();
        table(out, md, &["|scale| from", "sub-blocks"], &hist)?;
    }
    Ok(())
}

/// The first block of a row: its scales, codes and values.
fn write_block(out: &mut dyn Write, block: &Block, md: bool) -> io::Result<()> {
    heading(out, md, &format!("Row {}, first block", block.row))?;
    let steps: Vec<String> = block
        .sub_blocks
        .iter()
        .map(|(step, min)| {
            if *min == 0.0 {
                sig(f64::from(*step), 5)
            } else {
                format!("{} - {}", sig(f64::from(*step), 5), sig(f64::from(*min), 5))
            }
        })
        .collect();
    writeln!(
        out,
        "value = grid[code] x step - min; sub-blocks: {}",
        steps.join(", ")
    )?;
    let codes: Vec<String> = block
        .codes
        .iter()
        .take(BLOCK_SHOWN)
        .map(ToString::to_string)
        .collect();
    writeln!(out, "codes:  {}", codes.join(" "))?;
    let values: Vec<String> = block
        .values
        .iter()
        .take(BLOCK_SHOWN)
        .map(|v| sig(f64::from(*v), 4))
        .collect();
    writeln!(out, "values: {}", values.join(" "))
}

/// A small table: aligned columns, or a GitHub table.
fn table(out: &mut dyn Write, md: bool, head: &[&str], rows: &[Vec<String>]) -> io::Result<()> {
    if md {
        writeln!(out, "| {} |", head.join(" | "))?;
        writeln!(out, "|{}", "---|".repeat(head.len()))?;
        for r in rows {
            let cells: Vec<String> = r.iter().map(|c| escape(c)).collect();
            writeln!(out, "| {} |", cells.join(" | "))?;
        }
        return Ok(());
    }
    let widths: Vec<usize> = (0..head.len())
        .map(|i| {
            rows.iter()
                .map(|r| r.get(i).map_or(0, String::len))
                .chain([head[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<&str>| {
        let parts: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:>w$}"))
            .collect();
        format!("  {}", parts.join("  ").trim_end())
    };
    writeln!(out, "{}", line(head.to_vec()))?;
    for r in rows {
        writeln!(out, "{}", line(r.iter().map(String::as_str).collect()))?;
    }
    Ok(())
}

/// Writes a GGUF file's metadata in `format`: one line per key with its type and value,
/// long strings and arrays shortened to about `width` characters.
pub fn write_metadata(
    out: &mut impl Write,
    metadata: &[(String, Value)],
    format: Format,
    width: usize,
) -> io::Result<()> {
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, &MetadataJson(metadata))?;
            writeln!(out)
        }
        Format::Csv => {
            writeln!(out, "key,type,value")?;
            for (k, v) in metadata {
                writeln!(
                    out,
                    "{},{},{}",
                    field(k),
                    v.type_name(),
                    field(&v.short(width))
                )?;
            }
            Ok(())
        }
        Format::Markdown => {
            writeln!(out, "| key | type | value |\n|---|---|---|")?;
            for (k, v) in metadata {
                writeln!(
                    out,
                    "| {} | {} | {} |",
                    escape(k),
                    escape(&v.type_name()),
                    escape(&v.short(width))
                )?;
            }
            Ok(())
        }
        Format::Table => {
            let key_w = metadata.iter().map(|(k, _)| k.len()).max().unwrap_or(3);
            let ty_w = metadata
                .iter()
                .map(|(_, v)| v.type_name().len())
                .max()
                .unwrap_or(4);
            for (k, v) in metadata {
                writeln!(
                    out,
                    "{k:key_w$}  {:ty_w$}  {}",
                    v.type_name(),
                    v.short(width)
                )?;
            }
            writeln!(out, "{}", count(metadata.len(), "key"))
        }
    }
}
