//! The event loop: read keys, translate them through the keymap, update the model, run the
//! effects it asks for (analysis on a worker thread, saving), draw.
//!
//! The loop blocks on input; only while an analysis or a tensor load ([`Runtime`]) is under
//! way does it wake every few milliseconds to collect results. It never spins. Drawing
//! happens after input, a resize or a new result, and nowhere else.
//!
//! Input is applied in bursts: after the first event, every event already queued (the rest
//! of a paste that arrives as keys, a held key) is applied before one analysis is asked for
//! and one frame drawn, so a burst of N keys costs N edits, not N analyses and N frames. A
//! burst that goes on longer than [`BURST`] is drawn part way, so a long paste shows
//! progress.

use std::io::stdout;
use std::panic;
use std::path::PathBuf;
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, WrapErr};
use ratatui::DefaultTerminal;
use ratatui::crossterm::event::{
    self, DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    Event, MouseButton, MouseEventKind,
};
use ratatui::crossterm::execute;

use crate::app::{Effect, Message, Model, translate, update};
use crate::io::save::write_atomic;
use crate::runtime::Runtime;
use crate::ui::{self, Theme};

/// How to draw, and what the terminal is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Use colours (false under `NO_COLOR`).
    pub color: bool,
    /// Draw without block and braille glyphs.
    pub ascii: bool,
    /// Take the mouse (clicks and the wheel); without it the terminal keeps its own
    /// selection.
    pub mouse: bool,
    /// The colours.
    pub theme: crate::ui::ThemeName,
}

impl Options {
    /// Colour unless `NO_COLOR` is set to a non-empty value; the mouse taken.
    #[must_use]
    pub fn from_env(ascii: bool) -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Self {
            color: !no_color,
            ascii,
            mouse: true,
            theme: crate::ui::ThemeName::default(),
        }
    }
}

/// How often the loop checks for results while an analysis is under way.
const RESULT_POLL: Duration = Duration::from_millis(15);

/// The longest a burst of queued input is applied before a frame is drawn.
pub const BURST: Duration = Duration::from_millis(50);

/// How long the loop waits for the next event of a burst: more than the gap between the
/// chunks a terminal or tmux writes a paste in, far less than a person types.
const BURST_GAP: Duration = Duration::from_millis(2);

/// The text to write to the recovery file if the explorer panics.
static RECOVERY: Mutex<Option<String>> = Mutex::new(None);

/// Where a panic writes the text.
#[must_use]
pub fn recovery_path() -> PathBuf {
    std::env::temp_dir().join(format!("quantscope-recovery-{}.txt", std::process::id()))
}

/// Installs a panic hook that, on the main thread, writes the editor's text to the recovery
/// file, then runs the previous hook (ratatui's, which restores the terminal, then
/// color-eyre's report), then names the file. Panics on the analysis thread are caught there
/// and shown as an analysis failure instead.
fn install_recovery_hook() {
    let previous = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        if thread::current().name() != Some("main") {
            return;
        }
        // The mouse back to the terminal (ratatui's hook does not know it was taken).
        let _ = execute!(stdout(), DisableMouseCapture);
        let text = RECOVERY.lock().ok().and_then(|g| g.clone());
        let saved = text.and_then(|t| {
            let path = recovery_path();
            write_atomic(&path, &t).ok().map(|()| path)
        });
        previous(info);
        if let Some(path) = saved {
            eprintln!(
                "quantscope stopped on an internal error; your text was saved to {}",
                path.display()
            );
        }
    }));
}

/// Why the explorer cannot start here, if it cannot: it draws on standard output, which must
/// be a terminal that can place the cursor (not `TERM=dumb`), and reads keys from standard
/// input or, when that is not a terminal, from `/dev/tty`.
#[must_use]
pub fn no_terminal() -> Option<&'static str> {
    use std::io::IsTerminal as _;
    if !stdout().is_terminal() {
        return Some("standard output is not a terminal");
    }
    // A dumb terminal has no cursor addressing: the full-screen panes would be garbage.
    if std::env::var_os("TERM").is_some_and(|t| t == "dumb") {
        return Some("TERM=dumb cannot draw the full-screen panes");
    }
    let keys = std::io::stdin().is_terminal()
        || std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .is_ok();
    (!keys).then_some("there is no terminal to read keys from")
}

/// Runs the explorer until the user quits.
pub fn run(model: Model, options: Options) -> Result<()> {
    let mut terminal = match ratatui::try_init() {
        Ok(t) => t,
        Err(e) => {
            ratatui::restore();
            return Err(e).wrap_err("could not set up the terminal");
        }
    };
    install_recovery_hook();
    // Bracketed paste delivers a paste as one event, however large.
    let _ = execute!(stdout(), EnableBracketedPaste);
    if options.mouse {
        let _ = execute!(stdout(), EnableMouseCapture);
    }
    let result = event_loop(&mut terminal, model, options);
    if options.mouse {
        let _ = execute!(stdout(), DisableMouseCapture);
    }
    let _ = execute!(stdout(), DisableBracketedPaste);
    // A blank alternate screen before leaving it: a terminal resized while it was shown
    // (tmux, for one) can carry rows of it over to the shell's screen.
    let _ = terminal.clear();
    ratatui::restore();
    result
}

/// Debug builds only (release builds have no such hook): with `QUANTSCOPE_TEST_PANIC` set
/// to a word, the explorer panics on its main thread once the editor's text contains that
/// word, so that the end-to-end tests can check that the text is saved.
#[cfg(debug_assertions)]
fn injected_panic(model: &Model) {
    let Some(word) = std::env::var_os("QUANTSCOPE_TEST_PANIC") else {
        return;
    };
    let word = word.to_string_lossy();
    assert!(
        word.is_empty() || !model.text().contains(&*word),
        "panic injected by QUANTSCOPE_TEST_PANIC"
    );
}

fn remember_text(model: &Model) {
    if let Ok(mut guard) = RECOVERY.lock() {
        *guard = model.dirty().then(|| model.text());
    }
}

/// Hands every effect the model asked for to the runtime.
fn run_effects(model: &mut Model, runtime: &mut Runtime) -> Result<()> {
    let effects: Vec<Effect> = model.effects.drain(..).collect();
    for effect in effects {
        runtime
            .perform(model, effect)
            .map_err(|e| color_eyre::eyre::eyre!(e))?;
    }
    Ok(())
}

fn event_loop(terminal: &mut DefaultTerminal, mut model: Model, options: Options) -> Result<()> {
    let theme = Theme::named(options.theme, options.color, options.ascii);
    model.ascii = options.ascii;
    let mut runtime = Runtime::start().wrap_err("could not start the analysis thread")?;
    if let Ok(size) = terminal.size() {
        update(&mut model, Message::Resized(size.width, size.height));
    }
    let mut redraw = true;
    let mut last_generation = 0;
    loop {
        run_effects(&mut model, &mut runtime)?;
        if model.analysis.generation != last_generation {
            last_generation = model.analysis.generation;
            remember_text(&model);
            #[cfg(debug_assertions)]
            injected_panic(&model);
        }
        if model.quit {
            return Ok(());
        }
        // Every result that has arrived; what they ask for next (a loaded tensor's
        // analysis) is handed over at the top of the loop.
        let mut arrived = false;
        while let Some(message) = runtime.arrived() {
            update(&mut model, message);
            arrived = true;
        }
        if arrived {
            redraw = true;
            if !model.effects.is_empty() {
                continue;
            }
        }
        if redraw {
            let drawn = terminal
                .draw(|frame| ui::draw(frame, &model, &theme))
                .wrap_err("could not draw")?;
            // How far the texts on screen can scroll, for the offsets to stay within.
            let viewport = ui::viewport(drawn.area, &model, &theme);
            if viewport != model.viewport {
                update(&mut model, Message::Viewport(viewport));
            }
            redraw = false;
        }
        let event = if model.analysis.pending || model.analysis.busy || runtime.loading() {
            if event::poll(RESULT_POLL).wrap_err("could not read the terminal")? {
                Some(event::read().wrap_err("could not read the terminal")?)
            } else {
                None
            }
        } else {
            Some(event::read().wrap_err("could not read the terminal")?)
        };
        let Some(event) = event else {
            continue;
        };
        redraw |= handle(&mut model, event, &theme, options);
        // The rest of the burst: everything already queued, then one analysis and one frame.
        let start = Instant::now();
        while start.elapsed() < BURST
            && !model.quit
            && event::poll(BURST_GAP).wrap_err("could not read the terminal")?
        {
            let event = event::read().wrap_err("could not read the terminal")?;
            redraw |= handle(&mut model, event, &theme, options);
        }
    }
}

/// Applies one terminal event; returns whether the screen needs drawing.
fn handle(model: &mut Model, event: Event, theme: &Theme, options: Options) -> bool {
    match event {
        Event::Mouse(mouse) if options.mouse => {
            let (width, height) = model.size;
            let screen = ratatui::layout::Rect::new(0, 0, width, height);
            let at = ui::hit(screen, model, theme, mouse.column, mouse.row);
            let message = match mouse.kind {
                MouseEventKind::Down(MouseButton::Left) => Message::Click(at),
                MouseEventKind::ScrollDown => Message::Wheel { at, down: true },
                MouseEventKind::ScrollUp => Message::Wheel { at, down: false },
                _ => return false,
            };
            update(model, message);
            true
        }
        Event::Key(key) if key.is_press() || key.is_repeat() => {
            if let Some(message) = translate(model, &key) {
                update(model, message);
            }
            true
        }
        Event::Paste(text) => {
            update(model, Message::Paste(text));
            true
        }
        Event::Resize(width, height) => {
            update(model, Message::Resized(width, height));
            true
        }
        _ => false,
    }
}
