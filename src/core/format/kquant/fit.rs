//! ggml's scale searches for k-quants (`make_qkx2_quants`, `make_qx_quants` with
//! `rmse_type = 1`, `make_q3_quants` with `do_rmse`), run on `N` sub-blocks at once.
//!
//! Each lane `k` carries one sub-block through exactly the scalar operations of
//! `ggml-quants.c`, in the same order and in `f32`; a branch of the reference becomes a
//! per-lane select. Values arrive transposed (`x[i][k]` is value `i` of sub-block `k`), so
//! every step is one vertical operation over the lanes, which the compiler turns into
//! vector instructions without changing any result.

#![expect(
    clippy::needless_bitwise_bool,
    reason = "every lane evaluates every test, so the lane loops stay branch-free"
)]
#![expect(
    clippy::inline_always,
    reason = "the row and block loops inline into pulp's vector dispatch, which is what vectorises them"
)]

use crate::core::format::bits::nearest_int;

/// ggml's `GROUP_MAX_EPS`: sub-blocks whose largest magnitude is below it are all zero.
pub(in crate::core::format) const GROUP_MAX_EPS: f32 = 1e-15;

/// The weight of value `i` of lane `k` in a search (ggml's `weights`, `quant_weights`, or
/// the default it computes from the value).
pub(in crate::core::format) trait LaneWeights<const N: usize, const M: usize> {
    /// The weight of value `i` of lane `k`, whose value is `v`.
    fn at(&self, i: usize, k: usize, v: f32) -> f32;
}

/// `x * x`: the weight `make_qx_quants` (`rmse_type = 1`) gives a value without
/// `quant_weights`.
pub(in crate::core::format) struct Squares;

impl<const N: usize, const M: usize> LaneWeights<N, M> for Squares {
    #[inline(always)]
    fn at(&self, _i: usize, _k: usize, v: f32) -> f32 {
        v * v
    }
}

impl<const N: usize, const M: usize> LaneWeights<N, M> for [[f32; N]; M] {
    #[inline(always)]
    fn at(&self, i: usize, k: usize, _v: f32) -> f32 {
        self[i][k]
    }
}

/// The parameters of one `make_qkx2_quants` call (`make_qkx3_quants` with weights is the
/// same search: its `max <= min` test equals `max == min` for finite values).
pub(in crate::core::format) struct Qkx2 {
    pub nmax: i32,
    pub rmin: f32,
    pub rdelta: f32,
    pub nstep: i32,
    pub use_mad: bool,
}

/// The search of `make_qkx3_quants(n, nmax, x, weights, L, &min, Laux, -0.9, 0.05, 36,
/// false)`.
pub(in crate::core::format) const fn qkx3(nmax: i32) -> Qkx2 {
    Qkx2 {
        nmax,
        rmin: -0.9,
        rdelta: 0.05,
        nstep: 36,
        use_mad: false,
    }
}

/// `make_qkx2_quants` on `N` sub-blocks of `M` values with weights `w`: the codes into `l`,
/// the scales into `scale` and the (negated, non-negative) minimums into `the_min`.
#[inline(always)]
pub(in crate::core::format) fn qkx2<const N: usize, const M: usize>(
    p: &Qkx2,
    x: &[[f32; N]; M],
    w: &[[f32; N]; M],
    l: &mut [[u8; N]; M],
    scale: &mut [f32; N],
    the_min: &mut [f32; N],
) {
    let nmax = p.nmax as f32;
    let mut min = x[0];
    let mut max = x[0];
    let mut sum_w = w[0];
    let mut sum_x = [0.0f32; N];
    for k in 0..N {
        sum_x[k] = sum_w[k] * x[0][k];
    }
    for i in 1..M {
        for k in 0..N {
            let v = x[i][k];
            min[k] = if v < min[k] { v } else { min[k] };
            max[k] = if v > max[k] { v } else { max[k] };
            sum_w[k] += w[i][k];
            sum_x[k] += w[i][k] * v;
        }
    }
    let mut iscale = [0.0f32; N];
    for k in 0..N {
        min[k] = if min[k] > 0.0 { 0.0 } else { min[k] };
        iscale[k] = nmax / (max[k] - min[k]);
        scale[k] = 1.0 / iscale[k];
    }
    let min0 = min;
    let err = |diff: f32| if p.use_mad { diff.abs() } else { diff * diff };
    // The codes of a lane are `nearest_int(iscale * (x - min))` clamped, for the `iscale`
    // and `min` of the step that won (or of the first estimate): rather than copying each
    // winning step's codes, the pair is kept and the codes formed once at the end, by the
    // same operations, so they are the same codes.
    let (mut code_iscale, mut code_min) = (iscale, min);
    let mut best = [0.0f32; N];
    for i in 0..M {
        for k in 0..N {
            let q = nearest_int(iscale[k] * (x[i][k] - min[k])).clamp(0, p.nmax) as f32;
            let diff = scale[k] * q + min[k] - x[i][k];
            best[k] += w[i][k] * err(diff);
        }
    }
    let mut aux = [[0.0f32; N]; M];
    for is in 0..=p.nstep {
        let numer = p.rmin + p.rdelta * is as f32 + nmax;
        // `min` moves when a step wins, and ggml's next step divides by the new range.
        for k in 0..N {
            iscale[k] = numer / (max[k] - min[k]);
        }
        let (sum_l, sum_l2, sum_xl) = step_sums(p, &iscale, &min, x, w, &mut aux);
        let (mut this_scale, mut this_min, mut ok) = ([0.0f32; N], [0.0f32; N], [false; N]);
        for k in 0..N {
            let d = sum_w[k] * sum_l2[k] - sum_l[k] * sum_l[k];
            ok[k] = d > 0.0;
            let s = (sum_w[k] * sum_xl[k] - sum_x[k] * sum_l[k]) / d;
            let m = (sum_l2[k] * sum_x[k] - sum_l[k] * sum_xl[k]) / d;
            let clamp = m > 0.0;
            this_min[k] = if clamp { 0.0 } else { m };
            this_scale[k] = if clamp { sum_xl[k] / sum_l2[k] } else { s };
        }
        let mut cur = [0.0f32; N];
        for i in 0..M {
            for k in 0..N {
                let diff = this_scale[k] * aux[i][k] + this_min[k] - x[i][k];
                cur[k] += w[i][k] * err(diff);
            }
        }
        for k in 0..N {
            let take = ok[k] & (cur[k] < best[k]);
            code_iscale[k] = if take { iscale[k] } else { code_iscale[k] };
            code_min[k] = if take { min[k] } else { code_min[k] };
            best[k] = if take { cur[k] } else { best[k] };
            scale[k] = if take { this_scale[k] } else { scale[k] };
            min[k] = if take { this_min[k] } else { min[k] };
        }
    }
    for k in 0..N {
        // A sub-block whose maximum equals its (zero-clamped) minimum returns before the
        // search with every code 0.
        let dead = max[k] == min0[k];
        the_min[k] = if dead { -min0[k] } else { -min[k] };
        scale[k] = if dead { 0.0 } else { scale[k] };
    }
    for (row, xr) in l.iter_mut().zip(x) {
        for k in 0..N {
            let dead = max[k] == min0[k];
            let q = nearest_int(code_iscale[k] * (xr[k] - code_min[k])).clamp(0, p.nmax);
            row[k] = if dead { 0 } else { q as u8 };
        }
    }
}

/// One step of `make_qkx2_quants`' search: each lane's codes for `iscale` and `min` into
/// `aux`, and their sums `Σ w·l`, `Σ w·l·l` and `Σ w·l·x`.
#[inline(always)]
fn step_sums<const N: usize, const M: usize>(
    p: &Qkx2,
    iscale: &[f32; N],
    min: &[f32; N],
    x: &[[f32; N]; M],
    w: &[[f32; N]; M],
    aux: &mut [[f32; N]; M],
) -> ([f32; N], [f32; N], [f32; N]) {
    let (mut sum_l, mut sum_l2, mut sum_xl) = ([0.0f32; N], [0.0f32; N], [0.0f32; N]);
    if N <= 8 {
        // One sum per loop: at eight lanes the compiler vectorises each across the lanes
        // (three sums in one loop stay scalar, two and a half times slower); every lane
        // still adds ggml's terms (`w * l`, `w * l * l`, `w * l * x`) in ggml's order.
        for i in 0..M {
            for k in 0..N {
                aux[i][k] = nearest_int(iscale[k] * (x[i][k] - min[k])).clamp(0, p.nmax) as f32;
            }
        }
        for i in 0..M {
            for k in 0..N {
                sum_l[k] += w[i][k] * aux[i][k];
            }
        }
        for i in 0..M {
            for k in 0..N {
                sum_l2[k] += w[i][k] * aux[i][k] * aux[i][k];
            }
        }
        for i in 0..M {
            for k in 0..N {
                sum_xl[k] += w[i][k] * aux[i][k] * x[i][k];
            }
        }
    } else {
        // At sixteen lanes the one loop is vectorised, and measured faster.
        for i in 0..M {
            for k in 0..N {
                let qf = nearest_int(iscale[k] * (x[i][k] - min[k])).clamp(0, p.nmax) as f32;
                aux[i][k] = qf;
                let wq = w[i][k] * qf;
                sum_l[k] += wq;
                sum_l2[k] += wq * qf;
                sum_xl[k] += wq * x[i][k];
            }
        }
    }
    (sum_l, sum_l2, sum_xl)
}

/// The value of largest magnitude in each lane (the first one on ties) and that magnitude.
#[inline(always)]
fn signed_absmax<const N: usize, const M: usize>(x: &[[f32; N]; M]) -> ([f32; N], [f32; N]) {
    let (mut max, mut amax) = ([0.0f32; N], [0.0f32; N]);
    for row in x {
        for k in 0..N {
            let ax = row[k].abs();
            let take = ax > amax[k];
            amax[k] = if take { ax } else { amax[k] };
            max[k] = if take { row[k] } else { max[k] };
        }
    }
    (max, amax)
}

/// `make_qx_quants(n, nmax, x, L, rmse_type = 1, qw)` (Q6_K's sub-block search; with
/// `quant_weights`, also Q3_K's, Q4_0's and Q5_0's), the weights [`Squares`] for `qw =
/// NULL`: codes `l + nmax` into `l_out`, the returned scales into `scale`.
#[inline(always)]
pub(in crate::core::format) fn qx_rmse1<const N: usize, const M: usize, W: LaneWeights<N, M>>(
    nmax: i32,
    x: &[[f32; N]; M],
    weights: &W,
    l_out: &mut [[u8; N]; M],
    scale: &mut [f32; N],
) {
    let (max, amax) = signed_absmax(x);
    let nmaxf = nmax as f32;
    // One pass of the search: the sums for `iscale`; the codes are formed once at the end
    // from the `iscale` that won, by the same operations.
    let pass = |iscale: &[f32; N]| {
        // Two sums in one loop are vectorised here (unlike `qkx2`'s three); splitting them
        // measured slower.
        let (mut sumlx, mut suml2) = ([0.0f32; N], [0.0f32; N]);
        for (i, row) in x.iter().enumerate() {
            for k in 0..N {
                let v = row[k];
                let q = nearest_int(iscale[k] * v).clamp(-nmax, nmax - 1);
                let w = weights.at(i, k, v);
                let qf = q as f32;
                sumlx[k] += w * v * qf;
                suml2[k] += w * qf * qf;
            }
        }
        (sumlx, suml2)
    };
    let mut iscale = [0.0f32; N];
    for k in 0..N {
        iscale[k] = -nmaxf / max[k];
    }
    let mut code_iscale = iscale;
    let (sumlx, suml2) = pass(&iscale);
    let mut best = [0.0f32; N];
    for k in 0..N {
        scale[k] = if suml2[k] == 0.0 {
            0.0
        } else {
            sumlx[k] / suml2[k]
        };
        best[k] = scale[k] * sumlx[k];
    }
    for is in -9i32..=9 {
        if is == 0 {
            continue;
        }
        let numer = nmaxf + 0.1 * is as f32;
        for k in 0..N {
            iscale[k] = -numer / max[k];
        }
        let (sumlx, suml2) = pass(&iscale);
        for k in 0..N {
            let take = (suml2[k] > 0.0) & (sumlx[k] * sumlx[k] > best[k] * suml2[k]);
            let s = sumlx[k] / suml2[k];
            scale[k] = if take { s } else { scale[k] };
            best[k] = if take { s * sumlx[k] } else { best[k] };
            code_iscale[k] = if take { iscale[k] } else { code_iscale[k] };
        }
    }
    for k in 0..N {
        let dead = amax[k] < GROUP_MAX_EPS;
        scale[k] = if dead { 0.0 } else { scale[k] };
    }
    for (row, xr) in l_out.iter_mut().zip(x) {
        for k in 0..N {
            let dead = amax[k] < GROUP_MAX_EPS;
            let q = nearest_int(code_iscale[k] * xr[k]).clamp(-nmax, nmax - 1) + nmax;
            row[k] = if dead { 0 } else { q as u8 };
        }
    }
}

/// `make_q3_quants(n, nmax, x, L, do_rmse = true)` (Q3_K's sub-block search): codes
/// `l + nmax` into `l_out`, the returned scales into `scale`.
#[inline(always)]
pub(in crate::core::format) fn q3_rmse<const N: usize, const M: usize>(
    nmax: i32,
    x: &[[f32; N]; M],
    l_out: &mut [[u8; N]; M],
    scale: &mut [f32; N],
) {
    let (max, amax) = signed_absmax(x);
    let mut l = [[0i32; N]; M];
    let (mut sumlx, mut suml2) = ([0.0f32; N], [0.0f32; N]);
    let mut iscale = [0.0f32; N];
    for k in 0..N {
        iscale[k] = -(nmax as f32) / max[k];
    }
    for i in 0..M {
        for k in 0..N {
            let v = x[i][k];
            let q = nearest_int(iscale[k] * v).clamp(-nmax, nmax - 1);
            l[i][k] = q;
            let w = v * v;
            sumlx[k] += w * v * q as f32;
            suml2[k] += w * q as f32 * q as f32;
        }
    }
    // A lane whose pass changes nothing would change nothing in later passes either, so
    // running a pass on every lane until none changes gives ggml's early exit per sub-block.
    for _ in 0..5 {
        let mut changed = false;
        for i in 0..M {
            for k in 0..N {
                let v = x[i][k];
                let w = v * v;
                let li = l[i][k] as f32;
                let slx0 = sumlx[k] - w * v * li;
                let sl20 = suml2[k] - w * li * li;
                let new_l = nearest_int(v * sl20 / slx0).clamp(-nmax, nmax - 1);
                let nf = new_l as f32;
                let slx = slx0 + w * v * nf;
                let sl2 = sl20 + w * nf * nf;
                // `&` rather than `&&`: every lane evaluates every test, which keeps the
                // loop branch-free (the result is the same).
                let take = (slx0 > 0.0)
                    & (new_l != l[i][k])
                    & (sl2 > 0.0)
                    & (slx * slx * suml2[k] > sumlx[k] * sumlx[k] * sl2);
                l[i][k] = if take { new_l } else { l[i][k] };
                sumlx[k] = if take { slx } else { sumlx[k] };
                suml2[k] = if take { sl2 } else { suml2[k] };
                changed |= take;
            }
        }
        if !changed {
            break;
        }
    }
    for k in 0..N {
        let dead = amax[k] < GROUP_MAX_EPS;
        scale[k] = if dead {
            0.0
        } else if suml2[k] > 0.0 {
            sumlx[k] / suml2[k]
        } else {
            0.0
        };
        for i in 0..M {
            l_out[i][k] = if dead { 0 } else { (l[i][k] + nmax) as u8 };
        }
    }
}
