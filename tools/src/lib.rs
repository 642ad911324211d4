//! What the `hlo-emit` and `hlo-opt` binaries share: the compilation pipeline and the
//! per-pass meaning check (`--check`).

pub mod check;
pub mod pipeline;
