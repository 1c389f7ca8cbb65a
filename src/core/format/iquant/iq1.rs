//! IQ1_S and IQ1_M: groups of 8 values as points of a 2048-point grid of -1, 0, 1, shifted
//! by plus or minus 1/8 (per 32 values in IQ1_S, per 8 in IQ1_M), under 3-bit scales per 32
//! (IQ1_S) or 16 (IQ1_M) values and an f16. ggml's `quantize_row_iq1_s_impl` and
//! `quantize_row_iq1_m_impl`, transcribed operation for operation in f32; the exhaustive
//! search over the two boundaries that split the sorted values into -1, 0 and 1 is ggml's,
//! with IQ1_M's sums carried over from one boundary to the next where they are the same
//! additions in the same order.
//!
//! Bytes: IQ1_S `d`, `qs[32]` (index low bytes), `qh[8]` (u16 per 32 values: 3 high bits per
//! group of 8, the 3-bit scale at bit 12, the shift's sign at bit 15). IQ1_M `qs[32]`,
//! `qh[16]` (per 16 values: each group's 3 high bits and its shift sign at bit 3 of its
//! nibble), `scales[8]` (four u16: 3-bit scales, with the f16 `d` in their top nibbles).

#![expect(
    clippy::inline_always,
    reason = "the encoders inline into pulp's vector dispatch (`IQuant::encode_row`), which is what vectorises them"
)]
#![expect(
    clippy::needless_range_loop,
    reason = "the loops transcribe ggml's index arithmetic one for one"
)]

use super::lattice::{self, Lattice, Which, best_neighbour_iq1};
use super::tables::IQ1S_GRID;
use crate::core::format::FormatError;
use crate::core::format::bits::{f16_to_f32, f32_to_f16, nearest_int};

/// Bytes of an IQ1_S block.
pub(super) const S_BYTES: usize = 50;
/// Bytes of an IQ1_M block.
pub(super) const M_BYTES: usize = 56;

/// ggml's `IQ1S_DELTA` (and `IQ1M_DELTA`).
const DELTA: f32 = 0.125;
/// The three levels shifted up: `-1 + δ, δ, 1 + δ`.
const X_P: [f32; 3] = [-1.0 + DELTA, DELTA, 1.0 + DELTA];
/// The three levels shifted down: `-1 - δ, -δ, 1 - δ`.
const X_M: [f32; 3] = [-1.0 - DELTA, -DELTA, 1.0 - DELTA];

/// The indices of `xb` sorted by value, equal values in input order (ggml's `qsort` with a
/// value-only comparison, which glibc runs as a merge sort: stable).
#[inline(always)]
fn sorted<const N: usize>(xb: &[f32]) -> [u8; N] {
    let mut idx: [u8; N] = std::array::from_fn(|i| i as u8);
    for i in 1..N {
        let cur = idx[i];
        let mut j = i;
        while j > 0 && xb[usize::from(idx[j - 1])] > xb[usize::from(cur)] {
            idx[j] = idx[j - 1];
            j -= 1;
        }
        idx[j] = cur;
    }
    idx
}

/// The levels of the split at `i1 <= i2` of the sorted order: below `i1` level 0, up to
/// `i2` level 1, above level 2.
#[inline(always)]
fn split<const N: usize>(idx: &[u8; N], i1: usize, i2: usize, l: &mut [i8; N]) {
    for (j, &i) in idx.iter().enumerate() {
        l[usize::from(i)] = if j < i1 {
            0
        } else if j < i2 {
            1
        } else {
            2
        };
    }
}

/// `max(|x|)` as ggml's loop takes it.
#[inline(always)]
fn amax(xb: &[f32]) -> f32 {
    xb.iter()
        .skip(1)
        .fold(xb[0].abs(), |m, &v| if m > v.abs() { m } else { v.abs() })
}

/// `2 * Σ x² / 256`, summed in order.
#[inline(always)]
fn sigma2(x: &[f32]) -> f32 {
    let mut sumx2 = 0.0f32;
    for &v in x {
        sumx2 += v * v;
    }
    2.0 * sumx2 / 256.0
}

/// The grid index of group `k` of `l` (its neighbour's where it is off the grid; `l` then
/// takes the neighbour's levels), `None` where ggml asserts.
#[inline(always)]
fn group_index(
    lat: &Lattice<8>,
    xb: &[f32],
    weight: &[f32],
    scale: f32,
    xx: &[f32; 3],
    l: &mut [i8],
    on_grid: &mut bool,
) -> Option<u16> {
    let u: usize = (0..8).map(|j| (l[j] as usize) << (2 * j)).sum();
    match lat.lookup(u) {
        Ok(g) => Some(g as u16),
        Err(list) => {
            *on_grid = false;
            best_neighbour_iq1(lat, list, xb, weight, scale, xx, l).map(|g| g as u16)
        }
    }
}

/// IQ1_S's search over every split `i1 <= i2` of the sorted values and both shifts, from
/// the prefix sums of `w x` and `w`: the best `(scale, i1, i2, shift)`.
#[expect(clippy::similar_names, reason = "the reference's names are kept")]
#[inline(always)]
fn search_s(sumx: &[f32; 33], sumw: &[f32; 33], max: f32) -> Option<(f32, usize, usize, i8)> {
    let mut best_score = -f32::MAX;
    let mut scale = max;
    let mut best = None;
    for i1 in 0..=32 {
        for i2 in i1..=32 {
            for (xq, shift) in [(&X_P, 1i8), (&X_M, -1)] {
                let sumqx = (sumx[i1] - sumx[0]) * xq[0]
                    + (sumx[i2] - sumx[i1]) * xq[1]
                    + (sumx[32] - sumx[i2]) * xq[2];
                let sumq2 = (sumw[i1] - sumw[0]) * xq[0] * xq[0]
                    + (sumw[i2] - sumw[i1]) * xq[1] * xq[1]
                    + (sumw[32] - sumw[i2]) * xq[2] * xq[2];
                if sumq2 > 0.0 && sumqx * sumqx > best_score * sumq2 {
                    scale = sumqx / sumq2;
                    best_score = scale * sumqx;
                    best = Some((i1, i2, shift));
                }
            }
        }
    }
    best.map(|(i1, i2, shift)| (scale, i1, i2, shift))
}

/// Σ w q x and Σ w q² over the groups' grid points, group `k`'s levels standing for
/// `xx(k)`: the refit after a group moved to a neighbour.
#[expect(clippy::similar_names, reason = "the reference's names are kept")]
#[inline(always)]
fn refit<'a>(
    lat: &Lattice<8>,
    index: &[u16],
    xb: &[f32],
    weight: &[f32],
    xx: impl Fn(usize) -> &'a [f32; 3],
) -> (f32, f32) {
    let (mut sumqx, mut sumq2) = (0.0f32, 0.0f32);
    for (k, &g) in index.iter().enumerate() {
        let xx = xx(k);
        let pg = lat.points[usize::from(g)];
        for j in 0..8 {
            let w = weight[8 * k + j];
            let q = xx[((pg[j] - 1) / 2) as usize];
            sumqx += w * q * xb[8 * k + j];
            sumq2 += w * q * q;
        }
    }
    (sumqx, sumq2)
}

/// `quantize_iq1_s` on one row (`qw` is required).
#[expect(
    clippy::similar_names,
    reason = "the reference's names (sumqx, sumq2, besti1, besti2) are kept"
)]
#[inline(always)]
pub(super) fn encode_s(x: &[f32], qw: &[f32], out: &mut [u8]) -> Result<(), FormatError> {
    let lat = lattice::q2(Which::Iq1);
    let (xs, _) = x.as_chunks::<256>();
    for (ibl, (xbl, y)) in xs.iter().zip(out.chunks_exact_mut(S_BYTES)).enumerate() {
        y.fill(0);
        let mut scales = [0.0f32; 8];
        let mut shifts = [1i8; 8];
        let mut qh = [0u16; 8];
        let mut max_scale = 0.0f32;
        let sigma2 = sigma2(xbl);
        for ib in 0..8 {
            let xb = &xbl[32 * ib..32 * ib + 32];
            let qwb = &qw[256 * ibl + 32 * ib..256 * ibl + 32 * ib + 32];
            let mut weight = [0.0f32; 32];
            for i in 0..32 {
                weight[i] = qwb[i] * (sigma2 + xb[i] * xb[i]).sqrt();
            }
            let max = amax(xb);
            if max < 1e-12 {
                continue;
            }
            let idx = sorted::<32>(xb);
            let (mut sumx, mut sumw) = ([0.0f32; 33], [0.0f32; 33]);
            for j in 0..32 {
                let i = usize::from(idx[j]);
                sumx[j + 1] = sumx[j] + weight[i] * xb[i];
                sumw[j + 1] = sumw[j] + weight[i];
            }
            let Some((mut scale, i1, i2, mut best_shift)) = search_s(&sumx, &sumw, max) else {
                continue;
            };
            let mut l = [0i8; 32];
            split(&idx, i1, i2, &mut l);
            if scale < 0.0 {
                for v in &mut l {
                    *v = 2 - *v;
                }
                scale = -scale;
                best_shift = -best_shift;
            }
            let xx = if best_shift == 1 { &X_P } else { &X_M };
            let mut all_on_grid = true;
            let mut index = [0u16; 4];
            for k in 0..4 {
                let r = 8 * k..8 * k + 8;
                index[k] = group_index(
                    lat,
                    &xb[r.clone()],
                    &weight[r.clone()],
                    scale,
                    xx,
                    &mut l[r],
                    &mut all_on_grid,
                )
                .ok_or(FormatError::OffGrid("IQ1_S"))?;
            }
            if !all_on_grid {
                let (sumqx, sumq2) = refit(lat, &index, xb, &weight, |_| xx);
                if sumqx > 0.0 && sumq2 > 0.0 {
                    scale = sumqx / sumq2;
                }
            }
            let mut h = 0u16;
            for k in 0..4 {
                y[2 + 4 * ib + k] = index[k] as u8;
                h |= (index[k] >> 8) << (3 * k);
            }
            qh[ib] = h;
            scales[ib] = scale;
            shifts[ib] = best_shift;
            max_scale = if max_scale > scale { max_scale } else { scale };
        }
        if max_scale != 0.0 {
            let d = max_scale / 15.0;
            y[..2].copy_from_slice(&f32_to_f16(d * 1.125).to_le_bytes());
            let id = 1.0 / d;
            for ib in 0..8 {
                let mut l = nearest_int(0.5 * (id * scales[ib] - 1.0)).clamp(0, 7) as u16;
                if shifts[ib] == -1 {
                    l |= 8;
                }
                qh[ib] |= l << 12;
            }
        }
        for (o, h) in y[34..].chunks_exact_mut(2).zip(qh) {
            o.copy_from_slice(&h.to_le_bytes());
        }
    }
    Ok(())
}

/// The values of a 16-value sub-block, sorted, with their weights, for IQ1_M's split search.
struct Split16<'a> {
    xb: &'a [f32],
    weight: &'a [f32; 16],
    idx: [u8; 16],
}

impl Split16<'_> {
    /// Adds sorted value `j` at level `lv` to the four candidates' sums: 0 (+, +),
    /// 1 (+, -), 2 (-, +), 3 (-, -), the first sign for the first 8 values.
    #[inline(always)]
    fn add(&self, j: usize, lv: usize, sumqx: &mut [f32; 4], sumq2: &mut [f32; 4]) {
        let i = usize::from(self.idx[j]);
        let (w, xi) = (self.weight[i], self.xb[i]);
        let (p, m) = (X_P[lv], X_M[lv]);
        let (qx_p, qx_m, q2_p, q2_m) = (w * p * xi, w * m * xi, w * p * p, w * m * m);
        if i < 8 {
            sumqx[0] += qx_p;
            sumqx[1] += qx_p;
            sumqx[2] += qx_m;
            sumqx[3] += qx_m;
            sumq2[0] += q2_p;
            sumq2[1] += q2_p;
            sumq2[2] += q2_m;
            sumq2[3] += q2_m;
        } else {
            sumqx[0] += qx_p;
            sumqx[2] += qx_p;
            sumqx[1] += qx_m;
            sumqx[3] += qx_m;
            sumq2[0] += q2_p;
            sumq2[2] += q2_p;
            sumq2[1] += q2_m;
            sumq2[3] += q2_m;
        }
    }

    /// ggml's search over every split `i1 <= i2` and the four shift pairs: the best
    /// `(scale, i1, i2, k)`. The sums for `(i1, i2)` are ggml's additions over the sorted
    /// values in order; those before `i2` are carried from `(i1, i2 - 1)`.
    #[expect(clippy::similar_names, reason = "the reference's names are kept")]
    #[inline(always)]
    fn search(&self, max: f32) -> Option<(f32, usize, usize, usize)> {
        let mut best_score = -f32::MAX;
        let mut scale = max;
        let mut best = None;
        // The sums over the values below `i1` (level 0), built as `i1` grows.
        let (mut head_x, mut head_q) = ([0.0f32; 4], [0.0f32; 4]);
        for i1 in 0..=16 {
            if i1 > 0 {
                self.add(i1 - 1, 0, &mut head_x, &mut head_q);
            }
            // Then the values from `i1` up to `i2` (level 1), built as `i2` grows.
            let (mut p1x, mut p1q) = (head_x, head_q);
            for i2 in i1..=16 {
                if i2 > i1 {
                    self.add(i2 - 1, 1, &mut p1x, &mut p1q);
                }
                let (mut sumqx, mut sumq2) = (p1x, p1q);
                for j in i2..16 {
                    self.add(j, 2, &mut sumqx, &mut sumq2);
                }
                for k in 0..4 {
                    if sumq2[k] > 0.0 && sumqx[k] * sumqx[k] > best_score * sumq2[k] {
                        scale = sumqx[k] / sumq2[k];
                        best_score = scale * sumqx[k];
                        best = Some((i1, i2, k));
                    }
                }
            }
        }
        best.map(|(i1, i2, k)| (scale, i1, i2, k))
    }
}

/// The levels of group `k` (0 or 1) of an IQ1_M sub-block with shift pair `shift`.
#[inline(always)]
fn shifted(shift: usize, k: usize) -> &'static [f32; 3] {
    let plus = if k == 0 {
        shift < 2
    } else {
        shift.is_multiple_of(2)
    };
    if plus { &X_P } else { &X_M }
}

/// An IQ1_M super-block's values and weights.
struct BlockM<'a> {
    xbl: &'a [f32; 256],
    /// The importance vector's 256 weights of this block.
    qw: Option<&'a [f32]>,
    sigma2: f32,
}

impl BlockM<'_> {
    /// Sub-block `ib`'s weights: `qw * sqrt(sigma2 + x²)`, or `x²` without importance.
    #[inline(always)]
    fn weigh(&self, ib: usize, weight: &mut [f32; 16]) {
        let xb = &self.xbl[16 * ib..16 * ib + 16];
        for i in 0..16 {
            weight[i] = match self.qw {
                Some(qw) => qw[16 * ib + i] * (self.sigma2 + xb[i] * xb[i]).sqrt(),
                None => xb[i] * xb[i],
            };
        }
    }

    /// The sub-block scales' codes, the shift bits and the f16 `d` refitted over the whole
    /// block (times ggml's 1.1125), into the block's bytes.
    #[expect(clippy::similar_names, reason = "the reference's names are kept")]
    #[inline(always)]
    fn finish(
        &self,
        lat: &Lattice<8>,
        y: &mut [u8],
        scales: &[f32; 16],
        shifts: &[usize; 16],
        max_scale: f32,
    ) {
        const MASKS: [u8; 4] = [0x00, 0x80, 0x08, 0x88];
        let mut sc = [0u16; 4];
        let mut d = max_scale / 15.0;
        let id = 1.0 / d;
        let (mut sumqx, mut sumq2) = (0.0f32, 0.0f32);
        for ib in 0..16 {
            let l = nearest_int(0.5 * (id * scales[ib] - 1.0)).clamp(0, 7);
            sc[ib / 4] |= (l as u16) << (3 * (ib % 4));
            y[32 + ib] |= MASKS[shifts[ib]];
            let xb = &self.xbl[16 * ib..16 * ib + 16];
            let mut weight = [0.0f32; 16];
            self.weigh(ib, &mut weight);
            for k in 0..2 {
                let xx = shifted(shifts[ib], k);
                let g =
                    usize::from(y[2 * ib + k]) + ((usize::from(y[32 + ib]) << (8 - 4 * k)) & 0x700);
                let pg = lat.points[g];
                for j in 0..8 {
                    let w = weight[8 * k + j];
                    let q = xx[((pg[j] - 1) / 2) as usize] * (2 * l + 1) as f32;
                    sumqx += w * q * xb[8 * k + j];
                    sumq2 += w * q * q;
                }
            }
        }
        if sumq2 > 0.0 {
            d = sumqx / sumq2;
        }
        let s = f32_to_f16(d * 1.1125);
        sc[0] |= (s & 0x000f) << 12;
        sc[1] |= (s & 0x00f0) << 8;
        sc[2] |= (s & 0x0f00) << 4;
        sc[3] |= s & 0xf000;
        for (o, v) in y[48..].chunks_exact_mut(2).zip(sc) {
            o.copy_from_slice(&v.to_le_bytes());
        }
    }
}

/// `quantize_iq1_m` on one row.
#[inline(always)]
pub(super) fn encode_m(x: &[f32], qw: Option<&[f32]>, out: &mut [u8]) -> Result<(), FormatError> {
    let lat = lattice::q2(Which::Iq1);
    let (xs, _) = x.as_chunks::<256>();
    for (ibl, (xbl, y)) in xs.iter().zip(out.chunks_exact_mut(M_BYTES)).enumerate() {
        y.fill(0);
        let mut scales = [0.0f32; 16];
        let mut shifts = [0usize; 16];
        let mut max_scale = 0.0f32;
        let blk = BlockM {
            xbl,
            qw: qw.map(|w| &w[256 * ibl..256 * ibl + 256]),
            sigma2: sigma2(xbl),
        };
        for ib in 0..16 {
            let xb = &xbl[16 * ib..16 * ib + 16];
            let mut weight = [0.0f32; 16];
            blk.weigh(ib, &mut weight);
            let max = amax(xb);
            if max < 1e-7 {
                continue;
            }
            let sp = Split16 {
                xb,
                weight: &weight,
                idx: sorted::<16>(xb),
            };
            let Some((mut scale, i1, i2, mut best_k)) = sp.search(max) else {
                continue;
            };
            let mut l = [0i8; 16];
            split(&sp.idx, i1, i2, &mut l);
            if scale < 0.0 {
                for v in &mut l {
                    *v = 2 - *v;
                }
                scale = -scale;
                best_k = 3 - best_k;
            }
            let mut all_on_grid = true;
            let mut index = [0u16; 2];
            for k in 0..2 {
                let r = 8 * k..8 * k + 8;
                index[k] = group_index(
                    lat,
                    &xb[r.clone()],
                    &weight[r.clone()],
                    scale,
                    shifted(best_k, k),
                    &mut l[r],
                    &mut all_on_grid,
                )
                .ok_or(FormatError::OffGrid("IQ1_M"))?;
            }
            if !all_on_grid {
                let (sumqx, sumq2) = refit(lat, &index, xb, &weight, |k| shifted(best_k, k));
                if sumqx > 0.0 && sumq2 > 0.0 {
                    scale = sumqx / sumq2;
                }
            }
            y[2 * ib] = index[0] as u8;
            y[2 * ib + 1] = index[1] as u8;
            y[32 + ib] = ((index[0] >> 8) | ((index[1] >> 8) << 4)) as u8;
            scales[ib] = scale;
            shifts[ib] = best_k;
            max_scale = if max_scale > scale { max_scale } else { scale };
        }
        if max_scale != 0.0 {
            blk.finish(lat, y, &scales, &shifts, max_scale);
        }
    }
    Ok(())
}

/// The code of a grid value (-1, 0, 1 as int8) with shift `+δ` (`up`) or `-δ`: its index
/// in `-1 - δ, -1 + δ, -δ, δ, 1 - δ, 1 + δ`.
fn code(g: u8, up: bool) -> u8 {
    2 * ((g as i8 + 1).clamp(0, 2) as u8) + u8::from(up)
}

/// One row's codes and steps (per 32 values for IQ1_S, 16 for IQ1_M; `m` true for IQ1_M).
pub(super) fn unpack(bytes: &[u8], m: bool, codes: &mut [u8], steps: &mut Vec<f32>) {
    let bb = if m { M_BYTES } else { S_BYTES };
    for (b, cb) in bytes.chunks_exact(bb).zip(codes.chunks_exact_mut(256)) {
        if m {
            let sc: [u16; 4] =
                std::array::from_fn(|i| u16::from_le_bytes([b[48 + 2 * i], b[49 + 2 * i]]));
            let dbits = (sc[0] >> 12)
                | ((sc[1] >> 8) & 0x00f0)
                | ((sc[2] >> 4) & 0x0f00)
                | (sc[3] & 0xf000);
            let d = f16_to_f32(dbits);
            for ib in 0..16 {
                let s = (sc[ib / 4] >> (3 * (ib % 4))) & 7;
                steps.push(d * f32::from(2 * s + 1));
                let qh = b[32 + ib];
                for k in 0..2 {
                    let nib = qh >> (4 * k);
                    let g = usize::from(b[2 * ib + k]) | (usize::from(nib & 7) << 8);
                    let up = nib & 0x08 == 0;
                    for (j, &v) in IQ1S_GRID[g].to_le_bytes().iter().enumerate() {
                        cb[16 * ib + 8 * k + j] = code(v, up);
                    }
                }
            }
        } else {
            let d = f16_to_f32(u16::from_le_bytes([b[0], b[1]]));
            for ib in 0..8 {
                let qh = u16::from_le_bytes([b[34 + 2 * ib], b[35 + 2 * ib]]);
                steps.push(d * f32::from(2 * ((qh >> 12) & 7) + 1));
                let up = qh & 0x8000 == 0;
                for k in 0..4 {
                    let g =
                        usize::from(b[2 + 4 * ib + k]) | (usize::from((qh >> (3 * k)) & 7) << 8);
                    for (j, &v) in IQ1S_GRID[g].to_le_bytes().iter().enumerate() {
                        cb[32 * ib + 8 * k + j] = code(v, up);
                    }
                }
            }
        }
    }
}
