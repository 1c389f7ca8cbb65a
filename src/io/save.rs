//! Atomic saving: write a temporary file beside the target, flush it to disk, rename it
//! over the target. A crash or a full disk leaves either the old file or the new one, never
//! half of each.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Writes `text` to `path` atomically (temporary file in the same directory, then rename),
/// ending it with a newline when it has none.
pub fn write_atomic(path: &Path, text: &str) -> io::Result<()> {
    let newline: &[u8] = if !text.is_empty() && !text.ends_with('\n') {
        b"\n"
    } else {
        b""
    };
    write_parts(path, &[text.as_bytes(), newline])
}

/// Writes `bytes` to `path` atomically, as they are (an HTML or PDF document).
pub fn write_atomic_bytes(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_parts(path, &[bytes])
}

/// Writes `parts` one after the other to a temporary file beside `path`, flushes it to disk
/// and renames it over `path`; on failure the temporary file is removed.
fn write_parts(path: &Path, parts: &[&[u8]]) -> io::Result<()> {
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
        for part in parts {
            f.write_all(part)?;
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
