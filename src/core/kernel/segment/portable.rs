//! The specialised loop, one instance per (expression, rounding, offset, code type).
//!
//! Aligned runs of [`LANES`] values go through [`chunk_codes`] (or, in a block no clamp can
//! move whose offsets are bytes, [`pass_codes_within`]) and then `chunk::chunk_errors` (in
//! passes of [`PASS`] chunks, so that each pass's accumulators and constants fit the 16 SSE
//! registers), written as whole-array float steps (no integer or boolean lanes mid-way) so
//! that LLVM's SLP vectoriser turns them into packed vector operations; where the machine
//! has AVX2, a pass's errors go through `avx2::pass_errors` instead, the same sums written
//! with AVX2 operations ([`pass_errors`]). Values before the first aligned column and after
//! the last go through [`one`], the same arithmetic for one value. Rows of prepared blocks
//! whose errors are exact in `f32` take [`blocks_exact`] instead on AVX2 machines.
//!
//! Here are the loops over a row's blocks; `value` holds one value's arithmetic, `chunk` a
//! chunk's and a pass's, `bounds` what a block's ends say of all its values, and `sums` the
//! MSE search's sums of squared errors.

#![expect(
    clippy::inline_always,
    reason = "the specialised loop is these small functions inlined into one monomorphised body per instance; an outlined call per value or per chunk would defeat the vectoriser"
)]

mod bounds;
mod chunk;
mod sums;
mod value;

pub(crate) use bounds::{exact, lanes_exact, lanes_within, one_code, within};
pub(crate) use sums::{block_sums, candidate_sums};

use super::kind::DIV;
use super::{BlockSource, Clamp, Code, Consts, LANES, Lanes, scalar_value};
use crate::core::simd::Avx2;
use chunk::{
    between_chunks, chunk_codes, fetch_chunks, pass_codes_within, pass_errors, pass_errors_widened,
};
use value::{Spread, one};

/// Chunks per pass: codes for this many, then their errors (each pass fits the registers).
const PASS: usize = 64;

/// Passes between flushes of the f32 clamp counters, so that each stays an exact integer.
const FLUSH: usize = 1 << 14;

/// The clamp counts in `clips`, which are reset.
#[inline(always)]
fn flush(clips: &mut [f32; LANES]) -> usize {
    // Each lane holds an integer below 2^24, so the sum is exact.
    let n = clips.iter().sum::<f32>() as usize;
    *clips = [0.0; LANES];
    n
}

/// One block in the specialised loop. Clamps of aligned chunks are added to `clips` (one
/// count per lane, as f32); the rest, and any flushed from `clips`, are returned (without
/// `CLAMP`, see [`chunk_codes`], the aligned chunks are not clamped). `buf`
/// holds a pass's reconstructions. Each cache line of `ahead` (the values at the same
/// columns of the row to be quantized next) is asked for ([`fetch`](crate::core::kernel::segment::portable::chunk::fetch)), so that the memory
/// system fetches that row while this one is computed.
#[expect(
    clippy::too_many_arguments,
    reason = "the block, its outputs, the pass's scratch and the next row, borrowed for one call"
)]
#[inline(always)]
fn block<const E: u8, const R: u8, const O: bool, const SIG: bool, const CLAMP: bool, T: Code>(
    k: &Consts,
    xs: &[f32],
    col: usize,
    codes: &mut [T],
    acc: &mut Lanes,
    buf: &mut [[f32; LANES]; PASS],
    clips: &mut [f32; LANES],
    ahead: &[f32],
) -> usize {
    let mut touched = 0u32;
    let head = ((LANES - col % LANES) % LANES).min(xs.len());
    let mut clipped = 0;
    let (hx, rx) = xs.split_at(head);
    let (hc, rc) = codes.split_at_mut(head);
    for (j, (&x, c)) in hx.iter().zip(hc).enumerate() {
        clipped += one::<E, R, O, T>(k, (col + j) % LANES, x, c, acc);
    }
    let (xc, xr) = rx.as_chunks::<LANES>();
    let (cc, cr) = rc.as_chunks_mut::<LANES>();
    let spread = Spread::of(k);
    let simd = Avx2::detect();
    for (n, (xs, cs)) in xc.chunks(PASS).zip(cc.chunks_mut(PASS)).enumerate() {
        let qs = &mut buf[..xs.len()];
        if CLAMP {
            for ((x8, c8), q8) in xs.iter().zip(cs).zip(qs.iter_mut()) {
                chunk_codes::<E, R, O, CLAMP, T>(&spread, x8, c8, q8, clips);
                between_chunks::<CLAMP>();
            }
        } else {
            pass_codes_within::<E, R, O, T>(simd, &spread, xs, cs, qs);
        }
        pass_errors::<SIG>(simd, xs, qs, acc);
        let ahead = ahead.get(head..).unwrap_or_default();
        fetch_chunks(ahead, n * PASS, xs.len(), &mut touched);
        if n % FLUSH == FLUSH - 1 {
            clipped += flush(clips);
        }
    }
    for (j, (&x, c)) in xr.iter().zip(cr).enumerate() {
        clipped += one::<E, R, O, T>(k, j, x, c, acc);
    }
    std::hint::black_box(touched);
    clipped
}

/// [`super::run_row`] for one instance.
#[inline(always)]
pub(super) fn run<const E: u8, const R: u8, const O: bool, T: Code, S: BlockSource>(
    source: &mut S,
    size: usize,
    xs: &[f32],
    start: usize,
    codes: &mut [T],
    lanes: &mut Lanes,
    ahead: &[f32],
) -> Result<usize, S::Error> {
    let mut acc = *lanes;
    let mut buf = [[0.0f32; LANES]; PASS];
    let mut clips = [0.0f32; LANES];
    // Values counted into `clips` since it was last flushed.
    let mut pending = 0;
    let mut total = 0;
    let size = size.max(1);
    for (i, (xs, codes)) in xs.chunks(size).zip(codes.chunks_mut(size)).enumerate() {
        let p = source.prepare(i, xs)?;
        let col = start + i * size;
        let n = if let Some(q) = &p.slow {
            let mut n = 0;
            for (j, (&x, c)) in xs.iter().zip(codes).enumerate() {
                let (_, was_clamped) = scalar_value(q, (col + j) % LANES, x, c, &mut acc);
                n += usize::from(was_clamped);
            }
            n
        } else {
            let (k, acc, buf, clips) = (&p.k, &mut acc, &mut buf, &mut clips);
            let ahead = ahead.get(i * size..).unwrap_or_default();
            let n = match (S::SIGNAL, p.clamp == Clamp::Within) {
                (true, true) => {
                    block::<E, R, O, true, false, T>(k, xs, col, codes, acc, buf, clips, ahead)
                }
                (true, false) => {
                    block::<E, R, O, true, true, T>(k, xs, col, codes, acc, buf, clips, ahead)
                }
                (false, true) => {
                    block::<E, R, O, false, false, T>(k, xs, col, codes, acc, buf, clips, ahead)
                }
                (false, false) => {
                    block::<E, R, O, false, true, T>(k, xs, col, codes, acc, buf, clips, ahead)
                }
            };
            pending += xs.len();
            if S::COUNTS || pending >= FLUSH * PASS * LANES {
                pending = 0;
                n + flush(clips)
            } else {
                n
            }
        };
        source.finished(i, n);
        total += n;
    }
    *lanes = acc;
    Ok(total + flush(&mut clips))
}

/// [`super::run_prepared`] for one instance, without clamp counts or the signal; without
/// the clamp where `clamp` is [`Clamp::Within`] (no block has a code a clamp moves, see
/// [`ConstLanes::within_bits`](crate::core::kernel::segment::constants::ConstLanes::within_bits)); `wide` as in [`blocks_loop`]. Where the row's errors are
/// known to be exact in `f32` ([`Clamp::Within`] or [`Clamp::Exact`]), every block's stored
/// scale is its code scale (`stored`), the instance divides without a float offset and no
/// code is kept, the row goes through [`blocks_exact`] on AVX2 machines.
#[expect(
    clippy::too_many_arguments,
    reason = "the row, its blocks, its outputs, the next row and the widened row, borrowed for one call"
)]
#[inline(always)]
pub(super) fn run_blocks<const E: u8, const R: u8, const O: bool, T: Code>(
    blocks: &[Consts],
    size: usize,
    xs: &[f32],
    codes: &mut [T],
    lanes: &mut Lanes,
    ahead: &[f32],
    clamp: Clamp,
    stored: bool,
    wide: &[[f64; LANES]],
) {
    #[cfg(target_arch = "x86_64")]
    if clamp != Clamp::Any
        && stored
        && E == DIV
        && !O
        && size_of::<T>() == 0
        && let Some(v3) = Avx2::detect().v3()
    {
        if clamp == Clamp::Within {
            blocks_exact::<R, false, T>(v3, blocks, size, xs, codes, lanes, ahead);
        } else {
            blocks_exact::<R, true, T>(v3, blocks, size, xs, codes, lanes, ahead);
        }
        return;
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = stored;
    // One instance with the clamp and one without, on the same arguments.
    macro_rules! with_clamp {
        ($clamp:literal) => {
            blocks_loop::<E, R, O, false, $clamp, T>(
                blocks,
                size,
                xs,
                codes,
                lanes,
                ahead,
                &mut [],
                wide,
            )
        };
    }
    if clamp == Clamp::Within {
        with_clamp!(false);
    } else {
        with_clamp!(true);
    }
}

/// [`run_blocks`] where no code is kept, every error is exact in `f32` (no block has a code
/// a clamp moves, or, with `CLAMP`, every block passes [`exact`]), and the codes divide by a
/// scale that is also the one stored, without a float offset: each error's magnitude is
/// formed in `f32` by the code loop (`avx2::chunk_magnitudes`), and the error loop only
/// widens and adds them (`avx2::pass_magnitudes`). The sums and largest errors are those of
/// [`blocks_loop`] bit for bit: that magnitude is exact in `f32` (see
/// `avx2::chunk_magnitudes` and [`exact`]), so its `f64` is the one [`blocks_loop`] forms
/// from the `f64` difference, its square is that difference's, and the largest of the lanes'
/// magnitudes does not depend on the order they are taken in. On AVX2 machines this moves
/// four of the error loop's floating-point operations per chunk into the code loop, whose
/// division leaves room for them.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn blocks_exact<const R: u8, const CLAMP: bool, T: Code>(
    v3: pulp::x86::V3,
    blocks: &[Consts],
    size: usize,
    xs: &[f32],
    codes: &mut [T],
    lanes: &mut Lanes,
    ahead: &[f32],
) {
    use super::avx2;
    let Some((first, rest)) = blocks.split_first() else {
        return;
    };
    debug_assert!(
        blocks
            .iter()
            .all(|k| k.code_scale.to_bits() == k.scale.to_bits() && k.code_scale > 0.0)
    );
    let per = (size / LANES).max(1);
    let mut acc = *lanes;
    let mut buf = [[0.0f32; LANES]; PASS];
    let (mut k, mut left, mut next) = (avx2::Quotient::of(v3, first), per, rest.iter());
    let mut top = avx2::Top::new(v3);
    let mut touched = 0u32;
    let (xc, xr) = xs.as_chunks::<LANES>();
    for (n, xs) in xc.chunks(PASS).enumerate() {
        let qs = &mut buf[..xs.len()];
        for (x8, q8) in xs.iter().zip(qs.iter_mut()) {
            if left == 0 {
                if let Some(c) = next.next() {
                    k = avx2::Quotient::of(v3, c);
                }
                left = per;
            }
            left -= 1;
            avx2::chunk_magnitudes::<R, CLAMP>(v3, &k, x8, q8, &mut top);
        }
        avx2::pass_magnitudes(v3, qs, &mut acc);
        fetch_chunks(ahead, n * PASS, xs.len(), &mut touched);
    }
    std::hint::black_box(touched);
    top.merge_into(&mut acc.max);
    // The values after the last whole chunk are in the last block, from lane 0.
    if let Some(&k) = blocks.last() {
        let (_, cr) = codes.as_chunks_mut::<LANES>();
        for (j, (&x, c)) in xr.iter().zip(cr).enumerate() {
            one::<DIV, R, false, T>(&k, j, x, c, &mut acc);
        }
    }
    *lanes = acc;
}

/// [`super::run_prepared`] for one instance, with each block's clamp count added to
/// `clipped` and the signal measured.
#[inline(always)]
pub(super) fn run_blocks_counted<const E: u8, const R: u8, const O: bool, T: Code>(
    blocks: &[Consts],
    size: usize,
    xs: &[f32],
    codes: &mut [T],
    lanes: &mut Lanes,
    ahead: &[f32],
    clipped: &mut [usize],
) {
    blocks_loop::<E, R, O, true, true, T>(blocks, size, xs, codes, lanes, ahead, clipped, &[]);
}

/// The loop of [`run_blocks`] and (`COUNT`) [`run_blocks_counted`]; `ahead` as in [`block`];
/// without `CLAMP` the chunks are not clamped (see [`chunk_codes`]); without `COUNT`, `wide`
/// (when not empty) is the row's whole chunks widened to `f64` (see [`pass_errors_widened`]).
#[expect(
    clippy::too_many_arguments,
    reason = "the row, its blocks, its outputs, the next row and the widened row, borrowed for one call"
)]
#[inline(always)]
fn blocks_loop<
    const E: u8,
    const R: u8,
    const O: bool,
    const COUNT: bool,
    const CLAMP: bool,
    T: Code,
>(
    blocks: &[Consts],
    size: usize,
    xs: &[f32],
    codes: &mut [T],
    lanes: &mut Lanes,
    ahead: &[f32],
    clipped: &mut [usize],
    wide: &[[f64; LANES]],
) {
    let Some((first, rest)) = blocks.split_first() else {
        return;
    };
    let per = (size / LANES).max(1);
    let mut acc = *lanes;
    let mut buf = [[0.0f32; LANES]; PASS];
    // Clamp flags of the current block (read only when counting: a block holds far fewer
    // than 2^24 values, so each lane stays an exact integer).
    let mut clips = [0.0f32; LANES];
    // The constants by value, spread when each block starts: a copy the stores cannot
    // alias, so the chunk stays packed.
    let (mut k, mut left, mut next) = (Spread::of(first), per, rest.iter());
    // The current block.
    let mut b = 0;
    let mut touched = 0u32;
    let simd = Avx2::detect();
    let (xc, xr) = xs.as_chunks::<LANES>();
    let (cc, cr) = codes.as_chunks_mut::<LANES>();
    for (n, (xs, cs)) in xc.chunks(PASS).zip(cc.chunks_mut(PASS)).enumerate() {
        let qs = &mut buf[..xs.len()];
        for ((x8, c8), q8) in xs.iter().zip(cs).zip(qs.iter_mut()) {
            if left == 0 {
                if COUNT {
                    if let Some(n) = clipped.get_mut(b) {
                        *n += flush(&mut clips);
                    }
                    b += 1;
                }
                if let Some(c) = next.next() {
                    k = Spread::of(c);
                }
                left = per;
            }
            left -= 1;
            chunk_codes::<E, R, O, CLAMP, T>(&k, x8, c8, q8, &mut clips);
            between_chunks::<CLAMP>();
        }
        if COUNT {
            pass_errors::<true>(simd, xs, qs, &mut acc);
        } else {
            let wide = wide.get(n * PASS..n * PASS + xs.len()).unwrap_or_default();
            pass_errors_widened(simd, xs, wide, qs, &mut acc);
        }
        fetch_chunks(ahead, n * PASS, xs.len(), &mut touched);
    }
    std::hint::black_box(touched);
    if COUNT && let Some(n) = clipped.get_mut(b) {
        *n += flush(&mut clips);
    }
    // The values after the last whole chunk are in the last block, from lane 0.
    if let Some(&k) = blocks.last() {
        let mut tail = 0;
        for (j, (&x, c)) in xr.iter().zip(cr).enumerate() {
            tail += one::<E, R, O, T>(&k, j, x, c, &mut acc);
        }
        if COUNT && let Some(n) = clipped.last_mut() {
            *n += tail;
        }
    }
    *lanes = acc;
}
