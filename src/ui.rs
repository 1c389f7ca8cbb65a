//! The view: draws a [`Model`] into a frame. One file per pane; each pane borrows only
//! what it draws and implements `Widget` for `&Pane`, so drawing cannot change state.
//!
//! The screen at 80x24 (the minimum); a larger terminal gives every pane more room, and
//! from 150 columns on the channel detail gets a column of its own:
//!
//! ```text
//!  quantscope · int4 symmetric narrow [-7, 7], tensor · preset lesson     title
//! ┌ Data ─────────────────────────────┐┌ Settings ─────────────────────────────┐
//! │ 1 quiet: 0.05, -0.08, 0.12, -0.15 ││▶ preset      lesson              F9   │
//! │ 2 loud: 2.21, -3.10, 1.77, -2.66  ││  bits        4                F2/F3   │
//! └───────────────────────────────────┘└───────────────────────────────────────┘
//! ┌ Utilization ──────────────────────┐┌ Errors (MAE / RMSE) ──────────────────┐
//! │ quiet ·········· 1/15 ✗ COLLAPSED ││ ch    ● tensor    channel    group:32 │
//! └───────────────────────────────────┘└───────────────────────────────────────┘
//! ┌ Ladder ───────────────────────────────────────────────────────────────────┐
//! │ ● tensor      1 scale   4 B  4.25 bits/weight  MAE 0.050 ██████████       │
//! └───────────────────────────────────────────────────────────────────────────┘
//!  F1 help  Tab next pane  F7 granularity  F2/F3 bits  …                  status
//! ```
//!
//! With the detail shown on a small screen, it takes the place of the lower two rows.

pub mod caption;
pub mod compare;
pub mod data;
pub mod detail;
pub mod editor;
pub mod errors;
pub mod explain;
pub mod formats;
pub mod help;
pub mod importance;
pub mod ladder;
pub mod method;
pub mod palette;
pub mod practice;
pub mod rows;
pub mod scroll;
pub mod settings;
pub mod status;
pub mod stored;
pub mod theme;
pub mod utilization;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};

use crate::app::model::Hit;
use crate::app::{Focus, Model, Overlay};
use help::HelpOverlay;
pub use theme::{Theme, ThemeName};

pub use crate::app::model::{DETAIL_COLUMN_WIDTH, MIN_HEIGHT, MIN_WIDTH};

/// Where each pane goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Areas {
    /// The title line.
    pub title: Rect,
    /// The editor.
    pub data: Rect,
    /// The settings list.
    pub settings: Rect,
    /// Utilization bars (empty when the detail covers it).
    pub utilization: Rect,
    /// Errors side by side (empty when the detail covers it).
    pub errors: Rect,
    /// The ladder (empty when the detail covers it).
    pub ladder: Rect,
    /// The channel detail, when shown.
    pub detail: Option<Rect>,
    /// The caption (a scenario's hint, a demo step's text), when there is one.
    pub caption: Rect,
    /// The hint and status line.
    pub status: Rect,
}

/// The detail pane is shown without being asked for (there is room for it).
#[must_use]
pub fn detail_has_room(width: u16) -> bool {
    width >= DETAIL_COLUMN_WIDTH
}

/// Lays out the screen; `None` when the terminal is smaller than the minimum.
#[must_use]
pub fn layout(
    area: Rect,
    show_detail: bool,
    ladder_rows: usize,
    caption_rows: u16,
) -> Option<Areas> {
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        return None;
    }
    let caption_rows = caption_rows.min(max_caption_rows(area.height));
    let [title, body, caption, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(caption_rows),
        Constraint::Length(1),
    ])
    .areas(area);
    let (main, detail_column) = if detail_has_room(area.width) {
        let [main, side] =
            Layout::horizontal([Constraint::Fill(1), Constraint::Length(area.width * 2 / 5)])
                .areas(body);
        (main, Some(side))
    } else {
        (body, None)
    };
    let rest = main.height;
    let top = (rest * 2 / 5).clamp(9, 16);
    let ladder_wanted = u16::try_from(ladder_rows + 3)
        .unwrap_or(u16::MAX)
        .clamp(6, 14);
    let ladder = ladder_wanted.min(rest.saturating_sub(top + 5)).max(4);
    let [top_row, middle_row, ladder_row] = Layout::vertical([
        Constraint::Length(top),
        Constraint::Fill(1),
        Constraint::Length(ladder),
    ])
    .areas(main);
    let halves = |r: Rect| -> [Rect; 2] {
        Layout::horizontal([Constraint::Percentage(48), Constraint::Percentage(52)]).areas(r)
    };
    let [data, settings] = halves(top_row);
    let [utilization, errors] = halves(middle_row);
    let mut areas = Areas {
        title,
        data,
        settings,
        utilization,
        errors,
        ladder: ladder_row,
        detail: detail_column,
        caption,
        status,
    };
    if detail_column.is_none() && show_detail {
        let lower = Rect {
            height: middle_row.height + ladder_row.height,
            ..middle_row
        };
        areas.detail = Some(lower);
        areas.utilization = Rect::default();
        areas.errors = Rect::default();
        areas.ladder = Rect::default();
    }
    Some(areas)
}

/// The most rows the caption takes: three at 80x24, more on taller terminals; a longer
/// caption is paged.
#[must_use]
pub fn max_caption_rows(height: u16) -> u16 {
    if height < 30 { 3 } else { 5 }
}

/// Where `model`'s panes go on a screen of `area`; `None` when it is too small.
fn areas_of(area: Rect, model: &Model) -> Option<Areas> {
    let report = model.analysis.report.as_deref();
    let ladder_rows = report.map_or(2, |r| r.ladder.len().max(2));
    let show_detail = model.show_detail || detail_has_room(area.width);
    let caption_rows = model.caption.as_ref().map_or(0, |c| {
        let lines = caption::wrap(c, usize::from(area.width)).len();
        u16::try_from(lines)
            .unwrap_or(u16::MAX)
            .clamp(1, max_caption_rows(area.height))
    });
    layout(area, show_detail, ladder_rows, caption_rows)
}

/// How far each text that scrolls can be scrolled when `model` is drawn on a screen of
/// `area` (what [`crate::app::Message::Viewport`] reports after drawing).
#[must_use]
pub fn viewport(area: Rect, model: &Model, theme: &Theme) -> crate::app::model::Viewport {
    let help = HelpOverlay {
        scroll: model.help_scroll,
        theme,
    }
    .max_scroll(area);
    let practice = model.practice.as_deref().map_or(0, |practice| {
        let [body, _] = Layout::vertical([Constraint::Fill(1), Constraint::Length(1)]).areas(area);
        practice::PracticeView { practice, theme }.max_scroll(body)
    });
    let detail = match areas_of(area, model).and_then(|a| a.detail) {
        Some(rect) if model.show_explain => explain::ExplainPane {
            explanation: model.explanation.as_deref(),
            method: method_worked(model),
            focused: false,
            stale: false,
            scroll: 0,
            theme,
        }
        .max_scroll(rect),
        Some(rect) => detail::DetailPane {
            report: model.analysis.report.as_deref(),
            matrix: model.analysis.matrix.as_deref(),
            channel: model.selected_channel,
            focused: false,
            stale: false,
            scroll: 0,
            theme,
        }
        .max_scroll(rect),
        None => 0,
    };
    crate::app::model::Viewport {
        help,
        practice,
        detail,
    }
}

/// Draws the whole screen.
pub fn draw(frame: &mut Frame, model: &Model, theme: &Theme) {
    let area = frame.area();
    // The theme's colours under everything (the dark theme keeps the terminal's own).
    frame.buffer_mut().set_style(area, theme.base);
    let Some(areas) = areas_of(area, model) else {
        frame.render_widget(
            &status::TooSmall {
                width: area.width,
                height: area.height,
                theme,
            },
            area,
        );
        // Quitting and the help still work on the small screen, so show their overlays.
        if matches!(model.overlay, Some(Overlay::Help | Overlay::ConfirmQuit)) {
            draw_overlay(frame, model, theme);
        }
        return;
    };
    if let Some(practice) = &model.practice {
        let [body, status_row] =
            Layout::vertical([Constraint::Fill(1), Constraint::Length(1)]).areas(area);
        frame.render_widget(&practice::PracticeView { practice, theme }, body);
        frame.render_widget(&status::StatusLine { model, theme }, status_row);
        draw_overlay(frame, model, theme);
        return;
    }
    frame.render_widget(&status::TitleBar { model, theme }, areas.title);
    frame.render_widget(&data::DataPane::new(model, theme), areas.data);
    frame.render_widget(&settings_pane(model, theme), areas.settings);
    draw_results(frame, model, theme, &areas);
    if let Some(caption) = &model.caption {
        let key = crate::app::keymap::first_key(
            crate::app::keymap::Mode::Global,
            crate::app::keymap::Action::CaptionMore,
        )
        .unwrap_or_default();
        // A scenario's caption quotes its numbers: once the text is edited they may not
        // be the ones on screen.
        let caption = if model.editor.revision() == model.caption_revision {
            std::borrow::Cow::Borrowed(caption.as_str())
        } else {
            std::borrow::Cow::Owned(format!("(Written for the text as loaded.) {caption}"))
        };
        frame.render_widget(
            &caption::CaptionPane {
                text: &caption,
                page: model.caption_page,
                key: &key,
                theme,
            },
            areas.caption,
        );
    }
    frame.render_widget(&status::StatusLine { model, theme }, areas.status);
    draw_overlay(frame, model, theme);
}

/// The worked arithmetic of `model`'s method, when one ran.
fn method_worked(model: &Model) -> Option<&crate::core::method::worked::Worked> {
    model
        .analysis
        .methods
        .as_ref()
        .and_then(|m| m.worked.as_ref())
        .filter(|_| model.method.runs())
}

/// The Settings pane of `model`.
fn settings_pane<'a>(model: &'a Model, theme: &'a Theme) -> settings::SettingsPane<'a> {
    settings::SettingsPane {
        config: &model.config,
        preset: model.preset,
        overrides: model.overrides,
        modified: model.changed_from_preset(),
        group_size: model.group_size,
        row_len: model.analysis.matrix.as_ref().map(|m| m.shape().1),
        method: model.method,
        selected: model.selected_setting,
        focused: model.focus == Focus::Settings,
        importance: model.importance.loaded.as_ref().map(|c| {
            let state = match (model.importance.mode, &model.analysis.calibration_unfit) {
                (crate::app::model::ImportanceMode::Off, _) => "off",
                (_, Some(_)) => "does not fit",
                (mode, None) => mode.word(),
            };
            format!("importance {state}: {}", c.label)
        }),
        theme,
    }
}

/// The Utilization pane of `model`.
fn utilization_pane<'a>(model: &'a Model, theme: &'a Theme) -> utilization::UtilizationPane<'a> {
    utilization::UtilizationPane {
        report: model.analysis.report.as_deref(),
        selected: model.selected_channel,
        order: &model.order,
        sort: model.sort,
        collapsed_only: model.collapsed_only,
        comparison: model.analysis.comparison.as_deref(),
        focused: model.focus == Focus::Utilization,
        stale: model.stale(),
        theme,
    }
}

/// The Errors pane of `model`.
fn errors_pane<'a>(model: &'a Model, theme: &'a Theme) -> errors::ErrorsPane<'a> {
    errors::ErrorsPane {
        report: model.analysis.report.as_deref(),
        metric: model.error_metric,
        compared: model.compared_group(),
        comparison: model.analysis.comparison.as_deref(),
        selected: model.selected_channel,
        order: &model.order,
        collapsed_only: model.collapsed_only,
        focused: model.focus == Focus::Errors,
        stale: model.stale(),
        method: method::line(model, theme.glyphs.ellipsis),
        theme,
    }
}

/// The Ladder pane of `model`.
fn ladder_pane<'a>(model: &'a Model, theme: &'a Theme) -> ladder::LadderPane<'a> {
    ladder::LadderPane {
        report: model.analysis.report.as_deref(),
        selected: model.selected_rung,
        focused: model.focus == Focus::Ladder,
        stale: model.stale(),
        pending: model.analysis.pending,
        progress: model.analysis.ladder_progress,
        pinned: model
            .analysis
            .comparison
            .as_ref()
            .and(model.analysis.pinned.as_deref()),
        method: method::line(model, theme.glyphs.ellipsis),
        theme,
    }
}

/// What is at column `column`, row `row` of a screen of `area` showing `model`: a pane, or
/// an item of a list pane (a setting, a channel, a rung), as a click would find it.
#[must_use]
pub fn hit(area: Rect, model: &Model, theme: &Theme, column: u16, row: u16) -> Hit {
    let at = ratatui::layout::Position::new(column, row);
    if model.overlay.is_some() || model.practice.is_some() {
        return Hit::Nothing;
    }
    let Some(areas) = areas_of(area, model) else {
        return Hit::Nothing;
    };
    let item = |focus: Focus, rows: Vec<(u16, usize)>| {
        rows.into_iter()
            .find(|&(y, _)| y == row)
            .map_or(Hit::Pane(focus), |(_, i)| Hit::Item(focus, i))
    };
    if areas.data.contains(at) {
        Hit::Pane(Focus::Editor)
    } else if areas.settings.contains(at) {
        item(
            Focus::Settings,
            settings_pane(model, theme).item_rows(areas.settings),
        )
    } else if areas.utilization.contains(at) {
        item(
            Focus::Utilization,
            utilization_pane(model, theme).item_rows(areas.utilization),
        )
    } else if areas.errors.contains(at) {
        item(
            Focus::Errors,
            errors_pane(model, theme).item_rows(areas.errors),
        )
    } else if areas.ladder.contains(at) {
        item(
            Focus::Ladder,
            ladder_pane(model, theme).item_rows(areas.ladder),
        )
    } else if areas.detail.is_some_and(|d| d.contains(at)) {
        Hit::Pane(Focus::Detail)
    } else {
        Hit::Nothing
    }
}

/// Draws the panes that show results: utilization, errors, ladder, and the detail area.
fn draw_results(frame: &mut Frame, model: &Model, theme: &Theme, areas: &Areas) {
    let report = model.analysis.report.as_deref();
    let stale = model.stale();
    if !areas.utilization.is_empty() {
        frame.render_widget(&utilization_pane(model, theme), areas.utilization);
        frame.render_widget(&errors_pane(model, theme), areas.errors);
        frame.render_widget(&ladder_pane(model, theme), areas.ladder);
    }
    if let Some(detail_area) = areas.detail.filter(|_| model.show_explain) {
        frame.render_widget(
            &explain::ExplainPane {
                explanation: model.explanation.as_deref(),
                method: method_worked(model),
                focused: model.focus == Focus::Detail,
                stale,
                scroll: model.detail_scroll,
                theme,
            },
            detail_area,
        );
    } else if let Some(detail_area) = areas.detail {
        frame.render_widget(
            &detail::DetailPane {
                report,
                matrix: model.analysis.matrix.as_deref(),
                channel: model.selected_channel,
                focused: model.focus == Focus::Detail,
                stale,
                scroll: model.detail_scroll,
                theme,
            },
            detail_area,
        );
    }
}

/// Draws the open overlay, if any, over the whole screen.
fn draw_overlay(frame: &mut Frame, model: &Model, theme: &Theme) {
    let area = frame.area();
    match &model.overlay {
        Some(Overlay::Help) => frame.render_widget(&help::HelpOverlay { scroll: model.help_scroll, theme }, area),
        Some(Overlay::ConfirmQuit) => frame.render_widget(
            &help::Question {
                title: "Unsaved changes",
                text: "The text has changes that are not saved. Quit anyway?  y = quit, n / Esc = stay (Ctrl-S saves)",
                prompt: None,
                note: None,
                theme,
            },
            area,
        ),
        Some(overlay @ (Overlay::SaveAs(prompt) | Overlay::Export(prompt))) => {
            let (title, text) = if matches!(overlay, Overlay::SaveAs(_)) {
                (
                    "Save as",
                    "File name for the text: typing replaces it, Home, End or an arrow key edits it. Enter saves, Esc cancels.",
                )
            } else {
                (
                    "Export report",
                    "File name: .html or .pdf for the report, .npy or .safetensors for the reconstructed matrix. Typing replaces it, Home, End or an arrow key edits it. Enter writes, Esc cancels.",
                )
            };
            frame.render_widget(
                &help::Question {
                    title,
                    text,
                    prompt: Some(prompt),
                    // Why the last name did not work, in full (the status line cuts it).
                    note: model.status.as_deref(),
                    theme,
                },
                area,
            );
        }
        Some(Overlay::Scenarios { selected }) => {
            let entries: Vec<(String, String, String)> = crate::teach::assets::scenarios()
                .into_iter()
                .map(|s| (s.name, s.title, s.look.join(" ")))
                .collect();
            frame.render_widget(
                &help::Picker { title: "Scenarios (Enter opens, Esc closes)", entries: &entries, dimmed: &[], selected: *selected, theme },
                area,
            );
        }
        Some(Overlay::Tensors(picker)) => draw_tensor_picker(frame, picker, theme),
        Some(Overlay::Palette(palette)) => frame.render_widget(
            &palette::PaletteOverlay { palette, theme },
            area,
        ),
        Some(Overlay::Formats { selected }) => frame.render_widget(
            &formats::FormatsOverlay {
                format_ladder: model.analysis.format_ladder.as_deref(),
                progress: model.analysis.format_ladder_progress,
                within: model.analysis.format_ladder_within,
                selected: *selected,
                front_on_output: model.importance.front_on_output,
                theme,
            },
            area,
        ),
        Some(Overlay::Stored(view)) => draw_stored(frame, model, view, theme),
        Some(Overlay::Importance(prompt)) => frame.render_widget(
            &help::Question {
                title: "Which weights matter",
                text: "An importance matrix (llama-imatrix's .gguf or .dat) or activations [tokens, input features] (.npy, FILE:TENSOR of a checkpoint, channel text, or built-in: synthetic tokens with a few loud columns). Enter loads, Esc cancels.",
                prompt: Some(prompt),
                note: model.status.as_deref(),
                theme,
            },
            area,
        ),
        Some(Overlay::ImportanceView) => draw_importance(frame, model, theme),
        Some(Overlay::ConfirmDemo) => frame.render_widget(
            &help::Question {
                title: "Unsaved changes",
                text: "The demo replaces the text, which has changes that are not saved. Play it anyway?  y = play, n / Esc = stay (Ctrl-S saves)",
                prompt: None,
                note: None,
                theme,
            },
            area,
        ),
        Some(Overlay::ConfirmScenario(_)) => frame.render_widget(
            &help::Question {
                title: "Unsaved changes",
                text: "Opening a scenario replaces the text, which has changes that are not saved. Open it anyway?  y = open, n / Esc = stay",
                prompt: None,
                note: None,
                theme,
            },
            area,
        ),
        None => {}
    }
}

/// The importance view, with its keys from the keymap.
fn draw_importance(frame: &mut Frame, model: &Model, theme: &Theme) {
    use crate::app::keymap::{Action, Mode, first_key};
    let load = first_key(Mode::Global, Action::LoadImportance).unwrap_or_default();
    let toggle = first_key(Mode::Global, Action::ToggleImportance).unwrap_or_default();
    let state = &model.importance;
    frame.render_widget(
        &importance::ImportanceOverlay {
            report: model.analysis.report.as_deref(),
            loaded: state
                .loaded
                .as_ref()
                .map(|c| (c.label.as_str(), state.mode)),
            unfit: model.analysis.calibration_unfit.as_deref(),
            progress: model.analysis.output_progress,
            keys: (&load, &toggle),
            theme,
        },
        frame.area(),
    );
}

/// The stored view of the quantized tensor shown, with its keys from the keymap.
fn draw_stored(
    frame: &mut Frame,
    model: &Model,
    view: &crate::app::model::StoredView,
    theme: &Theme,
) {
    let area = frame.area();
    if let Some(stored) = model.source.stored() {
        let key = |action| {
            crate::app::keymap::first_key(crate::app::keymap::Mode::Stored, action)
                .unwrap_or_default()
        };
        let keys = [
            key(crate::app::keymap::Action::Close),
            key(crate::app::keymap::Action::SortRows),
            key(crate::app::keymap::Action::CollapsedRowsOnly),
        ];
        frame.render_widget(
            &stored::StoredOverlay {
                stored,
                view,
                keys: [&keys[0], &keys[1], &keys[2]],
                theme,
            },
            area,
        );
    }
}

/// The tensor picker over the whole screen, with its filter line.
fn draw_tensor_picker(frame: &mut Frame, picker: &crate::app::model::TensorPicker, theme: &Theme) {
    let area = frame.area();
    let visible = picker.visible();
    let entries: Vec<(String, String, String)> = visible
        .iter()
        .map(|t| {
            let detail = format!(
                "{} {}, {} bytes",
                t.dtype,
                crate::io::safetensors::format_shape(&t.shape),
                t.bytes
            );
            let why = t
                .not_loadable()
                .map(|w| format!(" {} {w}", theme.glyphs.sep))
                .unwrap_or_default();
            (
                t.name.clone(),
                format!("{detail}{why}"),
                format!("{detail}{why}"),
            )
        })
        .collect();
    let dimmed: Vec<bool> = visible.iter().map(|t| t.not_loadable().is_some()).collect();
    let title = format!(
        "Tensors of {} (type to filter, Enter opens)",
        picker.path.display()
    );
    frame.render_widget(
        &help::Picker {
            title: &title,
            entries: &entries,
            dimmed: &dimmed,
            selected: picker.selected,
            theme,
        },
        area,
    );
    frame.render_widget(
        &help::FilterLine {
            filter: &picker.filter,
            theme,
        },
        area,
    );
}
