//! The explorer's file jobs: load a tensor, list a checkpoint's tensors, save the text. Each
//! returns what its message carries, errors as words for the status line.

use std::path::{Path, PathBuf};

use crate::app::LoadedTensor;
use crate::io::checkpoint::{Checkpoint, Entry, Kind};

/// The file's name for display (its last component, or the whole path).
fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().to_string(),
    )
}

/// Loads tensor `name` of a checkpoint (a .safetensors or .gguf file, or a sharded one),
/// named for display as `file / tensor`; a quantized GGUF tensor as its dequantized values.
pub fn load_tensor(path: &Path, name: &str) -> Result<LoadedTensor, String> {
    let opened = Checkpoint::open(path).map_err(|e| e.to_string())?;
    load_tensor_of(&opened, name)
}

/// Loads tensor `name` of an opened checkpoint, named for display as `file / tensor` (the
/// shard's file for a sharded checkpoint); a
/// quantized GGUF tensor with its stored codes inspected ([`crate::io::stored::inspect`]).
pub fn load_tensor_of(opened: &Checkpoint, name: &str) -> Result<LoadedTensor, String> {
    let entry = opened.entries().into_iter().find(|t| t.name == name);
    let dtype = entry
        .as_ref()
        .map_or_else(String::new, |t| t.dtype.to_ascii_lowercase());
    let matrix = opened.load(name).map_err(|e| e.to_string())?;
    let stored = match (opened, entry.as_ref().map(|t| t.kind)) {
        (Checkpoint::Gguf(g), Some(Kind::Quantized)) => {
            let info = g.info(name).map_err(|e| e.to_string())?;
            let stored = crate::io::stored::inspect(g, info).map_err(|e| e.to_string())?;
            Some(std::sync::Arc::new(stored))
        }
        _ => None,
    };
    // A sharded checkpoint's tensor is named with the shard that holds it.
    let file = entry
        .as_ref()
        .and_then(|t| t.shard.clone())
        .unwrap_or_else(|| file_name(&opened.path()));
    Ok(LoadedTensor {
        name: format!("{file} / {name}"),
        dtype,
        matrix,
        stored,
    })
}

/// Every tensor of a checkpoint (headers and index only are read).
pub fn list_tensors(path: &Path) -> Result<Vec<Entry>, String> {
    Checkpoint::open(path)
        .map(|file| file.entries())
        .map_err(|e| e.to_string())
}

/// Writes `text` to `path` atomically; the path written, or the path and why not.
pub fn save(path: PathBuf, text: &str) -> Result<PathBuf, (PathBuf, String)> {
    match crate::io::save::write_atomic(&path, text) {
        Ok(()) => Ok(path),
        Err(e) => {
            let message = format!("{}: {e}", path.display());
            Err((path, message))
        }
    }
}

/// Writes the report of `job` as `document` to `path` atomically; the path written, or the
/// path and why not.
pub fn export(
    path: PathBuf,
    document: crate::io::export::rich::Document,
    job: &crate::app::model::ExportJob,
) -> Result<PathBuf, (PathBuf, String)> {
    let versus = job
        .versus
        .as_ref()
        .map(|(a, comparison)| crate::io::export::rich::Versus { a, comparison });
    let extras = crate::io::export::Extras {
        explain: &[],
        format_ladder: job.format_ladder.as_deref(),
        compare: versus,
        methods: job.methods.as_deref(),
    };
    let options = crate::io::export::ExportOptions {
        values: false,
        ladder: true,
    };
    let written = crate::io::export::rich::document(
        &job.matrix,
        &job.report,
        document,
        &options,
        &extras,
        crate::io::export::rich::Paper::default(),
    )
    .and_then(|bytes| {
        crate::io::save::write_atomic_bytes(&path, &bytes).map_err(|e| e.to_string())
    });
    match written {
        Ok(()) => Ok(path),
        Err(e) => {
            let message = format!("{}: {e}", path.display());
            Err((path, message))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_is_a_message_naming_it() {
        let e = load_tensor(Path::new("/nonexistent/model.safetensors"), "w").unwrap_err();
        assert!(e.contains("model.safetensors"), "{e}");
        let e = list_tensors(Path::new("/nonexistent/model.safetensors")).unwrap_err();
        assert!(e.contains("model.safetensors"), "{e}");
        let (path, e) = save(PathBuf::from("/nonexistent/dir/a.txt"), "1").unwrap_err();
        assert_eq!(path, PathBuf::from("/nonexistent/dir/a.txt"));
        assert!(e.contains("a.txt"), "{e}");
    }
}
