//! The settings the explorer changes, each described once: its key (as scenario headers
//! and the command line spell it), its label and value in the Settings pane, what its keys
//! do (for the help and the hints), and how one key press changes it. The keymap binds keys
//! to [`Action::Change`](crate::app::keymap::Action::Change) with a setting and a
//! direction; everything else follows from here.
//!
//! Adding a setting: its type and names in `core` (`core::config`, `core::names`), one
//! variant here with its arms, a line in [`SETTINGS`], and a keymap row. The method is the
//! one setting outside the configuration: the model keeps it beside it ([`Current::method`]).

use crate::core::config::{
    Axis, Clipping, Config, Granularity, RangeKind, RangeSource, Rounding, ScaleDtype, Scheme,
};
use crate::core::format_ladder::FORMATS;
use crate::core::method::choice::Choice;
use crate::core::presets::{Overrides, PRESETS};

/// The group sizes the group-size key steps through, largest first: the ladder's, then the
/// small ones that rows of a few values (the built-in example's 4) can be grouped by.
pub const GROUP_SIZES: [usize; 8] = [256, 128, 64, 32, 16, 8, 4, 2];

/// One line of the Settings pane, and what a key changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Setting {
    /// The preset the configuration starts from.
    Preset,
    /// Code width.
    Bits,
    /// Signed or unsigned.
    Signed,
    /// Symmetric or asymmetric.
    Scheme,
    /// Round to nearest, AWQ or GPTQ (on the activations).
    Method,
    /// Full or narrow range.
    Range,
    /// Tight or zero-including range.
    RangeSource,
    /// Rounding mode.
    Rounding,
    /// Tensor, channel or group.
    Granularity,
    /// The group size G.
    GroupSize,
    /// Channel axis.
    Axis,
    /// Clipping method.
    Clipping,
    /// Scale storage.
    ScaleDtype,
}

/// Every setting in display order.
pub const SETTINGS: [Setting; 13] = [
    Setting::Preset,
    Setting::Bits,
    Setting::Signed,
    Setting::Scheme,
    Setting::Method,
    Setting::Range,
    Setting::RangeSource,
    Setting::Rounding,
    Setting::Granularity,
    Setting::GroupSize,
    Setting::Axis,
    Setting::Clipping,
    Setting::ScaleDtype,
];

/// Which way a key moves a setting through its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// To the previous value (one bit fewer).
    Back,
    /// To the next value.
    Forward,
}

/// Clipping methods the explorer cycles through.
pub const CLIPPINGS: [Clipping; 4] = [
    Clipping::None,
    Clipping::Percentile(99.9),
    Clipping::Percentile(99.0),
    Clipping::Mse,
];

/// The same, with the importance-weighted MSE search after the MSE search: the cycle when
/// an importance is loaded and quantizes.
pub const CLIPPINGS_WEIGHTED: [Clipping; 5] = [
    Clipping::None,
    Clipping::Percentile(99.9),
    Clipping::Percentile(99.0),
    Clipping::Mse,
    Clipping::MseWeighted,
];

/// What a setting is changed against: the configuration as resolved, and how it was made.
#[derive(Debug, Clone, Copy)]
pub struct Current<'a> {
    /// The resolved configuration.
    pub config: &'a Config,
    /// The preset it starts from.
    pub preset: &'static str,
    /// What was changed after the preset.
    pub overrides: Overrides,
    /// The group size used when the granularity is switched to groups.
    pub group_size: usize,
    /// The length of the data's rows, when known (a switch to groups picks a group that
    /// fits them).
    pub row_len: Option<usize>,
    /// The method beyond rounding.
    pub method: Choice,
    /// An importance is loaded and quantizes: the clipping cycle includes the
    /// importance-weighted MSE search.
    pub weighing: bool,
}

/// The result of one key press on a setting: the new preset and overrides (resolved and
/// validated by the caller), and the group size to remember.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Changed {
    /// The preset.
    pub preset: &'static str,
    /// The overrides on top of it.
    pub overrides: Overrides,
    /// The remembered group size.
    pub group_size: usize,
    /// The method.
    pub method: Choice,
}

fn cycle<T: Copy + PartialEq>(values: &[T], current: T, dir: Direction) -> T {
    let n = values.len();
    let i = values.iter().position(|v| *v == current).unwrap_or(n - 1);
    values[match dir {
        Direction::Forward => (i + 1) % n,
        Direction::Back => (i + n - 1) % n,
    }]
}

impl Setting {
    /// The setting's key as scenario headers and `crate::core::names` spell it (the group
    /// size has none: it is the `G` of `granularity: group:G`).
    #[must_use]
    pub fn key(self) -> &'static str {
        match self {
            Self::Preset => "preset",
            Self::Bits => "bits",
            Self::Signed => "signed",
            Self::Scheme => "scheme",
            Self::Method => "method",
            Self::Range => "range",
            Self::RangeSource => "range-source",
            Self::Rounding => "rounding",
            Self::Granularity => "granularity",
            Self::GroupSize => "group-size",
            Self::Axis => "axis",
            Self::Clipping => "clip",
            Self::ScaleDtype => "scale-dtype",
        }
    }

    /// The label in the Settings pane.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::Preset => "preset",
            Self::Bits => "bits",
            Self::Signed => "codes",
            Self::Scheme => "scheme",
            Self::Method => "method",
            Self::Range => "range",
            Self::RangeSource => "min/max",
            Self::Rounding => "rounding",
            Self::Granularity => "granularity",
            Self::GroupSize => "group size",
            Self::Axis => "axis",
            Self::Clipping => "clipping",
            Self::ScaleDtype => "scales",
        }
    }

    /// The setting's value in the Settings pane.
    #[must_use]
    pub fn describe(self, now: &Current<'_>, changed_from_preset: bool) -> String {
        let c = now.config;
        // A format on rows its blocks do not divide: llama.cpp's fallback type is applied.
        let fallback = c
            .format
            .zip(now.row_len)
            .and_then(|(f, cols)| crate::core::fallback::resolve(f, cols).ok().flatten());
        if self == Self::Method {
            return now.method.title();
        }
        if let Some((fb, _)) = &fallback
            && !matches!(self, Self::Preset | Self::Bits)
        {
            return format!("fixed by {}", fb.to);
        }
        if let Some((fb, applied)) = &fallback
            && matches!(self, Self::Bits)
        {
            let (qmin, qmax) = applied.code_range();
            return format!("{}  [{qmin}, {qmax}] as {}", applied.bits, fb.to);
        }
        if let Some(f) = c.format
            && !matches!(self, Self::Preset | Self::Bits)
        {
            // A format's encoder decides the rest.
            return format!("fixed by {}", f.name);
        }
        match self {
            Self::Preset => format!(
                "{}{}",
                now.preset,
                if changed_from_preset {
                    " (changed)"
                } else {
                    ""
                }
            ),
            Self::Bits => {
                let (qmin, qmax) = c.code_range();
                format!("{}  [{qmin}, {qmax}]", c.bits)
            }
            Self::Signed => if c.signed { "signed" } else { "unsigned" }.into(),
            Self::Scheme => c.scheme.name().into(),
            Self::Method => now.method.title(),
            Self::Range => match c.range {
                RangeKind::Full => "full".into(),
                RangeKind::Narrow => "narrow".into(),
                RangeKind::Custom { qmin, qmax } => format!("custom {qmin}..{qmax}"),
            },
            Self::RangeSource => match c.range_source {
                RangeSource::Tight => "tight".into(),
                RangeSource::IncludeZero => "widened to include 0".into(),
            },
            Self::Rounding => match c.rounding {
                Rounding::HalfEven => "half to even",
                Rounding::HalfAway => "half away from 0",
                Rounding::HalfUp => "half up",
            }
            .into(),
            Self::Granularity => match c.granularity {
                Granularity::Tensor => "per tensor".into(),
                Granularity::Channel => "per channel".into(),
                Granularity::Group(g) => format!("per group of {g}"),
            },
            Self::GroupSize => now.group_size.to_string(),
            Self::Axis => match c.axis {
                Axis::Rows => "0 (rows)",
                Axis::Columns => "1 (columns)",
            }
            .into(),
            Self::Clipping => match c.clipping {
                Clipping::None => "none (min-max)".into(),
                Clipping::Percentile(p) => format!("percentile {p}"),
                Clipping::Mse => "MSE search".into(),
                Clipping::MseWeighted => "MSE search, importance-weighted".into(),
            },
            Self::ScaleDtype => c.scale_dtype.name().into(),
        }
    }

    /// What a key moving the setting `dir` does, for the help.
    #[must_use]
    pub fn help(self, dir: Direction) -> &'static str {
        match (self, dir) {
            (Self::Bits, Direction::Back) => "one bit fewer",
            (Self::Bits, Direction::Forward) => "one bit more",
            (Self::Preset, _) => "next preset (a library's or a document's conventions)",
            (Self::Signed, _) => "signed or unsigned codes",
            (Self::Scheme, _) => "symmetric or asymmetric",
            (Self::Method, _) => {
                "method: round to nearest, AWQ, GPTQ, W8A8 per tensor or per token, with SmoothQuant's best α (on the activations; the built-in ones if none are loaded)"
            }
            (Self::Range, _) => "full or narrow code range",
            (Self::RangeSource, _) => "tight min/max or range widened to include 0",
            (Self::Rounding, _) => "rounding: half-even, half-away, half-up",
            (Self::Granularity, _) => "granularity: tensor, channel, group",
            (Self::GroupSize, _) => "group size: 256, 128, 64, 32, 16, 8",
            (Self::Axis, _) => "per-channel along rows (axis 0) or columns (axis 1)",
            (Self::Clipping, _) => {
                "clipping: none, percentile 99.9, 99, MSE search (and importance-weighted, with importance on)"
            }
            (Self::ScaleDtype, _) => "scale storage: f32, f16, bf16",
        }
    }

    /// A short label for the hint line.
    #[must_use]
    pub fn short(self, dir: Direction) -> &'static str {
        match (self, dir) {
            (Self::Bits, Direction::Back) => "bits-",
            (Self::Bits, Direction::Forward) => "bits+",
            (Self::Preset, _) => "preset",
            (Self::Signed, _) => "sign",
            (Self::Scheme, _) => "scheme",
            (Self::Method, _) => "method",
            (Self::Range, _) => "range",
            (Self::RangeSource, _) => "zero in range",
            (Self::Rounding, _) => "rounding",
            (Self::Granularity, _) => "granularity",
            (Self::GroupSize, _) => "group",
            (Self::Axis, _) => "axis",
            (Self::Clipping, _) => "clip",
            (Self::ScaleDtype, _) => "scale type",
        }
    }

    /// The setting moved one step `dir` from `now`.
    #[must_use]
    pub fn step(self, now: &Current<'_>, dir: Direction) -> Changed {
        let c = now.config;
        let mut o = now.overrides;
        let mut preset = now.preset;
        let mut group_size = now.group_size;
        let mut method = now.method;
        match self {
            Self::Preset => {
                // The integer presets, then the formats with their own block layouts.
                let names: Vec<&'static str> = PRESETS
                    .iter()
                    .map(|p| p.name)
                    .chain(FORMATS.iter().map(|f| f.name))
                    .collect();
                preset = cycle(&names, preset, dir);
                o = Overrides::default();
            }
            Self::Bits => {
                o.bits = Some(match dir {
                    Direction::Forward => c.bits.saturating_add(1).min(16),
                    Direction::Back => c.bits.saturating_sub(1).max(1),
                });
            }
            Self::Signed => o.signed = Some(!c.signed),
            Self::Method => method = cycle(&Choice::CYCLE, now.method, dir),
            Self::Scheme => {
                o.scheme = Some(cycle(Scheme::ALL, c.scheme, dir));
                // The preset's own range follows the scheme (ONNX Runtime narrows only
                // symmetric int8).
                o.range = None;
            }
            Self::Range => {
                o.range = Some(if c.range == RangeKind::Narrow {
                    RangeKind::Full
                } else {
                    RangeKind::Narrow
                });
            }
            Self::RangeSource => {
                o.range_source = Some(cycle(RangeSource::ALL, c.range_source, dir));
            }
            Self::Rounding => o.rounding = Some(cycle(Rounding::ALL, c.rounding, dir)),
            Self::Granularity => {
                let g = if let Granularity::Group(g) = c.granularity {
                    Granularity::Group(g)
                } else {
                    // A group as long as the row or longer would be per channel again: rows
                    // too short for the group size get the largest that fits.
                    if let Some(row) = now.row_len
                        && group_size >= row
                        && let Some(&fits) = GROUP_SIZES.iter().find(|&&g| g < row)
                    {
                        group_size = fits;
                    }
                    Granularity::Group(group_size)
                };
                o.granularity = Some(cycle(
                    &[Granularity::Tensor, Granularity::Channel, g],
                    c.granularity,
                    dir,
                ));
            }
            Self::GroupSize => {
                group_size = cycle(&GROUP_SIZES, group_size, dir);
                if let Granularity::Group(_) = c.granularity {
                    o.granularity = Some(Granularity::Group(group_size));
                }
            }
            Self::Axis => o.axis = Some(cycle(Axis::ALL, c.axis, dir)),
            Self::Clipping => {
                let cycle_of: &[Clipping] = if now.weighing {
                    &CLIPPINGS_WEIGHTED
                } else {
                    &CLIPPINGS
                };
                o.clipping = Some(cycle(cycle_of, c.clipping, dir));
            }
            Self::ScaleDtype => o.scale_dtype = Some(cycle(ScaleDtype::ALL, c.scale_dtype, dir)),
        }
        Changed {
            preset,
            overrides: o,
            group_size,
            method,
        }
    }
}
