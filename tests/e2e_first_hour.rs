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
