//! Writing a reconstructed matrix ([`crate::core::reconstruct`]) for other tools: a `.npy`
//! file (NumPy's format 1.0, little-endian f32, C order) or a `.safetensors` file with one
//! F32 tensor, chosen by the file's ending. Files are written atomically.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::Path;

use crate::core::Matrix;

/// The kinds of file a reconstruction is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// NumPy's `.npy`.
    Npy,
    /// A `.safetensors` file with one tensor.
    Safetensors,
}

impl Kind {
    /// The kind a file name's ending asks for (ignoring case), if any.
    #[must_use]
    pub fn of(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "npy" => Some(Self::Npy),
            "safetensors" => Some(Self::Safetensors),
            _ => None,
        }
    }
}

/// Writes `m` as a `.npy` file (format 1.0, `<f4`, C order) to `out`.
pub fn write_npy(out: &mut impl Write, m: &Matrix) -> io::Result<()> {
    let (rows, cols) = m.shape();
    let dict = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({rows}, {cols}), }}");
    // Magic (6), version (2), header length (2), then the header padded with spaces and
    // ended by a newline to a multiple of 64 bytes.
    let unpadded = 10 + dict.len() + 1;
    let padding = unpadded.next_multiple_of(64) - unpadded;
    let header_len = u16::try_from(dict.len() + padding + 1)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "the .npy header is too long"))?;
    out.write_all(b"\x93NUMPY\x01\x00")?;
    out.write_all(&header_len.to_le_bytes())?;
    out.write_all(dict.as_bytes())?;
    out.write_all(&vec![b' '; padding])?;
    out.write_all(b"\n")?;
    let mut data = Vec::with_capacity(rows * cols * 4);
    for v in m.values() {
        data.extend_from_slice(&v.to_le_bytes());
    }
    out.write_all(&data)
}

/// `m` as a `.safetensors` file holding one F32 tensor named `name`.
pub fn safetensors_bytes(m: &Matrix, name: &str) -> Result<Vec<u8>, String> {
    let (rows, cols) = m.shape();
    let mut data = Vec::with_capacity(rows * cols * 4);
    for v in m.values() {
        data.extend_from_slice(&v.to_le_bytes());
    }
    let view =
        safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![rows, cols], &data)
            .map_err(|e| e.to_string())?;
    let metadata = HashMap::from([(
        "written_by".to_string(),
        "quantscope: the reconstruction (dequantized values) of the configuration".to_string(),
    )]);
    safetensors::tensor::serialize([(name, view)], Some(metadata)).map_err(|e| e.to_string())
}

/// Writes `m` to `path` as its ending says (`.npy` or `.safetensors`, the tensor named
/// `name`), atomically; or says why not.
pub fn write_file(path: &Path, m: &Matrix, name: &str) -> Result<(), String> {
    let bytes = match Kind::of(path) {
        Some(Kind::Npy) => {
            let mut buf = Vec::new();
            write_npy(&mut buf, m).map_err(|e| e.to_string())?;
            buf
        }
        Some(Kind::Safetensors) => safetensors_bytes(m, name)?,
        None => {
            return Err(format!(
                "{}: the name must end in .npy or .safetensors",
                path.display()
            ));
        }
    };
    crate::io::save::write_atomic_bytes(path, &bytes)
        .map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_header_is_padded_to_64_bytes_and_the_data_follows() {
        let m = Matrix::from_rows(&[&[1.0, -2.5], &[0.25, 3.0]]).unwrap();
        let mut buf = Vec::new();
        write_npy(&mut buf, &m).unwrap();
        let header_len = usize::from(u16::from_le_bytes([buf[8], buf[9]]));
        assert_eq!((10 + header_len) % 64, 0);
        assert_eq!(buf[10 + header_len - 1], b'\n');
        let header = std::str::from_utf8(&buf[10..10 + header_len]).unwrap();
        assert!(header.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }"));
        let data: Vec<f32> = buf[10 + header_len..]
            .chunks(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        assert_eq!(data, [1.0, -2.5, 0.25, 3.0]);
    }
}
