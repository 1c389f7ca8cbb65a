//! Percentile clipping: numpy's linear-interpolated quantiles of a block (of its magnitudes
//! when symmetric), the same values a full sort gives, one block at a time or eight blocks'
//! at once from the runs' largest two ([`Tops`]).

use super::order::{order_pair, order_pair8};
use super::{Scratch, Tops};
use crate::core::config::{Clipping, Config, Scheme};
use crate::core::params::{PARAM_LANES, RealRange};

/// Where numpy's linear-interpolated quantile `q` of `n` sorted values lies: the ranks `i`
/// and `j` it interpolates between, and the fraction of the way from the one to the other.
fn quantile_ranks(n: usize, q: f64) -> (usize, usize, f64) {
    let pos = q.clamp(0.0, 1.0) * (n - 1) as f64;
    let i = pos.floor() as usize;
    let j = (i + 1).min(n - 1);
    (i, j, pos - i as f64)
}

/// The quantile between order statistics `a` (rank `i`) and `b` (rank `j`).
fn interpolate(a: f32, b: f32, frac: f64) -> f32 {
    (f64::from(a) + (f64::from(b) - f64::from(a)) * frac) as f32
}

/// Linear-interpolated quantile (numpy's default) of `xs` (their magnitudes when `ABS`) at
/// the ranks [`quantile_ranks`] gives for `xs.len()` values, the values a full sort would put
/// at its two ranks.
#[expect(clippy::inline_always, reason = "see clipped_params_in")]
#[inline(always)]
fn quantile<const ABS: bool>(
    xs: &[f32],
    (i, j, frac): (usize, usize, f64),
    scratch: &mut Scratch,
    at: Option<usize>,
) -> f32 {
    let (a, b) = order_pair::<ABS>(xs, i, scratch, at);
    debug_assert!(j == i || j == i + 1);
    interpolate(a, b, frac)
}

/// The range the block whose values are `xs` and whose min-max range is `full` is formed
/// from, for a configuration clipped by percentile (`full` itself otherwise). `ranks` are
/// the quantiles' ranks ([`Ranks::new`]), used when they are for `xs.len()` values: every
/// whole group of a row has the same length, so its ranks are formed once per row. `at`,
/// when given, is the column of the row where `xs` starts: the block's largest two are then
/// read from `scratch.tops` where it holds them for this row ([`Tops::fill`]).
#[expect(clippy::inline_always, reason = "see clipped_params_in")]
#[inline(always)]
pub(crate) fn percentile_clipped(
    scratch: &mut Scratch,
    config: &Config,
    xs: &[f32],
    full: RealRange,
    ranks: &Ranks,
    at: Option<usize>,
) -> RealRange {
    match config.clipping {
        Clipping::Percentile(p) if ranks.n != xs.len() => {
            let ranks = Ranks::new(config.scheme, p, xs.len());
            percentile_range(scratch, config, xs, full, &ranks, at)
        }
        Clipping::Percentile(_) => percentile_range(scratch, config, xs, full, ranks, at),
        _ => full,
    }
}

/// The ranks and fraction ([`quantile_ranks`]) of percentile clipping for blocks of `n`
/// values: the one quantile of the magnitudes when symmetric, the low and high quantiles
/// otherwise.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ranks {
    /// The number of values.
    n: usize,
    /// The symmetric quantile's, or the low one's.
    lo: (usize, usize, f64),
    /// The high quantile's (asymmetric).
    hi: (usize, usize, f64),
}

impl Ranks {
    /// The ranks for blocks of `n` values (none when `n` is 0) clipped by percentile `p`.
    pub(crate) fn new(scheme: Scheme, p: f64, n: usize) -> Self {
        let none = (0, 0, 0.0);
        if n == 0 {
            return Self {
                n,
                lo: none,
                hi: none,
            };
        }
        if scheme == Scheme::Symmetric {
            Self {
                n,
                lo: quantile_ranks(n, p / 100.0),
                hi: none,
            }
        } else {
            Self {
                n,
                lo: quantile_ranks(n, (100.0 - p) / 200.0),
                hi: quantile_ranks(n, (100.0 + p) / 200.0),
            }
        }
    }
}

/// The range percentile `p` clips `xs` to: `±` the quantile of the magnitudes when
/// symmetric, the `(100 ∓ p) / 2` quantiles otherwise; the extreme is the end on the side
/// of the block's own extreme.
#[expect(clippy::inline_always, reason = "see clipped_params_in")]
#[inline(always)]
pub(super) fn percentile_range(
    scratch: &mut Scratch,
    config: &Config,
    xs: &[f32],
    full: RealRange,
    ranks: &Ranks,
    at: Option<usize>,
) -> RealRange {
    if config.scheme == Scheme::Symmetric {
        let t = quantile::<true>(xs, ranks.lo, scratch, at);
        RealRange {
            lo: -t,
            hi: t,
            extreme: if full.extreme < 0.0 { -t } else { t },
        }
    } else {
        let lo = quantile::<false>(xs, ranks.lo, scratch, at);
        let hi = quantile::<false>(xs, ranks.hi, scratch, at);
        RealRange {
            lo,
            hi,
            extreme: if full.extreme < 0.0 { lo } else { hi },
        }
    }
}

/// [`percentile_clipped`] for the eight blocks of `ranks.n` values from column `at` of the
/// row whose runs `scratch.tops` holds ([`Tops::fill`]), each block's own extreme in
/// `extreme`: the clipped ranges' `lo`, `hi` and `extreme` as eight lanes, the same values
/// `percentile_clipped` gives each block. `None` (each block then goes through
/// `percentile_clipped`) unless every quantile lies between a block's largest two or its
/// smallest two and the levels hold all eight blocks' (as for 99.9 % of groups of up to a
/// thousand values): the ladder's rungs then read eight groups' clipped ranges at once.
pub(crate) fn percentile8(
    scratch: &Scratch,
    config: &Config,
    ranks: &Ranks,
    at: usize,
    extreme: &[f32; PARAM_LANES],
) -> Option<[[f32; PARAM_LANES]; 3]> {
    let Clipping::Percentile(_) = config.clipping else {
        return None;
    };
    let (tops, n) = (&scratch.tops, ranks.n);
    let side = |lo: &[f32; PARAM_LANES], hi: &[f32; PARAM_LANES]| {
        std::array::from_fn(|j| if extreme[j] < 0.0 { lo[j] } else { hi[j] })
    };
    if config.scheme == Scheme::Symmetric {
        let t = quantile8::<true>(tops, n, ranks.lo, at)?;
        let lo = t.map(|t| -t);
        Some([lo, t, side(&lo, &t)])
    } else {
        let lo = quantile8::<false>(tops, n, ranks.lo, at)?;
        let hi = quantile8::<false>(tops, n, ranks.hi, at)?;
        Some([lo, hi, side(&lo, &hi)])
    }
}

/// [`quantile`] of the eight runs of `n` values from column `at`, from `tops` alone.
fn quantile8<const ABS: bool>(
    tops: &Tops,
    n: usize,
    (i, j, frac): (usize, usize, f64),
    at: usize,
) -> Option<[f32; PARAM_LANES]> {
    let (a, b) = order_pair8::<ABS>(tops, n, i, at)?;
    debug_assert!(j == i || j == i + 1);
    Some(std::array::from_fn(|l| interpolate(a[l], b[l], frac)))
}
