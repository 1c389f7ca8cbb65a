//! Settings that a configuration makes pointless: they are set, but nothing the analysis
//! computes depends on them under the rest of the configuration. The explorer says so
//! beside the setting and when it is changed, rather than leaving the user to wonder why
//! nothing moved.

use crate::core::config::{Axis, Config, Granularity, RangeKind, RangeSource, Scheme};

/// One setting without effect: its key (as `crate::core::names::SETTINGS` spells it) and
/// why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoEffect {
    /// The setting's key, e.g. `range`.
    pub key: &'static str,
    /// Why it changes nothing here.
    pub why: &'static str,
}

/// The settings of `config` that change nothing under the rest of it.
#[must_use]
pub fn ineffective(config: &Config) -> Vec<NoEffect> {
    let mut out = Vec::new();
    if config.range == RangeKind::Narrow && !config.signed {
        out.push(NoEffect {
            key: "range",
            why: "narrow drops the most negative signed code; unsigned codes have none to drop",
        });
    }
    if config.range_source == RangeSource::IncludeZero && config.scheme == Scheme::Symmetric {
        out.push(NoEffect {
            key: "range-source",
            why: "a symmetric scale comes from the largest magnitude, which widening the range to 0 does not change",
        });
    }
    if config.axis == Axis::Columns && config.granularity != Granularity::Channel {
        out.push(NoEffect {
            key: "axis",
            why: "the axis chooses the channels' direction for per-channel scales only",
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::ineffective;
    use crate::core::config::{Config, Granularity, RangeKind, RangeSource};

    #[test]
    fn each_rule_fires_only_when_the_setting_is_pointless() {
        let base = Config::default();
        assert!(ineffective(&base).is_empty(), "{base:?}");
        let narrow_unsigned = Config {
            signed: false,
            range: RangeKind::Narrow,
            ..base
        };
        assert_eq!(ineffective(&narrow_unsigned)[0].key, "range");
        let widened = Config {
            range_source: RangeSource::IncludeZero,
            ..base
        };
        assert_eq!(ineffective(&widened)[0].key, "range-source");
        let columns = Config {
            axis: crate::core::config::Axis::Columns,
            ..base
        };
        assert_eq!(ineffective(&columns)[0].key, "axis");
        let per_channel = Config {
            granularity: Granularity::Channel,
            ..columns
        };
        assert!(ineffective(&per_channel).is_empty());
    }
}
