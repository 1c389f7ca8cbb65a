//! The MSE search of eight short blocks at once, one block per lane.

use super::super::Scratch;
use super::{CANDIDATES, shrink};
use crate::core::kernel::segment::{Kind, LANES, block_sums, block_sums_exact, consts8_lanes};
use crate::core::params::{ParamCalc, ScaleRule};
use crate::core::simd::{Avx2, transpose8};

/// Eight blocks' values (all of one length) into `rows`, row `i` holding each block's value
/// `i`: eight rows at a time by an 8 x 8 transposition, then the rest one by one.
#[expect(clippy::inline_always, reason = "see clipped_params_in")]
#[inline(always)]
fn across<'r>(
    simd: Avx2,
    xs: &[&[f32]; LANES],
    rows: &'r mut Vec<[f32; LANES]>,
) -> &'r [[f32; LANES]] {
    let n = xs[0].len();
    rows.clear();
    let whole = n - n % LANES;
    for i in (0..whole).step_by(LANES) {
        let eight: [[f32; LANES]; LANES] = std::array::from_fn(|j| {
            let mut run = [0.0; LANES];
            run.copy_from_slice(&xs[j][i..i + LANES]);
            run
        });
        rows.extend(transpose8(simd, eight));
    }
    rows.extend((whole..n).map(|i| std::array::from_fn(|j| xs[j][i])));
    rows
}

/// Blocks of at most this many values (and at least 2) can be searched eight at a time by
/// [`mse_lanes`].
pub(crate) const LANE_BLOCK: usize = 256;

/// Values per step of a candidate's sums in [`mse_lanes`], after which it is dropped when no
/// block can take it any more.
const LANE_STEP: usize = 32;

/// Values per block from which [`mse_lanes`] tests each candidate for errors exact in `f32`
/// ([`block_sums_exact`]); shorter blocks take [`block_sums`] without the test.
const EXACT_BLOCK: usize = 32;

/// The MSE search of eight blocks at once, lane `j` for block `j`, whose values are `xs[j]`
/// (all of one length, from 2 to [`LANE_BLOCK`]) and whose statistics give the range `lo[j]`,
/// `hi[j]`, `ex[j]` (the block's least and greatest values and its extreme): the range each
/// block's first least candidate gives, as [`search`](super::search) finds it; `None` when a candidate of
/// some block is not for the specialised loop, or the blocks are not of one such length (the
/// caller then searches block by block).
///
/// Every candidate's parameters are formed for the eight blocks together, and its sums for
/// the eight blocks go over the values together, each lane's sum added value by value in the
/// reference's order. Candidates are taken in order, each kept by a block only when its sum
/// is strictly below the block's best so far (the first least, as the reference keeps it).
/// A later candidate is first bounded by its squared errors of each block's largest and
/// smallest values (a lower bound on its whole sum: see [`small_search`](super::small_search)), and quantized over
/// the blocks only when that bound is below the best sum of at least one of them; its sums
/// then go [`LANE_STEP`] values at a time, and stop when every block's partial sum is at
/// least its best (sums of squares never decrease, so no block could keep it).
#[expect(clippy::inline_always, reason = "see search")]
#[inline(always)]
pub(crate) fn mse_lanes(
    scratch: &mut Scratch,
    calc: &ParamCalc,
    kind: Kind,
    xs: &[&[f32]; LANES],
    [lo, hi, ex]: [&[f32; LANES]; 3],
    (qmin, qmax): (i32, i32),
) -> Option<[[f32; LANES]; 3]> {
    let n = xs[0].len();
    if !(2..=LANE_BLOCK).contains(&n) || xs.iter().any(|b| b.len() != n) {
        return None;
    }
    let simd = Avx2::detect();
    let rows = across(simd, xs, &mut scratch.rows);
    let extremes = [*hi, *lo];
    let mut best = [0usize; LANES];
    let mut best_sse = [f64::INFINITY; LANES];
    // Each block's largest magnitude, a value of the block.
    let far: [f32; LANES] = std::array::from_fn(|j| lo[j].abs().max(hi[j].abs()));
    let nested = nested_reach(calc, &far);
    // A loop rather than arrays built by closures over candidates (see lane_candidates).
    for k in 0..CANDIDATES {
        let a = shrink(k);
        let clo: [f32; LANES] = std::array::from_fn(|j| lo[j] * a);
        let chi: [f32; LANES] = std::array::from_fn(|j| hi[j] * a);
        let cex: [f32; LANES] = std::array::from_fn(|j| ex[j] * a);
        let p8 = calc.lanes8::<false>(simd, &clo, &chi, &cex);
        let (k8, fast) = consts8_lanes(simd, kind, &p8, lo, hi, qmin, qmax);
        if !fast.iter().all(|&f| f) {
            return None;
        }
        if nested {
            // Every reconstruction of this candidate and of every later one lies within
            // `reach` of 0, so each such candidate's sum holds the square of at least
            // `far - reach` (see `nested_reach`): once that is at least every block's best,
            // no candidate from here on can be any block's first least.
            let reach = k8.reach();
            let floor: [f64; LANES] = std::array::from_fn(|j| {
                let d = (f64::from(far[j]) - f64::from(reach[j])).max(0.0);
                d * d
            });
            if floor.iter().zip(&best_sse).all(|(f, b)| f >= b) {
                break;
            }
        }
        if k > 0 {
            let mut bound = [0.0f64; LANES];
            block_sums(kind, &k8, &extremes, &mut bound);
            if bound.iter().zip(&best_sse).all(|(b, s)| b >= s) {
                continue;
            }
        }
        let mut sums = [0.0f64; LANES];
        let mut dropped = false;
        // Every error exact in f32 (with the clamp), where the blocks are long enough for
        // the test to pay: the sums formed with fewer operations per value.
        let exact = n >= EXACT_BLOCK && k8.exact_bits(kind, lo, hi) == u8::MAX;
        for step in rows.chunks(LANE_STEP) {
            if exact {
                block_sums_exact(kind, &k8, step, &mut sums);
            } else {
                block_sums(kind, &k8, step, &mut sums);
            }
            if k > 0 && sums.iter().zip(&best_sse).all(|(s, b)| s >= b) {
                dropped = true;
                break;
            }
        }
        if dropped {
            continue;
        }
        for j in 0..LANES {
            if sums[j] < best_sse[j] {
                best_sse[j] = sums[j];
                best[j] = k;
            }
        }
    }
    let range = |v: &[f32; LANES]| std::array::from_fn(|j| v[j] * shrink(best[j]));
    Some([range(lo), range(hi), range(ex)])
}

/// Whether the candidates of blocks whose values reach at most `far[j]` in magnitude (as
/// [`mse_lanes`] forms them) reconstruct within ranges that shrink from one candidate to the
/// next, so that a candidate's largest reconstruction in magnitude ([`ConstLanes::reach`])
/// bounds every later candidate's.
///
/// That holds for the symmetric rules: each candidate's scale is its range's magnitude (or
/// signed extreme) shrunk by a factor that falls from one candidate to the next, divided by
/// a fixed denominator, in rounded arithmetic that is monotone at every step; the
/// degenerate rules that keep a zero scale or raise a small one to a floor, and the rounding
/// to the scale's storage type, are monotone too; the zero point and the clamped codes are
/// the same for every candidate, and `reach` takes the farther of the two ends, so a scale
/// whose sign changes from one candidate to the next (the signed-extreme rules, on blocks
/// whose two ends have nearly the same magnitude) still reaches no farther. The rules that
/// replace a degenerate scale by 1 would break that, so under them every block must reach
/// at least `2^-100`: the smallest candidate's raw scale is then at least
/// `0.2·2^-100 / 2^16`, far above where they apply (below `f32::MIN_POSITIVE`) for every
/// code range of up to 16 bits. Asymmetric zero points move with rounding from one
/// candidate to the next, so asymmetric blocks are not bounded this way.
///
/// The bound itself: for the value `x` of largest magnitude `far` of a block, a candidate
/// whose reconstructions all lie within `reach` of 0 reconstructs `x` at least
/// `far − reach` away (when positive), and the reference's error of `x`, formed in `f64`
/// from the two `f32`s, is rounded from an exact difference at least that large, so its
/// square (rounding is monotone) is at least that of `far − reach` formed the same way; a
/// candidate's ordered sum of squares is at least any one of its terms.
///
/// [`ConstLanes::reach`]: crate::core::kernel::segment::ConstLanes::reach
fn nested_reach(calc: &ParamCalc, far: &[f32; LANES]) -> bool {
    /// `2^-100`.
    const SMALLEST: f32 = 7.888_609e-31;
    if matches!(calc.rule(), ScaleRule::Asymmetric { .. }) || calc.float_min() {
        return false;
    }
    !calc.degenerate_is_one() || far.iter().all(|&f| f >= SMALLEST)
}
