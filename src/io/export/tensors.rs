//! The tensor list of a `.safetensors` file (`report --list-tensors`) in every format.
//!
//! | format     | contents                                                            |
//! |------------|---------------------------------------------------------------------|
//! | `table`    | aligned `name dtype shape bytes`, then `N tensors, B bytes`         |
//! | `markdown` | the same as a GitHub table, then the total line                     |
//! | `json`     | `{"tensors": [{"name", "dtype", "shape", "bytes", "loadable"}], "total_bytes"}` |
//! | `csv`      | `name,dtype,shape,bytes,loadable`: the shape as `384x1536`, no total |
//!
//! `loadable` says whether `--tensor` takes it: F16, BF16, F32 or F64 with at least one axis
//! (as the explorer's tensor picker lists them).

use std::io::{self, Write};

use serde::Serialize;

use crate::io::export::Format;
use crate::io::export::csv::field;
use crate::io::export::markdown::escape;
use crate::io::safetensors::{TensorInfo, format_shape, write_tensor_list as write_table};

#[derive(Serialize)]
struct Entry<'a> {
    name: &'a str,
    dtype: String,
    shape: &'a [usize],
    bytes: u64,
    loadable: bool,
}

#[derive(Serialize)]
struct List<'a> {
    tensors: Vec<Entry<'a>>,
    total_bytes: u64,
}

fn loadable(t: &TensorInfo) -> bool {
    t.not_loadable().is_none()
}

/// Writes `tensors` in `format`.
pub fn write_tensor_list(
    out: &mut impl Write,
    tensors: &[TensorInfo],
    format: Format,
) -> io::Result<()> {
    let total: u64 = tensors.iter().map(TensorInfo::bytes).sum();
    match format {
        Format::Table => write_table(out, tensors),
        Format::Json => {
            let list = List {
                tensors: tensors
                    .iter()
                    .map(|t| Entry {
                        name: &t.name,
                        dtype: t.dtype.to_string(),
                        shape: &t.shape,
                        bytes: t.bytes(),
                        loadable: loadable(t),
                    })
                    .collect(),
                total_bytes: total,
            };
            serde_json::to_writer_pretty(&mut *out, &list)?;
            writeln!(out)
        }
        Format::Csv => {
            writeln!(out, "name,dtype,shape,bytes,loadable")?;
            for t in tensors {
                let shape: Vec<String> = t.shape.iter().map(usize::to_string).collect();
                writeln!(
                    out,
                    "{},{},{},{},{}",
                    field(&t.name),
                    t.dtype,
                    shape.join("x"),
                    t.bytes(),
                    loadable(t)
                )?;
            }
            Ok(())
        }
        Format::Markdown => {
            writeln!(out, "| name | dtype | shape | bytes |")?;
            writeln!(out, "|---|---|---|---:|")?;
            for t in tensors {
                writeln!(
                    out,
                    "| {} | {} | {} | {} |",
                    escape(&t.name),
                    t.dtype,
                    format_shape(&t.shape),
                    t.bytes()
                )?;
            }
            writeln!(
                out,
                "\n{}, {total} bytes",
                super::num::count(tensors.len(), "tensor")
            )
        }
    }
}
