//! Orderings and summaries of a report's channels for long lists: sort by index, error or
//! utilization, keep only collapsed channels, and summarise the utilization distribution.

use crate::core::report::Report;

/// How a list of channels is ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortKey {
    /// By row index.
    #[default]
    Index,
    /// Largest mean absolute error first.
    Error,
    /// Lowest utilization first.
    Utilization,
}

impl SortKey {
    /// The next ordering in the cycle index → error → utilization.
    #[must_use]
    pub fn next(self) -> Self {
        match self {
            Self::Index => Self::Error,
            Self::Error => Self::Utilization,
            Self::Utilization => Self::Index,
        }
    }

    /// What the list is sorted by, for titles.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            Self::Index => "by index",
            Self::Error => "by error",
            Self::Utilization => "by utilization",
        }
    }
}

/// The channel indices to list, in order: all channels (or only the collapsed ones) sorted
/// by `key`; ties keep index order.
#[must_use]
pub fn channel_order(report: &Report, key: SortKey, collapsed_only: bool) -> Vec<usize> {
    let mut order: Vec<usize> = report
        .channels
        .iter()
        .filter(|c| !collapsed_only || c.collapsed)
        .map(|c| c.index)
        .collect();
    match key {
        SortKey::Index => {}
        SortKey::Error => order.sort_by(|&a, &b| {
            report.channels[b]
                .metrics
                .mae
                .total_cmp(&report.channels[a].metrics.mae)
                .then(a.cmp(&b))
        }),
        SortKey::Utilization => order.sort_by(|&a, &b| {
            report.channels[a]
                .utilization
                .total_cmp(&report.channels[b].utilization)
                .then(a.cmp(&b))
        }),
    }
    order
}

/// The distribution of channel utilization.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UtilizationSummary {
    /// Number of channels.
    pub channels: usize,
    /// Collapsed channels.
    pub collapsed: usize,
    /// Smallest utilization.
    pub min: f64,
    /// Median utilization (lower median for an even count).
    pub median: f64,
    /// Largest utilization.
    pub max: f64,
    /// Channels per tenth of the code range: `[0, 0.1)`, …, `[0.9, 1.0]`.
    pub deciles: [usize; 10],
}

/// Summarises the utilization of every channel.
#[must_use]
pub fn utilization_summary(report: &Report) -> UtilizationSummary {
    let mut values: Vec<f64> = report.channels.iter().map(|c| c.utilization).collect();
    values.sort_by(f64::total_cmp);
    let mut deciles = [0usize; 10];
    for &u in &values {
        deciles[((u * 10.0).floor().max(0.0) as usize).min(9)] += 1;
    }
    let pick = |i: usize| values.get(i).copied().unwrap_or(0.0);
    UtilizationSummary {
        channels: values.len(),
        collapsed: report.collapsed_channels,
        min: pick(0),
        median: pick(values.len().saturating_sub(1) / 2),
        max: pick(values.len().saturating_sub(1)),
        deciles,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{Matrix, PresetOptions, analyse, preset};

    fn report() -> Report {
        let m = Matrix::from_rows(&[
            &[0.05, -0.08, 0.12, -0.15],
            &[2.21, -3.10, 1.77, -2.66],
            &[0.5, -0.4, 0.3, -0.2],
            &[0.01, 0.02, -0.01, 0.0],
        ])
        .unwrap();
        analyse(&m, &preset("lesson", PresetOptions::default()).unwrap()).unwrap()
    }

    #[test]
    fn orders_by_each_key_and_filters_collapsed() {
        let r = report();
        assert_eq!(channel_order(&r, SortKey::Index, false), vec![0, 1, 2, 3]);
        let by_error = channel_order(&r, SortKey::Error, false);
        assert!(
            by_error
                .windows(2)
                .all(|w| r.channels[w[0]].metrics.mae >= r.channels[w[1]].metrics.mae)
        );
        let by_util = channel_order(&r, SortKey::Utilization, false);
        assert!(
            by_util
                .windows(2)
                .all(|w| r.channels[w[0]].utilization <= r.channels[w[1]].utilization)
        );
        assert_eq!(
            by_util[0..2],
            [0, 3],
            "the two collapsed rows first, in index order"
        );
        assert_eq!(channel_order(&r, SortKey::Error, true), vec![0, 3]);
        assert_eq!(SortKey::Index.next().next().next(), SortKey::Index);
    }

    #[test]
    fn summary_counts_and_quantiles() {
        let r = report();
        let s = utilization_summary(&r);
        assert_eq!((s.channels, s.collapsed), (4, 2));
        assert_eq!(s.min, 0.0);
        assert_eq!(s.deciles.iter().sum::<usize>(), 4);
        assert_eq!(s.deciles[0], 2);
        assert!(s.max >= s.median && s.median >= s.min);
    }
}
