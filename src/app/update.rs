//! Messages and the one function that applies them to the [`Model`].

use std::path::PathBuf;
use std::sync::Arc;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_textarea::{CursorMove, Input};

use crate::app::editor::{EditAction, Editor};
use crate::app::keymap::{Action, Mode, lookup};
use crate::app::model::{Effect, Focus, Model, Overlay, Source};
use crate::app::setting::{Current, Direction, SETTINGS, Setting};
use crate::app::worker::JobResult;

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
    /// A tensor load finished: the tensor, or why not; `request` is the number of the load
    /// asked for (only the newest counts).
    TensorLoaded {
        /// The load's number.
        request: u64,
        /// The tensor, or why it could not be loaded.
        result: Result<crate::app::LoadedTensor, String>,
    },
    /// A file's tensors were listed (for the picker), or why not.
    TensorsListed {
        /// The file.
        path: PathBuf,
        /// Its tensors.
        result: Result<Vec<crate::io::checkpoint::Entry>, String>,
    },
}

/// The mode whose bindings apply now.
#[must_use]
pub fn mode(model: &Model) -> Mode {
    match model.overlay {
        Some(Overlay::Help) => Mode::Help,
        Some(Overlay::ConfirmQuit | Overlay::ConfirmScenario(_)) => Mode::Confirm,
        Some(Overlay::SaveAs(_) | Overlay::Export(_)) => Mode::Prompt,
        Some(Overlay::Scenarios { .. } | Overlay::Formats { .. }) => Mode::Picker,
        Some(Overlay::Tensors(_)) => Mode::TensorPicker,
        Some(Overlay::Stored(_)) => Mode::Stored,
        None => match &model.practice {
            Some(p) if p.deck.is_some() => Mode::Cards,
            Some(_) => Mode::Practice,
            None if model.focus == Focus::Editor => Mode::Global,
            None => Mode::Panes,
        },
    }
}

/// The terminal is smaller than the panes need: only quitting, help and answering the quit
/// question work (nothing is edited unseen).
#[must_use]
pub fn too_small(model: &Model) -> bool {
    model.size.0 < crate::ui::MIN_WIDTH || model.size.1 < crate::ui::MIN_HEIGHT
}

/// The message for a key in the editor: an editing key, or a typed character.
fn editor_message(key: &KeyEvent) -> Option<Message> {
    if let Some(Action::Edit(action)) = lookup(Mode::Editor, key) {
        return Some(Message::Editor {
            action,
            select: false,
        });
    }
    if key.modifiers.contains(KeyModifiers::SHIFT) {
        let plain = KeyEvent::new(key.code, key.modifiers - KeyModifiers::SHIFT);
        if let Some(Action::Edit(action)) = lookup(Mode::Editor, &plain)
            && action.is_motion()
        {
            return Some(Message::Editor {
                action,
                select: true,
            });
        }
    }
    match key.code {
        KeyCode::Char(c)
            if !key
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
        {
            Some(Message::Type(c))
        }
        _ => None,
    }
}

/// Translates a key press into a message, through the keymap.
#[must_use]
pub fn translate(model: &Model, key: &KeyEvent) -> Option<Message> {
    let global = lookup(Mode::Global, key);
    let current = mode(model);
    if too_small(model) {
        if current == Mode::Confirm {
            return lookup(Mode::Confirm, key).map(Message::Action);
        }
        return global
            .filter(|a| matches!(a, Action::Quit | Action::Help | Action::Close))
            .or_else(|| lookup(Mode::Help, key).filter(|_| current == Mode::Help))
            .map(Message::Action);
    }
    if model.demo.is_some()
        && matches!(current, Mode::Global | Mode::Panes)
        && let Some(action) = lookup(Mode::Demo, key)
    {
        return Some(Message::Action(action));
    }
    match current {
        Mode::Practice => lookup(Mode::Practice, key)
            .or(global.filter(|a| matches!(a, Action::Quit | Action::Help)))
            .map(Message::Action)
            .or_else(|| Some(Message::Edit(Input::from(*key)))),
        Mode::Cards => lookup(Mode::Cards, key)
            .or(global.filter(|a| matches!(a, Action::Quit | Action::Help)))
            .map(Message::Action),
        Mode::Demo => None,
        Mode::TensorPicker => lookup(Mode::TensorPicker, key)
            .or(global.filter(|a| *a == Action::Quit))
            .map(Message::Action)
            .or_else(|| Some(Message::Edit(Input::from(*key)))),
        Mode::Help => lookup(Mode::Help, key)
            .or(global.filter(|a| *a == Action::Quit))
            .map(Message::Action),
        Mode::Confirm => lookup(Mode::Confirm, key)
            .or(global.filter(|a| *a == Action::Quit))
            .map(Message::Action),
        Mode::Picker => lookup(Mode::Picker, key)
            .or(global.filter(|a| matches!(a, Action::Quit | Action::Formats)))
            .map(Message::Action),
        Mode::Stored => lookup(Mode::Stored, key)
            .or(global.filter(|a| matches!(a, Action::Quit | Action::Stored | Action::Help)))
            .map(Message::Action),
        Mode::Prompt => lookup(Mode::Prompt, key)
            .or(global.filter(|a| *a == Action::Quit))
            .map(Message::Action)
            .or_else(|| Some(Message::Edit(Input::from(*key)))),
        Mode::Global | Mode::Editor => global.map(Message::Action).or_else(|| match model.source {
            Source::Text { .. } => editor_message(key),
            Source::Tensor { .. } => None,
        }),
        Mode::Panes => global
            .or_else(|| lookup(Mode::Panes, key))
            .map(Message::Action),
    }
}

/// Applies `message` to `model`.
pub fn update(model: &mut Model, message: Message) {
    match message {
        Message::Action(action) => {
            model.status = None;
            let before = model.selected_channel;
            act(model, action);
            if model.show_explain && model.selected_channel != before {
                model.refresh_explanation();
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
            model.status = Some(format!("exported the report to {}", path.display()));
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
        } => {
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
            // A quantized tensor opens in its stored view; the panes behind it analyse its
            // dequantized values.
            model.open_stored_view();
            model.request_analysis();
        }
        Message::TensorLoaded { result: Err(e), .. } => {
            model.status = Some(format!("not loaded: {e}"));
        }
        Message::TensorsListed { path, result } => match result {
            Ok(tensors) => model.overlay = Some(Overlay::tensor_picker(path, tensors)),
            Err(e) => model.status = Some(e),
        },
        Message::Resized(width, height) => {
            model.size = (width, height);
            model.keep_focus_visible();
        }
    }
}

fn edit(model: &mut Model, input: Input) {
    if let Some(Overlay::SaveAs(prompt) | Overlay::Export(prompt)) = &mut model.overlay {
        // One line only: Enter is handled by the keymap.
        prompt.input(input);
        return;
    }
    if let Some(Overlay::Tensors(picker)) = &mut model.overlay {
        if picker.filter.input(input) {
            picker.selected = 0;
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
    if let Some(Overlay::SaveAs(prompt) | Overlay::Export(prompt)) = &mut model.overlay {
        prompt.insert_str(text.lines().next().unwrap_or(""));
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
        Action::ToggleErrorMetric => {
            model.error_metric = model.error_metric.other();
            model.status = Some(format!(
                "the Errors pane shows the {} per channel when it has room for one error only",
                model.error_metric.name()
            ));
        }
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
        Action::Practice => {
            // Back to where the learner left practice mode, progress and score kept.
            if let Some(kept) = model.practice_kept.take() {
                model.practice = Some(kept);
                model.overlay = None;
            } else {
                start_practice(model, 0);
            }
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
        Action::PageUp => step_selection(model, -10),
        Action::PageDown => step_selection(model, 10),
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
    }
}

/// Alt-p: pins the configuration as A, or unpins it.
fn toggle_pin(model: &mut Model) {
    if model.pinned.take().is_some() {
        model.analysis.pinned = None;
        model.analysis.comparison = None;
        model.status = Some("unpinned: the panes show one configuration again".into());
    } else {
        model.pinned = Some(crate::app::model::Pinned {
            preset: model.preset,
            config: model.config,
        });
        model.status = Some(format!(
            "pinned as A: {}; change settings to compare B with it (Alt-p unpins)",
            model.config.summary()
        ));
        model.request_analysis();
    }
}

/// Alt-n / Alt-p: the next or previous step of practice mode, or of the demo.
fn step(model: &mut Model, forward: bool) {
    let action = if forward {
        Action::NextStep
    } else {
        Action::PrevStep
    };
    if model.practice.is_some() {
        practice_action(model, action);
    } else if let Some(demo) = &model.demo {
        let target = if forward {
            demo.shown + 1
        } else {
            demo.shown.saturating_sub(1)
        };
        crate::app::demo::go_to(model, target);
    }
}

/// Saves typed text under a name asked for; a loaded file is saved where it is.
fn save_as(model: &mut Model) {
    if matches!(model.source, Source::Text { .. }) {
        let name = model
            .path()
            .map_or_else(|| "channels.txt".to_string(), |p| p.display().to_string());
        model.overlay = Some(save_as_prompt(&name));
    } else {
        save(model);
    }
}

/// `S`: opens the stored view of a quantized GGUF tensor, or closes it.
fn toggle_stored(model: &mut Model) {
    if matches!(model.overlay, Some(Overlay::Stored(_))) {
        model.overlay = None;
    } else if !model.open_stored_view() {
        model.status =
            Some("no stored view: the data is not a quantized tensor of a GGUF file".into());
    }
}

/// Tab / Shift-Tab: the next or previous pane in the focus order.
fn cycle_focus(model: &mut Model, forward: bool) {
    let order = model.focus_order();
    let i = order.iter().position(|f| *f == model.focus).unwrap_or(0);
    let n = order.len();
    let j = if forward {
        (i + 1) % n
    } else {
        (i + n - 1) % n
    };
    model.focus = order[j];
}

/// Lists only the collapsed channels, or every channel again.
fn toggle_collapsed_only(model: &mut Model) {
    model.collapsed_only = !model.collapsed_only;
    model.refresh_order();
    model.status = Some(if model.collapsed_only && model.order.is_empty() {
        "no channel collapses under this configuration".to_string()
    } else if model.collapsed_only {
        format!("listing the {} collapsed channels", model.order.len())
    } else {
        "listing every channel".to_string()
    });
}

/// Left and Right: change the selected setting in the Settings pane; Right opens the
/// detail of the selected channel from the channel panes.
fn sideways(model: &mut Model, right: bool) {
    if model.focus == Focus::Settings {
        let setting = SETTINGS[model.selected_setting.min(SETTINGS.len() - 1)];
        let dir = if right {
            Direction::Forward
        } else {
            Direction::Back
        };
        change_setting(model, setting, dir);
    } else if right && matches!(model.focus, Focus::Utilization | Focus::Errors) {
        model.show_detail = true;
        model.keep_focus_visible();
    }
}

/// Selects the worst of the channels listed (the collapsed ones when filtered) and says why.
fn worst_channel(model: &mut Model) {
    let Some(report) = model.analysis.report.as_ref() else {
        return;
    };
    let worst = if model.collapsed_only {
        report.worst_of(model.order.iter().copied())
    } else {
        report.worst_channel()
    };
    let Some(worst) = worst else {
        return;
    };
    let ch = &report.channels[worst];
    let why = if ch.collapsed {
        "collapsed".to_string()
    } else {
        match ch.metrics.sqnr_db {
            Some(db) => format!("SQNR {db:.1} dB, the lowest"),
            None => "the lowest SQNR".to_string(),
        }
    };
    let name = ch
        .label
        .clone()
        .unwrap_or_else(|| format!("channel {worst}"));
    model.status = Some(format!("worst: {name} ({why})"));
    model.selected_channel = worst;
    // From the editor (Alt-w) the focus stays where the typing is.
    if matches!(model.focus, Focus::Settings | Focus::Ladder) {
        model.focus = Focus::Utilization;
        model.keep_focus_visible();
    }
}

/// Esc: closes the overlay, or leaves the cards, practice mode or the demo, or clears the
/// caption, whichever is innermost.
fn close(model: &mut Model) {
    if model.overlay.is_some() {
        model.overlay = None;
    } else if let Some(p) = &mut model.practice {
        if p.deck.is_some() {
            p.deck = None;
        } else {
            model.practice_kept = model.practice.take();
            model.status = Some("left practice mode (Alt-m comes back to the same step)".into());
        }
    } else if model.demo.is_some() {
        model.demo = None;
        model.set_caption(None);
        model.status = Some("the demo ended; the explorer stays as it is".into());
    } else {
        model.set_caption(None);
    }
}

/// Opens practice mode on exercise `index`.
pub fn start_practice(model: &mut Model, index: usize) {
    match crate::app::practice::Practice::start(index, model.analysis.matrix.as_deref()) {
        Ok(p) => {
            model.practice = Some(Box::new(p));
            model.overlay = None;
        }
        Err(e) => model.status = Some(format!("practice: {e}")),
    }
}

fn practice_action(model: &mut Model, action: Action) {
    let Some(p) = &mut model.practice else {
        return;
    };
    if let Some(deck) = &mut p.deck {
        match action {
            Action::Reveal => deck.revealed = !deck.revealed,
            Action::NextStep => {
                deck.index = (deck.index + 1).min(deck.cards.len().saturating_sub(1));
                deck.revealed = false;
            }
            Action::PrevStep => {
                deck.index = deck.index.saturating_sub(1);
                deck.revealed = false;
            }
            Action::Cards => p.deck = None,
            _ => {}
        }
        return;
    }
    match action {
        Action::Submit => {
            let text = p.answer_text();
            if text.trim().is_empty() {
                return;
            }
            let verdict = p.session.answer(&text);
            // A malformed answer stays to be corrected; a judged one is cleared and shown
            // beside its verdict.
            if !matches!(verdict, crate::teach::exercise::Verdict::Malformed { .. }) {
                p.clear_input();
                p.last_answer = Some(text.trim().to_string());
            }
            p.refresh_worked();
        }
        Action::Hint => p.session.request_hint(),
        Action::Reveal => {
            p.session.reveal();
            p.refresh_worked();
        }
        Action::NextStep | Action::PrevStep => {
            let moved = if action == Action::NextStep {
                p.session.next_step()
            } else {
                p.session.previous_step()
            };
            if moved {
                p.clear_input();
                p.refresh_worked();
            } else if action == Action::NextStep {
                model.status = Some("that was the last step: F6 goes to the next exercise".into());
            }
        }
        Action::NextExercise => {
            let next = (p.index + 1) % p.exercises.len().max(1);
            if let Err(e) = p.switch_to(next, model.analysis.matrix.as_deref()) {
                model.status = Some(format!("practice: {e}"));
            }
        }
        Action::Cards => p.toggle_cards(),
        _ => {}
    }
}

fn load_builtin_scenario(model: &mut Model, index: usize) {
    if let Some(scenario) = crate::teach::assets::scenarios().get(index) {
        model.load_scenario(scenario);
    }
}

/// Most channels copied from a tensor into the editor at once.
pub const COPY_LIMIT: usize = 32;

fn copy_to_editor(model: &mut Model) {
    let Source::Tensor { name, matrix, .. } = &model.source else {
        model.status = Some("the data is already text in the editor".into());
        return;
    };
    let all: Vec<usize> = (0..matrix.shape().0).collect();
    let order = if model.order.is_empty() {
        &all
    } else {
        &model.order
    };
    let start = order
        .iter()
        .position(|&c| c == model.selected_channel)
        .unwrap_or(0);
    let picked: Vec<usize> = order.iter().copied().skip(start).take(COPY_LIMIT).collect();
    let values = matrix.values();
    let cols = values.ncols();
    let mut flat = Vec::with_capacity(picked.len() * cols);
    for &r in &picked {
        flat.extend(values.row(r).iter().copied());
    }
    let labels: Vec<Option<String>> = picked
        .iter()
        .map(|&r| {
            Some(
                matrix.labels()[r]
                    .clone()
                    .unwrap_or_else(|| format!("ch{r}")),
            )
        })
        .collect();
    let sub = ndarray::Array2::from_shape_vec((picked.len(), cols), flat)
        .ok()
        .and_then(|v| crate::core::Matrix::with_labels(v, labels).ok());
    let Some(sub) = sub else {
        model.status = Some("nothing to copy".into());
        return;
    };
    let text = format!(
        "# {} of {} of {name}, from channel {}\n{}",
        picked.len(),
        crate::io::export::num::count(all.len(), "channel"),
        picked[0],
        crate::io::text::format_text(&sub)
    );
    model.editor = Editor::unsaved(&text);
    model.editor.move_to_end();
    model.source = Source::Text { path: None };
    model.focus = Focus::Editor;
    model.selected_channel = 0;
    model.status = Some(format!(
        "copied {} into the editor (Ctrl-S saves them)",
        crate::io::export::num::count(picked.len(), "channel")
    ));
    model.request_analysis();
}

fn yes(model: &mut Model) {
    match model.overlay.take() {
        Some(Overlay::Scenarios { selected }) => {
            if model.dirty() {
                model.overlay = Some(Overlay::ConfirmScenario(selected));
            } else {
                load_builtin_scenario(model, selected);
            }
        }
        Some(Overlay::ConfirmScenario(selected)) => load_builtin_scenario(model, selected),
        Some(Overlay::Formats { selected }) => choose_format(model, selected),
        Some(Overlay::Tensors(picker)) => {
            let chosen = picker
                .visible()
                .get(picker.selected)
                .map(|t| t.name.clone());
            let why_not = picker
                .visible()
                .get(picker.selected)
                .and_then(|t| t.not_loadable());
            match chosen {
                Some(name) if why_not.is_some() => {
                    model.status = Some(format!("{name}: {}", why_not.unwrap_or_default()));
                    model.overlay = Some(Overlay::Tensors(picker));
                }
                Some(name) => {
                    model.tensor_file = Some(picker.path.clone());
                    model.load_request += 1;
                    model.effects.push(Effect::LoadTensor {
                        path: picker.path.clone(),
                        name,
                        request: model.load_request,
                    });
                    model.status = Some("loading…".into());
                }
                None => model.overlay = Some(Overlay::Tensors(picker)),
            }
        }
        Some(Overlay::ConfirmQuit) => model.quit = true,
        Some(Overlay::SaveAs(prompt)) => {
            let name = typed_name(&prompt);
            if name.is_empty() {
                model.status = Some("not saved: no file name given".into());
            } else {
                model.effects.push(Effect::Save {
                    path: PathBuf::from(name),
                    text: model.text(),
                });
            }
        }
        Some(Overlay::Export(prompt)) => export_to(model, &typed_name(&prompt)),
        other => model.overlay = other,
    }
}

/// Alt-Shift-E: asks for the name of an HTML or PDF report of the data and configuration.
fn export(model: &mut Model) {
    if model.analysis.report.is_none() {
        model.status = Some("nothing to export yet: no results".into());
        return;
    }
    let stem = match &model.source {
        Source::Text { path: Some(p) } => p.file_stem().map(|s| s.to_string_lossy().into_owned()),
        // `model.safetensors / layer.0.weight`: the tensor's name, spelled for a file name.
        Source::Tensor { name, .. } => Some(
            name.rsplit(" / ")
                .next()
                .unwrap_or(name)
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                        c
                    } else {
                        '_'
                    }
                })
                .collect(),
        ),
        Source::Text { path: None } => None,
    };
    let name = stem.map_or_else(
        || "quantscope-report.html".to_string(),
        |s| format!("{s}-report.html"),
    );
    model.overlay = Some(export_prompt(&name));
}

/// Exports the report to `name` (HTML or PDF by its ending), or says why not.
fn export_to(model: &mut Model, name: &str) {
    let document = std::path::Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .and_then(|e| e.parse::<crate::io::export::rich::Document>().ok());
    let Some(document) = document else {
        model.status = Some(if name.is_empty() {
            "not exported: no file name given".to_string()
        } else {
            "not exported: the name must end in .html or .pdf (Esc cancels)".to_string()
        });
        if !name.is_empty() {
            model.overlay = Some(export_prompt(name));
        }
        return;
    };
    let (Some(matrix), Some(report)) = (&model.analysis.matrix, &model.analysis.report) else {
        model.status = Some("nothing to export yet: no results".into());
        return;
    };
    if model.analysis.pending {
        model.status = Some(
            "not exported: the analysis is still running; export again when it is done".into(),
        );
        return;
    }
    let versus = match (&model.analysis.pinned, &model.analysis.comparison) {
        (Some(a), Some(c)) if model.pinned.is_some() => Some((Arc::clone(a), Arc::clone(c))),
        _ => None,
    };
    model.effects.push(Effect::Export {
        path: PathBuf::from(name),
        document,
        job: Box::new(crate::app::model::ExportJob {
            matrix: Arc::clone(matrix),
            report: Arc::clone(report),
            versus,
            lineup: model.analysis.lineup.clone(),
        }),
    });
    let of = if model.stale() {
        " (of the last data that parsed: the text has an error)"
    } else {
        ""
    };
    model.status = Some(format!("exporting {name}{of}…"));
}

fn save(model: &mut Model) {
    match &model.source {
        Source::Tensor { name, .. } => {
            model.status = Some(format!("{name} is read-only: nothing to save"));
        }
        Source::Text { path: Some(path) } => model.effects.push(Effect::Save {
            path: path.clone(),
            text: model.text(),
        }),
        Source::Text { path: None } => model.overlay = Some(save_as_prompt("channels.txt")),
    }
}

/// Writes the preset and the settings changed from it into the text's first lines, as the
/// `#!` directives scenario files use (replacing such lines already there, keeping a title
/// and `look` lines); the data lines are not touched. Opening the saved file applies them.
fn keep_settings(model: &mut Model) {
    if !matches!(model.source, Source::Text { .. }) {
        model.status = Some("a loaded tensor has no text to keep settings in".into());
        return;
    }
    let lines = model.editor.lines();
    let header = lines
        .iter()
        .take_while(|l| l.trim_start().starts_with("#!"))
        .count();
    let mut new: Vec<String> = lines[..header]
        .iter()
        .filter(|l| {
            let key = l.trim_start()[2..].split(':').next().unwrap_or("").trim();
            key.eq_ignore_ascii_case("title") || key.eq_ignore_ascii_case("look")
        })
        .map(|l| l.as_str().to_owned())
        .collect();
    new.push(format!("#! preset: {}", model.preset));
    for (key, value) in crate::core::names::settings(&model.overrides) {
        new.push(format!("#! {key}: {value}"));
    }
    let mut text = new.join("\n");
    text.push('\n');
    if model.editor.replace_rows(0..header, &text) {
        model.request_analysis();
    }
    model.status = Some(format!(
        "the settings are in the first {} lines (#!); Ctrl-S saves them with the data",
        new.len()
    ));
}

/// The "Save as" prompt, holding `name`.
fn save_as_prompt(name: &str) -> Overlay {
    Overlay::SaveAs(name_prompt(name))
}

/// The "Export report" prompt, holding `name`.
fn export_prompt(name: &str) -> Overlay {
    Overlay::Export(name_prompt(name))
}

/// A one-line file name prompt holding `name`, the cursor at its end.
fn name_prompt(name: &str) -> Box<ratatui_textarea::TextArea<'static>> {
    let mut prompt = ratatui_textarea::TextArea::default();
    prompt.insert_str(name);
    prompt.move_cursor(CursorMove::End);
    Box::new(prompt)
}

/// The file name typed into a name prompt, trimmed.
fn typed_name(prompt: &ratatui_textarea::TextArea<'_>) -> String {
    prompt
        .lines()
        .first()
        .map(|l| l.trim().to_string())
        .unwrap_or_default()
}

fn step_selection(model: &mut Model, delta: isize) {
    let moved = |i: usize, n: usize| -> usize {
        if n == 0 {
            return 0;
        }
        i.saturating_add_signed(delta).min(n - 1)
    };
    if let Some(Overlay::Scenarios { selected }) = &mut model.overlay {
        *selected = moved(*selected, crate::teach::assets::scenario_names().len());
        return;
    }
    if let Some(Overlay::Formats { selected }) = &mut model.overlay {
        let n = model
            .analysis
            .lineup
            .as_ref()
            .map_or(0, |l| l.entries.len());
        *selected = moved(*selected, n);
        return;
    }
    if let Some(Overlay::Tensors(picker)) = &mut model.overlay {
        let n = picker.visible().len();
        picker.selected = moved(picker.selected, n);
        return;
    }
    if let Some(Overlay::Stored(view)) = &mut model.overlay {
        view.selected = moved(view.selected, view.order.len());
        return;
    }
    if model.overlay.is_some() {
        model.help_scroll = model
            .help_scroll
            .saturating_add_signed(delta.clamp(-100, 100) as i16);
        return;
    }
    let channels = model.analysis.report.as_ref().map_or(0, |r| r.shape.0);
    match model.focus {
        Focus::Settings => model.selected_setting = moved(model.selected_setting, SETTINGS.len()),
        Focus::Ladder => {
            let rungs = model.analysis.report.as_ref().map_or(0, |r| r.ladder.len());
            model.selected_rung = moved(model.selected_rung, rungs);
        }
        Focus::Utilization | Focus::Errors | Focus::Detail => {
            // Move along the listed order (sorted, maybe filtered).
            if model.order.is_empty() {
                model.selected_channel = moved(model.selected_channel, channels);
            } else {
                let at = model
                    .order
                    .iter()
                    .position(|&c| c == model.selected_channel)
                    .unwrap_or(0);
                model.selected_channel = model.order[moved(at, model.order.len())];
            }
        }
        Focus::Editor => {}
    }
}

/// `n` or `f` in the stored view: rows by fewest levels used or by index, collapsed only or
/// all.
fn reorder_stored(model: &mut Model, action: Action) {
    let (Some(stored), Some(Overlay::Stored(view))) = (model.source.stored(), &mut model.overlay)
    else {
        return;
    };
    let mut order = view.row_order;
    if action == Action::SortRows {
        order.fewest_first = !order.fewest_first;
    } else {
        order.collapsed_only = !order.collapsed_only;
    }
    view.reorder(stored, order);
    let listed = view.order.len();
    model.status = Some(match (order.collapsed_only, listed) {
        (true, 0) => "no row is collapsed or has a collapsed block, as stored".to_string(),
        (true, n) => format!("listing the {n} rows that are collapsed or have a collapsed block"),
        (false, _) if order.fewest_first => "rows sorted by fewest levels used".to_string(),
        (false, _) => "rows by index".to_string(),
    });
}

/// Moves `setting` one step `dir` (see [`Setting::step`]), and says when the change did
/// nothing under the rest of the configuration.
fn change_setting(model: &mut Model, setting: Setting, dir: Direction) {
    let c = model.config;
    let changed = setting.step(
        &Current {
            config: &c,
            preset: model.preset,
            overrides: model.overrides,
            group_size: model.group_size,
        },
        dir,
    );
    model.group_size = changed.group_size;
    let (preset, o) = (changed.preset, changed.overrides);
    if let Err(e) = model.apply_settings(preset, o) {
        model.status = Some(format!("not changed: {e}"));
    } else if let Some(n) = crate::core::effect::ineffective(&model.config)
        .into_iter()
        .chain(crate::core::effect::ineffective(&c))
        .find(|n| n.key == setting.key())
    {
        // Pointless before or after the change: either way the change did nothing.
        model.status = Some(format!("{}: no effect here ({})", n.key, n.why));
    }
}

/// Enter in the formats overlay: the preset or format chosen becomes the active
/// configuration (the `active` entry, a configuration no preset gives, already is).
fn choose_format(model: &mut Model, selected: usize) {
    let name = model
        .analysis
        .lineup
        .as_ref()
        .and_then(|l| l.entries.get(selected))
        // A llama.cpp fallback's entry chooses the format asked for (it falls back again).
        .map(|e| {
            e.fallback
                .map_or_else(|| e.name.clone(), |f| f.from.to_string())
        });
    let known = name.as_deref().and_then(|n| {
        crate::core::PRESETS
            .iter()
            .map(|p| p.name)
            .chain(crate::core::lineup::FORMATS.iter().map(|f| f.name))
            .find(|p| *p == n)
    });
    match (name, known) {
        (Some(_), Some(p)) => {
            match model.apply_settings(p, crate::core::presets::Overrides::default()) {
                Ok(()) => model.status = Some(format!("preset {p}")),
                Err(e) => model.status = Some(format!("{p}: {e}")),
            }
        }
        (Some(name), None) => {
            model.status = Some(format!("{name} is the active configuration already"));
        }
        (None, _) => model.overlay = Some(Overlay::Formats { selected }),
    }
}
