//! The format ladder (every preset and format on the same data) in the explorer, in `report`
//! and in the exporters; and pinning a configuration as A to compare B with it.

use crate::common::explorer;
use crate::common::run;
use crate::common::screen as screen_text;

use explorer::{act, bound_key as key};
use quantscope::app::keymap::Action;
use quantscope::app::{Direction, Message, Model, Overlay, Setting, update};
use quantscope::core::config::Granularity;
use quantscope::runtime::settle;
use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use run::quantscope;
use screen_text::screen;

fn scenario_model(name: &str) -> Model {
    let s = quantscope::teach::assets::scenario(name).unwrap();
    let mut m = Model::with_text(&s.text, None);
    m.apply_text_header("scenario");
    settle(&mut m);
    m
}

#[test]
fn alt_shift_f_opens_the_format_ladder_with_the_active_preset_marked() {
    let mut m = scenario_model("formats");
    assert_eq!(m.preset, "lesson");
    key(&mut m, KeyCode::Char('F'), KeyModifiers::ALT);
    assert!(matches!(m.overlay, Some(Overlay::Formats { selected: 0 })));
    let format_ladder = m
        .analysis
        .format_ladder
        .clone()
        .expect("the ladder arrives");
    assert!(m.analysis.format_ladder_progress.is_none());
    let lesson = format_ladder
        .entries
        .iter()
        .find(|e| e.name == "lesson")
        .unwrap();
    assert!(lesson.active);
    assert_eq!(lesson.measured().unwrap().collapsed_channels, 5);
    let q4k = format_ladder
        .entries
        .iter()
        .find(|e| e.name == "q4_k")
        .unwrap();
    assert_eq!(q4k.bits_per_weight, Some(4.5));
    assert_eq!(q4k.measured().unwrap().collapsed_channels, 0);
    // IQ4_XS is smaller and more accurate here, so it takes Q4_K's place on the front.
    let iq4xs = format_ladder
        .entries
        .iter()
        .find(|e| e.name == "iq4_xs")
        .unwrap();
    assert!(iq4xs.bits_per_weight < q4k.bits_per_weight);
    assert!(iq4xs.measured().unwrap().overall.rmse < q4k.measured().unwrap().overall.rmse);
    assert!(iq4xs.pareto && !q4k.pareto);
    let nvfp4 = format_ladder
        .entries
        .iter()
        .find(|e| e.name == "nvfp4")
        .unwrap();
    assert_eq!(nvfp4.measured().unwrap().collapsed_channels, 1);
    // The same key closes it.
    key(&mut m, KeyCode::Char('F'), KeyModifiers::ALT);
    assert!(m.overlay.is_none());
}

#[test]
fn enter_on_a_format_or_a_preset_makes_it_the_active_configuration() {
    let mut m = scenario_model("formats");
    act(&mut m, Action::Formats);
    let entries = m.analysis.format_ladder.clone().unwrap().entries.clone();
    let q4k = entries.iter().position(|e| e.name == "q4_k").unwrap();
    for _ in 0..q4k {
        key(&mut m, KeyCode::Down, KeyModifiers::NONE);
    }
    key(&mut m, KeyCode::Enter, KeyModifiers::NONE);
    assert!(m.overlay.is_none());
    assert_eq!(m.preset, "q4_k");
    assert_eq!(m.config.format.map(|f| f.name), Some("q4_k"));
    let report = m
        .analysis
        .report
        .clone()
        .expect("the format's report arrives");
    assert_eq!(report.memory.bits_per_weight, 4.5);
    assert_eq!(report.collapsed_channels, 0);
    // Back to an integer preset from the same ladder.
    act(&mut m, Action::Formats);
    let entries = m.analysis.format_ladder.clone().unwrap().entries.clone();
    assert!(entries.iter().any(|e| e.name == "q4_k" && e.active));
    let q4_0 = entries.iter().position(|e| e.name == "q4_0").unwrap();
    for _ in 0..q4_0 {
        key(&mut m, KeyCode::Down, KeyModifiers::NONE);
    }
    key(&mut m, KeyCode::Enter, KeyModifiers::NONE);
    assert!(m.overlay.is_none());
    assert_eq!(m.preset, "q4_0");
    assert_eq!(m.config.granularity, Granularity::Group(32));
}

#[test]
fn the_overlay_fits_80x24_and_names_the_selected_entrys_arithmetic() {
    let mut m = scenario_model("formats");
    m.size = (80, 24);
    act(&mut m, Action::Formats);
    let s = screen(&m, 80, 24);
    assert!(s.contains("bits/w"), "{s}");
    assert!(s.contains("q2_k"), "{s}");
    assert!(s.contains("2.625"), "{s}");
    // The first entry is selected: its bits per weight, part by part (IQ1_S, not measured
    // without an importance matrix, has no cost and sorts last).
    assert!(s.contains("bits/weight = 1.625 (payload: trits"), "{s}");
    insta::assert_snapshot!("formats_80x24", s);
    let wide = screen(&m, 120, 40);
    assert!(wide.contains("SQNR dB") && wide.contains("MAE"), "{wide}");
}

/// The MX family and two-level NVFP4 in the ladder, the selection moved down to MXFP8 E4M3:
/// its bits per weight part by part, at 80x24 and 120x40.
#[test]
fn the_mx_and_two_level_nvfp4_entries_at_80x24_and_120x40() {
    let mut m = scenario_model("formats");
    m.size = (80, 24);
    act(&mut m, Action::Formats);
    let entries = m.analysis.format_ladder.clone().unwrap().entries.clone();
    for name in [
        "mxfp4-ocp",
        "mxfp6-e2m3",
        "mxfp6-e3m2",
        "mxfp8-e4m3",
        "mxfp8-e5m2",
        "mxint8",
        "nvfp4-ct",
        "nvfp4-modelopt",
    ] {
        let e = entries.iter().find(|e| e.name == name).unwrap();
        assert!(e.measured().is_some(), "{name}");
    }
    let at = entries.iter().position(|e| e.name == "mxfp8-e4m3").unwrap();
    for _ in 0..at {
        key(&mut m, KeyCode::Down, KeyModifiers::NONE);
    }
    let s = screen(&m, 80, 24);
    assert!(
        s.contains("8 (payload: E4M3 codes) + 0.25 (shared exponent: E8M0)"),
        "{s}"
    );
    insta::assert_snapshot!("formats_mx_80x24", s);
    m.size = (120, 40);
    let wide = screen(&m, 120, 40);
    assert!(
        wide.contains("nvfp4-ct") && wide.contains("mxint8"),
        "{wide}"
    );
    insta::assert_snapshot!("formats_mx_120x40", wide);
}

#[test]
fn formats_whose_blocks_do_not_divide_the_rows_say_why() {
    // The built-in example has rows of four values.
    let mut m = Model::with_text(quantscope::cli::BUILTIN_EXAMPLE, None);
    settle(&mut m);
    act(&mut m, Action::Formats);
    let format_ladder = m.analysis.format_ladder.clone().unwrap();
    let q4k = format_ladder
        .entries
        .iter()
        .find(|e| e.name == "q4_k")
        .unwrap();
    assert!(
        q4k.result
            .as_ref()
            .unwrap_err()
            .contains("rows of 4 fit neither"),
        "{:?}",
        q4k.result
    );
    let fp8 = format_ladder
        .entries
        .iter()
        .find(|e| e.name == "fp8-e4m3")
        .unwrap();
    assert!(fp8.measured().is_some());
}

#[test]
fn a_settings_change_while_open_recomputes_the_ladder() {
    let mut m = scenario_model("formats");
    act(&mut m, Action::Formats);
    let before = m.analysis.format_ladder.clone().unwrap();
    update(&mut m, Message::Action(Action::Close));
    act(
        &mut m,
        Action::Change(Setting::Granularity, Direction::Forward),
    );
    act(&mut m, Action::Formats);
    let after = m.analysis.format_ladder.clone().unwrap();
    // lesson per channel is no preset: it joins the ladder as "active".
    assert!(!before.entries.iter().any(|e| e.name == "active"));
    let active = after.entries.iter().find(|e| e.name == "active").unwrap();
    assert!(active.about.contains("channel"));
    assert!(!after.entries.iter().any(|e| e.name == "lesson" && e.active));
}

#[test]
fn pinning_a_configuration_compares_the_next_one_with_it() {
    let mut m = scenario_model("formats");
    act(&mut m, Action::Pin);
    assert!(m.pinned.is_some());
    assert!(m.status.as_deref().unwrap().contains("pinned as A"));
    act(
        &mut m,
        Action::Change(Setting::Granularity, Direction::Forward),
    );
    let c = m.analysis.comparison.clone().expect("a comparison");
    assert_eq!(c.differences.len(), 1);
    assert_eq!(c.differences[0].key, "granularity");
    assert_eq!(c.differences[0].a, "tensor");
    assert_eq!(c.differences[0].b, "channel");
    assert_eq!(c.collapsed, (5, 0));
    assert!(c.channels.iter().all(|p| p.mae_change <= 0.0));
    act(&mut m, Action::Pin);
    assert!(m.pinned.is_none());
    assert!(m.analysis.comparison.is_none());
}

#[test]
fn report_formats_writes_the_ladder_in_every_format() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scenarios/formats.txt");
    let o = quantscope(&[
        "report",
        file,
        "--formats",
        "q4_k,mxfp4,lesson",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let f = v["formats"].as_array().unwrap();
    let names: Vec<&str> = f.iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["lesson", "mxfp4", "q4_k"]);
    assert_eq!(f[2]["bits_per_weight"], 4.5);
    assert_eq!(f[0]["active"], true);
    assert_eq!(f[0]["collapsed_channels"], 5);
    assert_eq!(f[2]["parts"][1]["bits_per_weight"], 0.375);
    assert!(f[2]["skipped"].is_null());

    let table = quantscope(&["report", file, "--formats", "q4_k", "--no-ladder"]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.contains("Formats"), "{text}");
    assert!(
        text.contains("+ 0.125 (super-block d, dmin: f16 x 2) = 4.5"),
        "{text}"
    );

    let csv = quantscope(&["report", file, "--formats", "q4_k", "--format", "csv"]);
    let text = String::from_utf8_lossy(&csv.stdout);
    let header = text.lines().next().unwrap();
    assert!(header.ends_with("mae_q4_k,rmse_q4_k"), "{header}");

    // Without --formats the JSON key is there, empty.
    let plain = quantscope(&["report", file, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&plain.stdout).unwrap();
    assert_eq!(v["formats"], serde_json::json!([]));
}

#[test]
fn report_formats_refuses_an_unknown_name_and_lists_the_formats() {
    let o = quantscope(&["report", "--formats", "q9_k"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("q9_k"));
    let o = quantscope(&["report", "--list-presets"]);
    let text = String::from_utf8_lossy(&o.stdout);
    for name in [
        "q2_k",
        "q6_k",
        "mxfp4",
        "nvfp4",
        "nf4",
        "nf4-dq",
        "fp8-e4m3-b128",
    ] {
        assert!(text.contains(&format!("\n{name} ")), "{name}: {text}");
    }
}

#[test]
fn a_job_says_when_it_is_done_so_the_explorer_waits_for_the_ladder_and_no_longer() {
    use quantscope::app::worker::{Outcome, compute};
    let mut m = scenario_model("formats");
    m.overlay = Some(Overlay::Formats { selected: 0 });
    m.request_analysis();
    assert!(m.analysis.busy);
    assert_eq!(m.analysis.format_ladder_progress, Some((0, 0)));
    let job = m.job();
    let mut results = Vec::new();
    compute(&job, |r| {
        results.push(r);
        true
    });
    let kinds: Vec<&str> = results
        .iter()
        .map(|r| match r.outcome {
            Outcome::Report { .. } => "report",
            Outcome::Ladder(_) => "ladder",
            Outcome::FormatLadder(_) => "format_ladder",
            Outcome::FormatLadderProgress(..) => "progress",
            Outcome::Done => "done",
            _ => "other",
        })
        .filter(|k| *k != "progress")
        .collect();
    assert_eq!(kinds, ["report", "ladder", "format_ladder", "done"]);
    // The model keeps waiting after the report and its ladder, until the job is done.
    for r in results {
        let done = matches!(r.outcome, Outcome::Done);
        update(&mut m, Message::Analysed(r));
        assert_eq!(m.analysis.busy, !done);
    }
    assert!(m.analysis.format_ladder.is_some());
    assert!(m.analysis.format_ladder_progress.is_none());
}

/// The formats scenario with its configuration pinned as A and B one granularity finer
/// (per channel), the status line cleared.
fn pinned_then_per_channel() -> quantscope::app::Model {
    let mut m = scenario_model("formats");
    act(&mut m, Action::Pin);
    act(
        &mut m,
        Action::Change(Setting::Granularity, Direction::Forward),
    );
    m.status = None;
    m
}

#[test]
fn the_status_line_compares_b_with_the_pinned_a() {
    let mut m = pinned_then_per_channel();
    let s = screen(&m, 120, 40);
    let last = s.lines().last().unwrap();
    println!("{last}");
    assert!(last.contains("granularity tensor→channel"), "{last}");
    assert!(last.contains("collapsed 5→0"), "{last}");
    assert!(last.contains("bits/w 4.02→"), "{last}");
    // At 80 columns the numbers come first.
    let narrow = screen(&m, 80, 24);
    assert!(narrow.lines().last().unwrap().contains("collapsed 5→0"));
    act(&mut m, Action::Pin);
    m.status = None;
    let s = screen(&m, 120, 40);
    assert!(!s.lines().last().unwrap().contains("A→B"));
}

#[test]
fn a_format_as_the_active_configuration_fills_the_panes_at_80x24_and_wider() {
    let mut m = scenario_model("formats");
    m.size = (80, 24);
    match m.apply_settings("q4_k", quantscope::core::presets::Overrides::default()) {
        Ok(()) => {}
        Err(e) => panic!("{e}"),
    }
    settle(&mut m);
    let s = screen(&m, 80, 24);
    assert!(s.contains("q4_k: llama.cpp Q4_K"), "{s}");
    assert!(s.contains("16/16"), "levels used of the 4-bit grid: {s}");
    assert!(s.contains("fixed by q4_k"), "{s}");
    assert!(s.contains("0 of 8 collapsed"), "{s}");
    insta::assert_snapshot!("format_active_80x24", s);
    let wide = screen(&m, 120, 40);
    assert!(wide.contains("4.5"), "{wide}");
    // A setting the format fixes is refused on the status line.
    act(
        &mut m,
        Action::Change(Setting::Granularity, Direction::Forward),
    );
    assert_eq!(m.preset, "q4_k");
    assert!(
        m.status
            .as_deref()
            .is_some_and(|s| s.contains("q4_k is a format with its own block layout")),
        "{:?}",
        m.status
    );
}

#[test]
fn the_panes_show_b_beside_the_pinned_a_at_80x24_and_wider() {
    let mut m = pinned_then_per_channel();
    let narrow = screen(&m, 80, 24);
    // The title says what differs; the Errors pane's columns are A, B and the change.
    assert!(
        narrow
            .lines()
            .next()
            .unwrap()
            .contains("B: channel vs A: tensor"),
        "{narrow}"
    );
    assert!(narrow.contains("Errors (MAE) · A/B"), "{narrow}");
    assert!(narrow.contains("A tensor"), "{narrow}");
    assert!(narrow.contains("● B channel"), "{narrow}");
    assert!(narrow.contains("B-A"), "{narrow}");
    // Utilization: B's collapsed count beside A's, and each row's share under A.
    assert!(narrow.contains("B 0, A 5 of 8 collapsed"), "{narrow}");
    assert!(
        narrow.contains("A   0% ✗"),
        "the quietest row collapses under A: {narrow}"
    );
    // Ladder: B's active rung and A's, both in view.
    assert!(narrow.contains("● channel"), "{narrow}");
    assert!(narrow.contains("A tensor         1"), "{narrow}");
    insta::assert_snapshot!("ab_80x24", narrow);

    let wide = screen(&m, 120, 40);
    assert!(wide.contains("Errors (MAE / RMSE) · A/B"), "{wide}");
    let quiet = wide
        .lines()
        .find(|l| l.contains("▶ r0") && !l.contains("MAE"))
        .and_then(|l| l.split('│').nth(3))
        .unwrap_or_default()
        .to_string();
    // r0's errors under A, under B, and B - A (negative: B is better).
    let c = m.analysis.comparison.clone().unwrap();
    let pair = &c.channels[0];
    assert!(pair.mae_change < 0.0);
    assert!(quiet.contains('-'), "{quiet}");
    insta::assert_snapshot!("ab_120x40", wide);

    // Unpinned, the panes are as before.
    act(&mut m, Action::Pin);
    let back = screen(&m, 80, 24);
    assert!(!back.contains("A/B"), "{back}");
    assert!(!back.contains("A tensor"), "{back}");
}

#[test]
fn a_format_pinned_against_an_integer_configuration_shows_both_rungs() {
    let mut m = scenario_model("formats");
    act(&mut m, Action::Pin);
    match m.apply_settings("q4_k", quantscope::core::presets::Overrides::default()) {
        Ok(()) => {}
        Err(e) => panic!("{e}"),
    }
    settle(&mut m);
    m.status = None;
    let s = screen(&m, 80, 24);
    // At 80 columns the title names what differs; wider, both sides.
    assert!(
        s.lines().next().unwrap().contains("B vs A: format differs"),
        "{s}"
    );
    let wide = screen(&m, 160, 40);
    assert!(
        wide.lines()
            .next()
            .unwrap()
            .contains("B: q4_k vs A: int4 symmetric"),
        "{wide}"
    );
    // The ladder: q4_k's one rung at 4.5 bits/w and A's tensor rung at 4.016.
    assert!(s.contains("4.500"), "{s}");
    assert!(s.contains("A tensor"), "{s}");
    assert!(s.contains("4.016"), "{s}");
    assert!(s.contains("B 0, A 5 of 8 collapsed"), "{s}");
}

/// The ladder measures a format without keeping its codes or blocks: every figure must still
/// be the format's whole analysis's, bit for bit, on rows of every kind (spreads over six
/// decades, zero, constant, one-signed, a row too quiet for a per-tensor scale).
#[test]
fn the_ladders_figures_are_the_analysiss_for_every_format() {
    use quantscope::core::format_ladder::{FORMATS, Selection, format_ladder};
    use quantscope::core::presets::format_config;
    use quantscope::core::{Matrix, Options, analyse_with};
    let rows: Vec<Vec<f32>> = (0..12)
        .map(|r| {
            (0..512)
                .map(|c| {
                    let v = ((r * 131 + c * 17) as f32 * 0.0731).sin();
                    match r {
                        0 => 0.0,
                        1 => 0.3,
                        2 => v.abs() * 1e-3,
                        3 => v * 1e-7,
                        _ => v * 10f32.powi(r % 6 - 3),
                    }
                })
                .collect()
        })
        .collect();
    let refs: Vec<&[f32]> = rows.iter().map(Vec::as_slice).collect();
    let m = Matrix::from_rows(&refs).unwrap();
    let l = format_ladder(&m, &Selection::formats(), None);
    for info in FORMATS {
        let e = l.entries.iter().find(|e| e.name == info.name).unwrap();
        // The i-quants llama.cpp refuses without an importance matrix are refused here too.
        let Ok(r) = analyse_with(&m, &format_config(info), Options::ONE_CONFIG) else {
            assert!(e.measured().is_none(), "{}", info.name);
            continue;
        };
        let got = e.measured().unwrap();
        assert_eq!(got.overall, r.overall, "{}", info.name);
        assert_eq!(
            got.collapsed_channels, r.collapsed_channels,
            "{}",
            info.name
        );
        let channels: Vec<_> = r.channels.iter().map(|c| c.metrics).collect();
        assert_eq!(got.channels, channels, "{}", info.name);
    }
    assert!(
        l.entries
            .iter()
            .any(|e| e.measured().unwrap().collapsed_channels > 0)
    );
}
