//! Which weights matter, in the explorer: loading an importance matrix or activations
//! through the prompt and the command line's loader, switching them on and off, bad files,
//! the output errors arriving after the weight report, and the panes that show them.

use crate::common::{explorer, files, screen as screen_text};

use explorer::{act, builtin_model};
use quantscope::app::keymap::Action;
use quantscope::app::model::ImportanceMode;
use quantscope::app::worker::{Job, Outcome, compute};
use quantscope::app::{Message, Model, Overlay, update};
use quantscope::runtime::settle;

/// Types `text` into the open prompt (replacing what it proposes) and presses Enter.
fn answer_prompt(m: &mut Model, text: &str) {
    assert!(
        matches!(m.overlay, Some(Overlay::Importance(_))),
        "no prompt: {:?}",
        m.overlay
    );
    update(m, Message::Paste(text.to_string()));
    act(m, Action::Yes);
}

/// The explorer on a 4 x 64 matrix, with the built-in activations loaded.
fn loud_model() -> Model {
    let mut m = Model::with_text(&wide_text(), None);
    settle(&mut m);
    act(&mut m, Action::LoadImportance);
    answer_prompt(&mut m, "built-in");
    m
}

/// A `.npy` file of f32 `values` in `shape` (rows, columns).
fn npy(shape: (usize, usize), values: &[f32]) -> files::TempFile {
    let header = files::npy_header("<f4", false, &format!("({}, {})", shape.0, shape.1));
    files::temp_file(
        "acts.npy",
        &files::npy_bytes((1, 0), &header, &files::f32_bytes(values)),
    )
}

/// Four rows of 64 columns: a quiet row, and loud ones.
fn wide_text() -> String {
    let mut rows = Vec::new();
    for r in 0..4 {
        let scale = if r == 0 { 0.01 } else { 1.0 };
        let row: Vec<String> = (0..64)
            .map(|c| format!("{:.4}", scale * (((c * 7 + r * 3) % 13) as f64 - 6.0) / 6.0))
            .collect();
        rows.push(format!("r{r}: {}", row.join(", ")));
    }
    rows.join("\n") + "\n"
}

#[test]
fn built_in_activations_load_from_the_prompt_and_the_output_errors_follow() {
    let m = loud_model();
    assert_eq!(m.importance.mode, ImportanceMode::Weigh, "{:?}", m.status);
    let c = m.importance.loaded.as_ref().expect("loaded");
    assert_eq!(c.label, "activations built-in");
    let report = m.analysis.report.as_ref().expect("a report");
    let out = report.output.as_ref().expect("output errors");
    assert_eq!(out.channels.len(), 4);
    assert!(out.overall.output_mse.is_some_and(|v| v > 0.0));
    assert!(out.overall.imatrix_mse.is_some());
    assert_eq!(out.tokens, Some(256));
    // Every rung of the ladder has its output errors too.
    assert!(!report.ladder.is_empty());
    assert!(report.ladder.iter().all(|r| r.output.is_some()));
    // Built-in: 64 / 32 = 2 loud columns, at 16 and 48, hold most of the importance.
    let s = out.importance.as_ref().expect("summary");
    let top: Vec<usize> = s.top.iter().take(2).map(|&(c, _)| c).collect();
    assert!(top.contains(&16) && top.contains(&48), "{top:?}");
}

#[test]
fn alt_w_steps_from_weighing_to_measuring_only_to_off_and_back() {
    let mut m = loud_model();
    m.apply_settings("q4_0", quantscope::core::presets::Overrides::default())
        .unwrap();
    settle(&mut m);
    let weighed = m.analysis.report.clone().unwrap();
    assert!(weighed.quantized_with.is_some());
    let weighed_out = weighed.output.clone().expect("output errors");
    // Measured only: Q4_0 quantizes as without the importance, and the output errors stay.
    act(&mut m, Action::ToggleImportance);
    assert_eq!(m.importance.mode, ImportanceMode::Measure);
    assert!(m.status.as_deref().unwrap_or("").contains("measured only"));
    let measured = m.analysis.report.clone().unwrap();
    assert!(measured.quantized_with.is_none());
    let measured_out = measured
        .output
        .clone()
        .expect("output errors while measuring only");
    assert!(measured_out.overall.imatrix_mse.is_some());
    // The plain search is what the analysis without any importance gives, code for code.
    let mut bare = Model::with_text(&wide_text(), None);
    bare.apply_settings("q4_0", quantscope::core::presets::Overrides::default())
        .unwrap();
    settle(&mut bare);
    let bare = bare.analysis.report.clone().unwrap();
    assert_eq!(measured.channels, bare.channels);
    // What the importance buys, on the measure it minimises.
    let (w, p) = (
        weighed_out.overall.imatrix_mse.unwrap(),
        measured_out.overall.imatrix_mse.unwrap(),
    );
    assert!(w < p, "weighted {w} vs plain {p}");
    // Off: no output errors; on again: weighing.
    act(&mut m, Action::ToggleImportance);
    assert_eq!(m.importance.mode, ImportanceMode::Off);
    assert!(m.analysis.report.as_ref().unwrap().output.is_none());
    act(&mut m, Action::ToggleImportance);
    assert_eq!(m.importance.mode, ImportanceMode::Weigh);
    assert!(m.analysis.report.as_ref().unwrap().output.is_some());
    assert!(m.analysis.report.as_ref().unwrap().quantized_with.is_some());
}

#[test]
fn toggling_with_nothing_loaded_says_how_to_load() {
    let mut m = builtin_model();
    act(&mut m, Action::ToggleImportance);
    assert_eq!(m.importance.mode, ImportanceMode::Weigh);
    assert!(m.importance.loaded.is_none());
    let status = m.status.clone().unwrap_or_default();
    assert!(status.contains("Alt-I"), "{status}");
}

#[test]
fn a_bad_file_is_one_message_and_keeps_what_was_loaded() {
    let mut m = loud_model();
    let before = m.analysis.report.clone();
    act(&mut m, Action::LoadImportance);
    answer_prompt(&mut m, "/nonexistent/acts.npy");
    let status = m.status.clone().unwrap_or_default();
    assert!(status.starts_with("not loaded: "), "{status}");
    assert!(status.contains("acts.npy"), "{status}");
    assert!(status.contains("loaded before stays"), "{status}");
    assert_eq!(
        m.importance.loaded.as_ref().unwrap().label,
        "activations built-in"
    );
    assert_eq!(m.analysis.report, before);
}

#[test]
fn activations_of_another_width_are_refused_with_both_widths() {
    let path = npy((3, 5), &[1.0; 15]);
    let mut m = builtin_model();
    act(&mut m, Action::LoadImportance);
    answer_prompt(&mut m, &path.display().to_string());
    let status = m.status.clone().unwrap_or_default();
    assert!(status.contains("5 columns per token"), "{status}");
    assert!(status.contains("4 columns"), "{status}");
    assert!(m.importance.loaded.is_none());
    assert!(m.analysis.report.as_ref().unwrap().output.is_none());
}

#[test]
fn text_edited_to_another_width_says_the_importance_does_not_fit() {
    let path = npy((2, 4), &[1.0, 2.0, 3.0, 4.0, 0.5, 0.5, 0.5, 0.5]);
    let mut m = builtin_model();
    act(&mut m, Action::LoadImportance);
    answer_prompt(&mut m, &path.display().to_string());
    assert!(
        m.analysis.report.as_ref().unwrap().output.is_some(),
        "{:?}",
        m.status
    );
    // A fifth column: the activations no longer fit; the weight report still comes.
    m.editor = quantscope::app::model::new_editor("a: 1, 2, 3, 4, 5\n");
    m.request_analysis();
    settle(&mut m);
    let why = m.analysis.calibration_unfit.clone().expect("a reason");
    assert!(why.contains("4 columns per token"), "{why}");
    let report = m.analysis.report.as_ref().unwrap();
    assert_eq!(report.shape, (1, 5));
    assert!(report.output.is_none());
}

#[test]
fn the_weight_report_comes_before_the_output_errors() {
    let m = loud_model();
    let mut job: Job = m.job();
    job.generation = 1;
    let mut order = Vec::new();
    compute(&job, |r| {
        order.push(match r.outcome {
            Outcome::Calibration(_) => "calibration",
            Outcome::Report { .. } => "report",
            Outcome::Ladder(_) => "ladder",
            Outcome::OutputProgress(..) => "progress",
            Outcome::Output(_) => "output",
            Outcome::Done => "done",
            _ => "other",
        });
        true
    });
    order.dedup();
    let pos = |s| order.iter().position(|&o| o == s).unwrap_or(usize::MAX);
    assert!(pos("report") < pos("ladder"), "{order:?}");
    assert!(pos("ladder") < pos("output"), "{order:?}");
    assert_eq!(order.last(), Some(&"done"), "{order:?}");
}

#[test]
fn the_loud_input_scenario_turns_on_the_built_in_activations_and_shows_the_lesson() {
    let s = quantscope::teach::assets::scenario("loud-input").expect("built in");
    assert!(s.built_in_activations);
    let mut m = builtin_model();
    m.load_scenario(&s);
    settle(&mut m);
    assert_eq!(m.importance.mode, ImportanceMode::Weigh);
    let r = m.analysis.report.clone().expect("a report");
    let out = r.output.as_ref().expect("output errors");
    let quiet = 1;
    // The weights say per tensor is fine for the quiet row: its MAE is no worse than the
    // wide rows'.
    for (i, ch) in r.channels.iter().enumerate().filter(|(i, _)| *i != quiet) {
        assert!(r.channels[quiet].metrics.mae <= ch.metrics.mae, "row {i}");
    }
    // The output says it is not: its output error is the largest, by more than tenfold.
    let mse = |i: usize| out.channels[i].output_mse.unwrap();
    for i in [0, 2, 3] {
        assert!(mse(quiet) > 10.0 * mse(i), "{} vs {}", mse(quiet), mse(i));
    }
    // Per channel gives the quiet row its own step: its output error falls a hundredfold.
    let channel = r
        .ladder
        .iter()
        .find(|g| g.granularity == quantscope::core::Granularity::Channel)
        .and_then(|g| g.output.as_ref())
        .expect("the channel rung's output errors");
    assert!(channel.channels[quiet].output_mse.unwrap() * 100.0 < mse(quiet));
    // Q4_K quantizes with the importance, and its weight error moves: the wide rows' MAE
    // rises a little against the search without it.
    let q4k = quantscope::core::preset("q4_k", quantscope::core::PresetOptions::default()).unwrap();
    m.apply_settings("q4_k", quantscope::core::presets::Overrides::default())
        .unwrap();
    settle(&mut m);
    let weighted = m.analysis.report.clone().unwrap();
    assert_eq!(weighted.config, q4k);
    assert!(weighted.quantized_with.is_some());
    update(&mut m, Message::Action(Action::ToggleImportance));
    settle(&mut m);
    let plain = m.analysis.report.clone().unwrap();
    assert!(plain.quantized_with.is_none());
    assert!(weighted.channels[0].metrics.mae > plain.channels[0].metrics.mae);
    // Measured only, the plain search still has its output error, and the importance's
    // search makes less of it.
    let (w, p) = (
        weighted
            .output
            .as_ref()
            .unwrap()
            .overall
            .output_mse
            .unwrap(),
        plain
            .output
            .as_ref()
            .expect("measured only")
            .overall
            .output_mse
            .unwrap(),
    );
    assert!(w < p, "weighted {w} vs plain {p}");
}

#[test]
fn the_loud_input_demo_plays_to_its_end_with_the_importance_on() {
    let script = quantscope::teach::script::demo_script("loud-input").expect("built in");
    let steps = script.steps.len();
    let mut m = Model::with_text("", None);
    m.demo = Some(quantscope::app::demo::Demo::new(script));
    quantscope::app::demo::go_to(&mut m, 1);
    settle(&mut m);
    for _ in 1..steps {
        act(&mut m, Action::NextStep);
    }
    let demo = m.demo.as_ref().expect("still playing");
    assert_eq!(demo.shown, steps);
    assert_eq!(m.importance.mode, ImportanceMode::Weigh);
    assert_eq!(m.preset, "q4_k");
    assert!(m.analysis.report.as_ref().unwrap().output.is_some());
}

/// The loud-input scenario analysed, on a screen of `width` x `height`.
fn loud_input_at(width: u16, height: u16) -> Model {
    let mut m = builtin_model();
    update(&mut m, Message::Resized(width, height));
    m.load_scenario(&quantscope::teach::assets::scenario("loud-input").unwrap());
    settle(&mut m);
    m
}

#[test]
fn snapshots_of_the_importance_views_at_80x24_and_120x40() {
    for (w, h) in [(80u16, 24u16), (120, 40)] {
        let mut m = loud_input_at(w, h);
        m.set_caption(None);
        insta::assert_snapshot!(
            format!("importance_panes_{w}x{h}"),
            screen_text::screen(&m, w, h)
        );
        // The Errors pane on the output error (Alt-v: right after MAE).
        act(&mut m, Action::ToggleErrorMetric);
        assert_eq!(m.error_metric, quantscope::app::ErrorMetric::Output);
        let s = screen_text::screen(&m, w, h);
        assert!(s.contains("Errors (output MSE)"), "{s}");
        insta::assert_snapshot!(format!("importance_errors_output_{w}x{h}"), s);
        act(&mut m, Action::ImportanceView);
        let s = screen_text::screen(&m, w, h);
        assert!(s.contains("The top 1 % of columns (3 of 256)"), "{s}");
        insta::assert_snapshot!(format!("importance_view_{w}x{h}"), s);
        act(&mut m, Action::Close);
        act(&mut m, Action::Formats);
        act(&mut m, Action::ToggleFront);
        let s = screen_text::screen(&m, w, h);
        assert!(s.contains("front on the output error"), "{s}");
        insta::assert_snapshot!(format!("importance_formats_{w}x{h}"), s);
    }
}

#[test]
fn the_load_prompt_and_the_title_say_what_is_loaded() {
    let mut m = builtin_model();
    act(&mut m, Action::LoadImportance);
    let s = screen_text::screen(&m, 80, 24);
    assert!(s.contains("Which weights matter"), "{s}");
    assert!(s.contains("built-in"), "{s}");
    answer_prompt(&mut m, "built-in");
    let s = screen_text::screen(&m, 80, 24);
    assert!(
        s.lines().next().unwrap().contains("activations built-in"),
        "{s}"
    );
    assert!(s.contains("importance on: activations built-in"), "{s}");
    act(&mut m, Action::ToggleImportance);
    let s = screen_text::screen(&m, 80, 24);
    assert!(s.contains("importance measured only"), "{s}");
    act(&mut m, Action::ToggleImportance);
    let s = screen_text::screen(&m, 80, 24);
    assert!(s.contains("importance off"), "{s}");
}

#[test]
fn a_pinned_comparison_says_when_the_output_error_reverses_the_ranking() {
    let mut m = loud_input_at(80, 24);
    // A: int8 per channel; B: int4 per tensor. Find a pair whose order flips, or check the
    // line names both measures.
    act(&mut m, Action::Pin);
    m.apply_settings("q4_k", quantscope::core::presets::Overrides::default())
        .unwrap();
    settle(&mut m);
    let c = m.analysis.comparison.clone().expect("a comparison");
    let (oa, ob) = c.output.expect("output errors under A and B");
    assert!(oa.output_mse.is_some() && ob.output_mse.is_some());
    let line = quantscope::ui::compare::summary(Some(&c), "·", "->");
    assert!(line.contains("out MSE"), "{line}");
    if let Some(change) = &c.change {
        assert!(line.starts_with(&change.sentence), "{line}");
    }
}

#[test]
fn a_file_that_is_not_an_importance_matrix_is_refused_by_name() {
    let mut m = loud_model();
    for (name, bytes) in [
        ("bad.gguf", b"GGUF\x03\x00".to_vec()),
        ("bad.dat", b"not an imatrix".to_vec()),
    ] {
        let file = files::temp_file(name, &bytes);
        act(&mut m, Action::LoadImportance);
        answer_prompt(&mut m, &file.display().to_string());
        let status = m.status.clone().unwrap_or_default();
        assert!(status.starts_with("not loaded: "), "{status}");
        assert!(status.contains(name), "{status}");
        assert!(status.contains("loaded before stays"), "{status}");
        assert_eq!(
            m.importance.loaded.as_ref().unwrap().label,
            "activations built-in"
        );
    }
}

#[test]
fn a_ladder_too_narrow_for_the_output_columns_says_so() {
    use ratatui::widgets::Widget as _;
    let m = loud_input_at(80, 24);
    let report = m.analysis.report.clone().unwrap();
    let theme = quantscope::ui::Theme::new(false, false);
    let text = |width: u16| {
        let pane = quantscope::ui::ladder::LadderPane {
            report: Some(&report),
            selected: 0,
            focused: false,
            stale: false,
            pending: false,
            progress: None,
            pinned: None,
            method: None,
            theme: &theme,
        };
        let area = ratatui::layout::Rect::new(0, 0, width, 8);
        let mut buf = ratatui::buffer::Buffer::empty(area);
        (&pane).render(area, &mut buf);
        (0..8)
            .map(|y| (0..width).map(|x| buf[(x, y)].symbol()).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let wide = text(80);
    assert!(
        wide.contains("out MSE") && !wide.contains("wider shows it"),
        "{wide}"
    );
    let narrow = text(44);
    assert!(narrow.contains("wider shows it"), "{narrow}");
    assert!(narrow.contains("imat MSE"), "{narrow}");
}

#[test]
fn the_clipping_cycle_offers_the_weighted_search_only_while_the_importance_quantizes() {
    use quantscope::app::setting::{Direction, Setting};
    use quantscope::core::config::Clipping;
    let clip = |m: &mut Model| {
        act(m, Action::Change(Setting::Clipping, Direction::Forward));
        settle(m);
        m.config.clipping
    };
    // Without importance: none, 99.9, 99, MSE, back to none.
    let mut bare = builtin_model();
    let seen: Vec<Clipping> = (0..4).map(|_| clip(&mut bare)).collect();
    assert!(!seen.contains(&Clipping::MseWeighted), "{seen:?}");
    // With it: the weighted search comes after MSE, and the analysis runs with it.
    let mut m = loud_model();
    let mut seen = Vec::new();
    for _ in 0..5 {
        seen.push(clip(&mut m));
        if m.config.clipping == Clipping::MseWeighted {
            let r = m.analysis.report.as_ref().expect("a report");
            assert_eq!(r.config.clipping, Clipping::MseWeighted);
            assert!(
                r.output.is_some(),
                "{:?} {:?}",
                m.status,
                m.analysis.calibration_unfit
            );
            break;
        }
    }
    assert_eq!(seen.last(), Some(&Clipping::MseWeighted), "{seen:?}");
    let before = seen.len();
    assert_eq!(seen[before - 2], Clipping::Mse);
}

#[test]
fn mse_weighted_clipping_without_an_importance_to_weigh_by_names_the_keys() {
    let mut m = loud_model();
    let overrides = quantscope::core::presets::Overrides {
        clipping: Some(quantscope::core::config::Clipping::MseWeighted),
        ..Default::default()
    };
    m.apply_settings("lesson", overrides).unwrap();
    settle(&mut m);
    assert!(m.analysis.failure.is_none(), "{:?}", m.analysis.failure);
    assert!(m.analysis.report.as_ref().unwrap().quantized_with.is_some());
    // Measured only: nothing to weigh the search by; the message says which key gives it.
    act(&mut m, Action::ToggleImportance);
    assert_eq!(m.importance.mode, ImportanceMode::Measure);
    let failure = m.analysis.failure.clone().expect("refused");
    assert!(
        failure.contains("measured only") && failure.contains("Alt-W"),
        "{failure}"
    );
    // Off: none in use; loading or switching on are the ways out.
    act(&mut m, Action::ToggleImportance);
    let failure = m.analysis.failure.clone().expect("refused");
    assert!(
        failure.contains("Alt-I") && failure.contains("Alt-W"),
        "{failure}"
    );
    // On again: the search weighs, and the failure is gone.
    act(&mut m, Action::ToggleImportance);
    assert!(m.analysis.failure.is_none(), "{:?}", m.analysis.failure);
}
