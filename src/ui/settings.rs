//! The Settings pane: every field of the configuration with its value and the key that
//! changes it (taken from the keymap).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::app::keymap::{Action, Mode, bindings};
use crate::app::setting::{Current, SETTINGS, Setting};
use crate::core::config::Config;
use crate::core::presets::Overrides;
use crate::ui::Theme;

/// The Settings pane.
#[derive(Debug)]
pub struct SettingsPane<'a> {
    /// The resolved configuration.
    pub config: &'a Config,
    /// The preset it starts from.
    pub preset: &'static str,
    /// What was changed after the preset.
    pub overrides: Overrides,
    /// Fields were changed after the preset.
    pub modified: bool,
    /// The remembered group size.
    pub group_size: usize,
    /// The length of the data's rows, when known (a format on rows its blocks do not
    /// divide shows llama.cpp's fallback).
    pub row_len: Option<usize>,
    /// The method beyond rounding.
    pub method: crate::core::method::choice::Choice,
    /// The selected line.
    pub selected: usize,
    /// The pane has focus.
    pub focused: bool,
    /// Which weights matter, in words (what is loaded and whether it is on), when
    /// something is loaded: the pane's lower border says it.
    pub importance: Option<String>,
    /// Styles.
    pub theme: &'a Theme,
}

/// The keys that change `setting` while the editor has focus, e.g. `F2/F3` or `Alt-x`
/// (from the keymap: the first key of each of the setting's actions).
#[must_use]
pub fn setting_keys(setting: Setting) -> String {
    bindings(Mode::Global)
        .filter(|b| matches!(b.action, Action::Change(s, _) if s == setting))
        .filter_map(|b| b.keys.first().map(crate::app::keymap::Combo::label))
        .collect::<Vec<_>>()
        .join("/")
}

impl SettingsPane<'_> {
    /// The first setting shown in a list of `height` rows.
    fn first(&self, height: usize) -> usize {
        let selected = self.selected.min(SETTINGS.len() - 1);
        selected
            .saturating_sub(height.saturating_sub(1))
            .min(SETTINGS.len().saturating_sub(height))
    }

    /// The screen rows of the settings shown in `area` (the pane with its border), each
    /// with its index in [`SETTINGS`]: where a click selects one.
    #[must_use]
    pub fn item_rows(&self, area: Rect) -> Vec<(u16, usize)> {
        let inner = self.theme.block("", false, false).inner(area);
        let first = self.first(usize::from(inner.height));
        (inner.y..inner.bottom())
            .zip(first..SETTINGS.len())
            .collect()
    }
}

impl Widget for &SettingsPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let mut block = self.theme.block("Settings", self.focused, false);
        if let Some(text) = &self.importance {
            block = block.title_bottom(Line::styled(format!(" {text} "), self.theme.active));
        }
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.is_empty() {
            return;
        }
        let height = usize::from(inner.height);
        let selected = self.selected.min(SETTINGS.len() - 1);
        let first = self.first(height);
        let width = usize::from(inner.width);
        let lines: Vec<Line> = SETTINGS
            .iter()
            .enumerate()
            .skip(first)
            .take(height)
            .map(|(i, &setting)| {
                let now = Current {
                    config: self.config,
                    preset: self.preset,
                    overrides: self.overrides,
                    group_size: self.group_size,
                    row_len: self.row_len,
                    method: self.method,
                    // Only the description is read here, which does not depend on it.
                    weighing: false,
                };
                let label = setting.label();
                let mut value = setting.describe(&now, self.modified);
                if crate::core::no_effect::ineffective(self.config)
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
