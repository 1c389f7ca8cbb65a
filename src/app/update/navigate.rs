//! Moving around the panes: the selection, the focus, the settings and the pinned A.

use crate::app::model::{Focus, Model, Overlay, scrolled};

/// Lines (or items) PgUp and PgDn move by.
pub(super) const PAGE: isize = 10;
use crate::app::setting::{Current, Direction, SETTINGS, Setting};

pub(super) fn step_selection(model: &mut Model, delta: isize) {
    let moved = |i: usize, n: usize| -> usize {
        if n == 0 {
            return 0;
        }
        i.saturating_add_signed(delta).min(n - 1)
    };
    if let Some(Overlay::Scenarios { selected }) = &mut model.overlay {
        *selected = moved(*selected, crate::teach::assets::scenario_names().len());
        return;
    }
    if let Some(Overlay::Formats { selected }) = &mut model.overlay {
        let n = model
            .analysis
            .format_ladder
            .as_ref()
            .map_or(0, |l| l.entries.len());
        *selected = moved(*selected, n);
        return;
    }
    if let Some(Overlay::Tensors(picker)) = &mut model.overlay {
        let n = picker.visible().len();
        picker.selected = moved(picker.selected, n);
        return;
    }
    if let Some(Overlay::Palette(palette)) = &mut model.overlay {
        let n = palette.visible().len();
        palette.selected = moved(palette.selected, n);
        return;
    }
    if let Some(Overlay::Stored(view)) = &mut model.overlay {
        view.selected = moved(view.selected, view.order.len());
        return;
    }
    if model.overlay.is_some() {
        model.help_scroll = scrolled(model.help_scroll, delta, model.viewport.help);
        return;
    }
    if let Some(p) = &mut model.practice {
        // The step's text (a one-line answer has no use for Up and Down).
        p.scroll = scrolled(p.scroll, delta, model.viewport.practice);
        return;
    }
    if model.focus == Focus::Detail && delta.abs() == PAGE {
        // PgUp and PgDn scroll the detail's values or worked arithmetic.
        model.detail_scroll = scrolled(model.detail_scroll, delta, model.viewport.detail);
        return;
    }
    let channels = model.analysis.report.as_ref().map_or(0, |r| r.shape.0);
    match model.focus {
        Focus::Settings => model.selected_setting = moved(model.selected_setting, SETTINGS.len()),
        Focus::Ladder => {
            model.follow_active_rung = false;
            let rungs = model.analysis.report.as_ref().map_or(0, |r| r.ladder.len());
            model.selected_rung = moved(model.selected_rung, rungs);
        }
        Focus::Utilization | Focus::Errors | Focus::Detail => {
            // Move along the listed order (sorted, maybe filtered).
            if model.order.is_empty() {
                model.selected_channel = moved(model.selected_channel, channels);
            } else {
                let at = model
                    .order
                    .iter()
                    .position(|&c| c == model.selected_channel)
                    .unwrap_or(0);
                model.selected_channel = model.order[moved(at, model.order.len())];
            }
        }
        Focus::Editor => {}
    }
}

/// Tab / Shift-Tab: the next or previous pane in the focus order.
pub(super) fn cycle_focus(model: &mut Model, forward: bool) {
    let order = model.focus_order();
    let i = order.iter().position(|f| *f == model.focus).unwrap_or(0);
    let n = order.len();
    let j = if forward {
        (i + 1) % n
    } else {
        (i + n - 1) % n
    };
    model.focus = order[j];
}

/// Left and Right: change the selected setting in the Settings pane; Right opens the
/// detail of the selected channel from the channel panes.
pub(super) fn sideways(model: &mut Model, right: bool) {
    if model.focus == Focus::Settings {
        let setting = SETTINGS[model.selected_setting.min(SETTINGS.len() - 1)];
        let dir = if right {
            Direction::Forward
        } else {
            Direction::Back
        };
        change_setting(model, setting, dir);
    } else if right && matches!(model.focus, Focus::Utilization | Focus::Errors) {
        model.show_detail = true;
        model.keep_focus_visible();
    }
}

/// Selects the worst of the channels listed (the collapsed ones when filtered) and says why.
pub(super) fn worst_channel(model: &mut Model) {
    let Some(report) = model.analysis.report.as_ref() else {
        return;
    };
    let worst = if model.collapsed_only {
        report.worst_of(model.order.iter().copied())
    } else {
        report.worst_channel()
    };
    let Some(worst) = worst else {
        return;
    };
    let ch = &report.channels[worst];
    let why = if ch.collapsed {
        "collapsed".to_string()
    } else {
        match ch.metrics.sqnr_db {
            Some(db) => format!("SQNR {db:.1} dB, the lowest"),
            None => "the lowest SQNR".to_string(),
        }
    };
    let name = ch
        .label
        .clone()
        .unwrap_or_else(|| format!("channel {worst}"));
    model.status = Some(format!("worst: {name} ({why})"));
    model.selected_channel = worst;
    // From the editor (Alt-w) the focus stays where the typing is.
    if matches!(model.focus, Focus::Settings | Focus::Ladder) {
        model.focus = Focus::Utilization;
        model.keep_focus_visible();
    }
}

/// Lists only the collapsed channels, or every channel again.
pub(super) fn toggle_collapsed_only(model: &mut Model) {
    model.collapsed_only = !model.collapsed_only;
    model.refresh_order();
    model.status = Some(if model.collapsed_only && model.order.is_empty() {
        "no channel collapses under this configuration".to_string()
    } else if model.collapsed_only {
        format!("listing the {} collapsed channels", model.order.len())
    } else {
        "listing every channel".to_string()
    });
}

/// Moves `setting` one step `dir` (see [`Setting::step`]), and says when the change did
/// nothing under the rest of the configuration.
pub(super) fn change_setting(model: &mut Model, setting: Setting, dir: Direction) {
    let c = model.config;
    let changed = setting.step(
        &Current {
            config: &c,
            preset: model.preset,
            overrides: model.overrides,
            group_size: model.group_size,
            row_len: model.analysis.matrix.as_ref().map(|m| m.shape().1),
            method: model.method,
            weighing: model.importance.weighs(),
        },
        dir,
    );
    model.group_size = changed.group_size;
    if changed.method != model.method {
        change_method(model, changed.method);
        return;
    }
    let (preset, o) = (changed.preset, changed.overrides);
    if let Err(e) = model.apply_settings(preset, o) {
        model.status = Some(format!("not changed: {e}"));
    } else if let Some(n) = crate::core::no_effect::ineffective(&model.config)
        .into_iter()
        .chain(crate::core::no_effect::ineffective(&c))
        .find(|n| n.key == setting.key())
    {
        // Pointless before or after the change: either way the change did nothing.
        model.status = Some(format!("{}: no effect here ({})", n.key, n.why));
    }
}

/// Switches the method; every method but round to nearest needs activations: with none on, the built-in ones are
/// switched on, and the status line says so.
fn change_method(model: &mut Model, method: crate::core::method::choice::Choice) {
    model.method = method;
    model.analysis.methods = None;
    model.status = Some(if !method.runs() {
        "method: round to nearest alone".to_string()
    } else if model
        .importance
        .active()
        .is_some_and(|c| !matches!(c.tokens, crate::app::calibration::TokensFrom::None))
    {
        format!(
            "method: {} on the activations loaded, beside round to nearest",
            method.words()
        )
    } else {
        model.use_built_in_activations();
        format!(
            "method: {} needs activations: using the built-in ones (256 seeded tokens, a few \
             loud columns); Alt-I loads your own",
            method.words()
        )
    });
    model.request_analysis();
}

/// Alt-p: pins the configuration as A, or unpins it.
pub(super) fn toggle_pin(model: &mut Model) {
    if model.pinned.take().is_some() {
        model.analysis.pinned = None;
        model.analysis.comparison = None;
        model.status = Some("unpinned: the panes show one configuration again".into());
    } else {
        model.pinned = Some(crate::app::model::Pinned {
            preset: model.preset,
            config: model.config,
        });
        model.status = Some(format!(
            "pinned as A: {}; change settings to compare B with it (Alt-p unpins)",
            model.config.summary()
        ));
        model.request_analysis();
    }
}
