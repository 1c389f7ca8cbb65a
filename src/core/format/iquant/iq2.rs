//! IQ2_XXS, IQ2_XS and IQ2_S: groups of 8 values as points of an 8-value grid of
//! magnitudes 8, 25, 43 (256, 512 or 1024 points) with their signs, under 4-bit scales per
//! 32 (IQ2_XXS) or 16 values and an f16 per 256. ggml's `quantize_row_iq2_xxs_impl`,
//! `quantize_row_iq2_xs_impl` and `quantize_iq2_s`, transcribed operation for operation in
//! f32.
//!
//! Bytes: IQ2_XXS `d`, then per 32 values two u32: four 8-bit grid indices, and four 7-bit
//! sign groups with the 4-bit scale in bits 28..31. IQ2_XS `d`, a u16 per 8 values (9-bit
//! index, 7 sign bits), `scales[8]` (two 4-bit scales a byte). IQ2_S `d`, `qs[32]` (index low
//! bytes), `signs[32]`, `qh[8]` (2 high index bits per group), `scales[8]`.

#![expect(
    clippy::inline_always,
    reason = "the encoders inline into pulp's vector dispatch (`IQuant::encode_row`), which is what vectorises them"
)]
#![expect(
    clippy::needless_range_loop,
    reason = "the loops transcribe ggml's index arithmetic one for one"
)]

use super::iq4::GROUP_MAX_EPS;
use super::lattice::{self, Lattice, Neighbours, Which, best_neighbour};
use super::qp::{all_signs, even_signs, make_qp_quants};
use super::tables::{IQ2S_GRID, IQ2XS_GRID, IQ2XXS_GRID, KSIGNS_IQ2XS};
use crate::core::format::FormatError;
use crate::core::format::bits::{f16_to_f32, f32_to_f16, nearest_int};

/// Bytes of an IQ2_XXS block.
pub(super) const XXS_BYTES: usize = 66;
/// Bytes of an IQ2_XS block.
pub(super) const XS_BYTES: usize = 74;
/// Bytes of an IQ2_S block.
pub(super) const S_BYTES: usize = 82;

/// ggml's `GROUP_MAX_EPS_IQ2_S`.
const EPS_S: f32 = 1e-8;

/// A sub-block of `N` values prepared for the search.
struct Sub<const N: usize> {
    xval: [f32; N],
    weight: [f32; N],
    waux: [f32; N],
}

impl<const N: usize> Sub<N> {
    #[inline(always)]
    const fn new() -> Self {
        Self {
            xval: [0.0; N],
            weight: [0.0; N],
            waux: [0.0; N],
        }
    }

    /// `qw * sqrt(sigma2 + x²)` with an importance vector, else `none(x)`; `waux = sqrt(w)`.
    #[inline(always)]
    fn weigh(&mut self, xb: &[f32], qw: Option<&[f32]>, sigma2: f32, none: impl Fn(f32) -> f32) {
        for i in 0..N {
            self.weight[i] = match qw {
                Some(qw) => qw[i] * (sigma2 + xb[i] * xb[i]).sqrt(),
                None => none(xb[i]),
            };
            self.waux[i] = self.weight[i].sqrt();
        }
    }

    /// Σ w x q and Σ w q² with `q = 2 l + 1`.
    #[expect(clippy::similar_names, reason = "the reference's names are kept")]
    #[inline(always)]
    fn sums(&self, l: &[i8; N]) -> (f32, f32) {
        let (mut sumqx, mut sumq2) = (0.0f32, 0.0f32);
        for i in 0..N {
            let w = self.weight[i];
            let q = f32::from(2 * l[i] + 1);
            sumqx += w * self.xval[i] * q;
            sumq2 += w * q * q;
        }
        (sumqx, sumq2)
    }

    /// The largest magnitude (`xval[0]` first, then each larger one).
    #[inline(always)]
    fn max(&self) -> f32 {
        self.xval
            .iter()
            .skip(1)
            .fold(self.xval[0], |m, &v| if m > v { m } else { v })
    }

    /// Group `k`'s levels at inverse scale `id` into `l`, and the grid's answer for them.
    #[inline(always)]
    fn round_group<'a>(
        &self,
        lat: &'a Lattice<8>,
        k: usize,
        id: f32,
        l: &mut [i8],
    ) -> Result<usize, Neighbours<'a>> {
        let mut u = 0usize;
        for i in 0..8 {
            let q = nearest_int(0.5 * (id * self.xval[8 * k + i] - 1.0)).clamp(0, 2);
            l[i] = q as i8;
            u |= (q as usize) << (2 * i);
        }
        lat.lookup(u)
    }

    /// [`best_neighbour`] for group `k`.
    #[inline(always)]
    fn neighbour(
        &self,
        lat: &Lattice<8>,
        list: Neighbours<'_>,
        k: usize,
        scale: f32,
        l: &mut [i8],
    ) -> Result<usize, ()> {
        let r = 8 * k..8 * k + 8;
        best_neighbour(lat, list, &self.xval[r.clone()], &self.waux[r], scale, l).ok_or(())
    }
}

/// The grid indices of a sub-block's groups (ggml aborts where one is off the grid).
#[inline(always)]
fn indices<const N: usize>(lat: &Lattice<8>, l: &[i8; N], out: &mut [u16]) -> Result<(), ()> {
    for (k, o) in out.iter_mut().enumerate().take(N / 8) {
        let u: usize = (0..8).map(|i| (l[8 * k + i] as usize) << (2 * i)).sum();
        *o = lat.lookup(u).map_err(|_| ())? as u16;
    }
    Ok(())
}

/// IQ2_XS's and IQ2_S's search over a 16-value sub-block whose largest magnitude is `max`.
#[inline(always)]
fn search_16(lat: &Lattice<8>, s: &Sub<16>, max: f32, l: &mut [i8; 16]) -> Result<f32, ()> {
    let mut best = 0.0f32;
    let mut scale = max / 5.0;
    let mut on_grid = [true; 2];
    let mut laux = [0i8; 16];
    let mut on_aux = [true; 2];
    for is in -9..=9 {
        let id = (5.0 + is as f32 * 0.1) / max;
        let this_scale = 1.0 / id;
        for k in 0..2 {
            on_aux[k] = true;
            if let Err(list) = s.round_group(lat, k, id, &mut laux[8 * k..8 * k + 8]) {
                on_aux[k] = false;
                s.neighbour(lat, list, k, this_scale, &mut laux[8 * k..8 * k + 8])?;
            }
        }
        let (sumqx, sumq2) = s.sums(&laux);
        if sumq2 > 0.0 && sumqx * sumqx > best * sumq2 {
            scale = sumqx / sumq2;
            best = scale * sumqx;
            *l = laux;
            on_grid = on_aux;
        }
    }
    if on_grid.iter().any(|&g| !g) && scale > 0.0 {
        let id = 1.0 / scale;
        for k in 0..2 {
            if on_grid[k] {
                continue;
            }
            if let Err(list) = s.round_group(lat, k, id, &mut l[8 * k..8 * k + 8]) {
                s.neighbour(lat, list, k, scale, &mut l[8 * k..8 * k + 8])?;
            }
        }
        let (sumqx, sumq2) = s.sums(l);
        if sumq2 > 0.0 {
            scale = sumqx / sumq2;
        }
    }
    Ok(scale)
}

/// IQ2_XXS's search over a 32-value sub-block: `None` where `make_qp_quants` finds no scale.
#[inline(always)]
fn search_xxs(lat: &Lattice<8>, s: &Sub<32>, l: &mut [i8; 32]) -> Result<Option<f32>, ()> {
    let mut lq = [0u8; 32];
    let mut scale = make_qp_quants(4, &s.xval, &mut lq, &s.weight);
    let eff_max = scale * 3.0;
    if eff_max <= 0.0 {
        return Ok(None);
    }
    for (d, &q) in l.iter_mut().zip(&lq) {
        *d = q as i8;
    }
    let mut best = 0.0f32;
    let mut laux = [0i8; 32];
    for is in -6..=6 {
        let id = (5.0 + is as f32 * 0.1) / eff_max;
        let this_scale = 1.0 / id;
        for k in 0..4 {
            if let Err(list) = s.round_group(lat, k, id, &mut laux[8 * k..8 * k + 8]) {
                s.neighbour(lat, list, k, this_scale, &mut laux[8 * k..8 * k + 8])?;
            }
        }
        let (sumqx, sumq2) = s.sums(&laux);
        if sumq2 > 0.0 && sumqx * sumqx > best * sumq2 {
            scale = sumqx / sumq2;
            best = scale * sumqx;
            *l = laux;
        }
    }
    if scale > 0.0 {
        let id = 1.0 / scale;
        for k in 0..4 {
            let mut u = [0i8; 8];
            let g = match s.round_group(lat, k, id, &mut u) {
                Ok(g) => g,
                Err(list) => s.neighbour(lat, list, k, scale, &mut l[8 * k..8 * k + 8])?,
            };
            l[8 * k..8 * k + 8].copy_from_slice(&lat.levels(g));
        }
        let (sumqx, sumq2) = s.sums(l);
        if sumq2 > 0.0 {
            scale = sumqx / sumq2;
        }
    }
    Ok(Some(scale))
}

/// `Σ x² / 256`, summed in order, times `k`.
#[inline(always)]
fn sigma2(x: &[f32], k: f32) -> f32 {
    let mut sumx2 = 0.0f32;
    for &v in x {
        sumx2 += v * v;
    }
    k * sumx2 / 256.0
}

/// `nearest_int(0.5 * (id * scale - 1))` in 0..15: a sub-block's stored 4-bit scale.
#[inline(always)]
fn scale_code(id: f32, scale: f32) -> u8 {
    nearest_int(0.5 * (id * scale - 1.0)).clamp(0, 15) as u8
}

/// `quantize_iq2_xxs` on one row (`qw` is required).
#[inline(always)]
pub(super) fn encode_xxs(x: &[f32], qw: &[f32], out: &mut [u8]) -> Result<(), FormatError> {
    let off = |()| FormatError::OffGrid("IQ2_XXS");
    let lat = lattice::q2(Which::Iq2Xxs);
    let (xs, _) = x.as_chunks::<256>();
    for (ibl, (xbl, y)) in xs.iter().zip(out.chunks_exact_mut(XXS_BYTES)).enumerate() {
        y.fill(0);
        let mut q2 = [0u32; 16];
        let mut scales = [0.0f32; 8];
        let mut max_scale = 0.0f32;
        let sigma2 = sigma2(xbl, 1.0);
        let mut s = Sub::<32>::new();
        for ib in 0..8 {
            let xb = &xbl[32 * ib..32 * ib + 32];
            s.weigh(xb, Some(&qw[256 * ibl + 32 * ib..]), sigma2, |v| v * v);
            let mut block_signs = [0u8; 4];
            for k in 0..4 {
                let r = 8 * k..8 * k + 8;
                block_signs[k] = even_signs(&xb[r.clone()], &s.weight[r.clone()], &mut s.xval[r]);
            }
            if s.max() < GROUP_MAX_EPS {
                continue;
            }
            let mut l = [0i8; 32];
            let Some(mut scale) = search_xxs(lat, &s, &mut l).map_err(off)? else {
                continue;
            };
            if scale < 0.0 {
                scale = -scale;
                for b in &mut block_signs {
                    *b = !*b & 127;
                }
            }
            let mut idx = [0u16; 4];
            indices(lat, &l, &mut idx).map_err(off)?;
            for k in 0..4 {
                q2[2 * ib] |= u32::from(idx[k]) << (8 * k);
                q2[2 * ib + 1] |= u32::from(block_signs[k]) << (7 * k);
            }
            scales[ib] = scale;
            max_scale = if max_scale > scale { max_scale } else { scale };
        }
        if max_scale == 0.0 {
            continue;
        }
        let d = max_scale / 31.0;
        y[..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
        let id = 1.0 / d;
        for ib in 0..8 {
            q2[2 * ib + 1] |= u32::from(scale_code(id, scales[ib])) << 28;
        }
        for (o, q) in y[2..].chunks_exact_mut(4).zip(q2) {
            o.copy_from_slice(&q.to_le_bytes());
        }
    }
    Ok(())
}

/// `quantize_iq2_xs` (`s` false, `qw` required) or `quantize_iq2_s` on one row.
#[inline(always)]
pub(super) fn encode_xs_s(
    x: &[f32],
    qw: Option<&[f32]>,
    s_type: bool,
    out: &mut [u8],
) -> Result<(), FormatError> {
    let name = if s_type { "IQ2_S" } else { "IQ2_XS" };
    let off = |()| FormatError::OffGrid(name);
    let lat = lattice::q2(if s_type { Which::Iq2S } else { Which::Iq2Xs });
    let bytes = if s_type { S_BYTES } else { XS_BYTES };
    let (xs, _) = x.as_chunks::<256>();
    for (ibl, (xbl, y)) in xs.iter().zip(out.chunks_exact_mut(bytes)).enumerate() {
        y.fill(0);
        let mut q2 = [0u16; 32];
        let mut scales = [0.0f32; 16];
        let mut max_scale = 0.0f32;
        let sigma2 = sigma2(xbl, if s_type { 2.0 } else { 1.0 });
        let mut s = Sub::<16>::new();
        for ib in 0..16 {
            let xb = &xbl[16 * ib..16 * ib + 16];
            let qwb = qw.map(|w| &w[256 * ibl + 16 * ib..]);
            s.weigh(xb, qwb, sigma2, |v| {
                if s_type { 0.25 * sigma2 + v * v } else { v * v }
            });
            let mut block_signs = [0u8; 2];
            for k in 0..2 {
                let r = 8 * k..8 * k + 8;
                block_signs[k] = if s_type {
                    all_signs(&xb[r.clone()], &mut s.xval[r])
                } else {
                    even_signs(&xb[r.clone()], &s.weight[r.clone()], &mut s.xval[r])
                };
            }
            let max = s.max();
            if max < if s_type { EPS_S } else { GROUP_MAX_EPS } {
                continue;
            }
            let mut l = [0i8; 16];
            let mut scale = search_16(lat, &s, max, &mut l).map_err(off)?;
            if scale < 0.0 {
                scale = -scale;
                for b in &mut block_signs {
                    *b = if s_type { !*b } else { !*b & 127 };
                }
            }
            let mut idx = [0u16; 2];
            indices(lat, &l, &mut idx).map_err(off)?;
            for k in 0..2 {
                let i8 = 2 * ib + k;
                if s_type {
                    y[2 + i8] = idx[k] as u8;
                    y[66 + i8 / 4] |= ((idx[k] >> 8) as u8) << (2 * (i8 % 4));
                    y[34 + i8] = block_signs[k];
                } else {
                    q2[i8] = idx[k] | (u16::from(block_signs[k]) << 9);
                }
            }
            scales[ib] = scale;
            max_scale = if max_scale > scale { max_scale } else { scale };
        }
        if max_scale == 0.0 {
            if s_type {
                continue;
            }
            y[2..66].fill(0);
            continue;
        }
        let d = max_scale / 31.0;
        let dh = if s_type { d * 0.9875 } else { d };
        y[..2].copy_from_slice(&f32_to_f16(dh).to_le_bytes());
        let id = 1.0 / d;
        let sc = if s_type { 74 } else { 66 };
        for ib in 0..16 {
            let l = scale_code(id, scales[ib]);
            if ib % 2 == 0 {
                y[sc + ib / 2] = l;
            } else {
                y[sc + ib / 2] |= l << 4;
            }
        }
        if !s_type {
            for (o, q) in y[2..66].chunks_exact_mut(2).zip(q2) {
                o.copy_from_slice(&q.to_le_bytes());
            }
        }
    }
    Ok(())
}

/// Which of the three, for unpacking.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    /// IQ2_XXS.
    Xxs,
    /// IQ2_XS.
    Xs,
    /// IQ2_S.
    S,
}

/// One row's codes (magnitude level 0..2 of 8, 25, 43: `2 - level` negative, `3 + level`
/// positive) and steps (per 32 values for IQ2_XXS, per 16 otherwise).
pub(super) fn unpack(bytes: &[u8], kind: Kind, codes: &mut [u8], steps: &mut Vec<f32>) {
    let bb = match kind {
        Kind::Xxs => XXS_BYTES,
        Kind::Xs => XS_BYTES,
        Kind::S => S_BYTES,
    };
    let step = |d: f32, ls: u32| d * (0.5 + ls as f32) * 0.25;
    for (b, cb) in bytes.chunks_exact(bb).zip(codes.chunks_exact_mut(256)) {
        let d = f16_to_f32(u16::from_le_bytes([b[0], b[1]]));
        for g in 0..32 {
            let (point, signs) = match kind {
                Kind::Xxs => {
                    let ib = g / 4;
                    let at = 2 + 8 * ib;
                    let aux = u32::from_le_bytes([b[at + 4], b[at + 5], b[at + 6], b[at + 7]]);
                    if g % 4 == 0 {
                        steps.push(step(d, aux >> 28));
                    }
                    let signs = KSIGNS_IQ2XS[((aux >> (7 * (g % 4))) & 127) as usize];
                    (IQ2XXS_GRID[usize::from(b[at + g % 4])], signs)
                }
                Kind::Xs => {
                    let q = u16::from_le_bytes([b[2 + 2 * g], b[3 + 2 * g]]);
                    if g % 2 == 0 {
                        steps.push(step(
                            d,
                            u32::from((b[66 + g / 4] >> (4 * ((g / 2) % 2))) & 15),
                        ));
                    }
                    (
                        IQ2XS_GRID[usize::from(q & 511)],
                        KSIGNS_IQ2XS[usize::from(q >> 9)],
                    )
                }
                Kind::S => {
                    if g % 2 == 0 {
                        steps.push(step(
                            d,
                            u32::from((b[74 + g / 4] >> (4 * ((g / 2) % 2))) & 15),
                        ));
                    }
                    let hi = usize::from((b[66 + g / 4] >> (2 * (g % 4))) & 3);
                    (IQ2S_GRID[usize::from(b[2 + g]) | (hi << 8)], b[34 + g])
                }
            };
            for (j, &m) in point.to_le_bytes().iter().enumerate() {
                let level = match m {
                    0x08 => 0,
                    0x19 => 1,
                    _ => 2,
                };
                cb[8 * g + j] = if signs & (1 << j) != 0 {
                    2 - level
                } else {
                    3 + level
                };
            }
        }
    }
}
