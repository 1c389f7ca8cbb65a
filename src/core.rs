//! Pure quantization core: no terminal, no files.
//!
//! [`analyse`] is the one entry point: it takes a [`Matrix`] and a [`Config`] and returns a
//! [`Report`] that every consumer (panes, exporters, exercises) reads. Nothing outside this
//! module computes a number.

mod matrix;

pub use matrix::{Matrix, MatrixError};
