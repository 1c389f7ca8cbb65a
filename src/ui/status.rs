//! The title line, the hint/status line (hints generated from the keymap), and the
//! "terminal too small" screen.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use crate::app::editor::EditAction;
use crate::app::input::mode;
use crate::app::keymap::{Action, Combo, Mode, bindings};
use crate::app::model::ImportanceMode;
use crate::app::setting::{Direction, Setting};
use crate::app::{Focus, Model};
use crate::ui::utilization::text_width;
use crate::ui::{MIN_HEIGHT, MIN_WIDTH, Theme};

/// The first line: what is being looked at.
#[derive(Debug)]
pub struct TitleBar<'a> {
    /// The model.
    pub model: &'a Model,
    /// Styles.
    pub theme: &'a Theme,
}

impl Widget for &TitleBar<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let spans = title_spans(self.model, self.theme, usize::from(area.width));
        Paragraph::new(Line::from(spans)).render(area, buf);
    }
}

/// The title line's parts that fit in `width`: the parts that say where the user is (the
/// demo step, stale results, the configuration, the matrix's shape) always stay; the app's
/// name, the preset, the demo's title, "computing…" and what differs from a pinned A are
/// dropped, least useful first, when the line is too long.
#[must_use]
pub fn title_spans(m: &Model, theme: &Theme, width: usize) -> Vec<Span<'static>> {
    let sep = theme.glyphs.sep;
    // (text, style, priority): a higher priority is dropped first; 0 is never dropped.
    let mut parts: Vec<(String, ratatui::style::Style, u8)> = Vec::new();
    parts.push((" quantscope".into(), theme.heading, 3));
    if let Some(demo) = &m.demo {
        parts.push((
            format!(" {sep} demo: {}", demo.script.title),
            theme.active,
            5,
        ));
        parts.push((
            format!(" {sep} step {} of {}", demo.shown, demo.len()),
            theme.active,
            0,
        ));
    }
    if m.stale() {
        parts.push((
            format!(" {sep} {} stale", theme.glyphs.stale),
            theme.stale,
            0,
        ));
    }
    // A format applied through llama.cpp's fallback says so (`q4_k -> q5_0 (rows of 384)`).
    let applied = match m.analysis.report.as_ref().and_then(|r| r.fallback) {
        Some(f) if !m.stale() => f.label(),
        _ => m.config.summary(),
    };
    parts.push((format!(" {sep} {applied}"), theme.text, 0));
    parts.push((format!(" {sep} preset {}", m.preset), theme.text, 2));
    if m.changed_from_preset() {
        parts.push((" (changed)".into(), theme.text, 4));
    }
    if let Some(r) = &m.analysis.report {
        parts.push((format!(" {sep} {}x{}", r.shape.0, r.shape.1), theme.text, 0));
    }
    if let Some(c) = &m.importance.loaded {
        let mode = m.importance.mode;
        let (text, style) = match (mode, &m.analysis.calibration_unfit) {
            (ImportanceMode::Off, _) => (format!(" {sep} importance off"), theme.dim),
            (_, Some(_)) => (format!(" {sep} {}: does not fit", c.label), theme.bad),
            (ImportanceMode::Measure, None) => {
                (format!(" {sep} {} (measured only)", c.label), theme.active)
            }
            (ImportanceMode::Weigh, None) => (format!(" {sep} {}", c.label), theme.active),
        };
        parts.push((text, style, 1));
    }
    if let Some(c) = m
        .analysis
        .comparison
        .as_deref()
        .filter(|_| m.pinned.is_some())
    {
        parts.push((
            format!(" {sep} {}", crate::ui::compare::header(c, width / 2)),
            theme.active,
            1,
        ));
    }
    if m.analysis.pending && !m.stale() {
        parts.push((
            format!(
                " {sep} computing{}{}",
                crate::ui::ladder::percent(m.analysis.ladder_progress),
                theme.glyphs.ellipsis
            ),
            theme.dim,
            1,
        ));
    } else if m.analysis.output_progress.is_some() && !m.stale() {
        parts.push((
            format!(
                " {sep} output errors{}{}",
                crate::ui::ladder::percent(m.analysis.output_progress),
                theme.glyphs.ellipsis
            ),
            theme.dim,
            1,
        ));
    }
    let total = |parts: &[(String, ratatui::style::Style, u8)]| -> usize {
        parts
            .iter()
            .map(|(t, _, _)| Span::raw(t.as_str()).width())
            .sum()
    };
    for level in (1..=5).rev() {
        if total(&parts) <= width {
            break;
        }
        parts.retain(|(_, _, p)| *p != level);
    }
    // The first part left starts the line: without a separator before it.
    if let Some(first) = parts.first_mut()
        && let Some(rest) = first.0.strip_prefix(&format!(" {sep}"))
    {
        first.0 = rest.to_string();
    }
    parts
        .into_iter()
        .map(|(text, style, _)| Span::styled(text, style))
        .collect()
}

/// The actions the hint line offers in each situation, most useful first.
fn hint_actions(mode: Mode, focus: Focus) -> (Mode, &'static [Action]) {
    match mode {
        Mode::Editor => (Mode::Global, &[]),
        Mode::Help => (Mode::Help, &[Action::Close, Action::Down, Action::PageDown]),
        Mode::Confirm => (Mode::Confirm, &[Action::Yes, Action::No, Action::Close]),
        Mode::Prompt => (Mode::Prompt, &[Action::Yes, Action::Close]),
        Mode::Picker => (Mode::Picker, &[Action::Down, Action::Yes, Action::Close]),
        Mode::Practice => (
            Mode::Practice,
            &[
                Action::Submit,
                Action::Hint,
                Action::Reveal,
                Action::NextStep,
                Action::NextExercise,
                Action::Cards,
                Action::Close,
            ],
        ),
        Mode::Cards => (
            Mode::Cards,
            &[
                Action::Reveal,
                Action::NextStep,
                Action::PrevStep,
                Action::Close,
            ],
        ),
        Mode::Demo => (
            Mode::Demo,
            &[Action::NextStep, Action::PrevStep, Action::Close],
        ),
        Mode::TensorPicker => (
            Mode::TensorPicker,
            &[Action::Down, Action::Yes, Action::Close],
        ),
        Mode::Stored => (
            Mode::Stored,
            &[
                Action::Down,
                Action::SortRows,
                Action::CollapsedRowsOnly,
                Action::Close,
            ],
        ),
        // What a newcomer looks for first: help, then the lessons (practice, the format
        // ladder, the demo), then the everyday keys; the line keeps as many as fit.
        Mode::Global => (
            Mode::Global,
            &[
                Action::Help,
                Action::Edit(EditAction::ClearAll),
                Action::Practice,
                Action::Formats,
                Action::Demo,
                Action::Palette,
                Action::Change(Setting::Granularity, Direction::Forward),
                Action::Change(Setting::Bits, Direction::Forward),
                Action::FocusNext,
                Action::Save,
                Action::Quit,
            ],
        ),
        Mode::Palette => (Mode::Palette, &[Action::Down, Action::Yes, Action::Close]),
        Mode::Importance => (
            Mode::Importance,
            &[
                Action::Close,
                Action::LoadImportance,
                Action::ToggleImportance,
                Action::Help,
            ],
        ),
        Mode::Panes if focus == Focus::Settings => (
            Mode::Panes,
            &[
                Action::Help,
                Action::Palette,
                Action::Down,
                Action::Right,
                Action::Practice,
                Action::Formats,
                Action::Demo,
                Action::Left,
                Action::Quit,
            ],
        ),
        Mode::Panes => (
            Mode::Panes,
            &[
                Action::Help,
                Action::Palette,
                Action::Down,
                Action::Change(Setting::Granularity, Direction::Forward),
                Action::Practice,
                Action::Formats,
                Action::Demo,
                Action::WorstChannel,
                Action::ToggleDetail,
                Action::Quit,
            ],
        ),
    }
}

/// The hints for the current mode and focus as `(keys, label)` pairs, from the keymap.
#[must_use]
pub fn hints(model: &Model) -> Vec<(String, &'static str)> {
    let current = mode(model);
    let in_demo = model.demo.is_some() && matches!(current, Mode::Global | Mode::Panes);
    let (table, actions) = hint_actions(if in_demo { Mode::Demo } else { current }, model.focus);
    // The editor's own keys count where the editor has the keys (the Global table).
    let editor = if table == Mode::Global {
        Some(Mode::Editor)
    } else {
        None
    };
    let key_of = |a: Action| {
        bindings(table)
            .chain(bindings(Mode::Global))
            .chain(editor.into_iter().flat_map(bindings))
            .find(|b| b.action == a)
            .and_then(|b| b.keys.first())
            .map(Combo::label)
    };
    // A quantized tensor's stored view can be reopened from the panes.
    let stored = (model.source.stored().is_some() && matches!(table, Mode::Global | Mode::Panes))
        .then_some(Action::Stored);
    // Clearing the text is offered while it is as it was opened (to paste other data over
    // it); once edited, or empty, the command palette takes its place.
    let fresh = !model.editor.modified() && !model.editor.is_empty();
    let wanted = |a: &Action| match a {
        Action::Edit(EditAction::ClearAll) => fresh,
        Action::Palette if table == Mode::Global => !fresh,
        _ => true,
    };
    actions
        .iter()
        .copied()
        .take(1)
        .chain(stored)
        .chain(actions.iter().copied().skip(1))
        .filter(wanted)
        .filter_map(|a| {
            // Bits up and down share one hint: "F2/F3 bits".
            if a == Action::Change(Setting::Bits, Direction::Forward) {
                return Some((
                    format!(
                        "{}/{}",
                        key_of(Action::Change(Setting::Bits, Direction::Back))?,
                        key_of(a)?
                    ),
                    "bits",
                ));
            }
            Some((key_of(a)?, a.short_in(table)))
        })
        .collect()
}

/// The last line: a status message, or hints for the focused pane.
#[derive(Debug)]
pub struct StatusLine<'a> {
    /// The model.
    pub model: &'a Model,
    /// Styles.
    pub theme: &'a Theme,
}

impl Widget for &StatusLine<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        // A name prompt shows the status (why the last name did not work) in full itself.
        let status = self.model.status.as_ref().filter(|_| {
            !matches!(
                self.model.overlay,
                Some(
                    crate::app::Overlay::SaveAs(_)
                        | crate::app::Overlay::Export(_)
                        | crate::app::Overlay::Importance(_)
                )
            )
        });
        let line = if let Some(status) = status {
            Line::from(Span::styled(format!(" {status}"), self.theme.active))
        } else if self.model.pinned.is_some() {
            let text = crate::ui::compare::summary(
                self.model.analysis.comparison.as_deref(),
                self.theme.glyphs.sep,
                if self.theme.glyphs.ascii { "->" } else { "→" },
            );
            Line::from(Span::styled(format!(" {text}"), self.theme.active))
        } else {
            // As many hints as fit, in their order.
            let mut spans = Vec::new();
            let mut used = 0;
            for (key, label) in hints(self.model) {
                let width = 1 + text_width(&key) + 1 + text_width(label) + 1;
                if used + width > usize::from(area.width) + 1 {
                    break;
                }
                used += width;
                spans.push(Span::raw(" "));
                spans.push(Span::styled(key, self.theme.key));
                spans.push(Span::styled(format!(" {label} "), self.theme.dim));
            }
            Line::from(spans)
        };
        Paragraph::new(line).render(area, buf);
    }
}

/// Shown instead of the panes when the terminal is smaller than the minimum.
#[derive(Debug)]
pub struct TooSmall<'a> {
    /// Terminal width.
    pub width: u16,
    /// Terminal height.
    pub height: u16,
    /// Styles.
    pub theme: &'a Theme,
}

impl Widget for &TooSmall<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let text = format!(
            "quantscope needs a terminal of at least {MIN_WIDTH}x{MIN_HEIGHT}; this one is {}x{}. Enlarge it, or press Ctrl-Q to quit (F1: help). Keys do not edit the text until the panes are back.",
            self.width, self.height
        );
        Paragraph::new(Span::styled(text, self.theme.bad))
            .wrap(Wrap { trim: true })
            .render(area, buf);
    }
}
