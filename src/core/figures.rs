//! What the HTML and PDF reports draw, chosen and bounded here so that the exporters only
//! format: a sample of original and reconstructed values per plotted channel with the grid
//! they snap to, and, for a matrix with many channels, the distributions and the worst
//! channels that stand in for per-channel charts and tables.
//!
//! Every list is bounded, so a report's size does not grow with the matrix:
//!
//! | what                                        | at most                         |
//! |---------------------------------------------|---------------------------------|
//! | channels plotted value by value             | [`MAX_PLOTTED`], the worst      |
//! | values sampled per plotted channel          | [`MAX_SAMPLES`], evenly spaced  |
//! | grid levels drawn                           | [`MAX_LEVELS`] (none above)     |
//! | channels drawn or listed one by one         | [`MAX_CHANNELS`]; above, the [`WORST`] worst and distributions |

use crate::core::{Matrix, Report};

/// Channels whose values are plotted against their reconstruction (the worst ones).
pub const MAX_PLOTTED: usize = 6;
/// Values sampled per plotted channel.
pub const MAX_SAMPLES: usize = 64;
/// Grid levels drawn behind a value plot; a wider code range (8 bits and up) is too dense
/// to draw and is described instead.
pub const MAX_LEVELS: usize = 64;
/// Channels drawn and listed one by one; a matrix with more is summarised.
pub const MAX_CHANNELS: usize = 128;
/// Channels listed by name when a matrix is summarised.
pub const WORST: usize = 32;
/// Bins of the utilization histogram.
pub const BINS: usize = 10;

/// One channel's values against their reconstruction, on its quantization grid.
#[derive(Debug, Clone, PartialEq)]
pub struct ValuePlot {
    /// 0-based row.
    pub channel: usize,
    /// The row's label, if it has one.
    pub label: Option<String>,
    /// Columns `[start, end)` the sample is taken from: the row's first block (the whole
    /// row per tensor or per channel, its first group per group).
    pub cols: (usize, usize),
    /// `(column, original, reconstructed)`, in column order.
    pub samples: Vec<(usize, f32, f32)>,
    /// The reconstruction of every code of the block, low to high; `None` when the values
    /// of the span do not share one grid (per-column scales) or there are more than
    /// [`MAX_LEVELS`] codes.
    pub levels: Option<Vec<f32>>,
    /// Codes in `[qmin, qmax]`.
    pub level_count: usize,
}

/// Five points of a distribution (nearest rank).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Spread {
    /// Smallest.
    pub min: f64,
    /// 25th percentile.
    pub p25: f64,
    /// Median.
    pub median: f64,
    /// 90th percentile.
    pub p90: f64,
    /// Largest.
    pub max: f64,
}

impl Spread {
    /// The spread of `values` (all zero when empty; NaN sorts last).
    #[must_use]
    pub fn of(values: impl IntoIterator<Item = f64>) -> Self {
        let mut v: Vec<f64> = values.into_iter().collect();
        if v.is_empty() {
            return Self::default();
        }
        v.sort_by(f64::total_cmp);
        let at = |p: f64| v[(((v.len() - 1) as f64) * p).round() as usize];
        Self {
            min: v[0],
            p25: at(0.25),
            median: at(0.5),
            p90: at(0.9),
            max: v[v.len() - 1],
        }
    }
}

/// One rung's per-channel errors, summarised.
#[derive(Debug, Clone, PartialEq)]
pub struct RungSpread {
    /// Index into [`Report::ladder`].
    pub rung: usize,
    /// Channel MAE.
    pub mae: Spread,
    /// Channel RMSE.
    pub rmse: Spread,
}

/// The matrix given is not the one the report analysed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the matrix is {matrix:?} but the report is of a {report:?} matrix")]
pub struct NotTheMatrix {
    /// The matrix's shape.
    pub matrix: (usize, usize),
    /// The report's shape.
    pub report: (usize, usize),
}

/// What the charts of a report draw.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    /// The worst channels' values against their reconstruction, worst first.
    pub values: Vec<ValuePlot>,
    /// The channels drawn and listed one by one: every channel, in order, when there are at
    /// most [`MAX_CHANNELS`]; otherwise the [`WORST`] worst, worst first.
    pub listed: Vec<usize>,
    /// The matrix has more than [`MAX_CHANNELS`] channels, so charts show distributions.
    pub summarised: bool,
    /// Channels by utilization in [`BINS`] bins of `[0, 1]` (the last holds 1 and above).
    pub utilization: Vec<usize>,
    /// Collapsed channels, in order, the first [`WORST`].
    pub collapsed: Vec<usize>,
    /// Each rung's channel errors.
    pub ladder: Vec<RungSpread>,
}

/// The figures of `report`, an analysis of `matrix`; an error when `matrix` is not of the
/// report's shape.
pub fn figures(matrix: &Matrix, report: &Report) -> Result<Figures, NotTheMatrix> {
    if matrix.shape() != report.shape {
        return Err(NotTheMatrix {
            matrix: matrix.shape(),
            report: report.shape,
        });
    }
    let rows = report.channels.len();
    let summarised = rows > MAX_CHANNELS;
    let listed = if summarised {
        report.worst_channels(WORST)
    } else {
        (0..rows).collect()
    };
    let values = report
        .worst_channels(MAX_PLOTTED)
        .into_iter()
        .map(|row| value_plot(matrix, report, row))
        .collect();
    let mut utilization = vec![0; BINS];
    for c in &report.channels {
        let bin = ((c.utilization.max(0.0) * BINS as f64) as usize).min(BINS - 1);
        utilization[bin] += 1;
    }
    let collapsed = report
        .channels
        .iter()
        .filter(|c| c.collapsed)
        .map(|c| c.index)
        .take(WORST)
        .collect();
    let ladder = report
        .ladder
        .iter()
        .enumerate()
        .map(|(i, r)| RungSpread {
            rung: i,
            mae: Spread::of(r.channels.iter().map(|m| m.mae)),
            rmse: Spread::of(r.channels.iter().map(|m| m.rmse)),
        })
        .collect();
    Ok(Figures {
        values,
        listed,
        summarised,
        utilization,
        collapsed,
        ladder,
    })
}

/// A sample of row `row`'s first block with its grid.
fn value_plot(matrix: &Matrix, report: &Report, row: usize) -> ValuePlot {
    let cols = report.shape.1;
    let first = report.block_index(row, 0);
    let block = report.blocks.at(first);
    // Per-column scales give every value of a row its own grid: sample the row, no grid.
    let shared = block.cols.1 - block.cols.0 > 1 || cols == 1;
    let span = if shared { block.cols } else { (0, cols) };
    let n = span.1 - span.0;
    let picks: Vec<usize> = if n <= MAX_SAMPLES {
        (span.0..span.1).collect()
    } else {
        (0..MAX_SAMPLES)
            .map(|k| span.0 + k * n / MAX_SAMPLES)
            .collect()
    };
    let values = matrix.values();
    let samples = picks
        .into_iter()
        .map(|c| (c, values[[row, c]], report.dequantized(row, c)))
        .collect();
    let level_count = (report.qmax - report.qmin + 1).max(0) as usize;
    let levels = (shared && level_count <= MAX_LEVELS).then(|| report.levels(first));
    ValuePlot {
        channel: row,
        label: report.channels[row].label.clone(),
        cols: span,
        samples,
        levels,
        level_count,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::analyse;
    use crate::core::config::{Config, Granularity};

    #[test]
    fn the_quiet_row_is_plotted_first_on_the_shared_grid() {
        let m =
            Matrix::from_rows(&[&[0.05, -0.08, 0.12, -0.15], &[2.21, -3.10, 1.77, -2.66]]).unwrap();
        let r = analyse(&m, &Config::default()).unwrap();
        let f = figures(&m, &r).unwrap();
        assert_eq!(f.values[0].channel, 0, "the collapsed row is the worst");
        assert_eq!(f.values[0].samples.len(), 4);
        assert_eq!(f.values[0].samples[1].1, -0.08);
        let levels = f.values[0].levels.as_ref().unwrap();
        assert_eq!(levels.len(), f.values[0].level_count);
        assert!(levels.contains(&f.values[0].samples[1].2));
        assert_eq!(f.collapsed, vec![0]);
        assert_eq!(f.listed, vec![0, 1]);
        assert!(!f.summarised);
        assert_eq!(f.utilization.iter().sum::<usize>(), 2);
        assert_eq!(f.ladder.len(), r.ladder.len());
    }

    #[test]
    fn many_channels_are_summarised_within_the_bounds() {
        let rows: Vec<Vec<f32>> = (0..300)
            .map(|r| {
                (0..200)
                    .map(|c| ((r * 7 + c) % 13) as f32 * 0.1 - 0.6)
                    .collect()
            })
            .collect();
        let refs: Vec<&[f32]> = rows.iter().map(Vec::as_slice).collect();
        let m = Matrix::from_rows(&refs).unwrap();
        let config = Config {
            granularity: Granularity::Group(32),
            bits: 8,
            ..Config::default()
        };
        let r = analyse(&m, &config).unwrap();
        let f = figures(&m, &r).unwrap();
        assert!(f.summarised);
        assert_eq!(f.listed.len(), WORST);
        assert_eq!(f.values.len(), MAX_PLOTTED);
        let plot = &f.values[0];
        assert_eq!(plot.cols.1 - plot.cols.0, 32, "the first group");
        assert_eq!(plot.samples.len(), 32);
        assert!(plot.levels.is_none(), "256 levels are not drawn");
        assert_eq!(f.utilization.iter().sum::<usize>(), 300);
    }

    #[test]
    fn spread_by_nearest_rank() {
        let s = Spread::of((1..=11).map(f64::from));
        assert_eq!(
            (s.min, s.p25, s.median, s.p90, s.max),
            (1.0, 4.0, 6.0, 10.0, 11.0)
        );
    }
}
