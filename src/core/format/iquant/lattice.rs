//! The lattice searches' tables, built once per grid as ggml's `iq2xs_init_impl` and
//! `iq3xs_init_impl` build them: each grid point as `2 * level + 1` per value (`kgrid_q2xs`,
//! `kgrid_q3xs`), the map from a point's levels (2 or 3 bits each) to its grid index, and
//! for every combination of levels that is not a grid point its neighbours: the grid points
//! at the `nwant` smallest squared distances, ordered by distance, then index.
//!
//! ggml builds the neighbours of every index of its map; here only the combinations an
//! encoder can look up are built (levels 0..2 for the 2-bit grids, so 3^8 of the 4^8
//! indices), which gives the same lists for those and makes IQ1_S's table a few
//! milliseconds' work. [`best_neighbour`] and [`best_neighbour_iq1`] are ggml's
//! `iq2_find_best_neighbour` / `iq3_find_best_neighbour` and `iq1_find_best_neighbour2`.

#![expect(
    clippy::inline_always,
    reason = "the encoders inline into pulp's vector dispatch (`IQuant::encode_row`), which is what vectorises them"
)]

use std::sync::OnceLock;

use super::tables::{IQ1S_GRID, IQ2S_GRID, IQ2XS_GRID, IQ2XXS_GRID, IQ3S_GRID, IQ3XXS_GRID};

/// Neighbours are searched [`LANES`] at a time: each lane's distance is its own sum, in
/// the reference's order, so the search vectorises without changing a bit.
const LANES: usize = 8;

/// One grid's search tables.
#[derive(Debug)]
pub(super) struct Lattice<const W: usize> {
    /// Each point as `2 * level + 1` per value.
    pub points: Vec<[i8; W]>,
    /// Level combination (`bits` per value, value `j` at `bits * j`) to the point's index,
    /// or `-(list + 1)` of its neighbour list in [`Self::lists`].
    map: Vec<i32>,
    /// Each list's first index in [`Self::ids`], its length, and its first value in
    /// [`Self::cols`].
    lists: Vec<(u32, u16, u32)>,
    /// The lists' point indices, nearest first.
    ids: Vec<u16>,
    /// The lists' points value by value: for list of length `n` padded to `p` (a multiple of
    /// [`LANES`]), value `i` of its points at `i * p ..`, as `2 * level + 1`.
    cols: Vec<i8>,
}

/// A combination's neighbours: their indices and their points value by value.
#[derive(Debug, Clone, Copy)]
pub(super) struct Neighbours<'a> {
    ids: &'a [u16],
    cols: &'a [i8],
}

/// Which grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Which {
    /// IQ2_XXS: 256 points, 2 neighbour distances.
    Iq2Xxs,
    /// IQ2_XS: 512 points, 2 neighbour distances.
    Iq2Xs,
    /// IQ2_S: 1024 points, 1 neighbour distance.
    Iq2S,
    /// IQ1_S and IQ1_M: 2048 points, 3 neighbour distances.
    Iq1,
}

/// The tables of an 8-value grid, built on first use.
pub(super) fn q2(which: Which) -> &'static Lattice<8> {
    static TABLES: [OnceLock<Lattice<8>>; 4] = [
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
    ];
    type Level = fn(u8) -> u8;
    let (slot, grid, nwant, map_of): (usize, &[u64], usize, Level) = match which {
        Which::Iq2Xxs => (0, &IQ2XXS_GRID, 2, level_q2),
        Which::Iq2Xs => (1, &IQ2XS_GRID, 2, level_q2),
        Which::Iq2S => (2, &IQ2S_GRID, 1, level_q2),
        Which::Iq1 => (3, &IQ1S_GRID, 3, level_q1),
    };
    TABLES[slot].get_or_init(|| {
        let levels: Vec<[u8; 8]> = grid
            .iter()
            .map(|&g| std::array::from_fn(|j| map_of(g.to_le_bytes()[j])))
            .collect();
        build::<8>(&levels, 2, 3, nwant)
    })
}

/// The tables of a 4-value grid: IQ3_XXS (`big` false: 256 points, 2 distances) or IQ3_S
/// (512 points, 3 distances).
pub(super) fn q3(big: bool) -> &'static Lattice<4> {
    static SMALL: OnceLock<Lattice<4>> = OnceLock::new();
    static BIG: OnceLock<Lattice<4>> = OnceLock::new();
    let build_with = |grid: &[u32], map_of: fn(u8) -> u8, nwant| {
        let levels: Vec<[u8; 4]> = grid
            .iter()
            .map(|&g| std::array::from_fn(|j| map_of(g.to_le_bytes()[j])))
            .collect();
        build::<4>(&levels, 3, 8, nwant)
    };
    if big {
        BIG.get_or_init(|| build_with(&IQ3S_GRID, |b| b.saturating_sub(1) / 2, 3))
    } else {
        SMALL.get_or_init(|| build_with(&IQ3XXS_GRID, level_q3xxs, 2))
    }
}

/// An IQ2 grid byte (0x08, 0x19, 0x2b) to its level.
fn level_q2(b: u8) -> u8 {
    match b {
        0x08 => 0,
        0x19 => 1,
        _ => 2,
    }
}

/// An IQ1 grid byte (int8 -1, 0, 1) to its level.
fn level_q1(b: u8) -> u8 {
    (b as i8 + 1).clamp(0, 2) as u8
}

/// An IQ3_XXS grid byte (4, 12, .., 52, 62) to its level.
fn level_q3xxs(b: u8) -> u8 {
    (b / 8).min(7)
}

#[expect(
    clippy::needless_range_loop,
    reason = "value `i` of every listed point, column by column"
)]
/// `iq*xs_init_impl` for the combinations whose levels are all below `reach`.
fn build<const W: usize>(levels: &[[u8; W]], bits: u32, reach: u8, nwant: usize) -> Lattice<W> {
    let points: Vec<[i8; W]> = levels
        .iter()
        .map(|l| std::array::from_fn(|j| 2 * l[j] as i8 + 1))
        .collect();
    let index = |l: &[u8; W]| -> usize {
        l.iter()
            .enumerate()
            .map(|(j, &v)| usize::from(v) << (bits as usize * j))
            .sum()
    };
    let mut map = vec![-1i32; 1 << (bits as usize * W)];
    for (i, l) in levels.iter().enumerate() {
        map[index(l)] = i as i32;
    }
    let (mut lists, mut ids, mut cols) = (Vec::new(), Vec::new(), Vec::new());
    let mut dist = vec![0i32; points.len()];
    let mut combo = [0u8; W];
    loop {
        let u = index(&combo);
        if map[u] < 0 {
            map[u] = -(lists.len() as i32 + 1);
            let pos: [i32; W] = std::array::from_fn(|j| 2 * i32::from(combo[j]) + 1);
            for (d, p) in dist.iter_mut().zip(&points) {
                *d = p
                    .iter()
                    .zip(&pos)
                    .map(|(&a, &b)| (i32::from(a) - b) * (i32::from(a) - b))
                    .sum();
            }
            let nearest = smallest_distinct(&dist, nwant);
            let start = ids.len();
            for &want in &nearest {
                for (j, &d) in dist.iter().enumerate() {
                    if d == want {
                        ids.push(j as u16);
                    }
                }
            }
            let n = ids.len() - start;
            let padded = n.div_ceil(LANES) * LANES;
            lists.push((start as u32, n as u16, cols.len() as u32));
            for i in 0..W {
                cols.extend(ids[start..].iter().map(|&j| points[usize::from(j)][i]));
                cols.resize(cols.len() + padded - n, 1);
            }
        }
        // The next combination of levels below `reach`, value 0 fastest.
        let Some(k) = combo.iter().position(|&c| c + 1 < reach) else {
            break;
        };
        combo[k] += 1;
        combo[..k].fill(0);
    }
    Lattice {
        points,
        map,
        lists,
        ids,
        cols,
    }
}

/// The `n` smallest distinct values of `d`, ascending.
fn smallest_distinct(d: &[i32], n: usize) -> Vec<i32> {
    let mut out: Vec<i32> = Vec::with_capacity(n + 1);
    for &v in d {
        if out.contains(&v) {
            continue;
        }
        let at = out.partition_point(|&o| o < v);
        if at < n {
            out.insert(at, v);
            out.truncate(n);
        }
    }
    out
}

impl<const W: usize> Lattice<W> {
    /// The grid index of a level combination, or its neighbours to search.
    #[inline(always)]
    pub fn lookup(&self, u: usize) -> Result<usize, Neighbours<'_>> {
        match self.map.get(u).copied().unwrap_or(-1) {
            i if i >= 0 => Ok(i as usize),
            i => {
                let (start, n, col) = self
                    .lists
                    .get((-i - 1) as usize)
                    .copied()
                    .unwrap_or((0, 0, 0));
                let (start, n, col) = (start as usize, usize::from(n), col as usize);
                let padded = n.div_ceil(LANES) * LANES;
                Err(Neighbours {
                    ids: &self.ids[start..start + n],
                    cols: &self.cols[col..col + W * padded],
                })
            }
        }
    }

    /// Point `i`'s levels, `(2 * level + 1 - 1) / 2`.
    #[inline(always)]
    pub fn levels(&self, i: usize) -> [i8; W] {
        self.points[i].map(|p| (p - 1) / 2)
    }
}

/// The first of `list` whose distance `Σ w_i (scale q_i(point) - x_i)²` is least and below
/// `f32::MAX`, `q` the point's value `2 l + 1` mapped by `q`; each distance is summed over
/// `i` in order, [`LANES`] points side by side.
#[inline(always)]
fn nearest<const W: usize>(
    list: Neighbours<'_>,
    xval: &[f32],
    weight: &[f32],
    scale: f32,
    base: Option<f32>,
) -> Option<u16> {
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V3::try_new() {
        return simd.vectorize(
            #[inline(always)]
            || v3::nearest::<W>(simd, list, xval, weight, scale, base),
        );
    }
    nearest_portable::<W>(list, xval, weight, scale, base)
}

/// [`nearest`] without vector instructions.
#[inline(always)]
fn nearest_portable<const W: usize>(
    list: Neighbours<'_>,
    xval: &[f32],
    weight: &[f32],
    scale: f32,
    base: Option<f32>,
) -> Option<u16> {
    let q = |p: f32| match base {
        Some(b) => (p - 1.0) * 0.5 + b,
        None => p,
    };
    let n = list.ids.len();
    let padded = list.cols.len() / W;
    let mut best_d2 = f32::MAX;
    let mut best = None;
    for c in (0..padded).step_by(LANES) {
        let mut acc = [0.0f32; LANES];
        for i in 0..W {
            let col = &list.cols[i * padded + c..i * padded + c + LANES];
            let (x, w) = (xval[i], weight[i]);
            for (a, &p) in acc.iter_mut().zip(col) {
                let diff = scale * q(f32::from(p)) - x;
                *a += w * diff * diff;
            }
        }
        for (k, &d2) in acc.iter().enumerate().take(n - c) {
            if d2 < best_d2 {
                best_d2 = d2;
                best = Some(list.ids[c + k]);
            }
        }
    }
    best
}

/// `iq2_find_best_neighbour` / `iq3_find_best_neighbour`: the neighbour whose scaled point is
/// nearest `xval` in the weighted squared distance (the first on ties); its levels go to `l`.
/// `None` when no distance is below `f32::MAX` (non-finite arithmetic), where ggml asserts.
#[inline(always)]
pub(super) fn best_neighbour<const W: usize>(
    lat: &Lattice<W>,
    list: Neighbours<'_>,
    xval: &[f32],
    weight: &[f32],
    scale: f32,
    l: &mut [i8],
) -> Option<usize> {
    let g = usize::from(nearest::<W>(list, xval, weight, scale, None)?);
    l[..W].copy_from_slice(&lat.levels(g));
    Some(g)
}

/// `iq1_find_best_neighbour2`: as [`best_neighbour`], each level standing for `xg[level]`
/// (`xg` is `level + xg[0]` exactly: -1, 0, 1 shifted by 1/8). ggml's fallback over the
/// whole grid (reached only when every distance is non-finite) reads past its input; here
/// that case is `None`.
#[inline(always)]
pub(super) fn best_neighbour_iq1(
    lat: &Lattice<8>,
    list: Neighbours<'_>,
    xval: &[f32],
    weight: &[f32],
    scale: f32,
    xg: &[f32; 3],
    l: &mut [i8],
) -> Option<usize> {
    let g = usize::from(nearest::<8>(list, xval, weight, scale, Some(xg[0]))?);
    l[..8].copy_from_slice(&lat.levels(g));
    Some(g)
}

/// The neighbour search on AVX2: eight neighbours to a register, each lane the same
/// operations in the same order as the portable loop. The first least distance is found
/// without a branch per lane: a chunk's lanes past the list, and those not below the best so
/// far (NaN included), count as infinite; the chunk's least is the minimum of the others
/// (every lane's distance is compared, so the order of the minimum's tree does not matter),
/// and its first lane equal to it is the one the portable loop would keep.
#[cfg(target_arch = "x86_64")]
mod v3 {
    use std::arch::x86_64::__m256;

    use pulp::x86::V3;

    use super::{LANES, Neighbours};

    /// `_CMP_LT_OQ`, `_CMP_EQ_OQ`: ordered, false when either side is NaN (Rust's `<`, `==`).
    const LT: i32 = 0x11;
    const EQ: i32 = 0x00;

    /// [`super::nearest`] with AVX2.
    #[inline(always)]
    pub(super) fn nearest<const W: usize>(
        simd: V3,
        list: Neighbours<'_>,
        xval: &[f32],
        weight: &[f32],
        scale: f32,
        base: Option<f32>,
    ) -> Option<u16> {
        let (avx, avx2) = (simd.avx, simd.avx2);
        let n = list.ids.len();
        let padded = list.cols.len() / W;
        let scale_v = avx._mm256_set1_ps(scale);
        let xs: [__m256; W] = std::array::from_fn(|i| avx._mm256_set1_ps(xval[i]));
        let ws: [__m256; W] = std::array::from_fn(|i| avx._mm256_set1_ps(weight[i]));
        let (one, half) = (avx._mm256_set1_ps(1.0), avx._mm256_set1_ps(0.5));
        let base_v = base.map(|b| avx._mm256_set1_ps(b));
        let inf = avx._mm256_set1_ps(f32::INFINITY);
        let lane = avx._mm256_setr_ps(0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0);
        let mut best_d2 = f32::MAX;
        let mut best = None;
        for c in (0..padded).step_by(LANES) {
            let mut acc = avx._mm256_setzero_ps();
            for i in 0..W {
                let at = i * padded + c;
                // Always whole (the lists are padded to whole chunks).
                let bytes: [i8; 8] = list
                    .cols
                    .get(at..at + LANES)
                    .and_then(|b| b.try_into().ok())
                    .unwrap_or([1; 8]);
                let wide =
                    avx2._mm256_cvtepi8_epi32(pulp::cast([pulp::cast::<_, u64>(bytes), 0u64]));
                let mut q = avx._mm256_cvtepi32_ps(wide);
                if let Some(b) = base_v {
                    q = avx._mm256_add_ps(avx._mm256_mul_ps(avx._mm256_sub_ps(q, one), half), b);
                }
                let diff = avx._mm256_sub_ps(avx._mm256_mul_ps(scale_v, q), xs[i]);
                acc =
                    avx._mm256_add_ps(acc, avx._mm256_mul_ps(avx._mm256_mul_ps(ws[i], diff), diff));
            }
            let live = avx._mm256_and_ps(
                avx._mm256_cmp_ps::<LT>(acc, avx._mm256_set1_ps(best_d2)),
                avx._mm256_cmp_ps::<LT>(lane, avx._mm256_set1_ps((n - c) as f32)),
            );
            if avx._mm256_movemask_ps(live) == 0 {
                continue;
            }
            let cand = avx._mm256_blendv_ps(inf, acc, live);
            let m = avx._mm256_min_ps(cand, avx._mm256_permute2f128_ps::<1>(cand, cand));
            let m = avx._mm256_min_ps(m, avx._mm256_permute_ps::<0b0100_1110>(m));
            let m = avx._mm256_min_ps(m, avx._mm256_permute_ps::<0b1011_0001>(m));
            let first = avx
                ._mm256_movemask_ps(avx._mm256_cmp_ps::<EQ>(cand, m))
                .trailing_zeros();
            let k = first as usize;
            let d: [f32; 8] = pulp::cast(m);
            best_d2 = d[0];
            best = list.ids.get(c + k).copied();
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_grid_point_maps_to_itself_and_every_other_combination_has_neighbours() {
        for which in [Which::Iq2Xxs, Which::Iq2Xs, Which::Iq2S, Which::Iq1] {
            let lat = q2(which);
            for (i, p) in lat.points.iter().enumerate() {
                let u: usize = p
                    .iter()
                    .enumerate()
                    .map(|(j, &v)| (((v - 1) / 2) as usize) << (2 * j))
                    .sum();
                assert_eq!(lat.lookup(u).ok(), Some(i));
            }
            // Every combination of levels 0..2 either is a point or has neighbours.
            for u in 0..6561usize {
                let mut idx = 0;
                let mut r = u;
                for j in 0..8 {
                    idx |= (r % 3) << (2 * j);
                    r /= 3;
                }
                if let Err(list) = lat.lookup(idx) {
                    assert!(!list.ids.is_empty(), "{which:?} {idx}");
                }
            }
        }
        for big in [false, true] {
            let lat = q3(big);
            for u in 0..4096 {
                if let Err(list) = lat.lookup(u) {
                    assert!(!list.ids.is_empty());
                    assert_eq!(list.cols.len() % (4 * LANES), 0);
                }
            }
        }
    }

    #[test]
    fn the_vector_search_is_the_portable_one() {
        let lat = q2(Which::Iq1);
        let mut seed = 0x1234_5678u32;
        let mut r = move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            (seed >> 8) as f32 / (1u32 << 24) as f32
        };
        for u in (0..1usize << 16).step_by(7) {
            let Err(list) = lat.lookup(u) else { continue };
            let xval: [f32; 8] = std::array::from_fn(|_| r() * 4.0 - 1.0);
            let w: [f32; 8] = std::array::from_fn(|_| if r() < 0.2 { 0.0 } else { r() });
            let scale = r() * 2.0;
            for base in [None, Some(-0.875), Some(-1.125)] {
                assert_eq!(
                    nearest::<8>(list, &xval, &w, scale, base),
                    nearest_portable::<8>(list, &xval, &w, scale, base),
                );
            }
        }
        let lat = q3(true);
        for u in 0..4096 {
            let Err(list) = lat.lookup(u) else { continue };
            let xval: [f32; 4] = std::array::from_fn(|_| r() * 16.0);
            let w: [f32; 4] = std::array::from_fn(|_| r());
            let scale = r() * 2.0;
            assert_eq!(
                nearest::<4>(list, &xval, &w, scale, None),
                nearest_portable::<4>(list, &xval, &w, scale, None),
            );
        }
    }

    #[test]
    fn neighbours_are_the_nearest_points_by_distance_then_index() {
        let lat = q2(Which::Iq2Xxs);
        // The first combination of levels 0..2 that is not a grid point.
        let (u, list) = (0..1usize << 16)
            .filter(|u| (0..8).all(|j| (u >> (2 * j)) & 3 < 3))
            .find_map(|u| lat.lookup(u).err().map(|l| (u, l)))
            .unwrap();
        // The columns hold the listed points value by value.
        let padded = list.cols.len() / 8;
        for (k, &id) in list.ids.iter().enumerate() {
            for i in 0..8 {
                assert_eq!(list.cols[i * padded + k], lat.points[usize::from(id)][i]);
            }
        }
        let list = list.ids;
        let pos: [i32; 8] = std::array::from_fn(|j| 2 * ((u >> (2 * j)) & 3) as i32 + 1);
        let d2 = |i: u16| -> i32 {
            let p = lat.points[usize::from(i)];
            p.iter()
                .zip(pos)
                .map(|(&a, b)| (i32::from(a) - b).pow(2))
                .sum()
        };
        let ds: Vec<i32> = list.iter().map(|&i| d2(i)).collect();
        assert!(list.windows(2).all(|w| (d2(w[0]), w[0]) < (d2(w[1]), w[1])));
        let mut distinct = ds.clone();
        distinct.dedup();
        assert_eq!(distinct.len(), 2);
        // No point outside the list is nearer than the list's farthest.
        let far = *ds.last().unwrap();
        let listed: Vec<u16> = list.to_vec();
        for i in 0..lat.points.len() as u16 {
            if !listed.contains(&i) {
                assert!(d2(i) > far);
            }
        }
    }
}
