//! The MSE search's choice settled from approximate sums, with proven bounds on how far the
//! reference's ordered sums can be from them.

use rayon::prelude::*;

use super::{CANDIDATES, PARALLEL, Start};
use crate::core::kernel::segment::{APPROX_REL, Consts, Kind, LANES, approx_squares};
use crate::core::simd::vectorised;

/// [`search`](super::search)'s choice settled from approximate sums, when they settle it: `None` leaves it
/// to the exact search.
///
/// The candidates go in `order` (the least bounds first), each skipped when its bound (an
/// exact lower bound on its whole sum: `bounds[k]`, then its partial sum continued with its
/// tail, see [`Tail`](super::Tail)) is above the least upper bound of a finished candidate; otherwise
/// its squared errors of the values past the head go in steps through [`approx_squares`],
/// from its exact ordered sum of the head (`head[k]`), and [`Slack`] turns each partial sum
/// into a lower bound on its whole ordered sum and a finished one into an interval holding
/// it. The choice is settled when one finished candidate's upper bound is below every other
/// finished candidate's lower bound: its ordered sum is then the only least (every skipped
/// or dropped candidate's sum is above a finished one's upper bound, so above that least
/// too), and so the first least, the reference's choice. Near ties (sums within about
/// `2^-16` of each other) are left to the exact search, as are sums that do not fit in `f32`
/// and machines without AVX2.
///
/// Most candidates are skipped, and a few finish, each over its values eight at a time in
/// `f32`: about half the operations of the exact sums per candidate and value, and no chain
/// of ordered `f64` additions to wait on. A block as large as a tensor sums each step in
/// parts on the pool.
#[expect(clippy::inline_always, reason = "see search")]
#[inline(always)]
pub(in crate::core::clip) fn approx_search(
    kind: Kind,
    consts: &[Consts; CANDIDATES],
    start: &Start,
    xs: &[f32],
) -> Option<usize> {
    let Start {
        tail,
        part,
        sums: head,
        bounds,
        order,
    } = start;
    let part = *part;
    let n = xs.len();
    let rest = xs.get(part..)?;
    let slack = Slack::new(n);
    // Each finished candidate's interval, and the least upper bound so far.
    let mut finished = [(0.0f64, f64::INFINITY); CANDIDATES];
    let mut done = [false; CANDIDATES];
    let mut least = f64::INFINITY;
    let mut finish = |k: usize, est: f64, least: &mut f64| {
        finished[k] = (slack.lower(est), slack.upper(est));
        done[k] = true;
        *least = least.min(finished[k].1);
    };
    let step = rest.len().div_ceil(APPROX_STEPS).max(4 * LANES);
    if step >= 2 * PARALLEL {
        // A block as large as a tensor: the first candidate alone, then the others side
        // by side (see `side_by_side`), in finer steps.
        let step = rest.len().div_ceil(WIDE_STEPS).max(2 * PARALLEL);
        let mut running = vec![order[0]];
        for first in [true, false] {
            if !first {
                running.clear();
                running.extend(order[1..].iter().copied().filter(|&k| bounds[k] <= least));
            }
            let a = side_by_side(
                kind,
                consts,
                start,
                (rest, step),
                (slack, least),
                &mut running,
            )?;
            for &k in &running {
                finish(k, head[k] + a[k], &mut least);
            }
        }
    } else {
        for &k in order {
            if bounds[k] > least {
                continue;
            }
            let (mut a, mut at, mut dropped) = (0.0, part, false);
            for values in rest.chunks(step) {
                a += approx_squares(kind, &consts[k], values)?;
                at += values.len();
                if at < n && slack.lower(tail.bound(k, head[k] + a, at)) > least {
                    dropped = true;
                    break;
                }
            }
            if !dropped {
                finish(k, head[k] + a, &mut least);
            }
        }
    }
    // The finished candidate with the least upper bound, if every other one is above it.
    let best = (0..CANDIDATES)
        .filter(|&k| done[k])
        .min_by(|&a, &b| finished[a].1.total_cmp(&finished[b].1))?;
    let upper = finished[best].1;
    (0..CANDIDATES)
        .filter(|&k| done[k] && k != best)
        .all(|k| finished[k].0 > upper)
        .then_some(best)
}

/// [`approx_search`]'s candidates `running` on a block as large as a tensor, from the
/// search's `start`, over the values past its head (`rest`) in steps of `step` values: their
/// approximate sums past the head (`None` when one is not finite). A candidate is dropped
/// from `running` after any step whose bound shows that it cannot win against `least` (the
/// least upper bound of a finished candidate), as in the loop of `approx_search`.
///
/// Each step goes to the pool in parts of [`PARALLEL`] values, and each part goes through
/// every running candidate while it is in cache: one read of the block from memory per
/// step for all of them, where a candidate at a time would read the whole block once per
/// candidate (64 MiB for a 4096x4096 tensor, longer than the arithmetic on it). The first
/// candidate of the search's order goes alone, to set `least` for the others. The sums are
/// the same approximations in another order of additions: the bounds allow for that (see
/// [`Slack`]), and the choice is settled only by bounds that hold for any order.
fn side_by_side(
    kind: Kind,
    consts: &[Consts; CANDIDATES],
    start: &Start,
    (rest, step): (&[f32], usize),
    (slack, least): (Slack, f64),
    running: &mut Vec<usize>,
) -> Option<[f64; CANDIDATES]> {
    let n = start.part + rest.len();
    let mut a = [0.0f64; CANDIDATES];
    let mut at = start.part;
    for values in rest.chunks(step) {
        if running.is_empty() {
            break;
        }
        let candidates = &running[..];
        let sums = values
            .par_chunks(PARALLEL)
            .map(|part| {
                vectorised(
                    #[inline(always)]
                    || {
                        let mut sums = [0.0f64; CANDIDATES];
                        for &k in candidates {
                            sums[k] = approx_squares(kind, &consts[k], part)?;
                        }
                        Some(sums)
                    },
                )
            })
            .try_reduce(
                || [0.0f64; CANDIDATES],
                |mut x, y| {
                    for (x, y) in x.iter_mut().zip(y) {
                        *x += y;
                    }
                    Some(x)
                },
            )?;
        for &k in candidates {
            a[k] += sums[k];
        }
        at += values.len();
        if at < n {
            running
                .retain(|&k| slack.lower(start.tail.bound(k, start.sums[k] + a[k], at)) <= least);
        }
    }
    Some(a)
}

/// Steps of the values past the head in which [`approx_search`] goes over a candidate,
/// dropping it after any step whose bound shows that it cannot win.
const APPROX_STEPS: usize = 8;

/// [`APPROX_STEPS`] on a block as large as a tensor (each step still at least two parts
/// for the pool). Most of its candidates finish within a few tenths of the best one's sum,
/// so each is dropped only late in the block, and the steps' length is what each wastes:
/// in 32 steps the candidates of a 4096 x 4096 tensor of rows whose spreads differ by
/// decades go over 10 % fewer values than in 8.
const WIDE_STEPS: usize = 32;

/// Bounds on a candidate's ordered `f64` sum of squares over a block of `n` values, from an
/// estimate: its exact ordered sum over some of the first values, plus an approximation of
/// its sum over the values after them ([`approx_squares`], relative error at most
/// [`APPROX_REL`] from the real sum, give or take `n·2^-149`), plus (for a lower bound of a
/// partial sum) its exact terms of some later values.
///
/// Let `R` be the real sum of the candidate's real squared errors, `g = (n + 2)·2^-53·1.01`.
/// The ordered sum adds `n` terms, each the real square within `(1 ± 2^-53)^2`, so it lies
/// within `R·(1 ± g)`; so does its exact partial sum of the first values (of their real
/// sum), and its sum of the later terms (of theirs; at most 32 terms, added after the
/// rest). The estimate's real counterpart (the part of `R` it covers, all of it for a
/// finished candidate, at most `R` otherwise) so lies within `est·(1 ± (APPROX_REL + g))`,
/// give or take `n·2^-149`, and the ordered sum within `(1 ± g)` of `R`. `rel` is
/// `APPROX_REL + 2g + 2^-30`, whose last term covers the products of the small terms and
/// the rounding of the estimate's few `f64` additions and of these bounds' own arithmetic.
#[derive(Clone, Copy)]
pub(in crate::core::clip) struct Slack {
    rel: f64,
    abs: f64,
}

impl Slack {
    pub(in crate::core::clip) fn new(n: usize) -> Self {
        /// `2^-53`.
        const U: f64 = f64::EPSILON / 2.0;
        /// `2^-149`, the least positive `f32`.
        const TINY: f64 = 1.401_298_464_324_817e-45;
        /// `2^-30`.
        const MARGIN: f64 = 1.0 / 1_073_741_824.0;
        let g = (n as f64 + 2.0) * U * 1.01;
        Self {
            rel: APPROX_REL + 2.0 * g + MARGIN,
            abs: n as f64 * TINY,
        }
    }

    /// A lower bound on the ordered sum whose estimate is `est` (or on the whole sum, for
    /// the estimate of a part of it).
    pub(in crate::core::clip) fn lower(self, est: f64) -> f64 {
        (est - self.abs) * (1.0 - self.rel)
    }

    /// An upper bound on the ordered sum whose estimate is `est`, for a finished candidate.
    pub(in crate::core::clip) fn upper(self, est: f64) -> f64 {
        (est + self.abs) * (1.0 + self.rel)
    }
}
