//! What selects the loop's instance ([`Kind`]), and the call of that instance.
//!
//! The loop is generic over three constants: the quantize expression (`E`: [`DIV`],
//! [`MUL`] or [`ADD`]), the rounding (`R`: [`EVEN`](crate::core::round::EVEN), [`AWAY`](crate::core::round::AWAY) or
//! [`UP`](crate::core::round::UP)) and whether the blocks carry a float offset (`O`). Each combination is
//! one monomorphised instance, with the branches on the configuration folded away; the
//! configuration picks its instance once per call, here. `with_kind!` binds the three
//! constants for a [`Kind`] (3 x 3 x 2 = 18 instances, as three nested matches), and
//! `dispatch!` calls a function of `portable` or `avx2` with them, inline or as a function of
//! its own ([`outlined`]).

use crate::core::config::{AsymZeroPoint, Config, QuantExpr, Rounding, ScaleDtype, Scheme};

/// `E` for [`QuantExpr::Divide`]: `x / s`.
pub(super) const DIV: u8 = 0;
/// `E` for [`QuantExpr::Reciprocal`]: `x * (1 / s)`.
pub(super) const MUL: u8 = 1;
/// `E` for [`QuantExpr::ReciprocalAddZero`]: `x * (1 / s) + z` rounded as one.
pub(super) const ADD: u8 = 2;

/// What selects the loop's instance: the same for every block of a configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Kind {
    pub(super) expr: QuantExpr,
    pub(super) rounding: Rounding,
    pub(super) offset: bool,
    /// Every block's stored scale is the scale its codes are computed with (scales stored
    /// in f32, which [`ScaleDtype::round`] leaves as they are).
    ///
    /// [`ScaleDtype::round`]: crate::core::config::ScaleDtype::round
    pub(super) stored: bool,
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
    /// ([`run_prepared`](crate::core::kernel::segment::run_prepared) without `clipped`), reading no values widened to `f64`.
    pub(crate) fn exact_errors(self) -> bool {
        self.expr == QuantExpr::Divide && !self.offset && self.stored
    }
}

/// `$call` with `$e`, `$r` and `$o` bound, as constants, to the quantize expression
/// ([`DIV`], [`MUL`], [`ADD`]), the rounding ([`EVEN`](crate::core::round::EVEN), [`AWAY`](crate::core::round::AWAY),
/// [`UP`](crate::core::round::UP)) and the float offset of the [`Kind`] `$kind`: written once, expanded into
/// one arm per expression, then per rounding, then per offset.
macro_rules! with_kind {
    (@rounding $kind:ident, $e:ident = $ev:ident, $r:ident, $o:ident, $call:expr) => {
        match $kind.rounding {
            Rounding::HalfEven => with_kind!(@offset $kind, $e = $ev, $r = EVEN, $o, $call),
            Rounding::HalfAway => with_kind!(@offset $kind, $e = $ev, $r = AWAY, $o, $call),
            Rounding::HalfUp => with_kind!(@offset $kind, $e = $ev, $r = UP, $o, $call),
        }
    };
    (@offset $kind:ident, $e:ident = $ev:ident, $r:ident = $rv:ident, $o:ident, $call:expr) => {
        if $kind.offset {
            with_kind!(@bind $e = $ev, $r = $rv, $o = true, $call)
        } else {
            with_kind!(@bind $e = $ev, $r = $rv, $o = false, $call)
        }
    };
    (@bind $e:ident = $ev:ident, $r:ident = $rv:ident, $o:ident = $ov:expr, $call:expr) => {{
        const $e: u8 = $ev;
        const $r: u8 = $rv;
        const $o: bool = $ov;
        $call
    }};
    ($kind:expr, |$e:ident, $r:ident, $o:ident| $call:expr) => {{
        use $crate::core::config::{QuantExpr, Rounding};
        use $crate::core::kernel::segment::kind::{ADD, DIV, Kind, MUL, with_kind};
        use $crate::core::round::{AWAY, EVEN, UP};
        let kind: Kind = $kind;
        match kind.expr {
            QuantExpr::Divide => with_kind!(@rounding kind, $e = DIV, $r, $o, $call),
            QuantExpr::Reciprocal => with_kind!(@rounding kind, $e = MUL, $r, $o, $call),
            QuantExpr::ReciprocalAddZero => with_kind!(@rounding kind, $e = ADD, $r, $o, $call),
        }
    }};
}

/// `portable::$f::<E, R, O, $t...>($arg...)` for the loop instance of `$kind` (see
/// `with_kind!`); `@ avx2, ...` calls `avx2::$f` instead, and `outlined ...` makes the call a
/// function of its own ([`outlined`]).
macro_rules! dispatch {
    (outlined $kind:expr, $f:ident, [$($t:ty),*], ($($arg:expr),*)) => {
        $crate::core::kernel::segment::kind::with_kind!($kind, |E, R, O| {
            $crate::core::kernel::segment::kind::outlined(
                #[inline(always)]
                || $crate::core::kernel::segment::portable::$f::<E, R, O $(, $t)*>($($arg),*),
            )
        })
    };
    (@ $m:ident, $kind:expr, $f:ident, [$($t:ty),*], ($($arg:expr),*)) => {
        $crate::core::kernel::segment::kind::with_kind!($kind, |E, R, O| {
            $crate::core::kernel::segment::$m::$f::<E, R, O $(, $t)*>($($arg),*)
        })
    };
    ($kind:expr, $f:ident, [$($t:ty),*], ($($arg:expr),*)) => {
        $crate::core::kernel::segment::kind::with_kind!($kind, |E, R, O| {
            $crate::core::kernel::segment::portable::$f::<E, R, O $(, $t)*>($($arg),*)
        })
    };
}

pub(super) use {dispatch, with_kind};

/// Calls `f`, one instance of a row loop, as a function of its own, compiled for the
/// widest vector instructions this CPU has (as [`crate::core::simd::vectorised`] does;
/// chosen at run time by `pulp`, once per call). A row loop is called once per row (and
/// rung, in the ladder), so the call costs nothing measurable. It must stay a function of its
/// own: inlined into the passes' task bodies, the 18 instances of each loop would make
/// single functions of megabytes of machine code, which the release build's optimiser takes
/// many times longer to compile.
#[inline(never)]
pub(super) fn outlined<R>(f: impl FnOnce() -> R) -> R {
    pulp::Arch::new().dispatch(f)
}
