//! Reading an exercise file: the TOML shape, and the checks that give clear messages
//! (`step 3: ask = "codes" needs a row`).

use serde::Deserialize;

use crate::core::config::{AsymZeroPoint, Scheme};
use crate::core::names::apply_setting;
use crate::core::presets::Overrides;
use crate::teach::exercise::{
    Ask, Exercise, ExerciseData, ExerciseError, Step, Tolerance, apply_table, preset_name,
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExercise {
    title: String,
    intro: String,
    data: Option<String>,
    scenario: Option<String>,
    seed: Option<u64>,
    columns: Option<usize>,
    #[serde(default)]
    learner_rows: bool,
    preset: Option<String>,
    #[serde(default)]
    settings: toml::Table,
    #[serde(default, rename = "step")]
    steps: Vec<RawStep>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    ask: String,
    prompt: String,
    hint: String,
    #[serde(alias = "why")]
    explanation: Option<String>,
    preset: Option<String>,
    granularity: Option<String>,
    #[serde(default)]
    settings: toml::Table,
    row: Option<usize>,
    col: Option<usize>,
    block: Option<usize>,
    tolerance: Option<f64>,
    near: Option<f64>,
    options: Option<Vec<String>>,
    correct: Option<usize>,
}

impl Exercise {
    /// Parses and checks an exercise file (see `assets/exercises/README.md`).
    pub fn from_toml(text: &str) -> Result<Self, ExerciseError> {
        let raw: RawExercise =
            toml::from_str(text).map_err(|e| ExerciseError::Toml(e.to_string().trim().into()))?;
        let invalid = |m: String| ExerciseError::Invalid(m);
        if raw.title.trim().is_empty() {
            return Err(invalid("the title is empty".into()));
        }
        let data = match (raw.data, raw.scenario) {
            (Some(d), None) if d.trim() == "generated" => ExerciseData::Generated {
                seed: raw.seed.ok_or_else(|| {
                    invalid("data = \"generated\" needs a seed (seed = 1)".into())
                })?,
                columns: match raw.columns.unwrap_or(4) {
                    c @ 2..=16 => c,
                    c => return Err(invalid(format!("columns must be 2 to 16, not {c}"))),
                },
            },
            (Some(d), None) => ExerciseData::Text(d),
            (None, Some(s)) => ExerciseData::Scenario(s.trim().to_string()),
            _ => {
                return Err(invalid(
                    "give exactly one of data (channel text or \"generated\") and scenario".into(),
                ));
            }
        };
        if !matches!(data, ExerciseData::Generated { .. })
            && (raw.seed.is_some() || raw.columns.is_some())
        {
            return Err(invalid(
                "seed and columns go with data = \"generated\" only".into(),
            ));
        }
        let preset_text = raw.preset.as_deref().unwrap_or("lesson");
        let preset = preset_name(preset_text)
            .ok_or_else(|| invalid(format!("unknown preset {preset_text:?}")))?;
        let mut overrides = Overrides::default();
        apply_table(&mut overrides, &raw.settings).map_err(invalid)?;
        overrides
            .resolve(preset)
            .map_err(|e| invalid(format!("the configuration is not valid: {e}")))?;
        if raw.steps.is_empty() {
            return Err(invalid("an exercise needs at least one [[step]]".into()));
        }
        let steps = raw
            .steps
            .into_iter()
            .enumerate()
            .map(|(i, s)| step(i + 1, s, preset, &overrides))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            name: String::new(),
            title: raw.title.trim().to_string(),
            intro: raw.intro.trim().to_string(),
            data,
            learner_rows: raw.learner_rows,
            preset,
            overrides,
            steps,
        })
    }
}

fn ask(raw: &mut RawStep) -> Result<Ask, String> {
    Ok(match raw.ask.trim() {
        "scale" => Ask::Scale,
        "zero_point" | "zero-point" => Ask::ZeroPoint,
        "codes" => Ask::Codes,
        "reconstruction" => Ask::Reconstruction,
        "mae" => Ask::Mae,
        "bits_per_weight" | "bits-per-weight" => Ask::BitsPerWeight,
        "utilization" => Ask::Utilization,
        "levels_used" | "levels-used" => Ask::LevelsUsed,
        "choice" => {
            let options = raw.options.take().unwrap_or_default();
            if options.len() < 2 {
                return Err("a choice needs at least two options".into());
            }
            let correct = raw
                .correct
                .filter(|c| (1..=options.len()).contains(c))
                .ok_or_else(|| {
                    format!(
                        "a choice needs correct = the number of the right option, 1 to {}",
                        options.len()
                    )
                })?;
            if raw.explanation.is_none() {
                return Err("a choice needs an explanation (why the right option is right)".into());
            }
            Ask::Choice {
                options,
                correct: correct - 1,
            }
        }
        other => {
            return Err(format!(
                "unknown ask {other:?}; ask one of scale, zero_point, codes, reconstruction, \
                 mae, bits_per_weight, utilization, levels_used, choice"
            ));
        }
    })
}

fn step(
    number: usize,
    mut raw: RawStep,
    exercise_preset: &'static str,
    base: &Overrides,
) -> Result<Step, ExerciseError> {
    let err = |message: String| ExerciseError::Step {
        step: number,
        message,
    };
    let ask = ask(&mut raw).map_err(err)?;
    if raw.prompt.trim().is_empty() || raw.hint.trim().is_empty() {
        return Err(err("a step needs a prompt and a hint".into()));
    }
    let is_choice = matches!(ask, Ask::Choice { .. });
    if !is_choice && (raw.options.is_some() || raw.correct.is_some()) {
        return Err(err(
            "options and correct go with ask = \"choice\" only".into()
        ));
    }
    if ask.needs_row() && raw.row.is_none() {
        return Err(err(format!("ask = {:?} needs a row", ask.name())));
    }
    let locates_block = matches!(ask, Ask::Scale | Ask::ZeroPoint);
    if raw.block.is_some() && (!locates_block || raw.row.is_some()) {
        return Err(err(
            "block goes with scale or zero_point, instead of row".into()
        ));
    }
    if raw.col.is_some() && (!locates_block || raw.row.is_none()) {
        return Err(err("col goes with row, for a scale or zero point".into()));
    }
    let takes_row = ask.needs_row() || locates_block || ask == Ask::Mae;
    if !takes_row && raw.row.is_some() {
        return Err(err(format!("ask = {:?} takes no row", ask.name())));
    }
    let preset = match raw.preset.as_deref() {
        Some(p) => preset_name(p).ok_or_else(|| err(format!("unknown preset {p:?}")))?,
        None => exercise_preset,
    };
    let mut overrides = *base;
    apply_table(&mut overrides, &raw.settings).map_err(err)?;
    if let Some(g) = &raw.granularity {
        apply_setting(&mut overrides, "granularity", g).map_err(|e| err(e.to_string()))?;
    }
    let config = overrides
        .resolve(preset)
        .map_err(|e| err(format!("the configuration is not valid: {e}")))?;
    if ask == Ask::ZeroPoint
        && config.scheme == Scheme::Asymmetric
        && config.conventions.asym_zero_point == AsymZeroPoint::FloatMin
    {
        return Err(err(
            "this configuration stores a float minimum, not a zero point".into(),
        ));
    }
    let mut tolerance = if ask == Ask::Utilization {
        Tolerance::UTILIZATION
    } else {
        Tolerance::DEFAULT
    };
    if let Some(t) = raw.tolerance {
        tolerance.right = t;
    }
    if let Some(n) = raw.near {
        tolerance.near = n;
    }
    if !(tolerance.right >= 0.0 && tolerance.near >= tolerance.right) {
        return Err(err("tolerances must satisfy 0 <= tolerance <= near".into()));
    }
    Ok(Step {
        number,
        ask,
        prompt: raw.prompt.trim().to_string(),
        hint: raw.hint.trim().to_string(),
        explanation: raw.explanation.map(|e| e.trim().to_string()),
        preset,
        overrides,
        row: raw.row,
        col: raw.col,
        block: raw.block,
        tolerance,
    })
}

#[cfg(test)]
mod tests {
    use crate::teach::exercise::{Exercise, Tolerance};

    const MINIMAL: &str = r#"
title = "t"
intro = "i"
data = "a: 1, -2\nb: 0.1, 0.2"
[[step]]
ask = "scale"
prompt = "p"
hint = "h"
"#;

    #[test]
    fn a_minimal_exercise_parses() {
        let e = Exercise::from_toml(MINIMAL).unwrap();
        assert_eq!(e.preset, "lesson");
        assert_eq!(e.steps.len(), 1);
        assert_eq!(e.steps[0].number, 1);
        assert_eq!(e.steps[0].tolerance, Tolerance::DEFAULT);
    }

    fn error_of(extra: &str) -> String {
        Exercise::from_toml(&format!("{MINIMAL}{extra}"))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn mistakes_get_clear_messages() {
        let step = "[[step]]\nprompt = \"p\"\nhint = \"h\"\n";
        for (extra, want) in [
            (
                format!("{step}ask = \"sclae\""),
                "step 2: unknown ask \"sclae\"",
            ),
            (
                format!("{step}ask = \"codes\""),
                "step 2: ask = \"codes\" needs a row",
            ),
            (
                format!(
                    "{step}ask = \"choice\"\noptions = [\"a\", \"b\"]\ncorrect = 3\nwhy = \"w\""
                ),
                "step 2: a choice needs correct = the number of the right option, 1 to 2",
            ),
            (
                format!("{step}ask = \"scale\"\ngranularity = \"rows\""),
                "step 2: granularity must be",
            ),
            (
                format!("{step}ask = \"scale\"\nsettings = {{ bits = 40 }}"),
                "step 2: bits must be a whole number from 1 to 16, not \"40\"",
            ),
            (
                format!("{step}ask = \"bits_per_weight\"\nrow = 1"),
                "step 2: ask = \"bits_per_weight\" takes no row",
            ),
            (
                format!("{step}ask = \"zero_point\"\npreset = \"q4_1\""),
                "step 2: this configuration stores a float minimum",
            ),
            (
                format!("{step}ask = \"mae\"\ncolour = 1"),
                "unknown field `colour`",
            ),
        ] {
            let e = error_of(&extra);
            assert!(e.contains(want), "{extra}\n=> {e}");
        }
        let e = Exercise::from_toml("title = \"t\"\nintro = \"i\"\ndata = \"generated\"\n")
            .unwrap_err();
        assert!(e.to_string().contains("needs a seed"), "{e}");
        let e = Exercise::from_toml("title = \"t\"\nintro = \"i\"\n").unwrap_err();
        assert!(e.to_string().contains("exactly one of data"), "{e}");
    }
}
