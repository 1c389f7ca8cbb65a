//! Snapshots of the whole screen, drawn by `ui::draw` into ratatui's `TestBackend`.

use quantscope::app::keymap::Action;
use quantscope::app::{Message, Model, settle, update};
use quantscope::cli::BUILTIN_EXAMPLE;
use quantscope::ui::{self, Theme};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui_textarea::{Input, Key};

fn screen(model: &Model, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    let theme = Theme::new(false, false);
    terminal
        .draw(|frame| ui::draw(frame, model, &theme))
        .unwrap();
    let buffer = terminal.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..buffer.area.height {
        let mut line = String::new();
        for x in 0..buffer.area.width {
            line.push_str(buffer[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn model() -> Model {
    let mut m = Model::with_text(BUILTIN_EXAMPLE, None);
    settle(&mut m);
    m
}

#[test]
fn whole_screen_at_80x24() {
    let m = model();
    let s = screen(&m, 80, 24);
    assert!(s.contains("COLLAPSED"));
    insta::assert_snapshot!("screen_80x24", s);
}

#[test]
fn whole_screen_with_help_open() {
    let mut m = model();
    update(&mut m, Message::Action(Action::Help));
    let s = screen(&m, 80, 24);
    assert!(s.contains("Everywhere (the editor included)"));
    insta::assert_snapshot!("screen_80x24_help", s);
}

#[test]
fn stale_results_after_a_parse_error() {
    let mut m = model();
    // Line 10 is the quiet row of the built-in example (after its scenario header).
    let mut keys = vec![Key::Down; 9];
    keys.extend([Key::End, Key::Char('x')]);
    for k in keys {
        update(
            &mut m,
            Message::Edit(Input {
                key: k,
                ctrl: false,
                alt: false,
                shift: false,
            }),
        );
    }
    settle(&mut m);
    let s = screen(&m, 80, 24);
    assert!(s.contains("line 10, col"), "{s}");
    assert!(s.contains("stale"), "{s}");
    insta::assert_snapshot!("screen_80x24_stale", s);
}

#[test]
fn tiny_terminals_say_how_much_room_is_needed() {
    let m = model();
    insta::assert_snapshot!("screen_40x10", screen(&m, 40, 10));
    for (w, h) in [(1, 1), (2, 1), (1, 5), (79, 24), (80, 23), (0, 0)] {
        let s = screen(&m, w, h);
        if w >= 40 {
            assert!(s.replace('\n', " ").contains("80x24"), "{w}x{h}: {s}");
        }
    }
}

#[test]
fn a_wide_terminal_shows_the_detail_column() {
    let mut m = model();
    update(&mut m, Message::Resized(160, 40));
    let s = screen(&m, 160, 40);
    assert!(s.contains("Channel 0"), "{s}");
}

#[test]
fn ascii_mode_draws_only_ascii() {
    let m = model();
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    let theme = Theme::new(false, true);
    terminal.draw(|frame| ui::draw(frame, &m, &theme)).unwrap();
    let buffer = terminal.backend().buffer();
    let non_ascii: String = buffer
        .content()
        .iter()
        .map(ratatui::buffer::Cell::symbol)
        .filter(|s| !s.is_ascii())
        .collect();
    assert!(non_ascii.is_empty(), "non-ASCII glyphs: {non_ascii}");
}

#[test]
fn scenario_picker_and_worked_arithmetic_screens() {
    let mut m = model();
    update(&mut m, Message::Action(Action::Scenarios));
    let s = screen(&m, 80, 24);
    assert!(s.contains("quiet-loud") && s.contains("gaussian-16"), "{s}");
    insta::assert_snapshot!("screen_scenarios", s);
    update(&mut m, Message::Action(Action::Close));
    update(&mut m, Message::Action(Action::CycleGranularity));
    settle(&mut m);
    update(&mut m, Message::Action(Action::ToggleExplain));
    let s = screen(&m, 80, 24);
    assert!(s.contains("Worked arithmetic"), "{s}");
    assert!(s.contains("0.15 / 7"), "{s}");
    insta::assert_snapshot!("screen_worked_arithmetic", s);
}

#[test]
fn practice_step_after_a_miss_and_a_recall_card() {
    let mut m = model();
    update(&mut m, Message::Action(Action::Practice));
    update(&mut m, Message::Paste("0.5".into()));
    update(&mut m, Message::Action(Action::Submit));
    let s = screen(&m, 80, 24);
    assert!(s.contains("hint:"), "{s}");
    assert!(s.contains("score 0 of"), "{s}");
    insta::assert_snapshot!("screen_practice_miss", s);
    update(&mut m, Message::Action(Action::Cards));
    update(&mut m, Message::Action(Action::Reveal));
    let s = screen(&m, 80, 24);
    assert!(s.contains("Recall card 1 of"), "{s}");
    insta::assert_snapshot!("screen_recall_card", s);
}
