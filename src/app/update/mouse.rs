//! The mouse: a click focuses the pane under it and selects the item under it; the wheel
//! scrolls what is under it (a list moves its selection, a text its first line), or the
//! overlay or practice text when one is open.

use crate::app::editor::EditAction;
use crate::app::model::{Focus, Hit, Model};

use super::navigate::step_selection;

/// Lines the wheel scrolls a text by, per notch.
const WHEEL_LINES: isize = 3;

/// A click on `hit`.
pub(super) fn click(model: &mut Model, hit: Hit) {
    let (focus, item) = match hit {
        Hit::Nothing => return,
        Hit::Pane(f) => (f, None),
        Hit::Item(f, i) => (f, Some(i)),
    };
    if !model.focus_order().contains(&focus) {
        return;
    }
    model.focus = focus;
    model.status = None;
    let Some(i) = item else {
        return;
    };
    match focus {
        Focus::Settings => model.selected_setting = i,
        Focus::Ladder => {
            model.selected_rung = i;
            model.follow_active_rung = false;
        }
        Focus::Utilization | Focus::Errors => {
            if model.selected_channel != i {
                model.selected_channel = i;
                model.detail_scroll = 0;
                if model.show_explain {
                    model.refresh_explanation();
                }
            }
        }
        Focus::Editor | Focus::Detail => {}
    }
}

/// A notch of the wheel over `hit`, `down` or up.
pub(super) fn wheel(model: &mut Model, hit: Hit, down: bool) {
    let sign = if down { 1 } else { -1 };
    // An overlay or practice mode takes the wheel wherever it turns.
    if model.overlay.is_some() || model.practice.is_some() {
        let lines = if matches!(model.overlay, Some(crate::app::Overlay::Help))
            || model.practice.is_some()
        {
            WHEEL_LINES
        } else {
            1
        };
        step_selection(model, sign * lines);
        return;
    }
    let focus = match hit {
        Hit::Nothing => return,
        Hit::Pane(f) | Hit::Item(f, _) => f,
    };
    if !model.focus_order().contains(&focus) {
        return;
    }
    model.focus = focus;
    match focus {
        Focus::Editor => {
            let action = if down {
                EditAction::Down
            } else {
                EditAction::Up
            };
            for _ in 0..WHEEL_LINES {
                model.editor.apply(action, false);
            }
        }
        Focus::Detail => {
            model.detail_scroll = crate::app::model::scrolled(
                model.detail_scroll,
                sign * WHEEL_LINES,
                model.viewport.detail,
            );
        }
        Focus::Settings | Focus::Utilization | Focus::Errors | Focus::Ladder => {
            let before = model.selected_channel;
            step_selection(model, sign);
            if model.selected_channel != before {
                model.detail_scroll = 0;
                if model.show_explain {
                    model.refresh_explanation();
                }
            }
        }
    }
}
