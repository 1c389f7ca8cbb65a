//! What a tester tripped on in the first hour, at message level: sequences of keys through
//! `translate` and `update`, with the analysis run by one long-lived worker (as the
//! explorer's analysis thread runs it) and its results delivered at several speeds and in
//! several orders.

use std::sync::mpsc;

use quantscope::app::worker::{Job, JobResult, Worker};
use quantscope::app::{Effect, Message, Model, translate, update};
use quantscope::cli::BUILTIN_EXAMPLE;

use crate::common::screen as screen_text;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::common::explorer;
use explorer::{press, type_in};

/// When the analysis runs and when its results arrive, relative to the keys.
#[derive(Debug, Clone, Copy)]
enum Delivery {
    /// Every result at once, after the analysis of each burst.
    AtOnce,
    /// A burst's results only after the next burst's keys (the loop was busy reading).
    Late,
    /// Every other burst's results held back and delivered after the next burst's: results
    /// of an older request arrive after the newest's (each request's own in order, as one
    /// channel delivers them).
    Reversed,
}

/// An explorer whose analyses run on one worker kept between jobs on a thread of its own,
/// like the runtime's analysis thread; the test decides when its results are delivered.
struct Explorer {
    model: Model,
    jobs: mpsc::Sender<Job>,
    results: mpsc::Receiver<Vec<JobResult>>,
    held: Vec<JobResult>,
}

/// A worker kept between jobs on a thread of its own: each job's results come back
/// together, in the order the worker sent them.
fn worker_thread() -> (mpsc::Sender<Job>, mpsc::Receiver<Vec<JobResult>>) {
    let (jobs, job_rx) = mpsc::channel::<Job>();
    let (tx, results) = mpsc::channel();
    std::thread::Builder::new()
        .stack_size(quantscope::runtime::ANALYSIS_STACK)
        .spawn(move || {
            let mut worker = Worker::default();
            for job in job_rx {
                let mut out = Vec::new();
                worker.run(&job, |r| {
                    out.push(r);
                    true
                });
                if tx.send(out).is_err() {
                    return;
                }
            }
        })
        .expect("a thread");
    (jobs, results)
}

impl Explorer {
    fn new() -> Self {
        let mut e = Self::unanalysed();
        e.analyse(Delivery::AtOnce);
        e
    }

    /// The explorer before its first analysis.
    fn unanalysed() -> Self {
        // As `quantscope` with no file starts: the example loaded as its scenario, the
        // cursor on a line of its own after the rows.
        let mut model = Model::with_text(BUILTIN_EXAMPLE, None);
        let scenario = quantscope::teach::assets::scenario("quiet-loud").expect("built in");
        model.load_scenario(&scenario);
        model.status = None;
        let (jobs, results) = worker_thread();
        Self {
            model,
            jobs,
            results,
            held: Vec::new(),
        }
    }

    fn key(&mut self, code: KeyCode, modifiers: KeyModifiers) {
        if let Some(msg) = translate(&self.model, &KeyEvent::new(code, modifiers)) {
            update(&mut self.model, msg);
        }
    }

    /// Runs the analysis the model asked for, if any, and delivers results as `how` says.
    fn analyse(&mut self, how: Delivery) {
        let asked = self
            .model
            .effects
            .iter()
            .any(|e| matches!(e, Effect::Analyse));
        self.model.effects.retain(|e| !matches!(e, Effect::Analyse));
        let mut results = Vec::new();
        if asked {
            self.jobs.send(self.model.job()).expect("the worker runs");
            results = self.results.recv().expect("the worker answers");
        }
        match how {
            Delivery::AtOnce => self.deliver(results),
            Delivery::Late => {
                let earlier = std::mem::replace(&mut self.held, results);
                self.deliver(earlier);
            }
            Delivery::Reversed => {
                if self.held.is_empty() {
                    self.held = results;
                } else {
                    let earlier = std::mem::take(&mut self.held);
                    self.deliver(results);
                    self.deliver(earlier);
                }
            }
        }
    }

    fn deliver(&mut self, results: Vec<JobResult>) {
        for r in results {
            update(&mut self.model, Message::Analysed(r));
        }
    }

    /// Delivers whatever is held back, until nothing more is asked for.
    fn finish(&mut self) {
        let held = std::mem::take(&mut self.held);
        self.deliver(held);
        while self
            .model
            .effects
            .iter()
            .any(|e| matches!(e, Effect::Analyse))
        {
            self.analyse(Delivery::AtOnce);
        }
    }
}

/// The tester's keys from the built-in example: `Up Up Home`, Ctrl-K four times (no
/// values are left), then `x: 1, 2`.
fn delete_all_then_type() -> Vec<(KeyCode, KeyModifiers)> {
    let none = KeyModifiers::NONE;
    let mut keys = vec![
        (KeyCode::Up, none),
        (KeyCode::Up, none),
        (KeyCode::Home, none),
    ];
    keys.extend([(KeyCode::Char('k'), KeyModifiers::CONTROL); 4]);
    keys.extend("x: 1, 2".chars().map(|c| (KeyCode::Char(c), none)));
    keys
}

/// Replays the tester's sequence in bursts of `burst` keys (1 is a slow typist, the
/// whole sequence one paste-like burst), each burst's results delivered as `how` says.
fn replay(burst: usize, how: Delivery) -> Explorer {
    let mut e = Explorer::new();
    let keys = delete_all_then_type();
    for chunk in keys.chunks(burst) {
        for &(code, mods) in chunk {
            e.key(code, mods);
        }
        e.analyse(how);
        if matches!(how, Delivery::AtOnce) {
            // Once the results are in, the panes show the text's rows, or say they do not.
            let m = &e.model;
            let parsed = quantscope::io::text::parse_text(&m.text()).map(|p| p.shape());
            let shown = m.analysis.report.as_ref().map(|r| r.shape);
            assert!(
                m.stale() || parsed.as_ref().ok() == shown.as_ref(),
                "bursts of {burst}: the text parses to {parsed:?}, the panes show {shown:?} unmarked\n{}",
                m.text()
            );
        }
    }
    e.finish();
    e
}

#[test]
fn deleting_every_row_then_typing_shows_the_new_rows_at_every_speed_and_order() {
    // The deletion alone leaves "no values", marked stale.
    let mut e = Explorer::new();
    for &(code, mods) in &delete_all_then_type()[..7] {
        e.key(code, mods);
    }
    e.finish();
    let err = e.model.analysis.parse_error.as_ref().unwrap_or_else(|| {
        panic!(
            "no values: {:?} {:?} {:?}",
            e.model.text(),
            e.model.analysis.report.as_ref().map(|r| r.shape),
            e.model.analysis.failure
        )
    });
    assert!(err.to_string().contains("no values"), "{err}");
    assert!(e.model.stale());

    let n = delete_all_then_type().len();
    for burst in [1, 2, 3, 5, 7, 8, 11, n] {
        for how in [Delivery::AtOnce, Delivery::Late, Delivery::Reversed] {
            let e = replay(burst, how);
            let m = &e.model;
            let text = m.text();
            assert!(text.trim_end().ends_with("x: 1, 2"), "{text}");
            assert!(
                !text.contains("quiet:") && !text.contains("loud:"),
                "{text}"
            );
            let r = m.analysis.report.as_ref().expect("a report");
            let shape = m.analysis.matrix.as_ref().map(|x| x.shape());
            assert_eq!(
                (r.shape, shape),
                ((1, 2), Some((1, 2))),
                "bursts of {burst}, results {how:?}: the panes show the deleted rows (labels {:?}), stale {}",
                r.channels
                    .iter()
                    .map(|c| c.label.clone())
                    .collect::<Vec<_>>(),
                m.stale()
            );
            assert_eq!(r.channels[0].label.as_deref(), Some("x"), "{burst} {how:?}");
            assert!(!m.stale(), "{burst} {how:?}");
            assert!(!m.analysis.pending, "{burst} {how:?}");
            let title = title(m);
            assert!(title.contains("1x2"), "{burst} {how:?}: {title}");
        }
    }
}

/// The title line's text at 80 columns.
fn title(m: &Model) -> String {
    let theme = quantscope::ui::Theme::new(false, false);
    quantscope::ui::status::title_spans(m, &theme, 80)
        .iter()
        .map(|s| s.content.to_string())
        .collect()
}

/// Runs the model's effects on the real runtime (its analysis thread keeps one worker
/// between jobs) until every result has arrived.
fn settle_on(rt: &mut quantscope::runtime::Runtime, m: &mut Model) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        for effect in std::mem::take(&mut m.effects) {
            rt.perform(m, effect).expect("the analysis thread runs");
        }
        while let Some(msg) = rt.arrived() {
            update(m, msg);
        }
        if m.effects.is_empty() && !m.analysis.pending && !m.analysis.busy && !rt.loading() {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the analysis never finished"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

#[test]
fn on_the_runtime_deleting_every_row_then_typing_shows_the_new_rows_at_every_speed() {
    let n = delete_all_then_type().len();
    for burst in [1, 2, 4, 7, n] {
        let mut rt = quantscope::runtime::Runtime::start().expect("a thread");
        let mut e = Explorer::unanalysed();
        let m = &mut e.model;
        settle_on(&mut rt, m);
        for chunk in delete_all_then_type().chunks(burst) {
            for &(code, mods) in chunk {
                if let Some(msg) = translate(m, &KeyEvent::new(code, mods)) {
                    update(m, msg);
                }
            }
            settle_on(&mut rt, m);
        }
        let r = m.analysis.report.as_ref().expect("a report");
        assert_eq!(
            r.shape,
            (1, 2),
            "bursts of {burst}: the panes show the deleted rows {:?}, stale {}",
            r.channels
                .iter()
                .map(|c| c.label.clone())
                .collect::<Vec<_>>(),
            m.stale()
        );
        assert!(title(m).contains("1x2"), "{}", title(m));
    }
}

/// Runs the real binary with `args`.
fn quantscope(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_quantscope"))
        .args(args)
        .env("QUANTSCOPE_CONFIG", "/dev/null")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("the binary runs")
}

/// How often the HTML report `html` has a Comparison section, and the section links.
fn comparisons(html: &str) -> (usize, String) {
    let nav = html
        .split_once("<nav")
        .and_then(|(_, rest)| rest.split_once("</nav>"))
        .map(|(nav, _)| nav.to_string())
        .unwrap_or_default();
    (html.matches("<section id=\"comparison\">").count(), nav)
}

#[test]
fn the_comparison_section_is_written_once_in_html_and_pdf() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("ab.html");
    let out = quantscope(&[
        "report",
        "--compare",
        "lesson,granularity=channel",
        "-f",
        "html",
        "-o",
        html.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&html).unwrap();
    let (sections, nav) = comparisons(&text);
    assert_eq!(sections, 1, "links: {nav}");
    assert_eq!(nav.matches("Comparison").count(), 1, "{nav}");
    // The one section has the chart and the table's words.
    let section = &text[text.find("<section id=\"comparison\">").unwrap()..];
    let section = &section[..section.find("</section>").unwrap()];
    assert!(section.contains("<svg"), "the A/B chart");
    assert!(section.contains("What differs"), "{section}");

    // The PDF, read by poppler where it is installed.
    let pdf = dir.path().join("ab.pdf");
    let out = quantscope(&[
        "report",
        "--compare",
        "lesson,granularity=channel",
        "-f",
        "pdf",
        "-o",
        pdf.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    if let Ok(read) = std::process::Command::new("pdftotext")
        .args(["-layout", pdf.to_str().unwrap(), "-"])
        .output()
    {
        let text = String::from_utf8_lossy(&read.stdout);
        let headings = text.lines().filter(|l| l.trim() == "Comparison").count();
        assert_eq!(headings, 1, "{text}");
    }
}

#[test]
fn the_explorers_export_writes_the_comparison_once() {
    use quantscope::app::keymap::Action;
    use quantscope::app::{Direction, Overlay, Setting};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ab.html");
    let mut m = explorer::builtin_model();
    explorer::act(&mut m, Action::Pin);
    explorer::act(
        &mut m,
        Action::Change(Setting::Granularity, Direction::Forward),
    );
    explorer::act(&mut m, Action::Export);
    assert!(matches!(m.overlay, Some(Overlay::Export(_))));
    m.overlay = Some(Overlay::Export(Box::new(ratatui_textarea::TextArea::from(
        [path.display().to_string()],
    ))));
    explorer::act(&mut m, Action::Yes);
    for effect in std::mem::take(&mut m.effects) {
        if let Some(msg) = quantscope::runtime::perform_now(effect) {
            update(&mut m, msg);
        }
    }
    let text = std::fs::read_to_string(&path).expect("exported");
    let (sections, nav) = comparisons(&text);
    assert_eq!(sections, 1, "links: {nav}");
}

#[test]
fn a_quantized_gguf_tensor_does_what_reports_flags_ask_on_its_dequantized_values() {
    let gguf = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/gguf/types.gguf");
    for (flags, section) in [
        (&["--formats"][..], "Formats"),
        (
            &["--compare", "lesson,granularity=channel"][..],
            "Comparison",
        ),
        (&["--explain"][..], "Worked arithmetic"),
        (&["--values"][..], "Values"),
    ] {
        let mut args = vec!["report", gguf, "--tensor", "q4_k"];
        args.extend_from_slice(flags);
        let out = quantscope(&args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{flags:?}: {stderr}");
        assert!(
            stdout.lines().any(|l| l == section),
            "{flags:?} was dropped: no {section} section in\n{stdout}"
        );
        // Said on stderr: what the analysis runs on, and how to see the stored codes.
        assert!(stderr.contains("dequantized values"), "{flags:?}: {stderr}");
        assert!(stderr.contains(flags[0]), "{flags:?}: {stderr}");
    }
    // Without them, the stored codes as before.
    let out = quantscope(&["report", gguf, "--tensor", "q4_k"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("as stored in"));
}

/// Two rows of 100 values: neither Q2_K to Q6_K's super-blocks of 256 nor their llama.cpp
/// fallbacks' blocks of 32 divide them, so those formats cannot be measured.
fn rows_of_100() -> quantscope::core::Matrix {
    let rows: Vec<Vec<f32>> = (1..=2)
        .map(|r| {
            (0..100)
                .map(|i| (i as f32 * 0.1 * r as f32).sin())
                .collect()
        })
        .collect();
    let refs: Vec<&[f32]> = rows.iter().map(Vec::as_slice).collect();
    quantscope::core::Matrix::from_rows(&refs).unwrap()
}

fn rows_of_100_text() -> String {
    quantscope::io::text::format_text(&rows_of_100())
}

#[test]
fn an_unmeasured_format_has_no_bits_per_weight_and_sorts_after_every_measured_one() {
    use quantscope::core::format_ladder::{Selection, format_ladder};
    let l = format_ladder(&rows_of_100(), &Selection::all(), None);
    let q4k = l.entries.iter().find(|e| e.name == "q4_k").unwrap();
    assert!(q4k.measured().is_none());
    let json = serde_json::to_value(q4k).unwrap();
    assert!(
        json["bits_per_weight"].is_null(),
        "an invented figure: {json}"
    );
    assert!(json["total_bytes"].is_null(), "{json}");
    assert_eq!(json["parts"], serde_json::json!([]), "{json}");
    let first = l
        .entries
        .iter()
        .position(|e| e.measured().is_none())
        .unwrap();
    assert!(
        l.entries[first..].iter().all(|e| e.measured().is_none()),
        "{:?}",
        l.entries.iter().map(|e| &e.name).collect::<Vec<_>>()
    );
}

#[test]
fn report_formats_shows_no_figure_for_an_unmeasured_format_in_any_output() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("w.txt");
    std::fs::write(&file, rows_of_100_text()).unwrap();
    let run = |format: &str| {
        let out = quantscope(&["report", file.to_str().unwrap(), "--formats", "-f", format]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    for format in ["table", "markdown", "html"] {
        // Markdown escapes the underscores of names.
        let text = run(format).replace("\\_", "_");
        let reason = "q4_k needs rows of a multiple of 256 values and its llama.cpp fallback q5_0 a multiple of 32; rows of 100 fit neither";
        assert!(
            text.contains(reason),
            "{format}: the reason is given\n{text}"
        );
        // No line gives q4_k a figure: not in the table, not in the arithmetic.
        let figured: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("q4_k") && !l.contains(reason))
            .collect();
        assert!(
            figured.is_empty(),
            "{format}: q4_k has a figure: {figured:?}"
        );
    }
    let json: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    let formats = json["formats"].as_array().unwrap();
    let q4k = formats.iter().find(|e| e["name"] == "q4_k").unwrap();
    assert!(q4k["bits_per_weight"].is_null(), "{q4k}");
    assert!(q4k["skipped"].as_str().unwrap().contains("multiple of 256"));
    let first = formats.iter().position(|e| e["rmse"].is_null()).unwrap();
    assert!(formats[first..].iter().all(|e| e["rmse"].is_null()));
    assert!(!run("csv").lines().next().unwrap().contains("q4_k"));
}

#[test]
fn the_format_ladder_pane_shows_no_figure_for_an_unmeasured_format() {
    use quantscope::app::keymap::Action;
    let mut m = Model::with_text(&rows_of_100_text(), None);
    explorer::act(&mut m, Action::Formats);
    let format_ladder = m.analysis.format_ladder.clone().expect("the format ladder");
    let at = format_ladder
        .entries
        .iter()
        .position(|e| e.name == "q4_k")
        .unwrap();
    let first = format_ladder
        .entries
        .iter()
        .position(|e| e.measured().is_none())
        .unwrap();
    assert!(
        format_ladder.entries[first..]
            .iter()
            .all(|e| e.measured().is_none())
    );
    for _ in 0..at {
        explorer::act(&mut m, Action::Down);
    }
    let s = screen_text::screen(&m, 80, 24);
    let row = s.lines().find(|l| l.contains("q4_k")).expect("q4_k listed");
    // The name, then straight its reason: no figure between.
    let after = row.split("q4_k").nth(1).unwrap().trim_start();
    assert!(after.starts_with("not measured"), "{s}");
    assert!(
        !s.contains("bits/weight ="),
        "the arithmetic of an invented figure\n{s}"
    );
    assert!(s.contains("multiple of 256"), "the reason\n{s}");
}

/// The path of the save or export the model asked for.
fn written_path(m: &Model) -> Option<std::path::PathBuf> {
    m.effects.iter().find_map(|e| match e {
        Effect::Save { path, .. } | Effect::Export { path, .. } => Some(path.clone()),
        _ => None,
    })
}

#[test]
fn typing_in_a_name_prompt_replaces_the_proposed_name() {
    // Export (Alt-E): typing a whole name replaces "quantscope-report.html".
    let mut m = explorer::builtin_model();
    press(&mut m, KeyCode::Char('E'), KeyModifiers::ALT);
    type_in(&mut m, "/tmp/x.html");
    press(&mut m, KeyCode::Enter, KeyModifiers::NONE);
    assert_eq!(
        written_path(&m),
        Some("/tmp/x.html".into()),
        "{:?}",
        m.status
    );

    // Save as (Ctrl-O): the same; a paste replaces it too.
    let mut m = explorer::builtin_model();
    press(&mut m, KeyCode::Char('o'), KeyModifiers::CONTROL);
    type_in(&mut m, "mine.txt");
    press(&mut m, KeyCode::Enter, KeyModifiers::NONE);
    assert_eq!(written_path(&m), Some("mine.txt".into()), "{:?}", m.status);
    let mut m = explorer::builtin_model();
    press(&mut m, KeyCode::Char('o'), KeyModifiers::CONTROL);
    update(&mut m, Message::Paste("pasted.txt".into()));
    press(&mut m, KeyCode::Enter, KeyModifiers::NONE);
    assert_eq!(written_path(&m), Some("pasted.txt".into()));

    // A cursor key first keeps the proposed name to edit: Home, then a prefix.
    let mut m = explorer::builtin_model();
    press(&mut m, KeyCode::Char('E'), KeyModifiers::ALT);
    press(&mut m, KeyCode::Home, KeyModifiers::NONE);
    type_in(&mut m, "a-");
    press(&mut m, KeyCode::Enter, KeyModifiers::NONE);
    assert_eq!(written_path(&m), Some("a-quantscope-report.html".into()));

    // The prompt says so.
    let mut m = explorer::builtin_model();
    press(&mut m, KeyCode::Char('E'), KeyModifiers::ALT);
    let s = screen_text::screen(&m, 80, 24);
    assert!(s.contains("replaces it"), "{s}");
}

#[test]
fn why_an_export_failed_is_shown_whole_at_80_columns() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-directory").join("report.html");
    let mut m = explorer::builtin_model();
    press(&mut m, KeyCode::Char('E'), KeyModifiers::ALT);
    type_in(&mut m, missing.to_str().unwrap());
    press(&mut m, KeyCode::Enter, KeyModifiers::NONE);
    for effect in std::mem::take(&mut m.effects) {
        if let Some(msg) = quantscope::runtime::perform_now(effect) {
            update(&mut m, msg);
        }
    }
    let why = m.status.clone().expect("why it failed");
    assert!(why.starts_with("not exported"), "{why}");
    assert!(why.len() > 80, "a reason longer than the screen: {why}");
    // Every word of it is on the 80-column screen, in order.
    let s = screen_text::screen(&m, 80, 24);
    // The prompt's box: between its thick borders.
    let flat = screen_text::boxed_words(&s);
    let want = why.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains(&want), "{want:?} is cut on\n{s}");
}

/// The words of `screen` in order, without the boxes' lines.
fn words(screen: &str) -> String {
    screen
        .split(|c: char| c.is_whitespace() || ('\u{2500}'..='\u{257f}').contains(&c))
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Presses `code` `n` times, looking at the screen at 80x24 after each, until `seen` is on
/// it; the screen at the end.
fn press_until(m: &mut Model, code: KeyCode, n: usize, seen: &str) -> String {
    let mut s = screen_text::screen(m, 80, 24);
    for _ in 0..n {
        if words(&s).contains(seen) {
            break;
        }
        press(m, code, KeyModifiers::NONE);
        s = screen_text::screen(m, 80, 24);
    }
    s
}

/// Practice mode on the first exercise, on its step `step` (1-based).
fn practice_at(step: usize) -> Model {
    let mut m = explorer::builtin_model();
    quantscope::app::update::start_practice(&mut m, 0);
    for _ in 1..step {
        press(&mut m, KeyCode::PageDown, KeyModifiers::NONE);
    }
    m
}

#[test]
fn practice_scrolls_to_the_whole_worked_arithmetic_after_a_reveal_at_80x24() {
    // Step 4: the quiet row's own scale, worked out value by value.
    let mut m = practice_at(4);
    press(&mut m, KeyCode::F(3), KeyModifiers::NONE);
    let last = "-0.15 / 0.0214286 = -7";
    let s = screen_text::screen(&m, 80, 24);
    assert!(!words(&s).contains(last), "fits without scrolling?\n{s}");
    let s = press_until(&mut m, KeyCode::Down, 20, last);
    assert!(
        words(&s).contains(last),
        "Down never shows the fourth value\n{s}"
    );
    // Up goes back to the verdict.
    let s = press_until(&mut m, KeyCode::Up, 20, "revealed: 0.021429");
    assert!(words(&s).contains("revealed: 0.021429"), "{s}");
}

#[test]
fn practice_scrolls_to_the_whole_hint_and_why_of_step_9_at_80x24() {
    let mut m = practice_at(9);
    press(&mut m, KeyCode::F(2), KeyModifiers::NONE);
    let p = m.practice.as_ref().unwrap();
    let hint = p.session.hint().expect("a hint").to_string();
    let end: Vec<&str> = hint.split_whitespace().collect();
    let end = end[end.len().saturating_sub(4)..].join(" ");
    let s = press_until(&mut m, KeyCode::Down, 20, &end);
    assert!(
        words(&s).contains(&end),
        "the hint's end {end:?} is cut\n{s}"
    );
    press(&mut m, KeyCode::F(3), KeyModifiers::NONE);
    let p = m.practice.as_ref().unwrap();
    let why = p.session.explanation().expect("its why").to_string();
    let end: Vec<&str> = why.split_whitespace().collect();
    let end = end[end.len().saturating_sub(4)..].join(" ");
    let s = press_until(&mut m, KeyCode::Down, 30, &end);
    assert!(
        words(&s).contains(&end),
        "the why's end {end:?} is cut\n{s}"
    );
}

#[test]
fn the_worked_arithmetic_pane_scrolls_to_every_value_at_80x24() {
    let mut m = Model::with_text("", None);
    let scenario = quantscope::teach::assets::scenario("gaussian-16").unwrap();
    m.load_scenario(&scenario);
    quantscope::runtime::settle(&mut m);
    press(&mut m, KeyCode::F(12), KeyModifiers::NONE);
    // Focus the pane, then page down to the 64th value.
    press(&mut m, KeyCode::Tab, KeyModifiers::NONE);
    press(&mut m, KeyCode::Tab, KeyModifiers::NONE);
    let e = m.explanation.clone().expect("worked arithmetic");
    // The arithmetic ends with the channel's MAE, after its 64 values.
    let end = "mean |error| (MAE)";
    assert!(!words(&screen_text::screen(&m, 80, 24)).contains(end));
    let s = press_until(&mut m, KeyCode::PageDown, 20, end);
    assert!(
        words(&s).contains(end),
        "channel {}'s arithmetic is cut\n{s}",
        e.row
    );
    // PgUp comes back at once (the end was not scrolled past).
    let top = "zero point = 0 (symmetric)";
    let viewport = quantscope::ui::viewport(
        ratatui::layout::Rect::new(0, 0, 80, 24),
        &m,
        &quantscope::ui::Theme::new(false, false),
    );
    update(&mut m, Message::Viewport(viewport));
    assert!(viewport.detail > 0 && m.detail_scroll <= viewport.detail);
    for _ in 0..5 {
        press(&mut m, KeyCode::PageDown, KeyModifiers::NONE);
    }
    // Past the end, one PgUp per page back: as many as it took down.
    let pages = usize::from(viewport.detail).div_ceil(10);
    for _ in 0..pages {
        press(&mut m, KeyCode::PageUp, KeyModifiers::NONE);
    }
    assert!(words(&screen_text::screen(&m, 80, 24)).contains(top));
}

#[test]
fn demo_step_11_shows_the_group_16_rung_its_caption_names_at_80x24() {
    let script = quantscope::teach::script::demo_script("quiet-row").unwrap();
    let mut m = Model::with_text("", None);
    m.demo = Some(quantscope::app::demo::Demo::new(script));
    quantscope::app::demo::go_to(&mut m, 11);
    quantscope::runtime::settle(&mut m);
    assert!(m.caption.as_deref().unwrap().contains("Groups of 16"));
    let s = screen_text::screen(&m, 80, 24);
    let rung = s.lines().any(|l| {
        let w: Vec<&str> = l.split_whitespace().collect();
        w.iter()
            .position(|x| x.ends_with("group:16"))
            .is_some_and(|i| {
                w.get(i + 2).is_some_and(|b| b.ends_with('B'))
                    || w.get(i + 3).is_some_and(|b| *b == "B")
            })
    });
    assert!(rung, "no group:16 rung in the Ladder pane\n{s}");
}

#[test]
fn a_b_utilization_rows_keep_the_channels_name_at_80x24() {
    use quantscope::app::keymap::Action;
    let mut m = explorer::builtin_model();
    // A: per channel; B: per tensor, where the quiet row collapses.
    explorer::act(
        &mut m,
        Action::Change(
            quantscope::app::Setting::Granularity,
            quantscope::app::Direction::Forward,
        ),
    );
    explorer::act(&mut m, Action::Pin);
    for _ in 0..2 {
        explorer::act(
            &mut m,
            Action::Change(
                quantscope::app::Setting::Granularity,
                quantscope::app::Direction::Forward,
            ),
        );
    }
    assert!(m.analysis.comparison.is_some());
    let s = screen_text::screen(&m, 80, 24);
    // The Utilization pane is the left half.
    let left: Vec<String> = s.lines().map(|l| l.chars().take(38).collect()).collect();
    for name in ["quiet", "loud"] {
        assert!(
            left.iter()
                .any(|l| l.contains(&format!("{name} ")) && l.contains("/15")),
            "{name} is cut in Utilization\n{s}"
        );
    }
}

#[test]
fn practice_feedback_quotes_the_answer_it_judges_not_the_one_before() {
    let mut m = practice_at(1);
    type_in(&mut m, "0.4");
    press(&mut m, KeyCode::Enter, KeyModifiers::NONE);
    let s = screen_text::screen(&m, 80, 24);
    assert!(
        s.contains("0.4: "),
        "the judged answer beside its verdict\n{s}"
    );
    type_in(&mut m, "abc");
    press(&mut m, KeyCode::Enter, KeyModifiers::NONE);
    let s = screen_text::screen(&m, 80, 24);
    let line = s
        .lines()
        .find(|l| l.contains("\"abc\""))
        .expect("the verdict on abc");
    assert!(
        !line.contains("0.4"),
        "the previous answer is repeated: {line}"
    );
}

/// The hint line (the screen's last) at `width` x 24.
fn hint_line(m: &Model, width: u16) -> String {
    screen_text::screen(m, width, 24)
        .lines()
        .last()
        .unwrap_or("")
        .to_string()
}

#[test]
fn the_demo_practice_and_format_ladder_are_found_from_the_hint_line() {
    let mut m = explorer::builtin_model();
    for width in [80, 120] {
        let hints = hint_line(&m, width);
        for (key, what) in [
            ("Alt-m", "practice"),
            ("Alt-F", "formats"),
            ("Alt-D", "demo"),
        ] {
            assert!(
                hints.contains(&format!("{key} {what}")),
                "{what} at {width} columns: {hints}"
            );
        }
    }
    // The panes' own keys.
    press(&mut m, KeyCode::Tab, KeyModifiers::NONE);
    press(&mut m, KeyCode::Tab, KeyModifiers::NONE);
    let hints = hint_line(&m, 80);
    for (key, what) in [("m", "practice"), ("F", "formats"), ("D", "demo")] {
        assert!(hints.contains(&format!("{key} {what}")), "{hints}");
    }
    // D plays the built-in demo from its first step.
    press(&mut m, KeyCode::Char('D'), KeyModifiers::NONE);
    let demo = m.demo.as_ref().expect("the demo plays");
    assert_eq!(demo.shown, 1);
    // From the editor, with unsaved text, Alt-D asks first.
    let mut m = explorer::builtin_model();
    type_in(&mut m, "#");
    press(&mut m, KeyCode::Char('D'), KeyModifiers::ALT);
    assert!(
        m.demo.is_none(),
        "the unsaved text would be replaced unasked"
    );
    press(&mut m, KeyCode::Char('y'), KeyModifiers::NONE);
    assert!(m.demo.is_some());
}

#[test]
fn the_builtin_example_shows_groups_and_keeps_the_lessons_numbers() {
    use quantscope::core::config::{Config, Granularity};
    let mut m = explorer::builtin_model();
    let r = m.analysis.report.clone().unwrap();
    // The lesson's numbers: the quiet row's MAE is 0.1 per tensor, 0.005357 per channel.
    let at = |g: Granularity| r.ladder.iter().find(|x| x.granularity == g).cloned();
    let tensor = at(Granularity::Tensor).unwrap();
    let channel = at(Granularity::Channel).unwrap();
    assert!((tensor.channels[0].mae - 0.1).abs() < 1e-9);
    assert!((channel.channels[0].mae - 0.005_357).abs() < 1e-6);
    // A rung of groups smaller than the row of 4, its numbers those of the configuration.
    let group = r
        .ladder
        .iter()
        .find(|x| matches!(x.granularity, Granularity::Group(g) if g < 4))
        .expect("a rung of groups on rows of 4");
    let config = Config {
        granularity: group.granularity,
        ..r.config
    };
    let direct = quantscope::core::analyse(m.analysis.matrix.as_ref().unwrap(), &config).unwrap();
    assert_eq!(group.overall, direct.overall);
    // F7 goes tensor, channel, then groups that fit the row.
    press(&mut m, KeyCode::F(7), KeyModifiers::NONE);
    press(&mut m, KeyCode::F(7), KeyModifiers::NONE);
    quantscope::runtime::settle(&mut m);
    assert_eq!(m.config.granularity, group.granularity);
    let s = screen_text::screen(&m, 80, 24);
    assert!(!s.contains("no group:32 rung"), "{s}");
    assert!(s.contains(&format!("● {}", group.granularity)), "{s}");
}

#[test]
fn captions_quote_their_numbers_from_the_report() {
    use quantscope::core::config::{Config, Granularity};
    use quantscope::core::{Options, analyse_with};
    // The example's look: the quiet row's MAE falls 0.1 / 0.005357 = 18.7-fold.
    let m = Explorer::new().model;
    let caption = m.caption.clone().expect("the example's caption");
    assert!(!caption.contains("twentyfold"), "{caption}");
    assert!(caption.contains("18.7"), "{caption}");
    // The demo's captions quote the reports of their steps, and have no placeholder left.
    let script = quantscope::teach::script::demo_script("quiet-row").unwrap();
    for step in &script.steps {
        let c = step.caption.as_deref().unwrap_or("");
        assert!(
            !c.contains('{') && !c.contains('}'),
            "step {}: {c}",
            step.number
        );
    }
    let matrix = quantscope::cli::BUILTIN_EXAMPLE;
    let matrix = quantscope::io::text::parse_text(matrix).unwrap();
    let r = analyse_with(
        &matrix,
        &Config {
            granularity: Granularity::Channel,
            ..Config::default()
        },
        Options::default(),
    )
    .unwrap();
    let at = |g: Granularity| r.ladder.iter().find(|x| x.granularity == g).unwrap();
    let step7 = script.steps[6].caption.as_deref().unwrap();
    let tensor = format!("{:.2}", at(Granularity::Tensor).channels[0].mae);
    assert!(step7.contains("0.1"), "{step7} ({tensor})");
    assert!(step7.contains("0.0054"), "{step7}");
    let step8 = script.steps[7].caption.as_deref().unwrap();
    assert!(
        step8.contains(&format!(
            "{} bits per weight",
            at(Granularity::Channel).memory.bits_per_weight
        )),
        "{step8}"
    );
}

#[test]
fn a_documented_key_clears_the_example_to_paste_over_and_undo_brings_it_back() {
    let mut m = Explorer::new().model;
    let example = m.text();
    // It is in the help and on the hint line, from the keymap.
    let help: Vec<(String, String)> = quantscope::ui::help::help_lines();
    let (keys, _) = help
        .iter()
        .find(|(_, what)| what.starts_with("clear all"))
        .expect("clear all in the help");
    let key = keys.split(", ").next().unwrap().to_string();
    assert!(
        hint_line(&m, 80).contains(&format!("{key} clear")),
        "{}",
        hint_line(&m, 80)
    );
    // The key, then a paste: the pasted rows alone.
    let (code, mods) = match key.strip_prefix("Ctrl-") {
        Some(k) => (
            KeyCode::Char(k.to_ascii_lowercase().chars().next().unwrap()),
            KeyModifiers::CONTROL,
        ),
        None => panic!("an unexpected key {key}"),
    };
    press(&mut m, code, mods);
    assert_eq!(m.text(), "");
    update(&mut m, Message::Paste("a: 1, 2\nb: 3, 4\n".into()));
    quantscope::runtime::settle(&mut m);
    assert_eq!(m.analysis.report.as_ref().unwrap().shape, (2, 2));
    // Undo twice: the example again.
    press(&mut m, KeyCode::Char('z'), KeyModifiers::CONTROL);
    press(&mut m, KeyCode::Char('z'), KeyModifiers::CONTROL);
    assert_eq!(m.text(), example);
}

#[test]
fn the_tensor_picker_opens_on_the_first_matrix_not_a_bias() {
    use crate::common::files;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.safetensors");
    let bias = files::f32_bytes(&[0.1, 0.2, 0.3]);
    let weight = files::f32_bytes(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    std::fs::write(
        &path,
        files::safetensors_bytes(&[
            ("a.bias", "F32", &[3], bias),
            ("a.weight", "F32", &[2, 3], weight),
        ]),
    )
    .unwrap();
    let m = explorer::open_picker(path);
    let Some(quantscope::app::Overlay::Tensors(picker)) = &m.overlay else {
        panic!("no picker")
    };
    assert_eq!(picker.visible()[picker.selected].name, "a.weight");
}

#[test]
fn the_help_at_40x10_cuts_no_word() {
    let mut m = explorer::builtin_model();
    update(&mut m, Message::Resized(40, 10));
    press(&mut m, KeyCode::F(1), KeyModifiers::NONE);
    let theme = quantscope::ui::Theme::new(false, false);
    let viewport = quantscope::ui::viewport(ratatui::layout::Rect::new(0, 0, 40, 10), &m, &theme);
    update(&mut m, Message::Viewport(viewport));
    assert!(viewport.help > 0);
    let mut seen = std::collections::HashSet::new();
    for _ in 0..=viewport.help {
        let s = screen_text::screen(&m, 40, 10);
        for w in words(&s).split(' ') {
            seen.insert(w.to_string());
        }
        press(&mut m, KeyCode::Down, KeyModifiers::NONE);
    }
    let mut cut = Vec::new();
    for (keys, what) in quantscope::ui::help::help_lines() {
        for w in what.split_whitespace().chain(keys.split_whitespace()) {
            if !seen.contains(w) {
                cut.push(w.to_string());
            }
        }
    }
    assert!(cut.is_empty(), "words never shown whole at 40x10: {cut:?}");
}
