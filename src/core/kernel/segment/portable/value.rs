//! One value through the loop's arithmetic (the quotient, its rounding, the clamp, the
//! reconstruction), for one block's [`Consts`] or, lane by lane, for eight blocks'
//! ([`ConstLanes`]); and a block's constants spread across the lanes ([`Spread`]).

#![expect(
    clippy::inline_always,
    reason = "inlined into the loop's monomorphised body (see the parent module)"
)]

use crate::core::kernel::segment::kind::{ADD, DIV};
use crate::core::kernel::segment::{Code, ConstLanes, Consts, LANES, Lanes};
use crate::core::round::{UP, round_const};

/// `x` over the block's scale, before rounding, as the reference's `raw` forms it.
#[inline(always)]
pub(super) fn quotient<const E: u8, const O: bool>(k: &Consts, x: f32) -> f32 {
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
pub(super) fn rounded<const E: u8, const R: u8>(k: &Consts, x: f32) -> f32 {
    debug_assert!(E != ADD);
    round_const::<R, f32>(quotient::<E, false>(k, x))
}

/// The unclamped code of `x`, as the reference's `raw` forms it.
#[inline(always)]
pub(super) fn unclamped<const E: u8, const R: u8, const O: bool>(k: &Consts, x: f32) -> f32 {
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
pub(super) fn clamp(k: &Consts, u: f32) -> f32 {
    let c = if u < k.qmin { k.qmin } else { u };
    if c > k.qmax { k.qmax } else { c }
}

/// The reconstruction of the clamped code `c`.
#[inline(always)]
pub(super) fn dequantize<const O: bool>(k: &Consts, c: f32) -> f32 {
    if O {
        k.scale * c + k.offset
    } else {
        (c - k.zero_f) * k.scale
    }
}

/// One value into `lane`; returns 1 if its code was clamped.
#[inline(always)]
pub(super) fn one<const E: u8, const R: u8, const O: bool, T: Code>(
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
pub(super) struct Spread {
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
    pub(super) fn of(k: &Consts) -> Self {
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
    pub(super) fn lane(&self, j: usize) -> Consts {
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

impl ConstLanes<LANES> {
    /// The unclamped code of `x[j]` under lane `j`'s constants: [`unclamped`], lane by lane.
    #[inline(always)]
    pub(super) fn unclamped<const E: u8, const R: u8, const O: bool>(
        &self,
        x: &[f32; LANES],
    ) -> [f32; LANES] {
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
    pub(super) fn x_hat<const E: u8, const R: u8, const O: bool>(
        &self,
        x: &[f32; LANES],
    ) -> [f32; LANES] {
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
