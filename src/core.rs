//! Pure quantization core: no terminal, no files.
//!
//! [`analyse`] is the one entry point: it takes a [`Matrix`] and a [`Config`] and returns a
//! [`Report`] that every consumer (panes, exporters, exercises) reads. Nothing outside this
//! module computes a number.
//!
//! The pipeline for one configuration:
//!
//! ```text
//! Matrix ─ stats pass ─▶ BlockStats per block ─ params ─▶ BlockParams (scale, zero point)
//!        ─ quantize-and-measure pass ─▶ codes, per-row ErrorSums, levels ─▶ Report
//! ```
//!
//! The ladder repeats the two passes for every granularity, keeping only the metrics.

mod analyse;
pub mod config;
pub mod exercise;
pub mod explain;
pub mod kernel;
mod matrix;
pub mod names;
pub mod params;
pub mod presets;
pub mod report;
pub mod view;

pub use analyse::{
    AnalyseError, LADDER_GROUPS, Options, analyse, analyse_with, ladder_granularities,
};
pub use config::{Config, ConfigError, Granularity, Scheme};
pub use matrix::{Matrix, MatrixError};
pub use presets::{PRESETS, PresetOptions, preset};
pub use report::{Block, ChannelReport, Memory, Metrics, Report, Rung};
