//! A block's constants in the loop ([`Consts`]), formed from its parameters one block at a
//! time or eight side by side ([`consts_lanes`], [`consts8`]), with the test of whether the
//! specialised loop takes the block.

use super::{EXACT_INT, Kind, SMALL, avx2};
use crate::core::config::{QuantExpr, Rounding};
use crate::core::params::{PARAM_LANES, ParamLanes, Params8};
use crate::core::simd::Avx2;

/// The constants of one block in the specialised loop, all f32. In this order, the first
/// eight fields are one register of the eight-block transposition (see `avx2::consts8`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[repr(C)]
pub(crate) struct Consts {
    pub(super) code_scale: f32,
    pub(super) recip: f32,
    pub(super) zero_f: f32,
    /// `zero_f + 0.5` in f32, as GGUF's half-up expression adds it.
    pub(super) zero_half: f32,
    pub(super) code_offset: f32,
    pub(super) scale: f32,
    pub(super) offset: f32,
    pub(super) qmin: f32,
    pub(super) qmax: f32,
    /// `2^23 - qmin`: `q + bias` is `2^23 + (q - qmin)`, whose low mantissa bits are the
    /// code offset.
    pub(super) bias: f32,
}

impl Consts {
    /// The scale the block stores.
    #[inline(always)]
    pub(crate) fn stored_scale(&self) -> f32 {
        self.scale
    }
}

/// A row's blocks' [`Consts`], reused from row to row: cleared without giving up its slots,
/// so that eight blocks appended at once ([`ConstLanes::append_blocks`]) are written over
/// slots a previous row filled, rather than into slots first filled with defaults (a
/// `Vec` cannot grow by eight without writing them).
#[derive(Debug, Default)]
pub(crate) struct ConstsBuf {
    /// The slots; the first `len` are the row's.
    slots: Vec<Consts>,
    len: usize,
}

impl ConstsBuf {
    /// Empties the buffer, keeping its slots.
    #[inline(always)]
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }

    /// Appends one block's constants.
    #[inline(always)]
    pub(crate) fn push(&mut self, k: Consts) {
        if let Some(slot) = self.slots.get_mut(self.len) {
            *slot = k;
        } else {
            self.slots.push(k);
        }
        self.len += 1;
    }

    /// The next eight slots, appended (defaults where no row has filled them yet; always
    /// `Some`).
    #[inline(always)]
    pub(crate) fn next8(&mut self) -> Option<&mut [Consts; PARAM_LANES]> {
        let start = self.len;
        let end = start + PARAM_LANES;
        if self.slots.len() < end {
            self.slots.resize(end, Consts::default());
        }
        self.len = end;
        self.slots.get_mut(start..)?.first_chunk_mut()
    }

    /// The blocks appended since the buffer was last cleared.
    #[inline(always)]
    pub(crate) fn as_slice(&self) -> &[Consts] {
        self.slots.get(..self.len).unwrap_or_default()
    }

    /// How many blocks were appended since the buffer was last cleared.
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

/// The constants of `N` blocks, one array per field (lane `j` for block `j`), as the
/// search over many blocks at once uses them ([`block_sums`](crate::core::kernel::segment::sums::block_sums)); [`ConstLanes::get`] is one
/// block's [`Consts`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConstLanes<const N: usize> {
    pub(super) code_scale: [f32; N],
    pub(super) recip: [f32; N],
    pub(super) zero_f: [f32; N],
    pub(super) zero_half: [f32; N],
    pub(super) code_offset: [f32; N],
    pub(super) scale: [f32; N],
    pub(super) offset: [f32; N],
    pub(super) qmin: f32,
    pub(super) qmax: f32,
}

impl<const N: usize> ConstLanes<N> {
    /// Lane `j`'s constants.
    #[inline(always)]
    pub(super) fn get(&self, j: usize) -> Consts {
        Consts {
            code_scale: self.code_scale[j],
            recip: self.recip[j],
            zero_f: self.zero_f[j],
            zero_half: self.zero_half[j],
            code_offset: self.code_offset[j],
            qmin: self.qmin,
            qmax: self.qmax,
            bias: 8_388_608.0 - self.qmin,
            scale: self.scale[j],
            offset: self.offset[j],
        }
    }

    /// The largest magnitude a clamped code reconstructs to under lane `j`'s constants,
    /// for parameters with an integer zero point (no float offset): `(c − z)·s` rounded in
    /// f32, as the loop forms it, for the code `c` of `qmin..=qmax` farthest from `z`.
    /// Rounding is monotone, so no code's reconstruction is larger in magnitude, and a
    /// scale of smaller magnitude (with the same `z` and codes) reaches no farther.
    #[inline(always)]
    pub(crate) fn reach(&self) -> [f32; N] {
        use std::array::from_fn;
        // Codes and zero points are small integers: these differences are exact.
        let far: [f32; N] = from_fn(|j| {
            (self.qmin - self.zero_f[j])
                .abs()
                .max((self.qmax - self.zero_f[j]).abs())
        });
        from_fn(|j| far[j] * self.scale[j].abs())
    }

    /// The constants of blocks `k`, lane by lane.
    #[inline(always)]
    pub(crate) fn of(k: &[Consts; N]) -> Self {
        use std::array::from_fn;
        Self {
            code_scale: from_fn(|j| k[j].code_scale),
            recip: from_fn(|j| k[j].recip),
            zero_f: from_fn(|j| k[j].zero_f),
            zero_half: from_fn(|j| k[j].zero_half),
            code_offset: from_fn(|j| k[j].code_offset),
            scale: from_fn(|j| k[j].scale),
            offset: from_fn(|j| k[j].offset),
            qmin: k.first().map_or(0.0, |k| k.qmin),
            qmax: k.first().map_or(0.0, |k| k.qmax),
        }
    }
}

/// The constants of `N` blocks of `kind` with parameters `p` (lane `j` for block `j`), whose
/// values lie in `min[j]..=max[j]`, for codes `qmin..=qmax`; and whether each block is for
/// the specialised loop (never a lane with a problem). One block is `N = 1`
/// ([`Prepared::new`](crate::core::kernel::segment::prepared::Prepared::new)); eight are prepared together for rows of groups ([`consts8`]), with
/// the configuration's branches taken outside the lanes so that they vectorise.
///
/// A block is for the specialised loop when:
///
/// - every ratio it can round is far below `2^22` in magnitude (so codes and their sums
///   with the zero point are exact small integers), and none is NaN or infinite. f32
///   subtraction and multiplication are monotone, so the larger of `|min|` and `|max|`
///   (less the float offset) bounds every other ratio. The bound is taken with the
///   reciprocal (one multiplication) against `2^21`: `1/s` and the product are each within
///   `2^-24` relative of exact, so a bound below `2^21` leaves the true ratios, and their
///   sums with the zero point or `0.5`, below `2^22`;
/// - the quantize expression does not divide by a zero scale (the reference returns the
///   zero point without dividing);
/// - `(q − z) · s` can be formed in f32 exactly as the reference forms it in i64: `z` and
///   every `q − z` are integers f32 holds exactly (always, with a float offset).
#[inline(always)]
pub(crate) fn consts_lanes<const N: usize>(
    kind: Kind,
    p: &ParamLanes<N>,
    min: &[f32; N],
    max: &[f32; N],
    qmin: i32,
    qmax: i32,
) -> (ConstLanes<N>, [bool; N]) {
    use std::array::from_fn;
    let s = &p.code_scale;
    let recip: [f32; N] = from_fn(|j| if s[j] == 0.0 { 0.0 } else { 1.0 / s[j] });
    let zero_f: [f32; N] = from_fn(|j| p.zero_point[j] as f32);
    let zero_half: [f32; N] = from_fn(|j| zero_f[j] + 0.5);
    let (code_offset, offset) = if p.float_min {
        (p.lo, p.offset)
    } else {
        ([0.0; N], [0.0; N])
    };
    // The largest |x − offset|, an end of the range.
    let a: [f32; N] = if kind.offset {
        from_fn(|j| {
            (min[j] - code_offset[j])
                .abs()
                .max((max[j] - code_offset[j]).abs())
        })
    } else {
        from_fn(|j| min[j].abs().max(max[j].abs()))
    };
    // What the expression adds to the ratio before rounding.
    let c: [f32; N] = match (kind.expr, kind.rounding) {
        (QuantExpr::ReciprocalAddZero, Rounding::HalfUp) => from_fn(|j| zero_half[j].abs()),
        (QuantExpr::ReciprocalAddZero, _) => from_fn(|j| zero_f[j].abs()),
        (_, Rounding::HalfUp) => [0.5; N],
        _ => [0.0; N],
    };
    // `recip` is `1/s` (0 when `s` is 0, infinite when `s` is subnormal: NaN or infinity
    // fails the comparison).
    let bound: [bool; N] = from_fn(|j| a[j] * recip[j].abs() + c[j] + 1.0 < SMALL / 2.0);
    let divides: [bool; N] = if kind.expr == QuantExpr::Divide {
        from_fn(|j| s[j] != 0.0)
    } else {
        [true; N]
    };
    // Zero points near 0 leave every difference exact (see `near`).
    let exact: [bool; N] = if kind.offset || near(&p.zero_point, qmin, qmax) {
        [true; N]
    } else {
        let within = |d: i64| d.abs() <= EXACT_INT;
        let (lo, hi) = (i64::from(qmin), i64::from(qmax));
        let z: [i64; N] = from_fn(|j| i64::from(p.zero_point[j]));
        let (a, b, c): ([bool; N], [bool; N], [bool; N]) = (
            from_fn(|j| within(z[j])),
            from_fn(|j| within(lo - z[j])),
            from_fn(|j| within(hi - z[j])),
        );
        from_fn(|j| a[j] & b[j] & c[j])
    };
    let fast = from_fn(|j| p.ok[j] & divides[j] & bound[j] & exact[j]);
    let k = ConstLanes {
        code_scale: *s,
        recip,
        zero_f,
        zero_half,
        code_offset,
        scale: p.scale,
        offset,
        qmin: qmin as f32,
        qmax: qmax as f32,
    };
    (k, fast)
}

/// Whether every zero point of `zero_points` is within `2^23` of 0 with `qmin` and `qmax`
/// small enough that every difference of a code and a zero point is below `2^24`: one test
/// of the zero points' largest magnitude, rather than three differences per lane in i64.
#[inline(always)]
pub(super) fn near(zero_points: &[i32], qmin: i32, qmax: i32) -> bool {
    zero_points
        .iter()
        .map(|z| z.unsigned_abs())
        .max()
        .unwrap_or(0)
        <= NEAR
        && near_codes(qmin, qmax)
}

/// The largest zero point magnitude [`near`] takes.
pub(super) const NEAR: u32 = 1 << 23;

/// Whether codes from `qmin` to `qmax` are small enough for [`near`]: every difference of
/// a code and a zero point of at most `2^23` is below `2^24`.
#[inline(always)]
pub(super) fn near_codes(qmin: i32, qmax: i32) -> bool {
    i64::from(qmin).abs().max(i64::from(qmax).abs()) + i64::from(NEAR) <= EXACT_INT
}

/// [`consts_lanes`] for the eight blocks of `p`, one [`Consts`] per block (formed and
/// transposed in registers with `avx2`).
#[inline(always)]
pub(crate) fn consts8(
    simd: Avx2,
    kind: Kind,
    p: &Params8,
    min: &[f32; PARAM_LANES],
    max: &[f32; PARAM_LANES],
    qmin: i32,
    qmax: i32,
) -> ([Consts; PARAM_LANES], [bool; PARAM_LANES]) {
    let (k, fast) = consts8_lanes(simd, kind, p, min, max, qmin, qmax);
    (k.blocks(simd), fast)
}

/// [`consts8`] lane by lane, as [`consts_lanes`] gives them (the same values, formed in
/// registers with `avx2` where it covers the parameters).
#[inline(always)]
pub(crate) fn consts8_lanes(
    simd: Avx2,
    kind: Kind,
    p: &Params8,
    min: &[f32; PARAM_LANES],
    max: &[f32; PARAM_LANES],
    qmin: i32,
    qmax: i32,
) -> (ConstLanes<PARAM_LANES>, [bool; PARAM_LANES]) {
    #[cfg(target_arch = "x86_64")]
    if let Some(v3) = simd.v3()
        && let Some(out) = avx2::consts8_lanes(v3, kind, p, min, max, (qmin, qmax))
    {
        return out;
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = simd;
    consts_lanes(kind, p, min, max, qmin, qmax)
}

impl ConstLanes<PARAM_LANES> {
    /// One [`Consts`] per lane's block appended to `out`, written in place (transposed in
    /// registers with `avx2`): eight blocks' constants without a copy through the
    /// stack.
    #[inline(always)]
    pub(crate) fn append_blocks(&self, simd: Avx2, out: &mut ConstsBuf) {
        if let Some(slots) = out.next8() {
            #[cfg(target_arch = "x86_64")]
            if let Some(v3) = simd.v3() {
                avx2::blocks_into(v3, self, slots);
                return;
            }
            *slots = std::array::from_fn(|j| self.get(j));
        }
    }

    /// One [`Consts`] per lane's block (transposed in registers with `avx2`).
    #[inline(always)]
    pub(crate) fn blocks(&self, simd: Avx2) -> [Consts; PARAM_LANES] {
        #[cfg(target_arch = "x86_64")]
        if let Some(v3) = simd.v3() {
            return avx2::blocks(v3, self);
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = simd;
        std::array::from_fn(|j| self.get(j))
    }
}
