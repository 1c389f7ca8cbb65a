//! The largest two keys of every aligned run of 2, 4, 8, … values of a row, built once per
//! row so that the ladder's percentile rungs read each group's largest two instead of
//! scanning its values once per rung.
//!
//! A run's largest two are a multiset of [`key`]s (in [`f32::total_cmp`]'s order, so `-0.0`
//! and `0.0` are distinct keys and ties are equal keys): merged from its two halves' largest
//! two as `max(a₁, b₁)` and `max(min(a₁, b₁), a₂, b₂)`, which is exactly the largest two of
//! the run's values, whatever order they are taken in.

use super::order::key;

/// One kind of key's levels.
#[derive(Debug, Default)]
struct Levels {
    /// Level `k`: each whole run of `2^(k+1)` values' largest key.
    first: Vec<Vec<i32>>,
    /// Level `k`: each run's second largest key.
    second: Vec<Vec<i32>>,
    /// Levels built for the row last filled.
    built: usize,
    /// The keys are of magnitudes.
    abs: bool,
}

/// The levels of a row's keys ([`Tops::fill`]), plain and negated (for the smallest two).
#[derive(Debug, Default)]
pub(crate) struct Tops {
    /// Index 0: the keys; 1: the keys negated (`!key`).
    sets: [Levels; 2],
}

impl Tops {
    /// Builds, for `row`'s keys (of magnitudes when `abs`), plain when `plain` and negated
    /// when `negated`, the largest two of every aligned run of up to `max_run` values (a
    /// power of two). Forgets any earlier row's.
    pub(crate) fn fill(
        &mut self,
        row: &[f32],
        abs: bool,
        [plain, negated]: [bool; 2],
        max_run: usize,
    ) {
        for (neg, (set, wanted)) in self.sets.iter_mut().zip([plain, negated]).enumerate() {
            set.built = 0;
            if wanted {
                set.fill(row, abs, neg == 1, max_run);
            }
        }
    }

    /// The largest two keys (of magnitudes when `abs`, negated when `neg`) of the `len`
    /// values from column `start` of the row last filled, when a level holds them: `len` a
    /// power of two from 2, `start` a multiple of it, the run whole in the row.
    #[inline]
    pub(crate) fn get(&self, start: usize, len: usize, abs: bool, neg: bool) -> Option<(i32, i32)> {
        let (first, second) = self.level(start, len, abs, neg)?;
        Some((*first.first()?, *second.first()?))
    }

    /// [`Tops::get`] for the eight consecutive runs of `len` values from column `start`, as
    /// eight lanes: `None` unless the level holds all eight.
    #[inline]
    pub(crate) fn get8(
        &self,
        start: usize,
        len: usize,
        abs: bool,
        neg: bool,
    ) -> Option<([i32; 8], [i32; 8])> {
        let (first, second) = self.level(start, len, abs, neg)?;
        Some((*first.first_chunk()?, *second.first_chunk()?))
    }

    /// The largest and second largest keys of the runs of `len` values from the one at
    /// column `start` to the row's last whole run, when a level holds them (see
    /// [`Tops::get`]).
    #[inline]
    fn level(&self, start: usize, len: usize, abs: bool, neg: bool) -> Option<(&[i32], &[i32])> {
        let set = &self.sets[usize::from(neg)];
        if set.built == 0 || set.abs != abs || len < 2 || !len.is_power_of_two() {
            return None;
        }
        if !start.is_multiple_of(len) {
            return None;
        }
        let k = len.trailing_zeros() as usize - 1;
        if k >= set.built {
            return None;
        }
        let i = start / len;
        Some((set.first.get(k)?.get(i..)?, set.second.get(k)?.get(i..)?))
    }
}

impl Levels {
    fn fill(&mut self, row: &[f32], abs: bool, neg: bool, max_run: usize) {
        self.abs = abs;
        let levels = max_run.max(2).ilog2() as usize;
        while self.first.len() < levels {
            self.first.push(Vec::new());
            self.second.push(Vec::new());
        }
        let of = |x: f32| {
            let c = key(if abs { x.abs() } else { x });
            if neg { !c } else { c }
        };
        let (pairs, _) = row.as_chunks::<2>();
        let (first, second) = (&mut self.first[0], &mut self.second[0]);
        first.resize(pairs.len(), 0);
        second.resize(pairs.len(), 0);
        for ((p, f), s) in pairs.iter().zip(first.iter_mut()).zip(second.iter_mut()) {
            let (a, b) = (of(p[0]), of(p[1]));
            *f = a.max(b);
            *s = a.min(b);
        }
        for k in 1..levels {
            let (done_f, rest_f) = self.first.split_at_mut(k);
            let (done_s, rest_s) = self.second.split_at_mut(k);
            let (Some(pf), Some(ps), Some(cf), Some(cs)) = (
                done_f.last(),
                done_s.last(),
                rest_f.first_mut(),
                rest_s.first_mut(),
            ) else {
                break;
            };
            let (pf, _) = pf.as_chunks::<2>();
            let (ps, _) = ps.as_chunks::<2>();
            cf.resize(pf.len(), 0);
            cs.resize(pf.len(), 0);
            for (((f2, s2), f), s) in pf.iter().zip(ps).zip(cf.iter_mut()).zip(cs.iter_mut()) {
                *f = f2[0].max(f2[1]);
                *s = f2[0].min(f2[1]).max(s2[0].max(s2[1]));
            }
        }
        self.built = levels;
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::order::largest_two;
    use super::Tops;

    proptest! {
        /// Every aligned run's largest two from the levels are those a scan of its values
        /// finds, for plain, magnitude and negated keys, on values with ties and signed
        /// zeros.
        #[test]
        fn levels_are_each_runs_largest_two(
            xs in prop::collection::vec(
                prop_oneof![Just(0.0f32), Just(-0.0f32), Just(1.5f32), Just(-1.5f32), -4.0f32..4.0],
                0..300,
            ),
            abs in any::<bool>(),
        ) {
            let mut tops = Tops::default();
            tops.fill(&xs, abs, [true, true], 128);
            for len in [2usize, 4, 8, 16, 32, 64, 128] {
                for start in (0..xs.len()).step_by(len) {
                    let run = &xs[start..];
                    let whole = run.len() >= len;
                    for neg in [false, true] {
                        let got = tops.get(start, len, abs, neg);
                        if !whole {
                            prop_assert_eq!(got, None);
                            continue;
                        }
                        let run = &run[..len];
                        let want = match (abs, neg) {
                            (false, false) => largest_two::<false, false>(run),
                            (false, true) => largest_two::<false, true>(run),
                            (true, false) => largest_two::<true, false>(run),
                            (true, true) => largest_two::<true, true>(run),
                        };
                        prop_assert_eq!(got, Some(want), "run {}..+{} neg {}", start, len, neg);
                    }
                }
            }
            // Eight runs at once: each as `get` gives it, or none when any is missing.
            for len in [2usize, 4, 8, 16] {
                for start in (0..xs.len()).step_by(len) {
                    for neg in [false, true] {
                        let eight: Option<Vec<_>> =
                            (0..8).map(|j| tops.get(start + j * len, len, abs, neg)).collect();
                        let want = eight.map(|v| {
                            (std::array::from_fn(|j| v[j].0), std::array::from_fn(|j| v[j].1))
                        });
                        prop_assert_eq!(tops.get8(start, len, abs, neg), want);
                    }
                }
            }
            // Runs the levels do not hold, and keys of the other kind.
            prop_assert_eq!(tops.get(0, 256, abs, false), None);
            prop_assert_eq!(tops.get(1, 2, abs, false), None);
            prop_assert_eq!(tops.get(0, 6, abs, false), None);
            prop_assert_eq!(tops.get(0, 2, !abs, false), None);
            // A later fill forgets the kinds it does not build.
            tops.fill(&xs, abs, [false, false], 128);
            prop_assert_eq!(tops.get(0, 2, abs, false), None);
            prop_assert_eq!(tops.get(0, 2, abs, true), None);
        }
    }
}
