//! `report` on checkpoints: `--list-tensors` and `--metadata` for any checkpoint, and a
//! quantized GGUF tensor inspected as stored (the other tensors go through the usual
//! analysis).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::{ReportArgs, fail};
use crate::io::checkpoint::Checkpoint;
use crate::io::export::stored::{Block, write_metadata, write_stored};
use crate::io::export::write_tensor_list;
use crate::io::export::{Document, Format};
use crate::io::gguf::Gguf;
use crate::io::stored;

/// Characters a metadata value is shortened to.
const METADATA_WIDTH: usize = 100;

/// The checkpoint named by `file`, or the message for a missing or wrong one.
fn checkpoint(file: Option<&PathBuf>, flag: &str) -> Result<Checkpoint, String> {
    let Some(path) = file.filter(|p| p.as_os_str() != "-") else {
        return Err(format!(
            "{flag} needs a checkpoint FILE (.safetensors, .gguf, a sharded directory or its index.json)"
        ));
    };
    if !Checkpoint::is_checkpoint(path) {
        return Err(format!(
            "{} is not a checkpoint: {flag} reads .safetensors and .gguf files, and sharded checkpoints (a directory or its model.safetensors.index.json)",
            path.display()
        ));
    }
    Checkpoint::open(path).map_err(|e| e.to_string())
}

/// `report --list-tensors`: every tensor of a checkpoint.
pub(super) fn list_tensors(
    file: Option<&PathBuf>,
    format: Format,
    ascii: bool,
    output: Option<&Path>,
) -> ExitCode {
    let c = match checkpoint(file, "--list-tensors") {
        Ok(c) => c,
        Err(e) => return fail(&e),
    };
    let mut buf = Vec::new();
    if let Err(e) = write_tensor_list(&mut buf, &c.entries(), format) {
        return fail(&format!("could not format the list: {e}"));
    }
    super::emit(&buf, ascii, output)
}

/// `report --metadata`: a GGUF file's key/value pairs (a safetensors file's `__metadata__`).
pub(super) fn metadata(
    file: Option<&PathBuf>,
    format: Format,
    ascii: bool,
    output: Option<&Path>,
) -> ExitCode {
    let c = match checkpoint(file, "--metadata") {
        Ok(c) => c,
        Err(e) => return fail(&e),
    };
    let pairs: Vec<(String, crate::io::gguf::Value)> = match &c {
        Checkpoint::Gguf(g) => g.header().metadata.clone(),
        Checkpoint::Safetensors(s) => strings(&s.header().metadata),
        Checkpoint::Sharded(s) => s
            .shards()
            .first()
            .map(|s| strings(&s.header().metadata))
            .unwrap_or_default(),
    };
    let mut buf = Vec::new();
    if let Err(e) = write_metadata(&mut buf, &pairs, format, METADATA_WIDTH) {
        return fail(&format!("could not format the metadata: {e}"));
    }
    super::emit(&buf, ascii, output)
}

fn strings(
    map: &std::collections::BTreeMap<String, String>,
) -> Vec<(String, crate::io::gguf::Value)> {
    map.iter()
        .map(|(k, v)| {
            let value = crate::io::gguf::Value::String {
                text: v.clone(),
                len: v.len() as u64,
            };
            (k.clone(), value)
        })
        .collect()
}

/// True when no configuration flag was given (the stored view shows a quantized tensor as it
/// is; any preset or setting asks for an analysis of its dequantized values instead).
fn no_config(args: &ReportArgs) -> bool {
    // Compared through Debug so that this stays right as settings are added.
    format!("{:?}", args.config) == format!("{:?}", super::ConfigArgs::default())
}

/// The flags given that ask for an analysis of the values (the stored view has none of
/// what they add), as typed.
fn analysis_flags(args: &ReportArgs) -> Vec<&'static str> {
    [
        (args.formats.is_some(), "--formats"),
        (args.compare.is_some(), "--compare"),
        (args.explain, "--explain"),
        (args.values, "--values"),
        (args.write_dequantized.is_some(), "--write-dequantized"),
    ]
    .into_iter()
    .filter_map(|(given, flag)| given.then_some(flag))
    .collect()
}

/// A quantized GGUF tensor asked for by `report`: `Some(exit code)` when it was shown as
/// stored; `None` when the usual analysis should run (not a GGUF file, a float tensor, or
/// configuration flags or flags that analyse given, in which case a note says what the
/// input is).
pub(super) fn stored_report(args: &ReportArgs, ascii: bool) -> Option<ExitCode> {
    let path: &Path = args.file.as_deref()?;
    if !path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gguf"))
    {
        return None;
    }
    let g = match Gguf::open(path) {
        Ok(g) => g,
        Err(e) => return Some(fail(&e.to_string())),
    };
    let name = match &args.tensor {
        Some(n) => n.clone(),
        None => return None,
    };
    let t = match g.info(&name) {
        Ok(t) => t.clone(),
        Err(e) => return Some(fail(&e.to_string())),
    };
    if t.ggml_type.is_float() || !stored::decodes(t.ggml_type) {
        return None;
    }
    let asked = analysis_flags(args);
    if !no_config(args) || !asked.is_empty() {
        // Bad flags are the error to show, before any note about the input.
        if let Err(e) = args.config.to_config() {
            return Some(fail(&e.to_string()));
        }
        let what = if no_config(args) {
            // Only flags that analyse: they do so as a preset would, under the default one.
            format!(
                "{} {} on its dequantized values (the original weights are not in the file), under preset {}; without them, report shows the stored codes",
                asked.join(", "),
                if asked.len() == 1 { "runs" } else { "run" },
                args.config.preset.as_deref().unwrap_or("lesson")
            )
        } else {
            "the analysis runs on its dequantized values (the original weights are not in the file); without a preset or settings, report shows the stored codes".to_string()
        };
        super::note(&format!("{name} is stored as {}: {what}", t.ggml_type));
        return None;
    }
    if !args.importance.is_empty() {
        return Some(fail(&format!(
            "{name} is stored as {}: --imatrix and --activations weigh an analysis; give a preset (such as --preset {}) to analyse its dequantized values with them",
            t.ggml_type,
            t.ggml_type.name.to_ascii_lowercase()
        )));
    }
    if args.format.parse::<Document>().is_ok() {
        return Some(fail(&format!(
            "{name} is stored as {}: --format html and pdf show an analysis; give a preset or a setting to analyse its dequantized values, or use table, json, csv or markdown to see the stored codes",
            t.ggml_type
        )));
    }
    let inspected = match stored::inspect(&g, &t) {
        Ok(s) => s,
        Err(e) => return Some(fail(&e.to_string())),
    };
    let row = inspected
        .rows
        .iter()
        .position(|r| !r.collapsed)
        .unwrap_or(0);
    let block = match stored::decode_row(&g, &t, row) {
        Ok((enc, values)) => {
            let len = inspected.block_len.min(values.len());
            Block {
                row,
                sub_blocks: enc
                    .sub_blocks()
                    .iter()
                    .take_while(|s| s.start < len)
                    .map(|s| (s.step, s.min))
                    .collect(),
                codes: enc.codes[..len].to_vec(),
                values: values[..len].to_vec(),
            }
        }
        Err(e) => return Some(fail(&e.to_string())),
    };
    let format = args.format.parse::<Format>().unwrap_or(Format::Table);
    let mut buf = Vec::new();
    if let Err(e) = write_stored(
        &mut buf,
        &path.display().to_string(),
        &inspected,
        &block,
        format,
    ) {
        return Some(fail(&format!("could not format the report: {e}")));
    }
    Some(super::emit(&buf, ascii, args.output.as_deref()))
}
