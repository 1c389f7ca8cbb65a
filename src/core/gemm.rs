//! `A · Bᵀ` in f32 on row-major `ndarray` matrices, through faer's GEMM: blocked, with the
//! widest vector kernels the CPU has (AVX-512 where present, chosen at run time). The output
//! errors ([`crate::core::output`]) run it on one thread per block of rows (their blocks are
//! already parallel); the methods ([`crate::core::method`]) on all of rayon's threads.
//!
//! faer adds in another order than `ndarray`'s `matrixmultiply` or a BLAS, so a product may
//! differ from theirs in the last bits of an f32; its own order depends only on the shapes
//! and the CPU's kernels, not on the number of threads asked for by a caller that runs
//! sequential products side by side.

use faer::{Accum, MatMut, MatRef, Par};
use ndarray::{Array2, ArrayView2};

/// How many threads one product may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threads {
    /// The calling thread only (the caller runs products side by side).
    One,
    /// All of rayon's threads.
    All,
}

/// A row-major view as a faer matrix (copied first when it is not contiguous).
pub(crate) fn with_faer<R>(a: &ArrayView2<'_, f32>, f: impl FnOnce(MatRef<'_, f32>) -> R) -> R {
    let (r, c) = a.dim();
    if let Some(s) = a.as_slice() {
        f(MatRef::from_row_major_slice(s, r, c))
    } else {
        let owned = a.as_standard_layout();
        let s = owned.as_slice().unwrap_or(&[]);
        f(MatRef::from_row_major_slice(s, r, c))
    }
}

/// `out = a · bᵀ` (`[n, k] · [m, k]ᵀ = [n, m]`) in f32; `out` must be `[n, m]` and is
/// overwritten (left as it is when a dimension is zero, or when its shape is not `[n, m]`).
pub fn mul_t_into(
    a: &ArrayView2<'_, f32>,
    b: &ArrayView2<'_, f32>,
    out: &mut Array2<f32>,
    threads: Threads,
) {
    let (n, m) = (a.nrows(), b.nrows());
    if out.dim() != (n, m) || a.ncols() != b.ncols() {
        return;
    }
    if a.ncols() == 0 || n == 0 || m == 0 {
        out.fill(0.0);
        return;
    }
    let par = match threads {
        Threads::One => Par::Seq,
        Threads::All => Par::rayon(0),
    };
    with_faer(a, |fa| {
        with_faer(b, |fb| {
            if let Some(s) = out.as_slice_mut() {
                let dst = MatMut::from_row_major_slice_mut(s, n, m);
                faer::linalg::matmul::matmul(dst, Accum::Replace, fa, fb.transpose(), 1.0f32, par);
            }
        });
    });
}

/// `a · bᵀ` (`[n, k] · [m, k]ᵀ = [n, m]`) in f32, on `threads`.
#[must_use]
pub fn mul_t(a: &ArrayView2<'_, f32>, b: &ArrayView2<'_, f32>, threads: Threads) -> Array2<f32> {
    let mut out = Array2::<f32>::zeros((a.nrows(), b.nrows()));
    mul_t_into(a, b, &mut out, threads);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Axis, Slice};

    /// The product in f64, for comparison.
    fn naive(a: &ArrayView2<'_, f32>, b: &ArrayView2<'_, f32>) -> Array2<f64> {
        Array2::from_shape_fn((a.nrows(), b.nrows()), |(i, j)| {
            a.row(i)
                .iter()
                .zip(b.row(j))
                .map(|(&x, &y)| f64::from(x) * f64::from(y))
                .sum()
        })
    }

    #[test]
    fn products_on_one_thread_and_on_all_agree_with_f64_and_with_each_other() {
        let a = Array2::from_shape_fn((37, 300), |(i, j)| ((i * 7 + j * 13) % 29) as f32 - 14.0);
        let big = Array2::from_shape_fn((50, 300), |(i, j)| ((i * 5 + j * 3) % 31) as f32 * 0.25);
        // A strided view (every other row) is copied before the product.
        let b = big.slice_axis(Axis(0), Slice::new(0, None, 2));
        let one = mul_t(&a.view(), &b, Threads::One);
        let all = mul_t(&a.view(), &b, Threads::All);
        let exact = naive(&a.view(), &b);
        assert_eq!(one.dim(), (37, 25));
        // Small integers times quarters: every partial sum is exact in f32.
        for ((o, l), e) in one.iter().zip(&all).zip(&exact) {
            assert_eq!(f64::from(*o), *e);
            assert_eq!(o, l);
        }
    }

    #[test]
    fn a_wrong_output_shape_is_left_alone_and_empty_inner_dimensions_give_zeros() {
        let a = Array2::<f32>::ones((3, 4));
        let b = Array2::<f32>::ones((2, 4));
        let mut wrong = Array2::<f32>::from_elem((2, 2), 7.0);
        mul_t_into(&a.view(), &b.view(), &mut wrong, Threads::One);
        assert!(wrong.iter().all(|&v| v == 7.0));
        let mut out = Array2::<f32>::from_elem((3, 2), 7.0);
        let (e, f) = (Array2::<f32>::zeros((3, 0)), Array2::<f32>::zeros((2, 0)));
        mul_t_into(&e.view(), &f.view(), &mut out, Threads::All);
        assert!(out.iter().all(|&v| v == 0.0));
    }
}
