//! The keymap's own checks: no key bound twice, every action described.

use std::collections::HashMap;

use super::*;

#[test]
fn no_key_is_bound_twice_in_one_mode() {
    let mut seen: HashMap<(Mode, Combo), Action> = HashMap::new();
    for b in BINDINGS {
        for k in b.keys {
            if let Some(prev) = seen.insert((b.mode, *k), b.action) {
                panic!(
                    "{} bound to both {prev:?} and {:?} in {:?}",
                    k.label(),
                    b.action,
                    b.mode
                );
            }
        }
    }
}

#[test]
fn pane_keys_do_not_shadow_global_keys() {
    // A pane key equal to a global key would make the global binding unreachable there.
    for p in bindings(Mode::Panes) {
        for k in p.keys {
            let g = bindings(Mode::Global).find(|g| g.keys.contains(k));
            assert!(
                g.is_none(),
                "{} is bound in both Global and Panes",
                k.label()
            );
        }
    }
}

#[test]
fn editor_keys_do_not_shadow_global_keys() {
    for e in bindings(Mode::Editor) {
        for k in e.keys {
            let g = bindings(Mode::Global).find(|g| g.keys.contains(k));
            assert!(
                g.is_none(),
                "{} is bound in both Global and Editor",
                k.label()
            );
            assert!(
                !(matches!(k.code, Char(_)) && k.modifiers.is_empty()),
                "{} would take a typed character",
                k.label()
            );
        }
    }
}

#[test]
fn every_mode_with_bindings_is_listed() {
    for b in BINDINGS {
        assert!(
            Mode::ALL.contains(&b.mode),
            "{:?} is missing from Mode::ALL",
            b.mode
        );
    }
}

#[test]
fn every_action_is_described_and_every_binding_has_a_key() {
    for b in BINDINGS {
        assert!(!b.keys.is_empty());
        assert!(b.action.describe().len() > 2);
        assert!(!b.action.short().is_empty());
    }
}

#[test]
fn help_says_what_its_keys_do_there() {
    // The help overlay scrolls; a picker opens what is selected; neither "selects".
    for b in bindings(Mode::Help) {
        assert!(
            !b.action.describe_in(Mode::Help).contains("select"),
            "{b:?}"
        );
    }
    for mode in [Mode::Picker, Mode::TensorPicker] {
        assert_eq!(Action::Yes.short_in(mode), "open");
    }
    assert_eq!(Action::Yes.short_in(Mode::Confirm), "yes");
    assert_eq!(Action::Up.describe_in(Mode::Stored), Action::Up.describe());
}

#[test]
fn every_global_toggle_is_reachable_without_ctrl_shift_chords() {
    for b in bindings(Mode::Global) {
        for k in b.keys {
            let chord = k.modifiers.contains(KeyModifiers::CONTROL)
                && k.modifiers.contains(KeyModifiers::SHIFT);
            assert!(!chord, "{} uses a Ctrl+Shift chord", k.label());
        }
        // Plain characters in Global would be typed into the editor instead.
        let plain_char = b
            .keys
            .iter()
            .any(|k| matches!(k.code, Char(_)) && k.modifiers.is_empty());
        assert!(
            !plain_char,
            "{:?} has a plain character in Global",
            b.action
        );
    }
}

#[test]
fn lookup_normalises_shift_and_case() {
    let ctrl_s = KeyEvent::new(Char('S'), KeyModifiers::CONTROL | KeyModifiers::SHIFT);
    assert_eq!(lookup(Mode::Global, &ctrl_s), Some(Action::Save));
    let backtab = KeyEvent::new(BackTab, KeyModifiers::SHIFT);
    assert_eq!(lookup(Mode::Global, &backtab), Some(Action::FocusPrev));
    let question = KeyEvent::new(Char('?'), KeyModifiers::SHIFT);
    assert_eq!(lookup(Mode::Panes, &question), Some(Action::Help));
    assert_eq!(
        lookup(Mode::Global, &KeyEvent::new(Char('g'), ALT)),
        Some(Action::Change(Setting::Granularity, Direction::Forward))
    );
    assert_eq!(
        first_key(
            Mode::Global,
            Action::Change(Setting::Granularity, Direction::Forward)
        )
        .as_deref(),
        Some("F7")
    );
}
