//! End-to-end: the real binary in a real terminal (tmux at 80x24), driven by keys and read
//! from the screen. `.ci/run` installs tmux where it is missing; without tmux these tests
//! fail with a message saying so.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::files;
use crate::common::tmux;

use files::{f32_bytes, npy_bytes, safetensors_bytes, temp_dir};
use tmux::{Tmux, app_command};

/// The line of the utilization pane naming `label`.
fn line_with<'a>(screen: &'a str, label: &str) -> &'a str {
    screen
        .lines()
        .find(|l| l.contains(label) && (l.contains("/15") || l.contains("/16")))
        .unwrap_or("")
}

#[test]
fn the_explorer_shows_collapse_rescues_it_reports_errors_and_quits_cleanly() {
    let t = Tmux::start("main", &app_command(""), 80, 24);
    // The caption speaks of COLLAPSED too: wait for the Utilization pane's mark.
    let s = t.wait_for("the built-in example", |s| {
        s.contains("quantscope") && line_with(s, "quiet").contains("COLLAPSED")
    });
    assert!(s.contains("tensor"), "{s}");
    let collapsed_line = line_with(&s, "quiet").to_string();
    assert!(collapsed_line.contains("COLLAPSED"), "{s}");

    // Per-channel (F7): the flag disappears and the numbers change.
    t.keys(&["F7"]);
    let s = t.wait_for("per-channel", |s| {
        s.contains("channel ·") && !line_with(s, "quiet").contains("COLLAPSED")
    });
    let rescued_line = line_with(&s, "quiet");
    assert_ne!(rescued_line, collapsed_line, "{s}");

    // A bad value on line 10 (the quiet row, after the example's header): the error names
    // the line.
    t.keys(&["M-<"]);
    t.keys(&["Down"; 9]);
    t.keys(&["End"]);
    t.literal("x");
    let s = t.wait_for("the parse error", |s| s.contains("line 10, col"));
    assert!(s.contains("stale"), "{s}");
    assert!(s.contains("-0.15x"), "{s}");

    // Fix it: the error goes away.
    t.keys(&["BSpace"]);
    t.wait_for("the error to clear", |s| {
        !s.contains("line 3, col") && !s.contains("stale")
    });

    // More bits (F3): int5.
    t.keys(&["F3"]);
    t.wait_for("int5", |s| s.contains("int5"));

    // Quit: the text changed, so it asks; y quits and the terminal is restored.
    t.keys(&["C-q"]);
    t.wait_for("the unsaved-changes question", |s| {
        s.contains("Quit anyway")
    });
    t.literal("y");
    let s = t.wait_for("the shell after exit", |s| s.contains("exit status"));
    assert!(s.contains("exit status 0"), "{s}");
    assert!(
        !s.contains("Settings"),
        "the alternate screen was left: {s}"
    );
}

/// 50 lines of 64 values, as a notebook would print them (the last line starts with a value
/// of its own, to be found on screen).
fn fifty_by_sixty_four() -> String {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut out = String::new();
    for row in 0..50 {
        let values: Vec<String> = (0..64)
            .map(|col| {
                if row == 49 && col == 0 {
                    return "9.8765".to_string();
                }
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                format!(
                    "{:.4}",
                    (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
                )
            })
            .collect();
        out.push_str(&values.join(", "));
        out.push('\n');
    }
    out
}

/// Pastes 50x64 values into an empty file and checks that the last line and the parsed
/// shape are on screen within 2 s.
fn paste_arrives_whole(bracketed: bool) {
    let dir = temp_dir();
    let path = dir.path().join("empty.txt");
    std::fs::write(&path, "").unwrap();
    let name = if bracketed { "paste-p" } else { "paste" };
    let t = Tmux::start_alone(name, &app_command(path.to_str().unwrap()), 80, 24);
    t.wait_for("the empty file", |s| s.contains("Type or paste channels"));
    let start = Instant::now();
    t.paste(&fifty_by_sixty_four(), bracketed);
    // Until the whole paste is on screen and analysed: the report of an earlier part of the
    // paste can show 50x64 while the last keys' analysis is still on its way (stale).
    let s = t.wait_for("the whole paste, analysed", |s| {
        s.contains("50 9.8765") && s.contains("50x64") && !s.contains("stale")
    });
    let took = start.elapsed();
    assert!(
        took < Duration::from_secs(2),
        "the paste took {took:?} to arrive and be analysed:\n{s}"
    );
    assert!(!s.contains("stale"), "{s}");
    t.keys(&["C-q"]);
    t.wait_for("the unsaved-changes question", |s| {
        s.contains("Quit anyway")
    });
    t.literal("y");
    t.wait_for("exit", |s| s.contains("exit status 0"));
}

#[test]
fn a_paste_sent_as_keys_arrives_whole_and_fast() {
    paste_arrives_whole(false);
}

#[test]
fn a_bracketed_paste_arrives_whole_and_fast() {
    paste_arrives_whole(true);
}

#[test]
fn a_tiny_terminal_says_how_much_room_it_needs_and_recovers_on_resize() {
    let t = Tmux::start("tiny", &app_command(""), 40, 10);
    t.wait_for("the size message", |s| s.contains("80x24"));
    assert!(t.resize(80, 24));
    t.wait_for("the panes after resize", |s| s.contains("Settings"));
    for (w, h) in [(1, 1), (2, 3), (81, 25)] {
        t.resize(w, h);
        std::thread::sleep(Duration::from_millis(150));
    }
    t.wait_for("the panes again", |s| s.contains("Settings"));
    // (After a resize tmux may keep a copy of the last frame in the main screen, so this
    // test checks the exit status only; the main test checks the restored screen.)
    t.keys(&["C-c"]);
    let s = t.wait_for("exit", |s| s.contains("exit status"));
    assert!(s.contains("exit status 0"), "{s}");
}

#[test]
fn with_output_redirected_the_explorer_explains_instead_of_drawing() {
    let dir = temp_dir();
    let out = dir.path().join("out.txt");
    let command = format!(
        "{} </dev/null >{}; echo \"exit status $?\"; sleep 60",
        env!("CARGO_BIN_EXE_quantscope"),
        out.display()
    );
    let t = Tmux::start("noterm", &command, 80, 24);
    let s = t.wait_for("the message", |s| s.contains("exit status"));
    assert!(s.contains("exit status 2"), "{s}");
    assert!(s.contains("the explorer needs a terminal"), "{s}");
    assert!(!s.contains("panicked"), "{s}");
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "",
        "nothing drawn into the file"
    );
}

#[test]
fn a_missing_npy_file_is_a_clear_error_before_the_terminal_is_touched() {
    let out = Command::new(env!("CARGO_BIN_EXE_quantscope"))
        .arg("/nonexistent/w.npy")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/w.npy"), "{err}");
}

/// Writes a `rows` x `cols` f32 `.npy` file whose rows have spreads from 1e-3 to 1, with
/// one quiet row at index 1234 that collapses under a shared scale.
fn write_big_npy(path: &std::path::Path, rows: usize, cols: usize) {
    let mut header =
        format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({rows}, {cols}), }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut values = Vec::with_capacity(rows * cols);
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    for r in 0..rows {
        let spread = if r == 1234 {
            1e-4
        } else {
            10f32.powf(-3.0 + 3.0 * (r as f32 / rows as f32))
        };
        for _ in 0..cols {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let u = (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
            values.push(u * spread);
        }
    }
    std::fs::write(path, npy_bytes((1, 0), &header, &f32_bytes(&values))).unwrap();
}

#[test]
fn a_4096_square_tensor_stays_responsive_and_the_worst_channel_is_one_key_away() {
    let dir = temp_dir();
    let path = dir.path().join("big.npy");
    write_big_npy(&path, 4096, 4096);
    let t = Tmux::start_alone("big", &app_command(path.to_str().unwrap()), 100, 30);
    t.wait_for("the tensor to open", |s| {
        s.contains("big.npy") && s.contains("4096 channels")
    });
    // Keys are handled while the analysis runs: the help opens and closes.
    t.keys(&["F1"]);
    t.wait_for("the help", |s| {
        s.contains("Everywhere (the editor included)")
    });
    t.keys(&["Escape"]);
    t.wait_for("the help to close", |s| {
        !s.contains("Everywhere (the editor included)")
    });
    // Once the report is in, one key selects the worst channel and scrolls the list to it.
    t.wait_for("the report", |s| {
        s.contains("4096x4096") && s.contains("collapsed")
    });
    t.keys(&["w"]);
    let s = t.wait_for("the worst channel", |s| s.contains("worst: channel"));
    let worst: String = s
        .lines()
        .find(|l| l.contains("worst: channel"))
        .and_then(|l| l.split("channel ").nth(1))
        .map(|rest| rest.chars().take_while(char::is_ascii_digit).collect())
        .unwrap_or_default();
    assert!(!worst.is_empty(), "{s}");
    let pointer = if s.contains('▶') { '▶' } else { '>' };
    assert!(
        s.lines()
            .any(|l| l.contains(&format!("{pointer} ch {worst} "))),
        "the list does not point at channel {worst}:\n{s}"
    );
    t.keys(&["q"]);
    t.wait_for("exit", |s| s.contains("exit status 0"));
}

#[test]
fn practice_mode_gives_a_hint_after_a_miss_and_scores_a_right_answer() {
    let t = Tmux::start("practice", &app_command("practice"), 80, 24);
    t.wait_for("practice mode", |s| {
        s.contains("Practice") && s.contains("Step 1 of")
    });
    t.wait_for("a score of 0", |s| s.contains("score 0 of"));
    t.literal("0.5");
    t.keys(&["Enter"]);
    let s = t.wait_for("the hint", |s| s.contains("hint:"));
    assert!(s.contains("not right"), "{s}");
    assert!(s.contains("score 0 of"), "{s}");
    // The shared int4 scale is 3.10 / 7.
    t.literal("0.442857");
    t.keys(&["Enter"]);
    let s = t.wait_for("the score to change", |s| s.contains("score 1 of"));
    assert!(s.contains("solved"), "{s}");
    t.keys(&["C-q"]);
    t.wait_for("exit", |s| s.contains("exit status 0"));
}

#[test]
fn the_demo_steps_forward_and_back() {
    let t = Tmux::start("demo", &app_command("demo"), 80, 24);
    let caption = |s: &str| s.lines().rev().nth(1).unwrap_or("").trim_end().to_string();
    let first = t.wait_for("the first step", |s| {
        s.contains("step 1 of") && caption(s).contains("quiet row")
    });
    t.keys(&["Space"]);
    let second = t.wait_for("the second step", |s| s.contains("step 2 of"));
    assert_ne!(first, second);
    t.keys(&["Right"]);
    t.wait_for("the third step", |s| s.contains("step 3 of"));
    t.keys(&["Left", "Left"]);
    // The same step shows the same caption however it was reached (the line above the
    // hints; waiting for it lets the redraw finish).
    let expected = caption(&first);
    assert!(!expected.is_empty(), "{first}");
    t.wait_for("the first step again", |s| {
        s.contains("step 1 of") && caption(s) == expected
    });
    // The first step focuses the editor, so quit with Ctrl-Q rather than q.
    t.keys(&["C-q"]);
    t.wait_for("exit", |s| s.contains("exit status 0"));
}

#[test]
fn every_demo_step_is_readable_in_full_at_80x24() {
    let script = quantscope::teach::script::demo_script("quiet-row").unwrap();
    let n = script.steps.len();
    let t = Tmux::start("demo-all", &app_command("demo"), 80, 24);
    // The caption: the words in the rows between the last pane border and the hint line.
    let caption = |s: &str| -> Vec<String> {
        let lines: Vec<&str> = s.lines().collect();
        let Some(last_border) = lines
            .iter()
            .rposition(|l| l.starts_with('└') || l.starts_with('┗'))
        else {
            return Vec::new();
        };
        let hint = lines
            .iter()
            .rposition(|l| !l.trim().is_empty())
            .unwrap_or(0);
        lines[last_border + 1..hint.max(last_border + 1)]
            .iter()
            .flat_map(|l| l.split_whitespace())
            .map(str::to_string)
            .collect()
    };
    for (i, step) in script.steps.iter().enumerate() {
        let header = format!("step {} of {n}", i + 1);
        let want: Vec<String> = step
            .caption
            .as_deref()
            .unwrap_or("")
            .split_whitespace()
            .map(str::to_string)
            .collect();
        // Waiting for the whole caption also waits for the frame to be drawn whole.
        t.wait_for(&format!("{header} with its whole caption"), |s| {
            s.lines().next().unwrap_or("").contains(&header) && caption(s) == want
        });
        t.keys(&["Space"]);
    }
    t.keys(&["C-q"]);
    t.wait_for("exit", |s| s.contains("exit status 0"));
}

/// A `.safetensors` file holding `tensors` (name, rows, columns) of f32 values `0.1 * i - 0.3`.
fn write_safetensors(path: &std::path::Path, tensors: &[(&str, u64, u64)]) {
    let values = |n: u64| -> Vec<u8> {
        f32_bytes(&(0..n).map(|i| 0.1 * i as f32 - 0.3).collect::<Vec<_>>())
    };
    let shapes: Vec<[u64; 2]> = tensors.iter().map(|&(_, r, c)| [r, c]).collect();
    let entries: Vec<(&str, &str, &[u64], Vec<u8>)> = tensors
        .iter()
        .zip(&shapes)
        .map(|(&(name, r, c), shape)| (name, "F32", &shape[..], values(r * c)))
        .collect();
    std::fs::write(path, safetensors_bytes(&entries)).unwrap();
}

#[test]
fn a_tensor_chosen_in_the_picker_loads_and_is_analysed() {
    let dir = temp_dir();
    let path = dir.path().join("model.safetensors");
    write_safetensors(&path, &[("layer.0.weight", 3, 8), ("layer.1.weight", 5, 8)]);
    let t = Tmux::start("pick", &app_command(path.to_str().unwrap()), 100, 30);
    t.wait_for("the picker", |s| {
        s.contains("layer.0.weight") && s.contains("layer.1.weight")
    });
    // Typing filters the list; Enter loads the one left (on a thread of its own).
    t.literal("1.w");
    t.wait_for("the filtered picker", |s| !s.contains("layer.0.weight"));
    t.keys(&["Enter"]);
    t.wait_for("the loaded tensor and its report", |s| {
        s.contains("model.safetensors / layer.1.weight")
            && s.contains("5 channels")
            && s.contains("Errors")
    });
    t.keys(&["C-q"]);
    t.wait_for("exit", |s| s.contains("exit status 0"));
}

#[test]
fn a_panic_restores_the_terminal_and_saves_the_typed_text() {
    // Debug builds panic on purpose when the text contains QUANTSCOPE_TEST_PANIC's word;
    // release builds have no such hook.
    if !cfg!(debug_assertions) {
        eprintln!("skipped: the panic hook for tests exists in debug builds only");
        return;
    }
    let dir = temp_dir();
    let command = format!(
        "TMPDIR={} QUANTSCOPE_TEST_PANIC=BOOM {}; echo \"exit status $?\"; sleep 60",
        dir.path().display(),
        env!("CARGO_BIN_EXE_quantscope")
    );
    let t = Tmux::start("panic", &command, 80, 24);
    t.wait_for("the built-in example", |s| s.contains("COLLAPSED"));
    t.keys(&["M->"]);
    t.keys(&["Enter"]);
    t.literal("0.25 -0.5 kept BOOM");
    let s = t.wait_for("the shell after the panic", |s| s.contains("exit status"));
    assert!(s.contains("exit status 101"), "{s}");
    assert!(s.contains("your text was saved to"), "{s}");
    assert!(
        !s.contains("Settings"),
        "the alternate screen was left: {s}"
    );
    let saved: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("quantscope-recovery-")
        })
        .collect();
    assert_eq!(saved.len(), 1, "{saved:?}");
    let text = std::fs::read_to_string(saved[0].path()).unwrap();
    assert!(text.contains("0.25 -0.5 kept BOOM"), "{text}");
    assert!(
        text.contains("quiet"),
        "the example's rows are missing: {text}"
    );
}
