//! Rows of whole-chunk groups with every block prepared before the row runs: eight blocks'
//! statistics, parameters and loop constants at a time, then the whole row in one loop
//! ([`run_prepared`]) instead of a call per block.

#![expect(
    clippy::inline_always,
    reason = "the row loop must inline into the vectorised task body (see super::vectorised)"
)]

use super::{Ctx, Failure, Flat, LANES, Plan, RowQuant, RowSource, Scratch, needs_chunks};
use crate::core::clip;
use crate::core::config::Clipping;
use crate::core::kernel::segment::{
    BlockSource, Clamp, Code, ConstLanes, Consts, ConstsBuf, Kind, Lanes, consts8_lanes, one_code,
    prepare8, run_prepared,
};
use crate::core::params::{BlockStats, PARAM_LANES, RealRange};
use crate::core::report::{Record, record, set_clipped};
use crate::core::simd::{Avx2, halves8, vectorised};
use crate::core::stats::ChunkStats;

/// The buffers of [`batch`], reused from row to row.
#[derive(Default)]
pub(super) struct Buffers {
    /// Each block's loop constants.
    consts: ConstsBuf,
    /// Each block's clamp count.
    clipped: Vec<usize>,
    /// The whole chunks of row `wide_of` widened to `f64`, filled by the first of the
    /// ladder's rungs that reads them and kept for the others (by [`batch`] without
    /// `COUNTS`; the ladder alone calls it so).
    wide: Vec<[f64; LANES]>,
    wide_of: Option<usize>,
    /// For each eight blocks in `consts`, when the row's preparation tracked it (see
    /// [`halves`]): bit `j` set where block `j` gets no code a clamp moves for any value of
    /// magnitude up to its largest.
    sym: Vec<u8>,
    /// The previous rung's constants and `sym`, kept while a rung of twice its group size
    /// takes its blocks' from them ([`halves`]).
    child: ConstsBuf,
    child_sym: Vec<u8>,
    /// The row and group size whose blocks `consts` and `sym` hold (every block prepared for
    /// the loop), after a call of [`batch`] without `COUNTS` that ran the row and tracked
    /// `sym`.
    held: Option<(usize, usize)>,
}

impl Buffers {
    /// Whether every value of the row that [`batch`] last quantized successfully gets one
    /// code under its blocks (see [`one_code`]), from `chunks`, the row's chunk statistics
    /// that `batch` read; the codes themselves need not have been stored.
    pub(super) fn one_code(&self, kind: Kind, size: usize, chunks: &ChunkStats) -> bool {
        let (lo, hi) = chunks.ends();
        one_code(kind, self.consts.as_slice(), size / chunks.width(), lo, hi)
    }
}

/// Row `r` under a row-wise `plan` whose blocks are whole chunks (see [`needs_chunks`]), with
/// every block prepared first and the row then run in one loop; `None` for other plans, and
/// for rows with a block the specialised loop does not take (the caller then quantizes the
/// row block by block with [`super::quantize_row`]). The codes, errors, failures and, for
/// the active configuration (`COUNTS`), the blocks and clamp counts are the same as
/// `quantize_row`'s; otherwise the clamp count is not counted (0) and the signal is not
/// measured.
#[expect(
    clippy::too_many_arguments,
    reason = "the row, its outputs and its scratch, all borrowed for one call"
)]
#[inline(always)]
pub(super) fn batch<T: Code, const COUNTS: bool>(
    ctx: &Ctx<'_>,
    plan: &Plan,
    r: usize,
    row: &[f32],
    stats_of_row: &BlockStats,
    codes: &mut [T],
    blocks: &mut [Record],
    scratch: &mut Scratch,
    bufs: &mut Buffers,
) -> Option<Result<RowQuant, Failure>> {
    let Plan::RowWise { per_row, size, .. } = plan else {
        return None;
    };
    if !needs_chunks(plan) {
        return None;
    }
    let mut prep = RowPrep {
        source: RowSource::<COUNTS> {
            ctx,
            per_row: *per_row,
            size: *size,
            r,
            stats_of_row,
            chunks: &scratch.chunks,
            clip: &mut scratch.clip,
            blocks: &mut [],
            current: None,
            flat: Flat::default(),
        },
        row,
        clamp: Clamp::Within,
        sym: None,
    };
    let kind = Kind::of(ctx.config);
    // The ladder's rungs of a configuration whose parameters nest (see `halves`): each rung
    // tracks `sym`, and a rung of twice the previous one's group size takes its blocks from
    // the previous one's.
    let nested = !COUNTS && ctx.config.clipping == Clipping::None && ctx.calc.nested();
    let held = bufs.held.take();
    let mut derived = false;
    if nested && held == Some((r, *size / 2)) {
        std::mem::swap(&mut bufs.consts, &mut bufs.child);
        std::mem::swap(&mut bufs.sym, &mut bufs.child_sym);
        bufs.consts.clear();
        bufs.sym.clear();
        let from = (bufs.child.as_slice(), &bufs.child_sym[..]);
        let to = (&mut bufs.consts, &mut bufs.sym);
        let per = *size / scratch.chunks.width() / 2;
        if let Some((within, flat)) = halves(from, &scratch.chunks, per, *per_row, to) {
            prep.clamp = if within { Clamp::Within } else { Clamp::Any };
            prep.source.flat = flat;
            derived = true;
        }
    }
    if !derived {
        bufs.consts.clear();
        bufs.sym.clear();
        prep.sym = nested.then_some(&mut bufs.sym);
        let prepared = prepare(&mut prep, kind, &mut bufs.consts, blocks);
        if let Err(f) = prepared? {
            return Some(Err(f));
        }
    }
    let tracked = derived || prep.sym.is_some();
    let mut lanes = Lanes::ZERO;
    // The next row (the last row's own), fetched while this one is computed.
    let next = ctx.view.row((r + 1).min(ctx.view.nrows() - 1));
    let ahead = next.to_slice().unwrap_or_default();
    bufs.clipped.clear();
    if COUNTS {
        bufs.clipped.resize(bufs.consts.len(), 0);
    }
    let counts = COUNTS.then_some(&mut bufs.clipped[..]);
    let (consts, size) = (bufs.consts.as_slice(), *size);
    // The ladder's rows whose blocks no clamp can touch run without it; those whose errors
    // are all exact in f32 form them there.
    let clamp = if COUNTS { Clamp::Any } else { prep.clamp };
    // The ladder's row widened once for all its rungs, by the first whose errors are formed
    // in f64 (the active pass measures the signal and widens as it goes).
    let in_f64 = clamp == Clamp::Any || !kind.exact_errors();
    if !COUNTS && in_f64 && bufs.wide_of != Some(r) {
        let (whole, _) = row.as_chunks::<LANES>();
        bufs.wide.clear();
        bufs.wide.extend(whole.iter().map(widen));
        bufs.wide_of = Some(r);
    }
    let wide = if COUNTS || !in_f64 {
        &[][..]
    } else {
        &bufs.wide[..]
    };
    run_prepared(
        kind, consts, size, row, codes, &mut lanes, ahead, counts, clamp, wide,
    );
    for (slot, &n) in blocks.iter_mut().zip(&bufs.clipped) {
        set_clipped(slot, n);
    }
    let clipped = bufs.clipped.iter().sum();
    let flat = prep.source.flat.is_flat();
    if tracked {
        bufs.held = Some((r, size));
    }
    Some(Ok(RowQuant {
        lanes,
        clipped,
        flat,
    }))
}

/// A chunk's values in `f64` (written out: an array's `map` here is sometimes compiled as a
/// call per chunk).
#[inline(always)]
fn widen(c: &[f32; LANES]) -> [f64; LANES] {
    let [a, b, c, d, e, f, g, h] = *c;
    [
        f64::from(a),
        f64::from(b),
        f64::from(c),
        f64::from(d),
        f64::from(e),
        f64::from(f),
        f64::from(g),
        f64::from(h),
    ]
}

/// For eight blocks (constants `k`, values in `lo[j]..=hi[j]`): bit `j` set where no value
/// of magnitude up to block `j`'s largest, `m = max(-lo, hi)`, gets a code a clamp moves (the
/// test of `-m` and `m`: codes are monotone in the values).
#[inline(always)]
fn sym_within(
    simd: Avx2,
    kind: Kind,
    k: &ConstLanes<PARAM_LANES>,
    lo: &[f32; PARAM_LANES],
    hi: &[f32; PARAM_LANES],
) -> u8 {
    let m: [f32; PARAM_LANES] = std::array::from_fn(|j| (-lo[j]).max(hi[j]));
    k.within_bits(simd, kind, &m.map(|m| -m), &m)
}

/// The constants of a row's `per_row` blocks of `2 * per` chunks each, appended to `to.0`,
/// from `from.0`, those of its `2 * per_row` blocks of `per` chunks (every one prepared for
/// the loop), under a configuration whose parameters nest ([`ParamCalc::nested`]): each
/// block's parameters, and so its constants, are those of its half whose largest magnitude
/// is the larger, which holds its extreme. `from.1` and `to.1` hold each block's test of
/// the magnitudes up to its largest against the clamp ([`sym_within`]), the same for a block
/// as for that half; a block passes the clamp when that test does (its values lie within
/// those magnitudes), so the row can leave the clamp out when every block's does. The
/// halves' and blocks' ends come from `chunks`' merged levels. Returns that, and the blocks'
/// [`Flat`]; `None` (with `to` in any state) for a row this does not take: a level not
/// built, blocks that do not fill the row in groups of eight, a block whose ends leave its
/// extreme to its values (a zero end or ends of one magnitude, see
/// [`ChunkStats::groups8`]), or a machine without AVX2.
///
/// [`ParamCalc::nested`]: crate::core::params::ParamCalc::nested
#[inline(always)]
fn halves(
    (child, child_sym): (&[Consts], &[u8]),
    chunks: &ChunkStats,
    per: usize,
    per_row: usize,
    (out, sym): (&mut ConstsBuf, &mut Vec<u8>),
) -> Option<(bool, Flat)> {
    let (lc, hc) = chunks.merged(per)?;
    let (lp, hp) = chunks.merged(2 * per)?;
    let lane_groups = per_row / PARAM_LANES;
    if !per_row.is_multiple_of(PARAM_LANES)
        || child.len() != 2 * per_row
        || child_sym.len() != 2 * lane_groups
        || lp.len() < per_row
        || lc.len() < 2 * per_row
    {
        return None;
    }
    let simd = Avx2::detect();
    let mut all = u8::MAX;
    let mut nonzero = false;
    let halves = lc
        .chunks_exact(2 * PARAM_LANES)
        .zip(hc.chunks_exact(2 * PARAM_LANES));
    let groups = lp
        .chunks_exact(PARAM_LANES)
        .zip(hp.chunks_exact(PARAM_LANES));
    let from = child
        .chunks_exact(2 * PARAM_LANES)
        .zip(child_sym.chunks_exact(2));
    for (((l2, h2), (l, h)), (k16, s2)) in halves.zip(groups).zip(from).take(lane_groups) {
        let (l2, h2) = (l2.try_into().ok()?, h2.try_into().ok()?);
        let second = halves8(simd, l2, h2, l.try_into().ok()?, h.try_into().ok()?)?;
        let k16: &[Consts; 2 * PARAM_LANES] = k16.try_into().ok()?;
        let halves_sym = u32::from(s2[0]) | u32::from(s2[1]) << PARAM_LANES;
        let slots = out.next8()?;
        let bits = chosen_bits(halves_sym, second);
        let chosen: [usize; PARAM_LANES] =
            std::array::from_fn(|j| (2 * j + ((second >> j) & 1) as usize) & (2 * PARAM_LANES - 1));
        // Each chosen half's constants copied whole; its scale's bits read in a loop of their
        // own, from the halves rather than from the slots just written (read in the copy's
        // loop, they had the compiler split each copy into pieces around the read).
        for (slot, &c) in slots.iter_mut().zip(&chosen) {
            *slot = k16[c];
        }
        let scales = chosen
            .iter()
            .fold(0, |acc, &c| acc | k16[c].stored_scale().to_bits());
        // A scale other than zero (of either sign) has a bit set besides the sign's.
        nonzero |= scales & 0x7fff_ffff != 0;
        all &= bits;
        sym.push(bits);
    }
    Some((all == u8::MAX, Flat::of_scales(nonzero)))
}

/// For eight groups whose halves' bits are `halves` (bits `2j` and `2j + 1` for group `j`'s
/// first and second half): bit `j` set where the half that `second`'s bit `j` picks has its
/// bit set. The even and the odd bits are each packed into eight, then blended by `second`:
/// a few operations for the eight groups, where a loop over them took a shift and a test
/// each.
#[inline(always)]
fn chosen_bits(halves: u32, second: u32) -> u8 {
    let first = compress_even(halves);
    let other = compress_even(halves >> 1);
    ((first & !second) | (other & second)) as u8
}

/// Bits 0, 2, 4, ..., 14 of `x` as bits 0 to 7.
#[inline(always)]
fn compress_even(x: u32) -> u32 {
    let x = x & 0x5555;
    let x = (x | (x >> 1)) & 0x3333;
    let x = (x | (x >> 2)) & 0x0f0f;
    (x | (x >> 4)) & 0x00ff
}

/// Every block of the row in `prep` ([`RowPrep::eight_at_a_time`], or [`RowPrep::each`] under MSE
/// clipping of blocks longer than [`clip::LANE_BLOCK`]), compiled on its own rather than
/// inlined into the row loop's body: one call per row, and the loop's registers are not
/// shared with the per-block arithmetic.
#[inline(never)]
fn prepare<const COUNTS: bool>(
    prep: &mut RowPrep<'_, '_, COUNTS>,
    kind: Kind,
    consts: &mut ConstsBuf,
    blocks: &mut [Record],
) -> Option<Result<(), Failure>> {
    let clipping = prep.source.ctx.config.clipping;
    // One instance of the loop per clipping mode: each compiled with only its own branch,
    // so that the other modes' values take no registers.
    vectorised(
        #[inline(always)]
        || match clipping {
            Clipping::Mse if prep.source.size > clip::LANE_BLOCK => prep.each(consts, blocks),
            // The weighted search goes block by block (see `clip::weighted_params`).
            Clipping::MseWeighted => prep.each(consts, blocks),
            Clipping::Mse => prep.eight_at_a_time::<MSE>(kind, consts, blocks),
            Clipping::Percentile(_) => prep.eight_at_a_time::<PERCENTILE>(kind, consts, blocks),
            Clipping::None => prep.eight_at_a_time::<NONE>(kind, consts, blocks),
        },
    )
}

/// [`RowPrep::eight_at_a_time`]'s instance for blocks without clipping.
const NONE: u8 = 0;
/// [`RowPrep::eight_at_a_time`]'s instance for percentile clipping.
const PERCENTILE: u8 = 1;
/// [`RowPrep::eight_at_a_time`]'s instance for MSE clipping.
const MSE: u8 = 2;

/// Blocks that [`RowPrep::four_groups_interleaved`] prepares at once: four groups of eight.
const FOUR_GROUPS: usize = 4 * PARAM_LANES;

/// `[f(0), f(1), f(2), f(3)]`, each call inlined (`std::array::from_fn` may not be, and
/// outside the vectorised caller the calls would lose its instructions).
#[inline(always)]
fn four<T>(mut f: impl FnMut(usize) -> T) -> [T; 4] {
    [f(0), f(1), f(2), f(3)]
}

/// A row's blocks being prepared for [`batch`].
struct RowPrep<'a, 'c, const COUNTS: bool> {
    /// The row's blocks one at a time (for blocks with a problem or with clipping).
    source: RowSource<'a, 'c, COUNTS>,
    row: &'a [f32],
    /// What every block prepared so far is known to be against the clamp, the least of the
    /// blocks' (tested for blocks prepared eight at a time without records, and for blocks
    /// prepared one at a time; any other block makes it [`Clamp::Any`]): no code a clamp
    /// moves, or every error exact in `f32` with the clamp ([`ConstLanes::exact_bits`]; only
    /// under kinds that form errors there).
    clamp: Clamp,
    /// Each block's test against the clamp over the magnitudes up to its largest, when the
    /// rung tracks it (see [`halves`]; only for eight blocks prepared at once without
    /// records: any other block stops the tracking).
    sym: Option<&'a mut Vec<u8>>,
}

impl<'a, const COUNTS: bool> RowPrep<'a, '_, COUNTS> {
    /// Block `i`'s values.
    #[inline(always)]
    fn values(&self, i: usize) -> &'a [f32] {
        let size = self.source.size;
        let end = ((i + 1) * size).min(self.row.len());
        self.row.get(i * size..end).unwrap_or_default()
    }

    /// Block `i` through [`RowSource::prepare`] (which names a problem): its constants into
    /// `consts` and (`COUNTS`) its record into `blocks`; `None` if the specialised loop does
    /// not take it.
    #[inline(always)]
    fn one(
        &mut self,
        i: usize,
        consts: &mut ConstsBuf,
        blocks: &mut [Record],
    ) -> Option<Result<(), Failure>> {
        self.sym = None;
        let xs = self.values(i);
        match self.source.prepare(i, xs) {
            Ok(p) if p.is_fast() => {
                self.clamp = self.clamp.min(p.clamp());
                consts.push(p.consts());
                if let (true, Some(slot), Some((p, st))) =
                    (COUNTS, blocks.get_mut(i), &self.source.current)
                {
                    *slot = record(p, st, 0);
                }
                Some(Ok(()))
            }
            Ok(_) => None,
            Err(f) => Some(Err(f)),
        }
    }

    /// Every block, one at a time; as [`RowPrep::one`] for each block.
    #[inline(always)]
    fn each(
        &mut self,
        consts: &mut ConstsBuf,
        blocks: &mut [Record],
    ) -> Option<Result<(), Failure>> {
        for i in 0..self.source.per_row {
            if let Err(f) = self.one(i, consts, blocks)? {
                return Some(Err(f));
            }
        }
        Some(Ok(()))
    }

    /// The first `m` of eight blocks prepared at once for the loop (constants `k`, values in
    /// `lo[j]..=hi[j]`) tested against the clamp: where the rung tracks `sym` (all eight
    /// blocks), each block's test over the magnitudes up to its largest ([`sym_within`]),
    /// which also covers its values; otherwise the test of their ends alone. Blocks that a
    /// clamp can touch are then tested for errors exact in `f32`
    /// ([`ConstLanes::exact_bits`]).
    #[inline(always)]
    fn test_clamp8(
        &mut self,
        simd: Avx2,
        kind: Kind,
        k: &ConstLanes<PARAM_LANES>,
        (lo, hi): (&[f32; PARAM_LANES], &[f32; PARAM_LANES]),
        m: usize,
    ) {
        // The lanes past `m` pass.
        let pad = !(u8::MAX >> (PARAM_LANES - m.clamp(1, PARAM_LANES)));
        let within = if let Some(sym) = &mut self.sym {
            let bits = sym_within(simd, kind, k, lo, hi);
            sym.push(bits);
            bits
        } else {
            k.within_bits(simd, kind, lo, hi)
        } | pad;
        if within != u8::MAX && self.clamp != Clamp::Any {
            let exact = (within | k.exact_bits(kind, lo, hi)) == u8::MAX;
            self.clamp = if exact { Clamp::Exact } else { Clamp::Any };
        }
    }

    /// Blocks `i0 .. i0 + 8` without clipping and without records, whose ends are those in
    /// `lo` and `hi` (a level of the row's chunk statistics, one entry per block), as
    /// [`RowPrep::eight_at_a_time`] prepares them, in registers ([`prepare8`]) when it takes them
    /// all; false, with nothing changed, otherwise (blocks with a zero end or ends of one
    /// magnitude, configurations whose parameters it does not form). Where it takes them,
    /// a ladder row's groups of 8 cost about a third of the instructions of [`RowPrep::four_groups_interleaved`]
    /// (whose arrays of flags and per-step branches the compiler kept).
    #[inline(always)]
    fn regs8(
        &mut self,
        simd: Avx2,
        kind: Kind,
        (lo, hi): (&[f32], &[f32]),
        i0: usize,
        consts: &mut ConstsBuf,
    ) -> bool {
        let ctx = self.source.ctx;
        let ends = (|| {
            let lo = lo.get(i0..)?.first_chunk::<PARAM_LANES>()?;
            let hi = hi.get(i0..)?.first_chunk::<PARAM_LANES>()?;
            Some((lo, hi))
        })();
        let Some(ends) = ends else {
            return false;
        };
        let q = (ctx.qmin, ctx.qmax);
        let Some(e) = prepare8(simd, kind, &ctx.calc, ends, q, self.sym.is_some()) else {
            return false;
        };
        if e.within != u8::MAX {
            self.clamp = Clamp::Any;
        }
        if let Some(sym) = &mut self.sym {
            sym.push(e.within);
        }
        e.consts.append_blocks(simd, consts);
        let (scale, offset) = e.stored();
        self.source.flat.add8(scale, offset);
        true
    }

    /// Blocks `i0 .. i0 + FOUR_GROUPS` without clipping and without records, as
    /// [`RowPrep::eight_at_a_time`] prepares them eight at a time, when every one of them is for the
    /// specialised loop; false, with nothing changed, otherwise. Each step is taken for the
    /// four groups of eight before the next step: the steps of one group wait for each other
    /// (statistics, parameters, constants), and four independent chains side by side keep
    /// the processor busy while each waits (on 4096x4096 the unclipped ladder took 2-9 %
    /// less time than with eight blocks at a time, in interleaved runs).
    #[inline(always)]
    fn four_groups_interleaved(
        &mut self,
        simd: Avx2,
        kind: Kind,
        i0: usize,
        consts: &mut ConstsBuf,
    ) -> bool {
        let (ctx, chunks) = (self.source.ctx, self.source.chunks);
        let per = self.source.size / chunks.width();
        let mut lo = [[-1.0; PARAM_LANES]; 4];
        let mut hi = [[1.0; PARAM_LANES]; 4];
        let mut ex = [[1.0; PARAM_LANES]; 4];
        for (k, ((l, h), e)) in lo.iter_mut().zip(&mut hi).zip(&mut ex).enumerate() {
            let values = |i| self.values(i);
            let g0 = i0 + k * PARAM_LANES;
            chunks.groups8(simd, g0, per, PARAM_LANES, values, [l, h, e]);
        }
        let p = four(
            #[inline(always)]
            |k| ctx.calc.lanes8::<false>(simd, &lo[k], &hi[k], &ex[k]),
        );
        let k8 = four(
            #[inline(always)]
            |k| consts8_lanes(simd, kind, &p[k], &lo[k], &hi[k], ctx.qmin, ctx.qmax),
        );
        let all = [true; PARAM_LANES];
        if k8[0].1 != all || k8[1].1 != all || k8[2].1 != all || k8[3].1 != all {
            return false;
        }
        for ((k, _), ends) in k8.iter().zip(lo.iter().zip(&hi)) {
            self.test_clamp8(simd, kind, k, ends, PARAM_LANES);
        }
        for (k, _) in &k8 {
            k.append_blocks(simd, consts);
        }
        for p in &p {
            self.source
                .flat
                .add8(&p.scale, p.float_min.then_some(&p.offset));
        }
        true
    }

    /// Every block without clipping, with percentile clipping (each block's clipped range
    /// first) or with MSE clipping of blocks of at most [`clip::LANE_BLOCK`] values (eight
    /// blocks searched at once), eight blocks' parameters at a time (the same values as
    /// `prepare` gives; a block with a problem is computed again by [`RowPrep::one`], which
    /// names it); as [`RowPrep::one`] for each block. `CLIP` is the configuration's clipping
    /// ([`NONE`], [`PERCENTILE`] or [`MSE`]).
    #[expect(
        clippy::too_many_lines,
        reason = "the three clipping modes' ranges side by side, one instance compiled per mode"
    )]
    #[inline(always)]
    fn eight_at_a_time<const CLIP: u8>(
        &mut self,
        kind: Kind,
        consts: &mut ConstsBuf,
        blocks: &mut [Record],
    ) -> Option<Result<(), Failure>> {
        let (ctx, chunks) = (self.source.ctx, self.source.chunks);
        let per_row = self.source.per_row;
        let per = self.source.size / chunks.width();
        let simd = Avx2::detect();
        // The quantiles' ranks of a whole group, the same for every one.
        let ranks = match ctx.config.clipping {
            Clipping::Percentile(p) => clip::Ranks::new(ctx.config.scheme, p, self.source.size),
            _ => clip::Ranks::new(ctx.config.scheme, 0.0, 0),
        };
        let mut i0 = 0;
        // Blocks in registers where the configuration's parameters are formed there, from
        // the level of the chunk statistics that has one entry per block.
        let levels = (CLIP == NONE && !COUNTS && ctx.calc.in_registers())
            .then(|| chunks.merged(per))
            .flatten();
        while i0 < per_row {
            if let Some(ends) = levels
                && per_row - i0 >= PARAM_LANES
                && self.regs8(simd, kind, ends, i0, consts)
            {
                i0 += PARAM_LANES;
                continue;
            }
            if CLIP == NONE
                && !COUNTS
                && per_row - i0 >= FOUR_GROUPS
                && self.four_groups_interleaved(simd, kind, i0, consts)
            {
                i0 += FOUR_GROUPS;
                continue;
            }
            let m = (per_row - i0).min(PARAM_LANES);
            let (mut lo, mut hi, mut ex) =
                ([-1.0; PARAM_LANES], [1.0; PARAM_LANES], [1.0; PARAM_LANES]);
            let values = |i| self.values(i);
            chunks.groups8(simd, i0, per, m, values, [&mut lo, &mut hi, &mut ex]);
            let p8 = match CLIP {
                PERCENTILE => {
                    // The clipped ranges (the loop's bounds stay the blocks' own): eight whole
                    // groups at once where the row's largest two give them, else each group.
                    let at = i0 * self.source.size;
                    let tops = &*self.source.clip;
                    let eight = (m == PARAM_LANES)
                        .then(|| clip::percentile8(tops, ctx.config, &ranks, at, &ex))
                        .flatten();
                    let [clo, chi, cex] = if let Some(eight) = eight {
                        eight
                    } else {
                        let (mut clo, mut chi, mut cex) = (lo, hi, ex);
                        for j in 0..m {
                            let full = RealRange {
                                lo: lo[j],
                                hi: hi[j],
                                extreme: ex[j],
                            };
                            let xs = self.values(i0 + j);
                            let at = Some((i0 + j) * self.source.size);
                            let clip = &mut *self.source.clip;
                            let r =
                                clip::percentile_clipped(clip, ctx.config, xs, full, &ranks, at);
                            (clo[j], chi[j], cex[j]) = (r.lo, r.hi, r.extreme);
                        }
                        [clo, chi, cex]
                    };
                    ctx.calc.lanes8::<COUNTS>(simd, &clo, &chi, &cex)
                }
                MSE => {
                    // Lanes past the last block repeat it (their results are dropped).
                    let last = m - 1;
                    let xs = std::array::from_fn(|j| self.values(i0 + j.min(last)));
                    (lo, hi, ex) = (
                        std::array::from_fn(|j| lo[j.min(last)]),
                        std::array::from_fn(|j| hi[j.min(last)]),
                        std::array::from_fn(|j| ex[j.min(last)]),
                    );
                    let q = (ctx.qmin, ctx.qmax);
                    let Some([clo, chi, cex]) =
                        clip::mse_lanes(self.source.clip, &ctx.calc, kind, &xs, [&lo, &hi, &ex], q)
                    else {
                        // Searched block by block.
                        for i in i0..i0 + m {
                            if let Err(f) = self.one(i, consts, blocks)? {
                                return Some(Err(f));
                            }
                        }
                        i0 += m;
                        continue;
                    };
                    ctx.calc.lanes8::<COUNTS>(simd, &clo, &chi, &cex)
                }
                _ => ctx.calc.lanes8::<COUNTS>(simd, &lo, &hi, &ex),
            };
            let (k, fast) = consts8_lanes(simd, kind, &p8, &lo, &hi, ctx.qmin, ctx.qmax);
            if !COUNTS && m == PARAM_LANES && fast == [true; PARAM_LANES] {
                // Eight blocks for the loop and no records: their constants at once.
                self.test_clamp8(simd, kind, &k, (&lo, &hi), m);
                k.append_blocks(simd, consts);
                self.source
                    .flat
                    .add8(&p8.scale, p8.float_min.then_some(&p8.offset));
                i0 += m;
                continue;
            }
            // Blocks past the last group of eight, or with records, or some not for the loop.
            self.sym = None;
            if !COUNTS && fast.iter().take(m).all(|&f| f) {
                self.test_clamp8(simd, kind, &k, (&lo, &hi), m);
            } else {
                self.clamp = Clamp::Any;
            }
            let k8 = k.blocks(simd);
            for j in 0..m {
                let i = i0 + j;
                if fast[j] {
                    consts.push(k8[j]);
                    let offset = p8.float_min.then_some(p8.offset[j]);
                    self.source.flat.add_stored(p8.scale[j], offset);
                    if let (true, Some(slot), Some(p)) = (COUNTS, blocks.get_mut(i), p8.get(j)) {
                        let st = BlockStats {
                            min: lo[j],
                            max: hi[j],
                            extreme: ex[j],
                            count: self.values(i).len(),
                        };
                        *slot = record(&p, &st, 0);
                    }
                } else if p8.ok[j] {
                    // Parameters the specialised loop does not take.
                    return None;
                } else if let Err(f) = self.one(i, consts, blocks)? {
                    return Some(Err(f));
                }
            }
            i0 += m;
        }
        Some(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::chosen_bits;

    /// Every choice of halves (`second`) against every third pattern of the halves' bits:
    /// each group's bit is its chosen half's, as a loop over the groups gives it.
    #[test]
    fn each_group_takes_its_chosen_halfs_bit() {
        for halves in (0..1u32 << 16).step_by(3) {
            for second in 0..1u32 << 8 {
                let want = (0..8).fold(0u8, |bits, j| {
                    let c = 2 * j + ((second >> j) & 1);
                    bits | (((halves >> c) & 1) as u8) << j
                });
                assert_eq!(chosen_bits(halves, second), want, "{halves:#x} {second:#x}");
            }
        }
    }
}
