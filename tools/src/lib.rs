//! What the `hlo-emit` and `hlo-opt` binaries share: the compilation pipeline.

pub mod pipeline;
