//! The integration tests, one crate so that they are compiled and linked once: a module per
//! topic, each testing the library or the real binary from the outside, with the helpers they
//! share in [`common`]. A new topic is a new file here and a line below.
//!
//! With the `avx512` feature, which changes nothing but the machine code of the kernels,
//! only the modules that check the kernels against their references are compiled: CI runs
//! them a second time on a CPU with AVX-512 without compiling every other test again.
#![cfg_attr(
    feature = "avx512",
    allow(
        dead_code,
        reason = "the kernels' modules use only some of the shared helpers"
    )
)]

mod common;

// The kernels against their references (the reference quantizer, the libraries' fixtures).
mod core_clipping;
mod golden;
mod golden_formats;
mod golden_mx;
mod golden_nvfp4;
mod golden_weighted;
mod iquants;
mod kernels;
mod rungs;

// Everything else.
#[cfg(not(feature = "avx512"))]
mod app_messages;
#[cfg(not(feature = "avx512"))]
mod cli;
#[cfg(not(feature = "avx512"))]
mod clip_weighted;
#[cfg(not(feature = "avx512"))]
mod compare;
#[cfg(not(feature = "avx512"))]
mod core_cases;
#[cfg(not(feature = "avx512"))]
mod core_overflow;
#[cfg(not(feature = "avx512"))]
mod core_props;
#[cfg(not(feature = "avx512"))]
mod documents;
#[cfg(not(feature = "avx512"))]
mod e2e_first_hour;
#[cfg(not(feature = "avx512"))]
mod e2e_importance;
#[cfg(not(feature = "avx512"))]
mod e2e_method;
#[cfg(not(feature = "avx512"))]
mod e2e_tmux;
#[cfg(not(feature = "avx512"))]
mod edges;
#[cfg(not(feature = "avx512"))]
mod edges_round2;
#[cfg(not(feature = "avx512"))]
mod explain;
#[cfg(not(feature = "avx512"))]
mod export;
#[cfg(not(feature = "avx512"))]
mod fallback;
#[cfg(not(feature = "avx512"))]
mod first_hour;
#[cfg(not(feature = "avx512"))]
mod format_ladder;
#[cfg(not(feature = "avx512"))]
mod format_presets;
#[cfg(not(feature = "avx512"))]
mod format_props;
#[cfg(not(feature = "avx512"))]
mod gemma;
#[cfg(not(feature = "avx512"))]
mod gguf;
#[cfg(not(feature = "avx512"))]
mod gguf_bad;
#[cfg(not(feature = "avx512"))]
mod imatrix;
#[cfg(not(feature = "avx512"))]
mod importance;
#[cfg(not(feature = "avx512"))]
mod importance_explorer;
#[cfg(not(feature = "avx512"))]
mod imports;
#[cfg(not(feature = "avx512"))]
mod iquant_formats;
#[cfg(not(feature = "avx512"))]
mod ladder_stop;
#[cfg(not(feature = "avx512"))]
mod load;
#[cfg(not(feature = "avx512"))]
mod measure_only;
#[cfg(not(feature = "avx512"))]
mod method_cli;
#[cfg(not(feature = "avx512"))]
mod method_explorer;
#[cfg(not(feature = "avx512"))]
mod method_ladder;
#[cfg(not(feature = "avx512"))]
mod method_teaching;
#[cfg(not(feature = "avx512"))]
mod method_tokens;
#[cfg(not(feature = "avx512"))]
mod methods;
#[cfg(not(feature = "avx512"))]
mod minilm;
#[cfg(not(feature = "avx512"))]
mod npy;
#[cfg(not(feature = "avx512"))]
mod panes;
#[cfg(not(feature = "avx512"))]
mod practice;
#[cfg(not(feature = "avx512"))]
mod render;
#[cfg(not(feature = "avx512"))]
mod safetensors;
#[cfg(not(feature = "avx512"))]
mod scan;
#[cfg(not(feature = "avx512"))]
mod scan_methods;
#[cfg(not(feature = "avx512"))]
mod screen;
#[cfg(not(feature = "avx512"))]
mod seeds;
#[cfg(not(feature = "avx512"))]
mod sharded;
#[cfg(not(feature = "avx512"))]
mod staged;
#[cfg(not(feature = "avx512"))]
mod terminal;
#[cfg(not(feature = "avx512"))]
mod text_formats;
#[cfg(not(feature = "avx512"))]
mod text_parser;
