//! The config file: `config.toml` in the platform's config directory
//! (`~/.config/quantscope/config.toml` on Linux and macOS, `%APPDATA%\quantscope\config.toml`
//! on Windows), or the file `QUANTSCOPE_CONFIG` names. Every key is optional; a missing
//! file is the defaults. A bad key or value is a message naming the file and its line,
//! never a crash. Flags given on the command line override the file.
//!
//! ```toml
//! theme = "dark"      # dark, light or high-contrast
//! mouse = true        # false leaves the mouse to the terminal (as --no-mouse)
//! preset = "lesson"   # the preset the explorer starts files and tensors with
//! ascii = false       # true spells every command's output in ASCII (as --ascii)
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::ui::ThemeName;

/// The environment variable naming a config file to read instead of the default one.
pub const CONFIG_ENV: &str = "QUANTSCOPE_CONFIG";

/// What the config file says, with the defaults for what it does not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// The explorer's colours.
    pub theme: ThemeName,
    /// The explorer takes the mouse.
    pub mouse: bool,
    /// The preset the explorer starts a file or tensor with (a text's own `#! preset:` line,
    /// a scenario or a demo says otherwise).
    pub preset: &'static str,
    /// Every command's output spelled in ASCII.
    pub ascii: bool,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            theme: ThemeName::default(),
            mouse: true,
            preset: "lesson",
            ascii: false,
        }
    }
}

/// The keys as written, before their values are checked.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    theme: Option<String>,
    mouse: Option<bool>,
    preset: Option<String>,
    ascii: Option<bool>,
}

/// Every key, its default, and what it does (for `--help` and the docs).
pub const KEYS: [(&str, &str, &str); 4] = [
    (
        "theme",
        "\"dark\"",
        "the explorer's colours: dark, light or high-contrast",
    ),
    (
        "mouse",
        "true",
        "false leaves the mouse to the terminal, as --no-mouse",
    ),
    (
        "preset",
        "\"lesson\"",
        "the preset the explorer starts files and tensors with",
    ),
    (
        "ascii",
        "false",
        "true spells every command's output in ASCII, as --ascii",
    ),
];

/// Where the config file is looked for: `QUANTSCOPE_CONFIG`, else `config.toml` in the
/// platform's config directory (`None` when there is no home directory to find it in).
#[must_use]
pub fn path() -> Option<PathBuf> {
    use etcetera::BaseStrategy as _;
    if let Some(p) = std::env::var_os(CONFIG_ENV).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let dirs = etcetera::choose_base_strategy().ok()?;
    Some(dirs.config_dir().join("quantscope").join("config.toml"))
}

/// The config file's settings: the defaults when there is none.
pub fn load() -> Result<Config, String> {
    let Some(path) = path() else {
        return Ok(Config::default());
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => parse(&path, &text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if std::env::var_os(CONFIG_ENV).is_some_and(|p| !p.is_empty()) {
                Err(format!(
                    "{}: no such file ({CONFIG_ENV} names it)",
                    path.display()
                ))
            } else {
                Ok(Config::default())
            }
        }
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// The 1-based line of `text` that sets `key`.
fn line_of(text: &str, key: &str) -> usize {
    text.lines()
        .position(|l| {
            l.trim_start()
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map_or(1, |i| i + 1)
}

/// Parses the config file `text` (read from `path`, which messages name).
pub fn parse(path: &Path, text: &str) -> Result<Config, String> {
    let file = path.display();
    let raw: Raw = toml::from_str(text).map_err(|e| {
        // toml's message names the line and column; on one line, after the file.
        let at = e
            .span()
            .map(|s| text[..s.start.min(text.len())].lines().count().max(1));
        let what = e.message().trim().to_string();
        match at {
            Some(line) => format!("{file}, line {line}: {what}"),
            None => format!("{file}: {what}"),
        }
    })?;
    let at = |key: &str, message: String| format!("{file}, line {}: {message}", line_of(text, key));
    let mut config = Config::default();
    if let Some(theme) = raw.theme {
        config.theme = theme.parse().map_err(|e| at("theme", e))?;
    }
    if let Some(mouse) = raw.mouse {
        config.mouse = mouse;
    }
    if let Some(preset) = raw.preset {
        config.preset = crate::core::PRESETS
            .iter()
            .map(|p| p.name)
            .chain(crate::core::format_ladder::FORMATS.iter().map(|f| f.name))
            .find(|n| *n == preset.trim())
            .ok_or_else(|| {
                at(
                    "preset",
                    format!("unknown preset {preset:?} (see quantscope report --list-presets)"),
                )
            })?;
    }
    if let Some(ascii) = raw.ascii {
        config.ascii = ascii;
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<Config, String> {
        parse(Path::new("/home/u/.config/quantscope/config.toml"), text)
    }

    #[test]
    fn every_key_is_read_and_missing_keys_keep_their_defaults() {
        assert_eq!(parsed("").unwrap(), Config::default());
        let c =
            parsed("theme = \"light\"\nmouse = false\npreset = \"q4_k\"\nascii = true\n").unwrap();
        assert_eq!(
            c,
            Config {
                theme: ThemeName::Light,
                mouse: false,
                preset: "q4_k",
                ascii: true,
            }
        );
        assert_eq!(KEYS.len(), 4, "each key of Raw is documented");
    }

    #[test]
    fn a_bad_value_names_the_file_and_its_line() {
        for (text, says) in [
            (
                "mouse = true\ntheme = \"blue\"\n",
                "config.toml, line 2: unknown theme \"blue\"",
            ),
            (
                "\n\npreset = \"q9\"\n",
                "config.toml, line 3: unknown preset \"q9\"",
            ),
            ("mouse = \"yes\"\n", "config.toml, line 1: "),
            (
                "colour = \"red\"\n",
                "config.toml, line 1: unknown field `colour`",
            ),
            ("theme = \n", "config.toml, line 1: "),
        ] {
            let e = parsed(text).unwrap_err();
            assert!(e.contains(says), "{text:?}: {e}");
        }
    }
}
