//! HLO fusions to `xla_gpu` IR: the fusion analysis, the computation partitioner, the
//! elemental emitter and the emitters.
//!
//! [`emit_fusion`] turns one fusion computation into an IR module: a private function per
//! subgraph of the partition (`@<fusion>_<root>`, computing the root's element at an
//! index), one per scalar computation the fusion calls (reducers), and the kernel `@main`.
//! Unsupported input is refused with an `unsupported: ...` diagnostic at the instruction.
//!
//! **The emitters** share one interface, [`FusionEmitter`] (XLA's shape: an analysis that
//! takes the fusion or not, then `emit`: the functions, `@main`, the launch dimensions and
//! the thread-to-output map), and one chooser, [`emitter_for`] (`emitter.rs`): the heroes
//! of the fusion analysis ([`analyze`], `analysis.rs`: graph, roots and heroes, computed
//! once and handed to the emitter) pick, in XLA's order, and the loop emitter takes what
//! no other does. One folder each:
//!
//! * `loop_fusion/`: one `xla_gpu.loop` over the output in coalesced order;
//! * `transpose/`: tiles through shared memory: XLA's classic padded tile (`tiling.rs`), or
//!   the packed one for 8- and 16-bit elements (`packed.rs`), several to a 32-bit word;
//! * `reduction/`: row, column and multi-row reductions with epilogues and side outputs;
//! * `normalization/`: rows reduced and then used elementwise on the same rows (softmax,
//!   layer norm), one block per row;
//! * `scatter/`: a scatter ROOT, one thread per update element, written in place (atomic
//!   updates unless the indices are unique);
//! * `dynamic_update_slice/`: dynamic-update-slice ROOTs written in place, one thread per
//!   update element;
//! * `concatenate/`: a concatenate hero of the one ROOT, one loop per operand;
//! * `sort/`: a sort ROOT, one block per row, a bitonic network in shared memory.
//!
//! What every kernel needs is written once in `kernel.rs`: `@main`'s signature and argument
//! names, the parameter types, thread and block ids with their ranges. **Adding an
//! emitter** is its folder (an analysis type implementing [`FusionEmitter`]) and one line
//! in [`emitter_for`].

pub mod analysis;
pub mod concatenate;
pub mod dynamic_update_slice;
pub mod elemental;
mod emitter;
mod epilogue;
mod kernel;
pub mod kernel_name;
pub mod linear_launch;
pub mod loop_fusion;
pub mod normalization;
pub mod partition;
pub mod reduction;
pub mod scatter;
pub mod sort;
pub mod transpose;
pub mod types;

use std::collections::HashMap;

use hlo::{ComputationId, Diagnostic, HloModule, InstrId, Opcode, Span};
use indexing::IndexingMap;

pub use analysis::FusionAnalysis;
pub use elemental::FusionContext;
pub use emitter::{EmitterKind, FusionEmitter, analyze, choose_emitter, emitter_for};
pub use kernel_name::kernel_names;
pub use partition::{PartitionedComputation, SplitReason, Subgraph};

/// How a kernel is launched: `blocks` blocks of `threads_per_block` threads (x only), the
/// blocks laid out on the grid that [`LaunchDimensions::grid`] gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchDimensions {
    /// The blocks that do work: the kernel's linear block id ranges over `0..blocks`.
    pub blocks: u64,
    pub threads_per_block: u64,
    pub shared_memory_bytes: u64,
}

impl LaunchDimensions {
    /// From the emitters' counts, which are `i64` like the bounds of the indexing maps they
    /// come from.
    pub fn new(blocks: i64, threads_per_block: i64, shared_memory_bytes: i64) -> LaunchDimensions {
        LaunchDimensions {
            blocks: blocks as u64,
            threads_per_block: threads_per_block as u64,
            shared_memory_bytes: shared_memory_bytes as u64,
        }
    }

    /// The grid to launch: `(blocks, 1, 1)`, or, when grid.x cannot hold that many blocks,
    /// the blocks spread over y as XLA does: `y = ceil(blocks / MAX_GRID_X)`, `x =
    /// ceil(blocks / y)`, linear block id `ctaid.y * x + ctaid.x`; the at most `y - 1`
    /// blocks past `blocks` do nothing (the emitter's domain excludes them). Emitters
    /// refuse launches of more than `MAX_GRID_X * MAX_GRID_YZ` blocks.
    pub fn grid(&self) -> [u64; 3] {
        if self.blocks <= Target::MAX_GRID_X {
            return [self.blocks.max(1), 1, 1];
        }
        let y = self.blocks.div_ceil(Target::MAX_GRID_X);
        [self.blocks.div_ceil(y), y, 1]
    }
}

/// What an emitter decided besides the IR.
#[derive(Clone, Debug, PartialEq)]
pub struct EmittedKernel {
    pub launch: LaunchDimensions,
    pub vector_factor: i64,
    /// (thread, block)[symbols] → output index.
    pub thread_map: IndexingMap,
    /// Outputs written in place (XLA's in-place fusion outputs), as `(output, parameter)`:
    /// the output's buffer is the parameter's, and the kernel writes only some of its
    /// elements (a scatter's updated windows), leaving the others as the parameter holds
    /// them. Empty for the emitters that write every output element once.
    pub in_place: Vec<(usize, usize)>,
    /// How the threads cover the kernel's tiles, as nested layouts (issue 21), where the
    /// emitter states them: the transpose emitter's tiles, the column reduction's.
    pub layouts: Vec<ThreadLayout>,
}

/// A nested layout (seed 004) saying how a block's threads cover a tile: what the emitter's
/// indexing maps do, in the seed's terms (each emitter's tests check that the layout's map
/// and its own agree at every point).
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadLayout {
    /// What it covers, e.g. "the tile read".
    pub what: &'static str,
    /// The tile's shape, the layout's vector shape.
    pub shape: Vec<i64>,
    pub layout: indexing::nested_layout::NestedLayout,
}

/// One fusion compiled to `xla_gpu` IR.
pub struct EmittedFusion {
    /// The fusion computation's name.
    pub name: String,
    pub module: ir::Module,
    pub kernel: EmittedKernel,
    /// The emitter that wrote the module: the one the heroes ask for when it takes the
    /// fusion, else the loop emitter, which is correct for every fusion (a reduce becomes a
    /// loop per output element, a transpose reads uncoalesced). A transpose fusion whose
    /// outputs the transpose emitter cannot index together (see
    /// [`transpose::TransposePlan::new`]) falls back to it.
    pub emitter: EmitterKind,
    pub partition: PartitionedComputation,
}

/// The computations whose instructions the runtime schedules: the entry and, transitively,
/// the bodies of its control flow (`while` conditions and bodies, `conditional` branches,
/// `call`ed and `async` computations), in the order they are first reached. Their
/// `fusion` instructions are the kernels; the rest is the runtime's ([`left_to_runtime`]).
fn scheduled_computations(module: &HloModule) -> Vec<ComputationId> {
    let mut out = vec![module.entry];
    let mut next = 0;
    while let Some(&c) = out.get(next) {
        next += 1;
        for instr in &module.computation(c).instructions {
            if matches!(
                instr.opcode,
                Opcode::While | Opcode::Conditional | Opcode::Call | Opcode::AsyncStart
            ) {
                for called in instr.called_computations() {
                    if !out.contains(&called.id) {
                        out.push(called.id);
                    }
                }
            }
        }
    }
    out
}

/// The fusion computations of a module to compile, in order: the computations called by
/// `fusion` instructions of the entry computation and of its control flow, or, when there
/// are none, the entry computation itself (XLA's emitter tests write a bare fusion body)
/// unless it computes nothing: an entry of parameters, constants, tuples and library calls
/// (a program whose results are all empty arrays, made constants, or CUB's sort of a
/// parameter) launches no kernel.
pub fn fusions(module: &HloModule) -> Vec<ComputationId> {
    let mut out = Vec::new();
    for c in scheduled_computations(module) {
        for instr in &module.computation(c).instructions {
            if instr.opcode == Opcode::Fusion
                && let Some(called) = instr.called("calls")
                && !out.contains(&called.id)
            {
                out.push(called.id);
            }
        }
    }
    let computes = |instr: &hlo::Instruction| {
        !matches!(
            instr.opcode,
            Opcode::Parameter
                | Opcode::Constant
                | Opcode::Tuple
                | Opcode::GetTupleElement
                | Opcode::CustomCall
        )
    };
    if out.is_empty()
        && module
            .computation(module.entry)
            .instructions
            .iter()
            .any(computes)
    {
        out.push(module.entry);
    }
    out
}

/// The instructions of a module with fusions that no kernel computes, as (computation,
/// instruction): library calls (`custom-call`), control flow, collectives, copies, async
/// pairs... what XLA's runtime runs itself. Parameters, constants, tuples,
/// `get-tuple-element` and `bitcast` are left out: they are buffers and views, not work.
/// Empty for a bare fusion body.
pub fn left_to_runtime(module: &HloModule) -> Vec<(ComputationId, InstrId)> {
    if fusions(module) == [module.entry] {
        return Vec::new();
    }
    let mut out = Vec::new();
    for c in scheduled_computations(module) {
        for (i, instr) in module.computation(c).instructions.iter().enumerate() {
            if !matches!(
                instr.opcode,
                Opcode::Fusion
                    | Opcode::Parameter
                    | Opcode::Constant
                    | Opcode::Tuple
                    | Opcode::GetTupleElement
                    | Opcode::Bitcast
            ) {
                out.push((c, InstrId(i)));
            }
        }
    }
    out
}

/// Refuses a program that leaves to the runtime an instruction XLA:GPU compiles to a kernel
/// of its own and that no emitter here compiles (a `sort`, a `topk`): left out, the program
/// would compile without it. Located at the instruction, saying what XLA:GPU does.
pub fn refuse_kernels_left_out(module: &HloModule) -> Result<(), Diagnostic> {
    for (c, i) in left_to_runtime(module) {
        let instr = module.computation(c).instruction(i);
        if matches!(instr.opcode, Opcode::Sort | Opcode::TopK) || instr.is_topk_call() {
            return Err(kernel::without_emitter(instr).expect("sort and topk have none"));
        }
    }
    Ok(())
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

/// What the emitters need to know of the GPU they write for, and whose choices to make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// The number of `sm_NN`.
    pub arch: u32,
    pub choices: Choices,
}

/// Whose choices the emitters make where several kernels are correct and ours differ from
/// XLA's: vector factors, and the names of the functions they write. `docs/emitters.md`
/// ("Our choices and XLA's") lists each difference and why ours is the default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Choices {
    /// Ours, measured on the GPU (the default).
    #[default]
    Tuned,
    /// XLA's, as its emitters make them today (`hlo-emit --match-xla`): its own tests'
    /// CHECK lines and the seed's walkthrough can be compared digit for digit.
    Xla,
}

impl Target {
    /// sm_90, `hlo-emit`'s default `--arch`, with our choices.
    pub const DEFAULT: Target = Target {
        arch: 90,
        choices: Choices::Tuned,
    };

    /// Whether XLA's choices are asked for ([`Choices::Xla`]).
    pub fn matches_xla(self) -> bool {
        self.choices == Choices::Xla
    }

    /// The oldest architecture with `cvt` instructions between f32/f16 and
    /// f8e4m3fn/f8e5m2 (sm_89). Before it, those conversions are integer and f32
    /// arithmetic, as XLA's `expand_float_ops` writes them where the GPU has none.
    pub const F8_CONVERSION_ARCH: u32 = 89;

    /// Threads per warp (the one definition is the `gpu` dialect's, which the passes use).
    pub const WARP_SIZE: i64 = ir::dialects::gpu::WARP_SIZE;

    /// The most threads in a block (CUDA's limit on every architecture since sm_20).
    pub const MAX_THREADS_PER_BLOCK: i64 = 1024;

    /// The most blocks a grid holds along x (CUDA: 2^31 - 1) and along y or z (65,535).
    pub const MAX_GRID_X: u64 = (1 << 31) - 1;
    pub const MAX_GRID_YZ: u64 = 65_535;

    /// The shared memory a block may use without opting in to more (48 KiB).
    pub const SHARED_MEMORY_PER_BLOCK: i64 = 48 * 1024;

    /// The streaming multiprocessors of the GPU the occupancy rules are written for (an
    /// H100 or H200 SXM: 132) and the threads each holds at once (2048): XLA reads both
    /// from the device; the transpose tiles and the multi-row reductions (which shrink
    /// their vectors until every SM has a block) are chosen with them.
    pub const CORE_COUNT: i64 = 132;
    pub const THREADS_PER_CORE: i64 = 2048;

    /// Whether the kernels may use the f8e4m3fn/f8e5m2 `cvt` instructions.
    pub fn has_f8_conversions(self) -> bool {
        self.arch >= Target::F8_CONVERSION_ARCH
    }
}

/// Emits the fusion computation `fusion` of `module` with the emitter [`emitter_for`]
/// chooses, for [`Target::DEFAULT`].
pub fn emit_fusion(module: &HloModule, fusion: ComputationId) -> Result<EmittedFusion, Diagnostic> {
    emit_fusion_for(module, fusion, Target::DEFAULT)
}

/// [`emit_fusion`] for `target`.
pub fn emit_fusion_for(
    module: &HloModule,
    fusion: ComputationId,
    target: Target,
) -> Result<EmittedFusion, Diagnostic> {
    let mut analysis = analyze(module.computation(fusion));
    analysis.choices = target.choices;
    emitter_for(&analysis, target)?.emit(&analysis, module, fusion, target)
}

/// The function of a computation a fusion calls (a reducer, a scatter's combiner): named
/// after the computation, or as XLA names a subgraph function, `<computation>_<root>`
/// (`@add_add`).
fn scalar_function_name(computation: &hlo::Computation, choices: Choices) -> String {
    match choices {
        Choices::Tuned => partition::sanitize(&computation.name),
        Choices::Xla => partition::sanitize(&format!(
            "{}_{}",
            computation.name,
            computation.root_instruction().name
        )),
    }
}

/// The context for emitting `fusion` with `partition`: function names for its subgraphs
/// and for the scalar computations it calls.
pub(crate) fn fusion_context(
    module: &HloModule,
    fusion: ComputationId,
    partition: PartitionedComputation,
    target: Target,
) -> FusionContext<'_> {
    let subgraph_functions = partition.subgraphs.iter().map(|s| s.name.clone()).collect();
    let scalar_functions: HashMap<ComputationId, String> =
        called_scalar_computations(module, fusion)
            .into_iter()
            .map(|id| {
                (
                    id,
                    scalar_function_name(module.computation(id), target.choices),
                )
            })
            .collect();
    FusionContext {
        module,
        fusion: module.computation(fusion),
        partition,
        subgraph_functions,
        scalar_functions,
        target,
    }
}

/// Emits a function per subgraph of the partition and per scalar computation that fusion
/// `fusion` calls into `m`.
pub(crate) fn emit_functions(
    cx: &FusionContext<'_>,
    fusion: ComputationId,
    m: &mut ir::Module,
) -> Result<(), Diagnostic> {
    for i in 0..cx.partition.subgraphs.len() {
        elemental::emit_subgraph_function(cx, m, i)?;
    }
    for id in called_scalar_computations(cx.module, fusion) {
        elemental::emit_scalar_function(cx, m, id)?;
    }
    Ok(())
}

/// An emitter that writes IR our verifier rejects has a bug; say so at the fusion.
pub(crate) fn verify_emitted(
    m: &ir::Module,
    computation: &hlo::Computation,
) -> Result<(), Diagnostic> {
    m.verify().map_err(|e| {
        Diagnostic::new(
            computation.span,
            format!("internal error: the emitted IR does not verify: {e}"),
        )
    })
}

/// `unsupported: <what>` at `span`.
pub(crate) fn unsupported(span: Span, what: impl std::fmt::Display) -> Diagnostic {
    Diagnostic::new(span, format!("unsupported: {what}"))
}
