//! Calibration activations: the inputs `X` (`[tokens, columns]`) a layer sees, read a chunk
//! of tokens at a time through [`Tokens`] so that a file larger than memory can be used,
//! and their importance, the mean of `x²` per column.
//!
//! [`Activations`] holds them in memory (a loaded matrix, or the built-in synthetic ones);
//! `io::activations` reads `.npy` and safetensors files a chunk at a time.

use ndarray::{Array2, ArrayView2};

use super::{Importance, ImportanceError, ImportanceSource};

/// Tokens read per chunk: about 32 MiB of `f32` at most (at least one token).
#[must_use]
pub fn chunk_tokens(width: usize) -> usize {
    ((8 << 20) / width.max(1)).max(1)
}

/// Why activations could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TokensError(pub String);

/// A source of activations: `tokens` rows of `width` values, read a run of rows at a time.
pub trait Tokens: Send + Sync {
    /// `(tokens, width)`.
    fn shape(&self) -> (usize, usize);

    /// Reads tokens `first..first + out.len() / width` into `out`, row after row. Every
    /// value must be finite (a reader reports a NaN or an infinity as an error).
    fn read(&self, first: usize, out: &mut [f32]) -> Result<(), TokensError>;

    /// What they are, for display (a file name, `FILE:TENSOR`, `built-in`).
    fn name(&self) -> String;
}

/// Activations held in memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Activations {
    x: Array2<f32>,
    name: String,
}

/// The built-in synthetic activations: seeded tokens of unit variance with a few input
/// columns [`BuiltIn::loudness`] times louder than the rest, as the outlier channels of
/// large language models are (the SmoothQuant and LLM.int8() papers show a few channels 10
/// to 100 times louder).
///
/// - values: `(u1 + u2 + u3 + u4 - 2) * sqrt(3)` with `u` uniform in `[0, 1)` from
///   xorshift64* seeded with [`BuiltIn::seed`], token after token (mean 0, variance 1);
/// - loud columns ([`BuiltIn::loud_columns`]): `n = max(1, width / 32)` of them, column
///   `(2k + 1) * width / (2n)` for `k < n` (width 8: column 4; width 64: 16 and 48), each
///   value multiplied by [`BuiltIn::loudness`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BuiltIn {
    /// Tokens (rows).
    pub tokens: usize,
    /// The generator's seed.
    pub seed: u64,
    /// How much louder the loud columns are.
    pub loudness: f32,
}

impl Default for BuiltIn {
    /// 256 tokens, seed `0x1D1E_5EED`, loud columns 20 times louder.
    fn default() -> Self {
        Self {
            tokens: 256,
            seed: 0x1D1E_5EED,
            loudness: 20.0,
        }
    }
}

impl BuiltIn {
    /// The loud columns of `width` columns.
    #[must_use]
    pub fn loud_columns(width: usize) -> Vec<usize> {
        let n = (width / 32).max(1);
        (0..n).map(|k| (2 * k + 1) * width / (2 * n)).collect()
    }
}

/// xorshift64* (the seed 0 is replaced by a fixed non-zero one).
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut s = self.0;
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        self.0 = s;
        s.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn uniform(&mut self) -> f64 {
        (self.next() >> 40) as f64 / (1u64 << 24) as f64
    }
}

impl Activations {
    /// `x` (`[tokens, columns]`, every value finite) named `name`.
    #[must_use]
    pub fn new(x: Array2<f32>, name: impl Into<String>) -> Self {
        Self {
            x,
            name: name.into(),
        }
    }

    /// The built-in synthetic activations for a layer of `width` input columns.
    #[must_use]
    pub fn built_in(width: usize, b: &BuiltIn) -> Self {
        let mut g = XorShift(if b.seed == 0 { 0x9E37_79B9 } else { b.seed });
        let loud = BuiltIn::loud_columns(width);
        let mut x = Array2::<f32>::zeros((b.tokens, width));
        for mut row in x.rows_mut() {
            for v in &mut row {
                let u = g.uniform() + g.uniform() + g.uniform() + g.uniform();
                *v = ((u - 2.0) * 3f64.sqrt()) as f32;
            }
            for &c in &loud {
                row[c] *= b.loudness;
            }
        }
        let name = format!(
            "built-in ({} tokens, seed {:#x}, column{} {} x{})",
            b.tokens,
            b.seed,
            if loud.len() == 1 { "" } else { "s" },
            columns_list(&loud),
            b.loudness
        );
        Self { x, name }
    }

    /// The values, `[tokens, columns]`.
    #[must_use]
    pub fn values(&self) -> ArrayView2<'_, f32> {
        self.x.view()
    }
}

/// `a, b, c` for a few columns, `a, b, c, ... (n)` for many.
fn columns_list(cols: &[usize]) -> String {
    let shown: Vec<String> = cols.iter().take(4).map(ToString::to_string).collect();
    if cols.len() > 4 {
        format!("{}, ... ({} columns)", shown.join(", "), cols.len())
    } else {
        shown.join(", ")
    }
}

impl Tokens for Activations {
    fn shape(&self) -> (usize, usize) {
        self.x.dim()
    }

    fn read(&self, first: usize, out: &mut [f32]) -> Result<(), TokensError> {
        let (tokens, width) = self.x.dim();
        let n = out.len() / width.max(1);
        if first + n > tokens {
            return Err(TokensError(format!(
                "{}: tokens {first}..{} asked for, it holds {tokens}",
                self.name,
                first + n
            )));
        }
        for (o, row) in out
            .chunks_exact_mut(width.max(1))
            .zip(self.x.rows().into_iter().skip(first))
        {
            for (a, &b) in o.iter_mut().zip(row) {
                *a = b;
            }
        }
        Ok(())
    }

    fn name(&self) -> String {
        self.name.clone()
    }
}

/// Why activations give no importance.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ActivationsProblem {
    /// They could not be read.
    #[error(transparent)]
    Read(#[from] TokensError),
    /// They hold no tokens or no columns.
    #[error("{name} holds no tokens")]
    Empty {
        /// The activations' name.
        name: String,
    },
    /// Their importance is not valid (an overflow to infinity).
    #[error("{name}: {source}")]
    Importance {
        /// The activations' name.
        name: String,
        /// What is wrong.
        source: ImportanceError,
    },
}

/// The importance of activations: the mean of `x²` per column, as `llama-imatrix`
/// accumulates it: `sum[j] += x[j] * x[j]` in `f32`, token after token (no fused
/// multiply-add), then `sum[j] / tokens` in `f32`. An importance matrix written from the
/// same activations by llama-imatrix's arithmetic holds the same vector, bit for bit.
pub fn importance_of(tokens: &dyn Tokens) -> Result<Importance, ActivationsProblem> {
    let (count, width) = tokens.shape();
    let name = tokens.name();
    if count == 0 || width == 0 {
        return Err(ActivationsProblem::Empty { name });
    }
    let per = chunk_tokens(width);
    let mut buf = vec![0.0f32; per.min(count) * width];
    let mut sum = vec![0.0f32; width];
    let mut first = 0;
    while first < count {
        let n = per.min(count - first);
        let chunk = &mut buf[..n * width];
        tokens.read(first, chunk)?;
        for row in chunk.chunks_exact(width) {
            for (s, &x) in sum.iter_mut().zip(row) {
                *s += x * x;
            }
        }
        first += n;
    }
    let t = count as f32;
    let mean: Vec<f32> = sum.iter().map(|&s| s / t).collect();
    Importance::new(
        mean,
        width,
        ImportanceSource::Activations {
            name: name.clone(),
            tokens: count,
        },
    )
    .map_err(|source| ActivationsProblem::Importance { name, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_tokens_have_loud_columns_and_unit_variance() {
        let a = Activations::built_in(64, &BuiltIn::default());
        assert_eq!(a.shape(), (256, 64));
        assert_eq!(BuiltIn::loud_columns(64), vec![16, 48]);
        assert_eq!(BuiltIn::loud_columns(8), vec![4]);
        assert_eq!(BuiltIn::loud_columns(1), vec![0]);
        let imp = importance_of(&a).unwrap();
        let v = imp.values();
        // Quiet columns near 1, loud ones near 400.
        let quiet: f32 = (0..64).filter(|c| c % 32 != 16).map(|c| v[c]).sum::<f32>() / 62.0;
        assert!((0.8..1.2).contains(&quiet), "{quiet}");
        assert!(v[16] > 300.0 && v[48] > 300.0, "{} {}", v[16], v[48]);
        assert!(a.name().contains("16, 48 x20"), "{}", a.name());
        // The same seed gives the same tokens.
        assert_eq!(a, Activations::built_in(64, &BuiltIn::default()));
    }

    #[test]
    fn importance_is_the_f32_mean_of_squares() {
        let x = ndarray::array![[1.0f32, 0.5], [3.0, -0.5], [0.0, 2.0]];
        let imp = importance_of(&Activations::new(x, "x")).unwrap();
        assert_eq!(imp.values(), &[10.0 / 3.0, 4.5 / 3.0]);
        let e = importance_of(&Activations::new(Array2::zeros((0, 2)), "none")).unwrap_err();
        assert_eq!(e.to_string(), "none holds no tokens");
        let big = ndarray::array![[1e30f32], [1e30]];
        let e = importance_of(&Activations::new(big, "big")).unwrap_err();
        assert!(e.to_string().contains("must be finite"), "{e}");
    }

    #[test]
    fn reads_past_the_end_are_refused() {
        let a = Activations::new(Array2::zeros((2, 3)), "a");
        let mut out = vec![0.0; 6];
        assert!(a.read(1, &mut out).is_err());
        assert!(a.read(0, &mut out).is_ok());
    }
}
