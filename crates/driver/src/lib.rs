//! The compiler driver: what `hlo-emit` and `hlo-opt` run, as a library.
//!
//! - [`pipeline`]: the stages from HLO to PTX as one commented list ([`pipeline::PASSES`])
//!   and [`pipeline::compile`], which runs them on a module's fusions and links the kernels
//!   into one PTX module, with every stage's text on request.
//! - [`check`]: `--check`, the meaning of every stage against the HLO reference evaluator.
//! - [`program`]: whole programs: the launch sequence as JSON and the program-level check.
//! - [`bundle`]: the GPU bundles of `--gpu-bundle`.

pub mod bundle;
pub mod check;
pub mod pipeline;
pub mod program;
