//! End-to-end: which weights matter, in the real binary in tmux at 80x24 and 120x40. The
//! loud-input scenario with the built-in activations, the Errors pane on the output error,
//! a resize, the importance view, switching the importance off, a file that does not load,
//! and quitting.

use crate::common::tmux;

use tmux::{Tmux, app_command};

/// The title line (the screen's first).
fn title(screen: &str) -> &str {
    screen.lines().next().unwrap_or("")
}

#[test]
fn the_loud_input_scenario_loads_toggles_resizes_and_quits() {
    let t = Tmux::start("impui-loud", &app_command("--scenario loud-input"), 80, 24);
    let s = t.wait_for("the scenario with its output errors", |s| {
        title(s).contains("4x256")
            && title(s).contains("activations built-in")
            && s.contains("out MSE")
            && !title(s).contains("computing")
    });
    assert!(s.contains("importance on: activations built-in"), "{s}");
    // Alt-v: the output error per row (after it, RMSE).
    t.keys(&["M-v"]);
    let s = t.wait_for("the output error per row", |s| {
        s.contains("Errors (output MSE)")
    });
    let quiet = s
        .lines()
        .find(|l| l.contains("quiet") && l.contains("││"))
        .unwrap_or("");
    assert!(quiet.contains("0.0717"), "{s}");
    assert!(t.resize(120, 40), "tmux resized the window");
    t.wait_for("the panes at 120x40", |s| {
        s.lines().count() >= 40 && title(s).contains("4x256") && s.contains("out MSE")
    });
    t.keys(&["M-v"]);
    t.wait_for("RMSE", |s| s.contains("RMSE"));
    t.keys(&["M-B"]);
    t.wait_for("the importance view", |s| {
        s.contains("The top 1 % of columns (3 of 256)")
    });
    t.keys(&["Escape"]);
    t.wait_for("the view closed", |s| !s.contains("The top 1 % of columns"));
    t.keys(&["M-W"]);
    t.wait_for("importance measured only, output columns kept", |s| {
        title(s).contains("(measured only)")
            && !title(s).contains("computing")
            && s.contains("out MSE")
    });
    t.keys(&["M-W"]);
    let s = t.wait_for("importance off, analysed", |s| {
        title(s).contains("importance off") && !title(s).contains("computing")
    });
    assert!(
        !s.contains("out MSE"),
        "the output columns stay after switching off:\n{s}"
    );
    assert!(t.resize(80, 24), "tmux resized the window back");
    t.keys(&["M-W"]);
    t.wait_for("importance on again at 80x24", |s| {
        title(s).contains("activations built-in") && s.contains("out MSE")
    });
    t.keys(&["C-q"]);
    t.wait_for("the shell", |s| s.contains("exit status 0"));
}

#[test]
fn a_file_that_does_not_load_is_one_message_and_the_explorer_keeps_its_state() {
    let t = Tmux::start("impui-bad", &app_command(""), 80, 24);
    t.wait_for("the built-in example", |s| {
        s.contains("COLLAPSED") && title(s).contains("2x4")
    });
    t.keys(&["M-I"]);
    t.wait_for("the prompt", |s| s.contains("Which weights matter"));
    t.literal("/nonexistent/acts.npy");
    t.keys(&["Enter"]);
    let s = t.wait_for("the message", |s| s.contains("not loaded:"));
    assert!(s.contains("acts.npy"), "{s}");
    assert!(
        title(&s).contains("2x4") && !title(&s).contains("activations"),
        "{s}"
    );
    // The built-in activations load from the same prompt.
    t.keys(&["M-I"]);
    t.wait_for("the prompt again", |s| s.contains("Which weights matter"));
    t.literal("built-in");
    t.keys(&["Enter"]);
    t.wait_for("the output errors", |s| {
        title(s).contains("activations built-in") && s.contains("out MSE")
    });
    t.keys(&["C-q"]);
    t.wait_for("the shell", |s| s.contains("exit status 0"));
}

#[test]
fn activations_of_the_wrong_width_on_the_command_line_exit_with_status_2() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("w.npy");
    // A 2 x 3 f32 matrix, and activations 4 columns wide.
    let write = |path: &std::path::Path, shape: &str, values: &[f32]| {
        let header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}\n");
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend(u16::try_from(header.len()).unwrap().to_le_bytes());
        bytes.extend(header.as_bytes());
        bytes.extend(values.iter().flat_map(|v| v.to_le_bytes()));
        std::fs::write(path, bytes).unwrap();
    };
    write(&npy, "(2, 3)", &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let acts = dir.path().join("x.npy");
    write(&acts, "(1, 4)", &[1.0; 4]);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_quantscope"))
        .arg(&npy)
        .arg("--activations")
        .arg(&acts)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("4 columns per token"), "{err}");
    assert!(err.contains("3 columns"), "{err}");
}
