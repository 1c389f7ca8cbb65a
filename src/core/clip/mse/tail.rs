//! A long block's largest values, which bound its MSE candidates' sums ahead of their turn.

use rayon::prelude::*;

use super::{ALL, CANDIDATES, PARALLEL};
use crate::core::kernel::segment::{Consts, Kind, LANES, candidate_sums};
use crate::core::simd::vectorised;

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
pub(super) struct Tail {
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
    pub(super) fn of(kind: Kind, consts: &[Consts; CANDIDATES], xs: &[f32]) -> Self {
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
    pub(super) fn bound(&self, k: usize, sum: f64, done: usize) -> f64 {
        let mut s = sum;
        for t in 0..self.n {
            if self.at[t] >= done {
                s += self.terms[t][k];
            }
        }
        s
    }
}
