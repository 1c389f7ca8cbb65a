//! The explorer's file jobs: load a tensor, list a file's tensors, save the text. Each
//! returns what its message carries, errors as words for the status line.

use std::path::{Path, PathBuf};

use crate::app::LoadedTensor;
use crate::io::safetensors::{Safetensors, TensorInfo};

/// The file's name for display (its last component, or the whole path).
fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().to_string(),
    )
}

/// Loads tensor `name` of a .safetensors file, named for display as `file / tensor`.
pub fn load_tensor(path: &Path, name: &str) -> Result<LoadedTensor, String> {
    let opened = Safetensors::open(path).map_err(|e| e.to_string())?;
    let dtype = opened
        .header()
        .tensor(name)
        .map_or_else(String::new, |t| t.dtype.name().to_ascii_lowercase());
    opened
        .load(name)
        .map(|matrix| LoadedTensor {
            name: format!("{} / {name}", file_name(path)),
            dtype,
            matrix,
        })
        .map_err(|e| e.to_string())
}

/// Every tensor of a .safetensors file (its header only is read).
pub fn list_tensors(path: &Path) -> Result<Vec<TensorInfo>, String> {
    Safetensors::open(path)
        .map(|file| file.tensors().to_vec())
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
