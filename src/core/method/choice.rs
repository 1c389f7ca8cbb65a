//! The method the explorer runs (its "method" setting, Alt-M) and a scenario's `#! method:`,
//! `#! act-quant:` and `#! smoothquant:` headers name: round to nearest alone, AWQ, GPTQ, or
//! the W8A8 layer (activations int8 per tensor or per token) with or without SmoothQuant.

use super::act_quant::ActGranularity;
use super::run::{Alpha, Method, Request, Scheme};

/// One method to run on the layer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Choice {
    /// A weight method (round to nearest alone runs nothing).
    Weights(Method),
    /// W8A8: the activations quantized too, smoothed first when asked.
    W8A8 {
        /// One scale per tensor or per token.
        activations: ActGranularity,
        /// SmoothQuant's α, when it smooths first.
        smoothquant: Option<Alpha>,
    },
}

impl Default for Choice {
    fn default() -> Self {
        Self::RTN
    }
}

impl Choice {
    /// Round to nearest alone.
    pub const RTN: Self = Self::Weights(Method::Rtn);

    /// What Alt-M steps through.
    pub const CYCLE: [Self; 7] = [
        Self::RTN,
        Self::Weights(Method::Awq),
        Self::Weights(Method::Gptq),
        Self::W8A8 {
            activations: ActGranularity::PerTensor,
            smoothquant: None,
        },
        Self::W8A8 {
            activations: ActGranularity::PerToken,
            smoothquant: None,
        },
        Self::W8A8 {
            activations: ActGranularity::PerTensor,
            smoothquant: Some(Alpha::Best),
        },
        Self::W8A8 {
            activations: ActGranularity::PerToken,
            smoothquant: Some(Alpha::Best),
        },
    ];

    /// What it is, short enough for the Settings pane at 80 columns: `AWQ`, `W8A8 per
    /// token`, `SQ W8A8 per token` (SmoothQuant at its best α), `SQ α 0.5 W8A8 per token`.
    #[must_use]
    pub fn title(self) -> String {
        match self {
            Self::Weights(m) => m.title().to_string(),
            Self::W8A8 {
                activations,
                smoothquant,
            } => {
                let w8a8 = format!("W8A8 per {}", activations.name());
                match smoothquant {
                    None => w8a8,
                    Some(Alpha::Best) => format!("SQ {w8a8}"),
                    Some(Alpha::Fixed(a)) => format!("SQ α {a} {w8a8}"),
                }
            }
        }
    }

    /// What it is, in words, for the status line: `SmoothQuant at its best α, then W8A8 per
    /// token`.
    #[must_use]
    pub fn words(self) -> String {
        match self {
            Self::W8A8 {
                activations,
                smoothquant: Some(alpha),
            } => {
                let at = match alpha {
                    Alpha::Best => "its best α".to_string(),
                    Alpha::Fixed(a) => format!("α {a}"),
                };
                format!("SmoothQuant at {at}, then W8A8 per {}", activations.name())
            }
            other => other.title(),
        }
    }

    /// It runs on the activations (everything but round to nearest alone).
    #[must_use]
    pub fn runs(self) -> bool {
        self != Self::RTN
    }

    /// What the worker runs for it, with the weights quantized as `scheme` says (the W8A8
    /// layer's weights are int8 per channel whatever the scheme); `None` for round to nearest.
    #[must_use]
    pub fn request(self, scheme: Scheme) -> Option<Request> {
        let base = Request {
            scheme,
            explain: Some(0),
            ..Request::default()
        };
        match self {
            Self::Weights(Method::Rtn) => None,
            Self::Weights(m) => Some(Request {
                methods: vec![m],
                ..base
            }),
            Self::W8A8 {
                activations,
                smoothquant,
            } => Some(Request {
                act_quant: vec![activations],
                smoothquant,
                ..base
            }),
        }
    }

    /// The choice of a scenario's headers: `method` (rtn, awq or gptq), or `act-quant`
    /// (per-tensor or per-token; per-token when only `smoothquant` is given) with
    /// `smoothquant` (an α from 0 to 1, or best).
    pub fn from_headers(
        method: Option<&str>,
        act_quant: Option<&str>,
        smoothquant: Option<&str>,
    ) -> Result<Option<Self>, String> {
        let smoothquant = smoothquant.map(str::parse::<Alpha>).transpose()?;
        let activations = act_quant.map(str::parse::<ActGranularity>).transpose()?;
        match (
            method.map(str::parse::<Method>).transpose()?,
            activations,
            smoothquant,
        ) {
            (None, None, None) => Ok(None),
            (Some(m), None, None) => Ok(Some(Self::Weights(m))),
            (Some(m), _, _) => Err(format!(
                "method {m} and act-quant or smoothquant: the explorer runs one method; W8A8 is act-quant (with smoothquant) alone"
            )),
            (None, a, s) => Ok(Some(Self::W8A8 {
                activations: a.unwrap_or_default(),
                smoothquant: s,
            })),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_name_one_choice() {
        assert_eq!(Choice::from_headers(None, None, None), Ok(None));
        assert_eq!(
            Choice::from_headers(Some("gptq"), None, None),
            Ok(Some(Choice::Weights(Method::Gptq)))
        );
        assert_eq!(
            Choice::from_headers(None, None, Some("best")),
            Ok(Some(Choice::W8A8 {
                activations: ActGranularity::PerToken,
                smoothquant: Some(Alpha::Best)
            }))
        );
        assert_eq!(
            Choice::from_headers(None, Some("per-tensor"), Some("0.5")),
            Ok(Some(Choice::W8A8 {
                activations: ActGranularity::PerTensor,
                smoothquant: Some(Alpha::Fixed(0.5))
            }))
        );
        assert!(Choice::from_headers(Some("awq"), Some("per-token"), None).is_err());
        assert!(Choice::from_headers(None, None, Some("1.5")).is_err());
        assert!(Choice::from_headers(Some("round-up"), None, None).is_err());
    }

    #[test]
    fn each_choice_asks_for_what_it_names() {
        let scheme = Scheme {
            bits: 4,
            group: None,
            sym: false,
        };
        assert_eq!(Choice::RTN.request(scheme), None);
        for c in Choice::CYCLE.iter().skip(1) {
            let r = c.request(scheme).unwrap();
            assert_eq!(r.methods.len() + r.act_quant.len(), 1, "{c:?}");
        }
        assert_eq!(Choice::CYCLE[6].title(), "SQ W8A8 per token");
    }
}
