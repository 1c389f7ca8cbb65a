//! The activations a method reads: every method here needs its tokens in memory at once
//! (AWQ's search and W8A8 multiply all of them per step, GPTQ's output error too), so a
//! large activations file is read only up to a bound, its first tokens, a chunk at a time.
//!
//! The bound is [`MAX_TOKENS`] tokens and [`MAX_VALUES`] values (64 MiB of `f32`): the
//! products `X Wᵀ` the methods form are `[tokens, out]`, so a bound on tokens bounds them too.
//! GPTQ's `H = 2/T Σ x xᵀ` alone could be summed from chunks, but its output error (and the
//! reference's, which the fixtures check) is a product over the same tokens, so it reads the
//! same ones as the others.

use ndarray::Array2;

use crate::core::importance::activations::chunk_tokens;
use crate::core::importance::{Tokens, TokensError};

/// The most tokens a method reads.
pub const MAX_TOKENS: usize = 4096;

/// The most values (tokens × width) a method reads: 64 MiB of `f32`.
pub const MAX_VALUES: usize = 16 << 20;

/// How many of `count` tokens of `width` values a method reads: all of them up to
/// [`MAX_TOKENS`] and [`MAX_VALUES`], and at least one.
#[must_use]
pub fn budget(count: usize, width: usize) -> usize {
    count
        .min(MAX_TOKENS)
        .min((MAX_VALUES / width.max(1)).max(1))
}

/// The first `limit` tokens of `tokens` (all of them when it holds fewer), read a chunk at a
/// time, as one `[tokens, width]` matrix.
pub fn read_first(tokens: &dyn Tokens, limit: usize) -> Result<Array2<f32>, TokensError> {
    let (count, width) = tokens.shape();
    let n = count.min(limit);
    let mut data = vec![0.0f32; n * width];
    let per = chunk_tokens(width);
    let mut first = 0;
    while first < n {
        let end = (first + per).min(n);
        tokens.read(first, &mut data[first * width..end * width])?;
        first = end;
    }
    Array2::from_shape_vec((n, width), data).map_err(|e| TokensError(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::importance::Activations;

    #[test]
    fn the_budget_bounds_tokens_and_values() {
        assert_eq!(budget(256, 64), 256);
        assert_eq!(budget(100_000, 64), MAX_TOKENS);
        // 16 Mi values of width 8192: 2048 tokens
        assert_eq!(budget(100_000, 8192), 2048);
        // a token wider than the bound is still read
        assert_eq!(budget(10, MAX_VALUES * 2), 1);
        assert_eq!(budget(0, 64), 0);
    }

    #[test]
    fn the_first_tokens_are_read_in_order() {
        let x = Array2::from_shape_fn((10, 3), |(t, c)| (t * 3 + c) as f32);
        let a = Activations::new(x.clone(), "x");
        assert_eq!(read_first(&a, 100).unwrap(), x);
        let first = read_first(&a, 4).unwrap();
        assert_eq!(first, x.slice_axis(ndarray::Axis(0), (..4).into()));
    }
}
