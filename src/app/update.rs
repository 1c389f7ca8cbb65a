//! Messages and the one function that applies them to the [`Model`]. The actions of the
//! keymap are carried out in the submodules, by what they are about.

mod files;
mod importance;
mod mouse;
mod navigate;
mod overlays;
mod teach;

use std::path::PathBuf;

use ratatui_textarea::Input;

use crate::app::editor::EditAction;
use crate::app::keymap::Action;
use crate::app::model::{Effect, Focus, Model, Overlay, Source};
use crate::app::worker::JobResult;

use files::{copy_to_editor, export, export_prompt, keep_settings, save, save_as, save_as_prompt};
use navigate::{
    change_setting, cycle_focus, sideways, step_selection, toggle_collapsed_only, toggle_pin,
    worst_channel,
};
use overlays::{close, reorder_stored, toggle_stored, yes};
use teach::{demo, practice, practice_action, step};

pub use files::COPY_LIMIT;
pub use teach::start_practice;

/// Pastes larger than this are refused (the text stays as it was).
pub const MAX_PASTE_BYTES: usize = 64 * 1024 * 1024;

/// Everything that can happen to the explorer.
#[derive(Debug, Clone)]
pub enum Message {
    /// A key bound in the keymap.
    Action(Action),
    /// A key for the open prompt (a file name, the tensor filter, a practice answer).
    Edit(Input),
    /// A character typed into the editor.
    Type(char),
    /// An editing key in the editor; `select` extends the selection (Shift with a motion).
    Editor {
        /// What the key does.
        action: EditAction,
        /// Shift was held with a cursor key.
        select: bool,
    },
    /// Text pasted by the terminal (bracketed paste).
    Paste(String),
    /// A background analysis produced a result.
    Analysed(JobResult),
    /// A save finished: the path written, or the path and why it failed.
    Saved(Result<PathBuf, (PathBuf, String)>),
    /// An export finished: the path written, or the path and why it failed.
    Exported(Result<PathBuf, (PathBuf, String)>),
    /// The terminal is now this many columns and rows.
    Resized(u16, u16),
    /// The screen was drawn: how far each text that scrolls can be scrolled on it.
    Viewport(crate::app::model::Viewport),
    /// A click of the left button, on what the view has there.
    Click(crate::app::model::Hit),
    /// A notch of the mouse wheel over what the view has there: `down` or up.
    Wheel {
        /// What is under the pointer.
        at: crate::app::model::Hit,
        /// Towards the end (the wheel turned down).
        down: bool,
    },
    /// A tensor load finished: the tensor, or why not; `request` is the number of the load
    /// asked for (only the newest counts).
    TensorLoaded {
        /// The load's number.
        request: u64,
        /// The tensor, or why it could not be loaded.
        result: Result<crate::app::LoadedTensor, String>,
    },
    /// An importance matrix or activations were loaded, or why not; `request` is the
    /// number of the load asked for (only the newest counts).
    ImportanceLoaded {
        /// The load's number.
        request: u64,
        /// What was loaded, or why it could not be.
        result: Result<std::sync::Arc<crate::app::calibration::Calibration>, String>,
    },
    /// A file's tensors were listed (for the picker), or why not.
    TensorsListed {
        /// The file.
        path: PathBuf,
        /// Its tensors.
        result: Result<Vec<crate::io::checkpoint::Entry>, String>,
    },
}

/// Applies `message` to `model`.
pub fn update(model: &mut Model, message: Message) {
    match message {
        Message::Action(action) => {
            model.status = None;
            let before = model.selected_channel;
            act(model, action);
            if model.selected_channel != before {
                // Another channel's detail starts at its top.
                model.detail_scroll = 0;
                if model.show_explain {
                    model.refresh_explanation();
                }
            }
        }
        Message::Edit(input) => edit(model, input),
        Message::Type(c) => {
            if matches!(model.source, Source::Text { .. }) && model.editor.type_char(c) {
                model.status = None;
                model.request_analysis();
            }
        }
        Message::Editor { action, select } => {
            if matches!(model.source, Source::Text { .. }) && model.editor.apply(action, select) {
                model.status = None;
                model.request_analysis();
            }
        }
        Message::Paste(text) => paste(model, &text),
        Message::Analysed(result) => analysed(model, result),
        Message::Saved(Ok(path)) => {
            model.status = Some(format!("saved {}", path.display()));
            model.editor.mark_saved();
            model.source = Source::Text { path: Some(path) };
        }
        Message::Saved(Err((path, e))) => {
            // Ask for another name at once: saving to the same place would fail again.
            model.status = Some(format!("not saved: {e}; give another name (Esc cancels)"));
            model.overlay = Some(save_as_prompt(&path.display().to_string()));
        }
        Message::Exported(Ok(path)) => {
            let what = if crate::io::dequantized::Kind::of(&path).is_some() {
                "the reconstructed matrix"
            } else {
                "the report"
            };
            model.status = Some(format!("exported {what} to {}", path.display()));
        }
        Message::Exported(Err((path, e))) => {
            model.status = Some(format!(
                "not exported: {e}; give another name (Esc cancels)"
            ));
            model.overlay = Some(export_prompt(&path.display().to_string()));
        }
        Message::TensorLoaded { request, .. } if request != model.load_request => {}
        Message::TensorLoaded {
            result: Ok(tensor), ..
        } => tensor_loaded(model, tensor),
        Message::TensorLoaded { result: Err(e), .. } => {
            model.status = Some(format!("not loaded: {e}"));
        }
        Message::ImportanceLoaded { request, result } => {
            importance::loaded(model, request, result);
        }
        Message::TensorsListed { path, result } => match result {
            Ok(tensors) => model.overlay = Some(Overlay::tensor_picker(path, tensors)),
            Err(e) => model.status = Some(e),
        },
        Message::Resized(width, height) => {
            model.size = (width, height);
            model.keep_focus_visible();
        }
        Message::Click(hit) => mouse::click(model, hit),
        Message::Wheel { at, down } => mouse::wheel(model, at, down),
        Message::Viewport(viewport) => {
            model.viewport = viewport;
            model.help_scroll = model.help_scroll.min(viewport.help);
            model.detail_scroll = model.detail_scroll.min(viewport.detail);
            if let Some(p) = &mut model.practice {
                p.scroll = p.scroll.min(viewport.practice);
            }
        }
    }
}

/// The Errors pane's one error: MAE or RMSE.
fn toggle_error_metric(model: &mut Model) {
    let with_output = (model.analysis.report.as_ref()).is_some_and(|r| r.output.is_some());
    model.error_metric = model.error_metric.next(with_output);
    model.status = Some(if model.error_metric == crate::app::ErrorMetric::Output {
        "the Errors pane shows the layer's output error per channel, at each granularity".into()
    } else {
        format!(
            "the Errors pane shows the {} per channel when it has room for one error only",
            model.error_metric.name()
        )
    });
}

/// A tensor load finished: the panes show it from now on.
fn tensor_loaded(model: &mut Model, tensor: crate::app::LoadedTensor) {
    let (rows, cols) = tensor.matrix.shape();
    let name = tensor.name.clone();
    model.source = Source::Tensor {
        name: tensor.name,
        dtype: tensor.dtype,
        matrix: std::sync::Arc::new(tensor.matrix),
        stored: tensor.stored,
    };
    model.selected_channel = 0;
    if model.focus == Focus::Editor {
        model.focus = Focus::Utilization;
    }
    model.status = Some(match model.source.stored() {
        Some(s) => format!(
            "{} as stored; Esc: the panes analyse its dequantized values",
            s.ggml_type
        ),
        None => format!("loaded {name}: {rows} x {cols}"),
    });
    importance::follow_tensor(model, &name);
    // A quantized tensor opens in its stored view; the panes behind it analyse its
    // dequantized values.
    model.open_stored_view();
    model.request_analysis();
}

fn edit(model: &mut Model, input: Input) {
    if let Some(Overlay::SaveAs(prompt) | Overlay::Export(prompt) | Overlay::Importance(prompt)) =
        &mut model.overlay
    {
        // One line only: Enter is handled by the keymap.
        prompt.input(input);
        return;
    }
    if let Some(Overlay::Tensors(picker)) = &mut model.overlay {
        if picker.filter.input(input) {
            picker.select_first_matrix();
        }
        return;
    }
    if let Some(Overlay::Palette(palette)) = &mut model.overlay {
        if palette.filter.input(input) {
            palette.selected = 0;
        }
        return;
    }
    if let Some(p) = &mut model.practice {
        p.input.input(input);
    }
}

fn paste(model: &mut Model, text: &str) {
    if text.len() > MAX_PASTE_BYTES {
        model.status = Some(format!(
            "paste refused: {} MiB is more than the {} MiB the editor takes; open large data as a .npy file",
            text.len() >> 20,
            MAX_PASTE_BYTES >> 20
        ));
        return;
    }
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    if let Some(Overlay::SaveAs(prompt) | Overlay::Export(prompt) | Overlay::Importance(prompt)) =
        &mut model.overlay
    {
        prompt.insert_str(text.lines().next().unwrap_or(""));
        return;
    }
    if let Some(Overlay::Palette(palette)) = &mut model.overlay {
        palette.filter.insert_str(text.lines().next().unwrap_or(""));
        palette.selected = 0;
        return;
    }
    if let Some(p) = &mut model.practice {
        p.input
            .insert_str(text.lines().collect::<Vec<_>>().join(" "));
        return;
    }
    if model.overlay.is_some() || !matches!(model.source, Source::Text { .. }) {
        return;
    }
    if model.focus != Focus::Editor {
        model.focus = Focus::Editor;
    }
    if model.editor.insert_str(&text) {
        model.request_analysis();
    }
}

fn analysed(model: &mut Model, result: JobResult) {
    if model.analysis.receive(result) {
        let rows = model.analysis.report.as_ref().map_or(0, |r| r.shape.0);
        model.selected_channel = model.selected_channel.min(rows.saturating_sub(1));
        model.follow_the_active_rung();
        model.refresh_order();
        model.refresh_explanation();
    }
}

/// Runs one action of the keymap: short arms here, longer ones in functions named after
/// them below.
fn act(model: &mut Model, action: Action) {
    match action {
        Action::CaptionMore => model.caption_page = model.caption_page.wrapping_add(1),
        Action::KeepSettings => keep_settings(model),
        Action::Pin => toggle_pin(model),
        Action::ToggleErrorMetric => toggle_error_metric(model),
        Action::Help => {
            model.overlay = if matches!(model.overlay, Some(Overlay::Help)) {
                None
            } else {
                Some(Overlay::Help)
            };
            model.help_scroll = 0;
        }
        Action::Close | Action::No => close(model),
        Action::Change(setting, dir) => change_setting(model, setting, dir),
        Action::Practice => practice(model),
        Action::Demo => demo(model),
        Action::Palette => {
            model.overlay = if matches!(model.overlay, Some(Overlay::Palette(_))) {
                None
            } else {
                Some(Overlay::Palette(Box::default()))
            };
        }
        Action::Tensors => match model.tensor_file.clone() {
            Some(path) => model.effects.push(Effect::ListTensors { path }),
            None => {
                model.status =
                    Some("no checkpoint is open (quantscope FILE.safetensors or FILE.gguf)".into());
            }
        },
        Action::Submit | Action::Hint | Action::Reveal | Action::NextExercise | Action::Cards => {
            practice_action(model, action);
        }
        Action::NextStep | Action::PrevStep => step(model, action == Action::NextStep),
        Action::ToggleExplain => {
            model.show_explain = !model.show_explain;
            model.show_detail = model.show_explain;
            model.detail_scroll = 0;
            model.refresh_explanation();
            model.keep_focus_visible();
        }
        Action::Quit => {
            if model.dirty() && !matches!(model.overlay, Some(Overlay::ConfirmQuit)) {
                model.overlay = Some(Overlay::ConfirmQuit);
            } else {
                model.quit = true;
            }
        }
        Action::Yes => yes(model),
        Action::Save => save(model),
        Action::SaveAs => save_as(model),
        Action::Export => export(model),
        Action::Edit(action) => {
            if matches!(model.source, Source::Text { .. }) && model.editor.apply(action, false) {
                model.request_analysis();
            }
        }
        Action::FocusNext | Action::FocusPrev => cycle_focus(model, action == Action::FocusNext),
        Action::SortRows | Action::CollapsedRowsOnly => reorder_stored(model, action),
        Action::Stored => toggle_stored(model),
        Action::CycleSort => {
            model.sort = model.sort.next();
            model.refresh_order();
            model.status = Some(format!("channels sorted {}", model.sort.describe()));
        }
        Action::ToggleCollapsedOnly => toggle_collapsed_only(model),
        Action::CopyToEditor => copy_to_editor(model),
        Action::Scenarios => model.overlay = Some(Overlay::Scenarios { selected: 0 }),
        Action::Formats => {
            if matches!(model.overlay, Some(Overlay::Formats { .. })) {
                model.overlay = None;
            } else {
                model.overlay = Some(Overlay::Formats { selected: 0 });
                model.request_analysis();
            }
        }
        Action::First => step_selection(model, isize::MIN / 2),
        Action::Last => step_selection(model, isize::MAX / 2),
        Action::Up => step_selection(model, -1),
        Action::Down => step_selection(model, 1),
        Action::PageUp => step_selection(model, -navigate::PAGE),
        Action::PageDown => step_selection(model, navigate::PAGE),
        Action::Left | Action::Right => sideways(model, action == Action::Right),
        Action::ToggleDetail => {
            if model.show_explain {
                model.show_explain = false;
                model.show_detail = false;
            }
            model.show_detail = !model.show_detail;
            model.keep_focus_visible();
        }
        Action::WorstChannel => worst_channel(model),
        Action::LoadImportance
        | Action::ToggleImportance
        | Action::ImportanceView
        | Action::ToggleFront => importance::act(model, action),
    }
}
