//! [`ParamCalc::params8`]: the parameters of eight blocks at once, lane by lane, for the
//! rows of groups (the active configuration's and every rung of the ladder: millions of blocks
//! per matrix).
//!
//! Each step is [`ParamCalc::params`]'s, operation for operation, over eight lanes with the
//! configuration's branches taken once outside the lanes, so that the lanes vectorise. Lanes
//! whose parameters have a [`super::super::ParamProblem`] are only flagged (`ok` false): the
//! caller computes those blocks with [`ParamCalc::params`], which names the problem.

#![expect(
    clippy::inline_always,
    reason = "inlined into the vectorised row loop, once per eight blocks"
)]

use std::array::from_fn;

use super::super::{widens, with_zero};
use super::ParamCalc;
use crate::core::config::{Arith, AsymZeroPoint, Degenerate, ScaleDtype, Scheme, SymScale};
use crate::core::round::Round;

/// Blocks per call.
pub(crate) const BLOCKS: usize = 8;

/// The parameters of [`BLOCKS`] blocks, lane `j` for block `j`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Params8 {
    /// [`super::super::BlockParams::code_scale`].
    pub code_scale: [f32; BLOCKS],
    /// [`super::super::BlockParams::scale`].
    pub scale: [f32; BLOCKS],
    /// [`super::super::BlockParams::zero_point`].
    pub zero_point: [i32; BLOCKS],
    /// The widened range's low end (`code_offset` under a float minimum).
    pub lo: [f32; BLOCKS],
    /// The widened range's high end.
    pub hi: [f32; BLOCKS],
    /// [`super::super::BlockParams::offset`] under a float minimum.
    pub offset: [f32; BLOCKS],
    /// [`super::super::BlockParams::degenerate`].
    pub degenerate: [bool; BLOCKS],
    /// The parameters have no problem (otherwise the other fields are meaningless).
    pub ok: [bool; BLOCKS],
    /// The parameters carry a float offset (`code_offset` is `lo`, `offset` is `offset`).
    pub float_min: bool,
}

/// `xs` rounded to `dtype` and back, lane by lane ([`ScaleDtype::round`]), with f32's
/// identity taken outside the lanes (the rounding call is not inlined into the lanes).
#[inline(always)]
fn stored8(dtype: ScaleDtype, xs: &[f32; BLOCKS]) -> [f32; BLOCKS] {
    match dtype {
        ScaleDtype::F32 => *xs,
        ScaleDtype::F16 | ScaleDtype::Bf16 => from_fn(|j| dtype.round(xs[j])),
    }
}

impl ParamCalc {
    /// The parameters of the blocks whose ranges are `lo[j]..=hi[j]` with `extreme[j]` (see
    /// [`super::super::RealRange`]), as [`ParamCalc::params`] gives them.
    #[must_use]
    #[inline(always)]
    pub(crate) fn params8(
        &self,
        lo: &[f32; BLOCKS],
        hi: &[f32; BLOCKS],
        extreme: &[f32; BLOCKS],
    ) -> Params8 {
        let config = &self.config;
        let conv = &config.conventions;

        // `widened`, lane by lane.
        let point: [bool; BLOCKS] = from_fn(|j| lo[j] == hi[j]);
        let widen: [bool; BLOCKS] = from_fn(|j| widens(config, point[j]));
        let zeroed: [(f32, f32); BLOCKS] = from_fn(|j| with_zero(lo[j], hi[j]));
        let wlo: [f32; BLOCKS] = from_fn(|j| if widen[j] { zeroed[j].0 } else { lo[j] });
        let whi: [f32; BLOCKS] = from_fn(|j| if widen[j] { zeroed[j].1 } else { hi[j] });

        let raw = self.raw8(lo, hi, extreme, &wlo, &whi);

        // `degenerate_policy`: the scale, whether the policy replaced it, and whether it
        // imposes the zero point 0.
        let (scale64, degenerate, forced): ([f64; BLOCKS], [bool; BLOCKS], bool) =
            match conv.degenerate {
                Degenerate::One => {
                    let small: [bool; BLOCKS] =
                        from_fn(|j| raw[j].abs() < f64::from(f32::MIN_POSITIVE));
                    (
                        from_fn(|j| if small[j] { 1.0 } else { raw[j] }),
                        small,
                        true,
                    )
                }
                Degenerate::Flat => {
                    let flat: [bool; BLOCKS] = from_fn(|j| raw[j] as f32 == 0.0);
                    (from_fn(|j| if flat[j] { 1.0 } else { raw[j] }), flat, true)
                }
                Degenerate::Epsilon => {
                    let eps = f64::from(f32::EPSILON);
                    let small: [bool; BLOCKS] = from_fn(|j| raw[j].abs() < eps);
                    let s = from_fn(|j| {
                        if small[j] {
                            eps.copysign(raw[j])
                        } else {
                            raw[j]
                        }
                    });
                    (s, small, false)
                }
                Degenerate::Zero => (raw, from_fn(|j| raw[j] == 0.0), false),
            };
        let code_scale: [f32; BLOCKS] = from_fn(|j| scale64[j] as f32);

        let (zero_point, zero_ok) = self.zero8(&wlo, &code_scale, &scale64);
        // A degenerate scale under `Degenerate::One` or `Flat` imposes zero point 0 (and so has no
        // zero point problem).
        let zero_point: [i32; BLOCKS] = from_fn(|j| {
            if forced && degenerate[j] {
                0
            } else {
                zero_point[j]
            }
        });
        let zero_ok: [bool; BLOCKS] = from_fn(|j| (forced && degenerate[j]) || zero_ok[j]);

        // `assemble`.
        let dtype = config.scale_dtype;
        let scale = stored8(dtype, &code_scale);
        let offset: [f32; BLOCKS] = if self.float_min {
            stored8(dtype, &wlo)
        } else {
            [0.0; BLOCKS]
        };
        let ok: [bool; BLOCKS] = from_fn(|j| {
            code_scale[j].is_finite()
                && scale[j].is_finite()
                && (!self.float_min || offset[j].is_finite())
                && zero_ok[j]
        });
        Params8 {
            code_scale,
            scale,
            zero_point,
            lo: wlo,
            hi: whi,
            offset,
            degenerate,
            ok,
            float_min: self.float_min,
        }
    }

    /// The raw scales (before the degenerate-scale policy), from the ranges and their
    /// widened ends.
    #[inline(always)]
    fn raw8(
        &self,
        lo: &[f32; BLOCKS],
        hi: &[f32; BLOCKS],
        extreme: &[f32; BLOCKS],
        wlo: &[f32; BLOCKS],
        whi: &[f32; BLOCKS],
    ) -> [f64; BLOCKS] {
        let conv = &self.config.conventions;
        match self.config.scheme {
            Scheme::Symmetric => {
                let absmax: [f32; BLOCKS] = from_fn(|j| wlo[j].abs().max(whi[j].abs()));
                match (conv.sym_scale, conv.arith) {
                    (SymScale::MaxCode, Arith::F64) => {
                        from_fn(|j| f64::from(absmax[j]) / self.sym_denom)
                    }
                    (SymScale::HalfSpan, Arith::F64) => {
                        from_fn(|j| 2.0 * f64::from(absmax[j]) / self.span)
                    }
                    (SymScale::MaxCode | SymScale::HalfSpan, Arith::F32) => {
                        from_fn(|j| f64::from(absmax[j] / self.sym_denom32))
                    }
                    (SymScale::SignedExtreme | SymScale::SignedMinMax, arith) => {
                        let v: [f32; BLOCKS] = if conv.sym_scale == SymScale::SignedExtreme {
                            *extreme
                        } else {
                            from_fn(|j| {
                                if hi[j].abs() > lo[j].abs() {
                                    hi[j]
                                } else {
                                    lo[j]
                                }
                            })
                        };
                        if self.sym_denom == 0.0 {
                            [0.0; BLOCKS]
                        } else {
                            match arith {
                                Arith::F64 => from_fn(|j| f64::from(v[j]) / self.sym_denom),
                                Arith::F32 => from_fn(|j| f64::from(v[j] / self.sym_denom32)),
                            }
                        }
                    }
                }
            }
            Scheme::Asymmetric => match conv.arith {
                Arith::F64 => from_fn(|j| (f64::from(whi[j]) - f64::from(wlo[j])) / self.span),
                Arith::F32 => from_fn(|j| f64::from((whi[j] - wlo[j]) / self.span32)),
            },
        }
    }

    /// The integer zero points from the widened low ends and the scales, and whether each
    /// fits (before a degenerate scale imposes 0).
    #[inline(always)]
    fn zero8(
        &self,
        wlo: &[f32; BLOCKS],
        code_scale: &[f32; BLOCKS],
        scale64: &[f64; BLOCKS],
    ) -> ([i32; BLOCKS], [bool; BLOCKS]) {
        let config = &self.config;
        let conv = &config.conventions;
        let (qmin, qmax) = (self.qmin, self.qmax);
        // The zero point, as f64 before `integer_zero_point` (`None`: no zero point formula).
        let zero: Option<[f64; BLOCKS]> = if self.float_min {
            None
        } else {
            match config.scheme {
                Scheme::Symmetric => None,
                Scheme::Asymmetric => {
                    let r = config.rounding;
                    let q32 = qmin as f32;
                    let q64 = f64::from(qmin);
                    let z: [f64; BLOCKS] = match (conv.asym_zero_point, conv.arith) {
                        (AsymZeroPoint::ShiftOfRound, Arith::F32) => {
                            from_fn(|j| q64 - f64::from((wlo[j] / code_scale[j]).round_by(r)))
                        }
                        (AsymZeroPoint::ShiftOfRound, Arith::F64) => {
                            from_fn(|j| q64 - (f64::from(wlo[j]) / scale64[j]).round_by(r))
                        }
                        (_, Arith::F32) => {
                            from_fn(|j| f64::from((q32 - wlo[j] / code_scale[j]).round_by(r)))
                        }
                        (_, Arith::F64) => {
                            from_fn(|j| (q64 - f64::from(wlo[j]) / scale64[j]).round_by(r))
                        }
                    };
                    // MLAS: the zero point is the rounded minimum when the scale is 0.
                    Some(from_fn(|j| {
                        if code_scale[j] == 0.0 {
                            f64::from((wlo[j]).round_by(r))
                        } else {
                            z[j]
                        }
                    }))
                }
            }
        };
        match zero {
            None => {
                let z = if self.float_min { 0 } else { self.sym_zero };
                ([z; BLOCKS], [true; BLOCKS])
            }
            Some(z) => {
                let (lo_q, hi_q) = (f64::from(qmin), f64::from(qmax));
                let z: [f64; BLOCKS] = if conv.clamp_zero_point {
                    from_fn(|j| z[j].clamp(lo_q, hi_q))
                } else {
                    z
                };
                let fits: [bool; BLOCKS] =
                    from_fn(|j| z[j] >= f64::from(i32::MIN) && z[j] <= f64::from(i32::MAX));
                (from_fn(|j| if fits[j] { z[j] as i32 } else { 0 }), fits)
            }
        }
    }
}

impl Params8 {
    /// Lane `j`'s parameters, when it has no problem.
    #[inline(always)]
    pub(crate) fn get(&self, j: usize) -> Option<super::BlockParams> {
        let fm = self.float_min;
        self.ok[j].then(|| super::BlockParams {
            code_scale: self.code_scale[j],
            scale: self.scale[j],
            zero_point: self.zero_point[j],
            code_offset: fm.then_some(self.lo[j]),
            offset: fm.then_some(self.offset[j]),
            range: (self.lo[j], self.hi[j]),
            degenerate: self.degenerate[j],
            problem: None,
        })
    }
}
