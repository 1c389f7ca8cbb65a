//! Exercises as data: a TOML file gives the data, the configuration and the steps; the
//! answer of every step is computed here by [`analyse`](crate::core::analyse), never typed
//! in the file (except a multiple choice's).
//!
//! The format is documented in `assets/exercises/README.md`. In short:
//!
//! ```toml
//! title = "One ruler or one per row"
//! intro = "Two rows of very different sizes share int4 codes."
//! data = "quiet: 0.05, -0.08, 0.12, -0.15\nloud: 2.21, -3.10, 1.77, -2.66"
//! preset = "lesson"
//! settings = { granularity = "tensor" }
//!
//! [[step]]
//! ask = "scale"
//! prompt = "What is the one shared scale?"
//! hint = "absmax / 7"
//! ```
//!
//! [`Exercise::from_toml`] parses and checks a file, [`expected`] computes a step's answer,
//! [`check()`] judges a learner's text against it, and [`Session`] plays an exercise through,
//! keeping attempts, hints, reveals and the score. [`parse_cards`] reads recall cards.
//! Resolving the data (channel text, a named scenario) is `io`'s job
//! (`crate::teach::assets::exercise_matrix`); [`generated_pair`] makes the generated pair.

mod cards;
mod check;
mod generate;
mod parse;
mod session;

use crate::core::config::{Config, ConfigError};
use crate::core::names::{NameError, apply_setting};
use crate::core::presets::{Overrides, PRESETS};
use crate::core::{Matrix, Options, Report, analyse_with};

pub use cards::{Card, parse_cards};
pub use check::{Expected, Tolerance, Verdict, check};
pub use generate::generated_pair;
pub use session::{Outcome, POINTS_AFTER_HINT, POINTS_FIRST_TRY, Prepared, Progress, Session};

/// Why an exercise (or a card file) cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExerciseError {
    /// The file is not valid TOML, or a field has the wrong type (the message has the line
    /// and column).
    #[error("{0}")]
    Toml(String),
    /// Something about the exercise as a whole.
    #[error("{0}")]
    Invalid(String),
    /// Something about one step (1-based).
    #[error("step {step}: {message}")]
    Step {
        /// 1-based step number.
        step: usize,
        /// What is wrong.
        message: String,
    },
}

/// Where an exercise's matrix comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExerciseData {
    /// Channel text, as the editor takes it.
    Text(String),
    /// The data of a built-in scenario, by name.
    Scenario(String),
    /// Two rows of very different magnitudes from [`generated_pair`].
    Generated {
        /// The generator's seed.
        seed: u64,
        /// Values per row.
        columns: usize,
    },
}

/// What a step asks for. Every kind but [`Ask::Choice`] is answered by the core.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ask {
    /// A block's stored scale (a real number).
    Scale,
    /// A block's integer zero point.
    ZeroPoint,
    /// A row's codes, typed as a list.
    Codes,
    /// A row's reconstructions, typed as a list of real numbers.
    Reconstruction,
    /// A row's mean absolute error, or the whole matrix's without `row`.
    Mae,
    /// Bits per weight of the step's configuration (payload plus metadata).
    BitsPerWeight,
    /// The share of the code range a row spans, as a fraction or a percentage.
    Utilization,
    /// The number of distinct codes a row uses.
    LevelsUsed,
    /// A multiple choice; the only answer written by hand.
    Choice {
        /// The options, in order.
        options: Vec<String>,
        /// 0-based index of the right option.
        correct: usize,
    },
}

impl Ask {
    /// The word the file uses (`ask = "..."`).
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::Scale => "scale",
            Self::ZeroPoint => "zero_point",
            Self::Codes => "codes",
            Self::Reconstruction => "reconstruction",
            Self::Mae => "mae",
            Self::BitsPerWeight => "bits_per_weight",
            Self::Utilization => "utilization",
            Self::LevelsUsed => "levels_used",
            Self::Choice { .. } => "choice",
        }
    }

    fn needs_row(&self) -> bool {
        matches!(
            self,
            Self::Codes | Self::Reconstruction | Self::Utilization | Self::LevelsUsed
        )
    }
}

/// One step of an exercise.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// 1-based position in the exercise.
    pub number: usize,
    /// What is asked.
    pub ask: Ask,
    /// The question shown to the learner.
    pub prompt: String,
    /// Shown after a first miss (or on request).
    pub hint: String,
    /// Shown once the step is solved or revealed (a choice's "why").
    pub explanation: Option<String>,
    /// The preset of the step's configuration.
    pub preset: &'static str,
    /// The exercise's settings, then the step's own.
    pub overrides: Overrides,
    /// The row asked about (0-based, as the explorer numbers channels).
    pub row: Option<usize>,
    /// The column whose block is asked about (with `row`; default 0).
    pub col: Option<usize>,
    /// The block asked about, by index.
    pub block: Option<usize>,
    /// How close a real-number answer must be.
    pub tolerance: Tolerance,
}

impl Step {
    /// The step's configuration: its preset with its overrides.
    pub fn config(&self) -> Result<Config, ConfigError> {
        self.overrides.resolve(self.preset)
    }

    fn error(&self, message: impl Into<String>) -> ExerciseError {
        ExerciseError::Step {
            step: self.number,
            message: message.into(),
        }
    }
}

/// A parsed exercise.
#[derive(Debug, Clone, PartialEq)]
pub struct Exercise {
    /// The name it is known by (a built-in's file stem; empty until the loader sets it).
    pub name: String,
    /// One line.
    pub title: String,
    /// What the exercise is about, shown before the first step.
    pub intro: String,
    /// Where the matrix comes from.
    pub data: ExerciseData,
    /// The practice screen may let the learner type their own rows instead of the data.
    pub learner_rows: bool,
    /// The preset of the exercise's configuration.
    pub preset: &'static str,
    /// The exercise's settings.
    pub overrides: Overrides,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

/// The preset named `name`, as its `'static` name.
#[must_use]
pub fn preset_name(name: &str) -> Option<&'static str> {
    let name = name.trim();
    PRESETS
        .iter()
        .map(|p| p.name)
        .chain(crate::core::format_ladder::FORMATS.iter().map(|f| f.name))
        .find(|p| *p == name)
}

/// A TOML setting value as text: strings as they are, numbers and booleans written out.
#[must_use]
pub fn setting_text(value: &toml::Value) -> Option<String> {
    match value {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Applies a TOML table of settings to `overrides`.
pub fn apply_table(overrides: &mut Overrides, table: &toml::Table) -> Result<(), String> {
    for (key, value) in table {
        let text = setting_text(value)
            .ok_or_else(|| format!("setting {key:?} must be a string, number or boolean"))?;
        apply_setting(overrides, key, &text).map_err(|e: NameError| e.to_string())?;
    }
    Ok(())
}

/// Analyses `matrix` under the step's configuration and returns the report with the
/// step's expected answer.
pub fn prepare(matrix: &Matrix, step: &Step) -> Result<(Config, Report, Expected), ExerciseError> {
    let config = step.config().map_err(|e| step.error(e.to_string()))?;
    let report = analyse_with(matrix, &config, Options::ONE_CONFIG)
        .map_err(|e| step.error(e.to_string()))?;
    let (rows, cols) = report.shape;
    let row = |r: Option<usize>| -> Result<Option<usize>, ExerciseError> {
        match r {
            Some(r) if r >= rows => Err(step.error(format!(
                "row {r} does not exist (the matrix has rows 0 to {})",
                rows - 1
            ))),
            r => Ok(r),
        }
    };
    let r = row(step.row)?;
    let block = match (step.block, r) {
        (Some(b), _) if b >= report.blocks.len() => {
            return Err(step.error(format!(
                "block {b} does not exist (there are {} blocks)",
                report.blocks.len()
            )));
        }
        (Some(b), _) => b,
        (None, Some(r)) => {
            let c = step.col.unwrap_or(0);
            if c >= cols {
                return Err(step.error(format!(
                    "col {c} does not exist (the matrix has columns 0 to {})",
                    cols - 1
                )));
            }
            report.block_index(r, c)
        }
        (None, None) => 0,
    };
    let channel = r.map(|r| &report.channels[r]);
    let expected = match (&step.ask, channel) {
        (Ask::Scale, _) => Expected::Number(f64::from(report.blocks.at(block).scale)),
        (Ask::ZeroPoint, _) => Expected::Whole(i64::from(report.blocks.at(block).zero_point)),
        (Ask::Codes, Some(c)) => Expected::Codes(report.row_codes(c.index)),
        (Ask::Reconstruction, Some(c)) => Expected::Numbers(
            report
                .row_dequantized(c.index)
                .into_iter()
                .map(f64::from)
                .collect(),
        ),
        (Ask::Mae, Some(c)) => Expected::Number(c.metrics.mae),
        (Ask::Mae, None) => Expected::Number(report.overall.mae),
        (Ask::BitsPerWeight, _) => Expected::Number(report.memory.bits_per_weight),
        (Ask::Utilization, Some(c)) => Expected::Number(c.utilization),
        (Ask::LevelsUsed, Some(c)) => Expected::Whole(i64::from(c.levels_used)),
        (Ask::Choice { options, correct }, _) => Expected::Choice {
            correct: *correct,
            options: options.len(),
        },
        (ask, None) => return Err(step.error(format!("ask = {:?} needs a row", ask.name()))),
    };
    Ok((config, report, expected))
}

/// The expected answer of `step` on `matrix`, computed by the core.
pub fn expected(matrix: &Matrix, step: &Step) -> Result<Expected, ExerciseError> {
    prepare(matrix, step).map(|(_, _, e)| e)
}
