//! The ladder's other rungs, all in one pass over the matrix: per row, every rung's blocks
//! and error sums, while the row is in cache. The codes are stored only where a row's
//! collapse cannot be read from its blocks' ends (see `rung_row`).

use super::batch::{Buffers, batch};
use super::{
    Ctx, Failure, LANES, Plan, RowQuant, Scratch, code_range, needs_chunks, quantize_row,
    row_slice, rows_per_task, run_tasks, sums,
};
use crate::core::config::{Clipping, Scheme};
use crate::core::kernel::segment::{Clamp, Code, Kind, Lanes, clamp_of, one_code, run_prepared};
use crate::core::params::BlockStats;
use crate::core::report::{ErrorSums, Layout, Metrics};

/// One rung's per-row results.
pub(crate) struct RungRows {
    /// Each row's metrics, in row order.
    pub channels: Vec<Metrics>,
    /// The rows' sums merged in row order (as the whole matrix's are).
    pub total: ErrorSums,
    /// Rows that collapse to one code or one value.
    pub collapsed: usize,
}

/// Quantizes every row under each of `plans` (the ladder's other rungs) in one pass over the
/// matrix. `main` gives each row's statistics and `Σx²`. The rows go in slices of a few
/// tasks per thread; after each slice `progress` is told the rows done and all rows (`None`
/// when it returns false).
pub(crate) fn ladder_pass<T: Code>(
    ctx: &Ctx<'_>,
    plans: &[Plan],
    row_stats: &[BlockStats],
    main_sums: &[ErrorSums],
    progress: &mut dyn FnMut(usize, usize) -> bool,
) -> Option<Vec<Result<RungRows, Failure>>> {
    let (rows, cols) = ctx.view.dim();
    // A large matrix goes in eight slices of rows, each in sixteen tasks per thread (of at
    // least `MIN_TASK` values), so that progress shows eight times whatever the number of
    // threads, and the threads stay busy within a slice: rows differ in cost, and with two
    // tasks per thread one thread often waited for the other at the end of each slice (the
    // unclipped ladder on 4096x4096 took 5-12 % less time with sixteen, in interleaved runs).
    let (rpt, per_slice) = if rows * cols > SLICED {
        let per_slice = rows.div_ceil(SLICES);
        let threads = rayon::current_num_threads().max(1);
        let rpt = per_slice
            .div_ceil(16 * threads)
            .max(MIN_TASK.div_ceil(cols.max(1)))
            .min(per_slice);
        (rpt, per_slice)
    } else {
        (rows_per_task(rows, cols).max(1), rows.max(1))
    };
    let mut rungs: Vec<Result<RungRows, Failure>> = plans
        .iter()
        .map(|_| {
            Ok(RungRows {
                channels: Vec::with_capacity(rows),
                total: ErrorSums::default(),
                collapsed: 0,
            })
        })
        .collect();
    for start in (0..rows).step_by(per_slice) {
        let end = (start + per_slice).min(rows);
        let tasks: Vec<usize> = (start..end).step_by(rpt).collect();
        let results = slice::<T>(ctx, plans, row_stats, main_sums, tasks, (rpt, end));
        for task in results {
            for (rung, out) in rungs.iter_mut().zip(task) {
                let Ok(acc) = rung else { continue };
                match out {
                    Ok((sums, metrics, collapsed)) => {
                        for s in &sums {
                            acc.total.merge(s);
                        }
                        acc.channels.extend(metrics);
                        acc.collapsed += collapsed;
                    }
                    Err(f) => *rung = Err(f),
                }
            }
        }
        if !progress(end, rows) {
            return None;
        }
    }
    Some(rungs)
}

/// Values from which the ladder goes in slices, with its progress after each.
const SLICED: usize = 1 << 18;

/// Slices of a large matrix's ladder.
const SLICES: usize = 8;

/// Fewest values of a task of a sliced ladder.
const MIN_TASK: usize = 1 << 14;

/// Each rung's per-row sums, per-row metrics (formed in the task, in parallel, rather than
/// row by row after the pass) and collapsed rows, per task.
type TaskOut = Vec<Result<(Vec<ErrorSums>, Vec<Metrics>, usize), Failure>>;

/// The tasks starting at rows `tasks`, each of `rpt` rows (none past `end`), in parallel.
fn slice<T: Code>(
    ctx: &Ctx<'_>,
    plans: &[Plan],
    row_stats: &[BlockStats],
    main_sums: &[ErrorSums],
    tasks: Vec<usize>,
    (rpt, end): (usize, usize),
) -> Vec<TaskOut> {
    let cols = ctx.view.ncols();
    run_tasks(
        tasks,
        #[inline(always)]
        |r0| {
            let r1 = (r0 + rpt).min(end);
            let mut codes = vec![T::default(); cols];
            let mut none = vec![(); cols];
            let kind = Kind::of(ctx.config);
            let mut scratch = Scratch::default();
            let mut row_buf = Vec::new();
            let mut bufs = Buffers::default();
            let chunks = plans.iter().any(needs_chunks);
            let percentile = matches!(ctx.config.clipping, Clipping::Percentile(_));
            let symmetric = ctx.config.scheme == Scheme::Symmetric;
            // The largest group, in chunks, of the rungs that read them.
            let per_max = plans
                .iter()
                .filter(|p| needs_chunks(p))
                .map(|p| match p {
                    Plan::RowWise { size, .. } => size / LANES,
                    Plan::Global { .. } => 0,
                })
                .max()
                .unwrap_or(0);
            let mut outs: TaskOut = plans
                .iter()
                .map(|_| Ok((Vec::with_capacity(r1 - r0), Vec::with_capacity(r1 - r0), 0)))
                .collect();
            for r in r0..r1 {
                let row = row_slice(&ctx.view, r, &mut row_buf);
                let st = &row_stats[r];
                if chunks {
                    scratch.chunks.fill(row);
                    scratch.chunks.merge_runs(per_max);
                    if percentile {
                        // Every group's largest two (and, unless symmetric, smallest two)
                        // for all the rungs at once.
                        let run = (per_max * LANES).next_power_of_two();
                        let tops = &mut scratch.clip.tops;
                        tops.fill(row, symmetric, [true, !symmetric], run);
                    }
                }
                // Finest groups first: a rung of nested groups takes its blocks' constants
                // from the rung of half its group size (see `batch`).
                for (plan, out) in plans.iter().zip(&mut outs).rev() {
                    let Ok((sums_out, metrics_out, collapsed)) = out else {
                        continue;
                    };
                    let (codes, none) = (&mut codes[..], &mut none[..]);
                    let q = rung_row(
                        ctx,
                        plan,
                        kind,
                        r,
                        row,
                        st,
                        codes,
                        none,
                        &mut scratch,
                        &mut bufs,
                    );
                    match q {
                        Ok((q, one)) => {
                            let s = sums(&q.lanes, Some(main_sums[r].signal), cols);
                            metrics_out.push(s.metrics());
                            sums_out.push(s);
                            *collapsed += usize::from(st.min != st.max && (one || q.flat));
                        }
                        Err(f) => *out = Err(f),
                    }
                }
            }
            outs
        },
    )
}

/// Row `r` (`row`, whose statistics are `st`) under one rung's `plan`: its errors, and whether
/// it has one code. The loop stores no codes where that can be read from the blocks' ends
/// ([`one_code`]): a tensor block in the loop, and rows of groups that [`batch`] takes.
/// Other rows are quantized into `codes` and their codes compared.
#[expect(
    clippy::too_many_arguments,
    reason = "the row, its rung, its outputs and its scratch, borrowed for one call"
)]
#[inline(always)]
fn rung_row<T: Code>(
    ctx: &Ctx<'_>,
    plan: &Plan,
    kind: Kind,
    r: usize,
    row: &[f32],
    st: &BlockStats,
    codes: &mut [T],
    none: &mut [()],
    scratch: &mut Scratch,
    bufs: &mut Buffers,
) -> Result<(RowQuant, bool), Failure> {
    if let Plan::Global {
        layout: Layout::Tensor,
        prepared,
        flat,
        ..
    } = plan
        && let Some(p) = prepared.first().filter(|p| p.is_fast())
    {
        // One block: the row's codes run from its smallest value's to its largest's.
        let mut lanes = Lanes::ZERO;
        // The row tested with its own ends (the block's, the tensor's, are wider).
        let clamp = clamp_of(kind, &p.consts(), st.min, st.max);
        if clamp != Clamp::Any && kind.exact_errors() {
            // Errors formed in f32 (see `run_prepared`): the row as one block of the loop
            // over prepared blocks, the same sums as the block's own loop.
            let size = row.len().next_multiple_of(LANES).max(LANES);
            run_prepared(
                kind,
                &[p.consts()],
                size,
                row,
                none,
                &mut lanes,
                &[],
                None,
                clamp,
                &[],
            );
        } else {
            p.run::<(), false>(row, 0, none, &mut lanes);
        }
        let one = one_code(kind, &[p.consts()], 1, &[st.min], &[st.max]);
        let q = RowQuant {
            lanes,
            clipped: 0,
            flat: *flat,
        };
        return Ok((q, one));
    }
    match batch::<(), false>(ctx, plan, r, row, st, none, &mut [], scratch, bufs) {
        Some(Ok(q)) => {
            let size = match plan {
                Plan::RowWise { size, .. } => *size,
                Plan::Global { .. } => row.len(),
            };
            Ok((q, bufs.one_code(kind, size, &scratch.chunks)))
        }
        Some(Err(f)) => Err(f),
        None => {
            let q =
                quantize_row::<T, false>(ctx, plan, r, row, st, codes, &mut [], &mut [], scratch)?;
            let (lo, hi) = code_range(codes);
            Ok((q, lo == hi))
        }
    }
}
