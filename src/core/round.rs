//! The three rounding rules of [`Rounding`], stated once for `f32` and `f64`.
//!
//! Every part of the core that rounds a ratio, a zero point or a code goes through
//! [`Round::round_by`] (or [`round_const`], its form for the quantize loop, where the rule is
//! a const parameter): the block parameters, the per-value reference quantizer, the
//! specialised loop and the worked arithmetic of `explain`. A new rounding rule is one more
//! variant of [`Rounding`] and one more arm here.
//!
//! Each rule is the std method it names, which compiles to one rounding instruction
//! (`roundss`/`roundps` with SSE4.1, so everywhere the analysis runs under
//! [`pulp`]'s dispatch, and `frint*` on aarch64); baseline x86-64 without SSE4.1 calls libm
//! for them, which is slower but gives the same values. This module imports nothing of the
//! core but the [`Rounding`] enum, so both the kernel and the parameters can use it.

#![expect(
    clippy::inline_always,
    reason = "inlined into the vectorised loop and the block preparation, once per value or block"
)]

use crate::core::config::Rounding;

/// A float that can be rounded to an integer by a [`Rounding`] rule.
pub(crate) trait Round: Copy {
    /// `self` rounded to an integer value: ties to even (`round_ties_even`), ties away from
    /// zero (`round`), or half up (`(self + 0.5).floor()`, the sum rounded to the type
    /// first, as GGUF's `trunc(x + 0.5)` on a non-negative argument).
    #[must_use]
    fn round_by(self, rule: Rounding) -> Self;
}

macro_rules! round_impl {
    ($($t:ty),*) => {$(
        impl Round for $t {
            #[inline(always)]
            fn round_by(self, rule: Rounding) -> Self {
                match rule {
                    Rounding::HalfEven => self.round_ties_even(),
                    Rounding::HalfAway => self.round(),
                    Rounding::HalfUp => (self + 0.5).floor(),
                }
            }
        }
    )*};
}

round_impl!(f32, f64);

/// [`Rounding::HalfEven`] as a const parameter of the quantize loop.
pub(crate) const EVEN: u8 = 0;
/// [`Rounding::HalfAway`] as a const parameter.
pub(crate) const AWAY: u8 = 1;
/// [`Rounding::HalfUp`] as a const parameter.
pub(crate) const UP: u8 = 2;

/// The rule of a const parameter ([`EVEN`], [`AWAY`] or [`UP`]).
#[must_use]
pub(crate) const fn from_const(r: u8) -> Rounding {
    match r {
        EVEN => Rounding::HalfEven,
        AWAY => Rounding::HalfAway,
        _ => Rounding::HalfUp,
    }
}

/// `x.round_by(from_const(R))`: the rule chosen at compile time, for the loop instances.
#[inline(always)]
#[must_use]
pub(crate) fn round_const<const R: u8, T: Round>(x: T) -> T {
    x.round_by(from_const(R))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_const_parameters_name_their_rules() {
        assert_eq!(from_const(EVEN), Rounding::HalfEven);
        assert_eq!(from_const(AWAY), Rounding::HalfAway);
        assert_eq!(from_const(UP), Rounding::HalfUp);
    }

    #[test]
    fn ties_go_where_each_rule_says() {
        let ties = [-2.5f32, -1.5, -0.5, 0.5, 1.5, 2.5];
        let even = ties.map(|x| x.round_by(Rounding::HalfEven));
        let away = ties.map(|x| x.round_by(Rounding::HalfAway));
        let up = ties.map(|x| x.round_by(Rounding::HalfUp));
        assert_eq!(even, [-2.0, -2.0, -0.0, 0.0, 2.0, 2.0]);
        assert_eq!(away, [-3.0, -2.0, -1.0, 1.0, 2.0, 3.0]);
        assert_eq!(up, [-2.0, -1.0, 0.0, 1.0, 2.0, 3.0]);
        assert_eq!(2.5f64.round_by(Rounding::HalfEven), 2.0);
        assert_eq!(round_const::<UP, f64>(-0.5), 0.0);
    }
}
