//! Keybindings as data: one table from key to action, per mode. The event loop looks keys
//! up here, and the help overlay and hint line are generated from the same table, so they
//! cannot drift.
//!
//! Every toggle has a binding that works while the editor has focus and that survives SSH,
//! tmux and screen in a plain xterm: a function key and an Alt combination (Alt sends ESC
//! first, which every terminal passes through). Plain letters work in the other panes.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::app::editor::EditAction;
use crate::app::setting::{Direction, Setting};

/// What a key does, independent of which key it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// Open or close the help overlay.
    Help,
    /// Turn the caption's page.
    CaptionMore,
    /// Show MAE or RMSE in a narrow Errors pane.
    ToggleErrorMetric,
    /// Write the settings into the text's `#!` header lines.
    KeepSettings,
    /// Pin the active configuration as A, to compare with what follows (or unpin).
    Pin,
    /// Show every preset and format on the data, by bits per weight (or close it).
    Formats,
    /// Show the stored view of a quantized GGUF tensor (or close it).
    Stored,
    /// The stored view's rows by index, or by fewest levels used.
    SortRows,
    /// The stored view lists only the rows with collapse, or all.
    CollapsedRowsOnly,
    /// Quit (asks first when there are unsaved changes).
    Quit,
    /// Save the text to its file, or ask for a name.
    Save,
    /// Save the text under a new name.
    SaveAs,
    /// Export the report (data, configuration, A/B) as an HTML or PDF file.
    Export,
    /// An editing key in the editor.
    Edit(EditAction),
    /// Move a setting to its next or previous value.
    Change(Setting, Direction),
    /// Focus the next pane.
    FocusNext,
    /// Focus the previous pane.
    FocusPrev,
    /// Close an overlay or cancel a prompt.
    Close,
    /// Move the selection up.
    Up,
    /// Move the selection down.
    Down,
    /// Move the selection a page up.
    PageUp,
    /// Move the selection a page down.
    PageDown,
    /// Previous value of the selected setting.
    Left,
    /// Next value of the selected setting.
    Right,
    /// Show or hide the channel detail pane.
    ToggleDetail,
    /// Select the channel with the largest error.
    WorstChannel,
    /// Sort the channel lists by index, error or utilization.
    CycleSort,
    /// List only the collapsed channels, or all of them.
    ToggleCollapsedOnly,
    /// Copy the selected channels of a loaded tensor into the editor as text.
    CopyToEditor,
    /// Open the list of built-in scenarios.
    Scenarios,
    /// Show the selected channel's worked arithmetic (or hide it).
    ToggleExplain,
    /// Open practice mode (the exercises and recall cards).
    Practice,
    /// Play the built-in demo from its first step.
    Demo,
    /// Open the command palette: every action by name.
    Palette,
    /// Check the typed answer.
    Submit,
    /// Show the step's hint.
    Hint,
    /// Reveal the answer (or a card's answer).
    Reveal,
    /// The next step (exercise step, demo step, card).
    NextStep,
    /// The previous step.
    PrevStep,
    /// The next exercise.
    NextExercise,
    /// Show the recall cards, or go back to the exercise.
    Cards,
    /// Reopen the tensor picker of the .safetensors file shown.
    Tensors,
    /// Select the first item.
    First,
    /// Select the last item.
    Last,
    /// Answer yes to a question.
    Yes,
    /// Answer no to a question.
    No,
    /// Ask for an importance matrix or activations to load.
    LoadImportance,
    /// Use the importance and activations loaded, or not.
    ToggleImportance,
    /// Show the importance per input column (or close it).
    ImportanceView,
    /// Draw the format ladder's Pareto front on the weights' RMSE or the output error.
    ToggleFront,
}

impl Action {
    /// The sentence the help overlay shows.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            Self::Help => "show or hide this help",
            Self::CaptionMore => "the caption's next page, when it has more than fit",
            Self::LoadImportance => {
                "load which weights matter: a llama-imatrix file (.gguf, .dat) or activations (.npy, FILE:TENSOR, text, built-in)"
            }
            Self::ToggleImportance => {
                "importance: on (llama.cpp formats quantize with it, output errors follow the report), measured only (they quantize without it, output errors stay), off"
            }
            Self::ImportanceView => {
                "the importance per input column: sorted bars, the top 1 % share, columns with clamped or collapsed values"
            }
            Self::ToggleFront => {
                "format ladder: the Pareto front on the weights' RMSE or on the output error"
            }
            Self::Formats => {
                "the format ladder: every preset and format (k-quants, MXFP4, NVFP4, NF4, FP8) on the data, by bits per weight"
            }
            Self::Stored => {
                "the stored view of a quantized GGUF tensor: levels its codes use per row, collapsed rows and blocks, scales, layout"
            }
            Self::SortRows => "list the rows by index, or by fewest levels used first",
            Self::CollapsedRowsOnly => {
                "list only the rows that are collapsed or have a collapsed block, or all"
            }
            Self::Pin => {
                "pin the configuration as A, then change settings to compare B with it side by side (again: unpin)"
            }
            Self::KeepSettings => {
                "write the preset and settings into the text as #! lines (Ctrl-S then saves them with the data)"
            }
            Self::ToggleErrorMetric => {
                "Errors pane: MAE, RMSE or (with importance) the output error per channel"
            }
            Self::Quit => "quit (asks first when the text has unsaved changes)",
            Self::Save => "save the text to its file (asks for a name if it has none)",
            Self::SaveAs => "save the text under another name",
            Self::Export => {
                "export the report of the data and configuration (with A/B when pinned) as HTML or PDF, or the reconstructed matrix as .npy or .safetensors: asks for a name with one of those endings"
            }
            Self::Edit(e) => e.describe(),
            Self::Change(setting, dir) => setting.help(dir),
            Self::FocusNext => "focus the next pane",
            Self::FocusPrev => "focus the previous pane",
            Self::Close => "close the overlay or cancel; clear the caption",
            Self::Up => "select the previous item",
            Self::Down => "select the next item",
            Self::PageUp => "move the selection a page up",
            Self::PageDown => "move the selection a page down",
            Self::Left => "previous value of the selected setting",
            Self::Right => "next value of the selected setting",
            Self::ToggleDetail => "show or hide the selected channel's detail",
            Self::WorstChannel => {
                "select the worst channel for its size: a collapsed one first, then the lowest SQNR"
            }
            Self::CycleSort => "sort the channel lists: by index, by error, by utilization",
            Self::ToggleCollapsedOnly => "list only the collapsed channels, or all",
            Self::CopyToEditor => {
                "copy up to 32 listed channels, from the selected one, into the editor"
            }
            Self::Scenarios => "open a built-in scenario (its data and suggested settings)",
            Self::ToggleExplain => "show or hide the selected channel's worked arithmetic",
            Self::Practice => "practice: exercises with answer checking, and recall cards",
            Self::Palette => {
                "the command palette: find any action by name (type a few of its letters), see its keys, Enter runs it"
            }
            Self::Demo => {
                "play the built-in demo, the quiet-row story step by step (Space: next, Esc: end; asks first when the text has unsaved changes)"
            }
            Self::Submit => "check the answer",
            Self::Hint => "show the hint (the step is then worth 1 point)",
            Self::Reveal => "reveal the answer and its worked arithmetic (no points)",
            Self::NextStep => "next step",
            Self::PrevStep => "previous step",
            Self::NextExercise => "next exercise",
            Self::Cards => "recall cards, or back to the exercise",
            Self::Tensors => "pick another tensor of the checkpoint (type to filter)",
            Self::First => "select the first item",
            Self::Last => "select the last item",
            Self::Yes => "answer yes",
            Self::No => "answer no",
        }
    }

    /// The sentence the help overlay shows for this action in `mode`'s table: the help
    /// scrolls where lists move their selection.
    #[must_use]
    pub fn describe_in(self, mode: Mode) -> &'static str {
        match (mode, self) {
            (Mode::Help, Self::Up) => "scroll up a line",
            (Mode::Help, Self::Down) => "scroll down a line",
            (Mode::Help, Self::PageUp) => "scroll up a page",
            (Mode::Help, Self::PageDown) => "scroll down a page",
            (Mode::Practice, Self::Up) => "scroll the step's text up a line",
            (Mode::Practice, Self::Down) => "scroll the step's text down a line",
            (Mode::Panes, Self::PageUp) => {
                "move the selection a page up; in the channel detail, scroll its values or arithmetic"
            }
            (Mode::Panes, Self::PageDown) => {
                "move the selection a page down; in the channel detail, scroll its values or arithmetic"
            }
            (Mode::Prompt, Self::Yes) => "accept the name typed",
            (Mode::Picker, Self::Yes) => "open the selected scenario",
            (Mode::TensorPicker, Self::Yes) => "open the selected tensor",
            (Mode::Palette, Self::Yes) => "run the selected command",
            _ => self.describe(),
        }
    }

    /// [`Action::short`] in `mode`'s table.
    #[must_use]
    pub fn short_in(self, mode: Mode) -> &'static str {
        match (mode, self) {
            (Mode::Help | Mode::Practice, Self::Up | Self::Down) => "scroll",
            (Mode::Prompt, Self::Yes) => "accept",
            (Mode::Picker | Mode::TensorPicker, Self::Yes) => "open",
            (Mode::Palette, Self::Yes) => "run",
            _ => self.short(),
        }
    }

    /// A short label for the hint line.
    #[must_use]
    pub fn short(self) -> &'static str {
        match self {
            Self::Help => "help",
            Self::CaptionMore => "caption",
            Self::ToggleErrorMetric => "MAE/RMSE",
            Self::KeepSettings => "keep settings",
            Self::Pin => "pin A",
            Self::Formats => "formats",
            Self::Stored => "stored view",
            Self::SortRows => "fewest first",
            Self::CollapsedRowsOnly => "rows with collapse",
            Self::Quit => "quit",
            Self::Save => "save",
            Self::SaveAs => "save as",
            Self::Export => "export",
            Self::Edit(EditAction::ClearAll) => "clear",
            Self::Edit(_) => "edit",
            Self::Change(setting, dir) => setting.short(dir),
            Self::FocusNext => "pane",
            Self::FocusPrev => "previous pane",
            Self::Close => "close",
            Self::Up | Self::Down => "select",
            Self::PageUp | Self::PageDown => "page",
            Self::Left | Self::Right => "change",
            Self::ToggleDetail => "detail",
            Self::WorstChannel => "worst",
            Self::CycleSort => "sort",
            Self::ToggleCollapsedOnly => "collapsed only",
            Self::First | Self::Last => "first/last",
            Self::CopyToEditor => "copy to editor",
            Self::Scenarios => "scenarios",
            Self::ToggleExplain => "arithmetic",
            Self::Practice => "practice",
            Self::Demo => "demo",
            Self::Palette => "commands",
            Self::Submit => "check",
            Self::Hint => "hint",
            Self::Reveal => "reveal",
            Self::NextStep => "next",
            Self::PrevStep => "back",
            Self::NextExercise => "exercise",
            Self::Cards => "cards",
            Self::Tensors => "tensors",
            Self::Yes => "yes",
            Self::No => "no",
            Self::LoadImportance => "load importance",
            Self::ToggleImportance => "importance on/measured/off",
            Self::ImportanceView => "importance",
            Self::ToggleFront => "front",
        }
    }
}

/// Which table is in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Keys that work everywhere, the editor included.
    Global,
    /// Editing keys, when the editor has focus (other keys type).
    Editor,
    /// Extra keys in the panes that are not the editor.
    Panes,
    /// The help overlay is open.
    Help,
    /// A yes/no question is open.
    Confirm,
    /// A one-line prompt (file name) is open; other keys go to it.
    Prompt,
    /// A list to pick from (scenarios) is open.
    Picker,
    /// Practice mode: an exercise step (other keys type the answer).
    Practice,
    /// Practice mode: the recall cards.
    Cards,
    /// A demo is playing (these keys come first; the others work as usual).
    Demo,
    /// The tensor picker is open (other keys type the filter).
    TensorPicker,
    /// The stored view of a quantized tensor is open.
    Stored,
    /// The command palette is open (other keys type the name to find).
    Palette,
    /// The importance view is open.
    Importance,
}

impl Mode {
    /// Every mode, in the order the help lists them.
    pub const ALL: [Self; 14] = [
        Self::Global,
        Self::Editor,
        Self::Panes,
        Self::Help,
        Self::Confirm,
        Self::Prompt,
        Self::Picker,
        Self::Practice,
        Self::Cards,
        Self::Demo,
        Self::TensorPicker,
        Self::Stored,
        Self::Palette,
        Self::Importance,
    ];

    /// The heading the help overlay gives this mode's table.
    #[must_use]
    pub fn title(self) -> &'static str {
        match self {
            Self::Global => "Everywhere (the editor included)",
            Self::Editor => "In the editor (other keys type; Shift with a cursor key selects)",
            Self::Panes => "In the panes other than the editor",
            Self::Help => "In this help",
            Self::Confirm => "When asked a question",
            Self::Prompt => "When asked for a file name",
            Self::Picker => "In a list to pick from (scenarios)",
            Self::Practice => "In practice mode (other keys type the answer)",
            Self::Cards => "With the recall cards",
            Self::Demo => "While a demo plays (other keys work as usual)",
            Self::TensorPicker => "In the tensor picker (other keys type the filter)",
            Self::Stored => "In the stored view of a quantized tensor",
            Self::Palette => "In the command palette (other keys type the name to find)",
            Self::Importance => "In the importance view (other keys work as usual)",
        }
    }
}

/// A key with its modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Combo {
    /// The key.
    pub code: KeyCode,
    /// Ctrl, Alt, Shift.
    pub modifiers: KeyModifiers,
}

impl Combo {
    const fn new(code: KeyCode, modifiers: KeyModifiers) -> Self {
        Self { code, modifiers }
    }

    /// The combo of a key event, normalised: Shift is dropped for characters (the
    /// character already carries it) and for BackTab.
    #[must_use]
    pub fn of(key: &KeyEvent) -> Self {
        let mut modifiers =
            key.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT);
        if matches!(key.code, KeyCode::Char(_) | KeyCode::BackTab) {
            modifiers.remove(KeyModifiers::SHIFT);
        }
        let code = match key.code {
            KeyCode::Char(c) if modifiers.contains(KeyModifiers::CONTROL) => {
                KeyCode::Char(c.to_ascii_lowercase())
            }
            other => other,
        };
        Self { code, modifiers }
    }

    /// How the help overlay writes this combo, e.g. `Alt-g`, `Ctrl-S`, `F7`, `Shift-Tab`.
    #[must_use]
    pub fn label(&self) -> String {
        let mut s = String::new();
        if self.modifiers.contains(KeyModifiers::CONTROL) {
            s.push_str("Ctrl-");
        }
        if self.modifiers.contains(KeyModifiers::ALT) {
            s.push_str("Alt-");
        }
        if self.modifiers.contains(KeyModifiers::SHIFT) {
            s.push_str("Shift-");
        }
        let key = match self.code {
            KeyCode::Char(' ') => "Space".to_string(),
            KeyCode::Char(c) if self.modifiers.contains(KeyModifiers::CONTROL) => {
                c.to_ascii_uppercase().to_string()
            }
            KeyCode::Char(c) => c.to_string(),
            KeyCode::F(n) => format!("F{n}"),
            KeyCode::Up => "Up".into(),
            KeyCode::Down => "Down".into(),
            KeyCode::Left => "Left".into(),
            KeyCode::Right => "Right".into(),
            KeyCode::PageUp => "PgUp".into(),
            KeyCode::PageDown => "PgDn".into(),
            KeyCode::Tab => "Tab".into(),
            KeyCode::BackTab => "Shift-Tab".into(),
            KeyCode::Enter => "Enter".into(),
            KeyCode::Esc => "Esc".into(),
            KeyCode::Backspace => "Backspace".into(),
            KeyCode::Delete => "Delete".into(),
            KeyCode::Home => "Home".into(),
            KeyCode::End => "End".into(),
            other => format!("{other:?}"),
        };
        s.push_str(&key);
        s
    }
}

const NONE: KeyModifiers = KeyModifiers::NONE;
const CTRL: KeyModifiers = KeyModifiers::CONTROL;
const ALT: KeyModifiers = KeyModifiers::ALT;

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    /// Where it applies.
    pub mode: Mode,
    /// The keys (each one alone triggers the action).
    pub keys: &'static [Combo],
    /// What it does.
    pub action: Action,
}

macro_rules! bind {
    ($mode:ident, $action:ident, [$(($code:expr, $mods:expr)),+ $(,)?]) => {
        Binding { mode: Mode::$mode, action: Action::$action, keys: &[$(Combo::new($code, $mods)),+] }
    };
}

use KeyCode::{
    BackTab, Backspace, Char, Delete, Down, End, Enter, Esc, F, Home, Left, PageDown, PageUp,
    Right, Tab, Up,
};

macro_rules! change {
    ($mode:ident, $setting:ident, $dir:ident, [$(($code:expr, $mods:expr)),+ $(,)?]) => {
        Binding {
            mode: Mode::$mode,
            action: Action::Change(Setting::$setting, Direction::$dir),
            keys: &[$(Combo::new($code, $mods)),+],
        }
    };
}

macro_rules! edit {
    ($action:ident, [$(($code:expr, $mods:expr)),+ $(,)?]) => {
        Binding {
            mode: Mode::Editor,
            action: Action::Edit(EditAction::$action),
            keys: &[$(Combo::new($code, $mods)),+],
        }
    };
}

/// The whole keymap.
pub const BINDINGS: &[Binding] = &[
    bind!(Global, Help, [(F(1), NONE)]),
    bind!(Global, Quit, [(Char('q'), CTRL), (Char('c'), CTRL)]),
    bind!(Global, Save, [(Char('s'), CTRL)]),
    bind!(Global, SaveAs, [(Char('o'), CTRL)]),
    bind!(Global, FocusNext, [(Tab, NONE)]),
    bind!(Global, FocusPrev, [(BackTab, NONE)]),
    change!(Global, Bits, Back, [(F(2), NONE), (Char('-'), ALT)]),
    change!(Global, Bits, Forward, [(F(3), NONE), (Char('='), ALT)]),
    change!(Global, Signed, Forward, [(F(4), NONE), (Char('s'), ALT)]),
    change!(Global, Scheme, Forward, [(F(5), NONE), (Char('a'), ALT)]),
    change!(Global, Range, Forward, [(F(6), NONE), (Char('r'), ALT)]),
    change!(
        Global,
        Granularity,
        Forward,
        [(F(7), NONE), (Char('g'), ALT)]
    ),
    change!(Global, GroupSize, Forward, [(F(8), NONE), (Char('z'), ALT)]),
    change!(Global, Preset, Forward, [(F(9), NONE), (Char('t'), ALT)]),
    bind!(Global, ToggleDetail, [(F(10), NONE), (Char('e'), ALT)]),
    change!(Global, Axis, Forward, [(Char('x'), ALT)]),
    change!(Global, Clipping, Forward, [(Char('c'), ALT)]),
    change!(Global, ScaleDtype, Forward, [(Char('u'), ALT)]),
    change!(Global, Rounding, Forward, [(Char('o'), ALT)]),
    change!(Global, RangeSource, Forward, [(Char('0'), ALT)]),
    bind!(Global, WorstChannel, [(Char('w'), ALT)]),
    bind!(Global, CopyToEditor, [(Char('y'), ALT)]),
    bind!(Global, Scenarios, [(F(11), NONE), (Char('l'), ALT)]),
    bind!(Global, ToggleExplain, [(F(12), NONE), (Char('i'), ALT)]),
    bind!(Global, Close, [(Esc, NONE)]),
    bind!(Global, Palette, [(Char('p'), CTRL)]),
    bind!(Global, Practice, [(Char('m'), ALT)]),
    bind!(Global, Demo, [(Char('D'), ALT)]),
    bind!(Global, CaptionMore, [(Char('n'), ALT)]),
    bind!(Global, ToggleErrorMetric, [(Char('v'), ALT)]),
    bind!(Global, KeepSettings, [(Char('k'), ALT)]),
    bind!(Global, Pin, [(Char('p'), ALT)]),
    bind!(Global, Formats, [(Char('F'), ALT)]),
    bind!(Global, Tensors, [(Char('j'), ALT)]),
    bind!(Global, Stored, [(Char('S'), ALT)]),
    bind!(Global, Export, [(Char('E'), ALT)]),
    bind!(Global, LoadImportance, [(Char('I'), ALT)]),
    bind!(Global, ToggleImportance, [(Char('W'), ALT)]),
    bind!(Global, ImportanceView, [(Char('B'), ALT)]),
    bind!(Global, ToggleFront, [(Char('T'), ALT)]),
    edit!(Undo, [(Char('z'), CTRL), (Char('u'), CTRL)]),
    edit!(Redo, [(Char('r'), CTRL)]),
    edit!(Left, [(Left, NONE), (Char('b'), CTRL)]),
    edit!(Right, [(Right, NONE), (Char('f'), CTRL)]),
    edit!(Up, [(Up, NONE)]),
    edit!(Down, [(Down, NONE), (Char('n'), CTRL)]),
    edit!(WordLeft, [(Left, CTRL), (Char('b'), ALT)]),
    edit!(WordRight, [(Right, CTRL), (Char('f'), ALT)]),
    edit!(LineStart, [(Home, NONE), (Char('a'), CTRL)]),
    edit!(LineEnd, [(End, NONE), (Char('e'), CTRL)]),
    edit!(PageUp, [(PageUp, NONE)]),
    edit!(PageDown, [(PageDown, NONE)]),
    edit!(Top, [(Home, CTRL), (Char('<'), ALT)]),
    edit!(Bottom, [(End, CTRL), (Char('>'), ALT)]),
    edit!(DeleteBack, [(Backspace, NONE), (Char('h'), CTRL)]),
    edit!(DeleteForward, [(Delete, NONE), (Char('d'), CTRL)]),
    edit!(DeleteWordBack, [(Char('w'), CTRL), (Backspace, ALT)]),
    edit!(DeleteWordForward, [(Char('d'), ALT)]),
    edit!(KillLine, [(Char('k'), CTRL)]),
    edit!(Cut, [(Char('x'), CTRL)]),
    edit!(Yank, [(Char('y'), CTRL)]),
    edit!(Newline, [(Enter, NONE)]),
    edit!(ClearAll, [(Char('l'), CTRL)]),
    bind!(Panes, Help, [(Char('?'), NONE)]),
    bind!(Panes, Quit, [(Char('q'), NONE)]),
    bind!(Panes, Up, [(Up, NONE), (Char('k'), NONE)]),
    bind!(Panes, Down, [(Down, NONE), (Char('j'), NONE)]),
    bind!(Panes, PageUp, [(PageUp, NONE)]),
    bind!(Panes, PageDown, [(PageDown, NONE)]),
    bind!(Panes, Left, [(Left, NONE), (Char('h'), NONE)]),
    bind!(
        Panes,
        Right,
        [(Right, NONE), (Char('l'), NONE), (Enter, NONE)]
    ),
    change!(Panes, Bits, Back, [(Char('-'), NONE)]),
    change!(Panes, Bits, Forward, [(Char('+'), NONE), (Char('='), NONE)]),
    change!(Panes, Signed, Forward, [(Char('s'), NONE)]),
    change!(Panes, Scheme, Forward, [(Char('a'), NONE)]),
    change!(Panes, Range, Forward, [(Char('r'), NONE)]),
    change!(Panes, Granularity, Forward, [(Char('g'), NONE)]),
    change!(Panes, GroupSize, Forward, [(Char('z'), NONE)]),
    change!(Panes, Preset, Forward, [(Char('p'), NONE)]),
    bind!(Panes, ToggleDetail, [(Char('e'), NONE)]),
    change!(Panes, Axis, Forward, [(Char('x'), NONE)]),
    change!(Panes, Clipping, Forward, [(Char('c'), NONE)]),
    change!(Panes, ScaleDtype, Forward, [(Char('d'), NONE)]),
    change!(Panes, Rounding, Forward, [(Char('o'), NONE)]),
    change!(Panes, RangeSource, Forward, [(Char('0'), NONE)]),
    bind!(Panes, WorstChannel, [(Char('w'), NONE)]),
    bind!(Panes, CycleSort, [(Char('n'), NONE)]),
    bind!(Panes, CopyToEditor, [(Char('y'), NONE)]),
    bind!(Panes, Scenarios, [(Char('b'), NONE)]),
    bind!(Panes, Formats, [(Char('F'), NONE)]),
    bind!(Panes, Stored, [(Char('S'), NONE)]),
    bind!(Panes, Export, [(Char('E'), NONE)]),
    bind!(Panes, LoadImportance, [(Char('I'), NONE)]),
    bind!(Panes, ToggleImportance, [(Char('W'), NONE)]),
    bind!(Panes, ImportanceView, [(Char('B'), NONE)]),
    bind!(Panes, ToggleFront, [(Char('T'), NONE)]),
    bind!(Panes, ToggleExplain, [(Char('i'), NONE)]),
    bind!(Panes, Palette, [(Char(':'), NONE)]),
    bind!(Panes, Practice, [(Char('m'), NONE)]),
    bind!(Panes, Demo, [(Char('D'), NONE)]),
    bind!(Panes, Tensors, [(Char('t'), NONE)]),
    bind!(Panes, ToggleCollapsedOnly, [(Char('f'), NONE)]),
    bind!(Panes, ToggleErrorMetric, [(Char('v'), NONE)]),
    bind!(Panes, First, [(Home, NONE)]),
    bind!(Panes, Last, [(End, NONE)]),
    bind!(
        Help,
        Close,
        [
            (Esc, NONE),
            (F(1), NONE),
            (Char('?'), NONE),
            (Char('q'), NONE)
        ]
    ),
    bind!(Help, Up, [(Up, NONE), (Char('k'), NONE)]),
    bind!(Help, Down, [(Down, NONE), (Char('j'), NONE)]),
    bind!(Help, PageUp, [(PageUp, NONE)]),
    bind!(Help, PageDown, [(PageDown, NONE)]),
    bind!(Confirm, Yes, [(Char('y'), NONE), (Enter, NONE)]),
    bind!(Confirm, No, [(Char('n'), NONE)]),
    bind!(Confirm, Close, [(Esc, NONE)]),
    bind!(Picker, Close, [(Esc, NONE), (Char('q'), NONE)]),
    bind!(Picker, Yes, [(Enter, NONE)]),
    bind!(Picker, Up, [(Up, NONE), (Char('k'), NONE)]),
    bind!(Picker, Down, [(Down, NONE), (Char('j'), NONE)]),
    bind!(Practice, Submit, [(Enter, NONE)]),
    bind!(Practice, Hint, [(F(2), NONE), (Char('h'), ALT)]),
    bind!(Practice, Reveal, [(F(3), NONE), (Char('r'), ALT)]),
    bind!(
        Practice,
        NextStep,
        [(PageDown, NONE), (F(4), NONE), (Char('n'), ALT)]
    ),
    bind!(Practice, PrevStep, [(PageUp, NONE), (Char('p'), ALT)]),
    bind!(Practice, NextExercise, [(F(6), NONE), (Char('x'), ALT)]),
    bind!(Practice, Cards, [(F(7), NONE), (Char('c'), ALT)]),
    bind!(Practice, Up, [(Up, NONE)]),
    bind!(Practice, Down, [(Down, NONE)]),
    bind!(Practice, Close, [(Esc, NONE)]),
    bind!(Cards, Reveal, [(Enter, NONE), (Char(' '), NONE)]),
    bind!(
        Cards,
        NextStep,
        [(Right, NONE), (Down, NONE), (PageDown, NONE)]
    ),
    bind!(Cards, PrevStep, [(Left, NONE), (Up, NONE), (PageUp, NONE)]),
    bind!(Cards, Cards, [(F(7), NONE), (Char('c'), ALT)]),
    bind!(Cards, Close, [(Esc, NONE)]),
    bind!(Demo, NextStep, [(Char(' '), NONE), (Right, NONE)]),
    bind!(Demo, PrevStep, [(Left, NONE)]),
    bind!(TensorPicker, Yes, [(Enter, NONE)]),
    bind!(TensorPicker, Close, [(Esc, NONE)]),
    bind!(TensorPicker, Up, [(Up, NONE)]),
    bind!(TensorPicker, Down, [(Down, NONE)]),
    bind!(TensorPicker, PageUp, [(PageUp, NONE)]),
    bind!(TensorPicker, PageDown, [(PageDown, NONE)]),
    bind!(Stored, Close, [(Esc, NONE), (Char('q'), NONE)]),
    bind!(Stored, Up, [(Up, NONE), (Char('k'), NONE)]),
    bind!(Stored, Down, [(Down, NONE), (Char('j'), NONE)]),
    bind!(Stored, PageUp, [(PageUp, NONE)]),
    bind!(Stored, PageDown, [(PageDown, NONE)]),
    bind!(Stored, First, [(Home, NONE)]),
    bind!(Stored, Last, [(End, NONE)]),
    bind!(Stored, SortRows, [(Char('n'), NONE)]),
    bind!(Stored, CollapsedRowsOnly, [(Char('f'), NONE)]),
    bind!(Prompt, Close, [(Esc, NONE)]),
    bind!(Prompt, Yes, [(Enter, NONE)]),
    bind!(Palette, Yes, [(Enter, NONE)]),
    bind!(Palette, Close, [(Esc, NONE)]),
    bind!(Palette, Up, [(Up, NONE)]),
    bind!(Palette, Down, [(Down, NONE)]),
    bind!(Palette, PageUp, [(PageUp, NONE)]),
    bind!(Palette, PageDown, [(PageDown, NONE)]),
    bind!(Importance, Close, [(Esc, NONE), (Char('q'), NONE)]),
];

/// The action bound to `key` in `mode`, if any.
#[must_use]
pub fn lookup(mode: Mode, key: &KeyEvent) -> Option<Action> {
    let combo = Combo::of(key);
    BINDINGS
        .iter()
        .find(|b| b.mode == mode && b.keys.contains(&combo))
        .map(|b| b.action)
}

/// The bindings of one mode, in table order.
pub fn bindings(mode: Mode) -> impl Iterator<Item = &'static Binding> {
    BINDINGS.iter().filter(move |b| b.mode == mode)
}

/// The label of the first key bound to `action` in `mode` (for hints), e.g. `F7`.
#[must_use]
pub fn first_key(mode: Mode, action: Action) -> Option<String> {
    bindings(mode)
        .find(|b| b.action == action)
        .and_then(|b| b.keys.first())
        .map(Combo::label)
}

#[cfg(test)]
mod tests;
