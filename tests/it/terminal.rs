//! What terminal users expect, at message level: the command palette, the mouse, themes and
//! the config file, through `translate` and `update` (no terminal), and the screen drawn
//! into a test backend.

use quantscope::app::keymap::Action;
use quantscope::app::{Message, Model, Overlay, update};
use ratatui::crossterm::event::{KeyCode, KeyModifiers};

use crate::common::explorer;
use crate::common::screen as screen_text;
use explorer::{press, type_in};

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

/// What the mouse lands on at `column`, `row` of an 80x24 screen.
fn hit_at(m: &Model, column: u16, row: u16) -> quantscope::app::model::Hit {
    let theme = quantscope::ui::Theme::new(false, false);
    quantscope::ui::hit(
        ratatui::layout::Rect::new(0, 0, 80, 24),
        m,
        &theme,
        column,
        row,
    )
}

fn click(m: &mut Model, column: u16, row: u16) {
    let at = hit_at(m, column, row);
    update(m, Message::Click(at));
}

fn wheel(m: &mut Model, column: u16, row: u16, down: bool) {
    let at = hit_at(m, column, row);
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

/// A colour's red, green and blue as xterm draws it: its 256-colour palette (the 16 ANSI
/// colours at xterm's defaults), and for the terminal's own colours (`Reset`) the dark
/// background the dark theme is meant for: #000000 under #e5e5e5.
fn rgb(color: Option<ratatui::style::Color>, foreground: bool) -> (f64, f64, f64) {
    use ratatui::style::Color;
    const ANSI: [(u8, u8, u8); 16] = [
        (0, 0, 0),
        (205, 0, 0),
        (0, 205, 0),
        (205, 205, 0),
        (0, 0, 238),
        (205, 0, 205),
        (0, 205, 205),
        (229, 229, 229),
        (127, 127, 127),
        (255, 0, 0),
        (0, 255, 0),
        (255, 255, 0),
        (92, 92, 255),
        (255, 0, 255),
        (0, 255, 255),
        (255, 255, 255),
    ];
    let index = match color {
        None | Some(Color::Reset) => {
            return if foreground {
                (229.0, 229.0, 229.0)
            } else {
                (0.0, 0.0, 0.0)
            };
        }
        Some(Color::Black) => 0,
        Some(Color::Red) => 1,
        Some(Color::Green) => 2,
        Some(Color::Yellow) => 3,
        Some(Color::Blue) => 4,
        Some(Color::Magenta) => 5,
        Some(Color::Cyan) => 6,
        Some(Color::Gray) => 7,
        Some(Color::DarkGray) => 8,
        Some(Color::LightRed) => 9,
        Some(Color::LightGreen) => 10,
        Some(Color::LightYellow) => 11,
        Some(Color::LightBlue) => 12,
        Some(Color::LightMagenta) => 13,
        Some(Color::LightCyan) => 14,
        Some(Color::White) => 15,
        Some(Color::Indexed(i)) => i,
        Some(Color::Rgb(r, g, b)) => return (f64::from(r), f64::from(g), f64::from(b)),
    };
    let (r, g, b) = match index {
        0..=15 => ANSI[usize::from(index)],
        16..=231 => {
            let level = |v: u8| if v == 0 { 0 } else { 55 + 40 * v };
            let i = index - 16;
            (level(i / 36), level(i / 6 % 6), level(i % 6))
        }
        _ => {
            let v = 8 + 10 * (index - 232);
            (v, v, v)
        }
    };
    (f64::from(r), f64::from(g), f64::from(b))
}

/// WCAG 2's relative luminance.
fn luminance((r, g, b): (f64, f64, f64)) -> f64 {
    let lin = |c: f64| {
        let c = c / 255.0;
        if c <= 0.039_28 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
}

/// WCAG 2's contrast ratio of a style's text against its background (reversed when the
/// style reverses).
fn contrast(style: ratatui::style::Style) -> f64 {
    let mut fg = rgb(style.fg, true);
    let mut bg = rgb(style.bg, false);
    if style
        .add_modifier
        .contains(ratatui::style::Modifier::REVERSED)
    {
        std::mem::swap(&mut fg, &mut bg);
    }
    let (a, b) = (luminance(fg), luminance(bg));
    (a.max(b) + 0.05) / (a.min(b) + 0.05)
}

#[test]
fn every_colour_pair_of_every_theme_is_readable() {
    use quantscope::ui::{Theme, ThemeName};
    for name in ThemeName::ALL {
        let theme = Theme::named(name, true, false);
        for (what, style) in theme.pairs() {
            let ratio = contrast(style);
            // WCAG AA: 4.5:1 for text, 3:1 for borders; the high-contrast theme AAA, 7:1.
            let least = match (name, what) {
                (ThemeName::HighContrast, _) => 7.0,
                (_, "border") => 3.0,
                _ => 4.5,
            };
            assert!(
                ratio >= least,
                "{name} {what}: {ratio:.2}:1 is less than {least}:1 ({style:?})"
            );
        }
    }
    // The ratio itself: white on black is 21:1, and a pair against itself 1:1.
    let white_on_black = ratatui::style::Style::new()
        .fg(ratatui::style::Color::Indexed(231))
        .bg(ratatui::style::Color::Indexed(16));
    assert!((contrast(white_on_black) - 21.0).abs() < 1e-9);
    let grey = ratatui::style::Color::Indexed(244);
    assert!((contrast(ratatui::style::Style::new().fg(grey).bg(grey)) - 1.0).abs() < 1e-12);
}

/// The whole screen drawn with the light theme at `width` x `height`, with its colours.
fn light_screen(m: &Model, width: u16, height: u16) -> String {
    let mut terminal =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(width, height)).unwrap();
    let theme = quantscope::ui::Theme::named(quantscope::ui::ThemeName::Light, true, false);
    terminal
        .draw(|frame| quantscope::ui::draw(frame, m, &theme))
        .unwrap();
    format!("{:?}", terminal.backend().buffer())
}

#[test]
fn the_light_theme_at_80x24_and_120x40() {
    let mut m = explorer::builtin_model();
    insta::assert_snapshot!("light_80x24", light_screen(&m, 80, 24));
    update(&mut m, Message::Resized(120, 40));
    insta::assert_snapshot!("light_120x40", light_screen(&m, 120, 40));
    // Every cell is painted: nothing is left to the terminal's own background.
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 40)).unwrap();
    let theme = quantscope::ui::Theme::named(quantscope::ui::ThemeName::Light, true, false);
    terminal
        .draw(|frame| quantscope::ui::draw(frame, &m, &theme))
        .unwrap();
    let buffer = terminal.backend().buffer();
    let unpainted = buffer
        .content()
        .iter()
        .filter(|c| c.bg == ratatui::style::Color::Reset)
        .count();
    assert_eq!(unpainted, 0, "cells left to the terminal's background");
}

/// Runs the binary with `args` and the config file `config` (its text).
fn with_config(config: &str, args: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, config).unwrap();
    std::process::Command::new(env!("CARGO_BIN_EXE_quantscope"))
        .args(args)
        .env("QUANTSCOPE_CONFIG", &path)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn a_bad_config_value_is_a_message_naming_the_file_and_line() {
    for (config, says) in [
        (
            "mouse = true\ntheme = \"blue\"\n",
            "line 2: unknown theme \"blue\": the themes are dark, light, high-contrast",
        ),
        ("preset = \"int3\"\n", "line 1: unknown preset \"int3\""),
        ("ascii = yes\n", "line 1:"),
        ("mous = false\n", "line 1: unknown field `mous`"),
    ] {
        let out = with_config(config, &["report"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{config:?}: {stderr}");
        assert!(stderr.contains("config.toml, line"), "{config:?}: {stderr}");
        assert!(stderr.contains(says), "{config:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
        assert!(out.stdout.is_empty());
    }
    // ascii = true spells report's output in ASCII, as --ascii does.
    let out = with_config("ascii = true\n", &["report", "--explain"]);
    assert!(out.status.success());
    assert!(out.stdout.is_ascii());
    let plain = with_config("", &["report", "--explain"]);
    assert!(
        !plain.stdout.is_ascii(),
        "the default output has its symbols"
    );
    // A config file named by QUANTSCOPE_CONFIG that is missing is an error.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_quantscope"))
        .arg("report")
        .env("QUANTSCOPE_CONFIG", "/nonexistent/quantscope.toml")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such file"));
}

/// Every command (as `quantscope NAME`) and the long flags of each, from the clap
/// definitions.
fn commands_and_flags() -> Vec<(String, Vec<String>)> {
    use clap::CommandFactory as _;
    let top = quantscope::cli::Cli::command();
    let flags = |c: &clap::Command| {
        c.get_arguments()
            .filter_map(|a| a.get_long().map(str::to_string))
            .collect::<Vec<_>>()
    };
    let mut out = vec![(String::new(), flags(&top))];
    for sub in top.get_subcommands() {
        out.push((sub.get_name().to_string(), flags(sub)));
    }
    out
}

fn run(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_quantscope"))
        .args(args)
        .env("QUANTSCOPE_CONFIG", "/dev/null")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn completions_and_the_man_page_name_every_command_and_flag() {
    let all = commands_and_flags();
    assert!(all.iter().any(|(c, _)| c == "completions"));
    assert!(all.iter().any(|(c, _)| c == "man"));
    for shell in ["bash", "zsh", "fish"] {
        let script = run(&["completions", shell]);
        for (command, flags) in &all {
            if !command.is_empty() {
                assert!(script.contains(command.as_str()), "{shell}: no {command}");
            }
            for flag in flags {
                let spelled = if shell == "fish" {
                    format!("-l {flag}")
                } else {
                    format!("--{flag}")
                };
                assert!(
                    script.contains(&spelled),
                    "{shell}: no {spelled} of {command:?}"
                );
            }
        }
    }
    // roff writes a hyphen as \-.
    let man = run(&["man"]).replace("\\-", "-");
    assert!(
        man.starts_with(".ie") || man.contains(".TH quantscope"),
        "{}",
        &man[..200]
    );
    for (command, flags) in &all {
        if !command.is_empty() && command != "help" {
            let heading = format!(".SH \"QUANTSCOPE {}\"", command.to_uppercase());
            assert!(man.contains(&heading), "no section {heading}");
        }
        for flag in flags {
            assert!(
                man.contains(&format!("--{flag}")),
                "the man page has no --{flag} of {command:?}"
            );
        }
    }
    // An unknown shell is refused with the ones there are.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_quantscope"))
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bash, zsh, fish"));
}

/// The f32 values of a `.npy` file of format 1.0 (what numpy and quantscope write).
fn npy_values(bytes: &[u8]) -> Vec<f32> {
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
    let header = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
    bytes[10 + header..]
        .chunks(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[test]
fn write_dequantized_gives_back_what_gguf_py_reconstructs_bit_for_bit() {
    let golden = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/dequantized"
    ));
    let dir = tempfile::tempdir().unwrap();
    for preset in ["q4_0", "q8_0"] {
        let out = dir.path().join(format!("{preset}.npy"));
        run(&[
            "report",
            golden.join("x.npy").to_str().unwrap(),
            "-p",
            preset,
            "--write-dequantized",
            out.to_str().unwrap(),
        ]);
        let mine = npy_values(&std::fs::read(&out).unwrap());
        let want = npy_values(&std::fs::read(golden.join(format!("x_{preset}.npy"))).unwrap());
        assert_eq!(mine.len(), 256);
        let same = mine
            .iter()
            .zip(&want)
            .all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same, "{preset}: the reconstruction differs from gguf-py's");
    }
    // As .safetensors: one F32 tensor of the matrix's shape, named as --tensor or
    // "dequantized", with the same values as the report's.
    let st = dir.path().join("lesson.safetensors");
    run(&[
        "report",
        "-g",
        "channel",
        "--write-dequantized",
        st.to_str().unwrap(),
    ]);
    let (matrix, dtype) = {
        let c = quantscope::io::checkpoint::Checkpoint::open(&st).unwrap();
        let e = c.entries();
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].name, "dequantized");
        let t = quantscope::runtime::files::load_tensor(&st, "dequantized").unwrap();
        (t.matrix, t.dtype)
    };
    assert_eq!(dtype, "f32");
    let example = quantscope::io::text::parse_text(quantscope::cli::BUILTIN_EXAMPLE).unwrap();
    let report = quantscope::core::analyse(
        &example,
        &quantscope::core::Config {
            granularity: quantscope::core::Granularity::Channel,
            ..quantscope::core::Config::default()
        },
    )
    .unwrap();
    for r in 0..2 {
        assert_eq!(matrix.values().row(r).to_vec(), report.row_dequantized(r));
    }
    // Another ending is refused before anything is analysed.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_quantscope"))
        .args(["report", "--write-dequantized", "x.csv"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("must end in .npy or .safetensors"));
}

#[test]
fn the_explorers_export_writes_the_reconstructed_matrix_too() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = explorer::builtin_model();
    press(&mut m, KeyCode::F(7), KeyModifiers::NONE);
    quantscope::runtime::settle(&mut m);
    for name in ["back.npy", "back.safetensors"] {
        let path = dir.path().join(name);
        press(&mut m, KeyCode::Char('E'), KeyModifiers::ALT);
        type_in(&mut m, path.to_str().unwrap());
        press(&mut m, KeyCode::Enter, KeyModifiers::NONE);
        for effect in std::mem::take(&mut m.effects) {
            if let Some(msg) = quantscope::runtime::perform_now(effect) {
                update(&mut m, msg);
            }
        }
        assert_eq!(
            m.status.as_deref(),
            Some(format!("exported the reconstructed matrix to {}", path.display()).as_str())
        );
        let back = quantscope::io::load::load_path(&path).unwrap();
        let report = m.analysis.report.as_ref().unwrap();
        for r in 0..2 {
            assert_eq!(
                back.values().row(r).to_vec(),
                report.row_dequantized(r),
                "{name}"
            );
        }
    }
}
