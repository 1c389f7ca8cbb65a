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

pub mod app;
pub mod cli;
pub mod core;
pub mod io;
pub mod scan;
pub mod tui;
pub mod ui;
