//! The built-in scenarios, exercises, recall cards and demo scripts (compiled in with
//! `include_str!` from `assets/`), and the scenario header parser, so a user's own scenario
//! file works the same way.
//!
//! A scenario is channel text the explorer can load as it is, with a header of `#!` lines
//! (the text format reads them as comments):
//!
//! ```text
//! #! title: A quiet row beside a loud row
//! #! look: What to look at; one line each, as many as needed.
//! #! preset: lesson
//! #! granularity: tensor          (any setting of crate::core::names::SETTINGS)
//! quiet: 0.05, -0.08, 0.12, -0.15
//! loud: 2.21, -3.10, 1.77, -2.66
//! ```
//!
//! `title` defaults to the scenario's name and `preset` to `lesson`; each key but `look` and
//! `token` may appear once. `#! activations: built-in` shows the text with the built-in
//! activations; `#! token: 0.5, -1, 60` lines (one per token, as wide as the rows) give it
//! activations of its own. `#! method: awq` (rtn, awq, gptq), or `#! act-quant: per-token`
//! with `#! smoothquant: best` (or an α), opens the explorer with that method running.
//! Errors name the line.

use std::path::Path;

use crate::core::Matrix;
use crate::core::config::{Config, ConfigError};
use crate::core::names::{apply_setting, setting_key};
use crate::core::presets::Overrides;
use crate::io::text::{ParseError, parse_text};
use crate::teach::exercise::{
    Card, Exercise, ExerciseData, ExerciseError, Session, generated_pair, parse_cards, preset_name,
};

/// Built-in scenarios, in the order a picker lists them.
const SCENARIOS: [(&str, &str); 11] = [
    (
        "quiet-loud",
        include_str!("../../assets/scenarios/quiet-loud.txt"),
    ),
    (
        "calculator",
        include_str!("../../assets/scenarios/calculator.txt"),
    ),
    (
        "interview",
        include_str!("../../assets/scenarios/interview.txt"),
    ),
    (
        "outlier",
        include_str!("../../assets/scenarios/outlier.txt"),
    ),
    (
        "one-signed",
        include_str!("../../assets/scenarios/one-signed.txt"),
    ),
    (
        "degenerate",
        include_str!("../../assets/scenarios/degenerate.txt"),
    ),
    (
        "gaussian-16",
        include_str!("../../assets/scenarios/gaussian-16.txt"),
    ),
    (
        "formats",
        include_str!("../../assets/scenarios/formats.txt"),
    ),
    (
        "loud-input",
        include_str!("../../assets/scenarios/loud-input.txt"),
    ),
    (
        "act-quant-tokens",
        include_str!("../../assets/scenarios/act-quant-tokens.txt"),
    ),
    (
        "smoothquant-alpha",
        include_str!("../../assets/scenarios/smoothquant-alpha.txt"),
    ),
];

/// Built-in exercises, in the order a menu lists them.
const EXERCISES: [(&str, &str); 13] = [
    (
        "per-tensor-vs-per-channel",
        include_str!("../../assets/exercises/per-tensor-vs-per-channel.toml"),
    ),
    (
        "apply-now-generated",
        include_str!("../../assets/exercises/apply-now-generated.toml"),
    ),
    (
        "group-rescue",
        include_str!("../../assets/exercises/group-rescue.toml"),
    ),
    (
        "asymmetric-zero-point",
        include_str!("../../assets/exercises/asymmetric-zero-point.toml"),
    ),
    (
        "narrow-vs-full",
        include_str!("../../assets/exercises/narrow-vs-full.toml"),
    ),
    (
        "bits-per-weight",
        include_str!("../../assets/exercises/bits-per-weight.toml"),
    ),
    (
        "utilization-bar",
        include_str!("../../assets/exercises/utilization-bar.toml"),
    ),
    (
        "interview-check",
        include_str!("../../assets/exercises/interview-check.toml"),
    ),
    (
        "format-bits",
        include_str!("../../assets/exercises/format-bits.toml"),
    ),
    (
        "mxfp4-exponent",
        include_str!("../../assets/exercises/mxfp4-exponent.toml"),
    ),
    (
        "importance-from-tokens",
        include_str!("../../assets/exercises/importance-from-tokens.toml"),
    ),
    (
        "weighted-subblock",
        include_str!("../../assets/exercises/weighted-subblock.toml"),
    ),
    (
        "smoothquant-factor",
        include_str!("../../assets/exercises/smoothquant-factor.toml"),
    ),
];

/// Built-in recall cards.
const CARDS: &str = include_str!("../../assets/cards.toml");

/// Why an asset cannot be used. Every message names the asset.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AssetError {
    /// A bad scenario header line.
    #[error("{name}, line {line}: {message}")]
    Header {
        /// The scenario.
        name: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The scenario's (or exercise's) channel text does not parse.
    #[error("{name}: {source}")]
    Data {
        /// The asset.
        name: String,
        /// The parse error, with line and column.
        source: ParseError,
    },
    /// The suggested preset and settings do not make a valid configuration.
    #[error("{name}: the configuration is not valid: {source}")]
    Config {
        /// The asset.
        name: String,
        /// Why.
        source: ConfigError,
    },
    /// No scenario, exercise or demo script of this name.
    #[error("unknown {kind} {name:?}; the built-in ones are {known}")]
    Unknown {
        /// `scenario`, `exercise` or `demo script`.
        kind: &'static str,
        /// The name asked for.
        name: String,
        /// The names there are, comma-separated.
        known: String,
    },
    /// A bad exercise or card file.
    #[error("{name}: {source}")]
    Exercise {
        /// The asset.
        name: String,
        /// Why.
        source: ExerciseError,
    },
    /// A bad demo script.
    #[error("{name}: {message}")]
    Demo {
        /// The script.
        name: String,
        /// What is wrong (with the step number when it is about a step).
        message: String,
    },
    /// A caption quotes a figure the report does not have, or writes one badly.
    #[error("{name}: {message}")]
    Quote {
        /// The scenario or demo script.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// A file could not be read.
    #[error("{path}: {message}")]
    Read {
        /// The file.
        path: String,
        /// The system's message.
        message: String,
    },
}

/// A scenario: channel text with a title, what to look at and a suggested configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// The name it is known by (a built-in's file stem, a user file's stem).
    pub name: String,
    /// One line.
    pub title: String,
    /// What to look at, one entry per `#! look:` line.
    pub look: Vec<String>,
    /// The whole file, header included: load it into the editor as it is.
    pub text: String,
    /// The suggested preset.
    pub preset: &'static str,
    /// The suggested settings on top of the preset.
    pub overrides: Overrides,
    /// `#! activations: built-in`: it is shown with the built-in activations.
    pub built_in_activations: bool,
    /// Its own activations, one `#! token:` line each (as wide as the data's rows).
    pub tokens: Vec<Vec<f32>>,
    /// The method it opens with (`#! method:`, `#! act-quant:`, `#! smoothquant:`).
    pub method: Option<crate::core::method::choice::Choice>,
}

impl Scenario {
    /// Its own activations (`#! token:` lines), named after it, when it has them.
    #[must_use]
    pub fn activations(&self) -> Option<crate::core::importance::Activations> {
        let width = self.tokens.first()?.len();
        let flat: Vec<f32> = self.tokens.iter().flatten().copied().collect();
        let x = ndarray::Array2::from_shape_vec((self.tokens.len(), width), flat).ok()?;
        Some(crate::core::importance::Activations::new(
            x,
            format!("the tokens of scenario {}", self.name),
        ))
    }

    /// The matrix of the text.
    pub fn matrix(&self) -> Result<Matrix, ParseError> {
        parse_text(&self.text)
    }

    /// The suggested configuration.
    pub fn config(&self) -> Result<Config, ConfigError> {
        self.overrides.resolve(self.preset)
    }
}

/// The `#!` header of channel text: a title, what to look at, a preset and settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    /// The title, if one was given.
    pub title: Option<String>,
    /// What to look at, one entry per `#! look:` line.
    pub look: Vec<String>,
    /// The preset (`lesson` when none is named).
    pub preset: &'static str,
    /// The settings on top of the preset.
    pub overrides: Overrides,
    /// `#! activations: built-in`: the text is shown with the built-in activations.
    pub built_in_activations: bool,
    /// Activations of its own, one `#! token:` line each: values separated by commas or
    /// spaces, every line as wide.
    pub tokens: Vec<Vec<f32>>,
    /// The method the explorer runs: `#! method: awq` (rtn, awq, gptq), or `#! act-quant:
    /// per-token` with `#! smoothquant: 0.5` (or best).
    pub method: Option<crate::core::method::choice::Choice>,
}

impl Header {
    /// Whether the header sets a preset or any setting.
    #[must_use]
    pub fn has_settings(text: &str) -> bool {
        text.lines().any(|l| {
            l.trim_start()
                .strip_prefix("#!")
                .and_then(|rest| rest.split_once(':'))
                .is_some_and(|(key, _)| {
                    let key = key.trim();
                    key.eq_ignore_ascii_case("preset")
                        || METHOD_KEYS.iter().any(|k| key.eq_ignore_ascii_case(k))
                        || setting_key(key).is_some()
                })
        })
    }
}

/// The header keys that name the method the explorer runs.
const METHOD_KEYS: [&str; 3] = ["method", "act-quant", "smoothquant"];

/// The method of the [`METHOD_KEYS`] lines given (each with its line number), or the line to
/// name and why they do not make one.
fn method_of(
    lines: &[Option<(usize, String)>; 3],
) -> Result<Option<crate::core::method::choice::Choice>, (usize, String)> {
    let value = |k: usize| lines[k].as_ref().map(|m| m.1.as_str());
    crate::core::method::choice::Choice::from_headers(value(0), value(1), value(2)).map_err(|e| {
        let line = lines.iter().flatten().map(|m| m.0).max().unwrap_or(1);
        (line, e)
    })
}

/// Reads the `#!` header lines of `text` (named `name` in errors); the configuration they
/// give is checked, the data is not.
pub fn parse_header(name: &str, text: &str) -> Result<Header, AssetError> {
    let header = |line: usize, message: String| AssetError::Header {
        name: name.to_string(),
        line,
        message,
    };
    let mut title: Option<(usize, String)> = None;
    let mut preset: Option<(usize, &'static str)> = None;
    let mut look = Vec::new();
    let mut overrides = Overrides::default();
    let mut seen: Vec<(&'static str, usize)> = Vec::new();
    let mut activations: Option<usize> = None;
    let mut tokens: Vec<Vec<f32>> = Vec::new();
    // `method`, `act-quant`, `smoothquant`: the line and the value of each.
    let mut method: [Option<(usize, String)>; 3] = [None, None, None];
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let Some(rest) = line.trim_start().strip_prefix("#!") else {
            continue;
        };
        let Some((key, value)) = rest.split_once(':') else {
            return Err(header(n, "expected \"#! key: value\"".into()));
        };
        let (key, value) = (key.trim().to_ascii_lowercase(), value.trim());
        let once = |first: Option<usize>| match first {
            Some(f) => Err(header(
                n,
                format!("{key} is given twice (first on line {f})"),
            )),
            None => Ok(()),
        };
        match key.as_str() {
            "look" => look.push(value.to_string()),
            _ if value.is_empty() => return Err(header(n, format!("{key} has no value"))),
            "token" => push_token(&mut tokens, value).map_err(|e| header(n, e))?,
            "activations" => {
                once(activations)?;
                if value != "built-in" {
                    return Err(header(
                        n,
                        format!(
                            "activations {value:?}: a scenario names built-in only (Alt-I loads a file)"
                        ),
                    ));
                }
                activations = Some(n);
            }
            k if METHOD_KEYS.contains(&k) => {
                let slot = METHOD_KEYS.iter().position(|m| *m == k).unwrap_or(0);
                once(method[slot].as_ref().map(|m| m.0))?;
                method[slot] = Some((n, value.to_string()));
            }
            "title" => {
                once(title.as_ref().map(|t| t.0))?;
                title = Some((n, value.to_string()));
            }
            "preset" => {
                once(preset.map(|p| p.0))?;
                let p = preset_name(value).ok_or_else(|| {
                    header(
                        n,
                        format!("unknown preset {value:?} (see quantscope report --list-presets)"),
                    )
                })?;
                preset = Some((n, p));
            }
            _ => {
                let canonical = setting_key(&key);
                once(canonical.and_then(|k| seen.iter().find(|s| s.0 == k).map(|s| s.1)))?;
                apply_setting(&mut overrides, &key, value).map_err(|e| header(n, e.to_string()))?;
                if let Some(k) = canonical {
                    seen.push((k, n));
                }
            }
        }
    }
    if let (Some(n), false) = (activations, tokens.is_empty()) {
        return Err(header(
            n,
            "the built-in activations and #! token lines: a scenario has one or the other".into(),
        ));
    }
    let parsed = Header {
        method: method_of(&method).map_err(|(line, e)| header(line, e))?,
        title: title.map(|t| t.1),
        look,
        preset: preset.map_or("lesson", |p| p.1),
        overrides,
        built_in_activations: activations.is_some(),
        tokens,
    };
    parsed
        .overrides
        .resolve(parsed.preset)
        .map_err(|source| AssetError::Config {
            name: name.to_string(),
            source,
        })?;
    Ok(parsed)
}

/// Adds the token of a `#! token:` line to `tokens`: finite numbers separated by commas or
/// spaces, as many as the first token's.
fn push_token(tokens: &mut Vec<Vec<f32>>, value: &str) -> Result<(), String> {
    let row = token_values(value)?;
    if let Some(first) = tokens.first()
        && first.len() != row.len()
    {
        return Err(format!(
            "this token has {} values, the first has {}: every token is as wide",
            row.len(),
            first.len()
        ));
    }
    tokens.push(row);
    Ok(())
}

/// The values of a `#! token:` line: finite numbers separated by commas or spaces.
fn token_values(value: &str) -> Result<Vec<f32>, String> {
    value
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|v| !v.is_empty())
        .map(|v| match v.parse::<f32>() {
            Ok(x) if x.is_finite() => Ok(x),
            _ => Err(format!("token value {v:?} is not a finite number")),
        })
        .collect()
}

/// Parses a scenario file named `name`: its header, its configuration and its data; the
/// figures its `look` lines quote ([`crate::teach::quote`]) are taken from the report of its
/// data under its suggested configuration.
pub fn parse_scenario(name: &str, text: &str) -> Result<Scenario, AssetError> {
    let header = parse_header(name, text)?;
    let mut scenario = Scenario {
        name: name.to_string(),
        title: header.title.unwrap_or_else(|| name.to_string()),
        look: header.look,
        text: text.to_string(),
        preset: header.preset,
        overrides: header.overrides,
        built_in_activations: header.built_in_activations,
        tokens: header.tokens,
        method: header.method,
    };
    let matrix = scenario.matrix().map_err(|source| AssetError::Data {
        name: name.to_string(),
        source,
    })?;
    if let Some(t) = scenario.tokens.first()
        && t.len() != matrix.shape().1
    {
        return Err(AssetError::Quote {
            name: name.to_string(),
            message: format!(
                "its #! token lines have {} values, its rows {} (a token is one input to every row)",
                t.len(),
                matrix.shape().1
            ),
        });
    }
    if scenario.look.iter().any(|l| l.contains('{')) {
        let config = scenario.config().map_err(|source| AssetError::Config {
            name: name.to_string(),
            source,
        })?;
        let quote = |message: String| AssetError::Quote {
            name: name.to_string(),
            message,
        };
        let report = crate::core::analyse(&matrix, &config).map_err(|e| quote(e.to_string()))?;
        for line in &mut scenario.look {
            *line = crate::teach::quote::fill(line, &report).map_err(quote)?;
        }
    }
    Ok(scenario)
}

/// Reads and parses a scenario file; its name is the file stem.
pub fn read_scenario(path: &Path) -> Result<Scenario, AssetError> {
    let text = std::fs::read_to_string(path).map_err(|e| AssetError::Read {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    let name = path.file_stem().map_or_else(
        || path.display().to_string(),
        |s| s.to_string_lossy().into_owned(),
    );
    parse_scenario(&name, &text)
}

fn unknown(kind: &'static str, name: &str, names: &[&str]) -> AssetError {
    AssetError::Unknown {
        kind,
        name: name.to_string(),
        known: names.join(", "),
    }
}

/// The names of the built-in scenarios, in picker order.
#[must_use]
pub fn scenario_names() -> Vec<&'static str> {
    SCENARIOS.iter().map(|(n, _)| *n).collect()
}

/// The built-in scenarios, each parsed once (the picker lists them on every frame).
fn built_in() -> &'static [Result<Scenario, AssetError>] {
    static PARSED: std::sync::OnceLock<Vec<Result<Scenario, AssetError>>> =
        std::sync::OnceLock::new();
    PARSED.get_or_init(|| {
        SCENARIOS
            .iter()
            .map(|(n, text)| parse_scenario(n, text))
            .collect()
    })
}

/// The built-in scenario `name`.
pub fn scenario(name: &str) -> Result<Scenario, AssetError> {
    let at = SCENARIOS
        .iter()
        .position(|(n, _)| *n == name.trim())
        .ok_or_else(|| unknown("scenario", name, &scenario_names()))?;
    built_in()[at].clone()
}

/// Every built-in scenario, in picker order.
///
/// # Panics
/// If a built-in scenario does not parse (`tests/it/practice.rs` checks that they all do).
#[must_use]
pub fn scenarios() -> Vec<Scenario> {
    built_in()
        .iter()
        .map(|s| s.clone().unwrap_or_else(|e| panic!("built-in {e}")))
        .collect()
}

/// Parses an exercise file named `name`.
pub fn parse_exercise(name: &str, text: &str) -> Result<Exercise, AssetError> {
    let mut e = Exercise::from_toml(text).map_err(|source| AssetError::Exercise {
        name: name.to_string(),
        source,
    })?;
    e.name = name.to_string();
    Ok(e)
}

/// The names of the built-in exercises, in menu order.
#[must_use]
pub fn exercise_names() -> Vec<&'static str> {
    EXERCISES.iter().map(|(n, _)| *n).collect()
}

/// The built-in exercise `name`.
pub fn exercise(name: &str) -> Result<Exercise, AssetError> {
    let (n, text) = EXERCISES
        .iter()
        .find(|(n, _)| *n == name.trim())
        .ok_or_else(|| unknown("exercise", name, &exercise_names()))?;
    parse_exercise(n, text)
}

/// Every built-in exercise, in menu order.
///
/// # Panics
/// If a built-in exercise does not parse (`tests/it/practice.rs` checks that they all do).
#[must_use]
pub fn exercises() -> Vec<Exercise> {
    EXERCISES
        .iter()
        .map(|(n, text)| parse_exercise(n, text).unwrap_or_else(|e| panic!("built-in {e}")))
        .collect()
}

/// The matrix an exercise works on: its channel text, its scenario's data, or the
/// generated pair.
pub fn exercise_matrix(exercise: &Exercise) -> Result<Matrix, AssetError> {
    let data_error = |source| AssetError::Data {
        name: exercise.name.clone(),
        source,
    };
    match &exercise.data {
        ExerciseData::Text(text) => parse_text(text).map_err(data_error),
        ExerciseData::Scenario(name) => scenario(name)?.matrix().map_err(data_error),
        ExerciseData::Generated { seed, columns } => Ok(generated_pair(*seed, *columns)),
    }
}

/// Starts a [`Session`] of `exercise` on its own data.
pub fn start_exercise(exercise: Exercise) -> Result<Session, AssetError> {
    let matrix = exercise_matrix(&exercise)?;
    let name = exercise.name.clone();
    Session::new(exercise, matrix).map_err(|source| AssetError::Exercise { name, source })
}

/// The built-in recall cards.
///
/// # Panics
/// If the built-in card file does not parse (`tests/it/practice.rs` checks that it does).
#[must_use]
pub fn cards() -> Vec<Card> {
    parse_cards(CARDS).unwrap_or_else(|e| panic!("built-in cards.toml: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::config::Granularity;

    #[test]
    fn a_header_gives_title_look_preset_and_settings() {
        let s = parse_scenario(
            "mine",
            "#! title: T\n#! look: one\n#!look: two\n#! preset: ort-int8\n#! granularity: tensor\n1, 2\n",
        )
        .unwrap();
        assert_eq!(s.title, "T");
        assert_eq!(s.look, ["one", "two"]);
        assert_eq!(s.preset, "ort-int8");
        assert_eq!(s.overrides.granularity, Some(Granularity::Tensor));
        let plain = parse_scenario("plain", "1, 2\n").unwrap();
        assert_eq!((plain.title.as_str(), plain.preset), ("plain", "lesson"));
    }

    #[test]
    fn header_errors_name_the_line() {
        for (text, want) in [
            (
                "1, 2\n#! colour: red\n",
                "x, line 2: unknown setting \"colour\"",
            ),
            (
                "#! title: a\n#! title: b\n1\n",
                "x, line 2: title is given twice (first on line 1)",
            ),
            (
                "#! bits: 4\n#! bits: 8\n1\n",
                "x, line 2: bits is given twice (first on line 1)",
            ),
            ("#! preset: q9_k\n1\n", "x, line 1: unknown preset \"q9_k\""),
            (
                "#! scheme symmetric\n1\n",
                "x, line 1: expected \"#! key: value\"",
            ),
            (
                "#! bits: 99\n1\n",
                "x, line 1: bits must be a whole number from 1 to 16",
            ),
            (
                "#! range: -9..7\n1\n",
                "x: the configuration is not valid: code range [-9, 7]",
            ),
            (
                "#! title: t\n1, 2\n3\n",
                "x: line 3, col 1: channel 2 has 1 value but",
            ),
        ] {
            let e = parse_scenario("x", text).unwrap_err().to_string();
            assert!(e.starts_with(want), "{text:?}\n=> {e}");
        }
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        let e = scenario("nope").unwrap_err().to_string();
        assert!(e.contains("quiet-loud, calculator"), "{e}");
        assert!(exercise("nope").is_err());
    }
}
