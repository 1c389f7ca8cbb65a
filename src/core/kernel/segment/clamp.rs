//! What a block is against the clamp: whether any of its codes can be clamped ([`within`]),
//! whether its errors are exact in `f32` with the clamp ([`exact`]), for one block
//! ([`clamp_of`]) or eight at once ([`prepare8`]); and whether a row has one code
//! ([`one_code`]). The loop leaves the clamp out where no code can be clamped.

use super::kind::dispatch;
use super::{ConstLanes, Consts, Kind, avx2};
use crate::core::params::{PARAM_LANES, ParamCalc};
use crate::core::simd::Avx2;

impl ConstLanes<PARAM_LANES> {
    /// Bit `j` set where lane `j`'s block under `kind`, with its values in `lo[j]..=hi[j]`,
    /// has no code a clamp moves ([`within`] for each lane), in one vectorised test (with
    /// `avx2` where the machine has it).
    #[inline(always)]
    pub(crate) fn within_bits(
        &self,
        simd: Avx2,
        kind: Kind,
        lo: &[f32; PARAM_LANES],
        hi: &[f32; PARAM_LANES],
    ) -> u8 {
        #[cfg(target_arch = "x86_64")]
        if let Some(v3) = simd.v3() {
            return dispatch!(@ avx2, kind, within_bits, [], (v3, self, lo, hi));
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = simd;
        let ok: [bool; PARAM_LANES] = dispatch!(kind, lanes_within, [], (self, lo, hi));
        bits(ok)
    }

    /// Bit `j` set where lane `j`'s block under `kind`, with its values in `lo[j]..=hi[j]`,
    /// has every error exact in `f32` with the clamp ([`exact`] for each lane; never under
    /// a kind without [`Kind::exact_errors`]). Every block that
    /// [`within_bits`](Self::within_bits) passes, under such a kind, passes this too.
    #[inline(always)]
    pub(crate) fn exact_bits(
        &self,
        kind: Kind,
        lo: &[f32; PARAM_LANES],
        hi: &[f32; PARAM_LANES],
    ) -> u8 {
        if !kind.exact_errors() {
            return 0;
        }
        let ok: [bool; PARAM_LANES] = dispatch!(kind, lanes_exact, [], (self, lo, hi));
        bits(ok)
    }
}

/// Bit `j` set where `ok[j]`.
#[inline(always)]
fn bits(ok: [bool; PARAM_LANES]) -> u8 {
    ok.iter()
        .enumerate()
        .fold(0, |bits, (j, &ok)| bits | (u8::from(ok) << j))
}

/// What the blocks of a row are known to be against the clamp, for [`run_prepared`](crate::core::kernel::segment::run_prepared) without
/// clamp counts. Ordered from the least known to the most: a row of blocks is the least of
/// its blocks ([`Ord::min`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Clamp {
    /// Nothing known: a clamp may move codes, and the errors are formed in `f64`.
    Any,
    /// A clamp may move codes, but every error is exact in `f32` under a kind that forms
    /// them there ([`ConstLanes::exact_bits`], [`Prepared::clamp`](crate::core::kernel::segment::prepared::Prepared::clamp)).
    Exact,
    /// No block has a code a clamp moves ([`ConstLanes::within_bits`]): the loop leaves
    /// the clamp out.
    Within,
}

/// Eight blocks prepared at once for the loop ([`prepare8`]).
pub(crate) struct Eight {
    /// Their constants, lane `j` for block `j`.
    pub(crate) consts: ConstLanes<PARAM_LANES>,
    /// Bit `j` set where block `j` has no code a clamp moves for any value of its range (or,
    /// asked for magnitudes, for any value of magnitude up to its largest).
    pub(crate) within: u8,
    /// The blocks carry a float offset.
    pub(super) float_min: bool,
}

impl Eight {
    /// The blocks' stored scales, and their offsets when they carry one (as
    /// [`crate::core::pass`]'s `Flat` reads them).
    #[inline(always)]
    pub(crate) fn stored(&self) -> (&[f32; PARAM_LANES], Option<&[f32; PARAM_LANES]>) {
        let k = &self.consts;
        (&k.scale, self.float_min.then_some(&k.offset))
    }
}

/// Eight blocks of `kind` whose values lie in `lo[j]..=hi[j]`, with parameters from `calc`
/// and codes `q.0..=q.1`, prepared at once in `avx2`'s registers: the constants and
/// clamp test that [`ParamCalc::lanes8`], [`consts8_lanes`](crate::core::kernel::segment::constants::consts8_lanes) and [`ConstLanes::within_bits`]
/// give them (the same operations), without passing through their arrays of flags. The
/// clamp test is of each block's range, or with `magnitudes` of `-m..=m`, `m` the block's
/// largest magnitude. `None` without AVX2, for configurations `calc` does not form in
/// registers, where a block's ends leave its extreme to its values (a zero end, or ends of
/// one magnitude), and where any block is not for the specialised loop.
#[inline(always)]
pub(crate) fn prepare8(
    simd: Avx2,
    kind: Kind,
    calc: &ParamCalc,
    (lo, hi): (&[f32; PARAM_LANES], &[f32; PARAM_LANES]),
    q: (i32, i32),
    magnitudes: bool,
) -> Option<Eight> {
    #[cfg(target_arch = "x86_64")]
    if let Some(v3) = simd.v3() {
        let (l, h) = (pulp::cast(*lo), pulp::cast(*hi));
        let (k, float_min) = avx2::eight(v3, kind, calc, l, h, q)?;
        let (tl, th) = if magnitudes {
            avx2::magnitudes(v3, l, h)
        } else {
            (l, h)
        };
        let within = dispatch!(@ avx2, kind, regs_within, [], (v3, &k, tl, th));
        return Some(Eight {
            consts: k.lanes(q),
            within,
            float_min,
        });
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (simd, kind, calc, lo, hi, q, magnitudes);
    None
}

/// Whether no value of a block of `kind` whose constants are `k` and whose values lie in
/// `lo..=hi` gets a code that a clamp moves. A block's unclamped codes are a monotone
/// function of its values (as in [`one_code`]), so they run from `lo`'s to `hi`'s: when
/// both are in `qmin..=qmax` and the scale is positive, every code is, the clamp changes
/// nothing and the loop can leave it out.
pub(super) fn within(kind: Kind, k: &Consts, lo: f32, hi: f32) -> bool {
    dispatch!(kind, within, [], (k, lo, hi))
}

/// Whether every error of a block of `kind` whose constants are `k` and whose values lie in
/// `lo..=hi` is exact in `f32` as the loop forms it with the clamp (see `portable::exact`):
/// false for kinds that do not divide without a float offset.
pub(super) fn exact(kind: Kind, k: &Consts, lo: f32, hi: f32) -> bool {
    dispatch!(kind, exact, [], (k, lo, hi))
}

/// What a block of `kind` whose constants are `k` (prepared for the specialised loop) and
/// whose values lie in `lo..=hi` is against the clamp: [`Clamp::Within`] where no value
/// gets a code that a clamp moves ([`within`]); [`Clamp::Exact`] where, under a kind that
/// forms errors in `f32` ([`Kind::exact_errors`]), every error is exact there with the
/// clamp ([`exact`]); else [`Clamp::Any`]. Also for the rows of a block larger than one
/// row (the tensor's), each tested with its own ends.
#[inline(always)]
pub(crate) fn clamp_of(kind: Kind, k: &Consts, lo: f32, hi: f32) -> Clamp {
    if within(kind, k, lo, hi) {
        Clamp::Within
    } else if kind.exact_errors() && exact(kind, k, lo, hi) {
        Clamp::Exact
    } else {
        Clamp::Any
    }
}

/// Whether every value of a row gets the same code under its blocks, `blocks` (each prepared
/// for the specialised loop under `kind`), each of `per` consecutive chunks whose smallest
/// and largest values are `lo` and `hi` (chunk `i` in block `i / per`; a last, shorter chunk
/// in the last block). A block's codes are a monotone function of its values (a division or
/// product by a positive scale, a subtraction, a rounding and a clamp, each monotone), so
/// they run from the code of its smallest value to that of its largest: two codes per chunk
/// decide it, and the first chunk that differs ends the test. Codes are compared as the
/// loop's clamped `f32` values, which are integers (so `-0.0` and `0.0` are one code).
pub(crate) fn one_code(kind: Kind, blocks: &[Consts], per: usize, lo: &[f32], hi: &[f32]) -> bool {
    dispatch!(kind, one_code, [], (blocks, per, lo, hi))
}
