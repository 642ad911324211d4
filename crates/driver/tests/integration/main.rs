//! The driver's integration tests, one module per area, linked into one test binary (each
//! test binary links LLVM and MLIR statically).

mod compile;
mod fusion_duplication;
mod fusion_siblings;
