//! Practice mode's screen: the exercise (intro, data, configuration), the current step with
//! the answer field, the verdict, the hint, and once a step is done the answer with its
//! worked arithmetic; or a recall card.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use crate::app::keymap::{Action, Mode, first_key};
use crate::app::practice::Practice;
use crate::io::export::worked_arithmetic;
use crate::io::text::format_text;
use crate::teach::exercise::{Ask, Expected, Outcome, Verdict};
use crate::ui::{Theme, scroll};

/// The practice screen.
#[derive(Debug)]
pub struct PracticeView<'a> {
    /// Practice state.
    pub practice: &'a Practice,
    /// Styles.
    pub theme: &'a Theme,
}

/// An expected answer as the learner would type it.
#[must_use]
pub fn expected_text(expected: &Expected) -> String {
    match expected {
        Expected::Number(x) => format!("{x:.6}"),
        Expected::Whole(n) => n.to_string(),
        Expected::Codes(codes) => codes
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        Expected::Numbers(xs) => xs
            .iter()
            .map(|x| format!("{x:.6}"))
            .collect::<Vec<_>>()
            .join(", "),
        Expected::Choice { correct, .. } => format!("option {}", correct + 1),
    }
}

/// Prose from a data file as lines: single line breaks are spaces, blank lines separate
/// paragraphs.
fn prose(text: &str, style: ratatui::style::Style) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for (i, para) in text.trim().split("\n\n").enumerate() {
        if i > 0 {
            out.push(Line::raw(""));
        }
        let joined = para.split_whitespace().collect::<Vec<_>>().join(" ");
        out.push(Line::styled(joined, style));
    }
    out
}

/// Rows `lines` take when wrapped at `width` (an estimate by characters).
fn wrapped_rows(lines: &[Line<'_>], width: u16) -> u16 {
    let width = usize::from(width.max(1));
    let rows: usize = lines.iter().map(|l| l.width().max(1).div_ceil(width)).sum();
    u16::try_from(rows).unwrap_or(u16::MAX)
}

impl PracticeView<'_> {
    /// The exercise above, the step below.
    fn halves(&self, area: Rect) -> [Rect; 2] {
        let exercise = self.exercise_lines(area.width.saturating_sub(2).into());
        let wanted = wrapped_rows(&exercise, area.width.saturating_sub(2)) + 2;
        Layout::vertical([
            Constraint::Length(wanted.clamp(5, area.height / 2)),
            Constraint::Fill(1),
        ])
        .areas(area)
    }

    /// Inside the step's box: the prompt, the answer field, and the text that scrolls.
    fn step_areas(&self, inner: Rect) -> (Rect, Rect, Rect) {
        let prompt = self.prompt_lines();
        let prompt_rows = wrapped_rows(&prompt, inner.width).min(inner.height.saturating_sub(2));
        let [prompt_area, answer_row, body] = Layout::vertical([
            Constraint::Length(prompt_rows),
            Constraint::Length(1),
            Constraint::Fill(1),
        ])
        .areas(inner);
        (prompt_area, answer_row, body)
    }

    /// The step's text below the answer: verdict, hint, answer, why and worked arithmetic.
    fn body(&self) -> Paragraph<'static> {
        Paragraph::new(self.step_lines()).wrap(Wrap { trim: false })
    }

    /// How far the step's text can scroll in `area` (the whole practice screen).
    #[must_use]
    pub fn max_scroll(&self, area: Rect) -> u16 {
        if self.practice.deck.is_some() {
            return 0;
        }
        let [_, bottom] = self.halves(area);
        let inner = self.theme.block("", true, false).inner(bottom);
        let (_, _, body) = self.step_areas(inner);
        scroll::max_offset(&self.body(), body)
    }

    fn prompt_lines(&self) -> Vec<Line<'static>> {
        let step = self.practice.session.step();
        let mut lines = prose(&step.prompt, self.theme.heading);
        if let Ask::Choice { options, .. } = &step.ask {
            for (i, o) in options.iter().enumerate() {
                lines.push(Line::styled(format!("  {}. {o}", i + 1), self.theme.text));
            }
        }
        lines
    }

    fn exercise_lines(&self, width: usize) -> Vec<Line<'static>> {
        let p = self.practice;
        let s = &p.session;
        let ex = s.exercise();
        let mut lines = prose(&ex.intro, self.theme.text);
        lines.push(Line::styled(
            format!("data: {}", p.data_note),
            self.theme.dim,
        ));
        let text = format_text(s.matrix());
        for (i, l) in text.lines().enumerate() {
            if i == 6 {
                lines.push(Line::styled(
                    format!("  ... {} rows in all", s.matrix().shape().0),
                    self.theme.dim,
                ));
                break;
            }
            let mut l = format!("  {l}");
            if l.chars().count() > width {
                l = l.chars().take(width.saturating_sub(1)).collect::<String>()
                    + self.theme.glyphs.ellipsis;
            }
            lines.push(Line::styled(l, self.theme.heading));
        }
        lines.push(Line::styled(
            format!("configuration: {}", s.prepared().config.summary()),
            self.theme.dim,
        ));
        lines
    }

    fn step_lines(&self) -> Vec<Line<'static>> {
        let p = self.practice;
        let s = &p.session;
        let progress = s.progress();
        let theme = self.theme;
        let mut lines = Vec::new();
        if let Some(v) = &progress.last {
            let (glyph, style) = match v {
                Verdict::Right => ("✓", theme.good),
                Verdict::Near { .. } => ("~", theme.active),
                Verdict::Wrong { .. } => (theme.glyphs.error, theme.bad),
                Verdict::Malformed { .. } => ("?", theme.active),
            };
            let glyph = if theme.glyphs.ascii && glyph == "✓" {
                "OK"
            } else {
                glyph
            };
            let mut spans = vec![Span::styled(format!("{glyph} "), style)];
            if let Some(a) = &p.last_answer {
                spans.push(Span::styled(format!("{a}: "), theme.text));
            }
            spans.push(Span::styled(v.to_string(), style));
            lines.push(Line::from(spans));
        }
        if let Some(hint) = s.hint()
            && !progress.done()
        {
            lines.extend(prose(&format!("hint: {hint}"), theme.key));
        }
        match progress.outcome {
            Outcome::Open => {}
            Outcome::Solved { points } => lines.push(Line::styled(
                format!(
                    "solved for {points} point{}",
                    if points == 1 { "" } else { "s" }
                ),
                theme.good,
            )),
            Outcome::Revealed => lines.push(Line::styled(
                format!("revealed: {}", expected_text(&s.prepared().expected)),
                theme.active,
            )),
        }
        if progress.done() {
            if let Some(e) = s.explanation() {
                lines.extend(prose(e, theme.text));
            }
            if let Some(w) = &p.worked {
                lines.extend(
                    worked_arithmetic(w)
                        .into_iter()
                        .map(|l| Line::styled(l, theme.dim)),
                );
            }
        }
        lines
    }
}

impl Widget for &PracticeView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let p = self.practice;
        let theme = self.theme;
        if let Some(deck) = &p.deck {
            let title = format!("Recall card {} of {}", deck.index + 1, deck.cards.len());
            let block = theme.block(&title, true, false);
            let inner = block.inner(area);
            block.render(area, buf);
            if let Some(card) = deck.cards.get(deck.index) {
                let mut lines = prose(&card.question, theme.heading);
                lines.push(Line::raw(""));
                if deck.revealed {
                    lines.extend(prose(&card.answer, theme.text));
                } else {
                    lines.push(Line::styled("(Enter or Space shows the answer)", theme.dim));
                }
                Paragraph::new(lines)
                    .wrap(Wrap { trim: true })
                    .render(inner, buf);
            }
            return;
        }
        let s = &p.session;
        let [top, bottom] = self.halves(area);
        let exercise = self.exercise_lines(area.width.saturating_sub(2).into());
        let (total, most) = p.total_score();
        let overall = if (total, most) == (s.score(), s.max_score()) {
            String::new()
        } else {
            format!(" (all: {total} of {most})")
        };
        let title = format!(
            "Practice {sep} score {} of {}{overall} {sep} exercise {} of {}: {}",
            s.score(),
            s.max_score(),
            p.index + 1,
            p.exercises.len(),
            s.exercise().title,
            sep = theme.glyphs.sep
        );
        let block = theme.block(&title, false, false);
        let inner = block.inner(top);
        block.render(top, buf);
        Paragraph::new(exercise)
            .wrap(Wrap { trim: true })
            .render(inner, buf);

        let step_title = format!(
            "Step {} of {} {sep} {}",
            s.current() + 1,
            s.len(),
            s.step().ask.name(),
            sep = theme.glyphs.sep
        );
        let mut block = theme.block(&step_title, true, false);
        let (prompt_area, answer_row, body) = self.step_areas(block.inner(bottom));
        let text = self.body();
        let max = scroll::max_offset(&text, body);
        let first = p.scroll.min(max);
        let key = |a| first_key(Mode::Practice, a).unwrap_or_default();
        if let Some(note) = scroll::note(first, max, &key(Action::Up), &key(Action::Down), theme) {
            block = block.title_bottom(note);
        }
        block.render(bottom, buf);
        Paragraph::new(self.prompt_lines())
            .wrap(Wrap { trim: true })
            .render(prompt_area, buf);
        let [label, field] =
            Layout::horizontal([Constraint::Length(8), Constraint::Fill(1)]).areas(answer_row);
        Line::styled("answer: ", theme.key).render(label, buf);
        p.input.render(field, buf);
        scroll::render(text, body, buf, first);
    }
}
