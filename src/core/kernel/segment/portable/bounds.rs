//! What a block's ends say of all its values (its codes are a monotone function of them):
//! whether no code is clamped ([`within`]), whether every error is exact in `f32`
//! ([`exact`]), whether a row has one code ([`one_code`]).

#![expect(
    clippy::inline_always,
    reason = "inlined into the loop's monomorphised body (see the parent module)"
)]

use crate::core::kernel::segment::kind::DIV;
use crate::core::kernel::segment::{ConstLanes, Consts, LANES};

use super::value::{clamp, unclamped};

/// Whether no value of a block whose constants are `k` and whose values lie in `lo..=hi`
/// has a code a clamp moves: the unclamped codes of `lo` and `hi` are both in
/// `qmin..=qmax`, and the scale is positive, so that every other value's unclamped code
/// lies between those two (each step of [`unclamped`] is monotone; see
/// [`super::one_code`]). NaN in any of them fails a comparison.
#[inline(always)]
pub(crate) fn within<const E: u8, const R: u8, const O: bool>(
    k: &Consts,
    lo: f32,
    hi: f32,
) -> bool {
    let positive = if E == DIV {
        k.code_scale > 0.0
    } else {
        k.recip > 0.0
    };
    positive && unclamped::<E, R, O>(k, lo) >= k.qmin && unclamped::<E, R, O>(k, hi) <= k.qmax
}

/// [`within`] for each lane of `k` (lane `j`'s block with values in `lo[j]..=hi[j]`).
#[inline(always)]
#[expect(
    clippy::needless_bitwise_bool,
    reason = "each lane's test without a branch, so that the lanes stay in one register"
)]
pub(crate) fn lanes_within<const E: u8, const R: u8, const O: bool>(
    k: &ConstLanes<LANES>,
    lo: &[f32; LANES],
    hi: &[f32; LANES],
) -> [bool; LANES] {
    let (u_lo, u_hi) = (k.unclamped::<E, R, O>(lo), k.unclamped::<E, R, O>(hi));
    std::array::from_fn(|j| {
        let positive = if E == DIV {
            k.code_scale[j] > 0.0
        } else {
            k.recip[j] > 0.0
        };
        positive & (u_lo[j] >= k.qmin) & (u_hi[j] <= k.qmax)
    })
}

/// Whether every error of a block whose constants are `k` and whose values lie in `lo..=hi`
/// is exact in `f32` as [`blocks_exact`](crate::core::kernel::segment::portable::blocks_exact) forms it with the clamp, `|clamp(r)·s − x|`: the
/// instance divides by the scale without a float offset, the scale is positive, and on each
/// side either no code is clamped (the test of [`within`]) or every clamped value's error is
/// exact. A clamped code's reconstruction is `m = (c − z)·s` rounded, for `c` the nearer
/// bound (`c − z` an exact integer, see [`consts_lanes`](crate::core::kernel::segment::constants::consts_lanes)). Where
/// `c − z` is 0 the error is `−x`. Where it is at least 1 on the high side (at most −1 on
/// the low), a value clamped there has a quotient beyond `c − z`, so it lies beyond
/// `(c − z)·s`, more than `m/2` from zero; with the block's end `hi ≤ 2m` (`lo ≥ 2m`) every
/// such value is within a factor of two of `m`, and Sterbenz's lemma makes the difference
/// exact. The values no clamp moves are exact as in `avx2::chunk_magnitudes`. Otherwise
/// (a zero point beyond the bound, ends more than twice the reconstruction, NaN) false.
#[inline(always)]
pub(crate) fn exact<const E: u8, const R: u8, const O: bool>(k: &Consts, lo: f32, hi: f32) -> bool {
    exact_lane::<E, R, O>(
        k,
        lo,
        hi,
        [unclamped::<E, R, O>(k, lo), unclamped::<E, R, O>(k, hi)],
    )
}

/// [`exact`] for each lane of `k` (lane `j`'s block with values in `lo[j]..=hi[j]`).
#[inline(always)]
pub(crate) fn lanes_exact<const E: u8, const R: u8, const O: bool>(
    k: &ConstLanes<LANES>,
    lo: &[f32; LANES],
    hi: &[f32; LANES],
) -> [bool; LANES] {
    let (u_lo, u_hi) = (k.unclamped::<E, R, O>(lo), k.unclamped::<E, R, O>(hi));
    std::array::from_fn(|j| exact_lane::<E, R, O>(&k.get(j), lo[j], hi[j], [u_lo[j], u_hi[j]]))
}

/// [`exact`] given the unclamped codes of `lo` and `hi`, `u`.
#[inline(always)]
#[expect(
    clippy::needless_bitwise_bool,
    reason = "each side's test without a branch, so that the lanes stay in one register"
)]
pub(super) fn exact_lane<const E: u8, const R: u8, const O: bool>(
    k: &Consts,
    lo: f32,
    hi: f32,
    [u_lo, u_hi]: [f32; 2],
) -> bool {
    if E != DIV || O {
        return false;
    }
    // Integers f32 holds exactly (see `consts_lanes`).
    let (bottom, top) = (k.qmin - k.zero_f, k.qmax - k.zero_f);
    let (m_lo, m_hi) = (bottom * k.scale, top * k.scale);
    let high = (u_hi <= k.qmax) | (top == 0.0) | ((m_hi > 0.0) & (hi <= 2.0 * m_hi));
    let low = (u_lo >= k.qmin) | (bottom == 0.0) | ((m_lo < 0.0) & (lo >= 2.0 * m_lo));
    (k.code_scale > 0.0) & high & low
}

/// [`super::one_code`] for one instance.
#[inline(always)]
pub(crate) fn one_code<const E: u8, const R: u8, const O: bool>(
    blocks: &[Consts],
    per: usize,
    lo: &[f32],
    hi: &[f32],
) -> bool {
    let per = per.max(1);
    let mut first = None;
    for (i, (&l, &h)) in lo.iter().zip(hi).enumerate() {
        let Some(k) = blocks.get(i / per).or(blocks.last()) else {
            return false;
        };
        let a = clamp(k, unclamped::<E, R, O>(k, l));
        let b = clamp(k, unclamped::<E, R, O>(k, h));
        let c = *first.get_or_insert(a);
        if a != c || b != c {
            return false;
        }
    }
    true
}
