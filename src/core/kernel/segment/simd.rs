//! The specialised loop, one instance per (expression, rounding, offset, code type).
//!
//! Aligned runs of [`LANES`] values go through [`chunk_codes`] (or, in a block no clamp can
//! move whose offsets are bytes, [`pass_codes_within`]) and then [`chunk_errors`] (in passes
//! of [`PASS`] chunks, so that each pass's accumulators and constants fit the 16 SSE
//! registers), written as whole-array float steps (no integer or boolean lanes mid-way) so
//! that LLVM's SLP vectoriser turns them into packed vector operations; where the machine
//! has AVX2, a pass's errors go through `avx2::pass_errors` instead, the same sums written
//! with AVX2 operations ([`pass_errors`]). Values before the first aligned column and after
//! the last go through [`one`], the same arithmetic for one value. Rows of prepared blocks
//! whose errors are exact in `f32` take [`blocks_exact`] instead on AVX2 machines.

#![expect(
    clippy::inline_always,
    reason = "the specialised loop is these small functions inlined into one monomorphised body per instance; an outlined call per value or per chunk would defeat the vectoriser"
)]

use super::{Avx2, BlockSource, Clamp, Code, ConstLanes, Consts, LANES, Lanes, scalar_value};
use crate::core::round::{UP, round_const};

pub(super) const DIV: u8 = 0;
pub(super) const MUL: u8 = 1;
pub(super) const ADD: u8 = 2;

/// `x` over the block's scale, before rounding, as the reference's `raw` forms it.
#[inline(always)]
fn quotient<const E: u8, const O: bool>(k: &Consts, x: f32) -> f32 {
    let x = if O { x - k.code_offset } else { x };
    if E == DIV {
        x / k.code_scale
    } else {
        x * k.recip
    }
}

/// `x`'s quotient rounded, `r`, where the zero point is added after rounding (not under
/// [`ADD`] or with an offset): the unclamped code is `c = r + z` and, where no clamp moves
/// it, its reconstruction `(c − z)·s` is `r·s`. Both `r` and `z` are integers (a float from
/// 2^23 on is one) and `c` lies in `qmin..=qmax`, far below 2^24 in magnitude, so the exact
/// sum `r + z` is an integer below 2^24: it is `c`, and `c − z` is `r` exactly. Only a
/// zero's sign can differ (`r` is −0 where `c − z` is +0), and a reconstruction of ±0 gives
/// the same `|e|`, `e²` and largest `|e|` for every `x` (`±0 − x` is `−x`, or a zero). The
/// loops without the clamp form `r·s`: one operation fewer per chunk, two where no code is
/// kept (the ladder's rungs).
#[inline(always)]
fn rounded<const E: u8, const R: u8>(k: &Consts, x: f32) -> f32 {
    debug_assert!(E != ADD);
    round_const::<R, f32>(quotient::<E, false>(k, x))
}

/// The unclamped code of `x`, as the reference's `raw` forms it.
#[inline(always)]
fn unclamped<const E: u8, const R: u8, const O: bool>(k: &Consts, x: f32) -> f32 {
    let t = quotient::<E, O>(k, x);
    if E == ADD {
        if R == UP {
            (t + k.zero_half).floor()
        } else {
            round_const::<R, f32>(t + k.zero_f)
        }
    } else {
        round_const::<R, f32>(t) + k.zero_f
    }
}

/// `u` clamped into `[qmin, qmax]` (`u` is never NaN here).
#[inline(always)]
fn clamp(k: &Consts, u: f32) -> f32 {
    let c = if u < k.qmin { k.qmin } else { u };
    if c > k.qmax { k.qmax } else { c }
}

/// The reconstruction of the clamped code `c`.
#[inline(always)]
fn dequantize<const O: bool>(k: &Consts, c: f32) -> f32 {
    if O {
        k.scale * c + k.offset
    } else {
        (c - k.zero_f) * k.scale
    }
}

/// One value into `lane`; returns 1 if its code was clamped.
#[inline(always)]
fn one<const E: u8, const R: u8, const O: bool, T: Code>(
    k: &Consts,
    lane: usize,
    x: f32,
    code: &mut T,
    acc: &mut Lanes,
) -> usize {
    let u = unclamped::<E, R, O>(k, x);
    let c = clamp(k, u);
    *code = T::from_biased_bits((c + k.bias).to_bits());
    acc.push(lane, x, dequantize::<O>(k, c));
    usize::from(c != u)
}

/// A block's [`Consts`], each spread across the [`LANES`] lanes: spread once when the block
/// starts, rather than from a single float for every chunk (eight or more shuffles per
/// chunk, on the ports the packing of codes and the widening of errors also use).
#[derive(Clone, Copy)]
struct Spread {
    code_scale: [f32; LANES],
    recip: [f32; LANES],
    zero_f: [f32; LANES],
    zero_half: [f32; LANES],
    code_offset: [f32; LANES],
    scale: [f32; LANES],
    offset: [f32; LANES],
    qmin: [f32; LANES],
    qmax: [f32; LANES],
    bias: [f32; LANES],
}

impl Spread {
    /// `k` in every lane.
    #[inline(always)]
    fn of(k: &Consts) -> Self {
        Self {
            code_scale: [k.code_scale; LANES],
            recip: [k.recip; LANES],
            zero_f: [k.zero_f; LANES],
            zero_half: [k.zero_half; LANES],
            code_offset: [k.code_offset; LANES],
            scale: [k.scale; LANES],
            offset: [k.offset; LANES],
            qmin: [k.qmin; LANES],
            qmax: [k.qmax; LANES],
            bias: [k.bias; LANES],
        }
    }

    /// Lane `j`'s constants (every lane's are the block's).
    #[inline(always)]
    fn lane(&self, j: usize) -> Consts {
        Consts {
            code_scale: self.code_scale[j],
            recip: self.recip[j],
            zero_f: self.zero_f[j],
            zero_half: self.zero_half[j],
            code_offset: self.code_offset[j],
            scale: self.scale[j],
            offset: self.offset[j],
            qmin: self.qmin[j],
            qmax: self.qmax[j],
            bias: self.bias[j],
        }
    }
}

/// Codes of [`LANES`] values of the block whose constants are `k`: offsets into `out`,
/// reconstructions into `x_hat`, clamp flags added to `clips` as 0.0/1.0. Without `CLAMP`
/// the codes are neither clamped nor counted: only for a block none of whose values a
/// clamp can move ([`within`]), where the two are the same.
#[inline(always)]
fn chunk_codes<const E: u8, const R: u8, const O: bool, const CLAMP: bool, T: Code>(
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
/// `x_hat`, and each code plus [`Consts::bias`] returned (its low byte is the offset).
#[inline(always)]
fn chunk_biased<const E: u8, const R: u8, const O: bool>(
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
fn pass_codes_within<const E: u8, const R: u8, const O: bool, T: Code>(
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
            super::avx2::pack_offsets(v3, &biased, b32);
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
fn between_chunks<const CLAMP: bool>() {
    if !CLAMP {
        std::hint::black_box(());
    }
}

/// Errors of [`LANES`] values at an aligned column from their reconstructions, and (`SIG`)
/// their squares.
#[inline(always)]
fn chunk_errors<const SIG: bool>(x: &[f32; LANES], x_hat: &[f32; LANES], acc: &mut Lanes) {
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
fn pass_errors<const SIG: bool>(
    simd: Avx2,
    xs: &[[f32; LANES]],
    x_hat: &[[f32; LANES]],
    acc: &mut Lanes,
) {
    #[cfg(target_arch = "x86_64")]
    if let Some(v3) = simd.v3() {
        super::avx2::pass_errors::<SIG>(v3, xs, x_hat, acc);
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
fn pass_errors_widened(
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
        super::avx2::pass_errors_wide(v3, wide, x_hat, acc);
        return;
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = wide;
    pass_errors::<false>(simd, xs, x_hat, acc);
}

/// Asks for every cache line of `ahead` (see [`fetch`]) that holds a value of the chunks
/// `first..first + n`.
#[inline(always)]
fn fetch_chunks(ahead: &[f32], first: usize, n: usize, touched: &mut u32) {
    for i in (0..n).step_by(LINE) {
        if let Some(v) = ahead.get((first + i) * LANES) {
            fetch(v, touched);
        }
    }
}

/// Asks the memory system for the cache line that holds `v` (a value of the row to be
/// quantized next) without waiting for it: a prefetch instruction on x86-64; elsewhere a
/// read whose bits are kept in `touched`, so that it is not optimised away. A read waits
/// for its line before it retires and stalls the loop behind it; on a 4096 x 4096 matrix
/// the prefetch made one configuration's pass 15-20 % faster than the read.
///
/// The line is asked for into the second-level cache (`prefetcht1`), not the first: a row
/// of 4096 values is 16 KiB, and fetching the next one into a 32 KiB first-level cache
/// while this row, its codes and its reconstructions are in use there pushed them out. On
/// an AMD EPYC (Zen 4), calls alternating in one process between the two instructions
/// (reports compared equal): one config 0.87-0.91x the time with `prefetcht1` (`ort-int8`)
/// and 0.93-0.94x (`int4-g128`), the full ladder 0.93-0.95x; fetching two rows ahead
/// instead of one, still into the first level, was 8-10 % slower.
#[inline(always)]
fn fetch(v: &f32, touched: &mut u32) {
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
const LINE: usize = 64 / (LANES * size_of::<f32>());

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
/// columns of the row to be quantized next) is asked for ([`fetch`]), so that the memory
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
/// [`ConstLanes::within_bits`]); `wide` as in [`blocks_loop`]. Where the row's errors are
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

/// Whether no value of a block whose constants are `k` and whose values lie in `lo..=hi`
/// has a code a clamp moves: the unclamped codes of `lo` and `hi` are both in
/// `qmin..=qmax`, and the scale is positive, so that every other value's unclamped code
/// lies between those two (each step of [`unclamped`] is monotone; see
/// [`super::one_code`]). NaN in any of them fails a comparison.
#[inline(always)]
pub(super) fn within<const E: u8, const R: u8, const O: bool>(
    k: &Consts,
    lo: f32,
    hi: f32,
) -> bool {
    let positive = if E == DIV {
        k.code_scale > 0.0
    } else {
        k.recip > 0.0
    };
    positive && unclamped::<E, R, O>(k, lo) >= k.qmin && unclamped::<E, R, O>(k, hi) <= k.qmax
}

/// [`within`] for each lane of `k` (lane `j`'s block with values in `lo[j]..=hi[j]`).
#[inline(always)]
#[expect(
    clippy::needless_bitwise_bool,
    reason = "each lane's test without a branch, so that the lanes stay in one register"
)]
pub(super) fn lanes_within<const E: u8, const R: u8, const O: bool>(
    k: &ConstLanes<LANES>,
    lo: &[f32; LANES],
    hi: &[f32; LANES],
) -> [bool; LANES] {
    let (u_lo, u_hi) = (k.unclamped::<E, R, O>(lo), k.unclamped::<E, R, O>(hi));
    std::array::from_fn(|j| {
        let positive = if E == DIV {
            k.code_scale[j] > 0.0
        } else {
            k.recip[j] > 0.0
        };
        positive & (u_lo[j] >= k.qmin) & (u_hi[j] <= k.qmax)
    })
}

/// Whether every error of a block whose constants are `k` and whose values lie in `lo..=hi`
/// is exact in `f32` as [`blocks_exact`] forms it with the clamp, `|clamp(r)·s − x|`: the
/// instance divides by the scale without a float offset, the scale is positive, and on each
/// side either no code is clamped (the test of [`within`]) or every clamped value's error is
/// exact. A clamped code's reconstruction is `m = (c − z)·s` rounded, for `c` the nearer
/// bound (`c − z` an exact integer, see [`consts_lanes`](super::consts_lanes)). Where
/// `c − z` is 0 the error is `−x`. Where it is at least 1 on the high side (at most −1 on
/// the low), a value clamped there has a quotient beyond `c − z`, so it lies beyond
/// `(c − z)·s`, more than `m/2` from zero; with the block's end `hi ≤ 2m` (`lo ≥ 2m`) every
/// such value is within a factor of two of `m`, and Sterbenz's lemma makes the difference
/// exact. The values no clamp moves are exact as in `avx2::chunk_magnitudes`. Otherwise
/// (a zero point beyond the bound, ends more than twice the reconstruction, NaN) false.
#[inline(always)]
pub(super) fn exact<const E: u8, const R: u8, const O: bool>(k: &Consts, lo: f32, hi: f32) -> bool {
    exact_lane::<E, R, O>(
        k,
        lo,
        hi,
        [unclamped::<E, R, O>(k, lo), unclamped::<E, R, O>(k, hi)],
    )
}

/// [`exact`] for each lane of `k` (lane `j`'s block with values in `lo[j]..=hi[j]`).
#[inline(always)]
pub(super) fn lanes_exact<const E: u8, const R: u8, const O: bool>(
    k: &ConstLanes<LANES>,
    lo: &[f32; LANES],
    hi: &[f32; LANES],
) -> [bool; LANES] {
    let (u_lo, u_hi) = (k.unclamped::<E, R, O>(lo), k.unclamped::<E, R, O>(hi));
    std::array::from_fn(|j| exact_lane::<E, R, O>(&k.get(j), lo[j], hi[j], [u_lo[j], u_hi[j]]))
}

/// [`exact`] given the unclamped codes of `lo` and `hi`, `u`.
#[inline(always)]
#[expect(
    clippy::needless_bitwise_bool,
    reason = "each side's test without a branch, so that the lanes stay in one register"
)]
fn exact_lane<const E: u8, const R: u8, const O: bool>(
    k: &Consts,
    lo: f32,
    hi: f32,
    [u_lo, u_hi]: [f32; 2],
) -> bool {
    if E != DIV || O {
        return false;
    }
    // Integers f32 holds exactly (see `consts_lanes`).
    let (bottom, top) = (k.qmin - k.zero_f, k.qmax - k.zero_f);
    let (m_lo, m_hi) = (bottom * k.scale, top * k.scale);
    let high = (u_hi <= k.qmax) | (top == 0.0) | ((m_hi > 0.0) & (hi <= 2.0 * m_hi));
    let low = (u_lo >= k.qmin) | (bottom == 0.0) | ((m_lo < 0.0) & (lo >= 2.0 * m_lo));
    (k.code_scale > 0.0) & high & low
}

/// [`super::one_code`] for one instance.
#[inline(always)]
pub(super) fn one_code<const E: u8, const R: u8, const O: bool>(
    blocks: &[Consts],
    per: usize,
    lo: &[f32],
    hi: &[f32],
) -> bool {
    let per = per.max(1);
    let mut first = None;
    for (i, (&l, &h)) in lo.iter().zip(hi).enumerate() {
        let Some(k) = blocks.get(i / per).or(blocks.last()) else {
            return false;
        };
        let a = clamp(k, unclamped::<E, R, O>(k, l));
        let b = clamp(k, unclamped::<E, R, O>(k, h));
        let c = *first.get_or_insert(a);
        if a != c || b != c {
            return false;
        }
    }
    true
}

impl ConstLanes<LANES> {
    /// The unclamped code of `x[j]` under lane `j`'s constants: [`unclamped`], lane by lane.
    #[inline(always)]
    fn unclamped<const E: u8, const R: u8, const O: bool>(&self, x: &[f32; LANES]) -> [f32; LANES] {
        use std::array::from_fn;
        let xo: [f32; LANES] = from_fn(|j| if O { x[j] - self.code_offset[j] } else { x[j] });
        let t: [f32; LANES] = from_fn(|j| {
            if E == DIV {
                xo[j] / self.code_scale[j]
            } else {
                xo[j] * self.recip[j]
            }
        });
        from_fn(|j| {
            if E == ADD {
                if R == UP {
                    (t[j] + self.zero_half[j]).floor()
                } else {
                    round_const::<R, f32>(t[j] + self.zero_f[j])
                }
            } else {
                round_const::<R, f32>(t[j]) + self.zero_f[j]
            }
        })
    }

    /// The reconstruction of `x[j]` under lane `j`'s constants: the arithmetic of
    /// [`unclamped`], [`clamp`] and [`dequantize`], lane by lane.
    #[inline(always)]
    fn x_hat<const E: u8, const R: u8, const O: bool>(&self, x: &[f32; LANES]) -> [f32; LANES] {
        use std::array::from_fn;
        let u = self.unclamped::<E, R, O>(x);
        let c: [f32; LANES] = from_fn(|j| {
            let c = if u[j] < self.qmin { self.qmin } else { u[j] };
            if c > self.qmax { self.qmax } else { c }
        });
        from_fn(|j| {
            if O {
                self.scale[j] * c[j] + self.offset[j]
            } else {
                (c[j] - self.zero_f[j]) * self.scale[j]
            }
        })
    }
}

/// [`super::candidate_sums`] for one instance: every lane's constants applied to the same
/// value, one value at a time.
#[inline(always)]
pub(super) fn candidate_sums<const E: u8, const R: u8, const O: bool>(
    k: &[Consts; LANES],
    xs: &[f32],
    sums: &mut [f64; LANES],
) {
    let soa = ConstLanes::of(k);
    let mut s = *sums;
    for &x in xs {
        let x_hat = soa.x_hat::<E, R, O>(&[x; LANES]);
        let xd = f64::from(x);
        for j in 0..LANES {
            let e = f64::from(x_hat[j]) - xd;
            s[j] += e * e;
        }
    }
    *sums = s;
}

/// [`super::block_sums`] for one instance: lane `j`'s constants applied to lane `j`'s
/// value, one row of lanes at a time.
#[inline(always)]
pub(super) fn block_sums<const E: u8, const R: u8, const O: bool>(
    soa: &ConstLanes<LANES>,
    xs: &[[f32; LANES]],
    sums: &mut [f64; LANES],
) {
    let mut s = *sums;
    for x in xs {
        let x_hat = soa.x_hat::<E, R, O>(x);
        for j in 0..LANES {
            let e = f64::from(x_hat[j]) - f64::from(x[j]);
            s[j] += e * e;
        }
    }
    *sums = s;
}
