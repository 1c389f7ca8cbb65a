//! One aligned chunk of [`LANES`] values, and one pass of chunks: codes (clamped or not,
//! packed as bytes where they are), errors into the row's partial sums, and the prefetch of
//! the row quantized next.

#![expect(
    clippy::inline_always,
    reason = "inlined into the loop's monomorphised body (see the parent module)"
)]

use crate::core::kernel::segment::kind::ADD;
use crate::core::kernel::segment::{Code, LANES, Lanes};
use crate::core::simd::Avx2;

use super::value::{Spread, clamp, dequantize, rounded, unclamped};

/// Codes of [`LANES`] values of the block whose constants are `k`: offsets into `out`,
/// reconstructions into `x_hat`, clamp flags added to `clips` as 0.0/1.0. Without `CLAMP`
/// the codes are neither clamped nor counted: only for a block none of whose values a
/// clamp can move ([`within`](crate::core::kernel::segment::portable::bounds::within)), where the two are the same.
#[inline(always)]
pub(super) fn chunk_codes<const E: u8, const R: u8, const O: bool, const CLAMP: bool, T: Code>(
    k: &Spread,
    x: &[f32; LANES],
    out: &mut [T; LANES],
    x_hat: &mut [f32; LANES],
    clips: &mut [f32; LANES],
) {
    for j in 0..LANES {
        let k = &k.lane(j);
        if !CLAMP && E != ADD && !O {
            let r = rounded::<E, R>(k, x[j]);
            out[j] = T::from_biased_bits((r + k.zero_f + k.bias).to_bits());
            x_hat[j] = r * k.scale;
            continue;
        }
        let u = unclamped::<E, R, O>(k, x[j]);
        let c = if CLAMP { clamp(k, u) } else { u };
        if CLAMP {
            // `u` and `c` are integers: 1 when clamped, else 0.
            clips[j] += (u - c).abs().min(1.0);
        }
        out[j] = T::from_biased_bits((c + k.bias).to_bits());
        x_hat[j] = dequantize::<O>(k, c);
    }
}

/// [`chunk_codes`] without the clamp, for offsets that are bytes: the reconstructions into
/// `x_hat`, and each code plus [`Consts::bias`](crate::core::kernel::segment::constants::Consts::bias) returned (its low byte is the offset).
#[inline(always)]
pub(super) fn chunk_biased<const E: u8, const R: u8, const O: bool>(
    k: &Spread,
    x: &[f32; LANES],
    x_hat: &mut [f32; LANES],
) -> [f32; LANES] {
    let mut biased = [0.0; LANES];
    for j in 0..LANES {
        let k = &k.lane(j);
        if E != ADD && !O {
            let r = rounded::<E, R>(k, x[j]);
            biased[j] = r + k.zero_f + k.bias;
            x_hat[j] = r * k.scale;
            continue;
        }
        let c = unclamped::<E, R, O>(k, x[j]);
        biased[j] = c + k.bias;
        x_hat[j] = dequantize::<O>(k, c);
    }
    biased
}

/// A pass's codes without the clamp ([`chunk_codes`] without `CLAMP`). Where the offsets
/// are bytes and the machine has AVX2, four chunks' offsets are packed into 32 bytes at a
/// time (`avx2::pack_offsets`: four shuffles and four ANDs per 32 codes, where the
/// chunk-by-chunk loop takes sixteen shuffles); the arithmetic is [`chunk_codes`]'s, so every
/// code and reconstruction is the same. On a 4096 x 4096 matrix (ort-int8 per channel, one
/// thread) this took 3-5 % off the pass.
#[inline(always)]
pub(super) fn pass_codes_within<const E: u8, const R: u8, const O: bool, T: Code>(
    simd: Avx2,
    k: &Spread,
    xs: &[[f32; LANES]],
    cs: &mut [[T; LANES]],
    qs: &mut [[f32; LANES]],
) {
    #[cfg(target_arch = "x86_64")]
    if let (Some(v3), Some(bytes)) = (simd.v3(), T::as_bytes_mut(cs.as_flattened_mut())) {
        let (x4, xr) = xs.as_chunks::<4>();
        let (q4, qr) = qs.as_chunks_mut::<4>();
        let (b32, br) = bytes.as_chunks_mut::<{ 4 * LANES }>();
        for ((x4, q4), b32) in x4.iter().zip(q4).zip(b32) {
            let [q0, q1, q2, q3] = q4;
            let biased = [
                chunk_biased::<E, R, O>(k, &x4[0], q0),
                chunk_biased::<E, R, O>(k, &x4[1], q1),
                chunk_biased::<E, R, O>(k, &x4[2], q2),
                chunk_biased::<E, R, O>(k, &x4[3], q3),
            ];
            crate::core::kernel::segment::avx2::pack_offsets(v3, &biased, b32);
        }
        // Fewer than four chunks left: one at a time.
        let mut clips = [0.0f32; LANES];
        let (b8, _) = br.as_chunks_mut::<LANES>();
        for ((x8, q8), b8) in xr.iter().zip(qr).zip(b8) {
            chunk_codes::<E, R, O, false, u8>(k, x8, b8, q8, &mut clips);
        }
        return;
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = simd;
    // Not touched without the clamp.
    let mut clips = [0.0f32; LANES];
    for ((x8, c8), q8) in xs.iter().zip(cs).zip(qs.iter_mut()) {
        chunk_codes::<E, R, O, false, T>(k, x8, c8, q8, &mut clips);
        between_chunks::<false>();
    }
}

/// Ends a chunk of the code loop. With `CLAMP` nothing; without, an empty compiler barrier
/// (`black_box(())`: no instruction). With the clamp, the loop carries an f32 sum (the clamp
/// flags), which LLVM may not reorder, so it compiles the loop chunk by chunk. Without it,
/// LLVM's loop vectoriser widened the loop across four chunks and packed their codes with a
/// chain of packs and shuffles: measured on a 4096 x 4096 matrix, that loop was slower than
/// the loop with the clamp. The barrier keeps it chunk by chunk.
#[inline(always)]
pub(super) fn between_chunks<const CLAMP: bool>() {
    if !CLAMP {
        std::hint::black_box(());
    }
}

/// Errors of [`LANES`] values at an aligned column from their reconstructions, and (`SIG`)
/// their squares.
#[inline(always)]
pub(super) fn chunk_errors<const SIG: bool>(
    x: &[f32; LANES],
    x_hat: &[f32; LANES],
    acc: &mut Lanes,
) {
    let xd: [f64; LANES] = std::array::from_fn(|j| f64::from(x[j]));
    let e: [f64; LANES] = std::array::from_fn(|j| f64::from(x_hat[j]) - xd[j]);
    if SIG {
        for (s, &x) in acc.sig.iter_mut().zip(&xd) {
            *s += x * x;
        }
    }
    for (j, &e) in e.iter().enumerate() {
        let a = e.abs();
        acc.abs[j] += a;
        acc.sq[j] += e * e;
        let m = &mut acc.max[j];
        *m = if a > *m { a } else { *m };
    }
}

/// [`chunk_errors`] for each chunk of `xs` and its reconstructions `x_hat`: with AVX2 where
/// the machine has it (the same sums, see `avx2::pass_errors`), else the plain loop.
#[inline(always)]
pub(super) fn pass_errors<const SIG: bool>(
    simd: Avx2,
    xs: &[[f32; LANES]],
    x_hat: &[[f32; LANES]],
    acc: &mut Lanes,
) {
    #[cfg(target_arch = "x86_64")]
    if let Some(v3) = simd.v3() {
        crate::core::kernel::segment::avx2::pass_errors::<SIG>(v3, xs, x_hat, acc);
        return;
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = simd;
    // A local copy, so that the sums stay in registers through the loop.
    let mut sums = *acc;
    for (x8, q8) in xs.iter().zip(x_hat) {
        chunk_errors::<SIG>(x8, q8, &mut sums);
    }
    *acc = sums;
}

/// [`pass_errors`] without the signal, reading each value's `f64` from `wide` (the same
/// chunks as `xs`, widened once for all the ladder's rungs) instead of widening it again,
/// when `wide` holds every chunk of `xs` and the machine has AVX2: the same sums.
#[inline(always)]
pub(super) fn pass_errors_widened(
    simd: Avx2,
    xs: &[[f32; LANES]],
    wide: &[[f64; LANES]],
    x_hat: &[[f32; LANES]],
    acc: &mut Lanes,
) {
    #[cfg(target_arch = "x86_64")]
    if let Some(v3) = simd.v3()
        && wide.len() == xs.len()
    {
        crate::core::kernel::segment::avx2::pass_errors_wide(v3, wide, x_hat, acc);
        return;
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = wide;
    pass_errors::<false>(simd, xs, x_hat, acc);
}

/// Asks for every cache line of `ahead` (see [`fetch`]) that holds a value of the chunks
/// `first..first + n`.
#[inline(always)]
pub(super) fn fetch_chunks(ahead: &[f32], first: usize, n: usize, touched: &mut u32) {
    for i in (0..n).step_by(LINE) {
        if let Some(v) = ahead.get((first + i) * LANES) {
            fetch(v, touched);
        }
    }
}

/// Asks the memory system for the cache line that holds `v` (a value of the row to be
/// quantized next) without waiting for it: a prefetch instruction on x86-64; elsewhere a
/// read whose bits are kept in `touched`, so that it is not optimised away. A read would
/// wait for its line before it retires and stall the loop behind it; a prefetch does not.
///
/// The line is asked for into the second-level cache (`prefetcht1`), not the first, and
/// one row ahead, not more: a row of 4096 values is 16 KiB, and fetching the next one into
/// a 32 KiB first-level cache would push out this row, its codes and its reconstructions
/// while they are in use there. The results do not depend on it: a prefetch changes when
/// memory is read, never what.
#[inline(always)]
pub(super) fn fetch(v: &f32, touched: &mut u32) {
    #[cfg(target_arch = "x86_64")]
    {
        let _ = touched;
        safe_arch::prefetch_t1(v);
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        *touched |= v.to_bits();
    }
}

/// Chunks per 64-byte cache line.
pub(super) const LINE: usize = 64 / (LANES * size_of::<f32>());
