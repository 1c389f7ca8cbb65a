//! The quantize-and-measure passes, parallel over rows.
//!
//! A *plan* says where a granularity's blocks come from:
//!
//! - [`Plan::RowWise`] (per-row channels, groups): a row's blocks depend on that row alone, so
//!   statistics, parameters and codes are computed row by row while the row is in cache, and
//!   nothing is kept per block except, for the active configuration, its record.
//! - [`Plan::Global`] (tensor, per-column channels): blocks span rows, so their statistics and
//!   parameters are computed first ([`plan`]) and the rows are then quantized with them.
//!
//! Rows are split into contiguous tasks that run on rayon's pool; every per-row result is
//! computed from that row alone and the rows are combined in row order afterwards, so results
//! do not depend on the number of threads.
//!
//! Each task runs inside [`vectorised`], so the row loop and everything it inlines is
//! compiled for the CPU's widest vector instructions.

#![expect(
    clippy::inline_always,
    reason = "the row loop must inline into the vectorised task body (see vectorised)"
)]

use ndarray::ArrayView2;
use rayon::prelude::*;

use crate::core::clip;
use crate::core::config::{Clipping, Config};
use crate::core::importance::Importance;
use crate::core::kernel::Quantizer;
use crate::core::kernel::segment::{
    BlockSource, Code, Kind, LANES, Lanes, Prepared, run_row, scalar_value,
};
use crate::core::params::{BlockParams, BlockStats, ParamCalc, ParamProblem};
use crate::core::report::{ErrorSums, Layout, Record, record};
use crate::core::simd::vectorised;
use crate::core::stats::{ChunkStats, block_stats, merge, merge_is_exact};

mod active;
mod batch;
mod distinct;
mod ladder;

pub(crate) use active::main_pass;
pub(crate) use ladder::ladder_pass;

/// A block that cannot be quantized: its index and why.
pub(crate) type Failure = (usize, ParamProblem);

/// The analysis context shared by every pass.
#[derive(Clone, Copy)]
pub(crate) struct Ctx<'a> {
    pub view: ArrayView2<'a, f32>,
    pub config: &'a Config,
    /// The range codes are clamped into ([`Config::clamp_range`]): the kernels' `qmin` and
    /// `qmax`, and what stored codes are offsets from.
    pub qmin: i32,
    pub qmax: i32,
    /// The code range the scales are formed for ([`Config::code_range`]), which levels and
    /// utilization are measured against.
    pub range: (i32, i32),
    /// The block-parameter formulas of `config` (the same at every granularity).
    pub calc: ParamCalc,
    /// The importance of each column, for [`Clipping::MseWeighted`] (which is the MSE search
    /// without it).
    pub importance: Option<&'a Importance>,
}

/// Where a block's values lie in the matrix, for the importance of each one's column.
#[derive(Clone, Copy)]
enum Place {
    /// Consecutive values of row `row` from column `col`.
    Run { row: usize, col: usize },
    /// The whole matrix, row after row.
    Tensor,
    /// Column `col`, top to bottom.
    Column(usize),
}

/// A block's parameters with the configuration's clipping: [`clip::params`], or with
/// importance-weighted MSE clipping and an importance vector, the weighted search over the
/// importance of the columns of `place`.
#[inline(always)]
fn block_params(
    ctx: &Ctx<'_>,
    scratch: &mut clip::Scratch,
    xs: &[f32],
    st: &BlockStats,
    place: Place,
) -> BlockParams {
    let (Clipping::MseWeighted, Some(imp)) = (ctx.config.clipping, ctx.importance) else {
        return clip::params(scratch, &ctx.calc, ctx.config, xs, st, ctx.qmin, ctx.qmax);
    };
    let (rows, cols) = ctx.view.dim();
    let q = (ctx.qmin, ctx.qmax);
    let form = |range| ctx.calc.params(range);
    match place {
        Place::Run { row, col } => {
            let a = imp.row(row, rows).get(col..).unwrap_or_default();
            let weight = |i: usize| a.get(i).copied().unwrap_or(0.0);
            clip::weighted_params(ctx.config, xs, weight, st, q, form)
        }
        Place::Tensor => {
            let weight = |i: usize| {
                let (r, c) = (i / cols.max(1), i % cols.max(1));
                imp.row(r, rows).get(c).copied().unwrap_or(0.0)
            };
            clip::weighted_params(ctx.config, xs, weight, st, q, form)
        }
        Place::Column(col) => {
            let weight = |r: usize| imp.row(r, rows).get(col).copied().unwrap_or(0.0);
            clip::weighted_params(ctx.config, xs, weight, st, q, form)
        }
    }
}

/// Where one granularity's blocks come from (see the module documentation).
pub(crate) enum Plan {
    RowWise {
        layout: Layout,
        /// Blocks per row.
        per_row: usize,
        /// Values per block (the last block of a row may be shorter).
        size: usize,
    },
    Global {
        layout: Layout,
        stats: Vec<BlockStats>,
        params: Vec<BlockParams>,
        /// The tensor's block prepared for the loop.
        prepared: Vec<Prepared>,
        /// Each column's reference quantizer (per-column blocks change with every value).
        quantizers: Vec<Quantizer>,
        /// Every block stores a zero scale with one offset (see [`Flat`]).
        flat: bool,
    },
}

impl Plan {
    pub(crate) fn layout(&self) -> Layout {
        match self {
            Self::RowWise { layout, .. } | Self::Global { layout, .. } => *layout,
        }
    }
}

/// The plan of `layout`; for a global layout, its blocks' statistics and parameters.
/// `row_stats`, when given, are the statistics of every row.
pub(crate) fn plan(
    ctx: &Ctx<'_>,
    layout: Layout,
    row_stats: Option<&[BlockStats]>,
) -> Result<Plan, Failure> {
    let cols = ctx.view.ncols();
    let (stats, params) = match layout {
        Layout::Rows => {
            return Ok(Plan::RowWise {
                layout,
                per_row: 1,
                size: cols,
            });
        }
        Layout::Groups { size, per_row } => {
            return Ok(Plan::RowWise {
                layout,
                per_row,
                size,
            });
        }
        Layout::Tensor => {
            let st = tensor_stats(ctx, row_stats);
            let owned: Vec<f32>;
            let values = match (ctx.config.clipping, ctx.view.as_slice()) {
                (Clipping::None, _) => &[][..],
                (_, Some(s)) => s,
                (_, None) => {
                    owned = ctx.view.iter().copied().collect();
                    &owned
                }
            };
            let mut scratch = clip::Scratch::default();
            let p = block_params(ctx, &mut scratch, values, &st, Place::Tensor);
            (vec![st], vec![p])
        }
        Layout::Columns => {
            let stats = column_stats(&ctx.view);
            let clipping = ctx.config.clipping != Clipping::None;
            let params: Vec<BlockParams> = stats
                .par_iter()
                .enumerate()
                .map_init(
                    || (clip::Scratch::default(), Vec::new()),
                    |(scratch, column), (c, st)| {
                        column.clear();
                        if clipping {
                            column.extend(ctx.view.column(c).iter().copied());
                        }
                        block_params(ctx, scratch, column, st, Place::Column(c))
                    },
                )
                .collect();
            (stats, params)
        }
    };
    if let Some(failure) = params
        .iter()
        .enumerate()
        .find_map(|(b, p)| p.problem.map(|q| (b, q)))
    {
        return Err(failure);
    }
    let (prepared, quantizers) = if layout == Layout::Tensor {
        let prepared = params
            .iter()
            .zip(&stats)
            .map(|(p, st)| Prepared::new(ctx.config, p, ctx.qmin, ctx.qmax, st))
            .collect();
        (prepared, Vec::new())
    } else {
        let quantizers = params
            .iter()
            .map(|p| Quantizer::new(ctx.config, p, ctx.qmin, ctx.qmax))
            .collect();
        (Vec::new(), quantizers)
    };
    let mut flat = Flat::default();
    for p in &params {
        flat.add(p);
    }
    Ok(Plan::Global {
        layout,
        stats,
        params,
        prepared,
        quantizers,
        flat: flat.is_flat(),
    })
}

/// The whole matrix's statistics, as value-by-value extension in row-major order gives them.
fn tensor_stats(ctx: &Ctx<'_>, row_stats: Option<&[BlockStats]>) -> BlockStats {
    let owned;
    let rows = if let Some(r) = row_stats {
        r
    } else {
        owned = (0..ctx.view.nrows())
            .into_par_iter()
            .map(|r| {
                let row = ctx.view.row(r);
                match row.as_slice() {
                    Some(s) => block_stats(s),
                    None => block_stats(&row.to_vec()),
                }
            })
            .collect::<Vec<_>>();
        &owned
    };
    let st = rows.iter().fold(BlockStats::EMPTY, |a, b| merge(&a, b));
    if merge_is_exact(&st) {
        st
    } else {
        let mut st = BlockStats::EMPTY;
        for &x in &ctx.view {
            st.push(x);
        }
        st
    }
}

/// Every column's statistics, each extended value by value down the rows.
fn column_stats(view: &ArrayView2<'_, f32>) -> Vec<BlockStats> {
    const STRIP: usize = 64;
    let cols = view.ncols();
    let mut stats = vec![BlockStats::EMPTY; cols];
    stats
        .par_chunks_mut(STRIP)
        .enumerate()
        .for_each(|(i, strip)| {
            let c0 = i * STRIP;
            for row in view.rows() {
                for (st, &x) in strip.iter_mut().zip(row.iter().skip(c0)) {
                    st.push(x);
                }
            }
        });
    stats
}

/// What quantizing one row under one plan found.
pub(super) struct RowQuant {
    pub lanes: Lanes,
    pub clipped: usize,
    /// Every block of the row stores a zero scale with one offset (see [`Flat`]).
    pub flat: bool,
}

/// Whether a set of blocks all store a scale of 0 with one offset, so that every value they
/// hold reconstructs to that one value whatever its code (`(q − z)·0`, or `q·0 + min`): an
/// f16 scale that rounds to 0 (GGUF blocks of values below about 4e-6) does this.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Flat {
    /// A block was added.
    seen: bool,
    /// The first block's stored offset.
    offset: Option<f32>,
    /// A block stored a nonzero scale, or another offset than the first.
    broken: bool,
}

impl Flat {
    /// Blocks added without an offset, `nonzero` when any stored a nonzero scale.
    #[inline(always)]
    pub(super) fn of_scales(nonzero: bool) -> Self {
        Self {
            seen: true,
            offset: None,
            broken: nonzero,
        }
    }

    /// Adds a block's parameters.
    #[inline(always)]
    pub(super) fn add(&mut self, p: &BlockParams) {
        self.add_stored(p.scale, p.offset);
    }

    /// Adds a block by its stored scale and offset.
    #[inline(always)]
    pub(super) fn add_stored(&mut self, scale: f32, offset: Option<f32>) {
        if !self.seen {
            self.seen = true;
            self.offset = offset;
        }
        self.broken |= scale != 0.0 || self.offset != offset;
    }

    /// Adds eight blocks by their stored scales and offsets, as [`Flat::add_stored`] does
    /// one at a time.
    #[inline(always)]
    #[expect(
        clippy::needless_bitwise_bool,
        reason = "each test over the eight lanes without a branch per lane"
    )]
    pub(super) fn add8(&mut self, scale: &[f32; 8], offset: Option<&[f32; 8]>) {
        if !self.seen {
            self.seen = true;
            self.offset = offset.map(|o| o[0]);
        }
        let nonzero = scale.iter().fold(false, |a, &s| a | (s != 0.0));
        // `Option<f32>` equality: both absent, or both present and equal as floats.
        let moved = match (offset, self.offset) {
            (Some(o), Some(first)) => o.iter().fold(false, |a, &x| a | (x != first)),
            (None, None) => false,
            _ => true,
        };
        self.broken |= nonzero | moved;
    }

    /// Blocks were added, and all store a zero scale with one offset.
    pub(super) fn is_flat(&self) -> bool {
        self.seen && !self.broken
    }
}

/// Per-task scratch of the row loop, reused from row to row.
#[derive(Default)]
pub(super) struct Scratch {
    /// The row's chunks ([`LANES`] values wide in the ladder, one group wide in the active
    /// pass).
    pub chunks: ChunkStats,
    /// The clipping searches' buffers.
    pub clip: clip::Scratch,
}

/// The blocks of one row under a row-wise plan, prepared one at a time as the kernel
/// reaches them; for the active configuration (`COUNTS`), each finished block's record
/// goes into `blocks`.
struct RowSource<'a, 'c, const COUNTS: bool> {
    ctx: &'a Ctx<'c>,
    per_row: usize,
    size: usize,
    r: usize,
    stats_of_row: &'a BlockStats,
    chunks: &'a ChunkStats,
    clip: &'a mut clip::Scratch,
    blocks: &'a mut [Record],
    /// The parameters and statistics of the block being run (kept for its record).
    current: Option<(BlockParams, BlockStats)>,
    /// The blocks prepared so far.
    flat: Flat,
}

impl<const COUNTS: bool> BlockSource for RowSource<'_, '_, COUNTS> {
    type Error = Failure;
    const COUNTS: bool = COUNTS;
    // The active configuration's pass measures each row's signal; the ladder reuses it.
    const SIGNAL: bool = COUNTS;

    #[inline(always)]
    fn prepare(&mut self, i: usize, xs: &[f32]) -> Result<Prepared, Failure> {
        let ctx = self.ctx;
        let st = if self.per_row == 1 {
            *self.stats_of_row
        } else if self.size.is_multiple_of(LANES) {
            self.chunks.group(i * self.size / self.chunks.width(), xs)
        } else {
            block_stats(xs)
        };
        let place = Place::Run {
            row: self.r,
            col: i * self.size,
        };
        let p = block_params(ctx, self.clip, xs, &st, place);
        if let Some(problem) = p.problem {
            return Err((self.r * self.per_row + i, problem));
        }
        self.flat.add(&p);
        if COUNTS {
            self.current = Some((p, st));
        }
        Ok(Prepared::new(ctx.config, &p, ctx.qmin, ctx.qmax, &st))
    }

    #[inline(always)]
    fn finished(&mut self, i: usize, clipped: usize) {
        if let (Some(slot), Some((p, st))) = (self.blocks.get_mut(i), &self.current) {
            *slot = record(p, st, clipped);
        }
    }
}

/// Quantizes row `r` under `plan`: codes into `codes`, and for a row-wise plan the row's
/// blocks into `blocks` (when not empty), and for per-column blocks the clamp counts into
/// `col_clipped` (when not empty). `scratch.chunks` must hold the row's chunks when
/// [`needs_chunks`].
#[expect(
    clippy::too_many_arguments,
    reason = "the row, its outputs and its scratch, all borrowed for one call"
)]
#[inline(always)]
pub(super) fn quantize_row<T: Code, const COUNTS: bool>(
    ctx: &Ctx<'_>,
    plan: &Plan,
    r: usize,
    row: &[f32],
    stats_of_row: &BlockStats,
    codes: &mut [T],
    blocks: &mut [Record],
    col_clipped: &mut [usize],
    scratch: &mut Scratch,
) -> Result<RowQuant, Failure> {
    let mut acc = RowQuant {
        lanes: Lanes::ZERO,
        clipped: 0,
        flat: false,
    };
    match plan {
        Plan::RowWise { per_row, size, .. } => {
            let mut source = RowSource::<COUNTS> {
                ctx,
                per_row: *per_row,
                size: *size,
                r,
                stats_of_row,
                chunks: &scratch.chunks,
                clip: &mut scratch.clip,
                blocks,
                current: None,
                flat: Flat::default(),
            };
            let kind = Kind::of(ctx.config);
            let lanes = &mut acc.lanes;
            // The next row (the last row's own), fetched while this one is computed.
            let next = ctx.view.row((r + 1).min(ctx.view.nrows() - 1));
            let ahead = next.to_slice().unwrap_or_default();
            acc.clipped = run_row(kind, &mut source, *size, row, 0, codes, lanes, ahead)?;
            acc.flat = source.flat.is_flat();
        }
        Plan::Global {
            layout: Layout::Tensor,
            prepared,
            flat,
            ..
        } => {
            // The ladder (not `COUNTS`) takes the signal from the active pass.
            acc.clipped = prepared[0].run::<T, COUNTS>(row, 0, codes, &mut acc.lanes);
            acc.flat = *flat;
        }
        Plan::Global {
            quantizers, flat, ..
        } => {
            acc.flat = *flat;
            let lanes = &mut acc.lanes;
            for (c, ((&x, code), q)) in row.iter().zip(codes).zip(quantizers).enumerate() {
                let (_, clamped) = scalar_value(q, c % LANES, x, code, lanes);
                acc.clipped += usize::from(clamped);
                if let Some(n) = col_clipped.get_mut(c) {
                    *n += usize::from(clamped);
                }
            }
        }
    }
    Ok(acc)
}

/// Whether `plan` reads the row's [`ChunkStats`].
pub(super) fn needs_chunks(plan: &Plan) -> bool {
    matches!(plan, Plan::RowWise { per_row, size, .. } if *per_row > 1 && size.is_multiple_of(LANES))
}

/// The smallest and largest code offsets of a row.
#[inline(always)]
pub(super) fn code_range<T: Code>(codes: &[T]) -> (i32, i32) {
    let lo = codes.iter().copied().min().map_or(0, Code::index);
    let hi = codes.iter().copied().max().map_or(0, Code::index);
    (lo as i32, hi as i32)
}

/// A row's sums; the signal is `signal`, or the one `lanes` measured.
#[inline(always)]
pub(super) fn sums(lanes: &Lanes, signal: Option<f64>, count: usize) -> ErrorSums {
    let t = lanes.totals();
    ErrorSums {
        abs: t.abs,
        sq: t.sq,
        max: t.max,
        signal: signal.unwrap_or(t.signal),
        count,
    }
}

/// Rows per task: enough tasks to balance the pool, one task for small matrices.
pub(super) fn rows_per_task(rows: usize, cols: usize) -> usize {
    const SMALL: usize = 1 << 16;
    if rows * cols <= SMALL {
        return rows.max(1);
    }
    let tasks = rayon::current_num_threads().max(1) * 8;
    rows.div_ceil(tasks)
        .max(SMALL.div_ceil(cols.max(1)))
        .clamp(1, rows.max(1))
}

/// Runs `f` on every task, in parallel unless there is only one.
pub(super) fn run_tasks<I: Send, O: Send>(
    tasks: Vec<I>,
    f: impl Fn(I) -> O + Sync + Send,
) -> Vec<O> {
    let run = |task| {
        vectorised(
            #[inline(always)]
            || f(task),
        )
    };
    if tasks.len() <= 1 {
        tasks.into_iter().map(run).collect()
    } else {
        tasks.into_par_iter().map(run).collect()
    }
}

/// A row as a slice (copied into `scratch` when the view's rows are not contiguous).
#[inline(always)]
pub(super) fn row_slice<'a>(
    view: &'a ArrayView2<'_, f32>,
    r: usize,
    scratch: &'a mut Vec<f32>,
) -> &'a [f32] {
    let row = view.row(r);
    if let Some(s) = row.to_slice() {
        return s;
    }
    scratch.clear();
    scratch.extend(row.iter());
    scratch
}
