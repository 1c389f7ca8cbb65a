//! Playing an exercise through: the current step, attempts, hints, reveals and the score.
//!
//! Scoring, per step:
//!
//! | how the step ended | points |
//! |---|---|
//! | right before any miss or hint | [`POINTS_FIRST_TRY`] (2) |
//! | right after a miss or a requested hint | [`POINTS_AFTER_HINT`] (1) |
//! | revealed, or never answered | 0 |
//!
//! A miss is a near or wrong answer; it shows the hint. A malformed answer is not a miss.
//! Once a step is solved or revealed, further answers are still judged but change nothing.
//! The learner may move between steps freely; [`Session::finished`] says when every step is
//! solved or revealed.

use crate::core::config::Config;
use crate::core::{Matrix, Report};
use crate::teach::exercise::{Exercise, ExerciseError, Expected, Step, Verdict, check, prepare};

/// Points for a step answered right before any miss or hint.
pub const POINTS_FIRST_TRY: u32 = 2;
/// Points for a step answered right after a miss or a requested hint.
pub const POINTS_AFTER_HINT: u32 = 1;

/// A step with everything computed for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    /// The step's configuration.
    pub config: Config,
    /// The analysis of the session's matrix under it (without the ladder); the worked
    /// arithmetic of a revealed step is `explain_channel(matrix, &report, row)`.
    pub report: Report,
    /// The answer.
    pub expected: Expected,
}

/// How a step stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Outcome {
    /// Not solved yet.
    #[default]
    Open,
    /// Answered right, for these points.
    Solved {
        /// Points earned.
        points: u32,
    },
    /// The answer was revealed (no points).
    Revealed,
}

/// What the learner did on one step.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Progress {
    /// Answers judged while the step was open (malformed ones excluded).
    pub attempts: u32,
    /// The hint is showing (after a miss, or asked for).
    pub hint_shown: bool,
    /// How the step stands.
    pub outcome: Outcome,
    /// The verdict on the last answer.
    pub last: Option<Verdict>,
}

impl Progress {
    /// Points earned on this step.
    #[must_use]
    pub fn points(&self) -> u32 {
        match self.outcome {
            Outcome::Solved { points } => points,
            Outcome::Open | Outcome::Revealed => 0,
        }
    }

    /// Solved or revealed.
    #[must_use]
    pub fn done(&self) -> bool {
        self.outcome != Outcome::Open
    }
}

/// One learner's pass through an exercise.
#[derive(Debug, Clone)]
pub struct Session {
    exercise: Exercise,
    matrix: Matrix,
    prepared: Vec<Prepared>,
    progress: Vec<Progress>,
    current: usize,
}

impl Session {
    /// Starts `exercise` on `matrix` (its own data, or rows the learner typed), computing
    /// every step's answer. Fails if a step cannot be answered on this matrix (a row it
    /// asks about does not exist, a block's parameters overflow).
    pub fn new(exercise: Exercise, matrix: Matrix) -> Result<Self, ExerciseError> {
        let prepared = exercise
            .steps
            .iter()
            .map(|s| {
                prepare(&matrix, s).map(|(config, report, expected)| Prepared {
                    config,
                    report,
                    expected,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let progress = vec![Progress::default(); prepared.len()];
        Ok(Self {
            exercise,
            matrix,
            prepared,
            progress,
            current: 0,
        })
    }

    /// The exercise.
    #[must_use]
    pub fn exercise(&self) -> &Exercise {
        &self.exercise
    }

    /// The matrix being worked on.
    #[must_use]
    pub fn matrix(&self) -> &Matrix {
        &self.matrix
    }

    /// Number of steps.
    #[must_use]
    pub fn len(&self) -> usize {
        self.prepared.len()
    }

    /// True for an exercise without steps (the parser refuses those).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.prepared.is_empty()
    }

    /// 0-based index of the current step.
    #[must_use]
    pub fn current(&self) -> usize {
        self.current
    }

    /// The current step.
    #[must_use]
    pub fn step(&self) -> &Step {
        &self.exercise.steps[self.current]
    }

    /// The current step's configuration, report and answer.
    #[must_use]
    pub fn prepared(&self) -> &Prepared {
        &self.prepared[self.current]
    }

    /// Step `i`'s configuration, report and answer.
    #[must_use]
    pub fn prepared_at(&self, i: usize) -> Option<&Prepared> {
        self.prepared.get(i)
    }

    /// The current step's progress.
    #[must_use]
    pub fn progress(&self) -> &Progress {
        &self.progress[self.current]
    }

    /// Every step's progress.
    #[must_use]
    pub fn all_progress(&self) -> &[Progress] {
        &self.progress
    }

    /// The current step's hint, once it is showing.
    #[must_use]
    pub fn hint(&self) -> Option<&str> {
        self.progress()
            .hint_shown
            .then(|| self.step().hint.as_str())
    }

    /// The current step's explanation, once the step is solved or revealed.
    #[must_use]
    pub fn explanation(&self) -> Option<&str> {
        if self.progress().done() {
            self.step().explanation.as_deref()
        } else {
            None
        }
    }

    /// Judges `text` as the answer to the current step and records it.
    pub fn answer(&mut self, text: &str) -> Verdict {
        let verdict = check(self.step(), &self.prepared().expected, text);
        let p = &mut self.progress[self.current];
        if p.outcome == Outcome::Open && !matches!(verdict, Verdict::Malformed { .. }) {
            p.attempts += 1;
            if verdict.is_right() {
                let points = if p.hint_shown {
                    POINTS_AFTER_HINT
                } else {
                    POINTS_FIRST_TRY
                };
                p.outcome = Outcome::Solved { points };
            } else {
                p.hint_shown = true;
            }
        }
        p.last = Some(verdict.clone());
        verdict
    }

    /// Shows the current step's hint before a miss (the step is then worth
    /// [`POINTS_AFTER_HINT`] at most).
    pub fn request_hint(&mut self) {
        let p = &mut self.progress[self.current];
        if p.outcome == Outcome::Open {
            p.hint_shown = true;
        }
    }

    /// Reveals the current step's answer: the step is done, for no points. Returns the
    /// answer.
    pub fn reveal(&mut self) -> &Expected {
        let p = &mut self.progress[self.current];
        if p.outcome == Outcome::Open {
            p.outcome = Outcome::Revealed;
        }
        &self.prepared[self.current].expected
    }

    /// Moves to the next step; false at the last one.
    pub fn next_step(&mut self) -> bool {
        self.go_to(self.current + 1)
    }

    /// Moves to the previous step; false at the first one.
    pub fn previous_step(&mut self) -> bool {
        self.current > 0 && self.go_to(self.current - 1)
    }

    /// Moves to step `i` (0-based); false if there is none.
    pub fn go_to(&mut self, i: usize) -> bool {
        if i < self.prepared.len() {
            self.current = i;
            true
        } else {
            false
        }
    }

    /// Points earned so far.
    #[must_use]
    pub fn score(&self) -> u32 {
        self.progress.iter().map(Progress::points).sum()
    }

    /// The most points the exercise gives.
    #[must_use]
    pub fn max_score(&self) -> u32 {
        POINTS_FIRST_TRY * self.prepared.len() as u32
    }

    /// Every step is solved or revealed.
    #[must_use]
    pub fn finished(&self) -> bool {
        self.progress.iter().all(Progress::done)
    }
}
