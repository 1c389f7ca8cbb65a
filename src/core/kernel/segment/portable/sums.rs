//! The MSE search's ordered `f64` sums of squared errors, lane by lane: eight candidates
//! over one block's values ([`candidate_sums`]), or eight blocks side by side
//! ([`block_sums`]).

#![expect(
    clippy::inline_always,
    reason = "inlined into the loop's monomorphised body (see the parent module)"
)]

use crate::core::kernel::segment::{ConstLanes, Consts, LANES};

/// [`super::candidate_sums`] for one instance: every lane's constants applied to the same
/// value, one value at a time.
#[inline(always)]
pub(crate) fn candidate_sums<const E: u8, const R: u8, const O: bool>(
    k: &[Consts; LANES],
    xs: &[f32],
    sums: &mut [f64; LANES],
) {
    let soa = ConstLanes::of(k);
    let mut s = *sums;
    for &x in xs {
        let x_hat = soa.x_hat::<E, R, O>(&[x; LANES]);
        let xd = f64::from(x);
        for j in 0..LANES {
            let e = f64::from(x_hat[j]) - xd;
            s[j] += e * e;
        }
    }
    *sums = s;
}

/// [`super::block_sums`] for one instance: lane `j`'s constants applied to lane `j`'s
/// value, one row of lanes at a time.
#[inline(always)]
pub(crate) fn block_sums<const E: u8, const R: u8, const O: bool>(
    soa: &ConstLanes<LANES>,
    xs: &[[f32; LANES]],
    sums: &mut [f64; LANES],
) {
    let mut s = *sums;
    for x in xs {
        let x_hat = soa.x_hat::<E, R, O>(x);
        for j in 0..LANES {
            let e = f64::from(x_hat[j]) - f64::from(x[j]);
            s[j] += e * e;
        }
    }
    *sums = s;
}
