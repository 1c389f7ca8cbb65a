//! Answers to the overlays: Enter on a list or a prompt, Esc, and the stored view's and
//! format ladder's own keys.

use std::path::PathBuf;

use crate::app::keymap::Action;
use crate::app::model::{Effect, Model, Overlay};

use super::files::{export_to, typed_name};

pub(super) fn yes(model: &mut Model) {
    match model.overlay.take() {
        Some(Overlay::Scenarios { selected }) => {
            if model.dirty() {
                model.overlay = Some(Overlay::ConfirmScenario(selected));
            } else {
                load_builtin_scenario(model, selected);
            }
        }
        Some(Overlay::ConfirmScenario(selected)) => load_builtin_scenario(model, selected),
        Some(Overlay::ConfirmDemo) => crate::app::demo::start_builtin(model),
        Some(Overlay::Palette(palette)) => {
            // The palette closes, then the command runs as if its key had been pressed.
            if let Some(command) = palette.visible().get(palette.selected) {
                super::update(model, crate::app::palette::message(command));
            } else {
                model.overlay = Some(Overlay::Palette(palette));
            }
        }
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
        Some(Overlay::Importance(prompt)) => super::importance::load(model, &typed_name(&prompt)),
        other => model.overlay = other,
    }
}

/// Esc: closes the overlay, or leaves the cards, practice mode or the demo, or clears the
/// caption, whichever is innermost.
pub(super) fn close(model: &mut Model) {
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

/// `S`: opens the stored view of a quantized GGUF tensor, or closes it.
pub(super) fn toggle_stored(model: &mut Model) {
    if matches!(model.overlay, Some(Overlay::Stored(_))) {
        model.overlay = None;
    } else if !model.open_stored_view() {
        model.status =
            Some("no stored view: the data is not a quantized tensor of a GGUF file".into());
    }
}

/// `n` or `f` in the stored view: rows by fewest levels used or by index, collapsed only or
/// all.
pub(super) fn reorder_stored(model: &mut Model, action: Action) {
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

/// Enter in the formats overlay: the preset or format chosen becomes the active
/// configuration (the `active` entry, a configuration no preset gives, already is).
pub(super) fn choose_format(model: &mut Model, selected: usize) {
    let name = model
        .analysis
        .format_ladder
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
            .chain(crate::core::format_ladder::FORMATS.iter().map(|f| f.name))
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

pub(super) fn load_builtin_scenario(model: &mut Model, index: usize) {
    if let Some(scenario) = crate::teach::assets::scenarios().get(index) {
        model.load_scenario(scenario);
    }
}
