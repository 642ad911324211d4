//! The crate's integration tests, one module per area, linked into one test binary: each
//! test binary links LLVM and MLIR statically (~300 MB), so one binary per file made the
//! clean build outgrow CI's disk and spent most of the suite's time linking.

mod against_mlir;
mod common;
mod expand_float_ops;
mod layouts;
mod lower_tensors;
mod pipeline_front;
mod simplify_affine;
