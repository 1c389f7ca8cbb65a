//! A tmux server of the test's own, running the real binary in a real terminal, driven by keys
//! and read from the screen.

use std::process::Command;
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

/// Every test holds it while its app runs: shared by the ordinary tests, which run side
/// by side, and alone by the tests that time the app (and by the one that loads a
/// 4096 x 4096 tensor), so that a timing is not taken while other apps compete for the
/// machine's cores.
static MACHINE: RwLock<()> = RwLock::new(());

/// The machine, held shared or alone.
enum Hold {
    Shared(#[allow(dead_code, reason = "held, not read")] RwLockReadGuard<'static, ()>),
    Alone(#[allow(dead_code, reason = "held, not read")] RwLockWriteGuard<'static, ()>),
}

/// A tmux server of our own (its own socket), so tests never touch a user's sessions.
pub struct Tmux {
    socket: String,
    /// Dropped after the server is killed (fields drop after `Drop::drop`).
    _hold: Hold,
}

impl Tmux {
    /// Starts `command` in a tmux window of `width` x `height`, beside other tests.
    pub fn start(name: &str, command: &str, width: u16, height: u16) -> Self {
        let hold = Hold::Shared(MACHINE.read().unwrap_or_else(PoisonError::into_inner));
        Self::start_holding(name, command, width, height, hold)
    }

    /// Starts `command` like [`Tmux::start`], with no other test's app running.
    pub fn start_alone(name: &str, command: &str, width: u16, height: u16) -> Self {
        let hold = Hold::Alone(MACHINE.write().unwrap_or_else(PoisonError::into_inner));
        Self::start_holding(name, command, width, height, hold)
    }

    fn start_holding(name: &str, command: &str, width: u16, height: u16, hold: Hold) -> Self {
        let socket = format!("quantscope-e2e-{name}-{}", std::process::id());
        let t = Self {
            socket,
            _hold: hold,
        };
        let status = Command::new("tmux")
            .args([
                "-L",
                &t.socket,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "e2e",
            ])
            .args(["-x", &width.to_string(), "-y", &height.to_string()])
            .arg(command)
            .env("TERM", "xterm-256color")
            // The app in the panes reads no config file of the person running the tests.
            .env("QUANTSCOPE_CONFIG", "/dev/null")
            .status()
            .expect("tmux must be installed to run the end-to-end tests (.ci/run installs it)");
        assert!(status.success(), "tmux did not start");
        t
    }

    pub fn keys(&self, keys: &[&str]) {
        let status = Command::new("tmux")
            .args(["-L", &self.socket, "send-keys", "-t", "e2e"])
            .args(keys)
            .status()
            .unwrap();
        assert!(status.success());
    }

    pub fn literal(&self, text: &str) {
        let status = Command::new("tmux")
            .args(["-L", &self.socket, "send-keys", "-t", "e2e", "-l", text])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Resizes the window to `width` x `height`; whether tmux did.
    pub fn resize(&self, width: u16, height: u16) -> bool {
        Command::new("tmux")
            .args(["-L", &self.socket, "resize-window", "-t", "e2e"])
            .args(["-x", &width.to_string(), "-y", &height.to_string()])
            .status()
            .unwrap()
            .success()
    }

    /// Pastes `text` through a tmux buffer: as typed keys (`paste-buffer`), or with the
    /// terminal's bracketed-paste markers (`paste-buffer -p`).
    pub fn paste(&self, text: &str, bracketed: bool) {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), text).unwrap();
        let load = Command::new("tmux")
            .args(["-L", &self.socket, "load-buffer"])
            .arg(file.path())
            .status()
            .unwrap();
        assert!(load.success());
        let mut paste = Command::new("tmux");
        paste.args(["-L", &self.socket, "paste-buffer", "-t", "e2e"]);
        if bracketed {
            paste.arg("-p");
        }
        assert!(paste.status().unwrap().success());
    }

    /// A tmux format expanded for the pane, e.g. `#{mouse_any_flag}` (whether the program
    /// in it asked for mouse reports).
    #[allow(
        dead_code,
        reason = "not every test file that includes this module uses it"
    )]
    pub fn format(&self, format: &str) -> String {
        let out = Command::new("tmux")
            .args([
                "-L",
                &self.socket,
                "display-message",
                "-p",
                "-t",
                "e2e",
                format,
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// The screen with its colours and attributes as escape sequences (`capture-pane -e`).
    #[allow(
        dead_code,
        reason = "not every test file that includes this module uses it"
    )]
    pub fn screen_with_colours(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p", "-e", "-t", "e2e"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p", "-J", "-t", "e2e"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until `pred` holds for the screen, or fails with the last screen.
    pub fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let s = self.screen();
            if pred(&s) {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; the screen was:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

pub fn app_command(args: &str) -> String {
    // After the app exits, the shell reports its status and keeps the pane open to be read.
    format!(
        "{} {args}; echo \"exit status $?\"; sleep 60",
        env!("CARGO_BIN_EXE_quantscope")
    )
}
