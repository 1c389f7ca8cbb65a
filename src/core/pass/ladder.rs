//! The ladder's other rungs, all in one pass over the matrix: per row, every rung's blocks,
//! codes (discarded) and error sums, while the row is in cache.

use super::batch::{Buffers, batch};
use super::{
    Ctx, Failure, LANES, Plan, Scratch, code_range, needs_chunks, quantize_row, row_slice,
    rows_per_task, run_tasks, sums,
};
use crate::core::kernel::segment::Code;
use crate::core::params::BlockStats;
use crate::core::report::ErrorSums;

/// One rung's per-row results.
pub(crate) struct RungRows {
    /// Per-row error sums, in row order.
    pub sums: Vec<ErrorSums>,
    /// Rows that collapse to one code or one value.
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
            let mut bufs = Buffers::default();
            let chunks = plans.iter().any(needs_chunks);
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
            let mut outs: Vec<Result<(Vec<ErrorSums>, usize), Failure>> = plans
                .iter()
                .map(|_| Ok((Vec::with_capacity(r1 - r0), 0)))
                .collect();
            for r in r0..r1 {
                let row = row_slice(&ctx.view, r, &mut row_buf);
                let st = &row_stats[r];
                if chunks {
                    scratch.chunks.fill(row);
                    scratch.chunks.merge_runs(per_max);
                }
                for (plan, out) in plans.iter().zip(&mut outs) {
                    let Ok((sums_out, collapsed)) = out else {
                        continue;
                    };
                    let s = &mut scratch;
                    let q = match batch::<T, false>(
                        ctx,
                        plan,
                        r,
                        row,
                        st,
                        &mut codes,
                        &mut [],
                        s,
                        &mut bufs,
                    ) {
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
                            *collapsed += usize::from(st.min != st.max && (lo == hi || q.flat));
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
