//! [`analyse`]: the active configuration's pass, then one pass over the matrix for every
//! other rung of the ladder (see [`crate::core::pass`]).

use crate::core::config::{Config, ConfigError, Granularity};
use crate::core::kernel::segment::Code;
use crate::core::matrix::Matrix;
use crate::core::pages::Pages;
use crate::core::params::{ParamCalc, ParamProblem};
use crate::core::pass::{Ctx, Failure, ladder_pass, main_pass, plan};
use crate::core::report::{Blocks, CodeBuf, ErrorSums, Layout, Memory, Metrics, Report, Rung};

/// Group sizes of the ladder (those smaller than the row length are used).
pub const LADDER_GROUPS: [usize; 6] = [256, 128, 64, 32, 16, 8];

/// What to compute besides the active configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Compute the granularity ladder.
    pub ladder: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self { ladder: true }
    }
}

/// Why an analysis could not run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AnalyseError {
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A block's parameters cannot represent its values under this configuration.
    #[error("block {block} (rows {}..{}, columns {}..{}): {problem}", rows.0, rows.1, cols.0, cols.1)]
    Block {
        /// Block index.
        block: usize,
        /// Rows `[start, end)`.
        rows: (usize, usize),
        /// Columns `[start, end)`.
        cols: (usize, usize),
        /// What is wrong.
        problem: ParamProblem,
    },
}

/// Analyses `matrix` under `config`, with the ladder.
pub fn analyse(matrix: &Matrix, config: &Config) -> Result<Report, AnalyseError> {
    analyse_with(matrix, config, Options::default())
}

/// Analyses `matrix` under `config` with explicit [`Options`].
pub fn analyse_with(
    matrix: &Matrix,
    config: &Config,
    options: Options,
) -> Result<Report, AnalyseError> {
    config.validate()?;
    let (lo, hi) = config.clamp_range();
    if hi - lo < 256 {
        analyse_as::<u8>(matrix, config, options, CodeBuf::U8)
    } else {
        analyse_as::<u16>(matrix, config, options, CodeBuf::U16)
    }
}

/// [`analyse_with`] with codes stored as `T`.
fn analyse_as<T: Code>(
    matrix: &Matrix,
    config: &Config,
    options: Options,
    wrap: fn(Pages<T>) -> CodeBuf,
) -> Result<Report, AnalyseError> {
    let view = matrix.values();
    let (rows, cols) = view.dim();
    let (qmin, qmax) = config.code_range();
    let clamp = config.clamp_range();
    let ctx = Ctx {
        view,
        config,
        qmin: clamp.0,
        qmax: clamp.1,
        range: (qmin, qmax),
        calc: ParamCalc::new(config, qmin, qmax),
    };
    let layout = Layout::new(config.granularity, config.axis, cols);
    let fail = |layout: Layout, (block, problem): Failure| {
        let (rows, cols) = layout.rect(block, rows, cols);
        AnalyseError::Block {
            block,
            rows,
            cols,
            problem,
        }
    };
    let main_plan = plan(&ctx, layout, None).map_err(|f| fail(layout, f))?;
    let main = main_pass::<T>(&ctx, &main_plan).map_err(|f| fail(layout, f))?;
    drop(main_plan);
    let overall = total(&main.sums);
    let collapsed = main.channels.iter().filter(|c| c.collapsed).count();
    let mut ladder = Vec::new();
    if options.ladder {
        let grans = ladder_granularities(config.granularity, cols);
        let layouts: Vec<Layout> = grans
            .iter()
            .map(|&g| Layout::new(g, config.axis, cols))
            .collect();
        // Plans of the other rungs; a global rung whose parameters fail keeps its failure.
        let mut plans = Vec::new();
        let mut slots = Vec::new();
        for (&g, &l) in grans.iter().zip(&layouts) {
            if g == config.granularity {
                slots.push(None);
            } else {
                match plan(&ctx, l, Some(&main.row_stats)) {
                    Ok(p) => {
                        slots.push(Some(Ok(plans.len())));
                        plans.push(p);
                    }
                    Err(f) => slots.push(Some(Err(f))),
                }
            }
        }
        let passes = ladder_pass::<T>(&ctx, &plans, &main.row_stats, &main.sums);
        for ((&g, &l), slot) in grans.iter().zip(&layouts).zip(slots) {
            let scales = l.block_count(rows, cols);
            let rung = match slot {
                None => Rung {
                    granularity: g,
                    scales: scales as u64,
                    memory: memory(config, rows, cols, scales),
                    overall,
                    channels: main.channels.iter().map(|c| c.metrics).collect(),
                    collapsed_channels: collapsed,
                    active: true,
                },
                Some(Err(f)) => return Err(fail(l, f)),
                Some(Ok(i)) => {
                    let rows_out = passes[i].as_ref().map_err(|&f| fail(l, f))?;
                    Rung {
                        granularity: g,
                        scales: scales as u64,
                        memory: memory(config, rows, cols, scales),
                        overall: total(&rows_out.sums),
                        channels: rows_out.sums.iter().map(ErrorSums::metrics).collect(),
                        collapsed_channels: rows_out.collapsed,
                        active: false,
                    }
                }
            };
            ladder.push(rung);
        }
        // Coarse to fine by scale count: with channels along columns, "channel" can have
        // more scales than the groups (stable, so equal counts keep their order).
        ladder.sort_by_key(|r| r.scales);
    }
    let mut channels = main.channels;
    for (ch, label) in channels.iter_mut().zip(matrix.labels()) {
        ch.label.clone_from(label);
    }
    Ok(Report {
        config: *config,
        qmin,
        qmax,
        clamp_range: clamp,
        shape: (rows, cols),
        memory: memory(config, rows, cols, main.blocks.len()),
        blocks: Blocks::new(main.blocks, layout, (rows, cols)),
        channels,
        overall,
        collapsed_channels: collapsed,
        ladder,
        layout,
        codes: wrap(main.codes),
    })
}

/// Per-row sums combined in row order.
fn total(rows: &[ErrorSums]) -> Metrics {
    let mut t = ErrorSums::default();
    for s in rows {
        t.merge(s);
    }
    t.metrics()
}

/// The ladder's granularities for rows of `cols` values, coarse to fine: tensor, channel,
/// then each of [`LADDER_GROUPS`] and the active group size that is smaller than a row.
#[must_use]
pub fn ladder_granularities(active: Granularity, cols: usize) -> Vec<Granularity> {
    let mut groups: Vec<usize> = LADDER_GROUPS
        .iter()
        .copied()
        .filter(|&g| g < cols)
        .collect();
    if let Granularity::Group(g) = active
        && !groups.contains(&g)
    {
        groups.push(g);
    }
    groups.sort_unstable_by(|a, b| b.cmp(a));
    let mut out = vec![Granularity::Tensor, Granularity::Channel];
    out.extend(groups.into_iter().map(Granularity::Group));
    out
}

fn memory(config: &Config, rows: usize, cols: usize, blocks: usize) -> Memory {
    Memory::new(
        (rows * cols) as u64,
        u32::from(config.bits),
        blocks as u64,
        config.metadata_bits_per_block(),
    )
}
