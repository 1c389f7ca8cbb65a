//! The active configuration's pass: every row's codes, blocks and channel report.

#![expect(
    clippy::inline_always,
    reason = "the row loop must inline into the vectorised task body (see super::vectorised)"
)]

use super::batch::{Buffers, batch};
use super::distinct::{Counted, Distinct};
use super::{
    Ctx, Failure, Plan, Scratch, needs_chunks, quantize_row, row_slice, rows_per_task, run_tasks,
    sums,
};
use crate::core::kernel::segment::Code;
use crate::core::pages::Pages;
use crate::core::params::BlockStats;
use crate::core::report::{ChannelReport, ErrorSums, Layout, Record, record};
use crate::core::stats::block_stats;

/// The active configuration's pass: codes, blocks, channels.
pub(crate) struct MainPass<T> {
    /// Every code, when kept (empty otherwise).
    pub codes: Pages<T>,
    /// The blocks' records (see [`crate::core::report::Blocks`]).
    pub blocks: Pages<Record>,
    pub channels: Vec<ChannelReport>,
    /// Per-row error sums (their `signal` is reused by the ladder).
    pub sums: Vec<ErrorSums>,
    /// Per-row statistics.
    pub row_stats: Vec<BlockStats>,
}

struct MainRow {
    channel: ChannelReport,
    sums: ErrorSums,
    stats: BlockStats,
}

/// Per-task state of the active pass.
struct Task {
    /// Clamp counts per column (per-column blocks only).
    col_clipped: Vec<usize>,
    distinct: Distinct,
    scratch: Scratch,
    batch: Buffers,
    row_buf: Vec<f32>,
}

/// Row `r` under the active configuration: its codes into `codes`, its blocks (row-wise
/// plans) into `blocks`, its channel report.
#[inline(always)]
fn row<T: Code>(
    ctx: &Ctx<'_>,
    plan: &Plan,
    r: usize,
    codes: &mut [T],
    blocks: &mut [Record],
    task: &mut Task,
) -> Result<MainRow, Failure> {
    let cols = ctx.view.ncols();
    let values = row_slice(&ctx.view, r, &mut task.row_buf);
    // Groups read the row's chunks; the row's own statistics then follow from them.
    let st = if let (true, Plan::RowWise { size, .. }) = (needs_chunks(plan), plan) {
        // One chunk per group: the loop reads only the groups' statistics.
        task.scratch.chunks.fill_wide(values, *size);
        task.scratch.chunks.group(0, values)
    } else {
        block_stats(values)
    };
    let s = &mut task.scratch;
    let q = match batch::<T, true>(ctx, plan, r, values, &st, codes, blocks, s, &mut task.batch) {
        Some(q) => q?,
        None => quantize_row::<T, true>(
            ctx,
            plan,
            r,
            values,
            &st,
            codes,
            blocks,
            &mut task.col_clipped,
            s,
        )?,
    };
    let Counted {
        used: levels_used,
        lo,
        hi,
    } = task.distinct.count(codes);
    let (min_code, max_code) = (ctx.qmin + lo, ctx.qmin + hi);
    let constant = st.min == st.max;
    let s = sums(&q.lanes, None, cols);
    let (qmin, qmax) = ctx.range;
    Ok(MainRow {
        channel: ChannelReport {
            index: r,
            label: None,
            metrics: s.metrics(),
            levels_used,
            levels_available: (qmax - qmin + 1) as u32,
            utilization: f64::from(max_code - min_code) / f64::from(qmax - qmin),
            collapsed: !constant && (levels_used == 1 || q.flat),
            constant,
            min_code,
            max_code,
            clipped: q.clipped,
            min: st.min,
            max: st.max,
        },
        sums: s,
        stats: st,
    })
}

/// Quantizes every row under the active configuration's `plan`. With `keep_codes` the
/// codes are kept in [`MainPass::codes`]; otherwise each task writes its rows' codes into
/// one row of its own, read there for the levels used, and [`MainPass::codes`] is empty.
pub(crate) fn main_pass<T: Code>(
    ctx: &Ctx<'_>,
    plan: &Plan,
    keep_codes: bool,
) -> Result<MainPass<T>, Failure> {
    let (rows, cols) = ctx.view.dim();
    let layout = plan.layout();
    let levels = (ctx.qmax - ctx.qmin + 1) as u32;
    let mut codes = if keep_codes {
        Pages::<T>::zeroed(rows * cols)
    } else {
        Pages::Heap(Vec::new())
    };
    let (mut blocks, per_row) = match plan {
        Plan::RowWise { per_row, .. } => (Pages::zeroed(rows * per_row), *per_row),
        Plan::Global { .. } => (Pages::Heap(Vec::new()), 0),
    };
    let per_col = matches!(layout, Layout::Columns);
    let rpt = rows_per_task(rows, cols);
    let tasks: Vec<_> = {
        let mut block_chunks: Box<dyn Iterator<Item = &mut [Record]>> = if per_row > 0 {
            Box::new(blocks.chunks_mut(rpt * per_row))
        } else {
            Box::new(std::iter::repeat_with(<&mut [Record]>::default))
        };
        let mut code_chunks: Box<dyn Iterator<Item = &mut [T]>> = if keep_codes {
            Box::new(codes.chunks_mut(rpt * cols))
        } else {
            Box::new(std::iter::repeat_with(<&mut [T]>::default))
        };
        (0..rows)
            .step_by(rpt.max(1))
            .map(|r0| {
                let n = rpt.min(rows - r0);
                let kept = code_chunks.next().unwrap_or_default();
                (r0, n, kept, block_chunks.next().unwrap_or_default())
            })
            .collect()
    };
    let results = run_tasks(
        tasks,
        #[inline(always)]
        |(r0, n, kept, blocks)| -> Result<_, Failure> {
            let mut task = Task {
                col_clipped: vec![0usize; if per_col { cols } else { 0 }],
                distinct: Distinct::new(levels),
                scratch: Scratch::default(),
                batch: Buffers::default(),
                row_buf: Vec::new(),
            };
            // The row the codes go to when they are not kept (in cache, reused row by row).
            let mut own = if kept.is_empty() {
                vec![T::default(); cols]
            } else {
                Vec::new()
            };
            let mut out = Vec::with_capacity(n);
            for i in 0..n {
                let row_codes = kept
                    .get_mut(i * cols..(i + 1) * cols)
                    .unwrap_or(&mut own[..]);
                let row_blocks = blocks
                    .get_mut(i * per_row..(i + 1) * per_row)
                    .unwrap_or_default();
                out.push(row(ctx, plan, r0 + i, row_codes, row_blocks, &mut task)?);
            }
            Ok((out, task.col_clipped))
        },
    );
    let mut pass = MainPass {
        codes: Pages::Heap(Vec::new()),
        blocks: Pages::Heap(Vec::new()),
        channels: Vec::with_capacity(rows),
        sums: Vec::with_capacity(rows),
        row_stats: Vec::with_capacity(rows),
    };
    let mut col_clipped = vec![0usize; if per_col { cols } else { 0 }];
    for result in results {
        let (rows_out, cc) = result?;
        for (total, n) in col_clipped.iter_mut().zip(cc) {
            *total += n;
        }
        for row in rows_out {
            pass.channels.push(row.channel);
            pass.sums.push(row.sums);
            pass.row_stats.push(row.stats);
        }
    }
    if let Plan::Global { stats, params, .. } = plan {
        let total: usize = pass.channels.iter().map(|c| c.clipped).sum();
        blocks = Pages::Heap(
            params
                .iter()
                .zip(stats)
                .enumerate()
                .map(|(b, (p, st))| {
                    let clipped = col_clipped.get(b).copied().unwrap_or(total);
                    record(p, st, clipped)
                })
                .collect(),
        );
    }
    pass.codes = codes;
    pass.blocks = blocks;
    Ok(pass)
}
