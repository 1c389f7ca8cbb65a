//! The ladder's other rungs, all in one pass over the matrix: per row, every rung's blocks,
//! codes (discarded) and error sums, while the row is in cache.

use super::{
    Ctx, Failure, Plan, RowQuant, RowSource, Scratch, code_range, needs_chunks, quantize_row,
    row_slice, rows_per_task, run_tasks, sums,
};
use crate::core::config::Clipping;
use crate::core::kernel::segment::{
    BlockSource, Code, Consts, Kind, LANES, Lanes, consts8, run_prepared,
};
use crate::core::params::{BlockStats, PARAM_LANES};
use crate::core::report::ErrorSums;

/// One rung's per-row results.
pub(crate) struct RungRows {
    /// Per-row error sums, in row order.
    pub sums: Vec<ErrorSums>,
    /// Rows that collapse to one code.
    pub collapsed: usize,
}

/// Quantizes every row under each of `plans` (the ladder's other rungs) in one pass over the
/// matrix. `main` gives each row's statistics and `Σx²`.
pub(crate) fn ladder_pass<T: Code>(
    ctx: &Ctx<'_>,
    plans: &[Plan],
    row_stats: &[BlockStats],
    main_sums: &[ErrorSums],
) -> Vec<Result<RungRows, Failure>> {
    let (rows, cols) = ctx.view.dim();
    let rpt = rows_per_task(rows, cols);
    let tasks: Vec<usize> = (0..rows).step_by(rpt.max(1)).collect();
    let results = run_tasks(
        tasks,
        #[inline(always)]
        |r0| {
            let r1 = (r0 + rpt).min(rows);
            let mut codes = vec![T::default(); cols];
            let mut scratch = Scratch::default();
            let mut row_buf = Vec::new();
            let mut prepared = Vec::new();
            let chunks = plans.iter().any(needs_chunks);
            let mut outs: Vec<Result<(Vec<ErrorSums>, usize), Failure>> = plans
                .iter()
                .map(|_| Ok((Vec::with_capacity(r1 - r0), 0)))
                .collect();
            for r in r0..r1 {
                let row = row_slice(&ctx.view, r, &mut row_buf);
                let st = &row_stats[r];
                if chunks {
                    scratch.chunks.fill(row);
                }
                for (plan, out) in plans.iter().zip(&mut outs) {
                    let Ok((sums_out, collapsed)) = out else {
                        continue;
                    };
                    let s = &mut scratch;
                    let q = match batch(ctx, plan, r, row, st, &mut codes, s, &mut prepared) {
                        Some(q) => q,
                        None => quantize_row::<T, false>(
                            ctx,
                            plan,
                            r,
                            row,
                            st,
                            &mut codes,
                            &mut [],
                            &mut [],
                            s,
                        ),
                    };
                    match q {
                        Ok(q) => {
                            sums_out.push(sums(&q.lanes, Some(main_sums[r].signal), cols));
                            let (lo, hi) = code_range(&codes);
                            *collapsed += usize::from(st.min != st.max && lo == hi);
                        }
                        Err(f) => *out = Err(f),
                    }
                }
            }
            outs
        },
    );
    let mut rungs: Vec<Result<RungRows, Failure>> = plans
        .iter()
        .map(|_| {
            Ok(RungRows {
                sums: Vec::with_capacity(rows),
                collapsed: 0,
            })
        })
        .collect();
    for task in results {
        for (rung, out) in rungs.iter_mut().zip(task) {
            let Ok(acc) = rung else { continue };
            match out {
                Ok((sums, collapsed)) => {
                    acc.sums.extend(sums);
                    acc.collapsed += collapsed;
                }
                Err(f) => *rung = Err(f),
            }
        }
    }
    rungs
}

/// Row `r` under a row-wise `plan` whose blocks are whole chunks (see [`needs_chunks`]), with
/// every block prepared first and the row then run in one loop ([`run_prepared`]); `None`
/// for other plans, and for rows with a block the specialised loop does not take (the caller
/// then quantizes the row block by block). The codes, errors and failures are the same as
/// [`quantize_row`]'s; the clamp count is not counted (0).
#[expect(
    clippy::too_many_arguments,
    reason = "the row, its outputs and its scratch, all borrowed for one call"
)]
#[inline(always)]
fn batch<T: Code>(
    ctx: &Ctx<'_>,
    plan: &Plan,
    r: usize,
    row: &[f32],
    stats_of_row: &BlockStats,
    codes: &mut [T],
    scratch: &Scratch,
    prepared: &mut Vec<Consts>,
) -> Option<Result<RowQuant, Failure>> {
    let Plan::RowWise {
        layout,
        per_row,
        size,
    } = plan
    else {
        return None;
    };
    if !needs_chunks(plan) {
        return None;
    }
    let mut source = RowSource::<false> {
        ctx,
        layout: *layout,
        per_row: *per_row,
        size: *size,
        r,
        stats_of_row,
        chunks: &scratch.chunks,
        blocks: &mut [],
        current: None,
    };
    prepared.clear();
    let kind = Kind::of(ctx.config);
    if ctx.config.clipping == Clipping::None {
        // Eight blocks' parameters at a time (the same values as `prepare` gives; a block
        // with a problem is computed again by `prepare`, which names it).
        let per = size / LANES;
        let block = |i: usize| {
            row.get(i * size..((i + 1) * size).min(row.len()))
                .unwrap_or_default()
        };
        let mut i0 = 0;
        while i0 < *per_row {
            let m = (*per_row - i0).min(PARAM_LANES);
            let (mut lo, mut hi, mut ex) =
                ([-1.0; PARAM_LANES], [1.0; PARAM_LANES], [1.0; PARAM_LANES]);
            scratch
                .chunks
                .groups8(i0, per, m, block, [&mut lo, &mut hi, &mut ex]);
            let p8 = ctx.calc.params8(&lo, &hi, &ex);
            let (consts, fast) = consts8(kind, &p8, &lo, &hi, ctx.qmin, ctx.qmax);
            for j in 0..m {
                if fast[j] {
                    prepared.push(consts[j]);
                } else if p8.ok[j] {
                    // Parameters the specialised loop does not take.
                    return None;
                } else {
                    match source.prepare(i0 + j, block(i0 + j)) {
                        Ok(p) if p.is_fast() => prepared.push(p.consts()),
                        Ok(_) => return None,
                        Err(f) => return Some(Err(f)),
                    }
                }
            }
            i0 += m;
        }
    } else {
        for (i, xs) in row.chunks(*size).enumerate() {
            match source.prepare(i, xs) {
                Ok(p) if p.is_fast() => prepared.push(p.consts()),
                Ok(_) => return None,
                Err(f) => return Some(Err(f)),
            }
        }
    }
    let mut lanes = Lanes::ZERO;
    run_prepared(kind, prepared, *size, row, codes, &mut lanes);
    Some(Ok(RowQuant { lanes, clipped: 0 }))
}
