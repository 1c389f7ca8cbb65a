//! What terminal users expect, at message level: the command palette, the mouse, themes and
//! the config file, through `translate` and `update` (no terminal), and the screen drawn
//! into a test backend.

use quantscope::app::keymap::Action;
use quantscope::app::{Message, Model, Overlay, translate, update};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

#[path = "common/explorer.rs"]
mod explorer;
#[path = "common/screen.rs"]
mod screen_text;

fn press(m: &mut Model, code: KeyCode, modifiers: KeyModifiers) {
    if let Some(msg) = translate(m, &KeyEvent::new(code, modifiers)) {
        update(m, msg);
    }
}

fn type_in(m: &mut Model, text: &str) {
    for c in text.chars() {
        press(m, KeyCode::Char(c), KeyModifiers::NONE);
    }
}

#[test]
fn the_palette_finds_the_demo_by_name_and_runs_it() {
    let mut m = explorer::builtin_model();
    press(&mut m, KeyCode::Char('p'), KeyModifiers::CONTROL);
    assert!(
        matches!(m.overlay, Some(Overlay::Palette(_))),
        "Ctrl-P opens it"
    );
    type_in(&mut m, "demo");
    let s = screen_text::screen(&m, 80, 24);
    let first = s
        .lines()
        .find(|l| l.contains("▶ ") && !l.contains("Commands"))
        .expect("a selected command");
    assert!(
        first.contains("demo") && first.contains("Alt-D"),
        "{first}\n{s}"
    );
    press(&mut m, KeyCode::Enter, KeyModifiers::NONE);
    assert!(m.overlay.is_none());
    assert_eq!(m.demo.as_ref().map(|d| d.shown), Some(1), "the demo plays");
}

#[test]
fn the_palette_opens_with_colon_in_the_panes_and_runs_what_it_finds() {
    let mut m = explorer::builtin_model();
    press(&mut m, KeyCode::Tab, KeyModifiers::NONE);
    press(&mut m, KeyCode::Tab, KeyModifiers::NONE);
    press(&mut m, KeyCode::Char(':'), KeyModifiers::NONE);
    assert!(matches!(m.overlay, Some(Overlay::Palette(_))));
    // Letters in order, not together: "gran" finds granularity.
    type_in(&mut m, "gran");
    let Some(Overlay::Palette(p)) = &m.overlay else {
        panic!()
    };
    assert_eq!(p.visible()[0].name, "granularity");
    let before = m.config.granularity;
    press(&mut m, KeyCode::Enter, KeyModifiers::NONE);
    assert_ne!(m.config.granularity, before);
    // Esc closes it without running anything; Down moves the selection.
    press(&mut m, KeyCode::Char(':'), KeyModifiers::NONE);
    press(&mut m, KeyCode::Down, KeyModifiers::NONE);
    let Some(Overlay::Palette(p)) = &m.overlay else {
        panic!()
    };
    assert_eq!(p.selected, 1);
    press(&mut m, KeyCode::Esc, KeyModifiers::NONE);
    assert!(m.overlay.is_none());
}

#[test]
fn every_explorer_action_is_in_the_palette_with_its_keys_as_the_help_gives_them() {
    let commands = quantscope::app::palette::commands();
    for mode in [
        quantscope::app::keymap::Mode::Global,
        quantscope::app::keymap::Mode::Panes,
    ] {
        for b in quantscope::app::keymap::bindings(mode) {
            if matches!(
                b.action,
                Action::Close | Action::Yes | Action::No | Action::Palette
            ) {
                continue;
            }
            let c = commands
                .iter()
                .find(|c| c.action == b.action)
                .unwrap_or_else(|| panic!("{:?} missing", b.action));
            for k in b.keys {
                assert!(c.keys.contains(&k.label()), "{:?}: {}", b.action, c.keys);
            }
        }
    }
    // A pasted name filters too.
    let mut m = explorer::builtin_model();
    press(&mut m, KeyCode::Char('p'), KeyModifiers::CONTROL);
    update(&mut m, Message::Paste("formats".into()));
    let Some(Overlay::Palette(p)) = &m.overlay else {
        panic!()
    };
    assert_eq!(p.visible()[0].action, Action::Formats);
}

/// Where `text` is on the 80x24 screen, on a line whose first `before` columns contain it
/// and `with` too: its column and row.
fn find_with(m: &Model, text: &str, with: &str, before: usize) -> (u16, u16) {
    let s = screen_text::screen(m, 80, 24);
    for (y, line) in s.lines().enumerate() {
        let left: String = line.chars().take(before).collect();
        if !left.contains(with) {
            continue;
        }
        if let Some(x) = left.find(text) {
            let col = left[..x].chars().count();
            return (u16::try_from(col).unwrap(), u16::try_from(y).unwrap());
        }
    }
    panic!("{text:?} is not on\n{s}");
}

fn find(m: &Model, text: &str, before: usize) -> (u16, u16) {
    find_with(m, text, "", before)
}

fn click(m: &mut Model, column: u16, row: u16) {
    let theme = quantscope::ui::Theme::new(false, false);
    let at = quantscope::ui::hit(
        ratatui::layout::Rect::new(0, 0, 80, 24),
        m,
        &theme,
        column,
        row,
    );
    update(m, Message::Click(at));
}

fn wheel(m: &mut Model, column: u16, row: u16, down: bool) {
    let theme = quantscope::ui::Theme::new(false, false);
    let at = quantscope::ui::hit(
        ratatui::layout::Rect::new(0, 0, 80, 24),
        m,
        &theme,
        column,
        row,
    );
    update(m, Message::Wheel { at, down });
}

#[test]
fn a_click_focuses_a_pane_and_selects_the_row_under_it() {
    use quantscope::app::Focus;
    let mut m = explorer::builtin_model();
    assert_eq!(m.focus, Focus::Editor);
    // The loud row of Utilization (the left half).
    let (x, y) = find_with(&m, "loud ", "/15", 38);
    click(&mut m, x + 2, y);
    assert_eq!((m.focus, m.selected_channel), (Focus::Utilization, 1));
    // The channel rung of the Ladder.
    let (x, y) = find_with(&m, "channel ", "12.000", 80);
    click(&mut m, x, y);
    assert_eq!((m.focus, m.selected_rung), (Focus::Ladder, 1));
    // The bits line of Settings.
    let (x, y) = find_with(&m, "bits ", "F2/F3", 80);
    click(&mut m, x, y);
    assert_eq!(m.focus, Focus::Settings);
    assert_eq!(
        quantscope::app::SETTINGS[m.selected_setting].label(),
        "bits"
    );
    // The Data pane's text: the editor has the keys again.
    let (x, y) = find(&m, "#! title", 38);
    click(&mut m, x, y);
    assert_eq!(m.focus, Focus::Editor);
}

#[test]
fn the_wheel_moves_a_lists_selection_and_scrolls_the_help() {
    use quantscope::app::Focus;
    let mut m = explorer::builtin_model();
    let (x, y) = find_with(&m, "quiet ", "/15", 38);
    wheel(&mut m, x, y, true);
    assert_eq!((m.focus, m.selected_channel), (Focus::Utilization, 1));
    wheel(&mut m, x, y, false);
    assert_eq!(m.selected_channel, 0);
    // With the help open, the wheel scrolls it wherever the pointer is.
    update(&mut m, Message::Action(Action::Help));
    wheel(&mut m, 0, 0, true);
    assert_eq!(m.help_scroll, 3);
}
