//! End-to-end, at 80x24: what a tester tripped on in the first hour, driven in the real
//! binary in tmux as a user would (keys, pastes, resizes) and read from the screen.

use std::time::Duration;

#[path = "common/tmux.rs"]
#[allow(
    dead_code,
    reason = "the harness's helpers that these tests do not use"
)]
mod tmux;

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
    t.wait_for("the export prompt", |s| s.contains("typing replaces"));
    t.literal(wanted.to_str().unwrap());
    t.keys(&["Enter"]);
    t.wait_for("the export to finish", |s| {
        s.contains("exported the report to")
    });
    assert!(wanted.exists(), "the typed name was written");
    // A name in a directory that does not exist: the reason, whole, in the prompt.
    let bad = dir.path().join("no-such-directory").join("report.html");
    t.keys(&["M-E"]);
    t.wait_for("the export prompt", |s| s.contains("typing replaces"));
    t.literal(bad.to_str().unwrap());
    t.keys(&["Enter"]);
    let s = t.wait_for("why it failed", |s| s.contains("not exported"));
    let flat: String = s
        .split(|c: char| c.is_whitespace() || ('\u{2500}'..='\u{257f}').contains(&c))
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    assert!(flat.contains("No such file or directory"), "{s}");
    assert!(flat.contains("no-such-directory/report.html"), "{s}");
    t.keys(&["Escape"]);
    t.wait_for("the prompt to close", |s| !s.contains("typing replaces"));
    t.keys(&["C-q"]);
    t.wait_for("the shell", |s| s.contains("exit status 0"));
}
