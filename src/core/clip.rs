//! A block's parameters with its clipping applied: min-max, percentile or MSE search.
//!
//! Clipping chooses the real range the parameters are formed from; the MSE search quantizes
//! the block under each candidate, so this sits above both [`crate::core::params`] and
//! [`crate::core::kernel`].
//!
//! Percentile clipping needs two neighbouring order statistics of the block, not a sorted
//! copy: when few values lie beyond them (99.9 % of a row leaves a handful), one streamed
//! pass keeps the largest (or smallest) few, skipping chunks of values that cannot be among
//! them; otherwise `select_nth_unstable` finds the lower one and the upper one is the least
//! of the partition above it. Values are compared in [`f32::total_cmp`]'s order (as `i32`
//! keys), which is the order the full sort used, so every order statistic is the same value
//! bit for bit.

use rayon::prelude::*;

use crate::core::config::{Clipping, Config, Scheme};
use crate::core::kernel::Quantizer;
use crate::core::kernel::segment::{
    APPROX_REL, Consts, Kind, LANES, Prepared, approx_squares, block_sums, block_sums_exact,
    candidate_sums, consts8, consts8_lanes,
};
use crate::core::params::{BlockParams, BlockStats, PARAM_LANES, ParamCalc, RealRange, ScaleRule};
use crate::core::simd::{Avx2, transpose8, vectorised};

mod tops;
mod weighted;

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

/// `x`'s place in [`f32::total_cmp`]'s order, as an `i32` in the same order.
#[inline]
fn key(x: f32) -> i32 {
    let b = x.to_bits() as i32;
    b ^ ((((b >> 31) as u32) >> 1) as i32)
}

/// The value whose [`key`] is `k`.
#[inline]
fn from_key(k: i32) -> f32 {
    f32::from_bits((k ^ ((((k >> 31) as u32) >> 1) as i32)) as u32)
}

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

/// At most this many values beyond an order statistic are kept in a streamed selection.
const STREAM_MAX: usize = 1 << 16;

/// The order statistics of ranks `i` and `min(i + 1, n - 1)` of `xs` (magnitudes when `ABS`)
/// in [`f32::total_cmp`]'s order. `at`, when given, is the column of the row where `xs`
/// starts, for the largest two of `scratch.tops` ([`Tops::get`]) when it holds them.
#[expect(clippy::inline_always, reason = "see clipped_params_in")]
#[inline(always)]
fn order_pair<const ABS: bool>(
    xs: &[f32],
    i: usize,
    scratch: &mut Scratch,
    at: Option<usize>,
) -> (f32, f32) {
    let n = xs.len();
    let two = |neg: bool| at.and_then(|s| scratch.tops.get(s, n, ABS, neg));
    // Ranks i and i + 1 are the `above`-th and `above − 1`-th largest...
    let above = n - i;
    if above <= 2 {
        // 99.9 % of up to 1001 values: the largest two.
        let (a, b) = two(false).unwrap_or_else(|| largest_two::<ABS, false>(xs));
        let a = from_key(a);
        return if above == 1 { (a, a) } else { (from_key(b), a) };
    }
    if i == 0 {
        // The smallest two (n > 2 here).
        let (a, b) = two(true).unwrap_or_else(|| largest_two::<ABS, true>(xs));
        return (from_key(!a), from_key(!b));
    }
    order_pair_selected::<ABS>(xs, i, scratch)
}

/// [`order_pair`] when more than two values lie on either side: a streamed selection, or
/// `select_nth_unstable`.
#[inline(never)]
fn order_pair_selected<const ABS: bool>(xs: &[f32], i: usize, scratch: &mut Scratch) -> (f32, f32) {
    let n = xs.len();
    let above = n - i;
    if above <= STREAM_MAX && above * 8 <= n {
        let (a, b) = largest_pair::<ABS, false>(xs, above, scratch);
        return (from_key(a), from_key(b));
    }
    // ... and the `i + 1`-th and `i + 2`-th smallest: the largest of the negated keys.
    let below = i + 2;
    if below <= n && below <= STREAM_MAX && below * 8 <= n {
        let (a, b) = largest_pair::<ABS, true>(xs, below, scratch);
        return (from_key(!b), from_key(!a));
    }
    let keys = &mut scratch.keys;
    keys.clear();
    keys.extend(xs.iter().map(|&x| key(if ABS { x.abs() } else { x })));
    let (_, &mut a, upper) = keys.select_nth_unstable(i);
    let b = upper.iter().copied().min().unwrap_or(a);
    (from_key(a), from_key(b))
}

/// The largest and second largest keys of `xs` (the second is `i32::MIN` for fewer than two
/// values), keys negated when `NEG`: the largest two of each of eight lanes, then of those.
#[expect(clippy::inline_always, reason = "see clipped_params_in")]
#[inline(always)]
fn largest_two<const ABS: bool, const NEG: bool>(xs: &[f32]) -> (i32, i32) {
    const W: usize = 8;
    #[inline(always)]
    fn push(v: i32, a: &mut i32, b: &mut i32) {
        let lower = (*a).min(v);
        *a = (*a).max(v);
        *b = (*b).max(lower);
    }
    let of = |x: f32| {
        let c = key(if ABS { x.abs() } else { x });
        if NEG { !c } else { c }
    };
    let (mut a, mut b) = (i32::MIN, i32::MIN);
    if xs.len() < 4 * W {
        for &x in xs {
            push(of(x), &mut a, &mut b);
        }
        return (a, b);
    }
    let (mut first, mut second) = ([i32::MIN; W], [i32::MIN; W]);
    let (chunks, tail) = xs.as_chunks::<W>();
    for c in chunks {
        for j in 0..W {
            push(of(c[j]), &mut first[j], &mut second[j]);
        }
    }
    // The largest two of the lanes' largest, then the lanes' second largest (each below
    // its lane's largest) and the tail.
    for v in first {
        push(v, &mut a, &mut b);
    }
    b = second.iter().fold(b, |m, &v| m.max(v));
    for &x in tail {
        push(of(x), &mut a, &mut b);
    }
    (a, b)
}

/// Values per chunk of a streamed selection: a chunk whose largest key cannot enter the
/// kept set is skipped after one vectorised maximum.
const CHUNK: usize = 16;

/// At most this many keys are selected through the chunks' largest ([`largest_pair_seeded`]).
const SEEDED_MAX: usize = 256;

/// Values from which a streamed selection is split between the threads.
const SPLIT: usize = 1 << 20;

/// The `k`-th and `k − 1`-th largest keys of `xs` (the `k`-th twice when `k` is 1), keys
/// negated when `NEG` (`1 <= k <= xs.len()`): through the chunks' largest keys
/// ([`largest_pair_seeded`]) when `k` is small and at most a quarter of the chunks, else
/// in one pass over `xs` that keeps the largest `k` seen so far ([`largest_k`]), split
/// between the threads for a block of a million values or more (the `k` largest of the
/// whole are among the `k` largest of its parts).
fn largest_pair<const ABS: bool, const NEG: bool>(
    xs: &[f32],
    k: usize,
    scratch: &mut Scratch,
) -> (i32, i32) {
    let (chunks, tail) = xs.as_chunks::<CHUNK>();
    if k <= SEEDED_MAX && k * 4 <= chunks.len() {
        return largest_pair_seeded::<ABS, NEG>(chunks, tail, k, scratch);
    }
    let threads = rayon::current_num_threads();
    let top = &mut scratch.top;
    if xs.len() >= SPLIT && threads > 1 {
        let parts: Vec<Vec<i32>> = xs
            .par_chunks(xs.len().div_ceil(threads))
            .map(|part| {
                let mut top = Vec::new();
                largest_k::<ABS, NEG>(part, k, &mut top);
                top
            })
            .collect();
        top.clear();
        top.extend(parts.into_iter().flatten());
    } else {
        largest_k::<ABS, NEG>(xs, k, top);
    }
    pair_of(top, k)
}

/// The `k`-th and `k − 1`-th largest of `top` (`k` at most its length).
fn pair_of(top: &mut [i32], k: usize) -> (i32, i32) {
    let Some(at) = top.len().checked_sub(k) else {
        return (i32::MIN, i32::MIN);
    };
    let (_, &mut a, upper) = top.select_nth_unstable(at);
    (a, upper.iter().copied().min().unwrap_or(a))
}

/// Keys of `xs` (as [`of`] gives them) into `top`: every key when `xs` has at most `k`
/// values, else a set holding the `k` largest, in one pass that keeps the largest `k` seen
/// so far.
fn largest_k<const ABS: bool, const NEG: bool>(xs: &[f32], k: usize, top: &mut Vec<i32>) {
    top.clear();
    if xs.len() <= k {
        top.extend(xs.iter().map(|&x| of::<ABS, NEG>(x)));
        return;
    }
    let cap = (4 * k).max(64);
    let (head, rest) = xs.split_at(k);
    top.extend(head.iter().map(|&x| of::<ABS, NEG>(x)));
    // The k-th largest key seen: a key not above it cannot be among the k largest.
    let mut floor = top.iter().copied().min().unwrap_or(i32::MIN);
    let add = |v: i32, top: &mut Vec<i32>, floor: &mut i32| {
        if v > *floor {
            top.push(v);
            if top.len() == cap {
                *floor = keep_largest(top, k);
            }
        }
    };
    let (chunks, tail) = rest.as_chunks::<CHUNK>();
    for c in chunks {
        let keys = chunk_keys::<ABS, NEG>(c);
        let most = keys.iter().fold(i32::MIN, |m, &v| m.max(v));
        if most > floor {
            for &v in &keys {
                add(v, top, &mut floor);
            }
        }
    }
    for &x in tail {
        add(of::<ABS, NEG>(x), top, &mut floor);
    }
}

/// [`largest_pair`] from whole chunks `chunks` and the values after them, `tail`, for `k` at
/// most the number of chunks. The `k`-th largest of the chunks' largest keys, `floor`, is at
/// most the `k`-th largest key (the `k` chunks it ranks hold `k` keys of at least `floor`), so
/// the `k` largest keys are among the keys of at least `floor`, all of which lie in the chunks
/// whose largest key is at least `floor` or in the tail: one vectorised pass for the chunks'
/// largest keys, a selection among them, and a read of the few chunks that reach `floor`.
fn largest_pair_seeded<const ABS: bool, const NEG: bool>(
    chunks: &[[f32; CHUNK]],
    tail: &[f32],
    k: usize,
    scratch: &mut Scratch,
) -> (i32, i32) {
    let (most, top) = (&mut scratch.keys, &mut scratch.top);
    most.clear();
    // Compiled for the widest vector instructions this CPU has.
    pulp::Arch::new().dispatch(
        #[inline(always)]
        || {
            most.extend(chunks.iter().map(|c| {
                let keys = chunk_keys::<ABS, NEG>(c);
                keys.iter().fold(i32::MIN, |m, &v| m.max(v))
            }));
        },
    );
    top.clear();
    top.extend_from_slice(most);
    let Some(at) = top.len().checked_sub(k) else {
        return (i32::MIN, i32::MIN);
    };
    let (_, &mut floor, _) = top.select_nth_unstable(at);
    top.clear();
    for (c, _) in chunks.iter().zip(most.iter()).filter(|&(_, &m)| m >= floor) {
        top.extend(
            chunk_keys::<ABS, NEG>(c)
                .into_iter()
                .filter(|&v| v >= floor),
        );
    }
    top.extend(
        tail.iter()
            .map(|&x| of::<ABS, NEG>(x))
            .filter(|&v| v >= floor),
    );
    pair_of(top, k)
}

/// The key of `x` (of its magnitude when `ABS`), negated when `NEG`.
#[inline]
fn of<const ABS: bool, const NEG: bool>(x: f32) -> i32 {
    let c = key(if ABS { x.abs() } else { x });
    if NEG { !c } else { c }
}

/// The keys ([`of`]) of one chunk.
#[expect(clippy::inline_always, reason = "see clipped_params_in")]
#[inline(always)]
fn chunk_keys<const ABS: bool, const NEG: bool>(c: &[f32; CHUNK]) -> [i32; CHUNK] {
    std::array::from_fn(|j| of::<ABS, NEG>(c[j]))
}

/// Keeps the `k` largest of `top` (at its front) and returns the least of them.
fn keep_largest(top: &mut Vec<i32>, k: usize) -> i32 {
    let len = top.len();
    top.select_nth_unstable(len - k);
    top.copy_within(len - k.., 0);
    top.truncate(k);
    top[0]
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
fn percentile_range(
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

/// [`order_pair`]'s first two cases for the eight runs of `n` values from column `at`: the
/// order statistics of ranks `i` and `min(i + 1, n − 1)` when they are among each run's
/// largest two or smallest two and `tops` holds them.
fn order_pair8<const ABS: bool>(
    tops: &Tops,
    n: usize,
    i: usize,
    at: usize,
) -> Option<([f32; PARAM_LANES], [f32; PARAM_LANES])> {
    let above = n.checked_sub(i)?;
    if above <= 2 {
        let (a, b) = tops.get8(at, n, ABS, false)?;
        let a = a.map(from_key);
        return Some(if above == 1 {
            (a, a)
        } else {
            (b.map(from_key), a)
        });
    }
    if i == 0 {
        let (a, b) = tops.get8(at, n, ABS, true)?;
        return Some((a.map(|k| from_key(!k)), b.map(|k| from_key(!k))));
    }
    None
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

/// The MSE search's candidates: the range shrunk by 1, 0.98, … 0.2.
const CANDIDATES: usize = 41;

/// Candidate `k`'s shrink factor, `1 − 0.02·k` in f32.
fn shrink(k: usize) -> f32 {
    1.0 - f32::from(k as u8) * 0.02
}

/// Every candidate, in order.
const ALL: [usize; CANDIDATES] = {
    let mut all = [0; CANDIDATES];
    let mut k = 0;
    while k < CANDIDATES {
        all[k] = k;
        k += 1;
    }
    all
};

/// Blocks of at most this many values have every candidate quantized over every value.
const SMALL_BLOCK: usize = 64;

/// Values per step of the candidates that are still in the running, at most; a
/// sixteenth of the block, at least 32.
const STEP: usize = 256;

/// Values from which the groups of candidates of one call go to the thread pool.
const PARALLEL: usize = 1 << 16;

/// Candidates quantized over the whole block first, to bound the others: one group of
/// lanes.
const PROBES: usize = LANES;

/// The MSE search: the index of the first of `candidates` (the block's parameters at each
/// shrink factor) whose squared error over `xs` is least, as the reference finds it by
/// quantizing the block under each candidate in turn and summing the squared errors value
/// by value in `f64` (candidate 0 when no sum is below infinity).
///
/// Each candidate's sum is formed in exactly that order and precision, eight candidates at
/// a time, one value after another. On a block of more than [`SMALL_BLOCK`] values, every
/// candidate first goes over a sixteenth of the values (at least 32) and over the block's
/// largest values (its [`Tail`]). Then approximate sums of the rest, with proven bounds on
/// how far the ordered sums can be from them, settle the choice unless two candidates come
/// within those bounds of each other ([`approx_search`]); otherwise the exact search goes on
/// ([`exact_search`]): the [`PROBES`] with the least bounds (the partial sum continued with
/// the tail; one group per thread on a block as large as a tensor, see [`probes_for`]) then
/// finish, and the others go on step by step, dropped as soon as their bound shows they
/// cannot be chosen (a candidate whose whole sum is at least a bound above a finished one,
/// or level with an earlier finished one, is never the first least). Blocks with a
/// candidate the specialised loop does not take go candidate by candidate through
/// [`Quantizer`].
fn mse_choice(
    scratch: &mut Scratch,
    config: &Config,
    xs: &[f32],
    stats: &BlockStats,
    candidates: &[BlockParams; CANDIDATES],
    (qmin, qmax): (i32, i32),
) -> usize {
    let prepared: [Prepared; CANDIDATES] =
        std::array::from_fn(|k| Prepared::new(config, &candidates[k], qmin, qmax, stats));
    if !prepared.iter().all(Prepared::is_fast) {
        let sums: [f64; CANDIDATES] = std::array::from_fn(|k| {
            let q = Quantizer::new(config, &candidates[k], qmin, qmax);
            xs.iter()
                .map(|&x| {
                    let e = f64::from(q.dequantize(q.code(x).0)) - f64::from(x);
                    e * e
                })
                .sum()
        });
        return first_least(&sums, 0..CANDIDATES);
    }
    let consts: [Consts; CANDIDATES] = std::array::from_fn(|k| prepared[k].consts());
    fast_choice(scratch, Kind::of(config), &consts, xs)
}

/// [`mse_choice`] for candidates that are all prepared for the specialised loop, whose
/// constants are `consts`.
#[inline(never)]
fn fast_choice(
    scratch: &mut Scratch,
    kind: Kind,
    consts: &[Consts; CANDIDATES],
    xs: &[f32],
) -> usize {
    vectorised(
        #[inline(always)]
        || search(kind, consts, xs, &mut scratch.active),
    )
}

/// The constants of every candidate of the block whose statistics are `stats` into `out`,
/// their parameters formed eight at a time by `calc` (the same values as
/// [`ParamCalc::params`] gives); whether every one is for the specialised loop.
#[expect(clippy::inline_always, reason = "see clipped_params_in")]
#[inline(always)]
fn lane_candidates(
    calc: &ParamCalc,
    kind: Kind,
    stats: &BlockStats,
    (qmin, qmax): (i32, i32),
    out: &mut [Consts; CANDIDATES],
) -> bool {
    if stats.count == 0 {
        return false;
    }
    let full = RealRange::of(stats);
    let (min, max) = ([stats.min; PARAM_LANES], [stats.max; PARAM_LANES]);
    let simd = Avx2::detect();
    let mut fast = true;
    // A loop rather than an array built by a closure, which the compiler may outline (and
    // compile without the vectorised context's instructions).
    for g in 0..CANDIDATES.div_ceil(PARAM_LANES) {
        // Lanes past the last candidate repeat it.
        let a: [f32; PARAM_LANES] =
            std::array::from_fn(|j| shrink((g * PARAM_LANES + j).min(CANDIDATES - 1)));
        let lo = std::array::from_fn(|j| full.lo * a[j]);
        let hi = std::array::from_fn(|j| full.hi * a[j]);
        let ex = std::array::from_fn(|j| full.extreme * a[j]);
        let p8 = calc.lanes8::<false>(simd, &lo, &hi, &ex);
        let (k8, f8) = consts8(simd, kind, &p8, &min, &max, qmin, qmax);
        fast &= f8.iter().all(|&f| f);
        for (slot, k) in out.iter_mut().skip(g * PARAM_LANES).zip(k8) {
            *slot = k;
        }
    }
    fast
}

/// [`fast_choice`]'s search, inlined into its vectorised body.
#[expect(
    clippy::inline_always,
    reason = "inlined into the vectorised closure of mse_choice, with the candidates' loop"
)]
#[inline(always)]
fn search(kind: Kind, consts: &[Consts; CANDIDATES], xs: &[f32], active: &mut Vec<usize>) -> usize {
    if xs.len() <= SMALL_BLOCK {
        return small_search(kind, consts, xs);
    }
    let start = Start::of(kind, consts, xs);
    if let Some(k) = approx_search(kind, consts, &start, xs) {
        return k;
    }
    exact_search(kind, consts, start, xs, active)
}

/// A long block's search once every candidate has gone over its head (the first sixteenth
/// of its values, at least 32).
struct Start {
    tail: Tail,
    /// Values in the head.
    part: usize,
    /// Every candidate's ordered sum over the head.
    sums: [f64; CANDIDATES],
    /// Every candidate's bound so far: its sum of the head and its errors of the tail
    /// values past the head.
    bounds: [f64; CANDIDATES],
    /// The candidates in the order they finish: the least bounds first (the earlier of
    /// equal ones), or on a block as large as a tensor, the least sums over values spread
    /// through the whole block (its first sixteenth can be rows of other spreads than the
    /// rest).
    order: [usize; CANDIDATES],
}

impl Start {
    #[expect(clippy::inline_always, reason = "see search")]
    #[inline(always)]
    fn of(kind: Kind, consts: &[Consts; CANDIDATES], xs: &[f32]) -> Self {
        let mut sums = [0.0f64; CANDIDATES];
        let tail = Tail::of(kind, consts, xs);
        let part = (xs.len() / 16).max(32);
        add_sums(kind, consts, &ALL, &xs[..part], &mut sums);
        let bounds: [f64; CANDIDATES] = std::array::from_fn(|k| tail.bound(k, sums[k], part));
        let ranks = if xs.len() >= 16 * PARALLEL {
            spread_sums(kind, consts, xs)
        } else {
            bounds
        };
        let mut order = ALL;
        order.sort_by(|&a, &b| ranks[a].total_cmp(&ranks[b]).then(a.cmp(&b)));
        Self {
            tail,
            part,
            sums,
            bounds,
            order,
        }
    }
}

/// [`search`] in the reference's own arithmetic, from `start`: the [`probes_for`] first
/// candidates of its order finish, and the others go on step by step, each dropped as soon
/// as its bound shows it cannot be chosen.
#[expect(clippy::inline_always, reason = "see search")]
#[inline(always)]
fn exact_search(
    kind: Kind,
    consts: &[Consts; CANDIDATES],
    start: Start,
    xs: &[f32],
    active: &mut Vec<usize>,
) -> usize {
    let Start {
        tail,
        part,
        mut sums,
        bounds,
        order,
    } = start;
    let rest = &xs[part..];
    let probes = &order[..probes_for(rest.len())];
    add_sums(kind, consts, probes, rest, &mut sums);
    let mut finished = [false; CANDIDATES];
    for &k in probes {
        finished[k] = true;
    }
    let best = Best::of(probes, &sums);
    let may_win = |k: usize, s: f64| best.may_lose_to(k, s);
    active.clear();
    active.extend(
        order[probes.len()..]
            .iter()
            .copied()
            .filter(|&k| may_win(k, bounds[k])),
    );
    // Steps of a sixteenth of the block (at least 32 values, at most STEP); a block large
    // enough for the pool steps by PARALLEL.
    let step = if rest.len() >= 16 * PARALLEL {
        PARALLEL
    } else {
        part.min(STEP)
    };
    let mut done = part;
    for step in rest.chunks(step) {
        if active.is_empty() {
            break;
        }
        add_sums(kind, consts, active, step, &mut sums);
        done += step.len();
        active.retain(|&k| may_win(k, tail.bound(k, sums[k], done)));
    }
    for &k in active.iter() {
        finished[k] = true;
    }
    first_least(&sums, (0..CANDIDATES).filter(|&k| finished[k]))
}

/// [`search`]'s choice settled from approximate sums, when they settle it: `None` leaves it
/// to the exact search.
///
/// The candidates go in `order` (the least bounds first), each skipped when its bound (an
/// exact lower bound on its whole sum: `bounds[k]`, then its partial sum continued with its
/// tail, see [`Tail`]) is above the least upper bound of a finished candidate; otherwise
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
fn approx_search(
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
struct Slack {
    rel: f64,
    abs: f64,
}

impl Slack {
    fn new(n: usize) -> Self {
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
    fn lower(self, est: f64) -> f64 {
        (est - self.abs) * (1.0 - self.rel)
    }

    /// An upper bound on the ordered sum whose estimate is `est`, for a finished candidate.
    fn upper(self, est: f64) -> f64 {
        (est + self.abs) * (1.0 + self.rel)
    }
}

/// How many candidates finish first on a block whose values past the head number `rest`:
/// [`PROBES`], or on a block large enough for the pool, one group of lanes per thread (the
/// groups go over the block side by side, so the threads that one group would leave idle
/// finish the next candidates in the same time). Which candidates finish first changes how
/// soon the others are dropped, never the choice: the first least is always among those
/// finished.
fn probes_for(rest: usize) -> usize {
    if rest >= 16 * PARALLEL {
        (LANES * rayon::current_num_threads()).clamp(PROBES, CANDIDATES)
    } else {
        PROBES
    }
}

/// Values of a block as large as a tensor that rank its candidates for the probes.
const SPREAD: usize = PARALLEL;

/// Every candidate's sum over [`SPREAD`] values taken at even steps through `xs`: which
/// candidates are probed first (the order of the sums is all they are used for).
#[expect(clippy::inline_always, reason = "see search")]
#[inline(always)]
fn spread_sums(kind: Kind, consts: &[Consts; CANDIDATES], xs: &[f32]) -> [f64; CANDIDATES] {
    let step = (xs.len() / SPREAD).max(1);
    let spread: Vec<f32> = xs.iter().step_by(step).copied().collect();
    let mut sums = [0.0f64; CANDIDATES];
    add_sums(kind, consts, &ALL, &spread, &mut sums);
    sums
}

/// At most this many values of a long block bound its candidates' sums ahead of their turn.
const TAIL: usize = 32;

/// A long block's values of magnitude at least [`Tail::EDGE`] of its largest (the first
/// [`TAIL`] of them, in order), with every candidate's squared error of each, formed as the
/// reference forms them.
///
/// Clipping candidates lose on the block's largest values, which may come anywhere in the
/// block, while their sums of the values before those are lower than the best's (a smaller
/// scale rounds more finely). The sum of a candidate's squares of the values before some
/// point, continued in order with its squares of the tail values after that point, is its
/// ordered sum over a subsequence of the block's values, which is never above its whole sum
/// (sums of non-negative terms, each rounding monotone: every partial sum of the whole
/// sequence is at least the partial sum of the subsequence taken so far). That bound lets
/// such a candidate go as soon as the tail shows it cannot win, instead of after most of the
/// block.
struct Tail {
    /// Values held.
    n: usize,
    /// Their indices in the block, increasing.
    at: [usize; TAIL],
    /// Candidate `k`'s squared error of tail value `t` at `terms[t][k]`.
    terms: [[f64; CANDIDATES]; TAIL],
}

impl Tail {
    /// The part of the largest magnitude that makes a value part of the tail.
    const EDGE: f32 = 0.8;

    /// The tail of `xs` under the candidates whose constants are `consts`.
    #[expect(clippy::inline_always, reason = "see search")]
    #[inline(always)]
    fn of(kind: Kind, consts: &[Consts; CANDIDATES], xs: &[f32]) -> Self {
        let mut tail = Self {
            n: 0,
            at: [0; TAIL],
            terms: [[0.0; CANDIDATES]; TAIL],
        };
        // The largest magnitude, through the magnitudes' bits (integer order is their
        // order), which vectorises.
        let magnitude = |m: u32, &x: &f32| m.max(x.to_bits() & !(1 << 31));
        let top = f32::from_bits(if xs.len() >= 16 * PARALLEL {
            // A block as large as a tensor: its parts on the pool.
            xs.par_chunks(PARALLEL)
                .map(|part| {
                    vectorised(
                        #[inline(always)]
                        || part.iter().fold(0, magnitude),
                    )
                })
                .max()
                .unwrap_or(0)
        } else {
            xs.iter().fold(0, magnitude)
        });
        let edge = top * Self::EDGE;
        let (chunks, rest) = xs.as_chunks::<LANES>();
        let mut take = |i: usize, x: f32| {
            if x.abs() >= edge && tail.n < TAIL {
                tail.at[tail.n] = i;
                tail.n += 1;
            }
        };
        for (c, chunk) in chunks.iter().enumerate() {
            // Most chunks hold no tail value: one test of the whole chunk.
            if chunk.iter().fold(false, |hit, &x| hit | (x.abs() >= edge)) {
                for (j, &x) in chunk.iter().enumerate() {
                    take(c * LANES + j, x);
                }
            }
        }
        let base = chunks.len() * LANES;
        for (j, &x) in rest.iter().enumerate() {
            take(base + j, x);
        }
        for group in ALL.chunks(LANES) {
            let last = group.len() - 1;
            let k: [Consts; LANES] = std::array::from_fn(|j| consts[group[j.min(last)]]);
            for t in 0..tail.n {
                // From 0, the sum of one value is its square.
                let mut one = [0.0f64; LANES];
                candidate_sums(kind, &k, &xs[tail.at[t]..=tail.at[t]], &mut one);
                for (j, &c) in group.iter().enumerate() {
                    tail.terms[t][c] = one[j];
                }
            }
        }
        tail
    }

    /// A lower bound on candidate `k`'s whole sum, from `sum`, its ordered sum of the values
    /// before `done`: that sum continued with its squares of the tail values from `done` on.
    #[inline]
    fn bound(&self, k: usize, sum: f64, done: usize) -> f64 {
        let mut s = sum;
        for t in 0..self.n {
            if self.at[t] >= done {
                s += self.terms[t][k];
            }
        }
        s
    }
}

/// The earliest of the least of some finished sums (none below infinity: no bound).
#[derive(Clone, Copy)]
struct Best {
    k: usize,
    sse: f64,
}

impl Best {
    /// The earliest of the least sums of `finished` (a candidate index past every one, and
    /// infinity, when none is below infinity).
    fn of(finished: &[usize], sums: &[f64; CANDIDATES]) -> Self {
        let (k, sse) = finished
            .iter()
            .map(|&k| (k, sums[k]))
            .filter(|&(_, s)| s < f64::INFINITY)
            .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)))
            .unwrap_or((usize::MAX, f64::INFINITY));
        Self { k, sse }
    }

    /// Whether candidate `k`, whose whole sum is at least `s`, may still be the first least
    /// (below the best, or level with it and earlier).
    fn may_lose_to(self, k: usize, s: f64) -> bool {
        s < self.sse || (s == self.sse && k < self.k)
    }
}

/// Blocks of at least this many values (and at most [`SMALL_BLOCK`]) bound every candidate
/// by its two extreme values before quantizing the whole block under any.
const BOUNDED: usize = 8;

/// [`search`] on a block of at most [`SMALL_BLOCK`] values. From [`BOUNDED`] values on, the
/// first [`PROBES`] candidates (the least clipping, which small blocks mostly choose) are
/// quantized over the whole block; every other candidate's squared errors of the block's
/// largest and smallest values are added first: a sum of non-negative terms added in order
/// never falls below the sum of any two of its terms (each partial sum is at least the one
/// before, and rounding is monotone), so that is a lower bound on the candidate's whole
/// sum, in the same arithmetic. A candidate is quantized over the block only if its bound
/// shows it could still be the first least.
#[expect(clippy::inline_always, reason = "see search")]
#[inline(always)]
fn small_search(kind: Kind, consts: &[Consts; CANDIDATES], xs: &[f32]) -> usize {
    let mut sums = [0.0f64; CANDIDATES];
    if xs.len() < BOUNDED {
        add_sums(kind, consts, &ALL, xs, &mut sums);
        return first_least(&sums, 0..CANDIDATES);
    }
    let (probes, others) = ALL.split_at(PROBES);
    add_sums(kind, consts, probes, xs, &mut sums);
    let best = Best::of(probes, &sums);
    // Two different values of the block: its largest, and its smallest (another one when
    // every value is the same).
    let (mut hi, mut lo) = (0, 0);
    for (i, &x) in xs.iter().enumerate() {
        if x > xs[hi] {
            hi = i;
        }
        if x < xs[lo] {
            lo = i;
        }
    }
    if lo == hi {
        lo = usize::from(hi == 0);
    }
    let mut bound = [0.0f64; CANDIDATES];
    add_sums(kind, consts, others, &[xs[hi], xs[lo]], &mut bound);
    let mut finished = [false; CANDIDATES];
    for &k in probes {
        finished[k] = true;
    }
    let mut rest = [0usize; CANDIDATES];
    let mut n = 0;
    for &k in others {
        if best.may_lose_to(k, bound[k]) {
            rest[n] = k;
            finished[k] = true;
            n += 1;
        }
    }
    if n > 0 {
        add_sums(kind, consts, &rest[..n], xs, &mut sums);
    }
    first_least(&sums, (0..CANDIDATES).filter(|&k| finished[k]))
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
/// block's first least candidate gives, as [`search`] finds it; `None` when a candidate of
/// some block is not for the specialised loop, or the blocks are not of one such length (the
/// caller then searches block by block).
///
/// Every candidate's parameters are formed for the eight blocks together, and its sums for
/// the eight blocks go over the values together, each lane's sum added value by value in the
/// reference's order. Candidates are taken in order, each kept by a block only when its sum
/// is strictly below the block's best so far (the first least, as the reference keeps it).
/// A later candidate is first bounded by its squared errors of each block's largest and
/// smallest values (a lower bound on its whole sum: see [`small_search`]), and quantized over
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

/// The sums of group `group` of candidates (at most [`LANES`]) after `xs`, from their
/// `sums`; unused lanes repeat the first candidate (their sums are dropped). Inlined
/// wherever it is called, so that it is compiled for its caller's vectorised context (an
/// outlined copy would get the baseline instructions, and call libm to round).
#[expect(clippy::inline_always, reason = "see the documentation")]
#[inline(always)]
fn group_sums(
    kind: Kind,
    consts: &[Consts; CANDIDATES],
    group: &[usize],
    xs: &[f32],
    sums: &[f64; CANDIDATES],
) -> [f64; LANES] {
    let last = group.len() - 1;
    let k: [Consts; LANES] = std::array::from_fn(|j| consts[group[j.min(last)]]);
    let mut lanes: [f64; LANES] = std::array::from_fn(|j| sums[group[j.min(last)]]);
    candidate_sums(kind, &k, xs, &mut lanes);
    lanes
}

/// Adds the squared errors of `xs` under the candidates `which` to their `sums`, eight
/// candidates at a time.
#[expect(clippy::inline_always, reason = "see search")]
#[inline(always)]
fn add_sums(
    kind: Kind,
    consts: &[Consts; CANDIDATES],
    which: &[usize],
    xs: &[f32],
    sums: &mut [f64; CANDIDATES],
) {
    if which.len() > LANES && xs.len() >= PARALLEL {
        // A block as large as a whole tensor: its groups on the pool. Each group's sums are
        // its own, added in value order as on one thread, so the result does not depend on
        // the number of threads.
        let start = *sums;
        let groups: Vec<[f64; LANES]> = which
            .par_chunks(LANES)
            .map(|group| {
                vectorised(
                    #[inline(always)]
                    || group_sums(kind, consts, group, xs, &start),
                )
            })
            .collect();
        for (group, lanes) in which.chunks(LANES).zip(groups) {
            for (&c, &s) in group.iter().zip(&lanes) {
                sums[c] = s;
            }
        }
    } else {
        for group in which.chunks(LANES) {
            let lanes = group_sums(kind, consts, group, xs, sums);
            for (&c, &s) in group.iter().zip(&lanes) {
                sums[c] = s;
            }
        }
    }
}

/// The first of `which` (in increasing order) whose sum is least, as the search keeps
/// it: a sum replaces the best only when strictly below it, starting from infinity;
/// candidate 0 when none is below infinity.
fn first_least(sums: &[f64; CANDIDATES], which: impl Iterator<Item = usize>) -> usize {
    let mut best = 0;
    let mut best_sse = f64::INFINITY;
    for k in which {
        if sums[k] < best_sse {
            best_sse = sums[k];
            best = k;
        }
    }
    best
}

#[cfg(test)]
mod tests;
