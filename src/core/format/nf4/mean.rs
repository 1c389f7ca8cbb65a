//! `torch.Tensor.mean()` of a contiguous float32 vector on the CPU, in torch's own order of
//! additions: the offset bitsandbytes subtracts before double-quantizing the NF4 absmax values.
//!
//! torch 2.x computes the mean as `sum / n` in f32 (`mean_out` in `ReduceOps.cpp`), and the sum
//! by `cascade_sum` (`aten/src/ATen/native/cpu/SumKernel.cpp`), which for a contiguous vector
//! is `vectorized_inner_sum`:
//!
//! - the values are read as vectors of [`LANES`] f32 (`Vectorized<float>`), each lane summing
//!   every [`LANES`]-th value; the vectors go through `row_sum`, which interleaves them over
//!   four accumulators (`ilp_factor`), each a cascade of four levels (`multi_row_sum`): a level
//!   adds `2^p` inputs (`p = max(4, ceil(log2(rows)) / 4)`) before passing its sum up, so that
//!   only numbers of similar size meet;
//! - the values past the last whole vector are added in order to 0, then the lanes of the
//!   vector sum are added to that, lane 0 first;
//! - a vector shorter than one [`LANES`]-wide load is summed by the same `row_sum` on scalars.
//!
//! With more than one thread and at least [`GRAIN`] values (`at::internal::GRAIN_SIZE`), the
//! reduction is split (`two_pass_reduction`): `min(threads, ceil(n / GRAIN))` chunks of
//! `ceil(n / chunks)` values are summed as above into a buffer of `threads` partial sums (the
//! unused ones 0), and the buffer is summed by the same kernel.
//!
//! The order depends on the vector width and on the thread count:
//! - [`LANES`] is 8: torch's `sum` kernel reads 8 floats per vector on x86-64 under every CPU
//!   capability it dispatches to (checked against torch 2.15 under `ATEN_CPU_CAPABILITY`
//!   avx512, avx2 and default: the same means on every input of the fixtures). Other
//!   architectures (ARM's NEON, 4 floats) are not covered.
//! - The thread count is `torch.get_num_threads()` (by default the machine's physical cores);
//!   it matters from [`GRAIN`] values on (32 768 NF4 blocks: a matrix of 2 097 152 weights or
//!   more). [`TORCH_THREADS`] is the count quantscope assumes.

/// Floats per vector of torch's CPU `sum` kernel on x86-64.
pub const LANES: usize = 8;
/// torch's `at::internal::GRAIN_SIZE`: the least number of values a reduction splits over
/// threads.
pub const GRAIN: usize = 32_768;
/// The thread count assumed for torch's reduction (`torch.get_num_threads()`). Every count from
/// 8 up gives the same mean for up to 8 × [`GRAIN`] values (262 144 NF4 blocks, a 4096 x 4096
/// matrix): a machine with at least 8 physical cores, torch's default.
pub const TORCH_THREADS: usize = 8;

/// `torch.from_numpy(values).mean()` on the CPU with `threads` threads (see the module
/// documentation), or 0 for no values (torch gives NaN; bitsandbytes never asks).
#[must_use]
pub fn torch_mean(values: &[f32], threads: usize) -> f32 {
    if values.is_empty() {
        return 0.0;
    }
    // torch divides by the count converted to f32 (exact up to 2^24 values).
    torch_sum(values, threads) / values.len() as f32
}

/// `torch.sum` of a contiguous f32 vector with `threads` threads.
#[must_use]
pub fn torch_sum(values: &[f32], threads: usize) -> f32 {
    let n = values.len();
    let threads = threads.max(1);
    if n < GRAIN || threads == 1 {
        return 0.0 + inner_sum(values);
    }
    // parallel_for splits only a range longer than the grain size.
    let chunks = if n > GRAIN {
        threads.min(n.div_ceil(GRAIN))
    } else {
        1
    };
    let chunk = n.div_ceil(chunks);
    let mut partial = vec![0.0f32; threads];
    for (p, part) in partial.iter_mut().zip(values.chunks(chunk)) {
        *p += inner_sum(part);
    }
    0.0 + inner_sum(&partial)
}

/// `x.sum(0)` of a contiguous f32 matrix `[rows, cols]` on the CPU: one sum per column, in
/// torch's order (`vectorized_outer_sum`). With at least [`LANES`] columns, the columns in
/// runs of `4 * LANES` are each one cascade over the rows (`multi_row_sum`) and the rest go
/// through `row_sum`; with fewer, runs of four columns are cascades and the rest `row_sum`.
/// Each column's additions do not depend on the thread count (checked against torch 2.15 on
/// 1 and 2 threads, up to 4101 columns).
#[must_use]
pub fn torch_column_sums(values: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let run = if cols >= LANES { 4 * LANES } else { 4 };
    let full = cols / run * run;
    (0..cols)
        .map(|c| {
            let at = |r: usize| values[r * cols + c];
            if c < full {
                multi_row_sum::<f32, 1>(rows, |r, _| at(r))[0]
            } else {
                row_sum::<f32>(rows, at)
            }
        })
        .collect()
}

/// What one call of torch's reduction loop adds up over `x` (before it is added to the
/// output): `vectorized_inner_sum`, or `row_sum` on scalars for fewer than [`LANES`] values.
fn inner_sum(x: &[f32]) -> f32 {
    if x.len() < LANES {
        return row_sum::<f32>(x.len(), |i| x[i]);
    }
    let (vectors, tail) = x.as_chunks::<LANES>();
    let lanes = row_sum::<[f32; LANES]>(vectors.len(), |i| vectors[i]);
    let mut acc = 0.0f32;
    for &v in tail {
        acc += v;
    }
    for v in lanes {
        acc += v;
    }
    acc
}

/// What `multi_row_sum` accumulates: an f32, or a vector of [`LANES`] added lane by lane.
trait Acc: Copy {
    const ZERO: Self;
    fn add(self, other: Self) -> Self;
}

impl Acc for f32 {
    const ZERO: Self = 0.0;
    fn add(self, other: Self) -> Self {
        self + other
    }
}

impl Acc for [f32; LANES] {
    const ZERO: Self = [0.0; LANES];
    fn add(mut self, other: Self) -> Self {
        for (a, b) in self.iter_mut().zip(other) {
            *a += b;
        }
        self
    }
}

/// torch's `row_sum`: `size` inputs read as rows of four (`ilp_factor`), summed per column by
/// [`multi_row_sum`]; the inputs past the last whole row go to column 0, then the columns are
/// added in order.
fn row_sum<T: Acc>(size: usize, load: impl Fn(usize) -> T) -> T {
    const ILP: usize = 4;
    let rows = size / ILP;
    let mut p = multi_row_sum::<T, ILP>(rows, |i, k| load(i * ILP + k));
    for i in rows * ILP..size {
        p[0] = p[0].add(load(i));
    }
    let mut sum = p[0];
    for &q in &p[1..] {
        sum = sum.add(q);
    }
    sum
}

/// torch's `multi_row_sum`: `N` columns over `size` rows, each a cascade of four levels.
fn multi_row_sum<T: Acc, const N: usize>(size: usize, load: impl Fn(usize, usize) -> T) -> [T; N] {
    const LEVELS: usize = 4;
    let power = (ceil_log2(size) / LEVELS as u32).max(4);
    let step = 1usize << power;
    let mask = step - 1;
    let mut acc = [[T::ZERO; N]; LEVELS];
    let mut i = 0;
    while i + step <= size {
        for _ in 0..step {
            for (k, a) in acc[0].iter_mut().enumerate() {
                *a = a.add(load(i, k));
            }
            i += 1;
        }
        for j in 1..LEVELS {
            let (lower, upper) = acc.split_at_mut(j);
            for (hi, lo) in upper[0].iter_mut().zip(lower[j - 1].iter_mut()) {
                *hi = hi.add(*lo);
                *lo = T::ZERO;
            }
            if i & (mask << (j * power as usize)) != 0 {
                break;
            }
        }
    }
    while i < size {
        for (k, a) in acc[0].iter_mut().enumerate() {
            *a = a.add(load(i, k));
        }
        i += 1;
    }
    let (first, rest) = acc.split_at_mut(1);
    for level in rest.iter() {
        for (a, &b) in first[0].iter_mut().zip(level) {
            *a = a.add(b);
        }
    }
    acc[0]
}

/// torch's `CeilLog2`: 1 up to 2, else `ceil(log2(x))`.
fn ceil_log2(x: usize) -> u32 {
    if x <= 2 {
        1
    } else {
        usize::BITS - (x - 1).leading_zeros()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_sums_run_in_order_and_long_ones_in_cascades() {
        // Eight values under 8 lanes: lane k holds value k alone, then the lanes are added
        // in order: 1 + 2^-24 + ... rounds back to 1 at every step.
        let mut x = [2f32.powi(-24); 8];
        x[0] = 1.0;
        assert_eq!(torch_sum(&x, 1), 1.0);
        assert_eq!(torch_mean(&x, 1), 0.125);
        // The same values in another order: the small ones meet first and survive.
        // (7 x 2^-24 = 3.5 ulp of 1, rounded to even: 4 ulp.)
        x.reverse();
        assert_eq!(torch_sum(&x, 1), 1.0 + 2f32.powi(-21));
        // Integers below 2^24 add exactly, whatever the order.
        let ramp: Vec<f32> = (0..64).map(|i| i as f32).collect();
        assert_eq!(torch_sum(&ramp, 1), 2016.0);
        assert_eq!(torch_mean(&[], 8), 0.0);
    }

    #[test]
    fn threads_split_long_vectors_only() {
        let x: Vec<f32> = (0..GRAIN + 40)
            .map(|i| 1.0 + (i % 7) as f32 / 3.0)
            .collect();
        let short = &x[..GRAIN - 1];
        assert_eq!(torch_sum(short, 1), torch_sum(short, 8));
        // Split in two, the halves' sums are added: the same as summing the two halves alone.
        let chunk = x.len().div_ceil(2);
        let halves = 0.0 + inner_sum(&x[..chunk]) + inner_sum(&x[chunk..]);
        assert_eq!(torch_sum(&x, 2), halves);
        assert_eq!(ceil_log2(1), 1);
        assert_eq!(ceil_log2(3), 2);
        assert_eq!(ceil_log2(1024), 10);
        assert_eq!(ceil_log2(1025), 11);
    }
}
