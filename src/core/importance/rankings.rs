//! Rankings that change: where two formats (or two granularities) are ordered one way by
//! the error of their weights and the other way by the error of the layer's output, said
//! in words ("q4_k beats nf4 on weight RMSE, loses on output error").

use serde::Serialize;

/// The error a ranking is compared on, beside the weights' RMSE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// `output_mse` (with activations).
    OutputMse,
    /// `imatrix_mse` (with an importance vector alone).
    ImatrixMse,
}

impl Measure {
    /// How a sentence names it.
    #[must_use]
    pub const fn words(self) -> &'static str {
        match self {
            Self::OutputMse => "output error",
            Self::ImatrixMse => "importance-weighted error",
        }
    }
}

/// Two entries ordered one way by weight RMSE and the other way by [`Measure`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankingChange {
    /// The entry with the lower weight RMSE (and the higher error on the measure).
    pub winner_on_weights: String,
    /// The other one.
    pub loser_on_weights: String,
    /// What they are compared on.
    pub measure: Measure,
    /// How much higher the first one's error on the measure is (its ratio to the other's,
    /// at least 1).
    pub ratio: f64,
    /// `"q4_k beats nf4 on weight RMSE, loses on output error"`.
    pub sentence: String,
}

/// One entry to rank: its name, weight RMSE and error on the measure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked<'a> {
    /// Its name.
    pub name: &'a str,
    /// The weights' RMSE.
    pub weight_rmse: f64,
    /// The error on the measure.
    pub error: f64,
}

/// Every pair of `entries` ordered one way by weight RMSE and strictly the other way by
/// `measure`, the largest reversal first (by the ratio of the errors on the measure, then
/// in the entries' order). Entries with equal weight RMSE are not a reversal.
#[must_use]
pub fn ranking_changes(entries: &[Ranked<'_>], measure: Measure) -> Vec<RankingChange> {
    let mut out = Vec::new();
    for (i, a) in entries.iter().enumerate() {
        for b in &entries[i + 1..] {
            let (win, lose) = if a.weight_rmse < b.weight_rmse {
                (a, b)
            } else if b.weight_rmse < a.weight_rmse {
                (b, a)
            } else {
                continue;
            };
            if win.error > lose.error {
                let ratio = if lose.error > 0.0 {
                    win.error / lose.error
                } else {
                    f64::INFINITY
                };
                out.push(RankingChange {
                    winner_on_weights: win.name.to_string(),
                    loser_on_weights: lose.name.to_string(),
                    measure,
                    ratio,
                    sentence: format!(
                        "{} beats {} on weight RMSE, loses on {}",
                        win.name,
                        lose.name,
                        measure.words()
                    ),
                });
            }
        }
    }
    out.sort_by(|a, b| b.ratio.total_cmp(&a.ratio));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reversals_are_named_largest_first() {
        let e = [
            Ranked {
                name: "q4_k",
                weight_rmse: 1.0,
                error: 3.0,
            },
            Ranked {
                name: "nf4",
                weight_rmse: 2.0,
                error: 2.0,
            },
            Ranked {
                name: "q8_0",
                weight_rmse: 0.1,
                error: 0.1,
            },
            Ranked {
                name: "same",
                weight_rmse: 2.0,
                error: 0.5,
            },
        ];
        let c = ranking_changes(&e, Measure::OutputMse);
        let s: Vec<&str> = c.iter().map(|c| c.sentence.as_str()).collect();
        assert_eq!(
            s,
            [
                "q4_k beats same on weight RMSE, loses on output error",
                "q4_k beats nf4 on weight RMSE, loses on output error",
            ]
        );
        assert_eq!(c[1].ratio, 1.5);
        assert!(ranking_changes(&e[2..3], Measure::ImatrixMse).is_empty());
    }
}
