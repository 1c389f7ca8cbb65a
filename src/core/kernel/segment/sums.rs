//! The MSE search's sums of squared errors: each candidate's ordered `f64` sum, as the
//! reference forms it value by value ([`candidate_sums`], [`block_sums`]), and a bounded
//! approximation in `f32` ([`approx_squares`]).

use super::kind::dispatch;
use super::{ConstLanes, Consts, Kind, LANES};

/// The squared errors of `xs` under [`LANES`] candidate blocks (lane `j` for the block whose
/// constants are `k[j]`), each added to `sums[j]` one value after another in `f64`, in the
/// order of `xs`: for each lane, the sum the reference forms value by value with
/// [`Quantizer`](crate::core::kernel::Quantizer). Every candidate must be prepared for the specialised loop
/// ([`Prepared::is_fast`](crate::core::kernel::segment::prepared::Prepared::is_fast)) under `kind`, for a block holding every value of `xs`.
#[inline(always)]
pub(crate) fn candidate_sums(kind: Kind, k: &[Consts; LANES], xs: &[f32], sums: &mut [f64; LANES]) {
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V3::try_new() {
        dispatch!(@ avx2, kind, candidate_sums, [], (simd, k, xs, sums));
        return;
    }
    dispatch!(kind, candidate_sums, [], (k, xs, sums));
}

/// An approximation of the sum of the squared errors of `xs` under the block whose
/// constants are `k` ([`Prepared::is_fast`](crate::core::kernel::segment::prepared::Prepared::is_fast) under `kind`, for a block holding every value of
/// `xs`), formed with AVX2 in `f32` and in no fixed order; `None` without AVX2, or when it is
/// not finite.
///
/// Each reconstruction is the reference's own ([`Quantizer`](crate::core::kernel::Quantizer)'s `f32` value); its error
/// from the value is taken in `f32` (relative error at most `u = 2^-24`, none when the
/// difference is subnormal), squared in `f32` (at most `u` more, and at most `2^-150` in
/// absolute terms where the square is subnormal), and the squares are added in `f32` sums of
/// at most [`APPROX_TERMS`] terms each (at most `(APPROX_TERMS - 1)·u/(1 - …)` more), which
/// are then widened and added in `f64`. So the result lies within a relative
/// [`APPROX_REL`] of the exact real sum of squares, give or take `xs.len()·2^-149`:
/// `clip::mse::approx::Slack` turns that into bounds on the reference's ordered `f64` sum.
#[inline(always)]
pub(crate) fn approx_squares(kind: Kind, k: &Consts, xs: &[f32]) -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V3::try_new() {
        let a: f64 = dispatch!(@ avx2, kind, approx_squares, [], (simd, k, xs));
        return a.is_finite().then_some(a);
    }
    let _ = (kind, k, xs);
    None
}

/// Terms of each `f32` sum of [`approx_squares`], at most (each lane of its four sums is
/// widened to `f64` after this many chunks).
pub(crate) const APPROX_TERMS: usize = 64;

/// [`approx_squares`]'s relative error, at most: `2^-17`, above the `(1 + u)^3·(1 +
/// γ(APPROX_TERMS - 1)) - 1 ≈ 66.1·u ≈ 3.9e-6` its steps allow (`u = 2^-24`).
pub(crate) const APPROX_REL: f64 = 1.0 / 131_072.0;

/// The squared errors of [`LANES`] blocks (lane `j` for the block whose constants are
/// `k[j]`), whose values are lane `j` of each row of `xs`, each added to `sums[j]` one value
/// after another in `f64`: for each lane, the sum the reference forms value by value with
/// [`Quantizer`](crate::core::kernel::Quantizer). Every block must be prepared for the specialised loop under `kind`.
#[inline(always)]
pub(crate) fn block_sums(
    kind: Kind,
    k: &ConstLanes<LANES>,
    xs: &[[f32; LANES]],
    sums: &mut [f64; LANES],
) {
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V3::try_new() {
        dispatch!(@ avx2, kind, block_sums, [], (simd, k, xs, sums));
        return;
    }
    dispatch!(kind, block_sums, [], (k, xs, sums));
}

/// [`block_sums`] for blocks whose every error is exact in `f32` with the clamp: every lane
/// of `k` passes [`ConstLanes::exact_bits`] under `kind` for ends that hold every value of
/// its lane of `xs`. Each error is then formed in `f32` and only widened for its square
/// and the sum (the error is the `f64` difference the reference forms, see
/// `avx2::chunk_magnitudes`): the same sums bit for bit, with fewer operations per value.
/// Without AVX2 this is [`block_sums`].
#[inline(always)]
pub(crate) fn block_sums_exact(
    kind: Kind,
    k: &ConstLanes<LANES>,
    xs: &[[f32; LANES]],
    sums: &mut [f64; LANES],
) {
    debug_assert!(kind.exact_errors());
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V3::try_new() {
        dispatch!(@ avx2, kind, block_sums_exact, [], (simd, k, xs, sums));
        return;
    }
    block_sums(kind, k, xs, sums);
}
