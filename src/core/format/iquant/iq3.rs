//! IQ3_XXS and IQ3_S: 32-value sub-blocks made of eight points of a 4-value grid (256 or 512
//! points of odd levels) and 8-value sign groups, under a 4-bit scale and an f16 per 256.
//! ggml's `quantize_row_iq3_xxs_impl(256, ...)` and `quantize_row_iq3_s_impl(32, ...)`,
//! transcribed operation for operation in f32.
//!
//! Bytes: IQ3_XXS `d`, 64 grid indices, then per sub-block a u32 of four 7-bit sign groups
//! (the eighth sign makes the count of negatives even) and the 4-bit scale in bits 28..31.
//! IQ3_S `d`, `qs[64]` (low 8 bits of the indices), `qh[8]` (their ninth bits), `signs[32]`
//! (a byte per 8 values), `scales[4]` (two 4-bit scales a byte).

#![expect(
    clippy::inline_always,
    reason = "the encoders inline into pulp's vector dispatch (`IQuant::encode_row`), which is what vectorises them"
)]
#![expect(
    clippy::needless_range_loop,
    reason = "the loops transcribe ggml's index arithmetic one for one"
)]

use super::lattice::{self, Lattice, best_neighbour};
use super::qp::{all_signs, even_signs};
use super::tables::{IQ3S_GRID, IQ3XXS_GRID, KSIGNS_IQ2XS};
use crate::core::format::FormatError;
use crate::core::format::bits::{f16_to_f32, f32_to_f16, nearest_int};

/// Bytes of an IQ3_XXS block.
pub(super) const XXS_BYTES: usize = 98;
/// Bytes of an IQ3_S block.
pub(super) const S_BYTES: usize = 110;

/// ggml's `GROUP_MAX_EPS_IQ3_XXS`.
const EPS_XXS: f32 = 1e-8;

/// A 32-value sub-block prepared for the search.
struct Sub {
    xval: [f32; 32],
    weight: [f32; 32],
    waux: [f32; 32],
}

/// How the two types differ in their search.
struct Rules {
    /// The scale tries run from `-tries` to `tries` (steps of 0.2).
    tries: i32,
    /// What `is_on_grid` starts as before the tries.
    on_grid_start: bool,
    /// The refinement skips groups that were already on the grid.
    skip_on_grid: bool,
    /// The lattice.
    lat: &'static Lattice<4>,
}

/// Level combination of four levels.
#[inline(always)]
fn index_of(l: &[i8]) -> usize {
    l.iter()
        .take(4)
        .enumerate()
        .map(|(i, &v)| (v as usize) << (3 * i))
        .sum()
}

/// `0.5 * (id * x - 1)` to the nearest level 0..7, as the search rounds.
#[inline(always)]
fn level(id: f32, x: f32) -> i8 {
    nearest_int(0.5 * (id * x - 1.0)).clamp(0, 7) as i8
}

/// Σ w x q and Σ w q² over the sub-block, `q = 2 l + 1`.
#[expect(
    clippy::similar_names,
    reason = "the reference's names (sumqx, sumq2) are kept"
)]
#[inline(always)]
fn sums(s: &Sub, l: &[i8; 32]) -> (f32, f32) {
    let (mut sumqx, mut sumq2) = (0.0f32, 0.0f32);
    for i in 0..32 {
        let w = s.weight[i];
        let q = f32::from(2 * l[i] + 1);
        sumqx += w * s.xval[i] * q;
        sumq2 += w * q * q;
    }
    (sumqx, sumq2)
}

/// The most scale tries of a search (IQ3_XXS's 31), each a lane of [`Tries`].
const TRIES: usize = 32;

/// Every try's levels, value by value (`lv[i][t]`: value `i` under try `t`), so that the
/// tries' sums run side by side.
struct Tries {
    lv: [[i8; TRIES]; 32],
}

impl Tries {
    /// [`sums`] of every try, each lane summed in the same order as [`sums`] sums one.
    #[expect(clippy::similar_names, reason = "the reference's names are kept")]
    #[inline(always)]
    fn sums(&self, s: &Sub) -> ([f32; TRIES], [f32; TRIES]) {
        let (mut sumqx, mut sumq2) = ([0.0f32; TRIES], [0.0f32; TRIES]);
        for i in 0..32 {
            let (w, x) = (s.weight[i], s.xval[i]);
            let wx = w * x;
            for t in 0..TRIES {
                let q = f32::from(2 * self.lv[i][t] + 1);
                sumqx[t] += wx * q;
                sumq2[t] += w * q * q;
            }
        }
        (sumqx, sumq2)
    }

    /// Try `t`'s levels.
    #[inline(always)]
    fn levels(&self, t: usize) -> [i8; 32] {
        std::array::from_fn(|i| self.lv[i][t])
    }
}

/// The scale search and grid fitting of one sub-block whose largest magnitude is `max`: the
/// scale and each value's level (each group of 4 on the grid).
///
/// The tries do not depend on one another until the best is kept: every try's levels are
/// found first (the rounding of all tries side by side, then each group's grid point or
/// nearest neighbour), then their sums side by side, then the best is kept in the tries'
/// order with the reference's comparison, which gives the reference's choice.
#[inline(always)]
fn search(s: &Sub, max: f32, r: &Rules, l: &mut [i8; 32]) -> Result<f32, ()> {
    let lat = r.lat;
    let n = (2 * r.tries + 1) as usize;
    let mut ids = [0.0f32; TRIES];
    for (t, id) in ids.iter_mut().enumerate().take(n) {
        *id = (15.0 + (t as i32 - r.tries) as f32 * 0.2) / max;
    }
    let mut tries = Tries {
        lv: [[0i8; TRIES]; 32],
    };
    for i in 0..32 {
        let x = s.xval[i];
        for t in 0..TRIES {
            tries.lv[i][t] = level(ids[t], x);
        }
    }
    let mut on_aux = [[true; 8]; TRIES];
    for t in 0..n {
        let this_scale = 1.0 / ids[t];
        for k in 0..8 {
            let mut g = [0i8; 4];
            for i in 0..4 {
                g[i] = tries.lv[4 * k + i][t];
            }
            if let Err(list) = lat.lookup(index_of(&g)) {
                on_aux[t][k] = false;
                let r = 4 * k..4 * k + 4;
                best_neighbour(
                    lat,
                    list,
                    &s.xval[r.clone()],
                    &s.waux[r],
                    this_scale,
                    &mut g,
                )
                .ok_or(())?;
                for i in 0..4 {
                    tries.lv[4 * k + i][t] = g[i];
                }
            }
        }
    }
    let (sumqx, sumq2) = tries.sums(s);
    let mut best = 0.0f32;
    let mut scale = max / 15.0;
    let mut on_grid = [r.on_grid_start; 8];
    for t in 0..n {
        if sumq2[t] > 0.0 && sumqx[t] * sumqx[t] > best * sumq2[t] {
            scale = sumqx[t] / sumq2[t];
            best = scale * sumqx[t];
            *l = tries.levels(t);
            on_grid = on_aux[t];
        }
    }
    if on_grid.iter().any(|&g| !g) && scale > 0.0 {
        let id = 1.0 / scale;
        for k in 0..8 {
            if r.skip_on_grid && on_grid[k] {
                continue;
            }
            let mut u = [0i8; 4];
            for i in 0..4 {
                u[i] = level(id, s.xval[4 * k + i]);
            }
            let r = 4 * k..4 * k + 4;
            let g = match lat.lookup(index_of(&u)) {
                Ok(g) => g,
                Err(list) => best_neighbour(
                    lat,
                    list,
                    &s.xval[r.clone()],
                    &s.waux[r.clone()],
                    scale,
                    &mut l[r.clone()],
                )
                .ok_or(())?,
            };
            l[r].copy_from_slice(&lat.levels(g));
        }
        let (sumqx, sumq2) = sums(s, l);
        if sumq2 > 0.0 {
            scale = sumqx / sumq2;
        }
    }
    Ok(scale)
}

/// The weights of a sub-block: `qw * sqrt(sigma2 + x²)` with an importance vector, else `x²`.
#[inline(always)]
fn weights(xb: &[f32], qw: Option<&[f32]>, sigma2: f32, s: &mut Sub) {
    for i in 0..32 {
        s.weight[i] = match qw {
            Some(qw) => qw[i] * (sigma2 + xb[i] * xb[i]).sqrt(),
            None => xb[i] * xb[i],
        };
        s.waux[i] = s.weight[i].sqrt();
    }
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

/// The grid indices of a sub-block's eight groups (ggml aborts where one is off the grid).
#[inline(always)]
fn indices(lat: &Lattice<4>, l: &[i8; 32]) -> Result<[u16; 8], ()> {
    let mut out = [0u16; 8];
    for (k, o) in out.iter_mut().enumerate() {
        *o = lat.lookup(index_of(&l[4 * k..])).map_err(|_| ())? as u16;
    }
    Ok(out)
}

/// `quantize_iq3_xxs` on one row.
#[inline(always)]
pub(super) fn encode_xxs(x: &[f32], qw: Option<&[f32]>, out: &mut [u8]) -> Result<(), FormatError> {
    let off = |()| FormatError::OffGrid("IQ3_XXS");
    let rules = Rules {
        tries: 15,
        on_grid_start: true,
        skip_on_grid: true,
        lat: lattice::q3(false),
    };
    let (xs, _) = x.as_chunks::<256>();
    for (ibl, (xbl, y)) in xs.iter().zip(out.chunks_exact_mut(XXS_BYTES)).enumerate() {
        y.fill(0);
        let mut q3 = [0u8; 96];
        let mut scales = [0.0f32; 8];
        let mut max_scale = 0.0f32;
        let sigma2 = sigma2(xbl);
        let mut s = Sub {
            xval: [0.0; 32],
            weight: [0.0; 32],
            waux: [0.0; 32],
        };
        for ib in 0..8 {
            let xb = &xbl[32 * ib..32 * ib + 32];
            weights(xb, qw.map(|w| &w[256 * ibl + 32 * ib..]), sigma2, &mut s);
            let mut block_signs = [0u8; 4];
            for k in 0..4 {
                let r = 8 * k..8 * k + 8;
                block_signs[k] = even_signs(&xb[r.clone()], &s.weight[r.clone()], &mut s.xval[r]);
            }
            let max = s
                .xval
                .iter()
                .skip(1)
                .fold(s.xval[0], |m, &v| if m > v { m } else { v });
            if max < EPS_XXS {
                scales[ib] = 0.0;
                continue;
            }
            let mut l = [0i8; 32];
            let mut scale = search(&s, max, &rules, &mut l).map_err(off)?;
            if scale < 0.0 {
                scale = -scale;
                for b in &mut block_signs {
                    *b = !*b & 127;
                }
            }
            let idx = indices(rules.lat, &l).map_err(off)?;
            for (k, &g) in idx.iter().enumerate() {
                q3[8 * ib + k] = g as u8;
            }
            let ss = u32::from(block_signs[0])
                | (u32::from(block_signs[1]) << 7)
                | (u32::from(block_signs[2]) << 14)
                | (u32::from(block_signs[3]) << 21);
            q3[64 + 4 * ib..68 + 4 * ib].copy_from_slice(&ss.to_le_bytes());
            scales[ib] = scale;
            max_scale = if max_scale > scale { max_scale } else { scale };
        }
        if max_scale == 0.0 {
            continue;
        }
        let d = max_scale / 31.0;
        y[..2].copy_from_slice(&f32_to_f16(d * 1.0125).to_le_bytes());
        let id = 1.0 / d;
        for ib in 0..8 {
            let l = nearest_int(0.5 * (id * scales[ib] - 1.0)).clamp(0, 15) as u32;
            let at = 64 + 4 * ib;
            let ss = u32::from_le_bytes([q3[at], q3[at + 1], q3[at + 2], q3[at + 3]]) | (l << 28);
            q3[at..at + 4].copy_from_slice(&ss.to_le_bytes());
        }
        y[2..].copy_from_slice(&q3);
    }
    Ok(())
}

/// `quantize_iq3_s` on one row.
#[inline(always)]
pub(super) fn encode_s(x: &[f32], qw: Option<&[f32]>, out: &mut [u8]) -> Result<(), FormatError> {
    let off = |()| FormatError::OffGrid("IQ3_S");
    let rules = Rules {
        tries: 9,
        on_grid_start: false,
        skip_on_grid: false,
        lat: lattice::q3(true),
    };
    let (xs, _) = x.as_chunks::<256>();
    for (ibl, (xbl, y)) in xs.iter().zip(out.chunks_exact_mut(S_BYTES)).enumerate() {
        y.fill(0);
        let mut scales = [0.0f32; 8];
        let mut max_scale = 0.0f32;
        let sigma2 = sigma2(xbl);
        let mut s = Sub {
            xval: [0.0; 32],
            weight: [0.0; 32],
            waux: [0.0; 32],
        };
        // ggml advances its code and sign pointers only past sub-blocks it writes.
        let (mut qs, mut signs) = (2usize, 74usize);
        for ib in 0..8 {
            let xb = &xbl[32 * ib..32 * ib + 32];
            weights(xb, qw.map(|w| &w[256 * ibl + 32 * ib..]), sigma2, &mut s);
            let mut block_signs = [0u8; 4];
            for k in 0..4 {
                let r = 8 * k..8 * k + 8;
                block_signs[k] = all_signs(&xb[r.clone()], &mut s.xval[r]);
            }
            let max = s
                .xval
                .iter()
                .skip(1)
                .fold(s.xval[0], |m, &v| if m > v { m } else { v });
            if max == 0.0 {
                scales[ib] = 0.0;
                continue;
            }
            let mut l = [0i8; 32];
            let mut scale = search(&s, max, &rules, &mut l).map_err(off)?;
            if scale < 0.0 {
                scale = -scale;
                for b in &mut block_signs {
                    *b = !*b;
                }
            }
            let idx = indices(rules.lat, &l).map_err(off)?;
            for (k, &g) in idx.iter().enumerate() {
                y[qs + k] = g as u8;
                let at = ib * 8 + k;
                y[66 + at / 8] |= ((g >> 8) as u8) << (at % 8);
            }
            qs += 8;
            y[signs..signs + 4].copy_from_slice(&block_signs);
            signs += 4;
            scales[ib] = scale;
            max_scale = if max_scale > scale { max_scale } else { scale };
        }
        if max_scale == 0.0 {
            continue;
        }
        let d = max_scale / 31.0;
        y[..2].copy_from_slice(&f32_to_f16(d * 1.033).to_le_bytes());
        let id = 1.0 / d;
        for ib in (0..8).step_by(2) {
            let l1 = nearest_int(0.5 * (id * scales[ib] - 1.0)).clamp(0, 15) as u8;
            let l2 = nearest_int(0.5 * (id * scales[ib + 1] - 1.0)).clamp(0, 15) as u8;
            y[106 + ib / 2] = l1 | (l2 << 4);
        }
    }
    Ok(())
}

/// The code of a value with grid byte `b` (level `b / 8`, or `(b - 1) / 2` for IQ3_S) and
/// sign: `7 - level` negative, `8 + level` positive.
fn code(level: u8, negative: bool) -> u8 {
    if negative { 7 - level } else { 8 + level }
}

/// One row's codes and sub-block steps (`s` true for IQ3_S).
pub(super) fn unpack(bytes: &[u8], s: bool, codes: &mut [u8], steps: &mut Vec<f32>) {
    let bb = if s { S_BYTES } else { XXS_BYTES };
    for (b, cb) in bytes.chunks_exact(bb).zip(codes.chunks_exact_mut(256)) {
        let d = f16_to_f32(u16::from_le_bytes([b[0], b[1]]));
        for ib in 0..8 {
            let (step, sign_bytes): (f32, [u8; 4]) = if s {
                let ls = (b[106 + ib / 2] >> (4 * (ib % 2))) & 15;
                (
                    d * f32::from(1 + 2 * ls),
                    [
                        b[74 + 4 * ib],
                        b[75 + 4 * ib],
                        b[76 + 4 * ib],
                        b[77 + 4 * ib],
                    ],
                )
            } else {
                let at = 66 + 4 * ib;
                let aux = u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
                (
                    d * (0.5 + (aux >> 28) as f32) * 0.5,
                    std::array::from_fn(|k| KSIGNS_IQ2XS[((aux >> (7 * k)) & 127) as usize]),
                )
            };
            steps.push(step);
            for g in 0..8 {
                let i = 8 * ib + g;
                let point = if s {
                    IQ3S_GRID
                        [usize::from(b[2 + i]) | (usize::from((b[66 + i / 8] >> (i % 8)) & 1) << 8)]
                } else {
                    IQ3XXS_GRID[usize::from(b[2 + i])]
                };
                for (j, &m) in point.to_le_bytes().iter().enumerate() {
                    let v = 4 * g + j;
                    let level = if s {
                        m.saturating_sub(1) / 2
                    } else {
                        (m / 8).min(7)
                    };
                    let negative = sign_bytes[v / 8] & (1 << (v % 8)) != 0;
                    cb[32 * ib + v] = code(level, negative);
                }
            }
        }
    }
}
