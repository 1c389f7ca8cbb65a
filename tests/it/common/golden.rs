//! What the golden-fixture tests share with the generators under tests/golden/: reading a
//! fixture, the generators' xorshift64* and bulk matrix, their FNV-1a hash, and hex.

use std::path::PathBuf;

use serde_json::Value;

/// The folder of the fixtures `dir` (`tests/golden/<dir>`).
pub fn dir(dir: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(dir)
}

/// The fixture `name` of `tests/golden/<dir>`, parsed; panics naming the file when it cannot
/// be read or parsed.
pub fn json(dir: &str, name: &str) -> Value {
    let path = self::dir(dir).join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// xorshift64*, as the generators have it.
pub struct XorShift(pub u64);

impl XorShift {
    /// The next 64 bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A uniform value in `[0, 1)` from the top 24 bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next() >> 40) as f64 / f64::from(1u32 << 24)
    }
}

/// The generators' bulk matrix (`rows` x `cols`, row-major): sums of four uniforms at binary
/// scales, with outlier columns, rows of magnitudes and half-zero rows.
pub fn bulk_matrix(rows: usize, cols: usize) -> Vec<f32> {
    let mut g = XorShift(0x5EED_F0F0);
    let mut out = Vec::with_capacity(rows * cols);
    for r in 0..rows {
        let scale = 2f64.powi(-((r % 21) as i32));
        for c in 0..cols {
            let (a, b, cc, d) = (g.uniform(), g.uniform(), g.uniform(), g.uniform());
            let mut v = (a + b + cc + d - 2.0) * scale;
            if c % 97 == 13 {
                v *= 8.0;
            }
            if r % 8 == 5 {
                v = v.abs();
            }
            if r % 16 == 7 && c < cols / 2 {
                v = 0.0;
            }
            out.push(v as f32);
        }
    }
    out
}

/// FNV-1a 64 of `bytes`, as 16 hex digits, as the generators hash.
pub fn fnv1a(bytes: impl IntoIterator<Item = u8>) -> String {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01B3);
    }
    format!("{h:016x}")
}

/// The bytes that the hex digits `hex` spell (two a byte).
pub fn bytes_of(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

/// The little-endian `f32`s that the hex digits `hex` spell (eight a value).
pub fn f32s_of(hex: &str) -> Vec<f32> {
    bytes_of(hex)
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// `bytes` as lowercase hex digits.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The names of every file in `tests/golden/<dir>`, sorted (for the tests that every fixture
/// file is read by a test).
pub fn file_names(dir: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(self::dir(dir))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A fixture's float: a JSON number, or `"inf"` / `"-inf"` for an infinity.
pub fn f32_of(x: &Value) -> f32 {
    match x.as_str() {
        Some("inf") => f32::INFINITY,
        Some("-inf") => f32::NEG_INFINITY,
        Some(s) => panic!("not a float: {s:?}"),
        None => x.as_f64().unwrap() as f32,
    }
}

/// A fixture's array of floats ([`f32_of`] each).
pub fn f32s(v: &Value) -> Vec<f32> {
    v.as_array().unwrap().iter().map(f32_of).collect()
}

/// A fixture's rows of floats ([`f32_of`] each).
pub fn f32_rows(v: &Value) -> Vec<Vec<f32>> {
    v.as_array().unwrap().iter().map(f32s).collect()
}
