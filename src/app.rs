//! The explorer's state and logic, Elm-style: a [`Model`], the [`Message`]s that change it,
//! one [`update`] function, and the keymap table that translates keys into messages and
//! also generates the help overlay and the hint line. No drawing and no terminal I/O here:
//! work such as analysis and saving is requested through [`Effect`]s that the runtime runs.

pub mod keymap;
pub mod model;
pub mod update;
pub mod worker;

pub use model::{Effect, Focus, Model, Overlay, Setting, Source};
pub use update::{Message, translate, update};

/// Runs every queued analysis inline, feeding the results back through [`update`] (what the
/// runtime does on its worker thread). For tests and headless use.
pub fn settle(model: &mut Model) {
    loop {
        let jobs: Vec<worker::Job> = model
            .effects
            .iter()
            .filter_map(|e| match e {
                Effect::Analyse(job) => Some(job.clone()),
                Effect::Save { .. } => None,
            })
            .collect();
        if jobs.is_empty() {
            return;
        }
        model.effects.retain(|e| !matches!(e, Effect::Analyse(_)));
        for job in jobs {
            worker::compute(&job, |result| {
                update(model, Message::Analysed(result));
                true
            });
        }
    }
}
