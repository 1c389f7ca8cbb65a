//! Analysis jobs: parse the text (if any) and run the core, first without the ladder (the
//! active configuration, what the panes need first), then with it. The runtime runs jobs on a
//! background thread; tests run them inline with [`compute`].

use std::ops::ControlFlow;
use std::sync::Arc;

use crate::app::calibration::{Calibration, Resolved};
use crate::core::format_ladder::{
    FormatLadder, Inputs, Progress, Selection, format_ladder_tracked,
};
use crate::core::output::{self, OutputStage, add_output_errors};
use crate::core::{
    AnalyseError, Config, Matrix, Options, Report, Rung, analyse_staged_weighted, analyse_weighted,
};
use crate::io::text::{LineCache, Notes, ParseError};

/// The most numbers the editor's text may hold; larger data belongs in a `.npy` file.
pub const MAX_TEXT_VALUES: usize = 4_000_000;

/// What a job analyses.
#[derive(Debug, Clone)]
pub enum Input {
    /// The editor's lines, to be parsed (shared with the editor, not copied).
    Text(Vec<Arc<String>>),
    /// A matrix loaded from a file.
    Matrix(Arc<Matrix>),
}

/// One request for analysis.
#[derive(Debug, Clone)]
pub struct Job {
    /// Increases with every request; results of older generations are dropped.
    pub generation: u64,
    /// The data.
    pub input: Input,
    /// The configuration.
    pub config: Config,
    /// The configuration pinned as A, analysed after the active one (B) for a comparison.
    pub pinned: Option<Config>,
    /// The formats overlay is open: run the format ladder last, marking the active
    /// configuration (from this preset).
    pub formats: Option<&'static str>,
    /// The importance matrix or activations, when loaded and not switched off: the output
    /// errors follow the report.
    pub calibration: Option<Arc<Calibration>>,
    /// A method beyond rounding to run on the activations, after the output errors.
    pub method: Option<crate::core::method::run::Request>,
    /// The llama.cpp formats (and `--clip mse-weighted`) quantize with the calibration's
    /// importance; false, they quantize as without it and the importance only measures.
    pub weigh: bool,
}

/// What a job produced.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// The text does not parse.
    Invalid(ParseError),
    /// The analysis failed (an invalid configuration).
    Failed(String),
    /// The pinned configuration's report (with its ladder), after the active one's.
    Pinned(Arc<Report>),
    /// Entries of the format ladder done so far, of all, and the entry under way.
    FormatLadderProgress(Progress),
    /// Rows of the ladder done so far, of all, while it is computed.
    LadderProgress(usize, usize),
    /// The format ladder, last.
    FormatLadder(Arc<FormatLadder>),
    /// The job has sent everything it will send.
    Done,
    /// Whether the loaded importance or activations fit the data: `None` when they do,
    /// else why not (the report then comes without them). Sent first by a job with them.
    Calibration(Option<String>),
    /// Rows of the output errors done so far, of all (every rung of the ladder counted).
    OutputProgress(usize, usize),
    /// The report again with its output errors, and each rung's, after its ladder.
    Output(Arc<Report>),
    /// Steps of the method beyond rounding done so far, of all.
    MethodProgress(usize, usize),
    /// The method beyond rounding, after the output errors; or why it could not run.
    Methods(Result<Arc<crate::core::method::run::Methods>, String>),
    /// The ladder of the report just sent (which came without one).
    Ladder(Vec<Rung>),
    /// A report: `complete` is false for the first one, which has no ladder yet.
    Report {
        /// The parsed matrix.
        matrix: Arc<Matrix>,
        /// Notes on the text (values that underflow `f32`, a skipped header).
        notes: Arc<Notes>,
        /// The report.
        report: Arc<Report>,
        /// The ladder is included.
        complete: bool,
    },
}

/// A job's generation and outcome.
#[derive(Debug, Clone)]
pub struct JobResult {
    /// The job's generation.
    pub generation: u64,
    /// What it produced.
    pub outcome: Outcome,
}

/// What the analysis thread keeps between jobs: the parse of the editor's lines (a key
/// parses the line it changed, and a settings change parses nothing) and the matrix built
/// from them.
#[derive(Debug, Default)]
pub struct Worker {
    lines: LineCache,
    /// The last parse and the matrix built from it, so that an unchanged text keeps one
    /// matrix. The parse itself is held, not its address: once freed (when a text that does
    /// not parse replaces it), its address could be given to the next parse, whose new rows
    /// would then be taken for the old ones.
    matrix: Option<(Arc<crate::io::text::Parsed>, Data)>,
    /// The importance and activations last resolved, for which calibration and shape.
    resolved: Option<(Arc<Calibration>, (usize, usize), Resolved)>,
    /// The activations the methods last read (up to their bound), for which calibration
    /// and shape: a method's next job reads none.
    method_tokens: Option<(Arc<Calibration>, (usize, usize), MethodTokens)>,
}

/// The activations a method runs on, and how many tokens the source holds.
type MethodTokens = (Arc<ndarray::Array2<f32>>, usize);

/// A job's data: the matrix and the notes on its text.
type Data = (Arc<Matrix>, Arc<Notes>);

impl Worker {
    /// Runs `job`, handing each result to `emit`; `emit` returns false to stop early (a
    /// newer job is waiting).
    pub fn run(&mut self, job: &Job, emit: impl FnMut(JobResult) -> bool) {
        let parsed = match &job.input {
            Input::Matrix(m) => Ok((Arc::clone(m), Arc::new(Notes::default()))),
            Input::Text(lines) => self.parse(lines),
        };
        let mut emit = emit;
        let resolved = match (&parsed, &job.calibration) {
            (Ok((matrix, _)), Some(c)) => {
                let r = self.resolve(c, matrix);
                let note = r.as_ref().err().cloned();
                if !emit(JobResult {
                    generation: job.generation,
                    outcome: Outcome::Calibration(note),
                }) {
                    return;
                }
                r.ok()
            }
            _ => None,
        };
        let tokens = MethodTokensCache {
            key: job.calibration.as_ref(),
            kept: &mut self.method_tokens,
        };
        if analyse_job(job, parsed, resolved.as_ref(), tokens, &mut emit) {
            emit(JobResult {
                generation: job.generation,
                outcome: Outcome::Done,
            });
        }
    }

    /// `calibration` resolved for `matrix`, kept while neither changes shape or source.
    fn resolve(
        &mut self,
        calibration: &Arc<Calibration>,
        matrix: &Matrix,
    ) -> Result<Resolved, String> {
        if let Some((c, shape, r)) = &self.resolved
            && Arc::ptr_eq(c, calibration)
            && *shape == matrix.shape()
        {
            return Ok(r.clone());
        }
        let r = calibration.resolve(matrix)?;
        self.resolved = Some((Arc::clone(calibration), matrix.shape(), r.clone()));
        Ok(r)
    }

    fn parse(&mut self, lines: &[Arc<String>]) -> Result<Data, ParseError> {
        let parsed = self.lines.parse(lines, MAX_TEXT_VALUES)?;
        if let Some((last, data)) = &self.matrix
            && Arc::ptr_eq(last, &parsed)
        {
            return Ok(data.clone());
        }
        let data = (
            Arc::new(parsed.matrix.clone()),
            Arc::new(parsed.notes.clone()),
        );
        self.matrix = Some((parsed, data.clone()));
        Ok(data)
    }
}

/// Runs `job` once, with nothing kept (tests and headless use); see [`Worker::run`].
pub fn compute(job: &Job, emit: impl FnMut(JobResult) -> bool) {
    Worker::default().run(job, emit);
}

/// The worker's activations for the methods, and the calibration a job brings.
struct MethodTokensCache<'a> {
    key: Option<&'a Arc<Calibration>>,
    kept: &'a mut Option<(Arc<Calibration>, (usize, usize), MethodTokens)>,
}

impl MethodTokensCache<'_> {
    /// The first tokens of `resolved`'s activations (up to the methods' bound) for a matrix
    /// of `shape`: those kept when the calibration and the shape are the same, else read.
    fn get(
        &mut self,
        tokens: &dyn crate::core::importance::Tokens,
        shape: (usize, usize),
    ) -> Result<MethodTokens, String> {
        if let (Some((c, s, kept)), Some(key)) = (&*self.kept, self.key)
            && Arc::ptr_eq(c, key)
            && *s == shape
        {
            return Ok(kept.clone());
        }
        let (count, width) = tokens.shape();
        let limit = crate::core::method::tokens::budget(count, width);
        let x =
            crate::core::method::tokens::read_first(tokens, limit).map_err(|e| e.to_string())?;
        let read = (Arc::new(x), count);
        *self.kept = self.key.map(|k| (Arc::clone(k), shape, read.clone()));
        Ok(read)
    }
}

/// The analysis's error as the explorer says it: mse-weighted clipping without an
/// importance to weigh by names the keys that give it one (`measured_only`: one is loaded
/// but only measures).
fn failure(e: &AnalyseError, measured_only: bool) -> String {
    match e {
        AnalyseError::ClipNeedsImportance if measured_only => "clipping mse-weighted weighs \
            each column's squared errors by the importance, which is measured only: Alt-W \
            switches it to quantize with it, or choose another clipping"
            .into(),
        AnalyseError::ClipNeedsImportance => "clipping mse-weighted weighs each column's \
            squared errors by an importance, and none is in use: load one with Alt-I (or \
            switch it on with Alt-W), or choose another clipping"
            .into(),
        e => e.to_string(),
    }
}

/// Runs the job's analyses; returns false when `emit` asked to stop.
fn analyse_job(
    job: &Job,
    parsed: Result<Data, ParseError>,
    resolved: Option<&Resolved>,
    tokens: MethodTokensCache<'_>,
    emit: &mut impl FnMut(JobResult) -> bool,
) -> bool {
    // What the formats quantize with; the output stage below measures with the importance
    // either way.
    let importance = resolved
        .filter(|_| job.weigh)
        .and_then(|r| r.importance.as_ref());
    // The report is kept to add its output errors to, once its ladder is done.
    let mut kept: Option<Report> = None;
    let generation = job.generation;
    let (matrix, notes) = match parsed {
        Ok(p) => p,
        Err(e) => {
            emit(JobResult {
                generation,
                outcome: Outcome::Invalid(e),
            });
            return true;
        }
    };
    // The active configuration first, as soon as it is ready; its ladder after, with its
    // progress. Both hand results to `emit` (shared by the two callbacks).
    let mut stopped = false;
    let ladder = {
        let shared = std::cell::RefCell::new(&mut *emit);
        let send = |outcome| {
            (shared.borrow_mut())(JobResult {
                generation,
                outcome,
            })
        };
        let mut first = |report: Report| {
            if resolved.is_some() {
                kept = Some(report.clone());
            }
            stopped = !send(Outcome::Report {
                matrix: Arc::clone(&matrix),
                notes: Arc::clone(&notes),
                report: Arc::new(report),
                complete: false,
            });
            !stopped
        };
        // The last slice's progress would only be replaced by the ladder itself.
        let mut progress =
            |done, total| done >= total || send(Outcome::LadderProgress(done, total));
        analyse_staged_weighted(&matrix, &job.config, importance, &mut first, &mut progress)
    };
    let outcome = match ladder {
        Ok(Some(rungs)) => {
            if let Some(k) = &mut kept {
                k.ladder.clone_from(&rungs);
            }
            Outcome::Ladder(rungs)
        }
        Ok(None) => return false,
        Err(e) => Outcome::Failed(failure(&e, importance.is_none() && resolved.is_some())),
    };
    let failed = matches!(outcome, Outcome::Failed(_));
    if stopped
        || !emit(JobResult {
            generation,
            outcome,
        })
    {
        return false;
    }
    if failed {
        return true;
    }
    let stage = resolved.and_then(|r| {
        OutputStage::new(
            &matrix,
            output::Calibration {
                importance: r.importance.as_ref(),
                tokens: r.tokens.as_deref(),
            },
        )
        .ok()
    });
    if let (Some(stage), Some(report)) = (&stage, kept)
        && !output_errors(stage, report, generation, emit)
    {
        return false;
    }
    let ControlFlow::Continue(method_entries) = method_stage(job, &matrix, resolved, tokens, emit)
    else {
        return false;
    };
    pinned_and_formats(
        job,
        &matrix,
        importance,
        stage.as_ref(),
        method_entries,
        emit,
    )
}

/// The method of `job`, when it asks for one, and its entries of the format ladder, when the
/// job asks for that too; breaks when `emit` asked to stop.
fn method_stage(
    job: &Job,
    matrix: &Matrix,
    resolved: Option<&Resolved>,
    tokens: MethodTokensCache<'_>,
    emit: &mut impl FnMut(JobResult) -> bool,
) -> ControlFlow<(), Vec<crate::core::format_ladder::Entry>> {
    let Some(request) = &job.method else {
        return ControlFlow::Continue(Vec::new());
    };
    let ran = methods(request, matrix, resolved, tokens, job.generation, emit)?;
    let entries = match ran {
        Some(m) if job.formats.is_some() => {
            let name = resolved.and_then(|r| r.tokens.as_ref()).map(|t| t.name());
            crate::core::method::ladder::entries(
                &m,
                matrix.shape(),
                name.as_deref(),
                request.act_order,
            )
        }
        _ => Vec::new(),
    };
    ControlFlow::Continue(entries)
}

/// Adds the output errors to `report` (and its rungs) and sends it; returns false when
/// `emit` asked to stop.
fn output_errors(
    stage: &OutputStage<'_>,
    mut report: Report,
    generation: u64,
    emit: &mut impl FnMut(JobResult) -> bool,
) -> bool {
    let mut progress = |done, total| {
        done >= total
            || emit(JobResult {
                generation,
                outcome: Outcome::OutputProgress(done, total),
            })
    };
    let outcome = match add_output_errors(stage, &mut report, &mut progress) {
        Ok(true) => Outcome::Output(Arc::new(report)),
        Ok(false) => return false,
        Err(e) => Outcome::Calibration(Some(e.to_string())),
    };
    emit(JobResult {
        generation,
        outcome,
    })
}

/// Runs the method asked for on the activations, with progress, and sends its result (or
/// why it could not run); breaks when `emit` asked to stop (a newer job waits: the method
/// stops between two of its steps), else gives its result when it ran. The activations are read once per calibration
/// and shape, their first tokens up to `core::method::tokens`' bound, and the result says
/// when they were cut.
fn methods(
    request: &crate::core::method::run::Request,
    matrix: &Matrix,
    resolved: Option<&Resolved>,
    mut cache: MethodTokensCache<'_>,
    generation: u64,
    emit: &mut impl FnMut(JobResult) -> bool,
) -> ControlFlow<(), Option<Arc<crate::core::method::run::Methods>>> {
    use crate::core::method::MethodError;
    let go_on = |sent: bool| {
        if sent {
            ControlFlow::Continue(None)
        } else {
            ControlFlow::Break(())
        }
    };
    let Some(tokens) = resolved.and_then(|r| r.tokens.as_deref()) else {
        return go_on(emit(JobResult {
            generation,
            outcome: Outcome::Methods(Err(
                "the method needs activations: load them with Alt-I, or switch them on with Alt-W"
                    .to_string(),
            )),
        }));
    };
    let result = cache.get(tokens, matrix.shape()).and_then(|(x, held)| {
        let mut progress = |done, total| {
            emit(JobResult {
                generation,
                outcome: Outcome::MethodProgress(done, total),
            })
        };
        match crate::core::method::run::run(&matrix.values(), &x.view(), request, &mut progress) {
            Ok(mut m) => {
                m.tokens_held = (held > m.tokens).then_some(held);
                Ok(Some(Arc::new(m)))
            }
            Err(MethodError::Cancelled) => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    });
    let (outcome, kept) = match result {
        Ok(Some(m)) => (Outcome::Methods(Ok(Arc::clone(&m))), Some(m)),
        Ok(None) => return ControlFlow::Break(()),
        Err(e) => (Outcome::Methods(Err(e)), None),
    };
    go_on(emit(JobResult {
        generation,
        outcome,
    }))?;
    ControlFlow::Continue(kept)
}

/// The pinned configuration's report and the format ladder (with the method's entries),
/// when the job asks for them; returns false when `emit` asked to stop.
fn pinned_and_formats(
    job: &Job,
    matrix: &Matrix,
    importance: Option<&crate::core::importance::Importance>,
    stage: Option<&OutputStage<'_>>,
    method_entries: Vec<crate::core::format_ladder::Entry>,
    emit: &mut impl FnMut(JobResult) -> bool,
) -> bool {
    let generation = job.generation;
    if let Some(pinned) = &job.pinned {
        let analysed = analyse_weighted(matrix, pinned, importance, Options::default());
        let outcome = match analysed {
            Ok(mut report) => {
                if let Some(stage) = stage {
                    report.output = stage.errors(&report, &mut |_, _| true).ok().flatten();
                }
                Outcome::Pinned(Arc::new(report))
            }
            Err(e) => Outcome::Failed(format!("the pinned configuration A: {e}")),
        };
        if !emit(JobResult {
            generation,
            outcome,
        }) {
            return false;
        }
    }
    if let Some(preset) = job.formats {
        let inputs = Inputs {
            importance,
            output: stage,
        };
        // Asked between entries and, while a format's rows are encoded, every few tens of
        // milliseconds: a newer job stops the entry in progress at its next row.
        let format_ladder = format_ladder_tracked(
            matrix,
            &Selection::all(),
            Some((preset, &job.config)),
            inputs,
            &mut |progress| {
                emit(JobResult {
                    generation,
                    outcome: Outcome::FormatLadderProgress(progress),
                })
            },
        );
        let Some(mut format_ladder) = format_ladder else {
            return false;
        };
        crate::core::format_ladder::add_method_entries(&mut format_ladder, method_entries);
        return emit(JobResult {
            generation,
            outcome: Outcome::FormatLadder(Arc::new(format_ladder)),
        });
    }
    true
}
