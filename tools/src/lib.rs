//! What the `hlo-emit` and `hlo-opt` binaries share: the compilation pipeline and the
//! per-pass meaning check (`--check`), and the GPU bundles of `--gpu-bundle`.

pub mod bundle;
pub mod check;
pub mod pipeline;
