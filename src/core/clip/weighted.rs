//! The importance-weighted MSE search ([`Clipping::MseWeighted`]): quantscope's own clipping
//! (no library clips this way), for a layer whose input columns are not equally loud.
//!
//! The candidates and the tie rule are [`Clipping::Mse`]'s: the block's min-max range shrunk
//! by 1, 0.98, … 0.2, the first candidate whose error is least kept (a sum replaces the
//! best only when strictly below it). The error of a candidate is the importance-weighted
//! squared error `Σ a_j (x − x̂)²` over the block's values, `a_j` the importance of the
//! value's column, each value's error formed as the MSE search forms it
//! (`f64(x̂) − f64(x)`, squared in `f64`), multiplied by `f64(a_j)` and added value by value
//! in the block's order in `f64`. With every `a_j` equal to 1 the sums are the MSE search's
//! own, so the choice is the same.
//!
//! Every candidate goes through the reference [`Quantizer`] value by value: no lanes and no
//! approximate sums, so it is slower than the MSE search. A candidate stops as soon as its
//! partial sum reaches the best so far (its terms are never negative, so its whole sum could
//! not be strictly below it); a block as large as a tensor sums the candidates on the pool,
//! each in full.
//!
//! [`Clipping::MseWeighted`]: crate::core::config::Clipping::MseWeighted
//! [`Clipping::Mse`]: crate::core::config::Clipping::Mse

use rayon::prelude::*;

use super::mse::{CANDIDATES, PARALLEL, first_least, shrink};
use crate::core::config::Config;
use crate::core::kernel::Quantizer;
use crate::core::params::{BlockParams, BlockStats, RealRange};

/// The parameters of the block whose values are `xs` and whose statistics are `stats`,
/// clipped by the importance-weighted MSE search: `weight(i)` is the importance of value
/// `i`'s column (finite, not negative), `form` turns a range into parameters.
pub(crate) fn weighted_params<W, F>(
    config: &Config,
    xs: &[f32],
    weight: W,
    stats: &BlockStats,
    (qmin, qmax): (i32, i32),
    form: F,
) -> BlockParams
where
    W: Fn(usize) -> f32 + Sync,
    F: Fn(RealRange) -> BlockParams,
{
    let full = RealRange::of(stats);
    let candidates: [BlockParams; CANDIDATES] =
        std::array::from_fn(|k| form(full.shrunk(shrink(k))));
    let sum = |k: usize, stop: f64| {
        let q = Quantizer::new(config, &candidates[k], qmin, qmax);
        let mut s = 0.0f64;
        for (i, &x) in xs.iter().enumerate() {
            let e = f64::from(q.dequantize(q.code(x).0)) - f64::from(x);
            s += f64::from(weight(i)) * (e * e);
            if s >= stop {
                break;
            }
        }
        s
    };
    if xs.len() >= PARALLEL {
        let all: Vec<f64> = (0..CANDIDATES)
            .into_par_iter()
            .map(|k| sum(k, f64::INFINITY))
            .collect();
        let mut sums = [0.0f64; CANDIDATES];
        sums.copy_from_slice(&all);
        return candidates[first_least(&sums, 0..CANDIDATES)];
    }
    let (mut best, mut best_sse) = (0, f64::INFINITY);
    for k in 0..CANDIDATES {
        let s = sum(k, best_sse);
        if s < best_sse {
            best_sse = s;
            best = k;
        }
    }
    candidates[best]
}
