//! Snapshots of the whole screen, drawn by `ui::draw` into ratatui's `TestBackend`.

use crate::common::explorer;
use crate::common::screen as screen_text;

use std::fmt::Write as _;

use explorer::builtin_model as model;
use quantscope::app::keymap::Action;
use quantscope::app::{Direction, Setting};
use quantscope::app::{Message, Model, update};
use quantscope::runtime::settle;
use quantscope::ui::{self, Theme};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use screen_text::screen;

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
    m.editor
        .set_cursor(quantscope::app::editor::Pos::new(9, usize::MAX));
    update(&mut m, Message::Type('x'));
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
    update(
        &mut m,
        Message::Action(Action::Change(Setting::Granularity, Direction::Forward)),
    );
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

/// The model the explorer starts with: the built-in example with its scenario's caption.
fn first_run(width: u16, height: u16) -> Model {
    let mut m = Model::with_text("", None);
    let scenario = quantscope::teach::assets::scenario("quiet-loud").unwrap();
    m.load_scenario(&scenario);
    update(&mut m, Message::Resized(width, height));
    settle(&mut m);
    m
}

/// The caption's rows: between the last pane border and the hint line.
fn caption_of(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    let last_border = lines
        .iter()
        .rposition(|l| l.starts_with('└') || l.starts_with('┗'))
        .unwrap();
    lines[last_border + 1..lines.len() - 1].join(" ")
}

/// A scenario's caption quotes the numbers of its text: once the text is edited, the caption
/// says it was written for the text as loaded; a caption set again is unmarked.
#[test]
fn a_scenario_caption_is_marked_once_the_text_is_edited() {
    const MARK: &str = "(Written for the text as loaded.)";
    let mut m = first_run(80, 24);
    let loaded = caption_of(&screen(&m, 80, 24));
    assert!(loaded.contains("quiet row"), "{loaded}");
    assert!(!loaded.contains(MARK), "{loaded}");
    // Settings do not touch the text.
    update(
        &mut m,
        Message::Action(Action::Change(Setting::Granularity, Direction::Forward)),
    );
    settle(&mut m);
    assert!(!caption_of(&screen(&m, 80, 24)).contains(MARK));
    update(&mut m, Message::Type('#'));
    settle(&mut m);
    let edited = caption_of(&screen(&m, 80, 24));
    assert!(edited.starts_with(MARK), "{edited}");
    m.set_caption(Some("a new caption".to_owned()));
    assert_eq!(caption_of(&screen(&m, 80, 24)).trim(), "a new caption");
}

#[test]
fn the_first_run_shows_the_instruction_at_80x24_and_every_word_over_its_pages() {
    let mut m = first_run(80, 24);
    let s = screen(&m, 80, 24);
    let first = caption_of(&s);
    assert!(first.contains("Press F7"), "{s}");
    // Turning the pages shows every word of the caption, in order, and comes back.
    let words: Vec<String> = m
        .caption
        .clone()
        .unwrap()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let mut seen = Vec::new();
    for _ in 0..10 {
        let text = caption_of(&screen(&m, 80, 24));
        // Without the page note at its end.
        let words = match text.rfind(" (") {
            Some(i) if text[i..].contains("Alt-n") => &text[..i],
            _ => text.as_str(),
        };
        let page: Vec<&str> = words.split_whitespace().collect();
        seen.extend(page.iter().map(ToString::to_string));
        if !text.contains("Alt-n: more") {
            break;
        }
        update(&mut m, Message::Action(Action::CaptionMore));
    }
    assert_eq!(seen, words);
    update(&mut m, Message::Action(Action::CaptionMore));
    assert_eq!(
        caption_of(&screen(&m, 80, 24)),
        first,
        "back to the first page"
    );
    // On a taller terminal the whole caption fits on one page.
    let tall = screen(&first_run(100, 40), 100, 40);
    assert!(!caption_of(&tall).contains("Alt-n"), "{tall}");
}

#[test]
fn the_title_keeps_the_demo_step_and_the_shape_at_80_columns() {
    let mut m = Model::with_text("", None);
    let script = quantscope::teach::script::demo_script("quiet-row").unwrap();
    m.demo = Some(quantscope::app::demo::Demo::new(script));
    update(&mut m, Message::Resized(80, 24));
    quantscope::app::demo::go_to(&mut m, 10);
    settle(&mut m);
    let s = screen(&m, 80, 24);
    let title = s.lines().next().unwrap();
    assert!(title.contains("step 10 of 12"), "{title}");
    assert!(title.contains("16x64"), "{title}");
}

#[test]
#[ignore = "prints the first-run screen for a look"]
fn print_first_run() {
    for (w, h) in [(80, 24), (120, 40)] {
        println!("{}", screen(&first_run(w, h), w, h));
    }
}

#[test]
fn clamped_values_are_marked_in_utilization_and_errors() {
    let mut m = model();
    // Unsigned codes under the symmetric scheme: every negative value clamps to code 0.
    update(
        &mut m,
        Message::Action(Action::Change(Setting::Signed, Direction::Forward)),
    );
    settle(&mut m);
    let r = m.analysis.report.as_ref().unwrap();
    assert!(r.channels.iter().all(|c| c.clipped > 0));
    let s = screen(&m, 80, 24);
    let util = s
        .lines()
        .find(|l| l.contains("loud") && l.contains("/1"))
        .unwrap();
    assert!(util.contains("2 clamped"), "{s}");
    assert!(s.contains("! clamped"), "{s}");
    let errors = s
        .lines()
        .find(|l| l.contains("loud ") && l.contains("0."))
        .unwrap();
    assert!(
        errors
            .trim_end()
            .trim_end_matches('│')
            .trim_end()
            .ends_with('!'),
        "{s}"
    );
    // The Settings pane shows that the (lesson's narrow) range does nothing for unsigned
    // codes.
    assert!(s.contains("narrow (no effect)"), "{s}");
}

#[test]
fn at_80x24_collapse_is_defined_and_nothing_important_ends_in_an_ellipsis() {
    let m = first_run(80, 24);
    let s = screen(&m, 80, 24);
    assert!(s.contains("✗ = every value on one code"), "{s}");
    let ladder_formula = s.lines().find(|l| l.contains("bits/weight =")).unwrap();
    assert!(!ladder_formula.contains('…'), "{ladder_formula}");
    // Many channels: the Utilization summary takes its short form rather than being cut.
    let mut many = String::new();
    for r in 0..40 {
        let scale = 10f32.powf(-(r as f32) / 10.0);
        let _ = writeln!(
            many,
            "{}, {}, {}, {}",
            scale,
            -0.5 * scale,
            0.25 * scale,
            -scale
        );
    }
    let mut m = Model::with_text(&many, None);
    update(&mut m, Message::Resized(80, 24));
    settle(&mut m);
    let s = screen(&m, 80, 24);
    let summary = s.lines().find(|l| l.contains("utilization min")).unwrap();
    assert!(!summary.contains('…'), "{s}");
    assert!(summary.contains("max"), "{s}");
    // The help defines the word too.
    update(&mut m, Message::Action(Action::Help));
    let s = screen(&m, 80, 24);
    assert!(
        s.contains("COLLAPSED") && s.contains("a channel whose values differ"),
        "{s}"
    );
}

#[test]
fn with_the_collapsed_only_filter_and_nothing_collapsed_both_panes_list_nothing() {
    let mut m = model();
    update(
        &mut m,
        Message::Action(Action::Change(Setting::Granularity, Direction::Forward)),
    );
    settle(&mut m);
    assert_eq!(m.analysis.report.as_ref().unwrap().collapsed_channels, 0);
    update(&mut m, Message::Action(Action::ToggleCollapsedOnly));
    let s = screen(&m, 80, 24);
    assert_eq!(s.matches("no channel to list").count(), 2, "{s}");
}

/// A quantized tensor of the GGUF fixture (tests/data/gguf/types.gguf), opened as the
/// explorer opens it: in its stored view.
fn stored_model(tensor: &str) -> Model {
    let path =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/gguf/types.gguf");
    let t = quantscope::runtime::files::load_tensor(&path, tensor).unwrap();
    let mut m = Model::with_tensor(t);
    settle(&mut m);
    m
}

#[test]
fn the_stored_view_of_a_quantized_gguf_tensor_at_80x24_and_120x40() {
    let m = stored_model("q4_k");
    let s = screen(&m, 80, 24);
    for needle in [
        "q4_k: Q4_K as stored",
        "1/16 ✗ COLLAPSED",
        "Layout: 4.5 bits/weight",
        "1 of 4 rows, 1 of 4 blocks",
        "Scales: 32 sub-blocks, 8 zero",
    ] {
        assert!(s.contains(needle), "{needle:?} not on\n{s}");
    }
    insta::assert_snapshot!("screen_80x24_stored_q4_k", s);
    let m = stored_model("q6_k");
    insta::assert_snapshot!("screen_120x40_stored_q6_k", screen(&m, 120, 40));
    // Q8_0's rows of 96 values: three blocks each, one row collapsed, blocks of others.
    let m = stored_model("q8_0");
    insta::assert_snapshot!("screen_80x24_stored_q8_0", screen(&m, 80, 24));
}

#[test]
fn the_stored_view_sorts_filters_scrolls_and_gives_way_to_the_panes() {
    let mut m = stored_model("q8_0");
    let act = |m: &mut Model, a: Action| update(m, Message::Action(a));
    act(&mut m, Action::SortRows);
    // The selected row stays selected; Home goes to the top of the new order.
    assert!(screen(&m, 80, 24).contains("row 0: 70/256 levels"));
    act(&mut m, Action::First);
    let s = screen(&m, 80, 24);
    assert!(s.contains("4 rows, fewest levels first"), "{s}");
    assert!(s.contains("row 1: 1/256 levels, COLLAPSED"), "{s}");
    act(&mut m, Action::CollapsedRowsOnly);
    act(&mut m, Action::Last);
    let s = screen(&m, 80, 24);
    assert!(s.contains("1/4 rows with collapse, fewest first"), "{s}");
    insta::assert_snapshot!("screen_80x24_stored_collapsed_only", s);
    act(&mut m, Action::SortRows);
    assert!(screen(&m, 80, 24).contains("1/4 rows with collapse, by index"));
    act(&mut m, Action::CollapsedRowsOnly);
    act(&mut m, Action::First);
    assert!(screen(&m, 120, 40).contains("row 0: 70 of 256 levels (27%), no block collapsed"));
    // Esc: the panes, on the dequantized values; S brings the view back.
    act(&mut m, Action::Close);
    let s = screen(&m, 80, 24);
    assert!(s.contains("stored as Q8_0, 8.5 bits/w"), "{s}");
    assert!(
        s.contains("S stored view"),
        "the hint says how to come back:\n{s}"
    );
    act(&mut m, Action::Stored);
    assert!(screen(&m, 80, 24).contains("q8_0: Q8_0 as stored"));
    act(&mut m, Action::Stored);
    assert!(m.overlay.is_none());
    // Text data has no stored view, and says so.
    let mut text = model();
    act(&mut text, Action::Stored);
    assert!(text.overlay.is_none());
    assert!(
        text.status
            .as_deref()
            .unwrap_or("")
            .contains("no stored view")
    );
    // Small and odd sizes draw without panicking.
    let m = stored_model("q6_k");
    for (w, h) in [(80, 24), (81, 25), (100, 30), (200, 60), (80, 200)] {
        let s = screen(&m, w, h);
        assert!(s.contains("as stored"), "{w}x{h}\n{s}");
    }
}

#[test]
fn the_first_screen_in_readme_is_the_one_drawn() {
    let mut m = quantscope::cli::builtin();
    settle(&mut m);
    let drawn = screen(&m, 80, 24);
    let readme = include_str!("../../README.md");
    let start = readme
        .find("The first screen, at 80x24")
        .and_then(|at| {
            readme[at..]
                .find("```text\n")
                .map(|f| at + f + "```text\n".len())
        })
        .expect("README shows the first screen");
    let end = start + readme[start..].find("```\n").expect("its block ends");
    assert_eq!(
        &readme[start..end],
        drawn,
        "README.md's first screen is not what the explorer draws: capture it again"
    );
}
