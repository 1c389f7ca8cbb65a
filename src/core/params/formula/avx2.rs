//! Eight blocks' parameters without the choices a record keeps ([`ParamCalc::lanes_with`]
//! with `CHOICES` false, as the ladder's rungs form them) in AVX2 registers: each step of
//! `lanes` on one eight-lane `f32` register, or two four-lane `f64` registers, with the
//! lanes' flags kept as comparison masks. Written as plain loops over arrays, the compiler
//! splits the same steps into pieces of two and four lanes and moves the flags through the
//! stack one lane at a time.
//!
//! It covers scales stored in f32 with a symmetric zero point or a float minimum; other
//! configurations (and machines without AVX2) take `lanes`. Every operation is the one
//! `lanes` takes, in the same order and precision, so the parameters are the same bit for
//! bit; the tests compare both.

#![expect(
    clippy::inline_always,
    reason = "inlined into pulp's AVX2 context, or every intrinsic would be a call"
)]

use std::arch::x86_64::{__m128i, __m256, __m256d, __m256i};

use pulp::x86::V3;

use super::{ParamCalc, Params8, ScaleRule};
use crate::core::config::{Arith, Degenerate};
use crate::core::simd::avx2::{EQ, GT, LT, abs, flags, max};

/// Eight lanes as two halves in `f64` (lanes 0–3, then 4–7).
#[derive(Clone, Copy)]
struct Wide {
    lo: __m256d,
    hi: __m256d,
}

/// Four bits of a half's mask, then the other half's: bit `j` for lane `j`.
#[inline(always)]
fn bits(simd: V3, m: Wide) -> u32 {
    let avx = simd.avx;
    (avx._mm256_movemask_pd(m.lo) | avx._mm256_movemask_pd(m.hi) << 4).cast_unsigned()
}

/// `|v|`, lane by lane.
#[inline(always)]
fn abs_pd(simd: V3, v: __m256d) -> __m256d {
    let avx = simd.avx;
    avx._mm256_and_pd(v, avx._mm256_castsi256_pd(avx._mm256_set1_epi64x(i64::MAX)))
}

/// `x` widened to `f64`.
#[inline(always)]
fn wide(simd: V3, x: __m256) -> Wide {
    let avx = simd.avx;
    Wide {
        lo: avx._mm256_cvtps_pd(avx._mm256_castps256_ps128(x)),
        hi: avx._mm256_cvtps_pd(avx._mm256_extractf128_ps::<1>(x)),
    }
}

/// `x / d` in `f64`.
#[inline(always)]
fn div(simd: V3, x: Wide, d: f64) -> Wide {
    let avx = simd.avx;
    let d = avx._mm256_set1_pd(d);
    Wide {
        lo: avx._mm256_div_pd(x.lo, d),
        hi: avx._mm256_div_pd(x.hi, d),
    }
}

/// `x / d` in `f32` (`d` rounded to f32), then widened.
#[inline(always)]
fn div32(simd: V3, x: __m256, d: f64) -> Wide {
    let avx = simd.avx;
    wide(simd, avx._mm256_div_ps(x, avx._mm256_set1_ps(d as f32)))
}

/// The lanes of `raw` (one half) that the degenerate-scale policy replaces, as a mask.
#[inline(always)]
fn replaced(simd: V3, policy: Degenerate, r: __m256d) -> __m256d {
    let (avx, avx2) = (simd.avx, simd.avx2);
    match policy {
        Degenerate::One => {
            let min = avx._mm256_set1_pd(f64::from(f32::MIN_POSITIVE));
            avx._mm256_cmp_pd::<LT>(abs_pd(simd, r), min)
        }
        Degenerate::Flat => {
            // The lanes whose scale is 0 in f32, widened to masks of 64-bit lanes.
            let f32s = avx._mm256_cvtpd_ps(r);
            let flat = avx._mm_cmp_ps::<EQ>(f32s, simd.sse._mm_setzero_ps());
            let flat = avx2._mm256_cvtepi32_epi64(pulp::cast::<_, __m128i>(flat));
            avx._mm256_castsi256_pd(flat)
        }
        Degenerate::Epsilon => {
            let eps = avx._mm256_set1_pd(f64::from(f32::EPSILON));
            avx._mm256_cmp_pd::<LT>(abs_pd(simd, r), eps)
        }
        Degenerate::Zero => avx._mm256_cmp_pd::<EQ>(r, avx._mm256_setzero_pd()),
    }
}

/// The scales of one half `r` with the lanes of mask `m` replaced as `policy` says: by 1,
/// or by 2^-23 with the scale's sign (`Epsilon`); `Zero` keeps the scale.
#[inline(always)]
fn replace(simd: V3, policy: Degenerate, r: __m256d, m: __m256d) -> __m256d {
    let avx = simd.avx;
    match policy {
        Degenerate::One | Degenerate::Flat => avx._mm256_blendv_pd(r, avx._mm256_set1_pd(1.0), m),
        Degenerate::Epsilon => {
            let eps = avx._mm256_set1_pd(f64::from(f32::EPSILON));
            let sign = avx._mm256_set1_pd(-0.0);
            let floored = avx._mm256_or_pd(avx._mm256_and_pd(r, sign), eps);
            avx._mm256_blendv_pd(r, floored, m)
        }
        Degenerate::Zero => r,
    }
}

/// Eight blocks' parameters in registers ([`ParamCalc::regs8`]): the fields of
/// [`Params8`] that the loop's constants are formed from, the flags as masks (bit `j` for
/// lane `j`).
#[derive(Clone, Copy)]
pub(crate) struct ParamRegs {
    /// [`Params8::code_scale`].
    pub code_scale: __m256,
    /// [`Params8::scale`].
    pub scale: __m256,
    /// [`Params8::zero_point`].
    pub zero_point: __m256i,
    /// [`Params8::lo`].
    pub lo: __m256,
    /// [`Params8::hi`].
    pub hi: __m256,
    /// [`Params8::offset`].
    pub offset: __m256,
    /// [`Params8::degenerate`].
    pub degenerate: u32,
    /// [`Params8::ok`].
    pub ok: u32,
    /// [`Params8::float_min`].
    pub float_min: bool,
}

impl ParamRegs {
    /// The parameters of `p` in registers.
    #[inline(always)]
    pub(crate) fn of(simd: V3, p: &Params8) -> Self {
        let avx2 = simd.avx2;
        let mask = |flags: &[bool; 8]| {
            let bytes = u64::from_le_bytes(flags.map(u8::from));
            let wide = avx2._mm256_cvtepu8_epi32(pulp::cast([bytes, 0]));
            let set = avx2._mm256_cmpgt_epi32(wide, simd.avx._mm256_setzero_si256());
            simd.avx
                ._mm256_movemask_ps(simd.avx._mm256_castsi256_ps(set))
                .cast_unsigned()
        };
        Self {
            code_scale: pulp::cast(p.code_scale),
            scale: pulp::cast(p.scale),
            zero_point: pulp::cast(p.zero_point),
            lo: pulp::cast(p.lo),
            hi: pulp::cast(p.hi),
            offset: pulp::cast(p.offset),
            degenerate: mask(&p.degenerate),
            ok: mask(&p.ok),
            float_min: p.float_min,
        }
    }
}

impl ParamCalc {
    /// [`ParamCalc::lanes_with`] for eight blocks, without the choices, when this
    /// configuration is one the module covers; `None` otherwise.
    #[inline(always)]
    pub(super) fn lanes8_avx2(
        &self,
        simd: V3,
        lo: &[f32; 8],
        hi: &[f32; 8],
        extreme: &[f32; 8],
    ) -> Option<Params8> {
        let p = self.regs8(simd, pulp::cast(*lo), pulp::cast(*hi), pulp::cast(*extreme))?;
        Some(Params8 {
            code_scale: pulp::cast(p.code_scale),
            scale: pulp::cast(p.scale),
            zero_point: pulp::cast(p.zero_point),
            lo: pulp::cast(p.lo),
            hi: pulp::cast(p.hi),
            offset: pulp::cast(p.offset),
            degenerate: flags(p.degenerate),
            widened: [false; 8],
            negative_extreme: [false; 8],
            zero: [0.0; 8],
            zero_ok: [true; 8],
            ok: flags(p.ok),
            float_min: p.float_min,
        })
    }

    /// [`ParamCalc::lanes8_avx2`] kept in registers: the blocks' ends `l`, `h` and extremes
    /// `extreme` in, the parameters out.
    #[inline(always)]
    pub(crate) fn regs8(
        &self,
        simd: V3,
        l: __m256,
        h: __m256,
        extreme: __m256,
    ) -> Option<ParamRegs> {
        if !self.in_registers() {
            return None;
        }
        let avx = simd.avx;
        let zero = avx._mm256_setzero_ps();
        // The ranges widened to include 0 where the configuration says so.
        let (wlo, whi) = if self.widen_all || self.widen_point {
            let widen = if self.widen_all {
                avx._mm256_cmp_ps::<EQ>(zero, zero)
            } else {
                avx._mm256_cmp_ps::<EQ>(l, h)
            };
            let zl = avx._mm256_blendv_ps(l, zero, avx._mm256_cmp_ps::<GT>(l, zero));
            let zh = avx._mm256_blendv_ps(h, zero, avx._mm256_cmp_ps::<LT>(h, zero));
            (
                avx._mm256_blendv_ps(l, zl, widen),
                avx._mm256_blendv_ps(h, zh, widen),
            )
        } else {
            (l, h)
        };
        let v: __m256 = match self.rule {
            ScaleRule::SignedExtreme { min_max: true, .. } => {
                avx._mm256_blendv_ps(l, h, avx._mm256_cmp_ps::<GT>(abs(simd, h), abs(simd, l)))
            }
            _ => extreme,
        };
        let absmax = max(simd, abs(simd, wlo), abs(simd, whi));
        let raw = self.scales8(simd, v, absmax, (wlo, whi));
        let (scale64, degenerate) = self.degenerate8(simd, raw);
        let code_scale = avx._mm256_set_m128(
            avx._mm256_cvtpd_ps(scale64.hi),
            avx._mm256_cvtpd_ps(scale64.lo),
        );
        // A degenerate scale under `Degenerate::One` or `Flat` imposes zero point 0: the
        // lanes of the mask's bits cleared in one register.
        let z = avx._mm256_set1_epi32(if self.float_min { 0 } else { self.sym_zero });
        let zero_point = if self.imposes_zero {
            let avx2 = simd.avx2;
            let bit = avx._mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
            let set = avx._mm256_set1_epi32(degenerate.cast_signed());
            let set = avx2._mm256_cmpeq_epi32(avx2._mm256_and_si256(set, bit), bit);
            avx2._mm256_andnot_si256(set, z)
        } else {
            z
        };
        // Finite scale (and float minimum): `|x| < ∞` is false for NaN.
        let inf = avx._mm256_set1_ps(f32::INFINITY);
        let mut ok = avx._mm256_cmp_ps::<LT>(abs(simd, code_scale), inf);
        let offset = if self.float_min {
            ok = avx._mm256_and_ps(ok, avx._mm256_cmp_ps::<LT>(abs(simd, wlo), inf));
            wlo
        } else {
            zero
        };
        Some(ParamRegs {
            code_scale,
            scale: code_scale,
            zero_point,
            lo: wlo,
            hi: whi,
            offset,
            degenerate,
            ok: avx._mm256_movemask_ps(ok).cast_unsigned(),
            float_min: self.float_min,
        })
    }

    /// [`ScaleRule::scales`] of the eight lanes: `v` the signed values, `absmax` the larger
    /// magnitude of the widened ends `lo`, `hi`.
    #[inline(always)]
    fn scales8(&self, simd: V3, v: __m256, absmax: __m256, (lo, hi): (__m256, __m256)) -> Wide {
        let avx = simd.avx;
        match (self.rule, self.config.conventions.arith) {
            (ScaleRule::MaxCode { denominator }, Arith::F64) => {
                div(simd, wide(simd, absmax), f64::from(denominator))
            }
            (ScaleRule::MaxCode { denominator }, Arith::F32) => {
                div32(simd, absmax, f64::from(denominator))
            }
            (ScaleRule::HalfSpan { span }, Arith::F64) => {
                let (a, two) = (wide(simd, absmax), avx._mm256_set1_pd(2.0));
                let doubled = Wide {
                    lo: avx._mm256_mul_pd(two, a.lo),
                    hi: avx._mm256_mul_pd(two, a.hi),
                };
                div(simd, doubled, f64::from(span))
            }
            (ScaleRule::HalfSpan { span }, Arith::F32) => {
                div32(simd, absmax, f64::from(span) / 2.0)
            }
            (ScaleRule::SignedExtreme { denominator: 0, .. }, _) => Wide {
                lo: avx._mm256_setzero_pd(),
                hi: avx._mm256_setzero_pd(),
            },
            (ScaleRule::SignedExtreme { denominator, .. }, Arith::F64) => {
                div(simd, wide(simd, v), f64::from(denominator))
            }
            (ScaleRule::SignedExtreme { denominator, .. }, Arith::F32) => {
                div32(simd, v, f64::from(denominator))
            }
            (ScaleRule::Asymmetric { span }, Arith::F64) => {
                let (l, h) = (wide(simd, lo), wide(simd, hi));
                let diff = Wide {
                    lo: avx._mm256_sub_pd(h.lo, l.lo),
                    hi: avx._mm256_sub_pd(h.hi, l.hi),
                };
                div(simd, diff, f64::from(span))
            }
            (ScaleRule::Asymmetric { span }, Arith::F32) => {
                div32(simd, avx._mm256_sub_ps(hi, lo), f64::from(span))
            }
        }
    }

    /// `ParamCalc::degenerate` of the eight lanes: the scales, and the lanes the policy
    /// replaced (bit `j` for lane `j`).
    #[inline(always)]
    fn degenerate8(&self, simd: V3, raw: Wide) -> (Wide, u32) {
        let policy = self.config.conventions.degenerate;
        let (lo, hi) = (
            replaced(simd, policy, raw.lo),
            replaced(simd, policy, raw.hi),
        );
        let scales = Wide {
            lo: replace(simd, policy, raw.lo, lo),
            hi: replace(simd, policy, raw.hi, hi),
        };
        (scales, bits(simd, Wide { lo, hi }))
    }
}
