//! Loading a matrix from a path or a reader (`quantscope::io::load_path`, `load_reader`):
//! dispatch on the file's extension, and errors that name the file.

use quantscope::io::{LoadError, NpyError, load_path, load_reader};

use crate::common::core as core_helpers;
use crate::common::files;

use core_helpers::matrix_rows as rows;
use files::{f32_bytes as f32s, npy_bytes as npy, npy_header as header, temp_file};

#[test]
fn load_path_dispatches_on_the_extension() {
    let npy_bytes = npy(
        (1, 0),
        &header("<f4", false, "(1, 2)"),
        &f32s(&[1.5, -0.25]),
    );
    for name in ["w.txt", "w.csv", "w.TSV", "w", "w.weights"] {
        let path = temp_file(name, b"a: 1.5, -0.25\n");
        let m = load_path(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            (rows(&m), m.labels()[0].as_deref()),
            (vec![vec![1.5, -0.25]], Some("a")),
            "{name}"
        );
    }
    for name in ["w.npy", "w.NPY"] {
        let m = load_path(&temp_file(name, &npy_bytes)).unwrap();
        assert_eq!(rows(&m), [[1.5, -0.25]], "{name}");
    }
    // A .npy file read as text, or text read as .npy, fails with the format's own error.
    assert!(matches!(
        load_path(&temp_file("w.txt", &npy_bytes)),
        Err(LoadError::NotUtf8 { offset: 0, .. })
    ));
    assert!(matches!(
        load_path(&temp_file("w.npy", b"1 2")),
        Err(LoadError::Npy {
            source: NpyError::BadMagic,
            ..
        })
    ));
}

#[test]
fn load_errors_name_the_file() {
    let path = temp_file("bad.csv", b"1, 2\n3, x\n");
    assert_eq!(
        load_path(&path).unwrap_err().to_string(),
        format!("{}: line 2, col 4: \"x\" is not a number", path.display())
    );

    let path = temp_file("latin1.txt", b"1 2 \xe9");
    assert_eq!(
        load_path(&path).unwrap_err().to_string(),
        format!(
            "{} is not UTF-8 text: invalid byte at offset 4",
            path.display()
        )
    );

    let path = temp_file(
        "short.npy",
        &npy((1, 0), &header("<f4", false, "(3,)"), &[0; 8]),
    );
    assert_eq!(
        load_path(&path).unwrap_err().to_string(),
        format!(
            "{}: the data is shorter than the shape says: shape (3,) needs 12 bytes but the file has 8",
            path.display()
        )
    );

    let missing = temp_file("x.txt", b"").with_file_name("does-not-exist.npy");
    let e = load_path(&missing).unwrap_err();
    assert!(
        matches!(&e, LoadError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .starts_with(&format!("cannot read {}: ", missing.display())),
        "{e}"
    );

    let e = load_path(&temp_file("m.SafeTensors", b"{}")).unwrap_err();
    assert!(
        e.to_string().ends_with(
            "m.SafeTensors: the file is 2 bytes long, too short for a safetensors file (it starts with an 8-byte header length)"
        ),
        "{e}"
    );
}

struct FailingReader;

impl std::io::Read for FailingReader {
    fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
        Err(std::io::Error::other("pipe closed"))
    }
}

#[test]
fn load_reader_reads_text() {
    let m = load_reader("<stdin>", "1 2\n3 4\n".as_bytes()).unwrap();
    assert_eq!(rows(&m), [[1.0, 2.0], [3.0, 4.0]]);
    assert_eq!(
        load_reader("<stdin>", &b"1 2\n3"[..])
            .unwrap_err()
            .to_string(),
        "<stdin>: line 2, col 1: channel 2 has 1 value but channel 1 has 2"
    );
    assert_eq!(
        load_reader("<stdin>", &b"\xff"[..])
            .unwrap_err()
            .to_string(),
        "<stdin> is not UTF-8 text: invalid byte at offset 0"
    );
    assert_eq!(
        load_reader("<stdin>", FailingReader)
            .unwrap_err()
            .to_string(),
        "cannot read <stdin>: pipe closed"
    );
}
