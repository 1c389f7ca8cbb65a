//! Block and row statistics in one vectorisable pass, equal to [`BlockStats::push`] applied
//! value by value.
//!
//! Minimum and maximum are taken with plain comparisons in [`LANES`] lanes. For a non-zero
//! result that is the same value whatever the order (a non-zero f32 has one bit pattern); a
//! zero result (where `f32::min` may pick `-0.0` or `0.0` by order) is recomputed value by
//! value. The first element of largest magnitude follows from the minimum and maximum, with a
//! scan for the first one only when `-min == max`.

#![expect(
    clippy::inline_always,
    reason = "called per value in the statistics loops; must inline to vectorise"
)]

use crate::core::params::BlockStats;
use crate::core::simd::{Avx2, LANES, chunk_ends8, ends8};

/// The statistics of `xs`, exactly as [`BlockStats::extend`] gives them.
#[must_use]
#[inline(always)]
pub(crate) fn block_stats(xs: &[f32]) -> BlockStats {
    let (min, max) = min_max(xs);
    finish(xs, min, max)
}

/// An integer whose order is the f32 order (for finite values; `-0.0` sorts below `0.0`).
#[inline(always)]
fn key(x: f32) -> i32 {
    let b = x.to_bits() as i32;
    b ^ ((b >> 31) & 0x7fff_ffff)
}

/// The f32 of a [`key`].
fn unkey(k: i32) -> f32 {
    f32::from_bits((k ^ ((k >> 31) & 0x7fff_ffff)) as u32)
}

/// Smallest and largest value, through integer keys: a plain reduction loop the loop
/// vectoriser packs (float min/max reductions it may not reorder, and the SLP vectoriser
/// turns select-based lanes into mask shuffles).
#[inline(always)]
fn min_max(xs: &[f32]) -> (f32, f32) {
    let (mut lo, mut hi) = (i32::MAX, i32::MIN);
    for &x in xs {
        let k = key(x);
        lo = lo.min(k);
        hi = hi.max(k);
    }
    (unkey(lo), unkey(hi))
}

/// The statistics of `xs` given its minimum and maximum (taken in any order; zeros are
/// recomputed value by value, since their sign depends on the order).
#[inline(always)]
fn finish(xs: &[f32], min: f32, max: f32) -> BlockStats {
    if xs.is_empty() {
        return BlockStats::EMPTY;
    }
    if min == 0.0 || max == 0.0 {
        let mut st = BlockStats::EMPTY;
        st.extend(xs);
        return st;
    }
    let extreme = if -min > max {
        min
    } else if max > -min {
        max
    } else {
        // Both ends have the largest magnitude: the first one met wins.
        xs.iter()
            .copied()
            .find(|&x| x == min || x == max)
            .unwrap_or(max)
    };
    BlockStats {
        min,
        max,
        extreme,
        count: xs.len(),
    }
}

/// The minimum and maximum of every chunk of a row (the last chunk may be shorter), from
/// which the statistics of the row and of its groups of a multiple of the chunk width follow
/// without reading the values again. Chunks are [`LANES`] values wide ([`ChunkStats::fill`],
/// for the ladder's groups of every size), or one group wide ([`ChunkStats::fill_wide`], for
/// the active configuration's groups).
#[derive(Debug, Default)]
pub(crate) struct ChunkStats {
    lo: Vec<f32>,
    hi: Vec<f32>,
    /// Values per chunk (0 before the first fill).
    width: usize,
    /// Coarser levels of the chunks, built by [`ChunkStats::merge_runs`]: `levels[k]` holds the
    /// minima and maxima of runs of `2^(k + 1)` chunks (the last run may be shorter).
    levels: Vec<(Vec<f32>, Vec<f32>)>,
    /// Levels that belong to the current fill.
    built: usize,
}

/// `out[i] = f(xs[2i], xs[2i + 1])`, and the last element alone when `xs` has an odd length.
#[inline(always)]
fn pairs(xs: &[f32], out: &mut Vec<f32>, f: impl Fn(f32, f32) -> f32) {
    let (two, rest) = xs.as_chunks::<2>();
    out.clear();
    out.extend(two.iter().map(|p| f(p[0], p[1])));
    out.extend(rest.first().copied());
}

/// `a < b ? a : b` (x86 `minps`; the operands are never NaN).
#[inline(always)]
fn less(a: f32, b: f32) -> f32 {
    if a < b { a } else { b }
}

/// `a > b ? a : b` (x86 `maxps`).
#[inline(always)]
fn more(a: f32, b: f32) -> f32 {
    if a > b { a } else { b }
}

/// A chunk's smallest and largest value: a tree of packed minima and maxima, 8 -> 4 -> 2 ->
/// 1 (lane `j` against `j + 4`, then `j` against `j + 2`, then the last two).
#[inline(always)]
pub(crate) fn chunk_ends(c: &[f32; LANES]) -> (f32, f32) {
    let a: [f32; 4] = std::array::from_fn(|j| less(c[j], c[j + 4]));
    let b: [f32; 4] = std::array::from_fn(|j| more(c[j], c[j + 4]));
    let a = [less(a[0], a[2]), less(a[1], a[3])];
    let b = [more(b[0], b[2]), more(b[1], b[3])];
    (less(a[0], a[1]), more(b[0], b[1]))
}

impl ChunkStats {
    /// Computes the chunks of `row`: eight chunks at a time with AVX2 ([`chunk_ends8`],
    /// the same tree for eight chunks side by side), the rest one at a time
    /// ([`chunk_ends`]). On the 4096 x 4096 decades matrix (one thread, under callgrind)
    /// the ladder's `fill` ran about 6 instructions per chunk, against 14 one chunk at a
    /// time.
    #[inline(always)]
    pub(crate) fn fill(&mut self, row: &[f32]) {
        self.width = LANES;
        self.built = 0;
        let (chunks, rest) = row.as_chunks::<LANES>();
        let n = chunks.len() + usize::from(!rest.is_empty());
        self.lo.resize(n, 0.0);
        self.hi.resize(n, 0.0);
        let simd = Avx2::detect();
        let mut done = 0;
        let (runs, _) = chunks.as_chunks::<LANES>();
        let (lo8, _) = self.lo.as_chunks_mut::<LANES>();
        let (hi8, _) = self.hi.as_chunks_mut::<LANES>();
        for ((c, lo), hi) in runs.iter().zip(lo8).zip(hi8) {
            let Some(ends) = chunk_ends8(simd, c) else {
                break;
            };
            (*lo, *hi) = ends;
            done += LANES;
        }
        let left = chunks.get(done..).unwrap_or_default();
        let lo = self.lo.get_mut(done..).unwrap_or_default();
        let hi = self.hi.get_mut(done..).unwrap_or_default();
        for ((c, lo), hi) in left.iter().zip(lo).zip(hi) {
            (*lo, *hi) = chunk_ends(c);
        }
        if !rest.is_empty() {
            self.lo[n - 1] = rest.iter().copied().fold(f32::INFINITY, less);
            self.hi[n - 1] = rest.iter().copied().fold(f32::NEG_INFINITY, more);
        }
    }

    /// Computes the chunks of `row` with `width` values each, a multiple of [`LANES`]: a
    /// running minimum and maximum per vector lane down each chunk, then one reduction per
    /// chunk.
    pub(crate) fn fill_wide(&mut self, row: &[f32], width: usize) {
        debug_assert!(width > 0 && width.is_multiple_of(LANES));
        if width == LANES {
            self.fill(row);
            return;
        }
        self.width = width;
        self.built = 0;
        let n = row.len().div_ceil(width);
        self.lo.resize(n, 0.0);
        self.hi.resize(n, 0.0);
        pulp::Arch::new().dispatch(WideFill {
            row,
            width,
            lo: &mut self.lo,
            hi: &mut self.hi,
        });
    }

    /// Builds the levels of runs of 2, 4, ... up to `per` chunks, so that
    /// [`ChunkStats::groups8`] reads a group of that many chunks (a power of two) as one
    /// minimum and maximum. The minimum of a run is the same value whatever order its chunks
    /// are taken in, except a zero, which `groups8` recomputes from the values.
    pub(crate) fn merge_runs(&mut self, per: usize) {
        let mut k = 0;
        while 2usize << k <= per {
            if self.levels.len() <= k {
                self.levels.push(Default::default());
            }
            let (done, rest) = self.levels.split_at_mut(k);
            let (src_lo, src_hi) = match done.last() {
                Some((lo, hi)) => (&lo[..], &hi[..]),
                None => (&self.lo[..], &self.hi[..]),
            };
            if let Some((lo, hi)) = rest.first_mut() {
                pairs(src_lo, lo, less);
                pairs(src_hi, hi, more);
            }
            k += 1;
        }
        self.built = k;
    }

    /// The minima and maxima to read groups of `per` chunks from, and the entries per group
    /// in them: a merged level when one was built for `per`, else the chunks.
    #[inline(always)]
    fn level(&self, per: usize) -> (&[f32], &[f32], usize) {
        if per.is_power_of_two() && per > 1 {
            let k = per.trailing_zeros() as usize - 1;
            if k < self.built
                && let Some((lo, hi)) = self.levels.get(k)
            {
                return (lo, hi, 1);
            }
        }
        (&self.lo, &self.hi, per)
    }

    /// The minima and maxima of groups of `per` chunks, one entry per group, when a level
    /// was built for `per` (or `per` is 1: the chunks' own); `None` otherwise.
    pub(crate) fn merged(&self, per: usize) -> Option<(&[f32], &[f32])> {
        match self.level(per) {
            (lo, hi, 1) => Some((lo, hi)),
            _ => None,
        }
    }

    /// Each chunk's smallest and largest value, from the last fill.
    pub(crate) fn ends(&self) -> (&[f32], &[f32]) {
        (&self.lo, &self.hi)
    }

    /// Values per chunk of the last fill (1 before the first).
    pub(crate) fn width(&self) -> usize {
        self.width.max(1)
    }

    /// The statistics of `xs`, the part of the row starting at chunk `first` (its length a
    /// multiple of the chunk width, or running to the end of the row), exactly as
    /// [`BlockStats::extend`] gives them.
    #[inline(always)]
    pub(crate) fn group(&self, first: usize, xs: &[f32]) -> BlockStats {
        let n = xs.len().div_ceil(self.width());
        if n == 0 {
            return BlockStats::EMPTY;
        }
        let (Some(lo), Some(hi)) = (self.lo.get(first..first + n), self.hi.get(first..first + n))
        else {
            return block_stats(xs);
        };
        let (mut min, mut max) = (lo[0], hi[0]);
        for (&l, &h) in lo[1..].iter().zip(&hi[1..]) {
            min = less(l, min);
            max = more(h, max);
        }
        finish(xs, min, max)
    }

    /// [`ChunkStats::group`]'s minimum, maximum and extreme for the `m` (at most eight)
    /// consecutive groups of `per` chunks from group `g0` (the last group may have fewer
    /// chunks), into lane `j` of `lo`, `hi` and `extreme` for group `g0 + j`; `xs(g)` gives
    /// the values of group `g`, read only for a group with a zero end or two ends of equal
    /// magnitude. The lanes are computed without branches on the values.
    #[inline(always)]
    pub(crate) fn groups8<'a>(
        &self,
        simd: Avx2,
        g0: usize,
        per: usize,
        m: usize,
        xs: impl Fn(usize) -> &'a [f32],
        [lo, hi, extreme]: [&mut [f32; 8]; 3],
    ) {
        let (los, his, step) = self.level(per);
        let n = los.len().min(his.len());
        // Groups past the chunks filled (none in the ladder) go through `group`.
        let mut have = [false; 8];
        let m = m.min(8);
        let eight = |v: &[f32]| -> Option<[f32; 8]> { v.get(g0..g0 + 8)?.try_into().ok() };
        if let (1, 8, Some(l), Some(h)) = (step, m, eight(los), eight(his)) {
            // One entry per group, eight groups: a copy of fixed size (in registers, where
            // a copy of `m` entries is a call that the lanes' reads then wait for).
            (*lo, *hi, have) = (l, h, [true; 8]);
        } else if step == 1 {
            // One entry per group: a copy.
            let end = (g0 + m).min(n);
            if let (Some(l), Some(h)) = (los.get(g0..end), his.get(g0..end)) {
                let k = l.len();
                lo[..k].copy_from_slice(l);
                hi[..k].copy_from_slice(h);
                have[..k].fill(true);
            }
        } else {
            for j in 0..m {
                let a = ((g0 + j) * step).min(n);
                let b = (a + step).min(n);
                let (l, h) = (&los[a..b], &his[a..b]);
                if let (Some(&l0), Some(&h0)) = (l.first(), h.first()) {
                    let (mut min, mut max) = (l0, h0);
                    for (&l, &h) in l[1..].iter().zip(&h[1..]) {
                        min = less(l, min);
                        max = more(h, max);
                    }
                    (lo[j], hi[j], have[j]) = (min, max, true);
                }
            }
        }
        // Lanes whose statistics come from the values: a zero end or ends of equal magnitude
        // (or no statistics). Tested first on the eight lanes' ends alone, as one mask of
        // float comparisons: a mask of `bool`s carried between steps is formed lane by lane.
        #[expect(
            clippy::needless_bitwise_bool,
            reason = "one mask of the eight lanes, without a branch per lane and test"
        )]
        let ends = |lo: &[f32; 8], hi: &[f32; 8], j: usize| {
            (lo[j] == 0.0) | (hi[j] == 0.0) | (-lo[j] == hi[j])
        };
        let any = if have == [true; 8] {
            let (any, ex) = ends8(simd, lo, hi);
            *extreme = ex;
            any
        } else {
            *extreme = std::array::from_fn(|j| if -lo[j] > hi[j] { lo[j] } else { hi[j] });
            (0..m).any(|j| !have[j] || ends(lo, hi, j))
        };
        if any {
            for j in 0..m {
                if !have[j] || ends(lo, hi, j) {
                    let st = self.group((g0 + j) * per, xs(g0 + j));
                    (lo[j], hi[j], extreme[j]) = (st.min, st.max, st.extreme);
                }
            }
        }
    }
}

/// [`ChunkStats::fill_wide`]'s loop, written with `pulp`'s vector operations: as plain
/// loops, the running minima compile to compare-and-blend sequences instead of `minps`.
struct WideFill<'a> {
    row: &'a [f32],
    width: usize,
    lo: &'a mut [f32],
    hi: &'a mut [f32],
}

impl pulp::WithSimd for WideFill<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, simd: S) {
        let chunks = self.row.chunks(self.width);
        for ((part, lo), hi) in chunks.zip(self.lo.iter_mut()).zip(self.hi.iter_mut()) {
            let (vs, rest) = S::as_simd_f32s(part);
            let mut l = simd.splat_f32s(f32::INFINITY);
            let mut h = simd.splat_f32s(f32::NEG_INFINITY);
            for &v in vs {
                l = simd.min_f32s(l, v);
                h = simd.max_f32s(h, v);
            }
            // The values are never NaN, and zero ends are recomputed (see `finish`), so
            // the order of the comparisons does not matter.
            *lo = rest.iter().copied().fold(simd.reduce_min_f32s(l), less);
            *hi = rest.iter().copied().fold(simd.reduce_max_f32s(h), more);
        }
    }
}

/// Merges the statistics of consecutive parts of a block, in order (equal to extending with
/// the parts' values in order, except that a zero minimum or maximum must be recomputed: see
/// [`merge_is_exact`]).
#[must_use]
pub(crate) fn merge(a: &BlockStats, b: &BlockStats) -> BlockStats {
    BlockStats {
        min: if b.min < a.min { b.min } else { a.min },
        max: if b.max > a.max { b.max } else { a.max },
        extreme: if b.extreme.abs() > a.extreme.abs() {
            b.extreme
        } else {
            a.extreme
        },
        count: a.count + b.count,
    }
}

/// Whether a merged result is what value-by-value extension gives (its minimum and maximum
/// are not zeros, whose sign depends on order).
#[must_use]
pub(crate) fn merge_is_exact(st: &BlockStats) -> bool {
    st.min != 0.0 && st.max != 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(xs: &[f32]) -> BlockStats {
        let mut st = BlockStats::EMPTY;
        st.extend(xs);
        st
    }

    fn same(a: &BlockStats, b: &BlockStats) -> bool {
        a.min.to_bits() == b.min.to_bits()
            && a.max.to_bits() == b.max.to_bits()
            && a.extreme.to_bits() == b.extreme.to_bits()
            && a.count == b.count
    }

    /// Rows of every length up to 200 whose values are small integers and zeros of both
    /// signs (so that a chunk's minimum or maximum is often a tie, whose sign shows which
    /// operand each step took): the chunk ends from [`ChunkStats::fill`] (eight chunks at a
    /// time with AVX2) are each chunk's tree, bit for bit.
    #[test]
    fn chunk_ends_eight_at_a_time_are_each_chunks_tree() {
        let mut chunks = ChunkStats::default();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for len in 0..=200 {
            let row: Vec<f32> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    match state % 5 {
                        0 => 0.0,
                        1 => -0.0,
                        k => (k as f32 - 3.0) * if state & 64 == 0 { 1.0 } else { 0.5 },
                    }
                })
                .collect();
            chunks.fill(&row);
            let (lo, hi) = chunks.ends();
            let (whole, rest) = row.as_chunks::<LANES>();
            assert_eq!(lo.len(), whole.len() + usize::from(!rest.is_empty()));
            for (i, c) in whole.iter().enumerate() {
                let (l, h) = chunk_ends(c);
                assert_eq!(
                    (lo[i].to_bits(), hi[i].to_bits()),
                    (l.to_bits(), h.to_bits()),
                    "length {len}, chunk {i}: {c:?}"
                );
            }
        }
    }

    #[test]
    fn fast_stats_equal_value_by_value_stats() {
        let cases: Vec<Vec<f32>> = vec![
            vec![],
            vec![0.0],
            vec![-0.0],
            vec![-0.0, 0.0, 1.0],
            vec![0.0, -0.0, -1.0],
            vec![1.0, -1.0],
            vec![-1.0, 1.0],
            vec![0.5, -2.0, 2.0, 1.0, -2.0, 0.0, 0.0, 0.0, 0.0, 2.0],
            vec![3.0; 19],
            (0..37).map(|i| (i as f32 - 18.0) * 0.25).collect(),
            (0..37).map(|i| (18.0 - i as f32) * 0.25).collect(),
            (0..23).map(|i| (i as f32).sin()).collect(),
            // Many groups, with zeros and ends of equal magnitude among them.
            (0..200).map(|i| ((i * 7919) % 13) as f32 - 6.0).collect(),
            // Odd numbers of chunks at every level, zeros of both signs among the values.
            (0..330)
                .map(|i| match i % 29 {
                    0 => 0.0,
                    7 => -0.0,
                    k => ((i * 7919) % 101) as f32 * if k % 3 == 0 { -0.5 } else { 0.25 },
                })
                .collect(),
        ];
        for xs in &cases {
            let want = reference(xs);
            assert!(same(&block_stats(xs), &want), "{xs:?}");
            let mut chunks = ChunkStats::default();
            chunks.fill(xs);
            assert!(same(&chunks.group(0, xs), &want), "{xs:?}");
            // Chunks of eight values for groups of every size, chunks as wide as the groups,
            // and chunks of eight with runs of up to 8 chunks merged (groups of 16, 32 and 64
            // read a merged run; 24 reads three chunks).
            let mut merged = ChunkStats::default();
            merged.fill(xs);
            merged.merge_runs(8);
            let mut wide = ChunkStats::default();
            for size in [8, 16, 24, 32, 64] {
                wide.fill_wide(xs, size);
                assert_eq!(wide.width(), size);
                assert!(same(&wide.group(0, xs), &want), "{xs:?}");
                for (chunks, per) in [(&chunks, size / 8), (&wide, 1), (&merged, size / 8)] {
                    for (g, part) in xs.chunks(size).enumerate() {
                        assert!(
                            same(&chunks.group(g * per, part), &reference(part)),
                            "{xs:?}"
                        );
                    }
                    // Eight groups at a time, from every starting group.
                    let parts: Vec<&[f32]> = xs.chunks(size).collect();
                    for g0 in 0..parts.len() {
                        let m = (parts.len() - g0).min(8);
                        let (mut lo, mut hi, mut ex) = ([9.0; 8], [9.0; 8], [9.0; 8]);
                        chunks.groups8(
                            Avx2::detect(),
                            g0,
                            per,
                            m,
                            |g| parts[g],
                            [&mut lo, &mut hi, &mut ex],
                        );
                        for j in 0..m {
                            let want = reference(parts[g0 + j]);
                            let got = [lo[j], hi[j], ex[j]].map(f32::to_bits);
                            let want = [want.min, want.max, want.extreme].map(f32::to_bits);
                            assert_eq!(got, want, "{xs:?} size {size}");
                        }
                    }
                }
            }
            for cut in 0..xs.len() {
                let m = merge(&reference(&xs[..cut]), &reference(&xs[cut..]));
                if merge_is_exact(&m) {
                    assert!(same(&m, &want), "{xs:?} cut {cut}");
                }
            }
        }
    }
}
