//! The format ladder on the explorer's runtime while an entry is under way: the overlay says
//! how far that entry is, and a change of setting stops it at its next row, so the new
//! analysis arrives at once rather than after the entry.

use std::time::{Duration, Instant};

use quantscope::app::keymap::Action;
use quantscope::app::worker::Outcome;
use quantscope::app::{Message, Model, translate, update};
use quantscope::core::Matrix;
use quantscope::core::format_ladder::{Progress, Selection, format_ladder};
use quantscope::runtime::Runtime;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// A 1024 x 256 tensor of varied rows: the lattice searches take seconds on it unoptimised,
/// a fraction of a second a row.
fn wide_matrix() -> Matrix {
    let values = ndarray::Array2::from_shape_fn((1024, 256), |(r, c)| {
        ((r * 31 + c * 7) as f32 * 0.173).sin() * 10f32.powi(r as i32 % 3 - 1)
    });
    Matrix::new(values).unwrap()
}

/// Performs the model's effects and reads what has arrived until `done` holds; the time it
/// took. The format ladder's progress messages are kept in `heard`.
fn until(
    rt: &mut Runtime,
    m: &mut Model,
    heard: &mut Vec<Progress>,
    what: &str,
    done: impl Fn(&Model) -> bool,
) -> Duration {
    let start = Instant::now();
    loop {
        for effect in std::mem::take(&mut m.effects) {
            rt.perform(m, effect).expect("the analysis thread runs");
        }
        while let Some(msg) = rt.arrived() {
            if let Message::Analysed(r) = &msg
                && let Outcome::FormatLadderProgress(p) = r.outcome
            {
                heard.push(p);
            }
            update(m, msg);
        }
        if done(m) {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < Duration::from_mins(5),
            "{what} never came"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn a_change_of_setting_stops_the_format_ladders_entry_in_progress() {
    let mut rt = Runtime::start().expect("a thread");
    let mut m = Model::with_tensor(quantscope::app::LoadedTensor {
        name: "w.npy".into(),
        dtype: "f32".into(),
        matrix: wide_matrix(),
        stored: None,
    });
    let mut heard = Vec::new();
    let plain = until(&mut rt, &mut m, &mut heard, "the first report", |m| {
        !m.analysis.pending && !m.analysis.busy
    });
    update(&mut m, Message::Action(Action::Formats));
    // A lattice search under way (past its first rows, which build its tables once), and
    // the overlay's title names it with its rows done.
    let reached = until(&mut rt, &mut m, &mut heard, "a lattice search", |m| {
        m.analysis
            .format_ladder_within
            .is_some_and(|w| w.name == "iq1_m" && w.rows > 0)
    });
    let within = m.analysis.format_ladder_within.unwrap();
    assert!(within.rows < within.of, "{within:?}");
    let title = crate::common::screen::screen(&m, 100, 30);
    assert!(
        title.contains(&format!("({} ", within.name)) && title.contains(" %)"),
        "{title}"
    );
    let granularity = m.config.granularity;
    // Esc closes the overlay (its ladder goes on), F7 asks for the next granularity: keys
    // as the user presses them.
    for code in [KeyCode::Esc, KeyCode::F(7)] {
        let msg = translate(&m, &KeyEvent::new(code, KeyModifiers::NONE)).expect("a bound key");
        update(&mut m, msg);
    }
    assert!(m.overlay.is_none());
    assert_ne!(m.config.granularity, granularity);
    let asked = heard.len();
    let done_then = heard.last().map_or(0, |p| p.done);
    let answered = until(&mut rt, &mut m, &mut heard, "the new report", |m| {
        m.analysis
            .report
            .as_ref()
            .is_some_and(|r| r.config.granularity != granularity)
    });
    eprintln!(
        "first report {plain:?}, lattice reached after {reached:?}, answered in {answered:?}"
    );
    // The old job told of no later entry and sent no ladder of part of the entries.
    let after: Vec<Progress> = heard[asked..].to_vec();
    assert!(after.iter().all(|p| p.done == done_then), "{after:?}");
    assert!(m.analysis.format_ladder.is_none());
    // The new report came as quickly as the first one did, plus the stop's poll and a row,
    // not after the rest of the entry: IQ1_M alone on the same matrix (its tables built)
    // takes longer than twice that.
    let started = Instant::now();
    let alone = format_ladder(&wide_matrix(), &Selection::parse("iq1_m").unwrap(), None);
    let entry = started.elapsed();
    assert!(alone.entries[0].measured().is_some());
    eprintln!("iq1_m alone {entry:?}");
    assert!(
        answered < plain + entry / 2,
        "answered in {answered:?}, the first report took {plain:?}, the entry {entry:?}"
    );
}
