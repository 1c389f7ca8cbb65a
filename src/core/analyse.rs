//! [`analyse`]: the active configuration's pass, then one pass over the matrix for every
//! other rung of the ladder (see [`crate::core::pass`]).

mod format;
mod weighted;

use crate::core::config::{Clipping, Config, ConfigError, Granularity};
use crate::core::fallback::{self, FallbackError};
use crate::core::format::FormatError;
use crate::core::importance::{Importance, ImportanceError};
use crate::core::kernel::segment::Code;
use crate::core::matrix::Matrix;
use crate::core::pages::Pages;
use crate::core::params::{BlockStats, ParamCalc, ParamProblem};
use crate::core::pass::{Ctx, Failure, ladder_pass, main_pass, plan};
use crate::core::report::{
    Blocks, CodeBuf, Codes, ErrorSums, Layout, Memory, Metrics, Report, Rung,
};
use crate::core::watch::Watch;

/// Stack of each thread that analyses (the explorer's analysis thread, and the workers of
/// the thread pools that analyse: rayon's global pool and a scan's). The analysis inlines
/// its whole row loop into one function per task; without optimisations (a debug build) that function's frame is about 1.7 MiB, and
/// the default 2 MiB stack of a pool worker overflowed on a 512 x 1024 matrix. Optimised
/// builds need far less; the stack is only reserved address space until it is used.
pub const ANALYSIS_STACK: usize = if cfg!(debug_assertions) {
    64 << 20
} else {
    16 << 20
};

/// Group sizes of the ladder (those smaller than the row length are used).
pub const LADDER_GROUPS: [usize; 6] = [256, 128, 64, 32, 16, 8];

/// What to compute besides the active configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Compute the granularity ladder.
    pub ladder: bool,
    /// Keep every code the analysis computed, rather than recomputing one from the matrix
    /// when [`Report::code`] is asked for it (the same codes either way; `tests/it/kernels.rs`
    /// checks the analysis's own against the reference with this set). Off by default: the
    /// codes of a large matrix are as many bytes as it has values, written to fresh memory.
    pub keep_codes: bool,
}

impl Options {
    /// The active configuration alone: no ladder, codes recomputed on request.
    pub const ONE_CONFIG: Self = Self {
        ladder: false,
        keep_codes: false,
    };
}

impl Default for Options {
    fn default() -> Self {
        Self {
            ladder: true,
            keep_codes: false,
        }
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
    /// A format's encoder refused the matrix (rows that are not whole blocks).
    #[error(transparent)]
    Format(#[from] FormatError),
    /// Neither the format nor its llama.cpp fallback fits the rows.
    #[error(transparent)]
    Fallback(#[from] FallbackError),
    /// The importance vector does not fit the matrix.
    #[error("importance: {0}")]
    Importance(#[from] ImportanceError),
    /// Importance-weighted MSE clipping without an importance vector to weigh by.
    #[error(
        "clipping mse-weighted weighs each column's squared errors by its importance, and there is none: give an importance matrix or activations (or clip by mse)"
    )]
    ClipNeedsImportance,
    /// The caller of [`analyse_staged`] stopped it before the report was complete (never
    /// returned by [`analyse`] and [`analyse_with`]).
    #[error("the analysis was stopped")]
    Stopped,
}

impl From<crate::core::watch::Stopped> for AnalyseError {
    fn from(_: crate::core::watch::Stopped) -> Self {
        Self::Stopped
    }
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
    analyse_weighted(matrix, config, None, options)
}

/// [`analyse_with`], quantizing with `importance` where the configuration's reference reads
/// one: a k-quant, or the `q4_0`, `q4_1`, `q5_0` and `q5_1` presets as they are (their
/// blocks then come from ggml's weighted search, as `llama-quantize --imatrix` makes them).
/// Every other configuration quantizes as without (its library takes no importance), and
/// so do the other rungs of the granularity ladder. The report's
/// [`Report::quantized_with`] says which it was. `importance` must fit the matrix.
pub fn analyse_weighted(
    matrix: &Matrix,
    config: &Config,
    importance: Option<&Importance>,
    options: Options,
) -> Result<Report, AnalyseError> {
    whole_report(matrix, config, importance, options, None)
}

/// The report with its ladder in one call: [`staged`] with both stages kept, the rows
/// checked against `watch` when there is one.
fn whole_report(
    matrix: &Matrix,
    config: &Config,
    importance: Option<&Importance>,
    options: Options,
    watch: Option<&Watch>,
) -> Result<Report, AnalyseError> {
    let mut whole = None;
    let first = &mut |report| {
        whole = Some(report);
        true
    };
    let ladder = staged(
        matrix,
        config,
        importance,
        options,
        first,
        &mut |_, _| true,
        watch,
    )?;
    let mut report = whole.ok_or(AnalyseError::Stopped)?;
    report.ladder = ladder.unwrap_or_default();
    Ok(report)
}

/// [`analyse_weighted`] with [`Options::ONE_CONFIG`], a format's rows checked against `watch`
/// (the format ladder's entry in progress): [`AnalyseError::Stopped`] once it is stopped.
pub(crate) fn analyse_watched(
    matrix: &Matrix,
    config: &Config,
    importance: Option<&Importance>,
    watch: &Watch,
) -> Result<Report, AnalyseError> {
    whole_report(matrix, config, importance, Options::ONE_CONFIG, Some(watch))
}

/// Analyses `matrix` under `config` in two stages, for a caller that shows the active
/// configuration before its ladder is done: `first` receives the report without its ladder
/// as soon as it is ready (return false to stop there), then the ladder's rungs are
/// computed and returned, ready for [`Report::ladder`]. `Ok(None)` when `first` stopped.
/// While the ladder is computed, `progress` is told the rows done so far and all rows, a few
/// times for a large matrix; return false to stop (`Ok(None)` too).
///
/// The active configuration is analysed once: the ladder's rungs reuse its pass's row
/// statistics and sums, as [`analyse`] does.
pub fn analyse_staged(
    matrix: &Matrix,
    config: &Config,
    first: &mut dyn FnMut(Report) -> bool,
    progress: Progress<'_>,
) -> Result<Option<Vec<Rung>>, AnalyseError> {
    analyse_staged_weighted(matrix, config, None, first, progress)
}

/// [`analyse_staged`] with `importance` as [`analyse_weighted`] takes it. The output errors
/// are a stage of their own after this one
/// ([`OutputStage`](crate::core::output::OutputStage)): the weight report comes first.
pub fn analyse_staged_weighted(
    matrix: &Matrix,
    config: &Config,
    importance: Option<&Importance>,
    first: &mut dyn FnMut(Report) -> bool,
    progress: Progress<'_>,
) -> Result<Option<Vec<Rung>>, AnalyseError> {
    let options = Options {
        ladder: true,
        keep_codes: false,
    };
    staged(matrix, config, importance, options, first, progress, None)
}

/// Told the ladder's rows done so far and all rows; returns false to stop.
pub type Progress<'a> = &'a mut dyn FnMut(usize, usize) -> bool;

fn staged(
    matrix: &Matrix,
    config: &Config,
    importance: Option<&Importance>,
    options: Options,
    first: &mut dyn FnMut(Report) -> bool,
    progress: Progress<'_>,
    watch: Option<&Watch>,
) -> Result<Option<Vec<Rung>>, AnalyseError> {
    config.validate()?;
    if config.clipping == Clipping::MseWeighted && config.format.is_none() && importance.is_none() {
        return Err(AnalyseError::ClipNeedsImportance);
    }
    if let Some(imp) = importance {
        let (rows, cols) = matrix.shape();
        imp.check_shape(rows, cols)?;
    }
    if let Some(info) = config.format
        && let Some((fallback, applied)) = fallback::resolve(info, matrix.shape().1)?
    {
        // llama.cpp's fallback type, as llama-quantize applies it to such rows (with the
        // importance, as llama-quantize --imatrix does).
        let first = &mut |mut report: Report| {
            report.fallback = Some(fallback);
            first(report)
        };
        return staged(
            matrix, &applied, importance, options, first, progress, watch,
        );
    }
    if let Some(info) = config.format {
        // A format fixes its blocks: its ladder is the one rung of its own blocks.
        let weights = importance.filter(|_| weighted::reads_importance(info.coded));
        let mut report = format::analyse_format(matrix, config, info.coded, weights, watch)?;
        report.quantized_with = weights.map(|w| w.source().clone());
        report.importance = weights.map(|w| std::sync::Arc::new(w.clone()));
        let rungs = if options.ladder {
            vec![active_rung(&report)]
        } else {
            Vec::new()
        };
        return Ok(first(report).then_some(rungs));
    }
    if let Some(imp) = importance
        && let Some(l) = crate::core::presets::legacy_type(config)
    {
        return weighted::legacy(matrix, config, imp, l, options, first, progress);
    }
    integer(matrix, config, importance, options, first, progress)
}

/// An integer configuration: its pass, then its ladder; `imp` weighs the squared errors of
/// importance-weighted MSE clipping.
fn integer(
    matrix: &Matrix,
    config: &Config,
    imp: Option<&Importance>,
    options: Options,
    first: &mut dyn FnMut(Report) -> bool,
    progress: Progress<'_>,
) -> Result<Option<Vec<Rung>>, AnalyseError> {
    let (lo, hi) = config.clamp_range();
    let wanted = options.ladder.then_some(progress);
    let keep = options.keep_codes;
    if hi - lo < 256 {
        analyse_as::<u8>(
            matrix,
            config,
            imp,
            wanted,
            keep.then_some(CodeBuf::U8),
            first,
        )
    } else {
        analyse_as::<u16>(
            matrix,
            config,
            imp,
            wanted,
            keep.then_some(CodeBuf::U16),
            first,
        )
    }
}

/// [`staged`] with codes computed as `T` (and kept, with `keep`, as it wraps them): the
/// active pass, the report handed to `first`, then (with `ladder`, told its progress) the
/// other rungs in one more pass.
fn analyse_as<T: Code>(
    matrix: &Matrix,
    config: &Config,
    importance: Option<&Importance>,
    ladder: Option<Progress<'_>>,
    keep: Option<fn(Pages<T>) -> CodeBuf>,
    first: &mut dyn FnMut(Report) -> bool,
) -> Result<Option<Vec<Rung>>, AnalyseError> {
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
        importance,
    };
    let layout = Layout::new(config.granularity, config.axis, cols);
    let weighing = importance.filter(|_| config.clipping == Clipping::MseWeighted);
    let main_plan = plan(&ctx, layout, None).map_err(|f| fail(layout, (rows, cols), f))?;
    let main = main_pass::<T>(&ctx, &main_plan, keep.is_some())
        .map_err(|f| fail(layout, (rows, cols), f))?;
    drop(main_plan);
    let overall = total(&main.sums);
    let collapsed = main.channels.iter().filter(|c| c.collapsed).count();
    let mut channels = main.channels;
    for (ch, label) in channels.iter_mut().zip(matrix.labels()) {
        ch.label.clone_from(label);
    }
    let report = Report {
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
        ladder: Vec::new(),
        // Importance-weighted MSE clipping chose each block's range with the importance.
        quantized_with: weighing.map(|i| i.source().clone()),
        output: None,
        importance: weighing.map(|i| std::sync::Arc::new(i.clone())),
        layout,
        codes: match keep {
            Some(wrap) => Codes::Stored(wrap(main.codes)),
            None => Codes::Derived(matrix.shared()),
        },
        fallback: None,
        values: None,
    };
    let active = ladder.is_some().then(|| active_rung(&report));
    if !first(report) {
        return Ok(None);
    }
    match (active, ladder) {
        (Some(active), Some(progress)) => {
            rungs::<T>(&ctx, active, &main.row_stats, &main.sums, progress)
        }
        _ => Ok(Some(Vec::new())),
    }
}

/// The active configuration's rung of the ladder: the report's own numbers.
fn active_rung(report: &Report) -> Rung {
    Rung {
        granularity: report.config.granularity,
        scales: report.blocks.len() as u64,
        memory: report.memory,
        overall: report.overall,
        channels: report.channels.iter().map(|c| c.metrics).collect(),
        collapsed_channels: report.collapsed_channels,
        active: true,
        output: report.output.clone(),
    }
}

/// The ladder of the active pass whose rung is `active`: every other granularity in one
/// more pass over the rows, coarse to fine (`None` when `progress` stopped it).
fn rungs<T: Code>(
    ctx: &Ctx<'_>,
    active: Rung,
    row_stats: &[BlockStats],
    sums: &[ErrorSums],
    progress: Progress<'_>,
) -> Result<Option<Vec<Rung>>, AnalyseError> {
    let config = ctx.config;
    let (rows, cols) = ctx.view.dim();
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
            match plan(ctx, l, Some(row_stats)) {
                Ok(p) => {
                    slots.push(Some(Ok(plans.len())));
                    plans.push(p);
                }
                Err(f) => slots.push(Some(Err(f))),
            }
        }
    }
    let Some(mut passes) = ladder_pass::<T>(ctx, &plans, row_stats, sums, progress) else {
        return Ok(None);
    };
    let mut ladder = Vec::with_capacity(grans.len());
    let mut active = Some(active);
    for ((&g, &l), slot) in grans.iter().zip(&layouts).zip(slots) {
        let scales = l.block_count(rows, cols);
        let rung = match slot {
            None => match active.take() {
                Some(rung) => rung,
                None => continue,
            },
            Some(Err(f)) => return Err(fail(l, (rows, cols), f)),
            Some(Ok(i)) => {
                // One pass per plan, so `i` is always one of them.
                let Some(pass) = passes.get_mut(i) else {
                    continue;
                };
                let rows_out = pass.as_mut().map_err(|&mut f| fail(l, (rows, cols), f))?;
                Rung {
                    granularity: g,
                    scales: scales as u64,
                    memory: memory(config, rows, cols, scales),
                    overall: rows_out.total.metrics(),
                    channels: std::mem::take(&mut rows_out.channels),
                    collapsed_channels: rows_out.collapsed,
                    active: false,
                    output: None,
                }
            }
        };
        ladder.push(rung);
    }
    // Coarse to fine by scale count: with channels along columns, "channel" can have
    // more scales than the groups (stable, so equal counts keep their order).
    ladder.sort_by_key(|r| r.scales);
    Ok(Some(ladder))
}

/// The error of block `block` of `layout` over a matrix of `shape` that `problem` stopped.
fn fail(layout: Layout, (rows, cols): (usize, usize), (block, problem): Failure) -> AnalyseError {
    let (rows, cols) = layout.rect(block, rows, cols);
    AnalyseError::Block {
        block,
        rows,
        cols,
        problem,
    }
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
/// Rows too short for any of [`LADDER_GROUPS`] get the largest power of two below their
/// length instead (groups of 2 on rows of 4), so that every matrix of rows of 3 or more
/// values has a rung of groups.
#[must_use]
pub fn ladder_granularities(active: Granularity, cols: usize) -> Vec<Granularity> {
    let mut groups: Vec<usize> = LADDER_GROUPS
        .iter()
        .copied()
        .filter(|&g| g < cols)
        .collect();
    if groups.is_empty() && cols > 2 {
        groups.push(1 << (cols - 1).ilog2());
    }
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
