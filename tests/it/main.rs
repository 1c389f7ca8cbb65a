//! The integration tests, one crate so that they are compiled and linked once: a module per
//! topic, each testing the library or the real binary from the outside, with the helpers they
//! share in [`common`]. A new topic is a new file here and a line below.

mod common;

mod app_messages;
mod cli;
mod compare;
mod core_cases;
mod core_clipping;
mod core_overflow;
mod core_props;
mod documents;
mod e2e_tmux;
mod edges;
mod explain;
mod export;
mod format_presets;
mod format_props;
mod gemma;
mod gguf;
mod gguf_bad;
mod golden;
mod golden_formats;
mod imports;
mod kernels;
mod lineup;
mod load;
mod minilm;
mod npy;
mod panes;
mod practice;
mod render;
mod rungs;
mod safetensors;
mod scan;
mod screen;
mod seeds;
mod sharded;
mod staged;
mod text_formats;
mod text_parser;
