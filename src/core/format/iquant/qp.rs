//! The sign handling the 7-bit sign types share, and ggml's `make_qp_quants` (IQ2_XXS's
//! first scale), the k-quants' own.

#![expect(
    clippy::inline_always,
    reason = "the encoders inline into pulp's vector dispatch (`IQuant::encode_row`), which is what vectorises them"
)]

/// ggml's `make_qp_quants`, shared with the k-quants' scale-of-scales search.
pub(super) use crate::core::format::kquant::qp::qp as make_qp_quants;

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
