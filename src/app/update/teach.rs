//! Practice mode and the demo: stepping, answering, hints and cards.

use crate::app::keymap::Action;
use crate::app::model::Model;

/// Alt-n / Alt-p: the next or previous step of practice mode, or of the demo.
pub(super) fn step(model: &mut Model, forward: bool) {
    let action = if forward {
        Action::NextStep
    } else {
        Action::PrevStep
    };
    if model.practice.is_some() {
        practice_action(model, action);
    } else if let Some(demo) = &model.demo {
        let target = if forward {
            demo.shown + 1
        } else {
            demo.shown.saturating_sub(1)
        };
        crate::app::demo::go_to(model, target);
    }
}

/// Opens practice mode on exercise `index`.
pub fn start_practice(model: &mut Model, index: usize) {
    match crate::app::practice::Practice::start(index, model.analysis.matrix.as_deref()) {
        Ok(p) => {
            model.practice = Some(Box::new(p));
            model.overlay = None;
        }
        Err(e) => model.status = Some(format!("practice: {e}")),
    }
}

pub(super) fn practice_action(model: &mut Model, action: Action) {
    let Some(p) = &mut model.practice else {
        return;
    };
    if let Some(deck) = &mut p.deck {
        match action {
            Action::Reveal => deck.revealed = !deck.revealed,
            Action::NextStep => {
                deck.index = (deck.index + 1).min(deck.cards.len().saturating_sub(1));
                deck.revealed = false;
            }
            Action::PrevStep => {
                deck.index = deck.index.saturating_sub(1);
                deck.revealed = false;
            }
            Action::Cards => p.deck = None,
            _ => {}
        }
        return;
    }
    match action {
        Action::Submit => {
            let text = p.answer_text();
            if text.trim().is_empty() {
                return;
            }
            let verdict = p.session.answer(&text);
            // A malformed answer stays to be corrected (its verdict quotes it); a judged one
            // is cleared and shown beside its verdict. Either way no earlier answer is shown
            // beside the new verdict.
            if matches!(verdict, crate::teach::exercise::Verdict::Malformed { .. }) {
                p.last_answer = None;
            } else {
                p.clear_input();
                p.last_answer = Some(text.trim().to_string());
            }
            p.refresh_worked();
        }
        Action::Hint => {
            p.session.request_hint();
            p.scroll = 0;
        }
        Action::Reveal => {
            p.session.reveal();
            p.refresh_worked();
        }
        Action::NextStep | Action::PrevStep => {
            let moved = if action == Action::NextStep {
                p.session.next_step()
            } else {
                p.session.previous_step()
            };
            if moved {
                p.clear_input();
                p.refresh_worked();
            } else if action == Action::NextStep {
                model.status = Some("that was the last step: F6 goes to the next exercise".into());
            }
        }
        Action::NextExercise => {
            let next = (p.index + 1) % p.exercises.len().max(1);
            if let Err(e) = p.switch_to(next, model.analysis.matrix.as_deref()) {
                model.status = Some(format!("practice: {e}"));
            }
        }
        Action::Cards => p.toggle_cards(),
        _ => {}
    }
}

/// Alt-m: back to where the learner left practice mode (progress and score kept), or into
/// it on the first exercise.
pub(super) fn practice(model: &mut Model) {
    if let Some(kept) = model.practice_kept.take() {
        model.practice = Some(kept);
        model.overlay = None;
    } else {
        start_practice(model, 0);
    }
}

/// Alt-D: the built-in demo, after asking when it would replace unsaved text.
pub(super) fn demo(model: &mut Model) {
    if model.dirty() {
        model.overlay = Some(crate::app::Overlay::ConfirmDemo);
    } else {
        crate::app::demo::start_builtin(model);
    }
}
