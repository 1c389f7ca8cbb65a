//! Files for tests: a file in a temporary directory of its own, which the `tempfile` crate
//! removes when the value is dropped (also when the test fails), and the bytes of small
//! `.safetensors` and `.npy` files, written byte by byte.

use std::ops::Deref;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

/// A new, empty directory, removed with its contents when dropped.
pub fn temp_dir() -> TempDir {
    tempfile::Builder::new()
        .prefix("quantscope-test-")
        .tempdir()
        .expect("a temporary directory")
}

/// A file named `name` holding `bytes`, alone in a new temporary directory (tests run in
/// parallel: no two calls share one). It is a `Path`, and is removed when dropped.
pub struct TempFile {
    path: PathBuf,
    _dir: TempDir,
}

impl Deref for TempFile {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for TempFile {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

/// Writes `bytes` to a new file named `name` (see [`TempFile`]).
pub fn temp_file(name: &str, bytes: &[u8]) -> TempFile {
    let dir = temp_dir();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    TempFile { path, _dir: dir }
}

/// Little-endian bytes of `values`, as `.npy` and `.safetensors` files store f32.
pub fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A `.safetensors` file holding `tensors` (name, dtype name, shape, raw little-endian bytes):
/// the header in the order given, the data back to back.
pub fn safetensors_bytes(tensors: &[(&str, &str, &[u64], Vec<u8>)]) -> Vec<u8> {
    safetensors_bytes_with(tensors, &[])
}

/// [`safetensors_bytes`] with `extra` header entries (such as `"__metadata__":{...}`) after
/// the tensors'.
pub fn safetensors_bytes_with(
    tensors: &[(&str, &str, &[u64], Vec<u8>)],
    extra: &[&str],
) -> Vec<u8> {
    let mut entries = Vec::new();
    let mut data = Vec::new();
    for (name, dtype, shape, bytes) in tensors {
        let begin = data.len();
        data.extend_from_slice(bytes);
        entries.push(format!(
            "\"{name}\":{{\"dtype\":\"{dtype}\",\"shape\":{shape:?},\"data_offsets\":[{begin},{}]}}",
            data.len()
        ));
    }
    entries.extend(extra.iter().map(|e| (*e).to_owned()));
    safetensors_raw(&format!("{{{}}}", entries.join(",")), &data)
}

/// A `.safetensors` file from a header text and a data section, with the true header length.
pub fn safetensors_raw(header: &str, data: &[u8]) -> Vec<u8> {
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

/// A `.npy` file of format `version` from its header text and data: the magic, the version,
/// the header length (two bytes in version 1, four after) and the header as given.
pub fn npy_bytes(version: (u8, u8), header: &str, data: &[u8]) -> Vec<u8> {
    let mut out = b"\x93NUMPY".to_vec();
    out.extend([version.0, version.1]);
    if version.0 == 1 {
        out.extend(u16::try_from(header.len()).unwrap().to_le_bytes());
    } else {
        out.extend(u32::try_from(header.len()).unwrap().to_le_bytes());
    }
    out.extend(header.as_bytes());
    out.extend(data);
    out
}

/// A `.npy` header dictionary, ending in a newline and not padded.
pub fn npy_header(descr: &str, fortran: bool, shape: &str) -> String {
    let fortran = if fortran { "True" } else { "False" };
    format!("{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape}, }}\n")
}

/// The names of the `.json` files in `dir`, sorted.
pub fn json_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
