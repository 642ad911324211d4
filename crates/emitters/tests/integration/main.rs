//! The crate's integration tests, one module per area, linked into one test binary: each
//! test binary links LLVM and MLIR statically (~300 MB), so one binary per file made the
//! clean build outgrow CI's disk and spent most of the suite's time linking.

mod common;
mod elemental_ops;
mod emitters;
mod huge_grids;
mod reduction_launch;
mod transposes;
mod windows_and_updates;
