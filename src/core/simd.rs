//! The SIMD toolbox the core's loops share: the machine's AVX2, found once ([`Avx2`]); a
//! closure compiled for the widest vector instructions the CPU has ([`vectorised`]); and
//! eight-lane steps (an 8 x 8 transposition, the ends and extremes of eight runs of values)
//! taken with AVX2 where the machine has it and as plain loops elsewhere, the same values bit
//! for bit. `avx2` holds the register-level pieces the kernel's and the block parameters'
//! AVX2 code builds on (comparison predicates, rounding modes, `abs`, `max`, a mask as
//! flags).
//!
//! Nothing here knows about quantization: the kernel, the block parameters, the statistics
//! and the clipping searches import it, and it imports none of them.

#![expect(
    clippy::inline_always,
    reason = "each step is inlined into its caller's vectorised context (see vectorised)"
)]

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2;

/// `f32` lanes of one AVX2 register: the width of every eight-at-a-time step.
pub(crate) const LANES: usize = 8;

/// The machine's AVX2 where it has it, found once rather than at every eight-lane step.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Avx2 {
    #[cfg(target_arch = "x86_64")]
    v3: Option<pulp::x86::V3>,
}

impl Avx2 {
    /// Whether this machine has AVX2 (and the rest of pulp's `V3` set).
    #[inline(always)]
    pub(crate) fn detect() -> Self {
        Self {
            #[cfg(target_arch = "x86_64")]
            v3: pulp::x86::V3::try_new(),
        }
    }

    /// pulp's AVX2 token, where the machine has it.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    pub(crate) fn v3(self) -> Option<pulp::x86::V3> {
        self.v3
    }
}

/// Whether any of eight groups' ends `lo` and `hi` is zero or the two are of one magnitude
/// (`-lo == hi`), and each group's extreme (`lo` where `-lo > hi`, else `hi`): one mask of
/// float comparisons with `simd`'s AVX2 (as plain loops, the compiler shuffles the lanes
/// into pieces and moves them through the stack).
#[inline(always)]
pub(crate) fn ends8(simd: Avx2, lo: &[f32; LANES], hi: &[f32; LANES]) -> (bool, [f32; LANES]) {
    #[cfg(target_arch = "x86_64")]
    if let Some(v3) = simd.v3 {
        return avx2::ends8(v3, lo, hi);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = simd;
    ends8_lanes(lo, hi)
}

/// The smallest and largest value of each of eight chunks, with `simd`'s AVX2 (as
/// [`crate::core::stats::chunk_ends`] forms them one chunk at a time, bit for bit); `None`
/// without AVX2.
#[inline(always)]
pub(crate) fn chunk_ends8(
    simd: Avx2,
    chunks: &[[f32; LANES]; LANES],
) -> Option<([f32; LANES], [f32; LANES])> {
    #[cfg(target_arch = "x86_64")]
    if let Some(v3) = simd.v3 {
        return Some(avx2::chunk_ends8(v3, chunks));
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (simd, chunks);
    None
}

/// [`ends8`] lane by lane.
#[inline(always)]
pub(crate) fn ends8_lanes(lo: &[f32; LANES], hi: &[f32; LANES]) -> (bool, [f32; LANES]) {
    let any = (0..LANES).any(|j| lo[j] == 0.0 || hi[j] == 0.0 || -lo[j] == hi[j]);
    let extreme = std::array::from_fn(|j| if -lo[j] > hi[j] { lo[j] } else { hi[j] });
    (any, extreme)
}

/// Eight rows of eight values transposed (row `j` of the result holds value `j` of each
/// row), with `simd`'s AVX2 where the machine has it.
#[inline(always)]
pub(crate) fn transpose8(simd: Avx2, rows: [[f32; LANES]; LANES]) -> [[f32; LANES]; LANES] {
    #[cfg(target_arch = "x86_64")]
    if let Some(v3) = simd.v3 {
        return avx2::transpose8(v3, rows);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = simd;
    std::array::from_fn(|j| std::array::from_fn(|i| rows[i][j]))
}

/// For eight groups, each made of two halves whose smallest and largest values are
/// `lo[2j]`, `hi[2j]` and `lo[2j + 1]`, `hi[2j + 1]` and whose own are `group_lo[j]`,
/// `group_hi[j]`: bit `j` set where the second half's larger magnitude exceeds the first's
/// (or either is NaN), so that it holds group `j`'s extreme; `None` when a group's ends leave
/// its extreme to its values (a zero end, two ends of one magnitude, a NaN), or without AVX2.
#[inline(always)]
pub(crate) fn halves8(
    simd: Avx2,
    lo: &[f32; 2 * LANES],
    hi: &[f32; 2 * LANES],
    group_lo: &[f32; LANES],
    group_hi: &[f32; LANES],
) -> Option<u32> {
    #[cfg(target_arch = "x86_64")]
    if let Some(v3) = simd.v3 {
        return avx2::halves8(v3, lo, hi, group_lo, group_hi);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (simd, lo, hi, group_lo, group_hi);
    None
}

/// Runs `f` compiled for the widest vector instructions this CPU has (AVX2 and FMA on most
/// x86-64 machines, AVX-512 where present when built with the `avx512` feature), chosen once
/// at run time by `pulp`, and the baseline instructions elsewhere. Only what `f` inlines is
/// compiled that way: the code around the row loops and its callees are `#[inline(always)]`
/// for this, and each instance of a row loop is compiled the same way as a function of its
/// own (`kernel::segment`'s `outlined`). The results are the same on every path: Rust never
/// fuses a multiplication and an addition on its own, and every operation is IEEE-exact
/// whatever the vector width.
#[inline(always)]
pub(crate) fn vectorised<R>(f: impl FnOnce() -> R) -> R {
    pulp::Arch::new().dispatch(f)
}

#[cfg(test)]
mod tests;
