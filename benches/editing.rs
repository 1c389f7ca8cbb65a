//! Criterion benchmarks of the explorer's key handling on large pasted text.
//!
//! A key press in the editor is handled on the input thread: `update` (the edit and the
//! analysis request) and one frame drawn at 80x24 into a `TestBackend`; `key/*` times that
//! for one typed character and one Backspace (so the text stays the same), i.e. two keys
//! and one frame. The analysis runs on the worker thread; its parse is timed separately:
//! `parse_whole/*` parses the text from scratch, `parse_one_line_changed/*` parses it after
//! one line changed, keeping the parse of the other lines (what the worker does on a key).
//!
//! Texts of about 5 MB, random values with five decimals:
//!
//! - `one_line`: every value on one line (a notebook's flattened array);
//! - `lines`: 300 lines of about 1 700 values.

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use quantscope::app::editor::{EditAction, Editor, Pos};
use quantscope::app::{Message, Model, update};
use quantscope::io::text::LineCache;
use quantscope::ui::{self, Theme};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// About 5 MB of values in `lines` lines of equal length.
fn text(lines: usize) -> String {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let target = 5 << 20;
    let per_line = target / lines / 10;
    let mut out = String::with_capacity(target + lines * 16);
    for _ in 0..lines {
        for j in 0..per_line {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let v = (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
            if j > 0 {
                out.push_str(", ");
            }
            let _ = write!(out, "{v:.5}");
        }
        out.push('\n');
    }
    out
}

const CASES: [(&str, usize); 2] = [("one_line", 1), ("lines", 300)];

fn bench_keys(c: &mut Criterion) {
    let theme = Theme::new(false, false);
    let mut group = c.benchmark_group("key");
    group
        .sample_size(50)
        .measurement_time(Duration::from_secs(5));
    for (name, lines) in CASES {
        let mut model = Model::with_text(&text(lines), None);
        // Type in the middle of the middle line.
        let row = lines / 2;
        let col = model.editor.line(row).len() / 2;
        model.editor.set_cursor(Pos::new(row, col));
        let mut terminal = Terminal::new(TestBackend::new(80, 24)).expect("test backend");
        update(&mut model, Message::Resized(80, 24));
        group.bench_function(name, |b| {
            b.iter(|| {
                update(&mut model, Message::Type('1'));
                update(
                    &mut model,
                    black_box(Message::Editor {
                        action: EditAction::DeleteBack,
                        select: false,
                    }),
                );
                terminal
                    .draw(|frame| ui::draw(frame, &model, &theme))
                    .expect("draw");
                model.effects.clear();
            });
        });
    }
    group.finish();
}

fn bench_parse(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(8));
    for (name, lines) in CASES {
        let mut editor = Editor::new(&text(lines));
        group.bench_function(format!("parse_whole/{name}"), |b| {
            b.iter(|| {
                let mut cache = LineCache::default();
                black_box(cache.parse(editor.lines(), usize::MAX).is_ok())
            });
        });
        let mut cache = LineCache::default();
        let row = lines / 2;
        editor.set_cursor(Pos::new(row, editor.line(row).len() / 2));
        group.bench_function(format!("parse_one_line_changed/{name}"), |b| {
            b.iter(|| {
                editor.type_char('1');
                let ok = cache.parse(editor.lines(), usize::MAX).is_ok();
                editor.apply(EditAction::DeleteBack, false);
                black_box(ok && cache.parse(editor.lines(), usize::MAX).is_ok())
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench_keys, bench_parse);
criterion_main!(benches);
