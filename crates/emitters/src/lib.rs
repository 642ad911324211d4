//! HLO fusions to `xla_gpu` IR (DESIGN §5, §6): the computation partitioner, the elemental
//! emitter, hero analysis and the loop emitter.
//!
//! [`emit_fusion`] turns one fusion computation into an IR module: a private function per
//! subgraph of the partition (`@<fusion>_<root>`, computing the root's element at an
//! index), one per scalar computation the fusion calls (reducers), and the kernel `@main`,
//! which loops over the output and calls the root subgraph's function. What the emitters do
//! not handle is refused with an `unsupported: ...` diagnostic at the instruction.

pub mod elemental;
pub mod hero;
pub mod loop_emitter;
pub mod partition;
pub mod types;

use std::collections::HashMap;

use hlo::{ComputationId, Diagnostic, HloModule, Opcode};
use indexing::IndexingMap;

pub use elemental::FusionContext;
pub use hero::EmitterKind;
pub use partition::{PartitionedComputation, SplitReason, Subgraph};

/// How a kernel is launched (x dimensions only: the emitters use 1-d grids).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchDimensions {
    pub blocks: u64,
    pub threads_per_block: u64,
    pub shared_memory_bytes: u64,
}

/// What an emitter decided besides the IR.
#[derive(Clone, Debug, PartialEq)]
pub struct EmittedKernel {
    pub launch: LaunchDimensions,
    pub vector_factor: i64,
    /// (thread, block)[symbols] → output index.
    pub thread_map: IndexingMap,
}

/// One fusion compiled to `xla_gpu` IR.
pub struct EmittedFusion {
    /// The fusion computation's name.
    pub name: String,
    pub module: ir::Module,
    pub kernel: EmittedKernel,
    /// The emitter the heroes ask for; the module is always the loop emitter's until the
    /// transpose and reduction emitters exist (a reduce inside a loop fusion is computed by
    /// a loop per output element, correct but not fast).
    pub hero_kind: EmitterKind,
    pub partition: PartitionedComputation,
}

/// The fusion computations of a module to compile, in order: the computations called by
/// `fusion` instructions of the entry computation, or, when it has none, the entry
/// computation itself (XLA's emitter tests write a bare fusion body).
pub fn fusions(module: &HloModule) -> Vec<ComputationId> {
    let entry = module.computation(module.entry);
    let mut out = Vec::new();
    for instr in &entry.instructions {
        if instr.opcode == Opcode::Fusion
            && let Some(called) = instr.called("calls")
            && !out.contains(&called.id)
        {
            out.push(called.id);
        }
    }
    if out.is_empty() {
        out.push(module.entry);
    }
    out
}

/// The scalar computations `fusion` calls, transitively (reducers and their callees).
fn called_scalar_computations(module: &HloModule, fusion: ComputationId) -> Vec<ComputationId> {
    let mut out: Vec<ComputationId> = Vec::new();
    let mut stack = vec![fusion];
    while let Some(c) = stack.pop() {
        for instr in &module.computation(c).instructions {
            for called in instr.called_computations() {
                if called.id != fusion && !out.contains(&called.id) {
                    out.push(called.id);
                    stack.push(called.id);
                }
            }
        }
    }
    out
}

/// Emits the fusion computation `fusion` of `module`.
pub fn emit_fusion(module: &HloModule, fusion: ComputationId) -> Result<EmittedFusion, Diagnostic> {
    let computation = module.computation(fusion);
    let (hero_kind, _heroes) = hero::choose_emitter(computation);
    let partition = PartitionedComputation::new(computation, |_| false)?;
    let subgraph_functions = partition.subgraphs.iter().map(|s| s.name.clone()).collect();
    let mut scalar_functions = HashMap::new();
    let scalars = called_scalar_computations(module, fusion);
    for &id in &scalars {
        let name = partition::sanitize(&module.computation(id).name);
        scalar_functions.insert(id, name);
    }
    let cx = FusionContext {
        module,
        fusion: computation,
        partition,
        subgraph_functions,
        scalar_functions,
    };
    let mut m = ir::Module::new();
    for i in 0..cx.partition.subgraphs.len() {
        elemental::emit_subgraph_function(&cx, &mut m, i)?;
    }
    for &id in &scalars {
        elemental::emit_scalar_function(&cx, &mut m, id)?;
    }
    let kernel = loop_emitter::emit_main(&cx, &mut m)?;
    if let Err(e) = m.verify() {
        return Err(Diagnostic::new(
            computation.span,
            format!("internal error: the emitted IR does not verify: {e}"),
        ));
    }
    Ok(EmittedFusion {
        name: computation.name.clone(),
        module: m,
        kernel,
        hero_kind,
        partition: cx.partition,
    })
}
