//! ggml's Q4_0, Q4_1, Q5_0 and Q5_1 with an importance vector (`quantize_row_q4_0_impl` and
//! its siblings with `quant_weights`, what `llama-quantize --imatrix` runs): a weighted
//! search for each block's scale (and min), instead of the reference's fixed formula.
//!
//! Each value's weight is its column's importance times `sqrt(sigma2 + x²)`, `sigma2` the
//! mean of `x²` over the whole row. Q4_0 and Q5_0 search with `make_qx_quants` (`nmax` 8,
//! 16), Q4_1 and Q5_1 with `make_qkx3_quants` (`nmax` 15, 31); the codes are the search's,
//! the stored `d` (and `m`) its result as f16. Eight blocks run side by side as the lanes of
//! the k-quants' searches ([`crate::core::format::kquant`]), every operation in `f32` and in
//! ggml's order. Q8_0 does not read the importance.

use super::{BLOCK, Legacy, LegacyBlock};
use crate::core::format::bits::f32_to_f16;
use crate::core::format::kquant::fit::{qkx2, qkx3, qx_rmse1};

/// Blocks searched side by side.
const LANES: usize = 8;

/// Encodes a row of whole blocks with `qw` (one weight per value): codes (the stored
/// unsigned codes) into `codes`, one block per 32 values pushed onto `blocks`. `l` must
/// not be Q8_0.
pub(in crate::core::format) fn encode_row(
    l: Legacy,
    x: &[f32],
    qw: &[f32],
    codes: &mut [u8],
    blocks: &mut Vec<LegacyBlock>,
) {
    let mut sum_x2 = 0.0f32;
    for &v in x {
        sum_x2 += v * v;
    }
    let sigma2 = sum_x2 / x.len() as f32;
    let group = LANES * BLOCK;
    for ((xg, wg), cg) in x
        .chunks(group)
        .zip(qw.chunks(group))
        .zip(codes.chunks_mut(group))
    {
        // Lanes past the row's end hold zeros and are dropped.
        let mut t = [[0.0f32; LANES]; BLOCK];
        let mut w = [[0.0f32; LANES]; BLOCK];
        for (k, (xb, wb)) in xg.chunks(BLOCK).zip(wg.chunks(BLOCK)).enumerate() {
            for i in 0..BLOCK {
                t[i][k] = xb[i];
                w[i][k] = wb[i] * (sigma2 + xb[i] * xb[i]).sqrt();
            }
        }
        let mut lq = [[0u8; LANES]; BLOCK];
        let (mut scale, mut the_min) = ([0.0f32; LANES], [0.0f32; LANES]);
        let with_min = match l {
            Legacy::Q4_0 => {
                qx_rmse1(8, &t, &w, &mut lq, &mut scale);
                false
            }
            Legacy::Q5_0 => {
                qx_rmse1(16, &t, &w, &mut lq, &mut scale);
                false
            }
            Legacy::Q4_1 => {
                qkx2(&qkx3(15), &t, &w, &mut lq, &mut scale, &mut the_min);
                true
            }
            Legacy::Q5_1 | Legacy::Q8_0 => {
                qkx2(&qkx3(31), &t, &w, &mut lq, &mut scale, &mut the_min);
                true
            }
        };
        for (k, cb) in cg.chunks_mut(BLOCK).enumerate() {
            for (i, c) in cb.iter_mut().enumerate() {
                *c = lq[i][k];
            }
            blocks.push(LegacyBlock {
                d: f32_to_f16(scale[k]),
                m: with_min.then(|| f32_to_f16(-the_min[k])),
            });
        }
    }
}
