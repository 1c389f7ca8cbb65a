//! Helpers the test modules share: temporary files and file bytes, running the binary, the
//! tmux harness, driving the explorer, screens as text, small core fixtures, the golden
//! fixtures' generators' pieces and the real models.

pub mod core;
pub mod explorer;
pub mod files;
pub mod golden;
pub mod models;
pub mod run;
pub mod screen;
pub mod tmux;
