//! The explorer's whole state. Panes read it; only [`crate::app::update()`] changes it.

use std::ops::Not as _;
use std::path::PathBuf;
use std::sync::Arc;

pub use crate::app::analysis::Analysis;
use crate::app::editor::Editor;
pub use crate::app::effect::{Effect, ExportJob};
pub use crate::app::overlay::{Overlay, StoredView, TensorPicker};
use crate::app::worker::{Input, Job};
use crate::core::Matrix;
use crate::core::config::{Config, Granularity};
use crate::core::explain::{ChannelExplanation, explain_channel};
use crate::core::presets::Overrides;
use crate::core::view::{SortKey, channel_order};

/// The panes that can hold focus, in Tab order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Focus {
    /// The channel text.
    Editor,
    /// The configuration list.
    Settings,
    /// Per-channel utilization bars.
    Utilization,
    /// Per-channel errors side by side.
    Errors,
    /// The granularity ladder.
    Ladder,
    /// The selected channel's values, codes and chart.
    Detail,
}

impl Focus {
    /// The pane's title.
    #[must_use]
    pub fn title(self) -> &'static str {
        match self {
            Self::Editor => "Data",
            Self::Settings => "Settings",
            Self::Utilization => "Utilization",
            Self::Errors => "Errors (MAE / RMSE)",
            Self::Ladder => "Ladder",
            Self::Detail => "Channel detail",
        }
    }
}

/// Which error the Errors pane shows per channel when it has room for one only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ErrorMetric {
    /// Mean absolute error.
    #[default]
    Mae,
    /// Root mean squared error.
    Rmse,
    /// The error of the layer's output (`output_mse`; `imatrix_mse` with an importance
    /// vector alone), when importance or activations are in use.
    Output,
}

impl ErrorMetric {
    /// Its name in headings.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Mae => "MAE",
            Self::Rmse => "RMSE",
            Self::Output => "output MSE",
        }
    }

    /// The other weight error (MAE after RMSE and the output error).
    #[must_use]
    pub fn other(self) -> Self {
        match self {
            Self::Mae => Self::Rmse,
            Self::Rmse | Self::Output => Self::Mae,
        }
    }

    /// The next one: MAE, the output error when `with_output`, RMSE, and round again (the
    /// output error comes right after MAE, so that one key shows it where MAE and RMSE are
    /// side by side).
    #[must_use]
    pub fn next(self, with_output: bool) -> Self {
        match self {
            Self::Mae if with_output => Self::Output,
            Self::Output => Self::Rmse,
            other => other.other(),
        }
    }
}

/// Where the data comes from.
#[derive(Debug, Clone)]
pub enum Source {
    /// The editor's text, saved to `path` if it has one.
    Text {
        /// The file the text came from or was saved to.
        path: Option<PathBuf>,
    },
    /// A read-only matrix loaded from a binary file.
    Tensor {
        /// What to call it (the file name).
        name: String,
        /// The type the file stores it as (`f16`, `bf16`, `f32`, `f64`).
        dtype: String,
        /// The values.
        matrix: Arc<Matrix>,
        /// For a quantized GGUF tensor, its stored codes inspected (the values are its
        /// dequantized values).
        stored: Option<Arc<crate::io::stored::Stored>>,
    },
}

impl Source {
    /// The stored view of a quantized GGUF tensor, if that is what is shown.
    #[must_use]
    pub fn stored(&self) -> Option<&crate::io::stored::Stored> {
        match self {
            Self::Tensor { stored, .. } => stored.as_deref(),
            Self::Text { .. } => None,
        }
    }
}

/// A configuration pinned as A: how it was made, to say what differs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pinned {
    /// Its preset.
    pub preset: &'static str,
    /// Its resolved configuration.
    pub config: Config,
}

/// The explorer's state.
#[derive(Debug)]
pub struct Model {
    /// The channel text.
    pub editor: Editor,
    /// Where the data comes from.
    pub source: Source,
    /// The preset the configuration starts from.
    pub preset: &'static str,
    /// What the user changed after the preset.
    pub overrides: Overrides,
    /// The resolved configuration.
    pub config: Config,
    /// The group size used when the granularity is switched to groups.
    pub group_size: usize,
    /// What the analysis has delivered: written by [`Analysis::request`] and
    /// [`Analysis::receive`] only.
    pub analysis: Analysis,
    /// Which pane has focus.
    pub focus: Focus,
    /// Selected channel (utilization, errors, detail).
    pub selected_channel: usize,
    /// Selected line of the settings pane.
    pub selected_setting: usize,
    /// Selected rung of the ladder.
    pub selected_rung: usize,
    /// The ladder's selection moves to the active rung when the next ladder arrives (after
    /// the granularity changed, or a demo step pointed at the Ladder), so that the rung the
    /// configuration uses is in view; moving the selection by hand stops it.
    pub follow_active_rung: bool,
    /// The channel detail pane is shown.
    pub show_detail: bool,
    /// First line of the help overlay shown.
    pub help_scroll: u16,
    /// A question or prompt over the panes.
    pub overlay: Option<Overlay>,
    /// A one-line message for the status line (cleared by the next key).
    pub status: Option<String>,
    /// Draw without block and braille glyphs.
    pub ascii: bool,
    /// The app should exit.
    pub quit: bool,
    /// Work for the runtime.
    pub effects: Vec<Effect>,
    /// The terminal's columns and rows.
    pub size: (u16, u16),
    /// How the channel lists are ordered.
    pub sort: SortKey,
    /// The error the Errors pane shows when it has room for one only.
    pub error_metric: ErrorMetric,
    /// The channel lists show only collapsed channels.
    pub collapsed_only: bool,
    /// The channels the lists show, in order (from the core's `channel_order`).
    pub order: Vec<usize>,
    /// A caption under the panes: what to look at in a scenario, or a demo step's text.
    pub caption: Option<String>,
    /// The caption's page shown (taken modulo its number of pages when drawn).
    pub caption_page: usize,
    /// The editor's revision when the caption was set: a caption written for a scenario's
    /// numbers is marked once the text has been edited.
    pub caption_revision: u64,
    /// The detail area shows the selected channel's worked arithmetic.
    pub show_explain: bool,
    /// The worked arithmetic of the selected channel (kept while `show_explain`).
    pub explanation: Option<Arc<ChannelExplanation>>,
    /// Practice mode, when open (drawn instead of the panes).
    pub practice: Option<Box<crate::app::practice::Practice>>,
    /// Practice mode as the learner left it (progress and scores), for coming back.
    pub practice_kept: Option<Box<crate::app::practice::Practice>>,
    /// The demo being played, if any.
    pub demo: Option<crate::app::demo::Demo>,
    /// The configuration pinned as A for comparison with the active one (B), if any.
    pub pinned: Option<Pinned>,
    /// The checkpoint the shown tensor came from (the picker can reopen it).
    pub tensor_file: Option<PathBuf>,
    /// The number of the newest tensor load asked for; older loads that arrive later are
    /// dropped.
    pub load_request: u64,
    /// The first line (the worked arithmetic) or column (the values) of the channel detail
    /// shown: it scrolls with PgUp and PgDn when it has focus.
    pub detail_scroll: u16,
    /// How far each text that scrolls can be scrolled, as last drawn.
    pub viewport: Viewport,
    /// Which weights matter: the importance matrix or activations loaded, whether they are
    /// on, and the view of them ([`crate::app::calibration`]).
    pub importance: ImportanceState,
    /// The method beyond rounding the Errors pane and the Ladder compare with round to
    /// nearest (on the activations): round to nearest alone runs nothing more.
    pub method: crate::core::method::choice::Choice,
}

/// The importance matrix or activations of the explorer, and how they are shown.
#[derive(Debug, Clone, Default)]
pub struct ImportanceState {
    /// What is loaded, if anything.
    pub loaded: Option<Arc<crate::app::calibration::Calibration>>,
    /// How what is loaded is used: to quantize and to measure, only to measure, or not at
    /// all (the explorer is then as without it).
    pub mode: ImportanceMode,
    /// The number of the newest load asked for; older loads that arrive later are dropped.
    pub request: u64,
    /// The format ladder draws its Pareto front on the output error instead of the
    /// weights' RMSE.
    pub front_on_output: bool,
}

/// How the explorer uses a loaded importance matrix or activations (Alt-W steps through them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ImportanceMode {
    /// The llama.cpp formats (and `--clip mse-weighted`) quantize with the importance, and
    /// the output errors are measured: what `llama-quantize --imatrix` does.
    #[default]
    Weigh,
    /// The formats quantize as without it; the output errors are still measured, so the
    /// same format with and without the importance can be compared on the same measure.
    Measure,
    /// Not used at all.
    Off,
}

impl ImportanceMode {
    /// The next mode, in the order Alt-W steps through them.
    #[must_use]
    pub fn next(self) -> Self {
        match self {
            Self::Weigh => Self::Measure,
            Self::Measure => Self::Off,
            Self::Off => Self::Weigh,
        }
    }

    /// A word for the title bar and Settings.
    #[must_use]
    pub fn word(self) -> &'static str {
        match self {
            Self::Weigh => "on",
            Self::Measure => "measured only",
            Self::Off => "off",
        }
    }
}

impl ImportanceState {
    /// What the analysis measures with: the loaded calibration, unless switched off.
    #[must_use]
    pub fn active(&self) -> Option<&Arc<crate::app::calibration::Calibration>> {
        self.loaded
            .as_ref()
            .filter(|_| self.mode != ImportanceMode::Off)
    }

    /// The formats quantize with the importance (loaded, and in [`ImportanceMode::Weigh`]).
    #[must_use]
    pub fn weighs(&self) -> bool {
        self.loaded.is_some() && self.mode == ImportanceMode::Weigh
    }
}

/// What a mouse event landed on, as the view laid the screen out (the view's `hit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hit {
    /// Nothing that takes a click (a border between panes, the caption, an overlay).
    Nothing,
    /// A pane, away from its list's items.
    Pane(Focus),
    /// An item of a list pane: a setting (its index in [`crate::app::SETTINGS`]), a channel
    /// (its row) or a rung of the ladder (its index).
    Item(Focus, usize),
}

/// How far each text area that scrolls can be scrolled on the screen as last drawn: the
/// view reports it after drawing ([`crate::app::Message::Viewport`]), and the offsets are
/// kept within it, so that scrolling back starts at once after scrolling past the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Viewport {
    /// The help overlay's largest first line.
    pub help: u16,
    /// Practice mode's step text's largest first line.
    pub practice: u16,
    /// The channel detail's largest first line (worked arithmetic) or column (values).
    pub detail: u16,
}

impl Default for Viewport {
    /// Nothing drawn yet: no limit.
    fn default() -> Self {
        Self {
            help: u16::MAX,
            practice: u16::MAX,
            detail: u16::MAX,
        }
    }
}

/// `offset` moved by `delta` within `0..=max`.
#[must_use]
pub fn scrolled(offset: u16, delta: isize, max: u16) -> u16 {
    let delta = delta.clamp(-i32::from(u16::MAX) as isize, i32::from(u16::MAX) as isize);
    (offset.min(max) as isize + delta).clamp(0, max as isize) as u16
}

/// The smallest terminal the explorer draws its panes in (keys that edit are refused
/// below it, so that nothing changes unseen).
pub const MIN_WIDTH: u16 = 80;
/// See [`MIN_WIDTH`].
pub const MIN_HEIGHT: u16 = 24;

/// From this many columns on, the channel detail always has a column of its own.
pub const DETAIL_COLUMN_WIDTH: u16 = 150;

/// What the empty editor shows.
pub const EDITOR_PLACEHOLDER: &str =
    "Type or paste channels: one per line, values separated by commas or spaces";

/// An editor holding `text`, counted as saved.
#[must_use]
pub fn new_editor(text: &str) -> Editor {
    Editor::new(text)
}

impl Model {
    /// A model editing `text` (from `path`, if any), with the default configuration.
    #[must_use]
    pub fn with_text(text: &str, path: Option<PathBuf>) -> Self {
        Self::new(new_editor(text), Source::Text { path })
    }

    /// A model showing a read-only matrix loaded from a file.
    #[must_use]
    pub fn with_tensor(tensor: crate::app::LoadedTensor) -> Self {
        let source = Source::Tensor {
            name: tensor.name,
            dtype: tensor.dtype,
            matrix: Arc::new(tensor.matrix),
            stored: tensor.stored,
        };
        let mut m = Self::new(new_editor(""), source);
        m.focus = Focus::Utilization;
        m.open_stored_view();
        m
    }

    fn new(editor: Editor, source: Source) -> Self {
        let config = Config::default();
        let mut model = Self {
            editor,
            source,
            preset: "lesson",
            overrides: Overrides::default(),
            config,
            group_size: 32,
            analysis: Analysis::default(),
            focus: Focus::Editor,
            selected_channel: 0,
            selected_setting: 0,
            selected_rung: 0,
            follow_active_rung: false,
            show_detail: false,
            help_scroll: 0,
            overlay: None,
            status: None,
            ascii: false,
            quit: false,
            effects: Vec::new(),
            size: (80, 24),
            sort: SortKey::Index,
            error_metric: ErrorMetric::Mae,
            collapsed_only: false,
            order: Vec::new(),
            caption: None,
            caption_page: 0,
            caption_revision: 0,
            show_explain: false,
            explanation: None,
            practice: None,
            practice_kept: None,
            demo: None,
            pinned: None,
            tensor_file: None,
            load_request: 0,
            detail_scroll: 0,
            viewport: Viewport::default(),
            importance: ImportanceState::default(),
            method: crate::core::method::choice::Choice::RTN,
        };
        model.request_analysis();
        model
    }

    /// The editor's text, lines joined with `\n`.
    #[must_use]
    pub fn text(&self) -> String {
        self.editor.text()
    }

    /// The text has changes that are not saved (undoing back to the saved text clears it).
    #[must_use]
    pub fn dirty(&self) -> bool {
        matches!(self.source, Source::Text { .. }) && self.editor.modified()
    }

    /// The results shown are not those of the current text and configuration: the text
    /// does not parse, or the analysis failed.
    #[must_use]
    pub fn stale(&self) -> bool {
        self.analysis.parse_error.is_some() || self.analysis.failure.is_some()
    }

    /// The file the text is saved to.
    #[must_use]
    pub fn path(&self) -> Option<&PathBuf> {
        match &self.source {
            Source::Text { path } => path.as_ref(),
            Source::Tensor { .. } => None,
        }
    }

    /// The panes on screen, which can take focus, in Tab order. On a screen narrower than
    /// [`DETAIL_COLUMN_WIDTH`] the detail (or the worked arithmetic) takes the place of the
    /// three result panes.
    #[must_use]
    pub fn focus_order(&self) -> Vec<Focus> {
        let mut order = vec![Focus::Editor, Focus::Settings];
        let wide = self.size.0 >= DETAIL_COLUMN_WIDTH;
        if wide || !self.detail_visible() {
            order.extend([Focus::Utilization, Focus::Errors, Focus::Ladder]);
        }
        if self.detail_visible() {
            order.push(Focus::Detail);
        }
        order
    }

    /// Moves the focus onto a pane on screen when its pane was hidden: the detail when it
    /// has just been shown in place of the result panes, else the Utilization pane.
    pub fn keep_focus_visible(&mut self) {
        let order = self.focus_order();
        if !order.contains(&self.focus) {
            self.focus = if order.contains(&Focus::Detail) {
                Focus::Detail
            } else {
                Focus::Utilization
            };
        }
    }

    /// Switches to `preset` with `overrides` when they resolve to a valid configuration,
    /// asking for an analysis if anything changed.
    pub fn apply_settings(
        &mut self,
        preset: &'static str,
        overrides: Overrides,
    ) -> Result<(), crate::core::ConfigError> {
        let config = overrides.resolve(preset)?;
        let changed = config != self.config;
        if config.granularity != self.config.granularity {
            self.follow_active_rung = true;
        }
        self.config = config;
        self.overrides = overrides;
        self.preset = preset;
        if let Granularity::Group(g) = config.granularity {
            self.group_size = g;
        }
        if changed {
            self.request_analysis();
        }
        Ok(())
    }

    /// Selects the active rung of the ladder shown when [`Model::follow_active_rung`] asks
    /// for it and the ladder is the current configuration's.
    pub fn follow_the_active_rung(&mut self) {
        let active = self
            .analysis
            .report
            .as_ref()
            .filter(|r| r.config == self.config)
            .and_then(|r| r.ladder.iter().position(|rung| rung.active));
        if self.follow_active_rung
            && let Some(active) = active
        {
            self.selected_rung = active;
            self.follow_active_rung = false;
        }
    }

    /// The configuration differs from its preset's own (the title and settings say so).
    #[must_use]
    pub fn changed_from_preset(&self) -> bool {
        crate::core::presets::Overrides::default()
            .resolve(self.preset)
            .is_ok_and(|base| base == self.config)
            .not()
    }

    /// The channel detail is on screen: asked for, or the terminal is wide enough.
    #[must_use]
    pub fn detail_visible(&self) -> bool {
        self.show_detail || self.size.0 >= DETAIL_COLUMN_WIDTH
    }

    /// The granularity the errors pane shows beside per-tensor and per-channel.
    #[must_use]
    pub fn compared_group(&self) -> Granularity {
        if let Granularity::Group(g) = self.config.granularity {
            return Granularity::Group(g);
        }
        // Rows shorter than the group size are compared with a group that fits them.
        let row = self.analysis.matrix.as_ref().map(|m| m.shape().1);
        let fits = row.and_then(|row| {
            crate::app::setting::GROUP_SIZES
                .iter()
                .find(|&&g| g < row)
                .copied()
        });
        match (row, fits) {
            (Some(row), Some(g)) if self.group_size >= row => Granularity::Group(g),
            _ => Granularity::Group(self.group_size),
        }
    }

    /// Opens the stored view of the tensor shown, when it is a quantized GGUF tensor;
    /// returns whether it did.
    pub fn open_stored_view(&mut self) -> bool {
        let Some(stored) = self.source.stored() else {
            return false;
        };
        let view = StoredView::new(stored, crate::core::stored::RowOrder::default());
        self.overlay = Some(Overlay::Stored(Box::new(view)));
        true
    }

    /// Recomputes the list order after a new report or a change of sort or filter, keeping
    /// the selected channel when it is still listed.
    pub fn refresh_order(&mut self) {
        self.order = match &self.analysis.report {
            Some(r) => channel_order(r, self.sort, self.collapsed_only),
            None => Vec::new(),
        };
        if !self.order.is_empty() && !self.order.contains(&self.selected_channel) {
            self.selected_channel = self.order[0];
        }
    }

    /// Recomputes the worked arithmetic of the selected channel, when it is shown.
    pub fn refresh_explanation(&mut self) {
        self.explanation = match (&self.analysis.matrix, &self.analysis.report) {
            (Some(m), Some(r))
                if self.show_explain
                    && m.shape() == r.shape
                    && self.selected_channel < r.shape.0 =>
            {
                Some(Arc::new(explain_channel(m, r, self.selected_channel)))
            }
            _ => None,
        };
    }

    /// Replaces the text and configuration with a scenario's (the caller has made sure
    /// nothing unsaved is lost).
    pub fn load_scenario(&mut self, scenario: &crate::teach::assets::Scenario) {
        let config = match scenario.config() {
            Ok(c) => c,
            Err(e) => {
                self.status = Some(format!("scenario {}: {e}", scenario.name));
                return;
            }
        };
        // The cursor goes to the end of the text, on a line of its own after the data, where
        // typing cannot break a row by accident; the view follows it onto the last rows.
        let mut text = scenario.text.trim_end().to_string();
        text.push('\n');
        self.editor = new_editor(&text);
        self.editor.move_to_end();
        self.source = Source::Text { path: None };
        self.preset = scenario.preset;
        self.overrides = scenario.overrides;
        self.config = config;
        if let Granularity::Group(g) = config.granularity {
            self.group_size = g;
        }
        self.selected_channel = 0;
        self.collapsed_only = false;
        self.set_caption(Some(format!(
            "{}: {}",
            scenario.title,
            scenario.look.join(" ")
        )));
        self.status = Some(format!("loaded scenario {}", scenario.name));
        if scenario.built_in_activations {
            self.use_built_in_activations();
        }
        if let Some(m) = scenario.method {
            self.method = m;
        }
        if let Some(acts) = scenario.activations() {
            self.importance.loaded = Some(Arc::new(crate::app::calibration::Calibration {
                label: format!("activations of {}", scenario.name),
                spec: scenario.name.clone(),
                imatrix: None,
                tokens: crate::app::calibration::TokensFrom::File(Arc::new(acts)),
            }));
            self.importance.mode = ImportanceMode::Weigh;
            self.analysis.calibration_unfit = None;
        }
        if self.method.runs() && self.importance.loaded.is_none() {
            self.use_built_in_activations();
        }
        self.request_analysis();
    }

    /// Applies the `#! preset:` and setting lines of the text (what Alt-k writes, and
    /// scenario files have), and shows its `#! look:` lines as the caption; a bad header
    /// line is reported in the status line and the settings stay as they are. `name` names
    /// the text in messages.
    pub fn apply_text_header(&mut self, name: &str) {
        let text = self.text();
        if !crate::teach::assets::Header::has_settings(&text) {
            return;
        }
        match crate::teach::assets::parse_header(name, &text) {
            Ok(h) => {
                if let Err(e) = self.apply_settings(h.preset, h.overrides) {
                    self.status = Some(format!("{name}: the #! settings are not valid: {e}"));
                    return;
                }
                if !h.look.is_empty() {
                    let title = h.title.unwrap_or_else(|| name.to_string());
                    // The figures the lines quote, from the text's report, when it parses.
                    let look = crate::teach::assets::parse_scenario(name, &text)
                        .map_or(h.look, |s| s.look);
                    self.set_caption(Some(format!("{title}: {}", look.join(" "))));
                }
                self.status = Some(format!("{name}: settings from its #! lines"));
                if let Some(m) = h.method {
                    self.method = m;
                    self.analysis.methods = None;
                }
                if h.built_in_activations
                    || (h
                        .method
                        .is_some_and(crate::core::method::choice::Choice::runs)
                        && self.importance.loaded.is_none())
                {
                    self.use_built_in_activations();
                }
                if h.built_in_activations || h.method.is_some() {
                    self.request_analysis();
                }
            }
            Err(e) => self.status = Some(format!("{e} (the settings stay as they were)")),
        }
    }

    /// Switches the built-in activations on (a scenario's `#! activations: built-in`).
    pub fn use_built_in_activations(&mut self) {
        self.importance.loaded = Some(Arc::new(crate::app::calibration::Calibration::built_in()));
        self.importance.mode = ImportanceMode::Weigh;
        self.analysis.calibration_unfit = None;
    }

    /// Shows `caption` (or none) from its first page, written for the text as it is now.
    pub fn set_caption(&mut self, caption: Option<String>) {
        self.caption = caption;
        self.caption_page = 0;
        self.caption_revision = self.editor.revision();
    }

    /// Queues an analysis of the current data and configuration.
    pub fn request_analysis(&mut self) {
        self.analysis.request();
        if matches!(self.overlay, Some(Overlay::Formats { .. })) {
            // The overlay says the ladder is coming until its first entry is done.
            self.analysis.format_ladder_progress = Some((0, 0));
        }
        if !self.effects.iter().any(|e| matches!(e, Effect::Analyse)) {
            self.effects.push(Effect::Analyse);
        }
    }

    /// The analysis of the current data and configuration (what [`Effect::Analyse`] asks
    /// for): the editor's lines are shared, not copied.
    #[must_use]
    pub fn job(&self) -> Job {
        let input = match &self.source {
            Source::Text { .. } => Input::Text(self.editor.lines().to_vec()),
            Source::Tensor { matrix, .. } => Input::Matrix(Arc::clone(matrix)),
        };
        Job {
            generation: self.analysis.generation,
            input,
            config: self.config,
            pinned: self.pinned.map(|p| p.config),
            formats: matches!(self.overlay, Some(Overlay::Formats { .. })).then_some(self.preset),
            calibration: self.importance.active().cloned(),
            method: self.method_request(),
            weigh: self.importance.weighs(),
        }
    }

    /// What the worker runs for the method setting: nothing for round to nearest; AWQ or
    /// GPTQ with the configuration's bits, groups and symmetry (`core::method::run`), with
    /// its worked arithmetic (GPTQ following row 0).
    #[must_use]
    pub fn method_request(&self) -> Option<crate::core::method::run::Request> {
        let scheme = crate::core::method::run::Scheme::of(&self.config);
        self.method.request(scheme)
    }
}
