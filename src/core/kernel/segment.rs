//! The quantize-and-measure loop over a row's blocks, specialised per quantize expression,
//! rounding and offset so that it vectorises.
//!
//! Every code, clamp flag and reconstruction is bit-for-bit what [`Quantizer::code`] and
//! [`Quantizer::dequantize`] give for the same value. Two things make that possible:
//!
//! - Rounding is [`crate::core::round`]'s, the same rule the reference uses, chosen at
//!   compile time: one rounding instruction in every vectorised instance on x86-64
//!   (`roundps`, SSE4.1) and aarch64 (`frint*`).
//! - [`Prepared::new`] bounds, before the loop, every ratio a block can produce from its own
//!   min and max (f32 subtraction and multiplication are monotone, so the largest magnitude
//!   bounds every other ratio). Only blocks whose bound is below `2^21` use the specialised
//!   loop; the rest (zero or subnormal scales, astronomically unclamped zero points) go
//!   through [`Quantizer`] value by value, the reference itself.
//!
//! A block's unclamped codes are a monotone function of its values, so when the codes of
//! its smallest and largest value are both within the code range, no clamp can move any
//! of its codes (nor count one). Such blocks, the usual case without clipping, run an
//! instance of the loop without the clamp (see [`Prepared::new`]). The ladder's rows of
//! groups prepared together ([`run_prepared`]) do the same when every group passes the
//! test, taken eight groups at a time in one vectorised step
//! ([`ConstLanes::within_bits`]); the active configuration's rows of groups keep the clamp,
//! which also counts their clamped codes.
//!
//! Errors are accumulated in `f64` in [`LANES`] partial sums per row: the value in column
//! `c` goes to lane `c % LANES`, whatever the blocks, so a row's sums do not depend on its
//! granularity, and a row of at most [`LANES`] values sums in column order.
//! The active configuration's loop also sums each value's square there (the signal, for
//! SQNR), while the value is in a register, instead of in a pass of its own.
//!
//! The parts: [`Kind`] selects one of 18 instances of the loop and `dispatch!` calls it
//! (`kind`); [`Consts`] are a block's constants in the loop (`constants`), [`Prepared`] a
//! block ready for it (`prepared`), [`Clamp`] what a block is against the clamp (`clamp`);
//! `portable` is the loop itself, as whole-array float steps the compiler vectorises, and
//! `avx2` the steps written with AVX2 operations where plain loops vectorise badly; `sums`
//! holds the MSE search's sums of squared errors.

#![expect(
    clippy::inline_always,
    reason = "the specialised loop is these small functions inlined into one monomorphised body per instance; an outlined call per value or per chunk would defeat the vectoriser"
)]

use crate::core::kernel::Quantizer;

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2;
mod clamp;
mod constants;
pub(crate) mod kind;
mod portable;
mod prepared;
mod sums;

use kind::dispatch;

pub(crate) use clamp::{Clamp, clamp_of, one_code, prepare8};
pub(crate) use constants::{ConstLanes, Consts, ConstsBuf, consts_lanes, consts8, consts8_lanes};
pub(crate) use kind::Kind;
pub(crate) use prepared::{BlockSource, Prepared};
pub(crate) use sums::{
    APPROX_REL, APPROX_TERMS, approx_squares, block_sums, block_sums_exact, candidate_sums,
};

/// Partial sums per accumulator: the value in column `c` goes to lane `c % LANES` (one AVX2
/// register of `f32`).
pub(crate) const LANES: usize = crate::core::simd::LANES;

/// `2^22`: ratios below half of this are exact small integers once rounded (see
/// [`consts_lanes`]).
const SMALL: f32 = 4_194_304.0;

/// A code type of [`crate::core::report::CodeBuf`]: offsets from `qmin`.
pub(crate) trait Code: bytemuck::Pod + Default + Ord + Send + Sync {
    /// The offset whose f32 is `2^23 + offset` with these bits (the offset is its low
    /// mantissa bits).
    fn from_biased_bits(bits: u32) -> Self;
    /// The offset from an integer code.
    fn from_int(off: i32) -> Self;
    /// The offset as an index.
    fn index(self) -> usize;
    /// `codes` as bytes, when the offsets are bytes.
    fn as_bytes(codes: &[Self]) -> Option<&[u8]>;
    /// `codes` as bytes to write, when the offsets are bytes.
    fn as_bytes_mut(codes: &mut [Self]) -> Option<&mut [u8]>;
}

macro_rules! code_impl {
    ($($t:ty => $bytes:expr, $bytes_mut:expr),*) => {$(
        impl Code for $t {
            #[inline(always)]
            fn from_biased_bits(bits: u32) -> Self {
                bits as $t
            }
            #[inline(always)]
            fn from_int(off: i32) -> Self {
                off as $t
            }
            #[inline(always)]
            fn index(self) -> usize {
                usize::from(self)
            }
            #[inline(always)]
            fn as_bytes(codes: &[Self]) -> Option<&[u8]> {
                $bytes(codes)
            }
            #[inline(always)]
            fn as_bytes_mut(codes: &mut [Self]) -> Option<&mut [u8]> {
                $bytes_mut(codes)
            }
        }
    )*};
}

code_impl!(u8 => Some, Some, u16 => |_| None, |_| None);

/// No code at all: the ladder's rungs need each value's error, not its code, so their loop
/// stores nothing (whether a row has one code is read from its blocks' ends instead, see
/// [`one_code`]).
impl Code for () {
    #[inline(always)]
    fn from_biased_bits(_: u32) -> Self {}
    #[inline(always)]
    fn from_int(_: i32) -> Self {}
    #[inline(always)]
    fn index(self) -> usize {
        0
    }
    #[inline(always)]
    fn as_bytes(_: &[Self]) -> Option<&[u8]> {
        None
    }
    #[inline(always)]
    fn as_bytes_mut(_: &mut [Self]) -> Option<&mut [u8]> {
        None
    }
}

/// `f64` error partial sums of a row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Lanes {
    /// Σ|e| per lane (column `c` in lane `c % LANES`).
    pub abs: [f64; LANES],
    /// Σe² per lane.
    pub sq: [f64; LANES],
    /// max |e| per lane (the maximum does not depend on order).
    pub max: [f64; LANES],
    /// Σx² per lane (the signal, for SQNR), when the loop measures it (see
    /// [`BlockSource::SIGNAL`]).
    pub sig: [f64; LANES],
}

/// What a row's [`Lanes`] add up to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Totals {
    /// Σ|e|.
    pub abs: f64,
    /// Σe².
    pub sq: f64,
    /// max |e|.
    pub max: f64,
    /// Σx².
    pub signal: f64,
}

impl Lanes {
    pub(crate) const ZERO: Self = Self {
        abs: [0.0; LANES],
        sq: [0.0; LANES],
        max: [0.0; LANES],
        sig: [0.0; LANES],
    };

    /// Adds one value's error to `lane`.
    #[inline(always)]
    pub(crate) fn push(&mut self, lane: usize, x: f32, x_hat: f32) {
        let e = f64::from(x_hat) - f64::from(x);
        self.sig[lane] += f64::from(x) * f64::from(x);
        let a = e.abs();
        self.abs[lane] += a;
        self.sq[lane] += e * e;
        let m = &mut self.max[lane];
        *m = if a > *m { a } else { *m };
    }

    /// The sums, lanes added in order.
    #[inline(always)]
    pub(crate) fn totals(&self) -> Totals {
        let sum = |v: &[f64; LANES]| v.iter().fold(0.0, |s, &v| s + v);
        Totals {
            abs: sum(&self.abs),
            sq: sum(&self.sq),
            max: self.max.iter().fold(0.0, |m, &v| if v > m { v } else { m }),
            signal: sum(&self.sig),
        }
    }
}

/// `2^24`: integers up to here are exact in f32.
const EXACT_INT: i64 = 1 << 24;

/// Quantizes `xs`, consecutive blocks of one row starting at column `start` (block `i` holds
/// values `i·size .. (i+1)·size`, the last one possibly shorter), each prepared by `source`
/// just before it runs: code offsets from `qmin` into `codes`, each error into lane
/// `column % LANES` of `lanes`. `ahead`, when not empty, is the row to be quantized next:
/// the loop asks for each of its cache lines ahead of use (see `portable::fetch`), so that the
/// memory system fetches it while this row is computed (its values are not used). Returns
/// the clamp count of the whole run, or the first block `source` cannot prepare. Every
/// block must be of `kind`.
#[expect(
    clippy::too_many_arguments,
    reason = "the row, its outputs, its block source and the next row, borrowed for one call"
)]
#[inline(always)]
pub(crate) fn run_row<T: Code, S: BlockSource>(
    kind: Kind,
    source: &mut S,
    size: usize,
    xs: &[f32],
    start: usize,
    codes: &mut [T],
    lanes: &mut Lanes,
    ahead: &[f32],
) -> Result<usize, S::Error> {
    debug_assert_eq!(xs.len(), codes.len());
    dispatch!(
        outlined kind,
        run,
        [T, S],
        (source, size, xs, start, codes, lanes, ahead)
    )
}

/// Quantizes `xs`, a whole row of consecutive blocks of `size` values (a multiple of
/// [`LANES`]; the last block may be shorter) whose [`Prepared::consts`] are `blocks`, every
/// one prepared for the specialised loop under `kind`: codes and errors as [`run_row`]
/// gives them, in one loop over the row's chunks that takes each chunk's constants from its
/// block, instead of a call per block. `ahead` is the row to be quantized next, as in
/// [`run_row`]. With `clipped` (one zeroed count per block), each
/// block's clamp count is added to it and the signal is measured; without, neither is (the
/// ladder needs neither), and where `clamp` is [`Clamp::Within`] (no block has a code a
/// clamp moves, see [`ConstLanes::within_bits`]) the loop leaves the clamp out. Without
/// `clipped`, `wide`, when it holds the row's whole chunks widened to `f64` (the ladder
/// widens each row once for all its rungs), gives the values' `f64` for the errors instead
/// of widening them again; empty, the loop widens them itself. Where `clamp` is
/// [`Clamp::Within`] or [`Clamp::Exact`] (every error exact in `f32`, see
/// [`ConstLanes::exact_bits`]), and `kind` divides by scales stored as computed without a
/// float offset, the errors are formed in `f32`, exactly, and `wide` is not read (see
/// `avx2::chunk_magnitudes`).
#[expect(
    clippy::too_many_arguments,
    reason = "the row, its blocks, its outputs and the next row, borrowed for one call"
)]
#[inline(always)]
pub(crate) fn run_prepared<T: Code>(
    kind: Kind,
    blocks: &[Consts],
    size: usize,
    xs: &[f32],
    codes: &mut [T],
    lanes: &mut Lanes,
    ahead: &[f32],
    clipped: Option<&mut [usize]>,
    clamp: Clamp,
    wide: &[[f64; LANES]],
) {
    debug_assert_eq!(xs.len(), codes.len());
    debug_assert!(size > 0 && size.is_multiple_of(LANES));
    if let Some(clipped) = clipped {
        dispatch!(
            outlined kind,
            run_blocks_counted,
            [T],
            (blocks, size, xs, codes, lanes, ahead, clipped)
        );
    } else {
        dispatch!(
            outlined kind,
            run_blocks,
            [T],
            (blocks, size, xs, codes, lanes, ahead, clamp, kind.stored, wide)
        );
    }
}

/// One value through [`Quantizer`] (blocks the specialised loop does not take, and columns
/// whose block changes with every value).
#[inline]
pub(crate) fn scalar_value<T: Code>(
    q: &Quantizer,
    lane: usize,
    x: f32,
    code: &mut T,
    lanes: &mut Lanes,
) -> (i32, bool) {
    let (c, was_clamped) = q.code(x);
    *code = T::from_int(c - q.qmin as i32);
    lanes.push(lane, x, q.dequantize(c));
    (c, was_clamped)
}

#[cfg(test)]
mod tests;
