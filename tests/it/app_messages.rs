//! Message-level tests of the explorer: sequences of messages through `update`, no terminal.

use quantscope::app::keymap::Action;
use quantscope::app::{Direction, SETTINGS, Setting};
use quantscope::app::{Effect, Focus, Message, Model, Overlay, update};
use quantscope::cli::BUILTIN_EXAMPLE;
use quantscope::core::config::{Granularity, Scheme};
use quantscope::runtime::settle;
use ratatui::crossterm::event::{KeyCode, KeyModifiers};

use crate::common::explorer;
use crate::common::files;

use explorer::{act, builtin_model as model, key, type_text};

#[test]
fn the_builtin_example_shows_a_collapsed_quiet_row_under_per_tensor() {
    let m = model();
    let r = m.analysis.report.as_ref().expect("a report");
    assert_eq!(r.config.granularity, Granularity::Tensor);
    assert!(r.channels[0].collapsed);
    assert_eq!(r.channels[0].label.as_deref(), Some("quiet"));
    assert!(!m.stale());
    assert!(!m.analysis.pending, "the ladder arrived");
    assert!(!r.ladder.is_empty());
}

#[test]
fn switching_to_per_channel_rescues_the_quiet_row() {
    let mut m = model();
    let before = m.analysis.report.as_ref().unwrap().channels[0].metrics.mae;
    key(&mut m, KeyCode::F(7), KeyModifiers::NONE);
    let r = m.analysis.report.as_ref().unwrap();
    assert_eq!(r.config.granularity, Granularity::Channel);
    assert!(!r.channels[0].collapsed);
    assert!(r.channels[0].metrics.mae < before / 10.0);
    // Alt-g cycles on to groups (of 2: the rows have 4 values), then back to the tensor.
    key(&mut m, KeyCode::Char('g'), KeyModifiers::ALT);
    assert_eq!(m.config.granularity, Granularity::Group(2));
    key(&mut m, KeyCode::Char('g'), KeyModifiers::ALT);
    assert_eq!(m.config.granularity, Granularity::Tensor);
}

#[test]
fn a_bad_value_keeps_the_last_results_marked_stale_until_fixed() {
    let mut m = model();
    let good = m.analysis.report.clone().unwrap();
    // Move to the end of the text and type a bad value on a new line.
    key(&mut m, KeyCode::End, KeyModifiers::CONTROL);
    key(&mut m, KeyCode::End, KeyModifiers::NONE);
    type_text(&mut m, "\nthird: 0.1, 0.4x, 0.2, 0.3");
    let err = m.analysis.parse_error.clone().expect("a parse error");
    // The example ends with a newline, so the text ends with an empty line; the typed
    // newline starts the one after it.
    assert_eq!(err.line, BUILTIN_EXAMPLE.lines().count() + 2);
    assert!(err.to_string().contains("\"0.4x\""), "{err}");
    assert!(m.stale());
    assert!(
        std::sync::Arc::ptr_eq(m.analysis.report.as_ref().unwrap(), &good),
        "the last good report is kept"
    );
    // Fix it: delete "x" (cursor is at the end; go back over ", 0.2, 0.3" = 10 chars then delete).
    for _ in 0..10 {
        key(&mut m, KeyCode::Left, KeyModifiers::NONE);
    }
    key(&mut m, KeyCode::Backspace, KeyModifiers::NONE);
    settle(&mut m);
    assert!(
        m.analysis.parse_error.is_none(),
        "{:?}",
        m.analysis.parse_error
    );
    assert_eq!(m.analysis.report.as_ref().unwrap().shape, (3, 4));
    assert!(m.dirty());
}

#[test]
fn toggles_change_the_configuration_and_recompute() {
    let mut m = model();
    let g0 = m.analysis.generation;
    act(&mut m, Action::Change(Setting::Bits, Direction::Forward));
    assert_eq!(m.config.bits, 5);
    assert_eq!(m.analysis.report.as_ref().unwrap().config.bits, 5);
    assert!(m.analysis.generation > g0);
    act(&mut m, Action::Change(Setting::Scheme, Direction::Forward));
    assert_eq!(m.config.scheme, Scheme::Asymmetric);
    act(&mut m, Action::Change(Setting::Signed, Direction::Forward));
    assert!(!m.config.signed);
    for _ in 0..20 {
        act(&mut m, Action::Change(Setting::Bits, Direction::Back));
    }
    assert_eq!(m.config.bits, 1, "bits stop at 1");
    assert_eq!(m.config.code_range(), (0, 1), "unsigned 1-bit");
    assert!(
        m.analysis
            .report
            .as_ref()
            .unwrap()
            .channels
            .iter()
            .all(|c| c.levels_available == 2)
    );
}

#[test]
fn presets_cycle_and_clear_overrides() {
    let mut m = model();
    act(
        &mut m,
        Action::Change(Setting::Granularity, Direction::Forward),
    );
    assert!(!m.overrides.is_empty());
    act(&mut m, Action::Change(Setting::Preset, Direction::Forward));
    assert_eq!(m.preset, "calculator");
    assert!(m.overrides.is_empty());
    for _ in 0..7 {
        act(&mut m, Action::Change(Setting::Preset, Direction::Forward));
    }
    assert_eq!(m.preset, "q8_0");
    assert_eq!(m.config.granularity, Granularity::Group(32));
    assert_eq!(m.group_size, 32);
}

#[test]
fn settings_pane_changes_the_selected_setting_with_arrows() {
    let mut m = model();
    act(&mut m, Action::FocusNext);
    assert_eq!(m.focus, Focus::Settings);
    let bits = SETTINGS.iter().position(|s| *s == Setting::Bits).unwrap();
    for _ in 0..bits {
        key(&mut m, KeyCode::Down, KeyModifiers::NONE);
    }
    assert_eq!(m.selected_setting, bits);
    key(&mut m, KeyCode::Right, KeyModifiers::NONE);
    assert_eq!(m.config.bits, 5);
    key(&mut m, KeyCode::Left, KeyModifiers::NONE);
    key(&mut m, KeyCode::Left, KeyModifiers::NONE);
    assert_eq!(m.config.bits, 3);
}

#[test]
fn focus_cycles_and_plain_letters_only_act_outside_the_editor() {
    let mut m = model();
    key(&mut m, KeyCode::Char('g'), KeyModifiers::NONE);
    assert_eq!(
        m.config.granularity,
        Granularity::Tensor,
        "typed into the editor instead"
    );
    assert!(m.text().starts_with('g'));
    key(&mut m, KeyCode::Tab, KeyModifiers::NONE);
    key(&mut m, KeyCode::Tab, KeyModifiers::NONE);
    assert_eq!(m.focus, Focus::Utilization);
    key(&mut m, KeyCode::Char('g'), KeyModifiers::NONE);
    key(&mut m, KeyCode::Char('j'), KeyModifiers::NONE);
    assert_eq!(m.selected_channel, 1);
    key(&mut m, KeyCode::Char('j'), KeyModifiers::NONE);
    assert_eq!(m.selected_channel, 1, "selection stops at the last channel");
    key(&mut m, KeyCode::BackTab, KeyModifiers::SHIFT);
    assert_eq!(m.focus, Focus::Settings);
}

#[test]
fn worst_channel_means_collapsed_first_then_the_lowest_sqnr() {
    let mut m = model();
    // Per tensor the example's quiet row collapses: it is the worst.
    act(&mut m, Action::WorstChannel);
    assert_eq!(m.selected_channel, 0);
    assert!(
        m.status.as_deref().unwrap_or("").contains("collapsed"),
        "{:?}",
        m.status
    );
    // A quiet row that collapses beside a loud one with a far larger MAE.
    let mut m = Model::with_text(
        "loud: 3.0, -2.9, 1.1, -0.2\nquiet: 0.01, -0.012, 0.011, -0.009\n",
        None,
    );
    settle(&mut m);
    let r = m.analysis.report.clone().unwrap();
    assert!(r.channels[1].collapsed);
    assert!(r.channels[0].metrics.mae > r.channels[1].metrics.mae);
    act(&mut m, Action::WorstChannel);
    assert_eq!(m.selected_channel, 1, "collapsed comes before a larger MAE");
    // Per channel nothing collapses: the lowest SQNR wins.
    act(
        &mut m,
        Action::Change(Setting::Granularity, Direction::Forward),
    );
    act(&mut m, Action::WorstChannel);
    let r = m.analysis.report.as_ref().unwrap();
    let sqnr = |i: usize| r.channels[i].metrics.sqnr_db.unwrap();
    let worst = m.selected_channel;
    assert!((0..2).all(|i| sqnr(worst) <= sqnr(i)));
    assert!(
        m.status.as_deref().unwrap_or("").contains("SQNR"),
        "{:?}",
        m.status
    );
}

#[test]
fn alt_w_from_the_editor_keeps_the_focus_and_w_keeps_the_filter() {
    let mut m = model();
    assert_eq!(m.focus, Focus::Editor);
    key(&mut m, KeyCode::Char('w'), KeyModifiers::ALT);
    assert_eq!(m.selected_channel, 0);
    assert_eq!(
        m.focus,
        Focus::Editor,
        "the next letter typed still goes to the text"
    );
    let before = m.text();
    key(&mut m, KeyCode::Char('7'), KeyModifiers::NONE);
    assert_eq!(m.text().len(), before.len() + 1);
    // With the collapsed-only filter on, w picks among the listed channels and the filter
    // stays on.
    act(&mut m, Action::FocusNext);
    act(&mut m, Action::FocusNext);
    act(&mut m, Action::ToggleCollapsedOnly);
    assert!(m.collapsed_only);
    act(&mut m, Action::WorstChannel);
    assert!(m.collapsed_only);
    assert!(m.order.contains(&m.selected_channel));
}

#[test]
fn quitting_with_unsaved_changes_asks_first() {
    let mut m = model();
    act(&mut m, Action::Quit);
    assert!(m.quit, "nothing to lose: quits at once");
    let mut m = model();
    type_text(&mut m, "#");
    key(&mut m, KeyCode::Char('q'), KeyModifiers::CONTROL);
    assert!(!m.quit);
    assert!(matches!(m.overlay, Some(Overlay::ConfirmQuit)));
    key(&mut m, KeyCode::Char('n'), KeyModifiers::NONE);
    assert!(m.overlay.is_none() && !m.quit);
    key(&mut m, KeyCode::Char('c'), KeyModifiers::CONTROL);
    key(&mut m, KeyCode::Char('y'), KeyModifiers::NONE);
    assert!(m.quit);
}

#[test]
fn saving_without_a_name_asks_for_one_then_requests_the_write() {
    let mut m = model();
    type_text(&mut m, "#");
    key(&mut m, KeyCode::Char('s'), KeyModifiers::CONTROL);
    assert!(matches!(m.overlay, Some(Overlay::SaveAs(_))));
    // The prompt starts with a suggestion, selected: typing replaces it.
    key(&mut m, KeyCode::Char('u'), KeyModifiers::NONE);
    key(&mut m, KeyCode::Enter, KeyModifiers::NONE);
    let save = m.effects.iter().find_map(|e| match e {
        Effect::Save { path, text } => Some((path.clone(), text.clone())),
        Effect::Analyse
        | Effect::LoadTensor { .. }
        | Effect::ListTensors { .. }
        | Effect::Export { .. }
        | Effect::WriteDequantized { .. }
        | Effect::LoadImportance { .. } => None,
    });
    let (path, text) = save.expect("a save effect");
    assert_eq!(path.to_string_lossy(), "u");
    assert!(text.starts_with('#'));
    update(&mut m, Message::Saved(Ok(path.clone())));
    assert!(!m.dirty());
    assert_eq!(m.path(), Some(&path));
}

#[test]
fn a_huge_paste_is_refused_and_the_text_kept() {
    let mut m = model();
    let before = m.text();
    let huge = "1, ".repeat(30_000_000);
    update(&mut m, Message::Paste(huge));
    assert_eq!(m.text(), before);
    assert!(
        m.status.as_deref().unwrap_or("").contains("paste refused"),
        "{:?}",
        m.status
    );
}

#[test]
fn a_paste_goes_into_the_editor_and_is_analysed() {
    let mut m = model();
    key(&mut m, KeyCode::Home, KeyModifiers::CONTROL);
    update(&mut m, Message::Paste("extra: 1, 2, 3, 4\r\n".into()));
    settle(&mut m);
    assert_eq!(m.analysis.report.as_ref().unwrap().shape, (3, 4));
    assert_eq!(
        m.analysis.report.as_ref().unwrap().channels[0]
            .label
            .as_deref(),
        Some("extra")
    );
}

#[test]
fn results_of_older_requests_are_ignored() {
    let mut m = model();
    act(&mut m, Action::Change(Setting::Bits, Direction::Forward));
    update(
        &mut m,
        Message::Action(Action::Change(Setting::Bits, Direction::Forward)),
    );
    assert!(m.effects.iter().any(|e| matches!(e, Effect::Analyse)));
    // A stale generation's result must not replace the newer configuration's.
    let mut old = m.job();
    old.generation = 1;
    let mut stale_result = None;
    quantscope::app::worker::compute(&old, |r| {
        stale_result = Some(r);
        false
    });
    let pending_generation = m.analysis.generation;
    update(&mut m, Message::Analysed(stale_result.expect("a result")));
    assert_eq!(m.analysis.generation, pending_generation);
    assert_eq!(
        m.analysis.report.as_ref().unwrap().config.bits,
        5,
        "older result ignored"
    );
    settle(&mut m);
    assert_eq!(m.analysis.report.as_ref().unwrap().config.bits, 6);
}

#[test]
fn help_opens_and_closes() {
    let mut m = model();
    key(&mut m, KeyCode::F(1), KeyModifiers::NONE);
    assert!(matches!(m.overlay, Some(Overlay::Help)));
    key(&mut m, KeyCode::Down, KeyModifiers::NONE);
    assert_eq!(m.help_scroll, 1);
    key(&mut m, KeyCode::Esc, KeyModifiers::NONE);
    assert!(m.overlay.is_none());
}

#[test]
fn many_channels_sort_filter_and_jump_to_the_worst() {
    // Sixty rows: every tenth is quiet and collapses beside the loud ones under per-tensor.
    use std::fmt::Write as _;
    let mut text = String::new();
    for i in 0..60 {
        let s = if i % 10 == 3 {
            0.001
        } else {
            1.0 + f64::from(i) / 10.0
        };
        let _ = writeln!(text, "r{i}: {}, {}, {}, {}", s, -s / 2.0, s / 3.0, -s);
    }
    let mut m = Model::with_text(&text, None);
    settle(&mut m);
    assert_eq!(m.order.len(), 60);
    act(&mut m, Action::FocusNext);
    act(&mut m, Action::FocusNext);
    assert_eq!(m.focus, Focus::Utilization);
    act(&mut m, Action::ToggleCollapsedOnly);
    assert_eq!(m.order, vec![3, 13, 23, 33, 43, 53]);
    assert_eq!(
        m.selected_channel, 3,
        "selection moves into the filtered list"
    );
    act(&mut m, Action::Down);
    assert_eq!(m.selected_channel, 13, "moves along the filtered list");
    act(&mut m, Action::Last);
    assert_eq!(m.selected_channel, 53);
    act(&mut m, Action::ToggleCollapsedOnly);
    act(&mut m, Action::CycleSort);
    let r = m.analysis.report.clone().unwrap();
    assert!(
        m.order
            .windows(2)
            .all(|w| r.channels[w[0]].metrics.mae >= r.channels[w[1]].metrics.mae)
    );
    act(&mut m, Action::First);
    assert_eq!(m.selected_channel, m.order[0]);
    act(&mut m, Action::WorstChannel);
    assert_eq!(Some(m.selected_channel), r.worst_channel());
    // A new report (per channel) keeps the chosen order and refreshes it.
    act(
        &mut m,
        Action::Change(Setting::Granularity, Direction::Forward),
    );
    let r = m.analysis.report.clone().unwrap();
    assert!(
        m.order
            .windows(2)
            .all(|w| r.channels[w[0]].metrics.mae >= r.channels[w[1]].metrics.mae)
    );
    act(&mut m, Action::ToggleCollapsedOnly);
    assert!(m.order.is_empty());
    assert!(
        m.status
            .as_deref()
            .unwrap_or("")
            .contains("no channel collapses"),
        "{:?}",
        m.status
    );
}

#[test]
fn a_loaded_tensor_is_read_only_and_its_channels_can_be_copied_into_the_editor() {
    let values = ndarray::Array2::from_shape_fn((100, 8), |(r, c)| {
        (r as f32 + 1.0) * 0.01 * (c as f32 - 3.5)
    });
    let mut m = Model::with_tensor(quantscope::app::LoadedTensor {
        name: "w.npy".into(),
        dtype: "f32".into(),
        matrix: quantscope::core::Matrix::new(values).unwrap(),
        stored: None,
    });
    settle(&mut m);
    assert_eq!(m.focus, Focus::Utilization);
    assert_eq!(m.analysis.report.as_ref().unwrap().shape, (100, 8));
    // Typing does nothing to a read-only tensor; saving says so.
    update(&mut m, Message::Paste("1, 2".into()));
    assert_eq!(m.analysis.report.as_ref().unwrap().shape, (100, 8));
    act(&mut m, Action::Save);
    assert!(m.status.as_deref().unwrap_or("").contains("read-only"));
    for _ in 0..5 {
        act(&mut m, Action::PageDown);
    }
    assert_eq!(m.selected_channel, 50);
    act(&mut m, Action::CopyToEditor);
    assert_eq!(m.focus, Focus::Editor);
    assert!(m.dirty());
    let r = m.analysis.report.as_ref().unwrap();
    assert_eq!(r.shape, (32, 8));
    assert_eq!(r.channels[0].label.as_deref(), Some("ch50"));
    assert!(
        m.text()
            .starts_with("# 32 of 100 channels of w.npy, from channel 50")
    );
    // The copy near the end is bounded by the channels left.
    let mut m = Model::with_tensor(quantscope::app::LoadedTensor {
        name: "w.npy".into(),
        dtype: "f32".into(),
        matrix: quantscope::core::Matrix::new(ndarray::Array2::zeros((3, 2))).unwrap(),
        stored: None,
    });
    settle(&mut m);
    act(&mut m, Action::CopyToEditor);
    assert_eq!(m.analysis.report.as_ref().unwrap().shape, (3, 2));
}

#[test]
fn the_scenario_picker_loads_text_and_suggested_settings_and_asks_before_replacing() {
    let mut m = model();
    key(&mut m, KeyCode::Char('l'), KeyModifiers::ALT);
    assert!(matches!(
        m.overlay,
        Some(Overlay::Scenarios { selected: 0 })
    ));
    let names = quantscope::teach::assets::scenario_names();
    let outlier = names
        .iter()
        .position(|n| *n == "outlier")
        .expect("an outlier scenario");
    for _ in 0..outlier {
        key(&mut m, KeyCode::Down, KeyModifiers::NONE);
    }
    key(&mut m, KeyCode::Enter, KeyModifiers::NONE);
    assert!(m.overlay.is_none());
    let scenario = quantscope::teach::assets::scenario("outlier").unwrap();
    assert_eq!(m.text().trim_end(), scenario.text.trim_end());
    // The cursor waits on a line of its own after the data.
    assert_eq!(m.editor.cursor().row, m.editor.lines().len() - 1);
    assert!(m.editor.line(m.editor.cursor().row).is_empty());
    assert_eq!(m.config, scenario.config().unwrap());
    assert!(
        m.caption
            .as_deref()
            .unwrap_or("")
            .starts_with(&scenario.title)
    );
    assert!(!m.dirty());
    // Esc clears the caption.
    key(&mut m, KeyCode::Esc, KeyModifiers::NONE);
    assert!(m.caption.is_none());
    // With unsaved text, loading asks first; n keeps the text.
    type_text(&mut m, "#");
    let edited = m.text();
    key(&mut m, KeyCode::Char('l'), KeyModifiers::ALT);
    key(&mut m, KeyCode::Enter, KeyModifiers::NONE);
    assert!(matches!(m.overlay, Some(Overlay::ConfirmScenario(0))));
    key(&mut m, KeyCode::Char('n'), KeyModifiers::NONE);
    assert_eq!(m.text(), edited);
    key(&mut m, KeyCode::Char('l'), KeyModifiers::ALT);
    key(&mut m, KeyCode::Enter, KeyModifiers::NONE);
    key(&mut m, KeyCode::Char('y'), KeyModifiers::NONE);
    assert!(m.text().contains("quiet"));
    assert!(!m.dirty());
}

#[test]
fn the_worked_arithmetic_follows_the_selected_channel() {
    let mut m = model();
    key(&mut m, KeyCode::Char('i'), KeyModifiers::ALT);
    assert!(m.show_explain && m.show_detail);
    let e = m.explanation.clone().expect("an explanation");
    assert_eq!(e.row, 0);
    assert_eq!(
        e.values.iter().map(|v| v.code).collect::<Vec<_>>(),
        vec![0, 0, 0, 0]
    );
    act(&mut m, Action::FocusNext);
    act(&mut m, Action::FocusNext);
    act(&mut m, Action::Down);
    assert_eq!(m.explanation.as_ref().unwrap().row, 1);
    act(
        &mut m,
        Action::Change(Setting::Granularity, Direction::Forward),
    );
    assert_eq!(m.explanation.as_ref().unwrap().blocks.len(), 1);
    act(&mut m, Action::Up);
    assert_eq!(
        m.explanation
            .as_ref()
            .unwrap()
            .values
            .iter()
            .map(|v| v.code)
            .collect::<Vec<_>>(),
        vec![2, -4, 6, -7]
    );
    act(&mut m, Action::ToggleExplain);
    assert!(m.explanation.is_none() && !m.show_detail);
}

fn answer(m: &mut Model, text: &str) {
    update(m, Message::Paste(text.into()));
    key(m, KeyCode::Enter, KeyModifiers::NONE);
}

#[test]
fn practice_plays_the_apply_now_exercise_through() {
    use quantscope::teach::exercise::{Expected, Outcome};
    let mut m = model();
    key(&mut m, KeyCode::Char('m'), KeyModifiers::ALT);
    let p = m.practice.as_ref().expect("practice mode");
    assert_eq!(p.session.exercise().name, "per-tensor-vs-per-channel");
    let steps = p.session.len();
    assert_eq!(p.session.max_score(), 2 * u32::try_from(steps).unwrap());

    // Step 1, the shared scale: a wrong answer shows the hint and scores nothing yet.
    answer(&mut m, "0.5");
    let p = m.practice.as_ref().unwrap();
    assert!(p.session.hint().is_some());
    assert_eq!(p.session.score(), 0);
    // The right answer (3.10 / 7) after a miss is worth one point.
    answer(&mut m, "0.442857");
    let p = m.practice.as_ref().unwrap();
    assert_eq!(p.session.progress().outcome, Outcome::Solved { points: 1 });
    assert_eq!(p.session.score(), 1);
    assert!(p.worked.is_some() || p.session.step().row.is_none());

    // Every other step answered right at the first try, from the core's own answers.
    for _ in 1..steps {
        key(&mut m, KeyCode::PageDown, KeyModifiers::NONE);
        let expected = m
            .practice
            .as_ref()
            .unwrap()
            .session
            .prepared()
            .expected
            .clone();
        let text = match expected {
            Expected::Number(x) => format!("{x}"),
            Expected::Whole(n) => n.to_string(),
            Expected::Codes(c) => c
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            Expected::Numbers(xs) => xs
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            Expected::Choice { correct, .. } => (correct + 1).to_string(),
        };
        answer(&mut m, &text);
        assert!(
            m.practice.as_ref().unwrap().session.progress().done(),
            "step not solved by {text}"
        );
    }
    let p = m.practice.as_ref().unwrap();
    assert!(p.session.finished());
    assert_eq!(p.session.score(), p.session.max_score() - 1);
    // Reveal on a solved step changes nothing; F6 moves on to the next exercise.
    key(&mut m, KeyCode::F(6), KeyModifiers::NONE);
    assert_eq!(m.practice.as_ref().unwrap().index, 1);
    // Esc leaves practice mode; the explorer is as it was.
    key(&mut m, KeyCode::Esc, KeyModifiers::NONE);
    assert!(m.practice.is_none());
    assert!(m.analysis.report.is_some());
}

#[test]
fn practice_reveal_and_the_recall_cards() {
    let mut m = model();
    act(&mut m, Action::Practice);
    key(&mut m, KeyCode::F(3), KeyModifiers::NONE);
    let p = m.practice.as_ref().unwrap();
    assert_eq!(
        p.session.progress().outcome,
        quantscope::teach::exercise::Outcome::Revealed
    );
    assert_eq!(p.session.score(), 0);
    key(&mut m, KeyCode::F(7), KeyModifiers::NONE);
    let deck = m
        .practice
        .as_ref()
        .unwrap()
        .deck
        .as_ref()
        .expect("the cards");
    assert!(!deck.revealed && deck.index == 0 && deck.cards.len() >= 4);
    key(&mut m, KeyCode::Char(' '), KeyModifiers::NONE);
    assert!(m.practice.as_ref().unwrap().deck.as_ref().unwrap().revealed);
    key(&mut m, KeyCode::Right, KeyModifiers::NONE);
    let deck = m.practice.as_ref().unwrap().deck.as_ref().unwrap();
    assert!(deck.index == 1 && !deck.revealed);
    key(&mut m, KeyCode::Esc, KeyModifiers::NONE);
    assert!(
        m.practice.as_ref().unwrap().deck.is_none(),
        "Esc goes back to the exercise first"
    );
}

#[test]
fn practice_uses_the_learners_own_rows_when_the_exercise_asks_for_them() {
    let mut m = Model::with_text(
        "small: 0.01, -0.02, 0.03, -0.04\nbig: 1.5, -2.5, 3.5, -4.5\n",
        None,
    );
    settle(&mut m);
    act(&mut m, Action::Practice);
    act(&mut m, Action::NextExercise);
    let p = m.practice.as_ref().unwrap();
    assert_eq!(p.session.exercise().name, "apply-now-generated");
    assert!(p.data_note.contains("your rows"), "{}", p.data_note);
    assert_eq!(p.session.matrix().shape(), (2, 4));
}

#[test]
fn the_demo_steps_forward_and_back_and_replays_the_same_screens() {
    let script = quantscope::teach::script::demo_script("quiet-row").unwrap();
    let n = script.steps.len();
    let mut m = Model::with_text("", None);
    m.demo = Some(quantscope::app::demo::Demo::new(script));
    key(&mut m, KeyCode::Char(' '), KeyModifiers::NONE);
    assert_eq!(m.demo.as_ref().unwrap().shown, 1);
    assert!(m.text().contains("quiet"));
    let first_caption = m.caption.clone();
    assert!(first_caption.is_some());
    for _ in 1..n {
        key(&mut m, KeyCode::Right, KeyModifiers::NONE);
    }
    assert_eq!(m.demo.as_ref().unwrap().shown, n);
    let last = (m.config, m.caption.clone(), m.focus);
    key(&mut m, KeyCode::Right, KeyModifiers::NONE);
    assert_eq!(m.demo.as_ref().unwrap().shown, n, "stops at the end");
    for _ in 1..n {
        key(&mut m, KeyCode::Left, KeyModifiers::NONE);
    }
    assert_eq!(m.demo.as_ref().unwrap().shown, 1);
    assert_eq!(
        m.caption, first_caption,
        "going back replays from the start"
    );
    assert_eq!(m.config.granularity, Granularity::Tensor);
    for _ in 1..n {
        key(&mut m, KeyCode::Char(' '), KeyModifiers::NONE);
    }
    assert_eq!((m.config, m.caption.clone(), m.focus), last);
    assert!(!m.dirty(), "a demo leaves nothing unsaved");
    key(&mut m, KeyCode::Esc, KeyModifiers::NONE);
    assert!(m.demo.is_none());
}

/// A .safetensors file with two F32 matrices.
fn two_tensor_file() -> files::TempFile {
    let values: Vec<f32> = (0..12u8).map(|i| f32::from(i) * 0.1 - 0.5).collect();
    let bytes = files::safetensors_bytes(&[
        (
            "attn.q.weight",
            "F32",
            &[2, 3],
            files::f32_bytes(&values[..6]),
        ),
        (
            "mlp.up.weight",
            "F32",
            &[3, 2],
            files::f32_bytes(&values[6..]),
        ),
    ]);
    files::temp_file("two.safetensors", &bytes)
}

#[test]
fn the_tensor_picker_filters_by_typing_and_opens_the_chosen_tensor() {
    let path = two_tensor_file();
    let file = quantscope::io::checkpoint::Checkpoint::open(&path).unwrap();
    let tensors: Vec<_> = file
        .entries()
        .into_iter()
        .filter(|t| t.not_loadable().is_none())
        .collect();
    let mut m = Model::with_text("", None);
    m.overlay = Some(Overlay::tensor_picker(path.to_path_buf(), tensors));
    // Typing filters; letters are not actions here.
    type_text(&mut m, "mlp");
    let Some(Overlay::Tensors(p)) = &m.overlay else {
        panic!("the picker closed")
    };
    assert_eq!(
        p.visible()
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>(),
        vec!["mlp.up.weight"]
    );
    key(&mut m, KeyCode::Enter, KeyModifiers::NONE);
    assert!(m.overlay.is_none());
    let r = m.analysis.report.as_ref().expect("a report of the tensor");
    assert_eq!(r.shape, (3, 2));
    assert!(
        matches!(&m.source, quantscope::app::Source::Tensor { name, .. } if name.ends_with("mlp.up.weight"))
    );
    // The export proposes the tensor's name as a file name.
    act(&mut m, Action::Export);
    let Some(Overlay::Export(prompt)) = &m.overlay else {
        panic!("no export prompt")
    };
    assert_eq!(prompt.lines()[0], "mlp.up.weight-report.html");
    act(&mut m, Action::Close);
    // t reopens the picker for the same file.
    act(&mut m, Action::Tensors);
    assert!(matches!(m.overlay, Some(Overlay::Tensors(_))));
    key(&mut m, KeyCode::Esc, KeyModifiers::NONE);
    assert!(m.overlay.is_none());
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn focus_stays_on_a_pane_that_is_on_screen_when_the_detail_covers_the_results() {
    let mut m = model();
    update(&mut m, Message::Resized(80, 24));
    act(&mut m, Action::FocusNext);
    act(&mut m, Action::FocusNext);
    assert_eq!(m.focus, Focus::Utilization);
    for toggle in [Action::ToggleDetail, Action::ToggleExplain] {
        m.focus = Focus::Utilization;
        act(&mut m, toggle);
        assert_eq!(
            m.focus,
            Focus::Detail,
            "{toggle:?}: focus moves to the shown pane"
        );
        // Tab visits only the panes on screen.
        let mut seen = Vec::new();
        for _ in 0..4 {
            act(&mut m, Action::FocusNext);
            seen.push(m.focus);
        }
        assert!(
            seen.iter()
                .all(|f| matches!(f, Focus::Editor | Focus::Settings | Focus::Detail)),
            "{toggle:?}: {seen:?}"
        );
        act(&mut m, toggle);
        assert!(m.focus_order().contains(&m.focus));
    }
    // On a wide screen the detail has a column of its own and the results stay.
    update(&mut m, Message::Resized(160, 40));
    act(&mut m, Action::ToggleDetail);
    assert!(m.focus_order().contains(&Focus::Utilization));
    assert!(m.focus_order().contains(&Focus::Detail));
}

#[test]
fn a_too_small_terminal_ignores_editing_keys_but_quits_and_helps() {
    let mut m = model();
    update(&mut m, Message::Resized(40, 10));
    let before = m.text();
    type_text(&mut m, "123");
    key(&mut m, KeyCode::Backspace, KeyModifiers::NONE);
    key(&mut m, KeyCode::F(7), KeyModifiers::NONE);
    assert_eq!(m.text(), before, "nothing edited unseen");
    assert_eq!(m.config.granularity, Granularity::Tensor);
    key(&mut m, KeyCode::F(1), KeyModifiers::NONE);
    assert!(matches!(m.overlay, Some(Overlay::Help)));
    key(&mut m, KeyCode::Esc, KeyModifiers::NONE);
    assert!(m.overlay.is_none());
    key(&mut m, KeyCode::Char('q'), KeyModifiers::CONTROL);
    assert!(m.quit);
}

#[test]
fn the_errors_pane_switches_between_mae_and_rmse() {
    let mut m = model();
    assert_eq!(m.error_metric, quantscope::app::ErrorMetric::Mae);
    key(&mut m, KeyCode::Char('v'), KeyModifiers::ALT);
    assert_eq!(m.error_metric, quantscope::app::ErrorMetric::Rmse);
    assert_eq!(m.focus, Focus::Editor);
    act(&mut m, Action::ToggleErrorMetric);
    assert_eq!(m.error_metric, quantscope::app::ErrorMetric::Mae);
}

#[test]
fn settings_are_kept_in_the_text_on_request_and_read_back_from_it() {
    let text = "# my rows\nq: 0.05, -0.08, 0.12, -0.15\nl: 2.21, -3.10, 1.77, -2.66\n";
    let mut m = Model::with_text(text, None);
    settle(&mut m);
    act(
        &mut m,
        Action::Change(Setting::Granularity, Direction::Forward),
    );
    act(&mut m, Action::Change(Setting::Bits, Direction::Forward));
    act(&mut m, Action::KeepSettings);
    let kept = m.text();
    assert!(kept.starts_with("#! preset: lesson\n"), "{kept}");
    assert!(kept.contains("#! bits: 5\n"), "{kept}");
    assert!(kept.contains("#! granularity: channel\n"), "{kept}");
    assert!(kept.ends_with(text), "the data lines are untouched: {kept}");
    assert!(m.dirty());
    // Keeping again replaces the lines rather than adding more.
    act(&mut m, Action::Change(Setting::Bits, Direction::Back));
    act(&mut m, Action::KeepSettings);
    assert_eq!(m.text().matches("#! preset").count(), 1);
    assert!(m.text().contains("#! bits: 4\n"), "{}", m.text());
    assert!(!m.text().contains("#! bits: 5"), "{}", m.text());
    // Undo takes the header back in one step.
    key(&mut m, KeyCode::Char('z'), KeyModifiers::CONTROL);
    assert_eq!(m.text(), kept);
    // A file opened with such lines starts with those settings.
    let mut reopened = Model::with_text(&kept, None);
    reopened.apply_text_header("rows.txt");
    settle(&mut reopened);
    assert_eq!(reopened.config.bits, 5);
    assert_eq!(reopened.config.granularity, Granularity::Channel);
    assert!(
        reopened
            .status
            .as_deref()
            .unwrap_or("")
            .contains("#! lines")
    );
    // A bad line is reported and the defaults stay.
    let mut bad = Model::with_text("#! bits: 99\n1, 2\n", None);
    bad.apply_text_header("bad.txt");
    assert_eq!(bad.config.bits, 4);
    assert!(
        bad.status.as_deref().unwrap_or("").contains("bits must be"),
        "{:?}",
        bad.status
    );
}

#[test]
fn a_failed_save_asks_for_another_name_and_undo_back_to_the_saved_text_clears_the_mark() {
    let dir = files::temp_dir();
    let mut m = Model::with_text(
        "1, 2\n",
        Some(dir.path().join("missing-folder").join("a.txt")),
    );
    settle(&mut m);
    type_text(&mut m, "3");
    assert!(m.dirty());
    key(&mut m, KeyCode::Char('s'), KeyModifiers::CONTROL);
    let Some(Effect::Save { path, .. }) = m
        .effects
        .iter()
        .find(|e| matches!(e, Effect::Save { .. }))
        .cloned()
    else {
        panic!("no save requested");
    };
    update(
        &mut m,
        Message::Saved(Err((path.clone(), "No such file or directory".into()))),
    );
    assert!(
        matches!(m.overlay, Some(Overlay::SaveAs(_))),
        "asks for another name"
    );
    assert!(m.status.as_deref().unwrap_or("").contains("not saved"));
    key(&mut m, KeyCode::Esc, KeyModifiers::NONE);
    // Ctrl-O is Save As in any case.
    key(&mut m, KeyCode::Char('o'), KeyModifiers::CONTROL);
    assert!(matches!(m.overlay, Some(Overlay::SaveAs(_))));
    key(&mut m, KeyCode::Esc, KeyModifiers::NONE);
    // After a save, undoing back to the saved text clears the mark.
    update(&mut m, Message::Saved(Ok(dir.path().join("a.txt"))));
    assert!(!m.dirty());
    type_text(&mut m, "4");
    assert!(m.dirty());
    key(&mut m, KeyCode::Char('z'), KeyModifiers::CONTROL);
    assert!(!m.dirty(), "{}", m.text());
}

#[test]
fn a_setting_without_effect_says_so() {
    let mut m = model();
    key(&mut m, KeyCode::F(4), KeyModifiers::NONE); // unsigned
    assert!(!m.config.signed);
    key(&mut m, KeyCode::F(6), KeyModifiers::NONE); // full <-> narrow
    let status = m.status.clone().unwrap_or_default();
    assert!(status.contains("no effect"), "{status}");
}

#[test]
fn practice_keeps_progress_across_exercises_and_leaving() {
    let mut m = model();
    key(&mut m, KeyCode::Char('m'), KeyModifiers::ALT);
    assert!(m.practice.is_some());
    type_text(&mut m, "3.1/7");
    key(&mut m, KeyCode::Enter, KeyModifiers::NONE);
    let score = |m: &Model| m.practice.as_ref().unwrap().session.score();
    assert_eq!(score(&m), 2);
    // Alt-n: the next step, without F-keys.
    key(&mut m, KeyCode::Char('n'), KeyModifiers::ALT);
    assert_eq!(m.practice.as_ref().unwrap().session.current(), 1);
    // Another exercise (Alt-x) and back: the first keeps its step and score.
    let count = m.practice.as_ref().unwrap().exercises.len();
    for _ in 0..count {
        key(&mut m, KeyCode::Char('x'), KeyModifiers::ALT);
    }
    let p = m.practice.as_ref().unwrap();
    assert_eq!(p.index, 0);
    assert_eq!((p.session.current(), p.session.score()), (1, 2));
    // Leave and come back: the same.
    key(&mut m, KeyCode::Esc, KeyModifiers::NONE);
    assert!(m.practice.is_none());
    key(&mut m, KeyCode::Char('m'), KeyModifiers::ALT);
    let p = m.practice.as_ref().expect("practice again");
    assert_eq!((p.session.current(), p.session.score()), (1, 2));
    assert_eq!(p.total_score().0, 2);
    // Alt-h shows the hint, Alt-r reveals.
    key(&mut m, KeyCode::Char('h'), KeyModifiers::ALT);
    assert!(m.practice.as_ref().unwrap().session.hint().is_some());
    key(&mut m, KeyCode::Char('r'), KeyModifiers::ALT);
    assert!(m.practice.as_ref().unwrap().session.progress().done());
}

#[test]
fn the_picker_lists_integer_tensors_greyed_and_a_loaded_f16_tensor_says_so() {
    let f16s: Vec<u8> = [1.0f32, -0.5, 0.25, 2.0]
        .iter()
        .flat_map(|&v| half::f16::from_f32(v).to_le_bytes())
        .collect();
    let path = files::temp_file(
        "mixed.safetensors",
        &files::safetensors_bytes(&[
            ("ids", "I64", &[2], vec![0; 16]),
            ("w", "F16", &[2, 2], f16s),
        ]),
    );
    let file = quantscope::io::checkpoint::Checkpoint::open(&path).unwrap();
    let mut m = Model::with_text("", None);
    m.overlay = Some(Overlay::tensor_picker(path.to_path_buf(), file.entries()));
    let Some(Overlay::Tensors(p)) = &m.overlay else {
        panic!()
    };
    assert_eq!(p.visible().len(), 2, "the integer tensor is listed");
    // The picker opens on the matrix; Enter on the integer tensor says why it cannot be
    // opened and keeps the picker.
    assert_eq!(p.visible()[p.selected].name, "w");
    key(&mut m, KeyCode::Up, KeyModifiers::NONE);
    key(&mut m, KeyCode::Enter, KeyModifiers::NONE);
    assert!(matches!(m.overlay, Some(Overlay::Tensors(_))));
    assert!(
        m.status
            .as_deref()
            .unwrap_or("")
            .contains("not a floating tensor"),
        "{:?}",
        m.status
    );
    // The F16 one opens and keeps its stored type.
    key(&mut m, KeyCode::Down, KeyModifiers::NONE);
    key(&mut m, KeyCode::Enter, KeyModifiers::NONE);
    match &m.source {
        quantscope::app::Source::Tensor { dtype, .. } => assert_eq!(dtype, "f16"),
        quantscope::app::Source::Text { .. } => panic!("not loaded: {:?}", m.status),
    }
}

#[test]
fn only_the_newest_tensor_load_is_shown_and_the_picker_reopens_through_the_runtime() {
    let path = two_tensor_file();
    let mut m = Model::with_text("", None);
    // Two loads asked for; the older one's result arrives last and is dropped.
    m.load_request = 2;
    let older = quantscope::runtime::files::load_tensor(&path, "attn.q.weight").unwrap();
    let newer = quantscope::runtime::files::load_tensor(&path, "mlp.up.weight").unwrap();
    update(
        &mut m,
        Message::TensorLoaded {
            request: 2,
            result: Ok(newer),
        },
    );
    update(
        &mut m,
        Message::TensorLoaded {
            request: 1,
            result: Ok(older),
        },
    );
    assert!(
        matches!(&m.source, quantscope::app::Source::Tensor { name, .. } if name.ends_with("mlp.up.weight"))
    );
    // The picker is reopened by a listing the runtime makes, not by update reading the file.
    m.tensor_file = Some(path.to_path_buf());
    update(&mut m, Message::Action(Action::Tensors));
    assert!(m.overlay.is_none(), "update itself reads nothing");
    assert!(
        m.effects
            .iter()
            .any(|e| matches!(e, Effect::ListTensors { .. }))
    );
    settle(&mut m);
    assert!(matches!(m.overlay, Some(Overlay::Tensors(_))));
}

/// Opens the export prompt and answers it with `name` (the proposed name replaced).
fn export_as(m: &mut Model, name: &str) {
    act(m, Action::Export);
    assert!(
        matches!(m.overlay, Some(Overlay::Export(_))),
        "{:?}",
        m.status
    );
    m.overlay = Some(Overlay::Export(Box::new(ratatui_textarea::TextArea::from(
        [name.to_string()],
    ))));
    act(m, Action::Yes);
}

#[test]
fn alt_shift_e_exports_the_report_with_the_comparison_as_html_or_pdf() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = model();
    // The proposed name says what it is.
    act(&mut m, Action::Export);
    let Some(Overlay::Export(prompt)) = &m.overlay else {
        panic!("no export prompt")
    };
    assert_eq!(prompt.lines()[0], "quantscope-report.html");
    act(&mut m, Action::Close);

    act(&mut m, Action::Pin);
    act(
        &mut m,
        Action::Change(Setting::Granularity, Direction::Forward),
    );
    let html = dir.path().join("ab.html");
    export_as(&mut m, html.to_str().unwrap());
    assert!(
        m.status
            .as_deref()
            .unwrap()
            .starts_with("exported the report to"),
        "{:?}",
        m.status
    );
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(text.starts_with("<!DOCTYPE html>"), "{}", &text[..40]);
    assert!(text.contains("Comparison"), "the pinned A is in the report");
    assert!(text.contains("granularity"));

    let pdf = dir.path().join("ab.PDF");
    export_as(&mut m, pdf.to_str().unwrap());
    let bytes = std::fs::read(&pdf).unwrap();
    assert!(bytes.starts_with(b"%PDF-"), "a PDF, by the name's ending");
    // No temporary file is left beside them.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn an_export_to_a_bad_name_says_why_and_asks_again() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = model();
    export_as(&mut m, "report.txt");
    assert!(
        m.status.as_deref().unwrap().contains(".html or .pdf"),
        "{:?}",
        m.status
    );
    assert!(matches!(m.overlay, Some(Overlay::Export(_))), "asks again");
    act(&mut m, Action::Close);

    let missing = dir.path().join("no-such-dir").join("r.html");
    export_as(&mut m, missing.to_str().unwrap());
    assert!(
        m.status.as_deref().unwrap().starts_with("not exported:"),
        "{:?}",
        m.status
    );
    let Some(Overlay::Export(prompt)) = &m.overlay else {
        panic!("no prompt to give another name")
    };
    assert_eq!(prompt.lines()[0], missing.to_str().unwrap());
    assert!(!missing.exists());

    // Nothing to export before any results.
    let mut empty = Model::with_text("", None);
    settle(&mut empty);
    act(&mut empty, Action::Export);
    assert!(empty.overlay.is_none());
    assert!(
        empty
            .status
            .as_deref()
            .unwrap()
            .contains("nothing to export"),
        "{:?}",
        empty.status
    );
}
