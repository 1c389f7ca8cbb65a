//! The MSE search: the block's range shrunk by 1, 0.98, … 0.2, and the first candidate whose
//! squared error is least, exactly as the reference finds it by quantizing the block under
//! each candidate in turn and summing the squared errors value by value in `f64`.
//!
//! [`mse_choice`] is the search of one block; `approx` settles most long blocks' choices from
//! approximate sums with proven bounds, `tail` bounds a long block's candidates by its
//! largest values, and `lanes` searches eight short blocks at once.

use rayon::prelude::*;

use super::Scratch;
use crate::core::config::Config;
use crate::core::kernel::Quantizer;
use crate::core::kernel::segment::{Consts, Kind, LANES, Prepared, candidate_sums, consts8};
use crate::core::params::{BlockParams, BlockStats, PARAM_LANES, ParamCalc, RealRange};
use crate::core::simd::{Avx2, vectorised};

pub(super) mod approx;
mod lanes;
mod tail;

use approx::approx_search;
pub(crate) use lanes::{LANE_BLOCK, mse_lanes};
use tail::Tail;

/// The MSE search's candidates: the range shrunk by 1, 0.98, … 0.2.
pub(super) const CANDIDATES: usize = 41;

/// Candidate `k`'s shrink factor, `1 − 0.02·k` in f32.
pub(super) fn shrink(k: usize) -> f32 {
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
pub(super) const PARALLEL: usize = 1 << 16;

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
pub(super) fn mse_choice(
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
pub(super) fn fast_choice(
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
pub(super) fn lane_candidates(
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
pub(super) fn search(
    kind: Kind,
    consts: &[Consts; CANDIDATES],
    xs: &[f32],
    active: &mut Vec<usize>,
) -> usize {
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
pub(super) struct Start {
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
    pub(super) fn of(kind: Kind, consts: &[Consts; CANDIDATES], xs: &[f32]) -> Self {
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
pub(super) fn exact_search(
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
pub(super) fn first_least(sums: &[f64; CANDIDATES], which: impl Iterator<Item = usize>) -> usize {
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
