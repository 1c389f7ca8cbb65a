//! Two neighbouring order statistics of a block, for percentile clipping.
//!
//! Percentile clipping needs two neighbouring order statistics of the block, not a sorted
//! copy: when few values lie beyond them (99.9 % of a row leaves a handful), one streamed
//! pass keeps the largest (or smallest) few, skipping chunks of values that cannot be among
//! them; otherwise `select_nth_unstable` finds the lower one and the upper one is the least
//! of the partition above it. Values are compared in [`f32::total_cmp`]'s order (as `i32`
//! keys), which is the order the full sort used, so every order statistic is the same value
//! bit for bit.

use rayon::prelude::*;

use super::{Scratch, Tops};
use crate::core::params::PARAM_LANES;

/// `x`'s place in [`f32::total_cmp`]'s order, as an `i32` in the same order.
#[inline]
pub(super) fn key(x: f32) -> i32 {
    let b = x.to_bits() as i32;
    b ^ ((((b >> 31) as u32) >> 1) as i32)
}

/// The value whose [`key`] is `k`.
#[inline]
fn from_key(k: i32) -> f32 {
    f32::from_bits((k ^ ((((k >> 31) as u32) >> 1) as i32)) as u32)
}

/// At most this many values beyond an order statistic are kept in a streamed selection.
const STREAM_MAX: usize = 1 << 16;

/// The order statistics of ranks `i` and `min(i + 1, n - 1)` of `xs` (magnitudes when `ABS`)
/// in [`f32::total_cmp`]'s order. `at`, when given, is the column of the row where `xs`
/// starts, for the largest two of `scratch.tops` ([`Tops::get`]) when it holds them.
#[expect(clippy::inline_always, reason = "see clipped_params_in")]
#[inline(always)]
pub(super) fn order_pair<const ABS: bool>(
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
pub(super) fn largest_two<const ABS: bool, const NEG: bool>(xs: &[f32]) -> (i32, i32) {
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
pub(super) const CHUNK: usize = 16;

/// At most this many keys are selected through the chunks' largest ([`largest_pair_seeded`]).
pub(super) const SEEDED_MAX: usize = 256;

/// Values from which a streamed selection is split between the threads.
pub(super) const SPLIT: usize = 1 << 20;

/// The `k`-th and `k − 1`-th largest keys of `xs` (the `k`-th twice when `k` is 1), keys
/// negated when `NEG` (`1 <= k <= xs.len()`): through the chunks' largest keys
/// ([`largest_pair_seeded`]) when `k` is small and at most a quarter of the chunks, else
/// in one pass over `xs` that keeps the largest `k` seen so far ([`largest_k`]), split
/// between the threads for a block of a million values or more (the `k` largest of the
/// whole are among the `k` largest of its parts).
pub(super) fn largest_pair<const ABS: bool, const NEG: bool>(
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
pub(super) fn largest_k<const ABS: bool, const NEG: bool>(
    xs: &[f32],
    k: usize,
    top: &mut Vec<i32>,
) {
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
pub(super) fn of<const ABS: bool, const NEG: bool>(x: f32) -> i32 {
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

/// [`order_pair`]'s first two cases for the eight runs of `n` values from column `at`: the
/// order statistics of ranks `i` and `min(i + 1, n − 1)` when they are among each run's
/// largest two or smallest two and `tops` holds them.
pub(super) fn order_pair8<const ABS: bool>(
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
