//! The whole screen as text: `ui::draw` into ratatui's `TestBackend`, each row with its
//! trailing spaces trimmed.

use quantscope::app::Model;
use quantscope::ui::{self, Theme};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// The screen `model` draws at `width` x `height`, without colour.
pub fn screen(model: &Model, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    let theme = Theme::new(false, false);
    terminal
        .draw(|frame| ui::draw(frame, model, &theme))
        .unwrap();
    let buffer = terminal.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..buffer.area.height {
        let mut line = String::new();
        for x in 0..buffer.area.width {
            line.push_str(buffer[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The words inside the box drawn with thick borders (a prompt or a question) on `screen`,
/// joined by single spaces: what it says however its lines were wrapped.
pub fn boxed_words(screen: &str) -> String {
    let inside: String = screen
        .lines()
        .filter_map(|l| {
            let (a, b) = (l.find('┃')? + '┃'.len_utf8(), l.rfind('┃')?);
            l.get(a..b)
        })
        .collect::<Vec<_>>()
        .join("\n");
    inside
        .split(|c: char| c.is_whitespace() || ('\u{2500}'..='\u{257f}').contains(&c))
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
