//! The per-block arithmetic of [`ParamCalc`], over `N` blocks side by side: lane `j` is
//! block `j`, and every branch on the configuration is taken once, outside the lanes.
//!
//! The steps, in the order the libraries take them: the range widened to include 0
//! ([`ParamCalc::widened`]); the raw scale ([`super::ScaleRule::scales`]); the degenerate-scale
//! policy ([`ParamCalc::degenerate`]); the zero point ([`ParamCalc::zero_points`]); the
//! scale and float minimum rounded to their storage type ([`ParamCalc::assemble`]). A lane
//! whose parameters cannot represent its block is flagged (`ok` false), and
//! [`ParamCalc::params`] names the [`ParamProblem`].

#![expect(
    clippy::inline_always,
    reason = "inlined into the eight-block preparation, which must vectorise"
)]

use std::array::from_fn;

use super::{ParamCalc, asymmetric_zero_f64};
use crate::core::config::{Arith, AsymZeroPoint, Degenerate, ScaleDtype, Scheme};
use crate::core::params::{BlockParams, ParamProblem, RealRange};
use crate::core::round::Round;
use crate::core::simd::Avx2;

/// Blocks per call of the row preparation.
pub(crate) const BLOCKS: usize = 8;

/// The parameters of `N` blocks, lane `j` for block `j`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ParamLanes<const N: usize> {
    /// [`BlockParams::code_scale`].
    pub code_scale: [f32; N],
    /// [`BlockParams::scale`].
    pub scale: [f32; N],
    /// [`BlockParams::zero_point`].
    pub zero_point: [i32; N],
    /// The widened range's low end (`code_offset` under a float minimum).
    pub lo: [f32; N],
    /// The widened range's high end.
    pub hi: [f32; N],
    /// [`BlockParams::offset`] under a float minimum.
    pub offset: [f32; N],
    /// [`BlockParams::degenerate`].
    pub degenerate: [bool; N],
    /// [`BlockParams::widened`].
    pub widened: [bool; N],
    /// [`BlockParams::negative_extreme`].
    pub negative_extreme: [bool; N],
    /// The asymmetric integer zero point before it is made an i32 (after clamping).
    pub zero: [f64; N],
    /// The zero point fits an i32 (or none is formed).
    pub zero_ok: [bool; N],
    /// The parameters have no problem (otherwise the other fields are meaningless).
    pub ok: [bool; N],
    /// The parameters carry a float offset (`code_offset` is `lo`, `offset` is `offset`).
    pub float_min: bool,
}

/// Eight blocks' parameters.
pub(crate) type Params8 = ParamLanes<BLOCKS>;

/// `xs` rounded to `dtype` and back, lane by lane ([`ScaleDtype::round`]), with f32's
/// identity taken outside the lanes (the rounding call is not inlined into the lanes).
#[inline(always)]
fn stored<const N: usize>(dtype: ScaleDtype, xs: &[f32; N]) -> [f32; N] {
    match dtype {
        ScaleDtype::F32 => *xs,
        ScaleDtype::F16 | ScaleDtype::Bf16 => from_fn(|j| dtype.round(xs[j])),
    }
}

/// `lo..=hi` widened to include 0. Comparisons rather than `f32::min`/`max`, which may
/// return either of `-0.0` and `0.0` (and do differ between scalar and vector code): a zero
/// end keeps its sign.
#[inline(always)]
fn with_zero(lo: f32, hi: f32) -> (f32, f32) {
    (
        if lo > 0.0 { 0.0 } else { lo },
        if hi < 0.0 { 0.0 } else { hi },
    )
}

impl ParamCalc {
    /// The parameters of one block formed from `range`, with its [`ParamProblem`] named.
    #[must_use]
    #[inline(always)]
    pub fn params(&self, range: RealRange) -> BlockParams {
        let p = self.lanes(&[range.lo], &[range.hi], &[range.extreme]);
        let (lo, hi) = (p.lo[0], p.hi[0]);
        let (code_scale, scale) = (p.code_scale[0], p.scale[0]);
        let dtype = self.config.scale_dtype.name();
        let problem = if !code_scale.is_finite() {
            let arith = match self.config.conventions.arith {
                Arith::F32 => "f32",
                Arith::F64 => "f64",
            };
            Some(ParamProblem::RangeOverflow { lo, hi, arith })
        } else if !scale.is_finite() {
            Some(ParamProblem::ScaleOverflow {
                scale: code_scale,
                dtype,
            })
        } else if p.float_min && !p.offset[0].is_finite() {
            Some(ParamProblem::OffsetOverflow { offset: lo, dtype })
        } else if !p.zero_ok[0] {
            Some(ParamProblem::ZeroPointOverflow { zero: p.zero[0] })
        } else {
            None
        };
        BlockParams {
            problem,
            ..p.block(0)
        }
    }

    /// The parameters of the blocks whose ranges are `lo[j]..=hi[j]` with first extreme
    /// `extreme[j]` (see [`RealRange`]).
    #[must_use]
    #[inline(always)]
    pub(crate) fn lanes<const N: usize>(
        &self,
        lo: &[f32; N],
        hi: &[f32; N],
        extreme: &[f32; N],
    ) -> ParamLanes<N> {
        self.lanes_with::<N, true>(lo, hi, extreme)
    }

    /// [`ParamCalc::lanes`], with the choices a block's record keeps
    /// ([`BlockParams::widened`], [`BlockParams::negative_extreme`]) formed only when
    /// `CHOICES`: the ladder's rungs keep no blocks, and forming them there costs the ladder
    /// 5 to 10 % (criterion, 4096 x 4096).
    #[must_use]
    #[inline(always)]
    pub(crate) fn lanes_with<const N: usize, const CHOICES: bool>(
        &self,
        lo: &[f32; N],
        hi: &[f32; N],
        extreme: &[f32; N],
    ) -> ParamLanes<N> {
        let (wlo, whi) = self.widened(lo, hi);
        let v = self.rule.signed_values(lo, hi, extreme);
        let (widened, negative_extreme): ([bool; N], [bool; N]) = if CHOICES {
            (
                from_fn(|j| self.widens(lo[j] == hi[j]) && (lo[j] > 0.0 || hi[j] < 0.0)),
                from_fn(|j| v[j] < 0.0),
            )
        } else {
            ([false; N], [false; N])
        };
        let raw = self
            .rule
            .scales(self.config.conventions.arith, &v, &wlo, &whi);
        let (scale64, degenerate) = self.degenerate(&raw);
        let code_scale: [f32; N] = from_fn(|j| scale64[j] as f32);
        let (zero, zero_point, zero_ok) = self.zero_points(&wlo, &code_scale, &scale64);
        // A degenerate scale under `Degenerate::One` or `Flat` imposes zero point 0 (and so
        // has no zero point problem).
        let imposed: [bool; N] = from_fn(|j| self.imposes_zero && degenerate[j]);
        let zero_point: [i32; N] = from_fn(|j| if imposed[j] { 0 } else { zero_point[j] });
        let zero_ok: [bool; N] = from_fn(|j| imposed[j] || zero_ok[j]);
        self.assemble(ParamLanes {
            code_scale,
            scale: code_scale,
            zero_point,
            lo: wlo,
            hi: whi,
            offset: [0.0; N],
            degenerate,
            widened,
            negative_extreme,
            zero,
            zero_ok,
            ok: zero_ok,
            float_min: self.float_min,
        })
    }

    /// Whether eight blocks' parameters are formed in AVX2 registers (on machines that have
    /// it): scales stored in f32, with a symmetric zero point or a float minimum.
    #[inline(always)]
    pub(crate) fn in_registers(&self) -> bool {
        let config = &self.config;
        config.scale_dtype == ScaleDtype::F32
            && (self.float_min || config.scheme == Scheme::Symmetric)
    }

    /// [`ParamCalc::lanes_with`] for eight blocks: in AVX2 registers where `simd` has it,
    /// without the choices, for the configurations the `avx2` module covers.
    #[must_use]
    #[inline(always)]
    pub(crate) fn lanes8<const CHOICES: bool>(
        &self,
        simd: Avx2,
        lo: &[f32; BLOCKS],
        hi: &[f32; BLOCKS],
        extreme: &[f32; BLOCKS],
    ) -> Params8 {
        #[cfg(target_arch = "x86_64")]
        if !CHOICES
            && let Some(v3) = simd.v3()
            && let Some(p) = self.lanes8_avx2(v3, lo, hi, extreme)
        {
            return p;
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = simd;
        self.lanes_with::<BLOCKS, CHOICES>(lo, hi, extreme)
    }

    /// The ranges widened to include 0 where the configuration says so.
    #[inline(always)]
    fn widened<const N: usize>(&self, lo: &[f32; N], hi: &[f32; N]) -> ([f32; N], [f32; N]) {
        let widen: [bool; N] = from_fn(|j| self.widens(lo[j] == hi[j]));
        let zeroed: [(f32, f32); N] = from_fn(|j| with_zero(lo[j], hi[j]));
        (
            from_fn(|j| if widen[j] { zeroed[j].0 } else { lo[j] }),
            from_fn(|j| if widen[j] { zeroed[j].1 } else { hi[j] }),
        )
    }

    /// The degenerate-scale policy: each scale (f64), and whether the policy replaced it.
    #[inline(always)]
    fn degenerate<const N: usize>(&self, raw: &[f64; N]) -> ([f64; N], [bool; N]) {
        match self.config.conventions.degenerate {
            // Below the smallest normal f32: scale 1 (ONNX Runtime).
            Degenerate::One => {
                let small: [bool; N] = from_fn(|j| raw[j].abs() < f64::from(f32::MIN_POSITIVE));
                (from_fn(|j| if small[j] { 1.0 } else { raw[j] }), small)
            }
            // The scale the codes would be computed with is 0: scale 1 (the documents).
            Degenerate::Flat => {
                let flat: [bool; N] = from_fn(|j| raw[j] as f32 == 0.0);
                (from_fn(|j| if flat[j] { 1.0 } else { raw[j] }), flat)
            }
            // Below 2^-23: floored to 2^-23, sign kept (PyTorch).
            Degenerate::Epsilon => {
                let eps = f64::from(f32::EPSILON);
                let small: [bool; N] = from_fn(|j| raw[j].abs() < eps);
                let s = from_fn(|j| {
                    if small[j] {
                        eps.copysign(raw[j])
                    } else {
                        raw[j]
                    }
                });
                (s, small)
            }
            // Kept as it is (GGUF, MLAS).
            Degenerate::Zero => (*raw, from_fn(|j| raw[j] == 0.0)),
        }
    }

    /// The integer zero points from the widened low ends and the scales (before a
    /// degenerate scale imposes 0): each asymmetric zero point as f64 after clamping (0
    /// otherwise), as an i32, and whether it fits one.
    #[inline(always)]
    fn zero_points<const N: usize>(
        &self,
        wlo: &[f32; N],
        code_scale: &[f32; N],
        scale64: &[f64; N],
    ) -> ([f64; N], [i32; N], [bool; N]) {
        let config = &self.config;
        let conv = &config.conventions;
        if self.float_min || config.scheme == Scheme::Symmetric {
            let z = if self.float_min { 0 } else { self.sym_zero };
            return ([0.0; N], [z; N], [true; N]);
        }
        let (qmin, qmax, r) = (self.qmin, self.qmax, config.rounding);
        let z: [f64; N] = match conv.arith {
            Arith::F64 => asymmetric_zero_f64(conv.asym_zero_point, r, qmin, wlo, scale64).1,
            Arith::F32 if conv.asym_zero_point == AsymZeroPoint::ShiftOfRound => {
                let q = f64::from(qmin);
                from_fn(|j| q - f64::from((wlo[j] / code_scale[j]).round_by(r)))
            }
            Arith::F32 => {
                let q = qmin as f32;
                from_fn(|j| f64::from((q - wlo[j] / code_scale[j]).round_by(r)))
            }
        };
        // MLAS: the zero point is the rounded minimum when the scale is 0.
        let z: [f64; N] = from_fn(|j| {
            if code_scale[j] == 0.0 {
                f64::from(wlo[j].round_by(r))
            } else {
                z[j]
            }
        });
        let z: [f64; N] = if conv.clamp_zero_point {
            let (lo, hi) = (f64::from(qmin), f64::from(qmax));
            from_fn(|j| z[j].clamp(lo, hi))
        } else {
            z
        };
        let fits: [bool; N] =
            from_fn(|j| z[j] >= f64::from(i32::MIN) && z[j] <= f64::from(i32::MAX));
        (z, from_fn(|j| if fits[j] { z[j] as i32 } else { 0 }), fits)
    }

    /// `p` with its scale and float minimum rounded to the storage type, and each lane
    /// flagged when they overflow it (or the arithmetic did, or the zero point).
    #[inline(always)]
    fn assemble<const N: usize>(&self, mut p: ParamLanes<N>) -> ParamLanes<N> {
        let dtype = self.config.scale_dtype;
        p.scale = stored(dtype, &p.code_scale);
        if self.float_min {
            p.offset = stored(dtype, &p.lo);
        }
        let finite: [bool; N] = from_fn(|j| p.code_scale[j].is_finite());
        let stored_finite: [bool; N] = from_fn(|j| p.scale[j].is_finite());
        let offset_finite: [bool; N] = if self.float_min {
            from_fn(|j| p.offset[j].is_finite())
        } else {
            [true; N]
        };
        // `&` on the lanes' flags: one mask, no branch per lane.
        p.ok = from_fn(|j| finite[j] & stored_finite[j] & offset_finite[j] & p.zero_ok[j]);
        p
    }
}

impl ParamLanes<1> {
    /// One block's parameters as one lane (flagged when they have a problem).
    #[inline(always)]
    pub(crate) fn of(p: &BlockParams) -> Self {
        Self {
            code_scale: [p.code_scale],
            scale: [p.scale],
            zero_point: [p.zero_point],
            lo: [p.code_offset.unwrap_or(p.range.0)],
            hi: [p.range.1],
            offset: [p.offset.unwrap_or(0.0)],
            degenerate: [p.degenerate],
            widened: [p.widened],
            negative_extreme: [p.negative_extreme],
            zero: [f64::from(p.zero_point)],
            zero_ok: [true],
            ok: [p.problem.is_none()],
            float_min: p.code_offset.is_some(),
        }
    }
}

impl<const N: usize> ParamLanes<N> {
    /// Lane `j`'s parameters, whatever its problem (named by [`ParamCalc::params`]).
    #[inline(always)]
    fn block(&self, j: usize) -> BlockParams {
        let fm = self.float_min;
        BlockParams {
            code_scale: self.code_scale[j],
            scale: self.scale[j],
            zero_point: self.zero_point[j],
            code_offset: fm.then_some(self.lo[j]),
            offset: fm.then_some(self.offset[j]),
            range: (self.lo[j], self.hi[j]),
            degenerate: self.degenerate[j],
            widened: self.widened[j],
            negative_extreme: self.negative_extreme[j],
            problem: None,
        }
    }

    /// Lane `j`'s parameters, when it has no problem.
    #[inline(always)]
    pub(crate) fn get(&self, j: usize) -> Option<BlockParams> {
        self.ok[j].then(|| self.block(j))
    }
}
