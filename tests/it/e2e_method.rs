//! End-to-end: the method setting in the real binary in tmux at 80x24. GPTQ on a 128 x 1024
//! layer with the built-in activations: keys pressed while it runs stop it and start it
//! again on the new configuration, it finishes, and quitting while it runs leaves the shell
//! at once with status 0.

use std::fmt::Write as _;

use crate::common::{files, tmux};

use tmux::{Tmux, app_command};

/// The Errors pane's line for `method` (the first screen line naming it under the Settings).
fn line_of<'s>(screen: &'s str, method: &str) -> &'s str {
    screen
        .lines()
        .skip(10)
        .find(|l| l.contains(method))
        .unwrap_or("")
}

/// The Errors pane's method line for GPTQ.
fn method_line(screen: &str) -> &str {
    line_of(screen, "GPTQ")
}

/// The explorer in tmux at 80x24 (session `name`) on a 128 x 1024 layer written to
/// `file_name`, once its first report and ladder are drawn; the file lives as long as it.
fn layer_session(name: &str, file_name: &str) -> (Tmux, files::TempFile) {
    let mut text = String::new();
    for r in 0..128u32 {
        let row: Vec<String> = (0..1024u32)
            .map(|c| format!("{:.4}", f64::from((r * 31 + c * 17) % 97) / 97.0 - 0.5))
            .collect();
        let _ = writeln!(text, "r{r}: {}", row.join(", "));
    }
    let file = files::temp_file(file_name, text.as_bytes());
    let cmd = app_command(&format!("'{}'", file.display()));
    let t = Tmux::start(name, &cmd, 80, 24);
    t.wait_for("the layer", |s| {
        s.contains("128x1024") && s.contains("Ladder")
    });
    (t, file)
}

#[test]
fn gptq_restarts_on_a_key_finishes_and_quitting_while_it_runs_is_clean() {
    let (t, _file) = layer_session("method-gptq", "layer.txt");
    t.keys(&["M-M", "M-M"]);
    t.wait_for("GPTQ on its way", |s| {
        method_line(s).contains("GPTQ running")
    });
    // One bit more while it runs: it stops and runs again with 5 bits.
    t.keys(&["F3"]);
    t.wait_for("GPTQ running again", |s| {
        s.contains("int5 symmetric") && method_line(s).contains("GPTQ running")
    });
    let s = t.wait_for("GPTQ done with 5 bits", |s| {
        method_line(s).contains("GPTQ: output MSE")
    });
    assert!(s.contains("int5 symmetric"), "{s}");
    assert!(s.contains("activations built-in"), "{s}");
    // Quitting while it runs again.
    t.keys(&["F2"]);
    t.wait_for("GPTQ again", |s| method_line(s).contains("GPTQ running"));
    t.keys(&["C-q"]);
    let s = t.wait_for("the shell", |s| s.contains("exit status 0"));
    assert!(
        !s.contains("Settings"),
        "the screen is the shell's again:\n{s}"
    );
}

/// The Errors pane's method line for W8A8.
fn w8a8_line(screen: &str) -> &str {
    line_of(screen, "W8A8")
}

#[test]
fn w8a8_and_smoothquant_run_take_keys_resize_and_quit_clean() {
    let (t, _file) = layer_session("method-w8a8", "w8a8_layer.txt");
    // round to nearest, AWQ, GPTQ, W8A8 per tensor, per token: four steps
    t.keys(&["M-M", "M-M", "M-M", "M-M"]);
    let s = t.wait_for("W8A8 per token done", |s| {
        w8a8_line(s).contains("W8A8 per token: output MSE")
    });
    assert!(s.contains("method      W8A8 per token"), "{s}");
    // SmoothQuant's sweep, then a key typed into the data while it runs: it runs again
    t.keys(&["M-M", "M-M"]);
    t.wait_for("SmoothQuant running", |s| {
        w8a8_line(s).contains("SQ W8A8 per token running")
    });
    t.literal("z");
    t.wait_for("the key typed", |s| s.contains("zr0"));
    // resized while it runs, and back
    assert!(t.resize(120, 40));
    t.wait_for("wider", |s| s.lines().count() >= 40);
    assert!(t.resize(80, 24));
    let s = t.wait_for("SmoothQuant done", |s| {
        w8a8_line(s).contains("SQ W8A8 per token: output MSE")
    });
    assert!(s.contains("zr0"), "{s}");
    // the Ladder's line has both figures and the α at 80 columns
    assert!(
        s.lines()
            .any(|l| l.contains("vs RTN") && l.contains("W8A8 unsmoo")),
        "{s}"
    );
    // quit while it runs again (the text has changes: confirmed)
    t.keys(&["F3"]);
    t.wait_for("running again", |s| w8a8_line(s).contains("running"));
    t.keys(&["C-q"]);
    t.wait_for("the question", |s| s.contains("Quit anyway?"));
    t.keys(&["y"]);
    let s = t.wait_for("the shell", |s| s.contains("exit status 0"));
    assert!(
        !s.contains("Settings"),
        "the screen is the shell's again:\n{s}"
    );
}
