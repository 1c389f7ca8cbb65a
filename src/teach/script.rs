//! Demo scripts: a presenter's sequence of scenario loads, setting changes, pane focus and
//! captions, as TOML data (format in `assets/demo/README.md`).
//!
//! ```toml
//! title = "The quiet row"
//!
//! [[step]]
//! scenario = "quiet-loud"
//! focus = "utilization"
//! select = 0
//! caption = "One shared scale: the quiet row collapses."
//!
//! [[step]]
//! set = { granularity = "channel" }
//! focus = "errors"
//! caption = "One scale per row rescues it."
//! ```
//!
//! A player applies a step's fields in this order: `scenario` (load its text; the preset
//! and settings become the scenario's suggested ones), `preset` (switch to it; settings
//! changed earlier are dropped, as the preset key does), `set` (each setting on top), then
//! `focus`, `select` and `caption`. [`parse_demo`] plays the script through once to check
//! it: every scenario, preset and setting exists, every configuration is valid and every
//! selected channel is a row of the scenario loaded.

use std::fmt;
use std::str::FromStr;

use serde::Deserialize;

use crate::core::names::{apply_setting, setting_key};
use crate::core::presets::Overrides;
use crate::teach::assets::{AssetError, Scenario, scenario};
use crate::teach::exercise::{preset_name, setting_text};

/// Built-in demo scripts.
const DEMOS: [(&str, &str); 3] = [
    (
        "quiet-row",
        include_str!("../../assets/demo/quiet-row.toml"),
    ),
    (
        "loud-input",
        include_str!("../../assets/demo/loud-input.toml"),
    ),
    ("methods", include_str!("../../assets/demo/methods.toml")),
];

/// The pane a step points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DemoFocus {
    /// The channel text.
    Data,
    /// The configuration list.
    Settings,
    /// Per-channel utilization bars.
    Utilization,
    /// Per-channel errors.
    Errors,
    /// The granularity ladder.
    Ladder,
    /// The selected channel's detail (shown if hidden).
    Detail,
}

impl DemoFocus {
    /// Every pane, in the order the format lists them.
    pub const ALL: [Self; 6] = [
        Self::Data,
        Self::Settings,
        Self::Utilization,
        Self::Errors,
        Self::Ladder,
        Self::Detail,
    ];

    /// The word scripts use.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Data => "data",
            Self::Settings => "settings",
            Self::Utilization => "utilization",
            Self::Errors => "errors",
            Self::Ladder => "ladder",
            Self::Detail => "detail",
        }
    }
}

impl fmt::Display for DemoFocus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DemoFocus {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        Self::ALL
            .into_iter()
            .find(|f| f.name() == t)
            .ok_or_else(|| {
                format!(
                    "focus must be one of {}, not {s:?}",
                    Self::ALL.map(Self::name).join(", ")
                )
            })
    }
}

/// One step of a demo, checked and ready to apply.
#[derive(Debug, Clone, PartialEq)]
pub struct DemoStep {
    /// 1-based position in the script.
    pub number: usize,
    /// A scenario to load: its text, suggested preset and settings.
    pub scenario: Option<Scenario>,
    /// A preset to switch to (settings changed earlier are dropped).
    pub preset: Option<&'static str>,
    /// Settings to apply, as canonical `(key, value)` pairs for
    /// [`crate::core::names::apply_setting`].
    pub set: Vec<(&'static str, String)>,
    /// The pane to point at.
    pub focus: Option<DemoFocus>,
    /// The channel (row) to select, 0-based.
    pub select: Option<usize>,
    /// The text shown under the panes while this step is current (none if absent).
    pub caption: Option<String>,
}

impl DemoStep {
    /// The preset and overrides after this step, from those before it: the scenario's,
    /// then the preset (clearing overrides), then `set`.
    #[must_use]
    pub fn apply(&self, preset: &'static str, overrides: Overrides) -> (&'static str, Overrides) {
        let (mut preset, mut overrides) = match &self.scenario {
            Some(s) => (s.preset, s.overrides),
            None => (preset, overrides),
        };
        if let Some(p) = self.preset {
            preset = p;
            overrides = Overrides::default();
        }
        for (key, value) in &self.set {
            // Checked when the script was parsed: cannot fail.
            let _ = apply_setting(&mut overrides, key, value);
        }
        (preset, overrides)
    }
}

/// A parsed demo script.
#[derive(Debug, Clone, PartialEq)]
pub struct DemoScript {
    /// The name it is known by (a built-in's file stem).
    pub name: String,
    /// One line.
    pub title: String,
    /// The steps, in order.
    pub steps: Vec<DemoStep>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScript {
    title: String,
    #[serde(default, rename = "step")]
    steps: Vec<RawStep>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    scenario: Option<String>,
    preset: Option<String>,
    #[serde(default)]
    set: toml::Table,
    focus: Option<String>,
    select: Option<usize>,
    caption: Option<String>,
}

/// Parses and checks the demo script `name`.
pub fn parse_demo(name: &str, text: &str) -> Result<DemoScript, AssetError> {
    let fail = |message: String| AssetError::Demo {
        name: name.to_string(),
        message,
    };
    let raw: RawScript = toml::from_str(text).map_err(|e| fail(e.to_string().trim().into()))?;
    if raw.steps.is_empty() {
        return Err(fail("a demo needs at least one [[step]]".into()));
    }
    let mut steps = Vec::with_capacity(raw.steps.len());
    // The state a player would be in, to check each step against.
    let mut preset = "lesson";
    let mut overrides = Overrides::default();
    let mut rows: Option<usize> = None;
    let mut matrix: Option<crate::core::Matrix> = None;
    for (i, r) in raw.steps.into_iter().enumerate() {
        let number = i + 1;
        let at = |m: String| fail(format!("step {number}: {m}"));
        if r.scenario.is_none()
            && r.preset.is_none()
            && r.set.is_empty()
            && r.focus.is_none()
            && r.select.is_none()
            && r.caption.is_none()
        {
            return Err(at("the step does nothing".into()));
        }
        let loaded = match &r.scenario {
            Some(s) => Some(scenario(s).map_err(|e| at(e.to_string()))?),
            None => None,
        };
        if let Some(s) = &loaded {
            let m = s.matrix().map_err(|e| at(e.to_string()))?;
            rows = Some(m.shape().0);
            matrix = Some(m);
        }
        let step_preset = match &r.preset {
            Some(p) => Some(preset_name(p).ok_or_else(|| at(format!("unknown preset {p:?}")))?),
            None => None,
        };
        let mut set = Vec::with_capacity(r.set.len());
        for (key, value) in &r.set {
            let text = setting_text(value)
                .ok_or_else(|| at(format!("setting {key:?} must be a string or number")))?;
            let canonical = setting_key(key);
            // Checked on a scratch copy so the message names the step.
            apply_setting(&mut Overrides::default(), key, &text).map_err(|e| at(e.to_string()))?;
            if let Some(k) = canonical {
                set.push((k, text));
            }
        }
        let focus = match &r.focus {
            Some(f) => Some(f.parse::<DemoFocus>().map_err(at)?),
            None => None,
        };
        if let (Some(sel), Some(n)) = (r.select, rows)
            && sel >= n
        {
            return Err(at(format!(
                "select = {sel}, but the scenario has rows 0 to {}",
                n - 1
            )));
        }
        let mut step = DemoStep {
            number,
            scenario: loaded,
            preset: step_preset,
            set,
            focus,
            select: r.select,
            caption: r.caption.map(|c| c.trim().to_string()),
        };
        (preset, overrides) = step.apply(preset, overrides);
        let config = overrides
            .resolve(preset)
            .map_err(|e| at(format!("the configuration is not valid: {e}")))?;
        // The figures a caption quotes, from the report the step shows.
        if let Some(caption) = step.caption.as_mut().filter(|c| c.contains('{')) {
            let m = matrix.as_ref().ok_or_else(|| {
                at("the caption quotes figures before a scenario is loaded".into())
            })?;
            let report = crate::core::analyse(m, &config).map_err(|e| at(e.to_string()))?;
            *caption = crate::teach::quote::fill(caption, &report).map_err(at)?;
        }
        steps.push(step);
    }
    Ok(DemoScript {
        name: name.to_string(),
        title: raw.title.trim().to_string(),
        steps,
    })
}

/// The names of the built-in demo scripts.
#[must_use]
pub fn demo_names() -> Vec<&'static str> {
    DEMOS.iter().map(|(n, _)| *n).collect()
}

/// The built-in demo script `name`.
pub fn demo_script(name: &str) -> Result<DemoScript, AssetError> {
    let (n, text) = DEMOS
        .iter()
        .find(|(n, _)| *n == name.trim())
        .ok_or_else(|| AssetError::Unknown {
            kind: "demo script",
            name: name.to_string(),
            known: demo_names().join(", "),
        })?;
    parse_demo(n, text)
}

/// Every built-in demo script.
///
/// # Panics
/// If a built-in script does not parse (`tests/it/practice.rs` checks that they all do).
#[must_use]
pub fn demo_scripts() -> Vec<DemoScript> {
    DEMOS
        .iter()
        .map(|(n, text)| parse_demo(n, text).unwrap_or_else(|e| panic!("built-in {e}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mistakes_name_the_step() {
        for (text, want) in [
            (
                "title = \"t\"\n[[step]]\nscenario = \"nope\"\n",
                "x: step 1: unknown scenario \"nope\"",
            ),
            (
                "title = \"t\"\n[[step]]\ncaption = \"c\"\n[[step]]\nset = { colour = \"red\" }\n",
                "x: step 2: unknown setting \"colour\"",
            ),
            (
                "title = \"t\"\n[[step]]\nfocus = \"help\"\n",
                "x: step 1: focus must be one of data,",
            ),
            (
                "title = \"t\"\n[[step]]\nscenario = \"quiet-loud\"\nselect = 2\n",
                "x: step 1: select = 2, but the scenario has rows 0 to 1",
            ),
            (
                "title = \"t\"\n[[step]]\n",
                "x: step 1: the step does nothing",
            ),
            (
                "title = \"t\"\n[[step]]\nset = { range = \"-9..7\" }\n",
                "x: step 1: the configuration is not valid",
            ),
            ("title = \"t\"\n", "x: a demo needs at least one [[step]]"),
        ] {
            let e = parse_demo("x", text).unwrap_err().to_string();
            assert!(e.starts_with(want), "{text:?}\n=> {e}");
        }
    }

    #[test]
    fn apply_follows_scenario_then_preset_then_set() {
        let d = parse_demo(
            "x",
            "title = \"t\"\n[[step]]\nscenario = \"interview\"\n[[step]]\npreset = \"ort-int8\"\nset = { bits = 4, granularity = \"tensor\" }\n",
        )
        .unwrap();
        let (p, o) = d.steps[0].apply("q4_0", Overrides::default());
        assert_eq!((p, o.bits), ("lesson", Some(8)));
        let (p, o) = d.steps[1].apply(p, o);
        assert_eq!(p, "ort-int8");
        assert_eq!(o.bits, Some(4));
        assert_eq!(
            o.granularity,
            Some(crate::core::config::Granularity::Tensor)
        );
    }
}
