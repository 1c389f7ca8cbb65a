//! From a key to a [`Message`]: which keymap table is in force ([`mode`]) and what a key
//! means there ([`translate`]).

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_textarea::Input;

use crate::app::keymap::{Action, Mode, lookup};
use crate::app::model::{Focus, MIN_HEIGHT, MIN_WIDTH, Model, Overlay, Source};
use crate::app::update::Message;

/// The mode whose bindings apply now.
#[must_use]
pub fn mode(model: &Model) -> Mode {
    match model.overlay {
        Some(Overlay::Help) => Mode::Help,
        Some(Overlay::ConfirmQuit | Overlay::ConfirmScenario(_) | Overlay::ConfirmDemo) => {
            Mode::Confirm
        }
        Some(Overlay::SaveAs(_) | Overlay::Export(_) | Overlay::Importance(_)) => Mode::Prompt,
        Some(Overlay::ImportanceView) => Mode::Importance,
        Some(Overlay::Scenarios { .. } | Overlay::Formats { .. }) => Mode::Picker,
        Some(Overlay::Tensors(_)) => Mode::TensorPicker,
        Some(Overlay::Palette(_)) => Mode::Palette,
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
    model.size.0 < MIN_WIDTH || model.size.1 < MIN_HEIGHT
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
        Mode::TensorPicker | Mode::Palette => lookup(current, key)
            .or(global.filter(|a| matches!(a, Action::Quit | Action::Palette)))
            .map(Message::Action)
            .or_else(|| Some(Message::Edit(Input::from(*key)))),
        Mode::Help => lookup(Mode::Help, key)
            .or(global.filter(|a| *a == Action::Quit))
            .map(Message::Action),
        Mode::Confirm => lookup(Mode::Confirm, key)
            .or(global.filter(|a| *a == Action::Quit))
            .map(Message::Action),
        Mode::Picker => lookup(Mode::Picker, key)
            .or(global
                .filter(|a| matches!(a, Action::Quit | Action::Formats | Action::ToggleFront)))
            .or_else(|| {
                // The format ladder's front: its plain key too.
                lookup(Mode::Panes, key).filter(|a| {
                    *a == Action::ToggleFront
                        && matches!(model.overlay, Some(Overlay::Formats { .. }))
                })
            })
            .map(Message::Action),
        Mode::Stored => lookup(Mode::Stored, key)
            .or(global.filter(|a| matches!(a, Action::Quit | Action::Stored | Action::Help)))
            .map(Message::Action),
        Mode::Prompt => lookup(Mode::Prompt, key)
            .or(global.filter(|a| *a == Action::Quit))
            .map(Message::Action)
            .or_else(|| Some(Message::Edit(Input::from(*key)))),
        Mode::Importance => lookup(Mode::Importance, key)
            .or(global)
            .or_else(|| lookup(Mode::Panes, key).filter(|_| model.focus != Focus::Editor))
            .map(Message::Action),
        Mode::Global | Mode::Editor => global.map(Message::Action).or_else(|| match model.source {
            Source::Text { .. } => editor_message(key),
            Source::Tensor { .. } => None,
        }),
        Mode::Panes => global
            .or_else(|| lookup(Mode::Panes, key))
            .map(Message::Action),
    }
}
