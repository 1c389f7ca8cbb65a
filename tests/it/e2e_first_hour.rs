//! End-to-end, at 80x24: what a tester tripped on in the first hour, driven in the real
//! binary in tmux as a user would (keys, pastes, resizes) and read from the screen.

use std::time::Duration;

use crate::common::tmux;

use tmux::{Tmux, app_command};

/// The title line (the screen's first).
fn title(screen: &str) -> &str {
    screen.lines().next().unwrap_or("")
}

/// Waits for the built-in example's panes.
fn started(t: &Tmux) {
    t.wait_for("the built-in example", |s| {
        s.contains("quantscope") && s.contains("COLLAPSED") && title(s).contains("2x4")
    });
}

#[test]
fn deleting_every_row_then_typing_shows_the_new_row_at_every_speed() {
    // All at once (as tmux sends a literal string), then a key every 40 ms and every 200 ms.
    for (run, gap) in [None, Some(40), Some(200)].into_iter().enumerate() {
        let t = Tmux::start(&format!("delete-type-{run}"), &app_command(""), 80, 24);
        started(&t);
        t.keys(&["Up", "Up", "Home", "C-k", "C-k", "C-k", "C-k"]);
        t.wait_for("no values, marked stale", |s| {
            s.contains("no values") && title(s).contains("stale")
        });
        match gap {
            None => t.literal("x: 1, 2"),
            Some(ms) => {
                for c in "x: 1, 2".chars() {
                    t.literal(&c.to_string());
                    std::thread::sleep(Duration::from_millis(ms));
                }
            }
        }
        let s = t.wait_for("the new row, without another key", |s| {
            title(s).contains("1x2") && !title(s).contains("stale")
        });
        // Utilization's rows end in levels used of 15 (int4).
        let rows: Vec<&str> = s.lines().filter(|l| l.contains("/15")).collect();
        assert!(
            rows.iter()
                .all(|l| !l.contains("quiet") && !l.contains("loud")),
            "{gap:?}: the deleted rows are shown\n{s}"
        );
        assert!(rows.iter().any(|l| l.contains("x ")), "{gap:?}\n{s}");
    }
}

#[test]
fn an_export_name_typed_replaces_the_proposed_one_and_a_failure_says_why_in_full() {
    let dir = tempfile::tempdir().unwrap();
    let t = Tmux::start("export-name", &app_command(""), 80, 24);
    started(&t);
    // Alt-E, a name typed over the proposed one, Enter.
    let wanted = dir.path().join("x.html");
    t.keys(&["M-E"]);
    t.wait_for("the export prompt", |s| s.contains("replaces it"));
    t.literal(wanted.to_str().unwrap());
    t.keys(&["Enter"]);
    t.wait_for("the export to finish", |s| {
        s.contains("exported the report to")
    });
    assert!(wanted.exists(), "the typed name was written");
    // A name in a directory that does not exist: the reason, whole, in the prompt.
    let bad = dir.path().join("no-such-directory").join("report.html");
    t.keys(&["M-E"]);
    t.wait_for("the export prompt", |s| s.contains("replaces it"));
    t.literal(bad.to_str().unwrap());
    t.keys(&["Enter"]);
    let s = t.wait_for("why it failed", |s| s.contains("not exported"));
    // The prompt's box: between its thick borders.
    let flat = crate::common::screen::boxed_words(&s);
    assert!(flat.contains("No such file or directory"), "{s}");
    assert!(flat.contains("no-such-directory/report.html"), "{s}");
    t.keys(&["Escape"]);
    t.wait_for("the prompt to close", |s| !s.contains("replaces it"));
    t.keys(&["C-q"]);
    t.wait_for("the shell", |s| s.contains("exit status 0"));
}

/// The words of `screen` in order, without the boxes' lines.
fn words(screen: &str) -> String {
    screen
        .split(|c: char| c.is_whitespace() || ('\u{2500}'..='\u{257f}').contains(&c))
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn practice_scrolls_to_a_revealed_steps_worked_arithmetic() {
    let t = Tmux::start("practice-scroll", &app_command("practice"), 80, 24);
    t.wait_for("practice", |s| s.contains("Step 1 of 9"));
    // Step 4: the quiet row's own scale; F3 reveals it with its worked arithmetic.
    t.keys(&["PageDown", "PageDown", "PageDown"]);
    t.wait_for("step 4", |s| s.contains("Step 4 of 9"));
    t.keys(&["F3"]);
    let s = t.wait_for("the reveal", |s| s.contains("revealed: 0.021429"));
    let last = "-0.15 / 0.0214286 = -7";
    assert!(!words(&s).contains(last), "it fits without scrolling?\n{s}");
    assert!(
        s.contains("Down: more"),
        "the border says how to see more\n{s}"
    );
    for _ in 0..12 {
        t.keys(&["Down"]);
    }
    let s = t.wait_for("the fourth value", |s| words(s).contains(last));
    assert!(s.contains("Up: back") || s.contains("Up/Down"), "{s}");
    // Scrolled past the end, one Up shows the line before the last again.
    t.keys(&["Up"]);
    t.wait_for("one line back", |s| !words(s).contains("mean |error|"));
}

#[test]
fn demo_step_11_brings_the_group_16_rung_into_the_ladder() {
    let t = Tmux::start("demo-rung", &app_command("demo"), 80, 24);
    t.wait_for("the demo", |s| s.contains("step 1 of 12"));
    for _ in 0..10 {
        t.keys(&["Space"]);
    }
    let s = t.wait_for("step 11 and its rung", |s| {
        s.contains("step 11 of 12")
            && s.lines()
                .any(|l| l.contains("group:16") && l.contains(" B "))
    });
    assert!(s.contains("Groups of 16"), "{s}");
}

#[test]
fn quitting_after_a_resize_leaves_no_fragments_in_the_shell() {
    let t = Tmux::start("resize-quit", &app_command(""), 80, 24);
    started(&t);
    assert!(t.resize(120, 40), "tmux resized the window");
    t.wait_for("the panes at 120x40", |s| {
        s.lines().count() >= 40 && s.lines().next().is_some_and(|l| l.contains("2x4"))
    });
    t.keys(&["C-q"]);
    let s = t.wait_for("the shell", |s| s.contains("exit status 0"));
    let left: Vec<&str> = s
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.contains("exit status"))
        .collect();
    assert!(left.is_empty(), "fragments of the explorer were left:\n{s}");
}

#[test]
fn a_dumb_terminal_is_refused_with_a_line_naming_report() {
    let command = format!(
        "env TERM=dumb {} ; echo \"exit status $?\"; sleep 60",
        env!("CARGO_BIN_EXE_quantscope")
    );
    let t = Tmux::start("dumb", &command, 80, 24);
    let s = t.wait_for("the refusal", |s| s.contains("exit status"));
    assert!(s.contains("exit status 2"), "{s}");
    let message: Vec<&str> = s
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.contains("exit status"))
        .collect();
    assert_eq!(message.len(), 1, "one line: {message:?}");
    assert!(message[0].contains("TERM=dumb"), "{s}");
    assert!(message[0].contains("quantscope report"), "{s}");
}

#[test]
fn the_command_palette_finds_and_plays_the_demo() {
    let t = Tmux::start("palette", &app_command(""), 80, 24);
    started(&t);
    t.keys(&["C-p"]);
    t.wait_for("the palette", |s| s.contains("Commands: type to find"));
    t.literal("demo");
    t.wait_for("the demo command", |s| {
        s.lines()
            .any(|l| l.contains("▶ demo") && l.contains("Alt-D"))
    });
    t.keys(&["Enter"]);
    t.wait_for("the demo's first step", |s| s.contains("step 1 of 12"));
}

/// Where `text` is on `screen` on a line that also holds `with` within its first `before`
/// columns: tmux's 1-based column and row.
fn position(screen: &str, text: &str, with: &str, before: usize) -> (usize, usize) {
    for (y, line) in screen.lines().enumerate() {
        let left: String = line.chars().take(before).collect();
        if let Some(x) = left.find(text).filter(|_| left.contains(with)) {
            return (left[..x].chars().count() + 1, y + 1);
        }
    }
    panic!("{text:?} is not on\n{screen}");
}

/// The terminal's SGR mouse report (as xterm sends it with mode 1006) for `button` at
/// column `x`, row `y`, typed into the pane as bytes.
fn mouse(t: &Tmux, button: u8, x: usize, y: usize, press: bool) {
    let report = format!("\x1b[<{button};{x};{y}{}", if press { 'M' } else { 'm' });
    let mut args = vec!["-H".to_string()];
    args.extend(report.bytes().map(|b| format!("{b:02x}")));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    t.keys(&args);
}

#[test]
fn the_mouse_focuses_selects_and_scrolls_and_no_mouse_leaves_it_to_the_terminal() {
    let t = Tmux::start("mouse", &app_command(""), 80, 24);
    started(&t);
    assert_eq!(
        t.format("#{mouse_sgr_flag}"),
        "1",
        "the app asked for SGR mouse reports"
    );
    let s = t.screen();
    // A click on the loud row of Utilization focuses the pane and selects it.
    let (x, y) = position(&s, "loud ", "/15", 38);
    mouse(&t, 0, x + 2, y, true);
    mouse(&t, 0, x + 2, y, false);
    t.wait_for("the loud row selected in Utilization", |s| {
        s.lines()
            .any(|l| l.chars().take(38).collect::<String>().contains("▶ loud"))
            && s.contains("┏ ▶ Utilization")
    });
    // The wheel up over it selects the quiet row again.
    mouse(&t, 64, x + 2, y, true);
    t.wait_for("the quiet row selected", |s| {
        s.lines()
            .any(|l| l.chars().take(38).collect::<String>().contains("▶ quiet"))
    });
    drop(t);
    // With --no-mouse the same click changes nothing: the terminal keeps the mouse.
    let t = Tmux::start("no-mouse", &app_command("--no-mouse"), 80, 24);
    started(&t);
    assert_eq!(
        t.format("#{mouse_any_flag}"),
        "0",
        "the terminal keeps the mouse"
    );
    // Reports that arrive anyway (typed, say) are not taken as clicks.
    mouse(&t, 0, x + 2, y, true);
    mouse(&t, 0, x + 2, y, false);
    std::thread::sleep(Duration::from_millis(300));
    let s = t.screen();
    assert!(s.contains("┏ ▶ Data"), "the editor keeps the focus:\n{s}");
}

/// The app with the config file `config` (its text), in `dir`.
fn with_config(dir: &std::path::Path, config: &str, args: &str) -> String {
    let path = dir.join("config.toml");
    std::fs::write(&path, config).unwrap();
    format!(
        "env QUANTSCOPE_CONFIG={} {} {args}; echo \"exit status $?\"; sleep 60",
        path.display(),
        env!("CARGO_BIN_EXE_quantscope")
    )
}

#[test]
fn the_config_file_sets_theme_mouse_and_preset_and_flags_win_over_it() {
    let dir = tempfile::tempdir().unwrap();
    // theme = "light": every cell is painted white (xterm colour 231).
    let t = Tmux::start(
        "config-light",
        &with_config(dir.path(), "theme = \"light\"\n", ""),
        80,
        24,
    );
    started(&t);
    let s = t.screen_with_colours();
    assert!(s.contains("48;5;231"), "no white background:\n{s}");
    drop(t);
    // --theme wins over the file.
    let t = Tmux::start(
        "config-flag",
        &with_config(dir.path(), "theme = \"light\"\n", "--theme high-contrast"),
        80,
        24,
    );
    started(&t);
    let s = t.screen_with_colours();
    assert!(s.contains("48;5;16") && !s.contains("48;5;231"), "{s}");
    drop(t);
    // mouse = false: the terminal keeps the mouse.
    let t = Tmux::start(
        "config-mouse",
        &with_config(dir.path(), "mouse = false\n", ""),
        80,
        24,
    );
    started(&t);
    assert_eq!(t.format("#{mouse_any_flag}"), "0");
    drop(t);
    // preset = "q4_k": a file without #! lines opens with it.
    let data = dir.path().join("rows.txt");
    let row: Vec<String> = (0..256)
        .map(|i| format!("{:.3}", (f64::from(i) * 0.1).sin()))
        .collect();
    std::fs::write(&data, format!("{}\n{}\n", row.join(", "), row.join(", "))).unwrap();
    let t = Tmux::start(
        "config-preset",
        &with_config(dir.path(), "preset = \"q4_k\"\n", data.to_str().unwrap()),
        80,
        24,
    );
    t.wait_for("the preset of the config file", |s| {
        title(s).contains("q4_k") && title(s).contains("2x256")
    });
    drop(t);
    // A bad value: one line naming the file and line, exit status 2, no screen.
    let t = Tmux::start(
        "config-bad",
        &with_config(dir.path(), "\ntheme = \"blue\"\n", ""),
        80,
        24,
    );
    let s = t.wait_for("the refusal", |s| s.contains("exit status"));
    assert!(
        s.contains("config.toml, line 2: unknown theme \"blue\""),
        "{s}"
    );
    assert!(s.contains("exit status 2"), "{s}");
}
