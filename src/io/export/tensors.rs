//! The tensor list of a checkpoint (`report --list-tensors`) in every format.
//!
//! | format     | contents                                                            |
//! |------------|---------------------------------------------------------------------|
//! | `table`    | aligned `name dtype shape bytes [shard]`, then `N tensors, B bytes` |
//! | `markdown` | the same as a GitHub table (every cell escaped), then the total line |
//! | `json`     | `{"tensors": [{"name", "dtype", "shape", "bytes", "loadable", "kind", "shard"?}], "total_bytes"}` |
//! | `csv`      | `name,dtype,shape,bytes,loadable,kind[,shard]`: the shape as `384x1536`, no total |
//!
//! `loadable` says whether `--tensor` takes it: a floating tensor (F16, BF16, F32, F64) or a
//! GGUF type quantscope decodes, with at least one axis (as the explorer's tensor picker
//! lists them); `kind` says which (`float`, `quantized`, `other`). The shard column appears
//! for a sharded checkpoint only. Shapes are rows first (GGUF's dimensions reversed).

use std::io::{self, Write};

use serde::Serialize;

use crate::io::checkpoint::{Entry, Kind};
use crate::io::export::Format;
use crate::io::export::csv::field;
use crate::io::export::markdown::escape;
use crate::io::safetensors::format_shape;

#[derive(Serialize)]
struct Row<'a> {
    name: &'a str,
    dtype: &'a str,
    shape: &'a [usize],
    bytes: u64,
    loadable: bool,
    kind: Kind,
    #[serde(skip_serializing_if = "Option::is_none")]
    shard: Option<&'a str>,
}

#[derive(Serialize)]
struct List<'a> {
    tensors: Vec<Row<'a>>,
    total_bytes: u64,
}

/// Writes `tensors` in `format`.
pub fn write_tensor_list(
    out: &mut impl Write,
    tensors: &[Entry],
    format: Format,
) -> io::Result<()> {
    let total: u64 = tensors.iter().map(|t| t.bytes).sum();
    let sharded = tensors.iter().any(|t| t.shard.is_some());
    let shard = |t: &Entry| t.shard.clone().unwrap_or_default();
    let total_line = format!(
        "{}, {total} bytes",
        super::num::count(tensors.len(), "tensor")
    );
    match format {
        Format::Table => write_table(out, tensors, sharded, &total_line),
        Format::Json => {
            let list = List {
                tensors: tensors
                    .iter()
                    .map(|t| Row {
                        name: &t.name,
                        dtype: &t.dtype,
                        shape: &t.shape,
                        bytes: t.bytes,
                        loadable: t.not_loadable().is_none(),
                        kind: t.kind,
                        shard: t.shard.as_deref(),
                    })
                    .collect(),
                total_bytes: total,
            };
            serde_json::to_writer_pretty(&mut *out, &list)?;
            writeln!(out)
        }
        Format::Csv => {
            let extra = if sharded { ",shard" } else { "" };
            writeln!(out, "name,dtype,shape,bytes,loadable,kind{extra}")?;
            for t in tensors {
                let shape: Vec<String> = t.shape.iter().map(usize::to_string).collect();
                let extra = if sharded {
                    format!(",{}", field(&shard(t)))
                } else {
                    String::new()
                };
                writeln!(
                    out,
                    "{},{},{},{},{},{}{extra}",
                    field(&t.name),
                    field(&t.dtype),
                    shape.join("x"),
                    t.bytes,
                    t.not_loadable().is_none(),
                    t.kind.name()
                )?;
            }
            Ok(())
        }
        Format::Markdown => {
            let (head, rule) = if sharded {
                (
                    "| name | dtype | shape | bytes | shard |",
                    "|---|---|---|---:|---|",
                )
            } else {
                ("| name | dtype | shape | bytes |", "|---|---|---|---:|")
            };
            writeln!(out, "{head}\n{rule}")?;
            for t in tensors {
                let extra = if sharded {
                    format!(" {} |", escape(&shard(t)))
                } else {
                    String::new()
                };
                writeln!(
                    out,
                    "| {} | {} | {} | {} |{extra}",
                    escape(&t.name),
                    escape(&t.dtype),
                    escape(&format_shape(&t.shape)),
                    t.bytes
                )?;
            }
            writeln!(out, "\n{total_line}")
        }
    }
}

/// The aligned table.
fn write_table(
    out: &mut impl Write,
    tensors: &[Entry],
    sharded: bool,
    total_line: &str,
) -> io::Result<()> {
    let shard = |t: &Entry| t.shard.clone().unwrap_or_default();
    let shapes: Vec<String> = tensors.iter().map(|t| format_shape(&t.shape)).collect();
    let width = |f: &dyn Fn(usize) -> usize, min: usize| {
        (0..tensors.len()).map(f).chain([min]).max().unwrap_or(min)
    };
    let name_w = width(&|i| tensors[i].name.len(), 4);
    let dtype_w = width(&|i| tensors[i].dtype.len(), 5);
    let shape_w = width(&|i| shapes[i].len(), 5);
    let bytes_w = width(&|i| tensors[i].bytes.to_string().len(), 5);
    let line = |name: &str, dtype: &str, shape: &str, bytes: &str, shard: &str| {
        let row = format!("{name:name_w$}  {dtype:dtype_w$}  {shape:shape_w$}  {bytes:>bytes_w$}");
        if sharded {
            format!("{row}  {shard}")
        } else {
            row
        }
    };
    writeln!(out, "{}", line("name", "dtype", "shape", "bytes", "shard"))?;
    for (t, s) in tensors.iter().zip(&shapes) {
        let l = line(&t.name, &t.dtype, s, &t.bytes.to_string(), &shard(t));
        writeln!(out, "{}", l.trim_end())?;
    }
    writeln!(out, "{total_line}")
}
