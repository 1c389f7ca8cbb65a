//! Teaching: what the explorer and the headless commands use to teach rather than to
//! measure. The exercises (steps whose answers the core computes and checks), the
//! built-in scenarios, exercises and recall cards compiled in from `assets/`, and the demo
//! scripts. The numbers all come from [`crate::core`]; this module only decides what to
//! ask and what to show.

pub mod assets;
pub mod exercise;
pub mod quote;
pub mod script;
