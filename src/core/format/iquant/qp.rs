//! ggml's `make_qp_quants` (IQ2_XXS's first scale) and the sign handling the 7-bit sign
//! types share.

#![expect(
    clippy::inline_always,
    reason = "the encoders inline into pulp's vector dispatch (`IQuant::encode_row`), which is what vectorises them"
)]

use super::iq4::GROUP_MAX_EPS;
use crate::core::format::bits::nearest_int;

/// `make_qp_quants(n, nmax, x, L, quant_weights)`: levels `0..=nmax` of non-negative `x`
/// into `l` and the weighted least-squares scale, after trying 8 scales around `max / nmax`
/// and up to 5 rounds of moving single levels.
#[expect(
    clippy::similar_names,
    reason = "the reference's names (sumlx, suml2, slx, sl2) are kept"
)]
#[inline(always)]
pub(super) fn make_qp_quants(nmax: i32, x: &[f32], l: &mut [u8], w: &[f32]) -> f32 {
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

/// The magnitudes of a group of 8 into `xval` and its sign bits (bit `i`: value `i` is
/// negative), with an even count of negatives: when the count is odd, the value with the
/// least `weight * x * x` (the first on ties) has its sign flipped (and its magnitude
/// negated), as the 7-bit sign types store only 7 signs. Returns the 7 stored bits.
#[inline(always)]
pub(super) fn even_signs(xb: &[f32], weight: &[f32], xval: &mut [f32]) -> u8 {
    let mut nflip = 0;
    let mut s = 0u8;
    for i in 0..8 {
        if xb[i] >= 0.0 {
            xval[i] = xb[i];
        } else {
            xval[i] = -xb[i];
            nflip += 1;
            s |= 1 << i;
        }
    }
    if nflip % 2 == 1 {
        let at = |i: usize| weight[i] * xb[i] * xb[i];
        let (mut imin, mut min) = (0, at(0));
        for i in 1..8 {
            let ax = at(i);
            if ax < min {
                min = ax;
                imin = i;
            }
        }
        xval[imin] = -xval[imin];
        s ^= 1 << imin;
    }
    s & 127
}

/// The magnitudes of a group of 8 into `xval` and all 8 sign bits.
#[inline(always)]
pub(super) fn all_signs(xb: &[f32], xval: &mut [f32]) -> u8 {
    let mut s = 0u8;
    for i in 0..8 {
        if xb[i] >= 0.0 {
            xval[i] = xb[i];
        } else {
            xval[i] = -xb[i];
            s |= 1 << i;
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_odd_count_of_negatives_flips_the_least_weighted() {
        let xb = [-1.0f32, 2.0, -3.0, 0.5, -0.25, 1.0, 1.0, 1.0];
        let w = [1.0f32; 8];
        let mut xval = [0.0f32; 8];
        let s = even_signs(&xb, &w, &mut xval);
        // Three negatives: -0.25 (value 4) has the least w x², so it turns positive and its
        // magnitude is stored negated.
        assert_eq!(s, 0b0000_0101);
        assert_eq!(xval[4], -0.25);
        assert_eq!(xval[0], 1.0);
        let s = all_signs(&xb, &mut xval);
        assert_eq!(s, 0b0001_0101);
    }

    #[test]
    fn qp_quants_fit_a_scale_to_levels() {
        let x: Vec<f32> = (0..32).map(|i| (i % 5) as f32 * 0.5).collect();
        let w = vec![1.0f32; 32];
        let mut l = vec![0u8; 32];
        let s = make_qp_quants(4, &x, &mut l, &w);
        assert_eq!(s, 0.5);
        for (i, &q) in l.iter().enumerate() {
            assert_eq!(q, (i % 5) as u8);
        }
        assert_eq!(make_qp_quants(4, &[0.0; 8], &mut l, &[1.0; 8]), 0.0);
    }
}
