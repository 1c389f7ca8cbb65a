//! Driving the explorer's model without a terminal: actions and keys through `update` (and the
//! keymap), with the runtime's effects performed by `settle`, and opening the tensor picker on
//! a file.

use std::path::PathBuf;

use quantscope::app::keymap::Action;
use quantscope::app::{Effect, Message, Model, Overlay, translate, update};
use quantscope::cli::BUILTIN_EXAMPLE;
use quantscope::runtime::settle;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// The explorer on the built-in example, analysed.
pub fn builtin_model() -> Model {
    let mut m = Model::with_text(BUILTIN_EXAMPLE, None);
    settle(&mut m);
    m
}

/// Performs `action`, then its effects.
pub fn act(m: &mut Model, action: Action) {
    update(m, Message::Action(action));
    settle(m);
}

/// Presses a key through the keymap (nothing happens when it is bound to nothing there),
/// leaving its effects queued for the test to look at.
pub fn press(m: &mut Model, code: KeyCode, modifiers: KeyModifiers) {
    if let Some(msg) = translate(m, &KeyEvent::new(code, modifiers)) {
        update(m, msg);
    }
}

/// Types `text` into whatever has the keys, a character a key, effects left queued.
pub fn type_in(m: &mut Model, text: &str) {
    for c in text.chars() {
        press(m, KeyCode::Char(c), KeyModifiers::NONE);
    }
}

/// Presses a key (nothing happens if it is bound to nothing here), then performs the effects.
pub fn key(m: &mut Model, code: KeyCode, modifiers: KeyModifiers) {
    if let Some(msg) = translate(m, &KeyEvent::new(code, modifiers)) {
        update(m, msg);
    }
    settle(m);
}

/// Presses a key that must be bound to something here, then performs the effects.
pub fn bound_key(m: &mut Model, code: KeyCode, modifiers: KeyModifiers) {
    let msg = translate(m, &KeyEvent::new(code, modifiers)).expect("a bound key");
    update(m, msg);
    settle(m);
}

/// Types `text` as keys (a newline as Enter), through the keymap, then performs the effects.
pub fn type_text(m: &mut Model, text: &str) {
    for c in text.chars() {
        let code = if c == '\n' {
            KeyCode::Enter
        } else {
            KeyCode::Char(c)
        };
        if let Some(msg) = translate(m, &KeyEvent::new(code, KeyModifiers::NONE)) {
            update(m, msg);
        }
    }
    settle(m);
}

/// An empty explorer with `file` as its tensor file and the tensor picker opened on it:
/// `update` only asks the runtime for the listing (it reads nothing itself), and the picker
/// opens once the runtime has listed the file.
pub fn open_picker(file: PathBuf) -> Model {
    let mut m = Model::with_text("", None);
    m.tensor_file = Some(file);
    update(&mut m, Message::Action(Action::Tensors));
    assert!(m.overlay.is_none());
    assert!(
        m.effects
            .iter()
            .any(|e| matches!(e, Effect::ListTensors { .. }))
    );
    settle(&mut m);
    assert!(
        matches!(m.overlay, Some(Overlay::Tensors(_))),
        "no picker: {:?}",
        m.status
    );
    m
}
