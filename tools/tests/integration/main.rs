//! The crate's integration tests, one module per area, linked into one test binary: each
//! test binary links LLVM and MLIR statically (~300 MB), so one binary per file made the
//! clean build outgrow CI's disk and spent most of the suite's time linking.

mod check;
mod common;
mod deep_inputs;
mod deliverable;
mod distribution;
mod docs;
mod flags;
mod fuzz;
mod gpu_bundle;
mod hostile;
mod jax_corpus;
mod ptx;
mod reduction_corpus;
mod snapshots;
mod transposes;
mod xla_emitter_tests;
mod xla_lit;
mod xla_pass_tests;
