//! Pure quantization core: no terminal, no files.
//!
//! [`analyse()`] is the one entry point: it takes a [`Matrix`] and a [`Config`] and returns a
//! [`Report`] that every consumer (panes, exporters, exercises) reads. Nothing outside this
//! module computes a number.
//!
//! The pipeline for one configuration, row by row in parallel (`pass`):
//!
//! ```text
//! row ─ statistics (min, max, Σx²) ─▶ per block: BlockStats ─ params ─▶ BlockParams
//!     ─ specialised quantize-and-measure loop (kernel::segment) ─▶ codes, f64 error lanes
//!     ─▶ ChannelReport, Blocks ─▶ (rows combined in row order) ─▶ Report
//! ```
//!
//! Blocks that span rows (per tensor, per column) get their statistics and parameters from
//! a pass over the whole matrix first. The ladder runs every other granularity in one more
//! pass over the rows, keeping only per-row metrics; no per-block arrays are kept for it.
//! Results do not depend on the number of threads.

mod analyse;
pub mod clip;
pub mod compare;
pub mod config;
pub mod explain;
pub mod fallback;
pub mod figures;
pub mod format;
pub mod format_ladder;
pub mod gemm;
pub mod importance;
pub mod kernel;
mod matrix;
pub mod method;
pub mod names;
pub mod no_effect;
pub mod output;
pub(crate) mod pages;
pub mod params;
mod pass;
pub mod presets;
pub mod quote;
pub mod reconstruct;
pub mod report;
mod round;
pub mod scan;
pub(crate) mod simd;
mod stats;
pub mod stored;
pub mod view;
pub mod watch;

pub use analyse::{
    ANALYSIS_STACK, AnalyseError, LADDER_GROUPS, Options, Progress, analyse, analyse_staged,
    analyse_staged_weighted, analyse_weighted, analyse_with, ladder_granularities,
};
pub use config::{Config, ConfigError, Granularity, Scheme};
pub(crate) use matrix::first_not_finite_in;
pub use matrix::{Matrix, MatrixError};
pub use output::{StageError, add_output_errors};
pub use presets::{PRESETS, PresetOptions, preset};
pub use report::{Block, Blocks, ChannelReport, Memory, Metrics, Report, Rung};
