//! The compiler driver: what `hlo-emit` and `hlo-opt` run, as a library.
//!
//! - [`pipeline`]: the stages from HLO to PTX as one commented list ([`pipeline::PASSES`]),
//!   the options of a run, and what a run makes ([`pipeline::Compiled`]).
//! - [`runner`]: the one stage runner: the fusion passes, the emitters, our passes and the
//!   LLVM stages, with observers (dumps, `--check`) that see every stage's result.
//! - [`check`]: `--check`, the meaning of every stage against the HLO reference evaluator.
//! - [`program`]: whole programs: the launch sequence as JSON and the program-level check.
//! - [`bundle`]: the GPU bundles of `--gpu-bundle`.
//! - [`reproducer`]: crash reproducers (`--crash-reproducer`), replayed by `hlo-opt`.

pub mod bundle;
pub mod check;
pub mod pipeline;
pub mod program;
pub mod reproducer;
pub mod runner;
