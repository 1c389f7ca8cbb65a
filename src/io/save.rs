//! Atomic saving: write a temporary file beside the target, flush it to disk, rename it
//! over the target. A crash or a full disk leaves either the old file or the new one, never
//! half of each.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Writes `text` to `path` atomically (temporary file in the same directory, then rename).
pub fn write_atomic(path: &Path, text: &str) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"))?;
    let tmp = dir.join(format!(
        ".{}.quantscope-{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        if !text.is_empty() && !text.ends_with('\n') {
            f.write_all(b"\n")?;
        }
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temporary_behind() {
        let dir = std::env::temp_dir().join(format!("quantscope-save-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("channels.txt");
        fs::write(&path, "old").unwrap();
        write_atomic(&path, "a: 1, 2").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "a: 1, 2\n");
        let leftovers: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name() != "channels.txt")
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        assert!(write_atomic(&dir.join("missing-dir").join("x.txt"), "1").is_err());
        fs::remove_dir_all(&dir).unwrap();
    }
}
