//! Performs the explorer's [`Effect`]s and hands their results back as [`Message`]s: the one
//! place where the explorer touches files and threads. The model asks (`update` queues
//! effects), the runtime does, and every result comes back through `update`.
//!
//! Two ways to run, one set of jobs (`files`, and the analysis in
//! [`crate::app::worker`]):
//!
//! - [`Runtime`]: analyses on a thread of its own (the newest request first), tensor loads
//!   on threads of their own, saves and file listings at once; every result arrives on one
//!   channel, read with [`Runtime::arrived`]. The terminal loop uses it.
//! - [`settle`]: everything inline, until nothing is left to do. Tests and headless use.

pub mod files;
pub mod importance;

use std::panic::{self, AssertUnwindSafe};
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::thread;

use crate::app::worker::{Job, JobResult, Outcome, Worker};
use crate::app::{Effect, Message, Model, update};

/// The stack each analysing thread gets.
pub use crate::core::ANALYSIS_STACK;

/// Runs effects in the background and collects their results on one channel.
pub struct Runtime {
    /// Analysis requests, to the analysis thread.
    jobs: Sender<Job>,
    /// Where every job sends its result.
    tx: Sender<Message>,
    rx: Receiver<Message>,
    /// Loads and exports started whose message has not been read yet.
    loads: usize,
}

/// Sets up rayon's global pool with [`ANALYSIS_STACK`] per worker; call it before any
/// analysis. Does nothing when the pool is already set up.
pub fn init_threads() {
    // An error means the pool exists already (with whatever stack it was given).
    let _ = rayon::ThreadPoolBuilder::new()
        .stack_size(ANALYSIS_STACK)
        .build_global();
}

impl Runtime {
    /// Starts the analysis thread.
    pub fn start() -> std::io::Result<Self> {
        let (jobs, job_rx) = mpsc::channel::<Job>();
        let (tx, rx) = mpsc::channel::<Message>();
        let results = tx.clone();
        thread::Builder::new()
            .name("analysis".into())
            .stack_size(ANALYSIS_STACK)
            .spawn(move || analysis_loop(&job_rx, &results))?;
        Ok(Self {
            jobs,
            tx,
            rx,
            loads: 0,
        })
    }

    /// Starts `effect` (asked for by `model`); its result arrives later through
    /// [`Runtime::arrived`]. Fails only when the analysis thread has stopped.
    pub fn perform(&mut self, model: &Model, effect: Effect) -> Result<(), &'static str> {
        match effect {
            Effect::Analyse => self
                .jobs
                .send(model.job())
                .map_err(|_| "the analysis thread stopped"),
            Effect::LoadTensor {
                path,
                name,
                request,
            } => {
                self.loads += 1;
                let tx = self.tx.clone();
                let started = thread::Builder::new().name("load".into()).spawn(move || {
                    // The receiver outlives the loop; a send after it has gone is of no
                    // interest.
                    let _ = tx.send(Message::TensorLoaded {
                        request,
                        result: files::load_tensor(&path, &name),
                    });
                });
                if let Err(e) = started {
                    let _ = self.tx.send(Message::TensorLoaded {
                        request,
                        result: Err(format!("could not start loading: {e}")),
                    });
                }
                Ok(())
            }
            Effect::LoadImportance { .. } => {
                // Reading activations and checking them against the data takes a moment.
                self.loads += 1;
                let tx = self.tx.clone();
                let request = match &effect {
                    Effect::LoadImportance { request, .. } => *request,
                    _ => 0,
                };
                let started = thread::Builder::new()
                    .name("importance".into())
                    .spawn(move || {
                        if let Some(message) = perform_now(effect) {
                            let _ = tx.send(message);
                        }
                    });
                if let Err(e) = started {
                    let _ = self.tx.send(Message::ImportanceLoaded {
                        request,
                        result: Err(format!("could not start loading: {e}")),
                    });
                }
                Ok(())
            }
            Effect::Export { ref path, .. } | Effect::WriteDequantized { ref path, .. } => {
                // A PDF of a large matrix takes a moment: the panes stay live meanwhile.
                let path = path.clone();
                self.loads += 1;
                let tx = self.tx.clone();
                let started = thread::Builder::new().name("export".into()).spawn(move || {
                    if let Some(message) = perform_now(effect) {
                        let _ = tx.send(message);
                    }
                });
                if let Err(e) = started {
                    let message = format!("could not start the export: {e}");
                    let _ = self.tx.send(Message::Exported(Err((path, message))));
                }
                Ok(())
            }
            quick => {
                if let Some(message) = perform_now(quick) {
                    let _ = self.tx.send(message);
                }
                Ok(())
            }
        }
    }

    /// A result that has arrived, if any.
    pub fn arrived(&mut self) -> Option<Message> {
        match self.rx.try_recv() {
            Ok(message) => {
                if matches!(
                    message,
                    Message::TensorLoaded { .. }
                        | Message::Exported(_)
                        | Message::ImportanceLoaded { .. }
                ) {
                    self.loads = self.loads.saturating_sub(1);
                }
                Some(message)
            }
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => None,
        }
    }

    /// A tensor load or an export is under way (the event loop keeps checking for its
    /// result).
    #[must_use]
    pub fn loading(&self) -> bool {
        self.loads > 0
    }
}

/// Performs an effect that needs no thread (saving, listing a file's tensors) and returns
/// its result; `None` for the effects that do ([`Effect::Analyse`],
/// [`Effect::LoadTensor`]), which [`Runtime`] and [`settle`] run their own ways.
#[must_use]
pub fn perform_now(effect: Effect) -> Option<Message> {
    match effect {
        Effect::Save { path, text } => Some(Message::Saved(files::save(path, &text))),
        Effect::Export {
            path,
            document,
            job,
        } => Some(Message::Exported(files::export(path, document, &job))),
        Effect::WriteDequantized {
            path,
            report,
            tensor,
        } => {
            let written = crate::core::reconstruct::reconstruction(&report)
                .map_err(|e| e.to_string())
                .and_then(|m| crate::io::dequantized::write_file(&path, &m, &tensor));
            Some(Message::Exported(match written {
                Ok(()) => Ok(path),
                Err(e) => Err((path, e)),
            }))
        }
        Effect::LoadImportance {
            spec,
            matrix,
            tensor,
            request,
        } => Some(Message::ImportanceLoaded {
            request,
            result: importance::load_spec(&spec, matrix.as_deref(), tensor.as_deref())
                .map(std::sync::Arc::new),
        }),
        Effect::ListTensors { path } => {
            let result = files::list_tensors(&path);
            Some(Message::TensorsListed { path, result })
        }
        Effect::Analyse | Effect::LoadTensor { .. } => None,
    }
}

/// Runs the effects the model asks for inline, feeding each result back through
/// [`update()`], until none is left but writes (what [`Runtime`] does in the background).
/// Saves stay queued in `model.effects`: a test looks at them, a headless caller performs
/// them with [`perform_now`]. For tests and headless use.
pub fn settle(model: &mut Model) {
    loop {
        let (writes, effects): (Vec<Effect>, Vec<Effect>) = model
            .effects
            .drain(..)
            .partition(|e| matches!(e, Effect::Save { .. }));
        model.effects = writes;
        if effects.is_empty() {
            return;
        }
        let mut analyse = false;
        for effect in effects {
            match effect {
                Effect::Analyse => analyse = true,
                Effect::LoadTensor {
                    path,
                    name,
                    request,
                } => update(
                    model,
                    Message::TensorLoaded {
                        request,
                        result: files::load_tensor(&path, &name),
                    },
                ),
                quick => {
                    if let Some(message) = perform_now(quick) {
                        update(model, message);
                    }
                }
            }
        }
        if analyse {
            let job = model.job();
            crate::app::worker::compute(&job, |result| {
                update(model, Message::Analysed(result));
                true
            });
        }
    }
}

/// Runs the newest job, dropping older ones; between the first result and the ladder, a
/// newer job wins. A panic in the analysis becomes a failure message, and what the worker
/// kept is dropped.
fn analysis_loop(jobs: &Receiver<Job>, results: &Sender<Message>) {
    let mut worker = Worker::default();
    let mut next: Option<Job> = None;
    loop {
        let mut job = match next.take() {
            Some(j) => j,
            None => match jobs.recv() {
                Ok(j) => j,
                Err(_) => return,
            },
        };
        loop {
            match jobs.try_recv() {
                Ok(newer) => job = newer,
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => return,
            }
        }
        let generation = job.generation;
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            worker.run(&job, |result| {
                if results.send(Message::Analysed(result)).is_err() {
                    return false;
                }
                match jobs.try_recv() {
                    Ok(newer) => {
                        next = Some(newer);
                        false
                    }
                    Err(_) => true,
                }
            });
        }));
        if let Err(payload) = outcome {
            worker = Worker::default();
            let what = payload
                .downcast_ref::<&str>()
                .map(ToString::to_string)
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown".into());
            let failed = JobResult {
                generation,
                outcome: Outcome::Failed(format!("internal error in the analysis: {what}")),
            };
            if results.send(Message::Analysed(failed)).is_err() {
                return;
            }
        }
    }
}
