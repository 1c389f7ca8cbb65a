//! quantscope: see what integer quantization does to a weight matrix.
//!
//! The crate is split so that numbers flow one way:
//!
//! ```text
//! text / .npy file ──io──▶ Matrix ──core::analyse(matrix, config)──▶ Report ──▶ exporters (io)
//!                                                                         └──▶ panes (ui)
//! ```
//!
//! - [`core`] is pure computation (ndarray only): configurations, presets that reproduce
//!   ONNX Runtime, PyTorch and llama.cpp's GGUF formats, block parameters, the quantize
//!   kernels, metrics, memory cost and the granularity ladder.
//! - [`io`] parses text and loads files into a [`core::Matrix`], and writes a
//!   [`core::Report`] as a table, JSON, CSV or Markdown into any `impl Write`.
//! - [`app`] is the explorer's state and logic (Elm-style), [`ui`] draws it, and [`tui`]
//!   runs the terminal event loop.
//! - [`cli`] parses the command line and runs the headless commands.
//!
//! The seed lesson's example, through the core: under one shared int4 scale the quiet row
//! collapses to zeros; with one scale per row it keeps its shape.
//!
//! ```
//! use quantscope::core::config::{Config, Granularity};
//! use quantscope::core::{Matrix, PresetOptions, analyse, preset};
//!
//! let m = Matrix::from_rows(&[&[0.05, -0.08, 0.12, -0.15], &[2.21, -3.10, 1.77, -2.66]]).unwrap();
//! let shared = preset("lesson", PresetOptions::default()).unwrap();
//! let r = analyse(&m, &shared).unwrap();
//! assert_eq!(r.row_codes(0), [0, 0, 0, 0]);
//! assert!(r.channels[0].collapsed);
//!
//! let per_row = Config { granularity: Granularity::Channel, ..shared };
//! let r = analyse(&m, &per_row).unwrap();
//! assert_eq!(r.row_codes(0), [2, -4, 6, -7]);
//! assert!((r.channels[0].metrics.mae - 0.005357).abs() < 1e-6);
//! ```

pub mod app;
pub mod cli;
pub mod core;
pub mod io;
pub mod runtime;
pub mod scan;
pub mod teach;
pub mod tui;
pub mod ui;
