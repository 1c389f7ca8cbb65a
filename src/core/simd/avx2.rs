//! The toolbox's AVX2 steps on pulp's `V3` token: the predicates and rounding modes of
//! `_mm256_cmp_ps` and `_mm256_round_ps`, `abs` and `max` lane by lane, a mask as eight
//! flags, the 8 x 8 transposition, and the ends of eight runs at once. Each step that has a
//! plain counterpart in [`super`] gives its values bit for bit.

#![expect(
    clippy::inline_always,
    reason = "inlined into pulp's AVX2 context, or every intrinsic would be a call"
)]

use std::arch::x86_64::__m256;

use pulp::x86::V3;

use super::LANES;

/// `_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC`: ties to even.
pub(crate) const NEAREST: i32 = 0x08;
/// `_MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC`.
pub(crate) const TRUNCATE: i32 = 0x0B;
/// `_CMP_GE_OQ`.
pub(crate) const GE: i32 = 0x1D;
/// `_CMP_LE_OQ`.
pub(crate) const LE: i32 = 0x12;

/// `_CMP_NGE_UQ`: not greater than or equal, true where either is NaN.
pub(crate) const NGE_UQ: i32 = 0x19;
/// `_CMP_EQ_OQ`.
pub(crate) const EQ: i32 = 0x00;
/// `_CMP_LT_OQ`.
pub(crate) const LT: i32 = 0x11;
/// `_CMP_GT_OQ`.
pub(crate) const GT: i32 = 0x1E;
/// `_CMP_NEQ_UQ`.
pub(crate) const NE: i32 = 0x04;
/// `_CMP_UNORD_Q`.
pub(crate) const UNORD: i32 = 0x03;

/// `|v|`, lane by lane.
#[inline(always)]
pub(crate) fn abs(simd: V3, v: __m256) -> __m256 {
    let avx = simd.avx;
    avx._mm256_and_ps(v, avx._mm256_castsi256_ps(avx._mm256_set1_epi32(i32::MAX)))
}

/// `f32::max` lane by lane: the other operand where one is NaN (`maxps` returns its second).
#[inline(always)]
pub(crate) fn max(simd: V3, x: __m256, y: __m256) -> __m256 {
    let avx = simd.avx;
    avx._mm256_blendv_ps(avx._mm256_max_ps(x, y), x, avx._mm256_cmp_ps::<UNORD>(y, y))
}

/// Lane `j` of the result is bit `j` of `mask`: the low byte copied into every byte, bit `j`
/// kept in byte `j`, and byte `j` moved to 0 or 1 by adding `0x80 − 2^j` (so bit 7 is set
/// exactly when bit `j` was, and no byte carries into the next). One 8-byte word, where
/// lane by lane the compiler builds the bytes in vector registers.
#[inline(always)]
pub(crate) fn flags(mask: u32) -> [bool; LANES] {
    const BYTES: u64 = 0x0101_0101_0101_0101;
    let bit_j = (u64::from(mask & 0xff) * BYTES) & 0x8040_2010_0804_0201;
    let ones = ((bit_j + 0x0040_6070_787c_7e7f) >> 7) & BYTES;
    ones.to_le_bytes().map(|b| b != 0)
}

/// [`super::ends8`] with AVX2.
#[inline(always)]
pub(crate) fn ends8(simd: V3, lo: &[f32; LANES], hi: &[f32; LANES]) -> (bool, [f32; LANES]) {
    let (any, extreme) = ends_regs(simd, pulp::cast(*lo), pulp::cast(*hi));
    (any, pulp::cast(extreme))
}

/// [`ends8`] of ends in registers.
#[inline(always)]
pub(crate) fn ends_regs(simd: V3, l: __m256, h: __m256) -> (bool, __m256) {
    let avx = simd.avx;
    let zero = avx._mm256_setzero_ps();
    let neg = avx._mm256_xor_ps(l, avx._mm256_set1_ps(-0.0));
    let zero_end = avx._mm256_or_ps(
        avx._mm256_cmp_ps::<EQ>(l, zero),
        avx._mm256_cmp_ps::<EQ>(h, zero),
    );
    let ends = avx._mm256_or_ps(zero_end, avx._mm256_cmp_ps::<EQ>(neg, h));
    let extreme = avx._mm256_blendv_ps(h, l, avx._mm256_cmp_ps::<GT>(neg, h));
    (avx._mm256_movemask_ps(ends) != 0, extreme)
}

/// [`super::halves8`] with AVX2.
#[inline(always)]
pub(crate) fn halves8(
    simd: V3,
    lo: &[f32; 2 * LANES],
    hi: &[f32; 2 * LANES],
    group_lo: &[f32; LANES],
    group_hi: &[f32; LANES],
) -> Option<u32> {
    let (avx, avx2) = (simd.avx, simd.avx2);
    let zero = avx._mm256_setzero_ps();
    let sign = avx._mm256_set1_ps(-0.0);
    let (gl, gh): (__m256, __m256) = (pulp::cast(*group_lo), pulp::cast(*group_hi));
    let zero_end = avx._mm256_or_ps(
        avx._mm256_cmp_ps::<EQ>(gl, zero),
        avx._mm256_cmp_ps::<EQ>(gh, zero),
    );
    let tie = avx._mm256_cmp_ps::<EQ>(avx._mm256_xor_ps(gl, sign), gh);
    let nan = avx._mm256_cmp_ps::<UNORD>(gl, gh);
    let undecided = avx._mm256_or_ps(avx._mm256_or_ps(zero_end, tie), nan);
    if avx._mm256_movemask_ps(undecided) != 0 {
        return None;
    }
    // Each half's larger magnitude, `max(-lo, hi)` (the second operand where one is NaN, as
    // `maxps` returns it).
    let [l0, l1]: [[f32; LANES]; 2] = pulp::cast(*lo);
    let [h0, h1]: [[f32; LANES]; 2] = pulp::cast(*hi);
    let magnitude = |l: [f32; LANES], h: [f32; LANES]| {
        let (l, h): (__m256, __m256) = (pulp::cast(l), pulp::cast(h));
        avx._mm256_max_ps(avx._mm256_xor_ps(l, sign), h)
    };
    let (m0, m1) = (magnitude(l0, h0), magnitude(l1, h1));
    // The first halves (even lanes) and the second (odd), each in group order: within each
    // 128-bit half the shuffle takes m0's two then m1's two, and the 64-bit pieces are then
    // put in order.
    let first = avx._mm256_shuffle_ps::<0b10_00_10_00>(m0, m1);
    let second = avx._mm256_shuffle_ps::<0b11_01_11_01>(m0, m1);
    let order = |v: __m256| -> __m256 {
        avx._mm256_castpd_ps(avx2._mm256_permute4x64_pd::<0b11_01_10_00>(avx._mm256_castps_pd(v)))
    };
    // `!(first >= second)`: the second half where the first is not at least as large.
    let pick = avx._mm256_cmp_ps::<NGE_UQ>(order(first), order(second));
    Some(avx._mm256_movemask_ps(pick).cast_unsigned())
}

/// `rows[i][j]` for `i` in `0..8`, read as eight rows of eight values, transposed: row `j`
/// of the result holds value `j` of each of `rows`.
#[inline(always)]
pub(crate) fn transpose8(simd: V3, rows: [[f32; LANES]; LANES]) -> [[f32; LANES]; LANES] {
    transpose(simd, rows.map(pulp::cast)).map(pulp::cast)
}

/// The 8 x 8 transposition: register `j` of the result holds lane `j` of each of `r`.
#[inline(always)]
pub(crate) fn transpose(simd: V3, r: [__m256; LANES]) -> [__m256; LANES] {
    let avx = simd.avx;
    let t = [
        avx._mm256_unpacklo_ps(r[0], r[1]),
        avx._mm256_unpackhi_ps(r[0], r[1]),
        avx._mm256_unpacklo_ps(r[2], r[3]),
        avx._mm256_unpackhi_ps(r[2], r[3]),
        avx._mm256_unpacklo_ps(r[4], r[5]),
        avx._mm256_unpackhi_ps(r[4], r[5]),
        avx._mm256_unpacklo_ps(r[6], r[7]),
        avx._mm256_unpackhi_ps(r[6], r[7]),
    ];
    // Lanes 0 and 4 (then 1 and 5, 2 and 6, 3 and 7) of rows 0-3, then of rows 4-7.
    let u = [
        avx._mm256_shuffle_ps::<0x44>(t[0], t[2]),
        avx._mm256_shuffle_ps::<0xEE>(t[0], t[2]),
        avx._mm256_shuffle_ps::<0x44>(t[1], t[3]),
        avx._mm256_shuffle_ps::<0xEE>(t[1], t[3]),
        avx._mm256_shuffle_ps::<0x44>(t[4], t[6]),
        avx._mm256_shuffle_ps::<0xEE>(t[4], t[6]),
        avx._mm256_shuffle_ps::<0x44>(t[5], t[7]),
        avx._mm256_shuffle_ps::<0xEE>(t[5], t[7]),
    ];
    [
        avx._mm256_permute2f128_ps::<0x20>(u[0], u[4]),
        avx._mm256_permute2f128_ps::<0x20>(u[1], u[5]),
        avx._mm256_permute2f128_ps::<0x20>(u[2], u[6]),
        avx._mm256_permute2f128_ps::<0x20>(u[3], u[7]),
        avx._mm256_permute2f128_ps::<0x31>(u[0], u[4]),
        avx._mm256_permute2f128_ps::<0x31>(u[1], u[5]),
        avx._mm256_permute2f128_ps::<0x31>(u[2], u[6]),
        avx._mm256_permute2f128_ps::<0x31>(u[3], u[7]),
    ]
}

/// [`super::chunk_ends8`] with AVX2: the eight chunks as eight registers, each step of the
/// tree taken for all eight at once. The 128-bit halves of two chunks are paired first (lane
/// `j` against lane `j + 4`), then pairs of lanes within each half (`j` against `j + 2`),
/// then the last two, and the results put in chunk order: the same operands in the same
/// order as [`crate::core::stats::chunk_ends`], so the same minima and maxima, zeros' signs
/// included.
#[inline(always)]
pub(crate) fn chunk_ends8(
    simd: V3,
    chunks: &[[f32; LANES]; LANES],
) -> ([f32; LANES], [f32; LANES]) {
    let avx = simd.avx;
    // Each chunk cast on its own (an array `map` here was compiled as a call).
    let c: [__m256; LANES] = [
        pulp::cast(chunks[0]),
        pulp::cast(chunks[1]),
        pulp::cast(chunks[2]),
        pulp::cast(chunks[3]),
        pulp::cast(chunks[4]),
        pulp::cast(chunks[5]),
        pulp::cast(chunks[6]),
        pulp::cast(chunks[7]),
    ];
    // Chunks `2i` and `2i + 1`: their low halves in one register, their high halves in the
    // other.
    let halves = |i: usize| {
        (
            avx._mm256_permute2f128_ps::<0x20>(c[2 * i], c[2 * i + 1]),
            avx._mm256_permute2f128_ps::<0x31>(c[2 * i], c[2 * i + 1]),
        )
    };
    let h = [halves(0), halves(1), halves(2), halves(3)];
    let lo = ends_tree(simd, &h, |x, y| avx._mm256_min_ps(x, y));
    let hi = ends_tree(simd, &h, |x, y| avx._mm256_max_ps(x, y));
    (lo, hi)
}

/// [`chunk_ends8`]'s tree under `f` (`minps` or `maxps`), from the four pairs of chunks'
/// halves `h`.
#[inline(always)]
fn ends_tree(
    simd: V3,
    h: &[(__m256, __m256); 4],
    f: impl Fn(__m256, __m256) -> __m256,
) -> [f32; LANES] {
    let (avx, avx2) = (simd.avx, simd.avx2);
    // Lane `j` against `j + 4`: chunk `2i` in the low half, `2i + 1` in the high.
    let m = [
        f(h[0].0, h[0].1),
        f(h[1].0, h[1].1),
        f(h[2].0, h[2].1),
        f(h[3].0, h[3].1),
    ];
    // Lanes 0, 1 against 2, 3 within each half: chunks 0, 2 (and 1, 3) in the first
    // register, 4, 6 (and 5, 7) in the second.
    let pair = |a: __m256, b: __m256| {
        f(
            avx._mm256_shuffle_ps::<0b01_00_01_00>(a, b),
            avx._mm256_shuffle_ps::<0b11_10_11_10>(a, b),
        )
    };
    let (n0, n1) = (pair(m[0], m[1]), pair(m[2], m[3]));
    // Lane 0 against 1: chunks 0, 2, 4, 6 in the low half, 1, 3, 5, 7 in the high; then put
    // in chunk order.
    let last = f(
        avx._mm256_shuffle_ps::<0b10_00_10_00>(n0, n1),
        avx._mm256_shuffle_ps::<0b11_01_11_01>(n0, n1),
    );
    let order = avx._mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    pulp::cast(avx2._mm256_permutevar8x32_ps(last, order))
}
