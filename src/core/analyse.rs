//! [`analyse`]: one statistics pass and one quantize-and-measure pass per granularity.

use ndarray::{ArrayView2, Axis as NdAxis, Slice};

use crate::core::config::{Clipping, Config, ConfigError, Granularity, Scheme};
use crate::core::kernel::Quantizer;
use crate::core::matrix::Matrix;
use crate::core::params::{BlockParams, BlockStats, ParamProblem, RealRange, block_params};
use crate::core::report::{
    Block, ChannelReport, CodeBuf, ErrorSums, Layout, Memory, Metrics, Report, Rung,
};

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
    let view = matrix.values();
    let (rows, cols) = view.dim();
    let (qmin, qmax) = config.code_range();
    let main = run(&view, config, qmin, qmax, true)?;
    let mut ladder = Vec::new();
    if options.ladder {
        for g in ladder_granularities(config.granularity, cols) {
            let active = g == config.granularity;
            let pass = if active {
                None
            } else {
                Some(run(
                    &view,
                    &Config {
                        granularity: g,
                        ..*config
                    },
                    qmin,
                    qmax,
                    false,
                )?)
            };
            let p = pass.as_ref().unwrap_or(&main);
            ladder.push(Rung {
                granularity: g,
                scales: p.blocks.len() as u64,
                memory: memory(config, rows, cols, p.blocks.len()),
                overall: p.overall,
                channels: p.channels.iter().map(|c| c.metrics).collect(),
                collapsed_channels: p.collapsed,
                active,
            });
        }
        // Coarse to fine by scale count: with channels along columns, "channel" can have
        // more scales than the groups (stable, so equal counts keep their order).
        ladder.sort_by_key(|r| r.scales);
    }
    let labels = matrix.labels();
    let mut channels = main.channels;
    for (ch, label) in channels.iter_mut().zip(labels) {
        ch.label.clone_from(label);
    }
    Ok(Report {
        config: *config,
        qmin,
        qmax,
        shape: (rows, cols),
        memory: memory(config, rows, cols, main.blocks.len()),
        blocks: main.blocks,
        channels,
        overall: main.overall,
        collapsed_channels: main.collapsed,
        ladder,
        layout: main.layout,
        codes: main.codes.unwrap_or(CodeBuf::U8(Vec::new())),
    })
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

struct Pass {
    layout: Layout,
    blocks: Vec<Block>,
    channels: Vec<ChannelReport>,
    overall: Metrics,
    collapsed: usize,
    codes: Option<CodeBuf>,
}

/// Statistics of every block.
fn block_stats(view: &ArrayView2<'_, f32>, layout: Layout) -> Vec<BlockStats> {
    let (rows, cols) = view.dim();
    let mut stats = vec![BlockStats::EMPTY; layout.block_count(rows, cols)];
    for (r, row) in view.rows().into_iter().enumerate() {
        match layout {
            Layout::Tensor => stats[0].extend(row.as_slice().unwrap_or(&row.to_vec())),
            Layout::Rows => stats[r].extend(row.as_slice().unwrap_or(&row.to_vec())),
            Layout::Columns => {
                for (st, &x) in stats.iter_mut().zip(row.iter()) {
                    st.push(x);
                }
            }
            Layout::Groups { size, per_row } => {
                for (c, &x) in row.iter().enumerate() {
                    stats[r * per_row + c / size].push(x);
                }
            }
        }
    }
    stats
}

/// Linear-interpolated quantile (numpy's default) of sorted values.
fn quantile(sorted: &[f32], q: f64) -> f32 {
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let i = pos.floor() as usize;
    let j = (i + 1).min(sorted.len() - 1);
    let frac = pos - i as f64;
    (f64::from(sorted[i]) + (f64::from(sorted[j]) - f64::from(sorted[i])) * frac) as f32
}

/// The block's parameters, with clipping applied.
fn choose_params(
    config: &Config,
    view: &ArrayView2<'_, f32>,
    rect: ((usize, usize), (usize, usize)),
    stats: &BlockStats,
    (qmin, qmax): (i32, i32),
    buf: &mut Vec<f32>,
) -> BlockParams {
    let full = RealRange::of(stats);
    let block = view
        .slice_axis(NdAxis(0), Slice::from(rect.0.0..rect.0.1))
        .slice_axis_move(NdAxis(1), Slice::from(rect.1.0..rect.1.1));
    match config.clipping {
        Clipping::None => block_params(config, full, qmin, qmax),
        Clipping::Percentile(p) => {
            buf.clear();
            let range = if config.scheme == Scheme::Symmetric {
                buf.extend(block.iter().map(|x| x.abs()));
                buf.sort_unstable_by(f32::total_cmp);
                let t = quantile(buf, p / 100.0);
                RealRange {
                    lo: -t,
                    hi: t,
                    extreme: if full.extreme < 0.0 { -t } else { t },
                }
            } else {
                buf.extend(block.iter().copied());
                buf.sort_unstable_by(f32::total_cmp);
                let lo = quantile(buf, (100.0 - p) / 200.0);
                let hi = quantile(buf, (100.0 + p) / 200.0);
                RealRange {
                    lo,
                    hi,
                    extreme: if full.extreme < 0.0 { lo } else { hi },
                }
            };
            block_params(config, range, qmin, qmax)
        }
        Clipping::Mse => {
            let mut best = block_params(config, full, qmin, qmax);
            let mut best_sse = f64::INFINITY;
            for k in 0..=40u8 {
                let alpha = 1.0 - f32::from(k) * 0.02;
                let params = block_params(config, full.shrunk(alpha), qmin, qmax);
                let q = Quantizer::new(config, &params, qmin, qmax);
                let sse: f64 = block
                    .iter()
                    .map(|&x| {
                        let e = f64::from(q.dequantize(q.code(x).0)) - f64::from(x);
                        e * e
                    })
                    .sum();
                if sse < best_sse {
                    best_sse = sse;
                    best = params;
                }
            }
            best
        }
    }
}

/// Distinct-code tracking for one row.
struct LevelSet {
    words: Vec<u64>,
}

impl LevelSet {
    fn new(levels: u32) -> Self {
        Self {
            words: vec![0; (levels as usize).div_ceil(64)],
        }
    }
    fn clear(&mut self) {
        self.words.fill(0);
    }
    #[inline]
    fn insert(&mut self, off: usize) {
        self.words[off / 64] |= 1 << (off % 64);
    }
    fn count(&self) -> u32 {
        self.words.iter().map(|w| w.count_ones()).sum()
    }
}

#[expect(
    clippy::too_many_lines,
    reason = "the single quantize-and-measure pass; splitting it would split the hot loop"
)]
fn run(
    view: &ArrayView2<'_, f32>,
    config: &Config,
    qmin: i32,
    qmax: i32,
    keep_codes: bool,
) -> Result<Pass, AnalyseError> {
    let (rows, cols) = view.dim();
    let layout = Layout::new(config.granularity, config.axis, cols);
    let stats = block_stats(view, layout);
    let mut buf = Vec::new();
    let params: Vec<BlockParams> = stats
        .iter()
        .enumerate()
        .map(|(b, st)| {
            choose_params(
                config,
                view,
                layout.rect(b, rows, cols),
                st,
                (qmin, qmax),
                &mut buf,
            )
        })
        .collect();
    if let Some((block, problem)) = params
        .iter()
        .enumerate()
        .find_map(|(b, p)| p.problem.map(|q| (b, q)))
    {
        let (rows, cols) = layout.rect(block, rows, cols);
        return Err(AnalyseError::Block {
            block,
            rows,
            cols,
            problem,
        });
    }
    let quantizers: Vec<Quantizer> = params
        .iter()
        .map(|p| Quantizer::new(config, p, qmin, qmax))
        .collect();
    let mut clipped = vec![0usize; params.len()];
    let levels = (qmax - qmin + 1) as u32;
    let mut codes = keep_codes.then(|| {
        if levels <= 256 {
            CodeBuf::U8(Vec::with_capacity(rows * cols))
        } else {
            CodeBuf::U16(Vec::with_capacity(rows * cols))
        }
    });
    let mut seen = LevelSet::new(levels);
    let mut channels = Vec::with_capacity(rows);
    let mut total = ErrorSums::default();
    let mut collapsed = 0;
    let span = f64::from(qmax - qmin);
    for (r, row) in view.rows().into_iter().enumerate() {
        seen.clear();
        let mut sums = ErrorSums::default();
        let (mut cmin, mut cmax) = (i32::MAX, i32::MIN);
        let (mut vmin, mut vmax) = (f32::INFINITY, f32::NEG_INFINITY);
        let mut row_clipped = 0;
        for (c, &x) in row.iter().enumerate() {
            let b = layout.block_of(r, c);
            let q = &quantizers[b];
            let (code, was_clamped) = q.code(x);
            if was_clamped {
                clipped[b] += 1;
                row_clipped += 1;
            }
            sums.push(x, q.dequantize(code));
            let off = (code - qmin) as usize;
            seen.insert(off);
            cmin = cmin.min(code);
            cmax = cmax.max(code);
            vmin = vmin.min(x);
            vmax = vmax.max(x);
            match &mut codes {
                Some(CodeBuf::U8(v)) => v.push(off as u8),
                Some(CodeBuf::U16(v)) => v.push(off as u16),
                None => {}
            }
        }
        total.merge(&sums);
        let levels_used = seen.count();
        let constant = vmin == vmax;
        let is_collapsed = !constant && levels_used == 1;
        collapsed += usize::from(is_collapsed);
        channels.push(ChannelReport {
            index: r,
            label: None,
            metrics: sums.metrics(),
            levels_used,
            levels_available: levels,
            utilization: f64::from(cmax - cmin) / span,
            collapsed: is_collapsed,
            constant,
            min_code: cmin,
            max_code: cmax,
            clipped: row_clipped,
            min: vmin,
            max: vmax,
        });
    }
    let blocks = params
        .iter()
        .zip(&stats)
        .zip(&clipped)
        .enumerate()
        .map(|(b, ((p, st), &clipped))| {
            let (rr, cc) = layout.rect(b, rows, cols);
            Block {
                rows: rr,
                cols: cc,
                scale: p.scale,
                code_scale: p.code_scale,
                zero_point: p.zero_point,
                offset: p.offset,
                min: st.min,
                max: st.max,
                range: p.range,
                clipped,
                degenerate: p.degenerate,
            }
        })
        .collect();
    Ok(Pass {
        layout,
        blocks,
        channels,
        overall: total.metrics(),
        collapsed,
        codes,
    })
}
