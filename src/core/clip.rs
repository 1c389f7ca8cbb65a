//! A block's parameters with its clipping applied: min-max, percentile or MSE search.
//!
//! Clipping chooses the real range the parameters are formed from; the MSE search quantizes
//! the block under each candidate, so this sits above both [`crate::core::params`] and
//! [`crate::core::kernel`].

use crate::core::config::{Clipping, Config, Scheme};
use crate::core::kernel::Quantizer;
use crate::core::params::{BlockParams, BlockStats, ParamCalc, RealRange};

/// Linear-interpolated quantile (numpy's default) of sorted values.
fn quantile(sorted: &[f32], q: f64) -> f32 {
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let i = pos.floor() as usize;
    let j = (i + 1).min(sorted.len() - 1);
    let frac = pos - i as f64;
    (f64::from(sorted[i]) + (f64::from(sorted[j]) - f64::from(sorted[i])) * frac) as f32
}

/// The parameters of a block whose values are `values` (in row-major order) and whose
/// statistics are `stats`, with `config`'s clipping applied; `form` turns a real range into
/// parameters ([`block_params`](crate::core::params::block_params) for `config`, or a prepared
/// [`ParamCalc`]).
///
/// Min-max uses the statistics' range; percentile clipping sorts the values (magnitudes when
/// symmetric) and takes numpy's linear-interpolated quantile; MSE clipping tries the range
/// shrunk by 1, 0.98, … 0.2 and keeps the first with the least squared error.
#[expect(
    clippy::inline_always,
    reason = "inlined into the kernel's per-block preparation, once per block of every rung"
)]
#[inline(always)]
pub fn clipped_params<I, F>(
    config: &Config,
    values: I,
    stats: &BlockStats,
    qmin: i32,
    qmax: i32,
    form: F,
) -> BlockParams
where
    I: Iterator<Item = f32> + Clone,
    F: Fn(RealRange) -> BlockParams,
{
    let full = RealRange::of(stats);
    match config.clipping {
        Clipping::None => form(full),
        Clipping::Percentile(p) => {
            let range = if config.scheme == Scheme::Symmetric {
                let mut buf: Vec<f32> = values.map(f32::abs).collect();
                buf.sort_unstable_by(f32::total_cmp);
                let t = quantile(&buf, p / 100.0);
                RealRange {
                    lo: -t,
                    hi: t,
                    extreme: if full.extreme < 0.0 { -t } else { t },
                }
            } else {
                let mut buf: Vec<f32> = values.collect();
                buf.sort_unstable_by(f32::total_cmp);
                let lo = quantile(&buf, (100.0 - p) / 200.0);
                let hi = quantile(&buf, (100.0 + p) / 200.0);
                RealRange {
                    lo,
                    hi,
                    extreme: if full.extreme < 0.0 { lo } else { hi },
                }
            };
            form(range)
        }
        Clipping::Mse => {
            let mut best = form(full);
            let mut best_sse = f64::INFINITY;
            for k in 0..=40u8 {
                let alpha = 1.0 - f32::from(k) * 0.02;
                let params = form(full.shrunk(alpha));
                let q = Quantizer::new(config, &params, qmin, qmax);
                let sse: f64 = values
                    .clone()
                    .map(|x| {
                        let e = f64::from(q.dequantize(q.code(x).0)) - f64::from(x);
                        e * e
                    })
                    .sum();
                if sse < best_sse {
                    best_sse = sse;
                    best = params;
                }
            }
            best
        }
    }
}

/// [`clipped_params`] with the prepared formulas of `calc`.
#[expect(clippy::inline_always, reason = "see clipped_params")]
#[inline(always)]
pub(crate) fn params<I>(
    calc: &ParamCalc,
    config: &Config,
    values: I,
    stats: &BlockStats,
    qmin: i32,
    qmax: i32,
) -> BlockParams
where
    I: Iterator<Item = f32> + Clone,
{
    clipped_params(config, values, stats, qmin, qmax, |range| {
        calc.params(range)
    })
}
