//! The ENTRY of a module as a launch sequence: the buffers a run of its kernels needs
//! (the ENTRY's parameters, each kernel's outputs) and the kernels in launch order with
//! the buffers each reads and writes. `--gpu-bundle` writes it for a GPU, `--launch-json`
//! prints it, and `--check` runs it in the interpreter against the evaluator.
//!
//! The ENTRY is read as a chain of kernels: its parameters are buffers, each `fusion`
//! instruction is one kernel reading buffers and writing new ones (a multi-output fusion's
//! `get-tuple-element`s name its output buffers), and the ROOT (an array or a `tuple` of
//! them) names the results. A module without `fusion` instructions, as in XLA's emitter
//! tests, is one kernel whose parameters are the inputs; a module whose ENTRY also
//! computes (a `copy`, a `constant`, an `add`: XLA's tests have such ENTRYs) is not a
//! sequence: each fusion stands on its own drawn inputs (`separate`, with a `note` naming
//! the instruction), the way `--check` runs fusions.

mod buffers;
mod check;
mod control;
mod launch;
mod plan;

pub(crate) use buffers::{byte_size, draw, evaluate_chain, filled, minor_to_major};
pub use check::check_program;
pub(crate) use launch::kernel_name;
pub use launch::launch_json;
pub(crate) use plan::{plan_chain, plan_checked_chain};

use crate::check::Sensitivity;
use hlo::evaluate::HostArray;
use hlo::{ArrayShape, ComputationId, InstrId};

/// The floats drawn are multiples of this.
pub(crate) const FLOAT_SCALE: f64 = 1.0 / 64.0;

/// One buffer of the chain.
pub(crate) struct BufferPlan {
    pub(crate) name: String,
    pub(crate) shape: ArrayShape,
    pub(crate) init: Init,
    /// What its elements are computed from (reduces, approximated functions) upstream:
    /// what its tolerance depends on.
    pub(crate) sensitivity: Sensitivity,
}

pub(crate) enum Init {
    Draw {
        seed: u64,
        low: i128,
        high: i128,
    },
    Constant(f64),
    /// Every element given: the indices of a scatter that promises `unique_indices`.
    Values(HostArray),
    Output {
        kernel: usize,
        index: usize,
    },
    /// The result of a [`HostStep`] (only in a chain planned for `--check`).
    Host,
}

/// One kernel: the fusion computation it compiles, and the buffers it reads and writes.
pub(crate) struct KernelPlan {
    pub(crate) fusion: ComputationId,
    pub(crate) arguments: Vec<usize>,
    pub(crate) outputs: Vec<usize>,
}

/// An ENTRY instruction no kernel computes, which `--check` evaluates on the host between
/// the kernels, as the runtime runs it (a matrix product goes to cuBLAS; a constant whose
/// elements differ is copied in): the kernels around it are then still checked as one
/// program.
pub(crate) struct HostStep {
    pub(crate) instruction: InstrId,
    pub(crate) arguments: Vec<usize>,
    /// One buffer per array of its result (a tuple's: CUB's sort of keys and values).
    pub(crate) outputs: Vec<usize>,
    /// How many kernels run before it.
    pub(crate) after: usize,
}

/// The ENTRY as buffers and kernels.
#[derive(Default)]
pub(crate) struct Chain {
    pub(crate) buffers: Vec<BufferPlan>,
    pub(crate) kernels: Vec<KernelPlan>,
    /// Empty unless planned for `--check` ([`plan_checked_chain`]).
    pub(crate) host_steps: Vec<HostStep>,
    /// The ENTRY's parameters and results; empty when the kernels are bundled separately.
    pub(crate) parameters: Vec<usize>,
    pub(crate) results: Vec<usize>,
    /// Each kernel runs on its own drawn inputs instead of the ENTRY's chain.
    pub(crate) separate: bool,
    /// Why the kernels are bundled separately when the ENTRY has fusions.
    pub(crate) note: Option<String>,
}
