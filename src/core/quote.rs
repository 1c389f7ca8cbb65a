//! Figures a caption quotes from a report, so that no caption states a number by hand: an
//! error of one channel or of the whole matrix at a rung of the granularity ladder, the
//! ratio of two such errors (how many times smaller one granularity makes it), and a rung's
//! bits per weight or collapsed channels. `teach` reads them from caption text
//! (`{mae quiet tensor/channel}`) and formats them; this module only computes.

use crate::core::config::Granularity;
use crate::core::report::{Metrics, Report, Rung};

/// What is quoted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// Mean absolute error.
    Mae,
    /// Root mean squared error.
    Rmse,
    /// Bits per weight of the rung (the whole matrix).
    Bits,
    /// Channels that collapse at the rung (the whole matrix).
    Collapsed,
}

/// Whose error is quoted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Of {
    /// The whole matrix.
    Matrix,
    /// One channel (row), 0-based.
    Row(usize),
}

/// One figure of a report: `quantity` of `of` at the rung `at`, or the ratio of it at `at`
/// to it at `over`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quote {
    /// What.
    pub quantity: Quantity,
    /// Whose.
    pub of: Of,
    /// At which rung of the ladder.
    pub at: Granularity,
    /// Divided by the same at this rung.
    pub over: Option<Granularity>,
}

fn rung(report: &Report, g: Granularity) -> Option<&Rung> {
    report.ladder.iter().find(|r| r.granularity == g)
}

fn at(report: &Report, quantity: Quantity, of: Of, g: Granularity) -> Option<f64> {
    let r = rung(report, g)?;
    let metrics: &Metrics = match of {
        Of::Matrix => &r.overall,
        Of::Row(i) => r.channels.get(i)?,
    };
    Some(match quantity {
        Quantity::Mae => metrics.mae,
        Quantity::Rmse => metrics.rmse,
        Quantity::Bits => r.memory.bits_per_weight,
        Quantity::Collapsed => r.collapsed_channels as f64,
    })
}

/// The figure `quote` names in `report`: `None` when the report's ladder has no such rung
/// or row (or a ratio's divisor is 0).
#[must_use]
pub fn value(report: &Report, quote: &Quote) -> Option<f64> {
    let x = at(report, quote.quantity, quote.of, quote.at)?;
    match quote.over {
        None => Some(x),
        Some(g) => {
            let y = at(report, quote.quantity, quote.of, g)?;
            (y != 0.0).then(|| x / y)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{Config, Matrix, analyse};

    #[test]
    fn the_quiet_rows_mae_falls_by_the_ratio_of_its_two_rungs() {
        let m =
            Matrix::from_rows(&[&[0.05, -0.08, 0.12, -0.15], &[2.21, -3.10, 1.77, -2.66]]).unwrap();
        let r = analyse(&m, &Config::default()).unwrap();
        let quote = |over| Quote {
            quantity: Quantity::Mae,
            of: Of::Row(0),
            at: Granularity::Tensor,
            over,
        };
        let tensor = value(&r, &quote(None)).unwrap();
        let factor = value(&r, &quote(Some(Granularity::Channel))).unwrap();
        assert!((tensor - 0.1).abs() < 1e-9);
        assert!((factor - 0.1 / 0.005_357_146).abs() < 1e-4, "{factor}");
        let missing = Quote {
            of: Of::Row(2),
            ..quote(None)
        };
        assert_eq!(value(&r, &missing), None);
    }
}
