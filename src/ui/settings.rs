//! The Settings pane: every field of the configuration with its value and the key that
//! changes it (taken from the keymap).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::app::keymap::{Action, Mode, bindings};
use crate::app::model::{SETTINGS, Setting};
use crate::core::config::{
    Axis, Clipping, Config, Granularity, RangeKind, RangeSource, Rounding, ScaleDtype, Scheme,
};
use crate::ui::Theme;

/// The Settings pane.
#[derive(Debug)]
pub struct SettingsPane<'a> {
    /// The resolved configuration.
    pub config: &'a Config,
    /// The preset it starts from.
    pub preset: &'a str,
    /// Fields were changed after the preset.
    pub modified: bool,
    /// The remembered group size.
    pub group_size: usize,
    /// The selected line.
    pub selected: usize,
    /// The pane has focus.
    pub focused: bool,
    /// Styles.
    pub theme: &'a Theme,
}

/// The action whose keys change `setting`, for the key column.
#[must_use]
pub fn setting_actions(setting: Setting) -> &'static [Action] {
    match setting {
        Setting::Preset => &[Action::NextPreset],
        Setting::Bits => &[Action::BitsDown, Action::BitsUp],
        Setting::Signed => &[Action::ToggleSigned],
        Setting::Scheme => &[Action::ToggleScheme],
        Setting::Range => &[Action::ToggleRange],
        Setting::RangeSource => &[Action::ToggleRangeSource],
        Setting::Rounding => &[Action::CycleRounding],
        Setting::Granularity => &[Action::CycleGranularity],
        Setting::GroupSize => &[Action::CycleGroupSize],
        Setting::Axis => &[Action::ToggleAxis],
        Setting::Clipping => &[Action::CycleClipping],
        Setting::ScaleDtype => &[Action::CycleScaleDtype],
    }
}

/// The keys that change `setting` while the editor has focus, e.g. `F2/F3` or `Alt-x`.
#[must_use]
pub fn setting_keys(setting: Setting) -> String {
    setting_actions(setting)
        .iter()
        .filter_map(|a| {
            bindings(Mode::Global)
                .find(|b| b.action == *a)
                .and_then(|b| b.keys.first())
                .map(crate::app::keymap::Combo::label)
        })
        .collect::<Vec<_>>()
        .join("/")
}

impl SettingsPane<'_> {
    fn label_value(&self, setting: Setting) -> (&'static str, String) {
        let c = self.config;
        match setting {
            Setting::Preset => (
                "preset",
                format!(
                    "{}{}",
                    self.preset,
                    if self.modified { " (changed)" } else { "" }
                ),
            ),
            Setting::Bits => {
                let (qmin, qmax) = c.code_range();
                ("bits", format!("{}  [{qmin}, {qmax}]", c.bits))
            }
            Setting::Signed => ("codes", if c.signed { "signed" } else { "unsigned" }.into()),
            Setting::Scheme => (
                "scheme",
                if c.scheme == Scheme::Symmetric {
                    "symmetric"
                } else {
                    "asymmetric"
                }
                .into(),
            ),
            Setting::Range => (
                "range",
                match c.range {
                    RangeKind::Full => "full".into(),
                    RangeKind::Narrow => "narrow".into(),
                    RangeKind::Custom { qmin, qmax } => format!("custom {qmin}..{qmax}"),
                },
            ),
            Setting::RangeSource => (
                "min/max",
                if c.range_source == RangeSource::Tight {
                    "tight"
                } else {
                    "widened to include 0"
                }
                .into(),
            ),
            Setting::Rounding => (
                "rounding",
                match c.rounding {
                    Rounding::HalfEven => "half to even",
                    Rounding::HalfAway => "half away from 0",
                    Rounding::HalfUp => "half up",
                }
                .into(),
            ),
            Setting::Granularity => (
                "granularity",
                match c.granularity {
                    Granularity::Tensor => "per tensor".into(),
                    Granularity::Channel => "per channel".into(),
                    Granularity::Group(g) => format!("per group of {g}"),
                },
            ),
            Setting::GroupSize => ("group size", self.group_size.to_string()),
            Setting::Axis => (
                "axis",
                if c.axis == Axis::Rows {
                    "0 (rows)"
                } else {
                    "1 (columns)"
                }
                .into(),
            ),
            Setting::Clipping => (
                "clipping",
                match c.clipping {
                    Clipping::None => "none (min-max)".into(),
                    Clipping::Percentile(p) => format!("percentile {p}"),
                    Clipping::Mse => "MSE search".into(),
                },
            ),
            Setting::ScaleDtype => (
                "scales",
                match c.scale_dtype {
                    ScaleDtype::F32 => "f32",
                    ScaleDtype::F16 => "f16",
                    ScaleDtype::Bf16 => "bf16",
                }
                .into(),
            ),
        }
    }
}

impl Widget for &SettingsPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let block = self.theme.block("Settings", self.focused, false);
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.is_empty() {
            return;
        }
        let height = usize::from(inner.height);
        let selected = self.selected.min(SETTINGS.len() - 1);
        let first = selected
            .saturating_sub(height.saturating_sub(1))
            .min(SETTINGS.len().saturating_sub(height));
        let width = usize::from(inner.width);
        let lines: Vec<Line> = SETTINGS
            .iter()
            .enumerate()
            .skip(first)
            .take(height)
            .map(|(i, &setting)| {
                let (label, mut value) = self.label_value(setting);
                if crate::core::effect::ineffective(self.config)
                    .iter()
                    .any(|n| n.key == setting.key())
                {
                    value.push_str(" (no effect)");
                }
                let keys = setting_keys(setting);
                let is_selected = self.focused && i == selected;
                let pointer = if is_selected {
                    self.theme.glyphs.pointer
                } else {
                    " "
                };
                let left = format!("{pointer} {label:<12}{value}");
                let pad = width.saturating_sub(left.chars().count() + keys.chars().count());
                let style = if is_selected {
                    self.theme.selected
                } else {
                    self.theme.text
                };
                Line::from(vec![
                    Span::styled(left, style),
                    Span::raw(" ".repeat(pad)),
                    Span::styled(keys, self.theme.key),
                ])
            })
            .collect();
        Paragraph::new(lines).render(inner, buf);
    }
}
