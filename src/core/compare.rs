//! Two analyses of the same matrix side by side: configuration A (the one pinned, or named
//! by `report --compare`) and configuration B (the active one). What differs in the
//! configurations, each channel's errors, utilization and collapse under both with the
//! difference, and the storage cost of both. The panes and the exporters read this; they
//! compute nothing.

use serde::Serialize;

use crate::core::importance::{Measure, OutputMetrics, Ranked, RankingChange, ranking_changes};
use crate::core::names::settings_of;
use crate::core::report::{Memory, Metrics};
use crate::core::{Config, Report};

/// One configuration field that differs: its key and its value under A and B.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Difference {
    /// The setting's key (`granularity`, `bits`, ...).
    pub key: &'static str,
    /// Its value under A.
    pub a: String,
    /// Its value under B.
    pub b: String,
}

/// One channel under A and B.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChannelPair {
    /// 0-based row.
    pub index: usize,
    /// The row's label, if it has one.
    pub label: Option<String>,
    /// Errors under A.
    pub a: Metrics,
    /// Errors under B.
    pub b: Metrics,
    /// Utilization under A and B.
    pub utilization: (f64, f64),
    /// Collapsed under A and B.
    pub collapsed: (bool, bool),
    /// `b.mae - a.mae`.
    pub mae_change: f64,
    /// `b.rmse - a.rmse`.
    pub rmse_change: f64,
}

/// A and B side by side.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// The configuration fields that differ, in the order `core::names` lists settings.
    pub differences: Vec<Difference>,
    /// Every channel under both.
    pub channels: Vec<ChannelPair>,
    /// The whole matrix under A and B.
    pub overall: (Metrics, Metrics),
    /// Collapsed channels under A and B.
    pub collapsed: (usize, usize),
    /// Storage under A and B.
    pub memory: (Memory, Memory),
    /// The output and importance-weighted errors over the matrix under A and B, when both
    /// reports have them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<(OutputMetrics, OutputMetrics)>,
    /// When A and B are ordered one way by weight RMSE and the other by the output error
    /// (or the importance-weighted error), that in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<RankingChange>,
}

/// Why two reports cannot be compared.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the reports are of different matrices ({a:?} and {b:?})")]
pub struct ShapeMismatch {
    /// A's shape.
    pub a: (usize, usize),
    /// B's shape.
    pub b: (usize, usize),
}

/// What differs between the configurations `a` and `b`, as settings (`granularity:
/// tensor -> group:32`); empty when they are the same.
#[must_use]
pub fn differences(a: &Config, b: &Config) -> Vec<Difference> {
    if a.format.is_some() || b.format.is_some() {
        // A format fixes every setting: what differs is the format itself.
        let name = |c: &Config| c.format.map_or_else(|| c.summary(), |f| f.name.to_string());
        return if a == b {
            Vec::new()
        } else {
            vec![Difference {
                key: "format",
                a: name(a),
                b: name(b),
            }]
        };
    }
    let (a_settings, b_settings) = (settings_of(a), settings_of(b));
    a_settings
        .into_iter()
        .zip(b_settings)
        .filter(|((_, va), (_, vb))| va != vb)
        .map(|((key, a), (_, b))| Difference { key, a, b })
        .collect()
}

/// Reports `a` and `b` of the same matrix side by side.
pub fn compare(a: &Report, b: &Report) -> Result<Comparison, ShapeMismatch> {
    if a.shape != b.shape {
        return Err(ShapeMismatch {
            a: a.shape,
            b: b.shape,
        });
    }
    let channels = a
        .channels
        .iter()
        .zip(&b.channels)
        .map(|(ca, cb)| ChannelPair {
            index: ca.index,
            label: ca.label.clone(),
            a: ca.metrics,
            b: cb.metrics,
            utilization: (ca.utilization, cb.utilization),
            collapsed: (ca.collapsed, cb.collapsed),
            mae_change: cb.metrics.mae - ca.metrics.mae,
            rmse_change: cb.metrics.rmse - ca.metrics.rmse,
        })
        .collect();
    let output = match (&a.output, &b.output) {
        (Some(oa), Some(ob)) => Some((oa.overall, ob.overall)),
        _ => None,
    };
    Ok(Comparison {
        differences: differences(&a.config, &b.config),
        channels,
        overall: (a.overall, b.overall),
        collapsed: (a.collapsed_channels, b.collapsed_channels),
        memory: (a.memory, b.memory),
        change: output.and_then(|o| change((a, b), o)),
        output,
    })
}

/// The reversal of A and B's order by weight RMSE on the output error, if any: named by
/// their formats, else `A` and `B`.
fn change(
    (a, b): (&Report, &Report),
    (oa, ob): (OutputMetrics, OutputMetrics),
) -> Option<RankingChange> {
    let (measure, ea, eb) = match (oa.output_mse, ob.output_mse) {
        (Some(x), Some(y)) => (Measure::OutputMse, x, y),
        _ => (Measure::ImatrixMse, oa.imatrix_mse?, ob.imatrix_mse?),
    };
    let name = |r: &Report, fallback: &'static str| r.config.format.map_or(fallback, |f| f.name);
    let (na, nb) = (name(a, "A"), name(b, "B"));
    let (na, nb) = if na == nb { ("A", "B") } else { (na, nb) };
    let entries = [
        Ranked {
            name: na,
            weight_rmse: a.overall.rmse,
            error: ea,
        },
        Ranked {
            name: nb,
            weight_rmse: b.overall.rmse,
            error: eb,
        },
    ];
    ranking_changes(&entries, measure).into_iter().next()
}

impl Comparison {
    /// What differs, in a few words: `granularity channel -> group:32, bits 4 -> 8`, or
    /// `the same configuration`.
    #[must_use]
    pub fn summary(&self) -> String {
        if self.differences.is_empty() {
            return "the same configuration".into();
        }
        self.differences
            .iter()
            .map(|d| format!("{} {} -> {}", d.key, d.a, d.b))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::config::Granularity;
    use crate::core::{Matrix, analyse};

    #[test]
    fn the_quiet_row_under_a_shared_scale_against_its_own() {
        let m =
            Matrix::from_rows(&[&[0.05, -0.08, 0.12, -0.15], &[2.21, -3.10, 1.77, -2.66]]).unwrap();
        let a_config = Config::default();
        let b_config = Config {
            granularity: Granularity::Channel,
            ..a_config
        };
        let a = analyse(&m, &a_config).unwrap();
        let b = analyse(&m, &b_config).unwrap();
        let c = compare(&a, &b).unwrap();
        assert_eq!(c.summary(), "granularity tensor -> channel");
        assert_eq!(c.collapsed, (1, 0));
        assert_eq!(c.channels[0].collapsed, (true, false));
        assert!((c.channels[0].mae_change - (0.005_357 - 0.1)).abs() < 1e-5);
        assert_eq!(
            c.channels[1].mae_change, 0.0,
            "the loud row keeps its scale"
        );
        assert!(c.memory.1.bits_per_weight > c.memory.0.bits_per_weight);
        assert!(compare(&a, &a).unwrap().differences.is_empty());
        let other = analyse(&Matrix::from_rows(&[&[1.0, 2.0]]).unwrap(), &a_config).unwrap();
        assert!(compare(&a, &other).is_err());
    }
}
