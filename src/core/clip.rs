//! A block's parameters with its clipping applied: min-max, percentile or MSE search.
//!
//! Clipping chooses the real range the parameters are formed from. This module holds the
//! entry points ([`clipped_params`], [`clipped_params_in`] and the kernel's `params`) and the
//! buffers they share ([`Scratch`]); each way of clipping is a module of its own:
//! `percentile` (numpy's quantiles of the block, through the order statistics of `order`
//! and, for the ladder's rungs, the runs' largest two of `tops`), `mse` (the search over 41
//! shrunk ranges, exact to the reference's ordered sums) and `weighted` (the
//! importance-weighted search). The MSE search quantizes the block under each candidate, so
//! this sits above both [`crate::core::params`] and [`crate::core::kernel`].

use crate::core::config::{Clipping, Config};
use crate::core::kernel::segment::{Consts, Kind, LANES};
use crate::core::params::{BlockParams, BlockStats, ParamCalc, RealRange};

mod mse;
mod order;
mod percentile;
mod tops;
mod weighted;

use mse::{CANDIDATES, fast_choice, lane_candidates, mse_choice, shrink};
pub(crate) use mse::{LANE_BLOCK, mse_lanes};
use percentile::percentile_range;
pub(crate) use percentile::{Ranks, percentile_clipped, percentile8};
pub(crate) use tops::Tops;
pub(crate) use weighted::weighted_params;

/// Buffers of the clipping searches, kept from block to block (one per worker).
#[derive(Debug, Default)]
pub struct Scratch {
    /// The block's values as order keys (for selection).
    keys: Vec<i32>,
    /// The largest keys seen so far in a streamed selection.
    top: Vec<i32>,
    /// The MSE candidates still in the running.
    active: Vec<usize>,
    /// Eight blocks' values read across the blocks (row `i` holds each block's value `i`).
    rows: Vec<[f32; LANES]>,
    /// The largest two of every aligned run of the row being quantized, when its rungs
    /// read them ([`percentile_clipped`]).
    pub(crate) tops: Tops,
}

/// The parameters of a block whose values are `values` (in row-major order) and whose
/// statistics are `stats`, with `config`'s clipping applied; `form` turns a real range into
/// parameters ([`block_params`](crate::core::params::block_params) for `config`, or a prepared
/// [`ParamCalc`]).
///
/// Min-max uses the statistics' range; percentile clipping takes numpy's linear-interpolated
/// quantile of the values (magnitudes when symmetric), the same values a full sort gives; MSE
/// clipping tries the range shrunk by 1, 0.98, … 0.2 and keeps the first with the least
/// squared error; the importance-weighted search, which takes its weights from the analysis
/// (`weighted_params`), is the MSE search here (every weight 1). [`clipped_params_in`] is
/// the same with buffers kept from call to call.
pub fn clipped_params<I, F>(
    config: &Config,
    values: I,
    stats: &BlockStats,
    qmin: i32,
    qmax: i32,
    form: F,
) -> BlockParams
where
    I: Iterator<Item = f32>,
    F: Fn(RealRange) -> BlockParams,
{
    let xs: Vec<f32> = if config.clipping == Clipping::None {
        Vec::new()
    } else {
        values.collect()
    };
    let mut scratch = Scratch::default();
    clipped_params_in(&mut scratch, config, &xs, stats, qmin, qmax, form)
}

/// [`clipped_params`] of the block whose values are `xs`, with the buffers of `scratch`.
#[expect(
    clippy::inline_always,
    reason = "inlined into the kernel's per-block preparation, once per block of every rung"
)]
#[inline(always)]
pub fn clipped_params_in<F>(
    scratch: &mut Scratch,
    config: &Config,
    xs: &[f32],
    stats: &BlockStats,
    qmin: i32,
    qmax: i32,
    form: F,
) -> BlockParams
where
    F: Fn(RealRange) -> BlockParams,
{
    let full = RealRange::of(stats);
    match config.clipping {
        Clipping::None => form(full),
        Clipping::Percentile(p) => {
            let ranks = Ranks::new(config.scheme, p, xs.len());
            form(percentile_range(scratch, config, xs, full, &ranks, None))
        }
        // Without importance, the weighted search is the MSE search (every weight 1).
        Clipping::Mse | Clipping::MseWeighted => {
            let candidates: [BlockParams; CANDIDATES] =
                std::array::from_fn(|k| form(full.shrunk(shrink(k))));
            candidates[mse_choice(scratch, config, xs, stats, &candidates, (qmin, qmax))]
        }
    }
}

/// [`clipped_params_in`] with the prepared formulas of `calc`; the MSE search forms its
/// candidates' parameters eight at a time.
#[expect(clippy::inline_always, reason = "see clipped_params_in")]
#[inline(always)]
pub(crate) fn params(
    scratch: &mut Scratch,
    calc: &ParamCalc,
    config: &Config,
    xs: &[f32],
    stats: &BlockStats,
    qmin: i32,
    qmax: i32,
) -> BlockParams {
    if config.clipping == Clipping::Mse {
        let kind = Kind::of(config);
        let mut consts = [Consts::default(); CANDIDATES];
        if lane_candidates(calc, kind, stats, (qmin, qmax), &mut consts) {
            let k = fast_choice(scratch, kind, &consts, xs);
            return calc.params(RealRange::of(stats).shrunk(shrink(k)));
        }
    }
    clipped_params_in(scratch, config, xs, stats, qmin, qmax, |range| {
        calc.params(range)
    })
}

#[cfg(test)]
mod tests;
