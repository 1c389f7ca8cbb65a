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
//!   through [`Quantizer`] value by value, as before.
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

#![expect(
    clippy::inline_always,
    reason = "the specialised loop is these small functions inlined into one monomorphised body per instance; an outlined call per value or per chunk would defeat the vectoriser"
)]

use crate::core::config::{AsymZeroPoint, Config, QuantExpr, Rounding, ScaleDtype, Scheme};
use crate::core::kernel::Quantizer;
use crate::core::params::{BlockParams, BlockStats, PARAM_LANES, ParamCalc, ParamLanes, Params8};
use crate::core::round;
use crate::core::simd::Avx2;

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2;
mod simd;

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

/// The constants of one block in the specialised loop, all f32. In this order, the first
/// eight fields are one register of the eight-block transposition (see `avx2::consts8`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[repr(C)]
pub(crate) struct Consts {
    code_scale: f32,
    recip: f32,
    zero_f: f32,
    /// `zero_f + 0.5` in f32, as GGUF's half-up expression adds it.
    zero_half: f32,
    code_offset: f32,
    scale: f32,
    offset: f32,
    qmin: f32,
    qmax: f32,
    /// `2^23 - qmin`: `q + bias` is `2^23 + (q - qmin)`, whose low mantissa bits are the
    /// code offset.
    bias: f32,
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
/// search over many blocks at once uses them ([`block_sums`]); [`ConstLanes::get`] is one
/// block's [`Consts`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConstLanes<const N: usize> {
    code_scale: [f32; N],
    recip: [f32; N],
    zero_f: [f32; N],
    zero_half: [f32; N],
    code_offset: [f32; N],
    scale: [f32; N],
    offset: [f32; N],
    qmin: f32,
    qmax: f32,
}

impl<const N: usize> ConstLanes<N> {
    /// Lane `j`'s constants.
    #[inline(always)]
    fn get(&self, j: usize) -> Consts {
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
/// ([`Prepared::new`]); eight are prepared together for rows of groups ([`consts8`]), with
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
fn near(zero_points: &[i32], qmin: i32, qmax: i32) -> bool {
    zero_points
        .iter()
        .map(|z| z.unsigned_abs())
        .max()
        .unwrap_or(0)
        <= NEAR
        && near_codes(qmin, qmax)
}

/// The largest zero point magnitude [`near`] takes.
const NEAR: u32 = 1 << 23;

/// Whether codes from `qmin` to `qmax` are small enough for [`near`]: every difference of
/// a code and a zero point of at most `2^23` is below `2^24`.
#[inline(always)]
fn near_codes(qmin: i32, qmax: i32) -> bool {
    i64::from(qmin).abs().max(i64::from(qmax).abs()) + i64::from(NEAR) <= EXACT_INT
}

/// [`consts_lanes`] for the eight blocks of `p`, one [`Consts`] per block (formed and
/// transposed in registers with `simd`'s AVX2).
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
/// registers with `simd`'s AVX2 where it covers the parameters).
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
    /// registers with `simd`'s AVX2): eight blocks' constants without a copy through the
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

    /// One [`Consts`] per lane's block (transposed in registers with `simd`'s AVX2).
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

/// What selects the loop's instance: the same for every block of a configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Kind {
    expr: QuantExpr,
    rounding: Rounding,
    offset: bool,
    /// Every block's stored scale is the scale its codes are computed with (scales stored
    /// in f32, which [`ScaleDtype::round`] leaves as they are).
    ///
    /// [`ScaleDtype::round`]: crate::core::config::ScaleDtype::round
    stored: bool,
}

impl Kind {
    /// The instance for blocks of `config` (a float offset exactly when the parameters
    /// carry one: asymmetric with [`AsymZeroPoint::FloatMin`]).
    pub(crate) fn of(config: &Config) -> Self {
        Self {
            expr: config.conventions.quant_expr,
            rounding: config.rounding,
            offset: config.scheme == Scheme::Asymmetric
                && config.conventions.asym_zero_point == AsymZeroPoint::FloatMin,
            stored: config.scale_dtype == ScaleDtype::F32,
        }
    }

    /// Whether rows of blocks of this kind that no clamp touches form their errors in `f32`
    /// ([`run_prepared`] without `clipped`), reading no values widened to `f64`.
    pub(crate) fn exact_errors(self) -> bool {
        self.expr == QuantExpr::Divide && !self.offset && self.stored
    }
}

/// Where a row's blocks come from, one at a time, for [`run_row`].
pub(crate) trait BlockSource {
    /// Why a block cannot be prepared.
    type Error;
    /// Whether [`BlockSource::finished`] needs each block's clamp count (otherwise only the
    /// run's total is counted, which costs less per block).
    const COUNTS: bool;
    /// Whether the loop measures the signal into [`Lanes::sig`] (values outside the
    /// vectorised chunks always add to it).
    const SIGNAL: bool;
    /// Prepares block `i` of the run, whose values are `xs`.
    fn prepare(&mut self, i: usize, xs: &[f32]) -> Result<Prepared, Self::Error>;
    /// Block `i` has been quantized; `clipped` of its codes were clamped (0 unless
    /// [`BlockSource::COUNTS`]).
    fn finished(&mut self, i: usize, clipped: usize);
}

/// A single prepared block; the loop measures the signal when `SIGNAL`.
struct One<'a, const SIGNAL: bool>(&'a Prepared);

impl<const SIGNAL: bool> BlockSource for One<'_, SIGNAL> {
    type Error = std::convert::Infallible;
    const COUNTS: bool = false;
    const SIGNAL: bool = SIGNAL;
    #[inline(always)]
    fn prepare(&mut self, _: usize, _: &[f32]) -> Result<Prepared, Self::Error> {
        Ok(*self.0)
    }
    #[inline(always)]
    fn finished(&mut self, _: usize, _: usize) {}
}

/// A block's quantizer prepared for the loop.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Prepared {
    kind: Kind,
    k: Consts,
    /// The reference quantizer, for a block the specialised loop does not take (see the
    /// module documentation); `None` when it takes it.
    slow: Option<Quantizer>,
    /// What the block is against the clamp ([`clamp_of`]; [`Clamp::Any`] where the loop
    /// does not take it).
    clamp: Clamp,
}

/// `2^24`: integers up to here are exact in f32.
const EXACT_INT: i64 = 1 << 24;

impl Prepared {
    /// Prepares `params` (computed for a block whose values have `stats`) for `[qmin, qmax]`.
    #[must_use]
    #[inline(always)]
    pub(crate) fn new(
        config: &Config,
        params: &BlockParams,
        qmin: i32,
        qmax: i32,
        stats: &BlockStats,
    ) -> Self {
        let kind = Kind::of(config);
        let (k, [fast]) = consts_lanes(
            kind,
            &ParamLanes::of(params),
            &[stats.min],
            &[stats.max],
            qmin,
            qmax,
        );
        let k = k.get(0);
        let fast = stats.count > 0 && fast;
        let slow = (!fast).then(|| Quantizer::new(config, params, qmin, qmax));
        let clamp = if fast {
            clamp_of(kind, &k, stats.min, stats.max)
        } else {
            Clamp::Any
        };
        Self {
            kind,
            k,
            slow,
            clamp,
        }
    }

    /// The constants of the specialised loop (meaningful when [`Prepared::is_fast`]).
    #[inline(always)]
    pub(crate) fn consts(&self) -> Consts {
        self.k
    }

    /// Whether the specialised loop runs.
    pub(crate) fn is_fast(&self) -> bool {
        self.slow.is_none()
    }

    /// What the block (whose smallest and largest values were given to [`Prepared::new`])
    /// is against the clamp, as [`run_prepared`] takes it for a row of blocks
    /// ([`clamp_of`]; [`Clamp::Any`] where the loop does not take it).
    pub(crate) fn clamp(&self) -> Clamp {
        self.clamp
    }

    /// Quantizes `xs`, the values of this block in one row starting at column `start`; see
    /// [`run_row`]. Returns the clamp count. Without `SIGNAL`, [`Lanes::sig`] is not
    /// measured (it holds only the values outside the vectorised chunks).
    #[inline(always)]
    pub(crate) fn run<T: Code, const SIGNAL: bool>(
        &self,
        xs: &[f32],
        start: usize,
        codes: &mut [T],
        lanes: &mut Lanes,
    ) -> usize {
        let run = run_row(
            self.kind,
            &mut One::<SIGNAL>(self),
            xs.len(),
            xs,
            start,
            codes,
            lanes,
            &[],
        );
        match run {
            Ok(n) => n,
            Err(never) => match never {},
        }
    }
}

/// `simd::$f::<E, R, O, $t...>($arg...)` for the loop instance of `$kind`: its quantize
/// expression, rounding and float offset as const parameters (`@ m, ...`: module `m`'s
/// `$f`; `outlined ...`: the call as a function of its own, see [`outlined`]).
macro_rules! dispatch {
    (@call $w:path, $m:ident, $kind:expr, $f:ident, [$($t:ty),*], ($($arg:expr),*)) => {{
        let kind: Kind = $kind;
        match (kind.expr, kind.rounding, kind.offset) {
            (QuantExpr::Divide, Rounding::HalfEven, false) => $w(
                #[inline(always)]
                || $m::$f::<{ simd::DIV }, { round::EVEN }, false $(, $t)*>($($arg),*),
            ),
            (QuantExpr::Divide, Rounding::HalfEven, true) => $w(
                #[inline(always)]
                || $m::$f::<{ simd::DIV }, { round::EVEN }, true $(, $t)*>($($arg),*),
            ),
            (QuantExpr::Divide, Rounding::HalfAway, false) => $w(
                #[inline(always)]
                || $m::$f::<{ simd::DIV }, { round::AWAY }, false $(, $t)*>($($arg),*),
            ),
            (QuantExpr::Divide, Rounding::HalfAway, true) => $w(
                #[inline(always)]
                || $m::$f::<{ simd::DIV }, { round::AWAY }, true $(, $t)*>($($arg),*),
            ),
            (QuantExpr::Divide, Rounding::HalfUp, false) => $w(
                #[inline(always)]
                || $m::$f::<{ simd::DIV }, { round::UP }, false $(, $t)*>($($arg),*),
            ),
            (QuantExpr::Divide, Rounding::HalfUp, true) => $w(
                #[inline(always)]
                || $m::$f::<{ simd::DIV }, { round::UP }, true $(, $t)*>($($arg),*),
            ),
            (QuantExpr::Reciprocal, Rounding::HalfEven, false) => $w(
                #[inline(always)]
                || $m::$f::<{ simd::MUL }, { round::EVEN }, false $(, $t)*>($($arg),*),
            ),
            (QuantExpr::Reciprocal, Rounding::HalfEven, true) => $w(
                #[inline(always)]
                || $m::$f::<{ simd::MUL }, { round::EVEN }, true $(, $t)*>($($arg),*),
            ),
            (QuantExpr::Reciprocal, Rounding::HalfAway, false) => $w(
                #[inline(always)]
                || $m::$f::<{ simd::MUL }, { round::AWAY }, false $(, $t)*>($($arg),*),
            ),
            (QuantExpr::Reciprocal, Rounding::HalfAway, true) => $w(
                #[inline(always)]
                || $m::$f::<{ simd::MUL }, { round::AWAY }, true $(, $t)*>($($arg),*),
            ),
            (QuantExpr::Reciprocal, Rounding::HalfUp, false) => $w(
                #[inline(always)]
                || $m::$f::<{ simd::MUL }, { round::UP }, false $(, $t)*>($($arg),*),
            ),
            (QuantExpr::Reciprocal, Rounding::HalfUp, true) => $w(
                #[inline(always)]
                || $m::$f::<{ simd::MUL }, { round::UP }, true $(, $t)*>($($arg),*),
            ),
            (QuantExpr::ReciprocalAddZero, Rounding::HalfEven, false) => $w(
                #[inline(always)]
                || $m::$f::<{ simd::ADD }, { round::EVEN }, false $(, $t)*>($($arg),*),
            ),
            (QuantExpr::ReciprocalAddZero, Rounding::HalfEven, true) => $w(
                #[inline(always)]
                || $m::$f::<{ simd::ADD }, { round::EVEN }, true $(, $t)*>($($arg),*),
            ),
            (QuantExpr::ReciprocalAddZero, Rounding::HalfAway, false) => $w(
                #[inline(always)]
                || $m::$f::<{ simd::ADD }, { round::AWAY }, false $(, $t)*>($($arg),*),
            ),
            (QuantExpr::ReciprocalAddZero, Rounding::HalfAway, true) => $w(
                #[inline(always)]
                || $m::$f::<{ simd::ADD }, { round::AWAY }, true $(, $t)*>($($arg),*),
            ),
            (QuantExpr::ReciprocalAddZero, Rounding::HalfUp, false) => $w(
                #[inline(always)]
                || $m::$f::<{ simd::ADD }, { round::UP }, false $(, $t)*>($($arg),*),
            ),
            (QuantExpr::ReciprocalAddZero, Rounding::HalfUp, true) => $w(
                #[inline(always)]
                || $m::$f::<{ simd::ADD }, { round::UP }, true $(, $t)*>($($arg),*),
            ),
        }
    }};
    (@ $m:ident, $kind:expr, $f:ident, [$($t:ty),*], ($($arg:expr),*)) => {
        dispatch!(@call inlined, $m, $kind, $f, [$($t),*], ($($arg),*))
    };
    (outlined $kind:expr, $f:ident, [$($t:ty),*], ($($arg:expr),*)) => {
        dispatch!(@call outlined, simd, $kind, $f, [$($t),*], ($($arg),*))
    };
    ($kind:expr, $f:ident, [$($t:ty),*], ($($arg:expr),*)) => {
        dispatch!(@call inlined, simd, $kind, $f, [$($t),*], ($($arg),*))
    };
}

/// Calls `f` in place (inlined into the caller, and compiled for the caller's instructions).
#[inline(always)]
fn inlined<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// Calls `f`, one instance of a row loop, as a function of its own, compiled for the
/// widest vector instructions this CPU has (as `core::pass::vectorised` does; chosen at run
/// time by `pulp`, once per call). A row loop is called once per row (and rung, in the
/// ladder), so the call costs nothing measurable; inlined into the pass's task bodies
/// instead, the 18 instances of each loop made single functions of more than a megabyte of
/// machine code, and a release build took 52 minutes instead of 3 (see README).
#[inline(never)]
fn outlined<R>(f: impl FnOnce() -> R) -> R {
    pulp::Arch::new().dispatch(f)
}

/// Quantizes `xs`, consecutive blocks of one row starting at column `start` (block `i` holds
/// values `i·size .. (i+1)·size`, the last one possibly shorter), each prepared by `source`
/// just before it runs: code offsets from `qmin` into `codes`, each error into lane
/// `column % LANES` of `lanes`. `ahead`, when not empty, is the row to be quantized next:
/// the loop asks for each of its cache lines ahead of use (see `simd::fetch`), so that the
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
/// `simd::chunk_magnitudes`).
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

impl ConstLanes<PARAM_LANES> {
    /// Bit `j` set where lane `j`'s block under `kind`, with its values in `lo[j]..=hi[j]`,
    /// has no code a clamp moves ([`within`] for each lane), in one vectorised test (with
    /// `simd`'s AVX2 where the machine has it).
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

/// What the blocks of a row are known to be against the clamp, for [`run_prepared`] without
/// clamp counts. Ordered from the least known to the most: a row of blocks is the least of
/// its blocks ([`Ord::min`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Clamp {
    /// Nothing known: a clamp may move codes, and the errors are formed in `f64`.
    Any,
    /// A clamp may move codes, but every error is exact in `f32` under a kind that forms
    /// them there ([`ConstLanes::exact_bits`], [`Prepared::clamp`]).
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
    float_min: bool,
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
/// and codes `q.0..=q.1`, prepared at once in `simd`'s AVX2 registers: the constants and
/// clamp test that [`ParamCalc::lanes8`], [`consts8_lanes`] and [`ConstLanes::within_bits`]
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
fn within(kind: Kind, k: &Consts, lo: f32, hi: f32) -> bool {
    dispatch!(kind, within, [], (k, lo, hi))
}

/// Whether every error of a block of `kind` whose constants are `k` and whose values lie in
/// `lo..=hi` is exact in `f32` as the loop forms it with the clamp (see `simd::exact`):
/// false for kinds that do not divide without a float offset.
fn exact(kind: Kind, k: &Consts, lo: f32, hi: f32) -> bool {
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

/// The squared errors of `xs` under [`LANES`] candidate blocks (lane `j` for the block whose
/// constants are `k[j]`), each added to `sums[j]` one value after another in `f64`, in the
/// order of `xs`: for each lane, the sum the reference forms value by value with
/// [`Quantizer`]. Every candidate must be prepared for the specialised loop
/// ([`Prepared::is_fast`]) under `kind`, for a block holding every value of `xs`.
#[inline(always)]
pub(crate) fn candidate_sums(kind: Kind, k: &[Consts; LANES], xs: &[f32], sums: &mut [f64; LANES]) {
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V3::try_new() {
        dispatch!(@ avx2, kind, candidate_sums, [], (simd, k, xs, sums));
        return;
    }
    dispatch!(kind, candidate_sums, [], (k, xs, sums));
}

/// An approximation of the sum of the squared errors of `xs` under the block whose
/// constants are `k` ([`Prepared::is_fast`] under `kind`, for a block holding every value of
/// `xs`), formed with AVX2 in `f32` and in no fixed order; `None` without AVX2, or when it is
/// not finite.
///
/// Each reconstruction is the reference's own ([`Quantizer`]'s `f32` value); its error
/// from the value is taken in `f32` (relative error at most `u = 2^-24`, none when the
/// difference is subnormal), squared in `f32` (at most `u` more, and at most `2^-150` in
/// absolute terms where the square is subnormal), and the squares are added in `f32` sums of
/// at most [`APPROX_TERMS`] terms each (at most `(APPROX_TERMS - 1)·u/(1 - …)` more), which
/// are then widened and added in `f64`. So the result lies within a relative
/// [`APPROX_REL`] of the exact real sum of squares, give or take `xs.len()·2^-149`:
/// `clip::Slack` turns that into bounds on the reference's ordered `f64` sum.
#[inline(always)]
pub(crate) fn approx_squares(kind: Kind, k: &Consts, xs: &[f32]) -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V3::try_new() {
        let a: f64 = dispatch!(@ avx2, kind, approx_squares, [], (simd, k, xs));
        return a.is_finite().then_some(a);
    }
    let _ = (kind, k, xs);
    None
}

/// Terms of each `f32` sum of [`approx_squares`], at most (each lane of its four sums is
/// widened to `f64` after this many chunks).
pub(crate) const APPROX_TERMS: usize = 64;

/// [`approx_squares`]'s relative error, at most: `2^-17`, above the `(1 + u)^3·(1 +
/// γ(APPROX_TERMS - 1)) - 1 ≈ 66.1·u ≈ 3.9e-6` its steps allow (`u = 2^-24`).
pub(crate) const APPROX_REL: f64 = 1.0 / 131_072.0;

/// The squared errors of [`LANES`] blocks (lane `j` for the block whose constants are
/// `k[j]`), whose values are lane `j` of each row of `xs`, each added to `sums[j]` one value
/// after another in `f64`: for each lane, the sum the reference forms value by value with
/// [`Quantizer`]. Every block must be prepared for the specialised loop under `kind`.
#[inline(always)]
pub(crate) fn block_sums(
    kind: Kind,
    k: &ConstLanes<LANES>,
    xs: &[[f32; LANES]],
    sums: &mut [f64; LANES],
) {
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V3::try_new() {
        dispatch!(@ avx2, kind, block_sums, [], (simd, k, xs, sums));
        return;
    }
    dispatch!(kind, block_sums, [], (k, xs, sums));
}

/// [`block_sums`] for blocks whose every error is exact in `f32` with the clamp: every lane
/// of `k` passes [`ConstLanes::exact_bits`] under `kind` for ends that hold every value of
/// its lane of `xs`. Each error is then formed in `f32` and only widened for its square
/// and the sum (the error is the `f64` difference the reference forms, see
/// `avx2::chunk_magnitudes`): the same sums bit for bit, with fewer operations per value.
/// Without AVX2 this is [`block_sums`].
#[inline(always)]
pub(crate) fn block_sums_exact(
    kind: Kind,
    k: &ConstLanes<LANES>,
    xs: &[[f32; LANES]],
    sums: &mut [f64; LANES],
) {
    debug_assert!(kind.exact_errors());
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V3::try_new() {
        dispatch!(@ avx2, kind, block_sums_exact, [], (simd, k, xs, sums));
        return;
    }
    block_sums(kind, k, xs, sums);
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
