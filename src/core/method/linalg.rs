//! The linear algebra the methods share, in f32 on row-major `ndarray` matrices: products
//! (`A · Bᵀ`, `Xᵀ · X`) and GPTQ's Cholesky factor of an inverse, through faer (its GEMM and
//! Cholesky are blocked and run on rayon's threads). Float order differs from MKL's and
//! LAPACK's, which the callers' exactness statements allow for.

use faer::linalg::solvers::DenseSolveCore;
use faer::{Accum, MatMut, MatRef, Par, Side};
use ndarray::{Array2, ArrayView2};

use crate::core::gemm::{self, Threads, with_faer};

/// `a · bᵀ` (`[n, k] · [m, k]ᵀ = [n, m]`) in f32, on all of rayon's threads.
#[must_use]
pub fn mul_t(a: &ArrayView2<'_, f32>, b: &ArrayView2<'_, f32>) -> Array2<f32> {
    gemm::mul_t(a, b, Threads::All)
}

/// `xᵀ · x` (`[k, n]ᵀ · [k, n] = [n, n]`) in f32.
#[must_use]
pub fn gram(x: &ArrayView2<'_, f32>) -> Array2<f32> {
    let xt = x.t();
    mul_t(&xt, &xt)
}

/// `dst[:, ..] -= a · b` for row-major `dst` (`[n, m]`, rows `stride` apart), `a` `[n, k]`,
/// `b` `[k, m]` (rows `b.1` apart), all row-major slices. The product is formed in a
/// contiguous buffer first (both operands copied contiguous), then subtracted.
pub fn sub_mul(
    dst: &mut [f32],
    (n, m, stride): (usize, usize, usize),
    a: &[f32],
    k: usize,
    b: (&[f32], usize),
) {
    if n == 0 || m == 0 || k == 0 {
        return;
    }
    let (b, b_stride) = b;
    let bc: Vec<f32> = (0..k)
        .flat_map(|t| b[t * b_stride..t * b_stride + m].iter().copied())
        .collect();
    let mut p = vec![0.0f32; n * m];
    faer::linalg::matmul::matmul(
        MatMut::from_row_major_slice_mut(&mut p, n, m),
        Accum::Replace,
        MatRef::from_row_major_slice(&a[..n * k], n, k),
        MatRef::from_row_major_slice(&bc, k, m),
        1.0f32,
        Par::rayon(0),
    );
    for (r, pr) in p.chunks_exact(m).enumerate() {
        for (d, &v) in dst[r * stride..r * stride + m].iter_mut().zip(pr) {
            *d -= v;
        }
    }
}

/// Why a matrix has no Cholesky factor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotPositiveDefinite;

/// The upper Cholesky factor `U` of `h⁻¹` (`h⁻¹ = Uᵀ U`), for a symmetric positive definite
/// `h`: `torch.linalg.cholesky(torch.cholesky_inverse(torch.linalg.cholesky(h)), upper=True)`,
/// as GPTQ computes it.
pub fn inverse_cholesky_upper(h: &Array2<f32>) -> Result<Array2<f32>, NotPositiveDefinite> {
    let n = h.nrows();
    let inv = with_faer(&h.view(), |fh| {
        fh.llt(Side::Lower)
            .map(|l| l.inverse())
            .map_err(|_| NotPositiveDefinite)
    })?;
    let l = inv.llt(Side::Lower).map_err(|_| NotPositiveDefinite)?;
    let l = l.L();
    let mut u = Array2::<f32>::zeros((n, n));
    for i in 0..n {
        for j in i..n {
            u[(i, j)] = l[(j, i)];
        }
    }
    Ok(u)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn products_and_the_inverse_factor() {
        let a = array![[1.0f32, 2.0], [3.0, 4.0], [5.0, 6.0]];
        let b = array![[1.0f32, 0.0], [0.0, 1.0]];
        assert_eq!(mul_t(&a.view(), &b.view()), a);
        assert_eq!(gram(&a.view()), array![[35.0f32, 44.0], [44.0, 56.0]]);
        let h = array![[4.0f32, 2.0], [2.0, 3.0]];
        let u = inverse_cholesky_upper(&h).unwrap();
        // Uᵀ U = h⁻¹ = [[3, -2], [-2, 4]] / 8
        let back = u.t().dot(&u);
        let want = array![[0.375f32, -0.25], [-0.25, 0.5]];
        for (x, y) in back.iter().zip(&want) {
            assert!((x - y).abs() < 1e-6);
        }
        assert_eq!(u[(1, 0)], 0.0);
        assert!(inverse_cholesky_upper(&array![[1.0f32, 2.0], [2.0, 1.0]]).is_err());
        let mut d = vec![1.0f32; 6];
        sub_mul(&mut d, (2, 2, 3), &[1.0, 2.0], 1, (&[1.0, 1.0], 2));
        assert_eq!(d, vec![0.0, 0.0, 1.0, -1.0, -1.0, 1.0]);
    }
}
