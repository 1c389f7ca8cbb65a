//! Analysis jobs: parse the text (if any) and run the core, first without the ladder (the
//! active configuration, what the panes need first), then with it. The runtime runs jobs on a
//! background thread; tests run them inline with [`compute`].

use std::sync::Arc;

use crate::core::{Config, Matrix, Options, Report, analyse_with};
use crate::io::text::{ParseError, parse_text_limited};

/// The most numbers the editor's text may hold; larger data belongs in a `.npy` file.
pub const MAX_TEXT_VALUES: usize = 4_000_000;

/// What a job analyses.
#[derive(Debug, Clone)]
pub enum Input {
    /// The editor's text, to be parsed.
    Text(Arc<str>),
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
}

/// What a job produced.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// The text does not parse.
    Invalid(ParseError),
    /// The analysis failed (an invalid configuration).
    Failed(String),
    /// A report: `complete` is false for the first one, which has no ladder yet.
    Report {
        /// The parsed matrix.
        matrix: Arc<Matrix>,
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

/// Runs `job`, handing each result to `emit`; `emit` returns false to stop early (a newer
/// job is waiting).
pub fn compute(job: &Job, mut emit: impl FnMut(JobResult) -> bool) {
    let generation = job.generation;
    let matrix = match &job.input {
        Input::Matrix(m) => Arc::clone(m),
        Input::Text(text) => match parse_text_limited(text, MAX_TEXT_VALUES) {
            Ok(m) => Arc::new(m),
            Err(e) => {
                emit(JobResult {
                    generation,
                    outcome: Outcome::Invalid(e),
                });
                return;
            }
        },
    };
    for ladder in [false, true] {
        let outcome = match analyse_with(&matrix, &job.config, Options { ladder }) {
            Ok(report) => Outcome::Report {
                matrix: Arc::clone(&matrix),
                report: Arc::new(report),
                complete: ladder,
            },
            Err(e) => Outcome::Failed(e.to_string()),
        };
        let failed = matches!(outcome, Outcome::Failed(_));
        if !emit(JobResult {
            generation,
            outcome,
        }) || failed
        {
            return;
        }
    }
}
