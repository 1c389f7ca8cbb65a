//! The `quantscope` binary: a thin shell over the library.

fn main() {}
