//! The demo player: a scripted sequence of scenarios, settings, focus and captions, stepped
//! through at the presenter's pace. Going back replays the script from the start, so every
//! step always looks the same however it was reached.

use crate::app::model::{Focus, Model, Source, new_editor};
use crate::teach::script::{DemoFocus, DemoScript, DemoStep};

/// A script being played and how far it has got.
#[derive(Debug, Clone)]
pub struct Demo {
    /// The script.
    pub script: DemoScript,
    /// Steps applied so far (0 before the first).
    pub shown: usize,
}

impl Demo {
    /// A player for `script`, before its first step.
    #[must_use]
    pub fn new(script: DemoScript) -> Self {
        Self { script, shown: 0 }
    }

    /// Number of steps.
    #[must_use]
    pub fn len(&self) -> usize {
        self.script.steps.len()
    }

    /// True for a script without steps.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.script.steps.is_empty()
    }
}

fn focus_of(f: DemoFocus) -> Focus {
    match f {
        DemoFocus::Data => Focus::Editor,
        DemoFocus::Settings => Focus::Settings,
        DemoFocus::Utilization => Focus::Utilization,
        DemoFocus::Errors => Focus::Errors,
        DemoFocus::Ladder => Focus::Ladder,
        DemoFocus::Detail => Focus::Detail,
    }
}

/// Applies one step to the model.
pub fn apply_step(model: &mut Model, step: &DemoStep) {
    if let Some(scenario) = &step.scenario {
        model.load_scenario(scenario);
    }
    let (preset, overrides) = step.apply(model.preset, model.overrides);
    if let Err(e) = model.apply_settings(preset, overrides) {
        model.status = Some(format!("demo step {}: {e}", step.number));
    }
    if let Some(f) = step.focus {
        let focus = focus_of(f);
        // The focused pane is on screen: the detail is shown for it, and hidden for the
        // result panes it would cover on a narrow screen.
        model.show_detail = focus == Focus::Detail;
        if focus != Focus::Detail {
            model.show_explain = false;
        }
        model.focus = focus;
        // The Ladder pane shows the rung the step's configuration uses (the one its caption
        // speaks of), however many rungs there are.
        if focus == Focus::Ladder {
            model.follow_active_rung = true;
            model.follow_the_active_rung();
        }
    }
    if let Some(row) = step.select {
        model.selected_channel = row;
    }
    model.set_caption(step.caption.clone());
}

/// Resets the model to a blank state for replaying a script from its start.
pub fn reset(model: &mut Model) {
    model.editor = new_editor("");
    model.source = Source::Text { path: None };
    model.show_detail = false;
    model.show_explain = false;
    model.selected_channel = 0;
    model.overlay = None;
    model.set_caption(None);
}

/// Shows step `target` (1-based; 0 resets): replays steps 1..=target.
pub fn go_to(model: &mut Model, target: usize) {
    let Some(demo) = model.demo.take() else {
        return;
    };
    let target = target.min(demo.len());
    if target < demo.shown {
        reset(model);
        for step in &demo.script.steps[..target] {
            apply_step(model, step);
        }
    } else {
        for step in &demo.script.steps[demo.shown..target] {
            apply_step(model, step);
        }
    }
    model.demo = Some(Demo {
        shown: target,
        ..demo
    });
}

/// Plays the built-in demo from its first step (the caller has made sure nothing unsaved is
/// lost): practice mode and any overlay are closed first.
pub fn start_builtin(model: &mut Model) {
    match crate::teach::script::demo_script("quiet-row") {
        Ok(script) => {
            model.overlay = None;
            if model.practice.is_some() {
                model.practice_kept = model.practice.take();
            }
            model.demo = Some(Demo::new(script));
            go_to(model, 1);
            model.status =
                Some("the demo: Space or Right for the next step, Left back, Esc ends it".into());
        }
        Err(e) => model.status = Some(format!("the demo: {e}")),
    }
}
