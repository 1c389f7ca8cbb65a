//! ggml's `make_qp_quants`: the search for a super-block's scale of its sub-block scales
//! (or mins) when an importance vector is given (`quantize_row_q2_K_impl`, `_q4_K_impl`,
//! `_q5_K_impl`), weighted by each sub-block's total weight, and IQ2_XXS's first scale of a
//! sub-block (`quantize_row_iq2_xxs_impl`). One scalar call per super-block or sub-block,
//! every operation in `f32` and in ggml's order; the codes are stored in `u8`
//! as ggml stores them (a negative code wraps).

use super::fit::GROUP_MAX_EPS;
use crate::core::format::bits::nearest_int;

/// `make_qp_quants(n, nmax, x, L, quant_weights)`: levels `0..=nmax` of non-negative `x`
/// into `l` and the weighted least-squares scale, after trying 8 scales around `max / nmax`
/// and up to 5 rounds of moving single levels.
#[expect(
    clippy::similar_names,
    reason = "the reference's names (sumlx, suml2, slx, sl2) are kept"
)]
#[expect(
    clippy::inline_always,
    reason = "IQ2_XXS's encoder inlines it into pulp's vector dispatch (`IQuant::encode_row`)"
)]
#[inline(always)]
pub(in crate::core::format) fn qp(nmax: i32, x: &[f32], l: &mut [u8], w: &[f32]) -> f32 {
    let n = x.len();
    let mut max = 0.0f32;
    for &v in x {
        max = if max > v { max } else { v };
    }
    if max < GROUP_MAX_EPS {
        l[..n].fill(0);
        return 0.0;
    }
    let nmaxf = nmax as f32;
    let mut iscale = nmaxf / max;
    for i in 0..n {
        l[i] = nearest_int(iscale * x[i]) as u8;
    }
    let scale = 1.0 / iscale;
    let mut best_mse = 0.0f32;
    for i in 0..n {
        let diff = x[i] - scale * f32::from(l[i]);
        best_mse += w[i] * diff * diff;
    }
    for is in -4..=4 {
        if is == 0 {
            continue;
        }
        let iscale_is = (0.1 * is as f32 + nmaxf) / max;
        let scale_is = 1.0 / iscale_is;
        let mut mse = 0.0f32;
        for i in 0..n {
            let q = nearest_int(iscale_is * x[i]).min(nmax);
            let diff = x[i] - scale_is * q as f32;
            mse += w[i] * diff * diff;
        }
        if mse < best_mse {
            best_mse = mse;
            iscale = iscale_is;
        }
    }
    let (mut sumlx, mut suml2) = (0.0f32, 0.0f32);
    for i in 0..n {
        let q = nearest_int(iscale * x[i]).min(nmax);
        l[i] = q as u8;
        let qf = q as f32;
        sumlx += w[i] * x[i] * qf;
        suml2 += w[i] * qf * qf;
    }
    for _ in 0..5 {
        let mut changed = 0;
        for i in 0..n {
            let li = f32::from(l[i]);
            let mut slx = sumlx - w[i] * x[i] * li;
            let mut sl2 = suml2 - w[i] * li * li;
            if slx > 0.0 && sl2 > 0.0 {
                let new_l = nearest_int(x[i] * sl2 / slx).min(nmax);
                if new_l != i32::from(l[i]) {
                    let nl = new_l as f32;
                    slx += w[i] * x[i] * nl;
                    sl2 += w[i] * nl * nl;
                    if slx * slx * suml2 > sumlx * sumlx * sl2 {
                        l[i] = new_l as u8;
                        sumlx = slx;
                        suml2 = sl2;
                        changed += 1;
                    }
                }
            }
        }
        if changed == 0 {
            break;
        }
    }
    if suml2 > 0.0 { sumlx / suml2 } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_on_a_grid_are_found_exactly() {
        // Sub-block scales that are multiples of 0.5: the scale of the scales is 0.5.
        let x = [0.5f32, 1.0, 7.5, 3.0, 0.0, 2.5, 6.0, 4.0];
        let mut l = [0u8; 8];
        let d = qp(15, &x, &mut l, &[1.0; 8]);
        assert_eq!(d, 0.5);
        assert_eq!(l, [1, 2, 15, 6, 0, 5, 12, 8]);
        // Nothing above the threshold: all zero.
        let d = qp(15, &[0.0, -1.0, 1e-16, 0.0], &mut [9u8; 4], &[1.0; 4]);
        assert_eq!(d, 0.0);
    }
}
