//! Which weights matter: the prompt that loads an importance matrix or activations, the
//! switch that turns them on and off, the importance view and the front's measure.

use std::sync::Arc;

use crate::app::calibration::{BUILT_IN, Calibration};
use crate::app::model::{Effect, ImportanceMode, Model, Overlay, Source};

/// The importance actions of the keymap.
pub(super) fn act(model: &mut Model, action: crate::app::keymap::Action) {
    use crate::app::keymap::Action;
    match action {
        Action::LoadImportance => load_prompt(model),
        Action::ToggleImportance => toggle(model),
        Action::ImportanceView => view(model),
        Action::ToggleFront => toggle_front(model),
        _ => {}
    }
}

/// Alt-I: asks for an importance matrix or activations, proposing what is loaded (or the
/// built-in activations).
fn load_prompt(model: &mut Model) {
    let name = model
        .importance
        .loaded
        .as_ref()
        .map_or(BUILT_IN, |c| c.spec.as_str())
        .to_string();
    model.overlay = Some(Overlay::Importance(super::files::name_prompt(&name)));
}

/// Loads what the prompt names, checked against the data on screen.
pub(super) fn load(model: &mut Model, spec: &str) {
    let spec = spec.trim();
    if spec.is_empty() {
        model.status = Some("nothing loaded: no file name given".into());
        return;
    }
    model.importance.request += 1;
    let tensor = match &model.source {
        Source::Tensor { name, .. } => Some(name.rsplit(" / ").next().unwrap_or(name).to_string()),
        Source::Text { .. } => None,
    };
    model.effects.push(Effect::LoadImportance {
        spec: spec.to_string(),
        matrix: model.analysis.matrix.clone(),
        tensor,
        request: model.importance.request,
    });
    model.status = Some(format!("loading {spec}…"));
}

/// A load finished: what it loaded is used from now on; a load that failed leaves the
/// explorer as it was.
pub(super) fn loaded(model: &mut Model, request: u64, result: Result<Arc<Calibration>, String>) {
    if request != model.importance.request {
        return;
    }
    match result {
        Ok(c) => {
            model.status = Some(format!(
                "{}: the output errors follow the report ({} switches it off)",
                c.label,
                key(crate::app::keymap::Action::ToggleImportance)
            ));
            model.importance.loaded = Some(c);
            model.importance.mode = ImportanceMode::Weigh;
            model.analysis.calibration_unfit = None;
            model.request_analysis();
        }
        Err(e) => {
            let kept = if model.importance.loaded.is_some() {
                "the importance loaded before stays"
            } else {
                "nothing changed"
            };
            model.status = Some(format!("not loaded: {e} ({kept})"));
        }
    }
}

/// Alt-W: the importance used to quantize and measure, to measure only, or not at all.
fn toggle(model: &mut Model) {
    let Some(c) = &model.importance.loaded else {
        model.status = Some(format!(
            "no importance loaded: {} loads an importance matrix or activations ({BUILT_IN} needs no file)",
            key(crate::app::keymap::Action::LoadImportance)
        ));
        return;
    };
    model.importance.mode = model.importance.mode.next();
    model.status = Some(match model.importance.mode {
        ImportanceMode::Weigh => format!(
            "importance on: {}: the llama.cpp formats quantize with it, output errors measured",
            c.label
        ),
        ImportanceMode::Measure => format!(
            "importance measured only: {}: the formats quantize without it, output errors still measured",
            c.label
        ),
        ImportanceMode::Off => {
            "importance off: the formats quantize without it, no output errors".into()
        }
    });
    model.analysis.calibration_unfit = None;
    model.request_analysis();
}

/// Alt-B: the importance view, or back.
fn view(model: &mut Model) {
    if matches!(model.overlay, Some(Overlay::ImportanceView)) {
        model.overlay = None;
        return;
    }
    model.overlay = Some(Overlay::ImportanceView);
    if model.importance.active().is_none() {
        model.status = Some(format!(
            "no importance in use: {} loads one",
            key(crate::app::keymap::Action::LoadImportance)
        ));
    }
}

/// Alt-T: the format ladder's front on the weights' RMSE or the output error.
fn toggle_front(model: &mut Model) {
    let f = &mut model.importance.front_on_output;
    *f = !*f;
    model.status = Some(if *f {
        "the format ladder's front is drawn on the output error (the importance-weighted error without activations)".into()
    } else {
        "the format ladder's front is drawn on the weights' RMSE".into()
    });
}

/// The first key of `action` where the editor has focus.
fn key(action: crate::app::keymap::Action) -> String {
    crate::app::keymap::first_key(crate::app::keymap::Mode::Global, action).unwrap_or_default()
}

/// A new tensor is shown: an importance matrix finds its entry by the tensor's name.
pub(super) fn follow_tensor(model: &mut Model, name: &str) {
    let Some(c) = &model.importance.loaded else {
        return;
    };
    let Some((im, pick, _)) = &c.imatrix else {
        return;
    };
    let tensor = name.rsplit(" / ").next().unwrap_or(name).to_string();
    let mut next = (**c).clone();
    next.imatrix = Some((Arc::clone(im), pick.clone(), Some(tensor)));
    model.importance.loaded = Some(Arc::new(next));
    model.analysis.calibration_unfit = None;
}
