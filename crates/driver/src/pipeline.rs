//! The compilation pipeline of `hlo-emit`, from HLO to PTX: what it runs and in what order,
//! the options of a run, and what a run makes. [`crate::runner`] runs it.
//!
//! Stages, in order: the fusion passes (unfused programs only), the emitter (`xla_gpu`
//! IR), our passes ([`PASSES`], verified after each), `lower-to-llvm` (real MLIR),
//! translation to LLVM IR, LLVM's O3 with libdevice linked, and the NVPTX backend. Every
//! stage can be dumped under an MLIR-style header and the pipeline can stop after any of
//! them.

use emitters::{EmitterKind, LaunchDimensions};
use fusion::HloPass;
use hlo::{ComputationId, HloModule, SourceFile};
use passes::PassRegistry;

use crate::runner::Runner;

// The pipeline, from HLO text to SASS, is the four lists below in order, each step with
// why it is there, run by `crate::runner::Runner` (which verifies, times and shows each
// step's result to the dumps and `--check`):
//
// 1. [`FUSION_PASSES`], on an unfused program's HLO (`Runner::fuse`), or
//    [`FUSED_MODULE_PASSES`] on a fused one (`Runner::outline`);
// 2. `emit`: the emitter chosen for each fusion (`emitters::emit_fusion_for`), `xla_gpu` IR;
// 3. [`PASSES`], on each fusion's module;
// 4. [`LLVM_STAGES`], on the fusions' modules linked into one (`Runner::compile`).

/// The fusion passes, on a program that holds no fusion yet, in order.
pub const FUSION_PASSES: &[HloPass] = &[
    // Under `--fuse`, a module that is already fused is fused anew: its fusions become
    // plain instructions again (XLA's classic softmax is three kernels that read the input
    // three times; the rules below make it one). Unfused input has nothing to inline.
    fusion::INLINE_FUSIONS,
    // JAX wraps every `jax.nn.*` function, `jnp.where`, `argmax`... in a `call`; the
    // emitters index through fusions, not calls. XLA's CallInliner runs first for the
    // same reason.
    fusion::INLINE_CALLS,
    // The callees are now unreachable; leaving them would make `--emit=hlo` print dead
    // code and every later pass walk it.
    fusion::REMOVE_DEAD_COMPUTATIONS,
    // JAX writes `table[ids]` as a gather with collapsed slice dimensions; the emitters
    // index XLA's canonical gather, which XLA's GatherSimplifier produces at this point.
    fusion::CANONICALIZE_GATHERS,
    // `lax.top_k` comes as a `topk` unfused and as XLA's `TopK` custom-call when XLA printed
    // the module; the sort emitter takes the second (one kernel: rows sorted, the first k
    // stored).
    fusion::NORMALIZE_TOPK,
    // A sort whose rows no block's shared memory holds goes to CUB's radix sort, left to
    // the runtime, where XLA's SortRewriter sends it (a plain comparator of keys, or keys
    // and values); the others stay for the sort emitter.
    fusion::SORT_REWRITER,
    // A sort CUB does not take whose rows no block holds becomes XLA's chain of kernels for
    // it: tiles sorted in shared memory, then merge steps across the row, each a fusion.
    fusion::SPLIT_LONG_SORTS,
    // An array without elements is a constant, not work: XLA launches no kernel for it
    // (its ZeroSizedHloElimination), and what reads one (a reduce over an empty dimension,
    // a concatenate with an empty part) becomes what it computes from the others.
    fusion::ZERO_SIZED_HLO_ELIMINATION,
    // JAX's shape plumbing (identity broadcasts, reshape chains, `x * 1`, dtype round
    // trips) goes, so that the rules below see the ops that compute something.
    fusion::ALGEBRAIC_SIMPLIFIER,
    // JAX traces a value once per use (`x - mean` twice in a layer norm); one instruction
    // per value, so fusion decides once and no kernel computes it twice.
    fusion::HLO_CSE,
    // JAX reshapes each reduction to `[rows, 1]` before dividing it (`mean`, `var`); the
    // elementwise ops move before such reshapes, so they can be a reduction's epilogue.
    fusion::MOVE_RESHAPES,
    // Moving reshapes leaves `reshape(reshape(x))` pairs and broadcasts of the same scalar
    // to the same shape: simplified again, as XLA runs its simplifier after each such
    // pass.
    fusion::ALGEBRAIC_SIMPLIFIER,
    fusion::HLO_CSE,
    // A reduce whose kept and reduced dimensions interleave (group norm over NHWC) is one
    // no reduction emitter takes; through a transpose that puts the reduced dimensions
    // last it is a row reduction, as XLA's ReductionLayoutNormalizer makes it.
    fusion::NORMALIZE_REDUCTIONS,
    // What the program computes and never returns goes (XLA runs HloDCE before fusion):
    // the fusion pass would otherwise give it a kernel, or a sibling's kernel an output.
    fusion::HLO_DCE,
    // A scatter or dynamic-update-slice writes into the buffer of the operand it updates,
    // so that operand takes the result's layout (a copy where it differs), as XLA's layout
    // assignment arranges.
    fusion::IN_PLACE_LAYOUTS,
    // The kernels: reductions as heroes with their prologues, elementwise producers into
    // their consumers, cheap ones duplicated (the rules are in `fusion/src/fuse.rs`).
    // Without it the whole program would be one loop kernel that recomputes every
    // reduction per element.
    fusion::FUSE,
];

/// The fusion passes of a module that holds fusions already (XLA's printed modules, run
/// without `--fuse`): its fusions are kept as they are.
pub const FUSED_MODULE_PASSES: &[HloPass] = &[
    // XLA:GPU leaves each sort (and top-k) outside the fusions and gives it a kernel of its
    // own; here that kernel is the sort emitter's, which takes a fusion whose ROOT is the
    // sort.
    fusion::NORMALIZE_TOPK,
    // Before a sort is given a fusion: one CUB sorts is left to the runtime instead.
    fusion::SORT_REWRITER,
    fusion::SPLIT_LONG_SORTS,
    fusion::OUTLINE_SORTS,
    // A fusion whose output has no elements launches nothing (it becomes a constant), and
    // one that reads an empty array into a non-empty result keeps its kernel without the
    // empty read, as XLA's ZeroSizedHloElimination and simplifier run before its emitters.
    fusion::ZERO_SIZED_HLO_ELIMINATION,
];

/// Our passes, on each fusion's module, in order (the seed's walkthrough order).
pub const PASSES: &[&str] = &[
    // The emitters call one function per subgraph; inlining them gives the later passes
    // (vectorization above all) whole loops to look at.
    "inline",
    // What inlining left uncalled would otherwise be lowered and compiled for nothing.
    "erase-dead-functions",
    // A loop whose map constrains a range variable (a column reduction's last, partial row
    // of tiles) gets a main loop without the check and a tail, as XLA's pipeline does here:
    // the odd-sized column reduction of XLA's tests goes from 333 to 141 SASS instructions.
    "peel-loops",
    // `xla_gpu.loop` and the indexing ops become `scf` loops and `affine` arithmetic.
    "lower-xla-gpu-to-scf",
    // Launch ranges decide the bounds checks the emitters wrote; dropping them puts the
    // accesses directly in the vector loop.
    "simplify-arith",
    "canonicalize",
    // Multi-dimensional tensors become flat ones, so that accesses are one index and can
    // be vectorized.
    "flatten-tensors",
    // Consecutive scalar accesses in the innermost loop become vector loads and stores.
    "vectorize-loads-stores",
    // Small constant-trip loops are unrolled, as XLA's emitters do.
    "unroll-loops",
    // Unrolling and vectorization leave constants and duplicates behind.
    "canonicalize",
    "cse",
    // Tensors become pointers: loads and stores on the kernel's arguments.
    "lower-tensors",
    // Index arithmetic with the ranges it now has.
    "simplify-affine",
    // Float ops the NVPTX backend has no instruction for (f16/bf16 math, `erf`...) become
    // ops it has.
    "expand-float-ops",
    // Integer `power` (`math.ipowi`) has no instruction either: exponentiation by squaring,
    // after unrolling, so that its loop stays a loop (XLA's ExpandIntegerPower).
    "expand-integer-power",
    // A last clean-up before the dialects leave ours.
    "canonicalize",
    "cse",
    // MLIR's own conversions to the llvm and nvvm dialects.
    "lower-to-llvm",
];

/// The passes of `--pass-pipeline`'s comma-separated list, or [`PASSES`] without one.
pub fn requested_passes(requested: Option<&str>) -> Vec<String> {
    match requested {
        Some(list) => list
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect(),
        None => PASSES.iter().map(|p| p.to_string()).collect(),
    }
}

/// The fusions of `module` to compile: all, or the one named `wanted`.
pub fn select_fusions(
    source: &SourceFile,
    module: &HloModule,
    wanted: Option<&str>,
) -> Result<Vec<ComputationId>, String> {
    // A sort or a top-k left outside the fusions would silently be missing from the kernels.
    emitters::refuse_kernels_left_out(module).map_err(|d| d.render(source))?;
    let mut fusions = emitters::fusions(module);
    if let Some(wanted) = wanted {
        let names: Vec<&str> = fusions
            .iter()
            .map(|&id| module.computation(id).name.as_str())
            .collect();
        fusions.retain(|&id| module.computation(id).name == *wanted);
        if fusions.is_empty() {
            return Err(format!(
                "error: {} has no fusion computation '{wanted}' (its fusions: {})",
                source.name,
                names.join(", ")
            ));
        }
    }
    Ok(fusions)
}

/// How the partitioner splits each of `fusions` (`--print-partition`).
pub fn describe_partitions(
    source: &SourceFile,
    module: &HloModule,
    fusions: &[ComputationId],
) -> Result<String, String> {
    let mut out = String::new();
    for &id in fusions {
        let computation = module.computation(id);
        let partition =
            emitters::PartitionedComputation::new(&emitters::analyze(computation), |_| false)
                .map_err(|d| d.render(source))?;
        out.push_str(&format!("fusion {}:\n", computation.name));
        out.push_str(&partition.describe(computation));
    }
    Ok(out)
}

/// Where the pipeline stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// The emitters' `xla_gpu` module.
    XlaGpu,
    /// After our passes, whichever the last one is (`--check` with `--pass-pipeline`).
    Passes,
    /// After `lower-to-llvm`: the llvm/nvvm dialects.
    Mlir,
    /// LLVM IR as translated from MLIR (before optimization).
    Llvm,
    Ptx,
    /// The machine code: `ptxas`, then `nvdisasm`.
    Sass,
}

/// How to run the pipeline.
#[derive(Clone, Debug)]
pub struct Options {
    pub stop_at: Stage,
    /// Stop after this stage (one of [`stage_names`] but the fusion passes: `emit`, a pass,
    /// or an LLVM stage) and
    /// give its output; overrides `stop_at`. A pass that runs several times stops after its
    /// first run.
    pub stop_after: Option<String>,
    pub arch: String,
    /// Ours or XLA's choices where they differ (`--match-xla`).
    pub choices: emitters::Choices,
    pub dump_after_each_pass: bool,
    pub print_ir_after: Vec<String>,
    pub print_ir_after_failure: bool,
    pub generic: bool,
    /// The passes to run, in order: [`PASSES`] unless a user gives their own pipeline
    /// (`--pass-pipeline`) to try passes in another order or leave some out.
    pub passes: Vec<String>,
}

impl Default for Options {
    /// The whole pipeline to PTX for sm_90, no dumps.
    fn default() -> Options {
        Options {
            stop_at: Stage::Ptx,
            stop_after: None,
            arch: "sm_90".into(),
            choices: emitters::Choices::Tuned,
            dump_after_each_pass: false,
            print_ir_after: Vec::new(),
            print_ir_after_failure: false,
            generic: false,
            passes: PASSES.iter().map(|p| p.to_string()).collect(),
        }
    }
}

/// The stages after our passes, on the kernels linked into one module (one PTX file
/// whatever the number of fusions), by the names their dump headers give them.
pub const LLVM_STAGES: &[&str] = &[
    // MLIR's translation of the llvm and nvvm dialects to LLVM IR (`codegen::mlir`).
    "translate",
    // LLVM's O3, with the libdevice functions the kernels call linked in and the NVPTX
    // options of `--arch`: what NVIDIA's and XLA's compilers run.
    "llvm-opt",
    // The NVPTX backend, on the very module O3 made (`--check` interprets that module).
    "ptx",
    // `ptxas` and `nvdisasm`, on request (`--emit=sass`): registers, spills, the SASS.
    "sass",
];

/// Every stage name `--print-ir-after` takes, in pipeline order, each once (`canonicalize`
/// and `cse` run several times; naming them dumps after every run): the fusion passes
/// (which dump only when they change the module), then every stage `--stop-after` takes.
pub fn stage_names() -> Vec<&'static str> {
    let fusion = FUSION_PASSES
        .iter()
        .chain(FUSED_MODULE_PASSES)
        .map(|p| p.name);
    let rest = std::iter::once("emit").chain(PASSES.iter().chain(LLVM_STAGES).copied());
    let mut names = Vec::new();
    for name in fusion.chain(rest) {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

impl Options {
    /// The stage whose output [`compile`] returns: `--stop-after`'s, else `stop_at`'s.
    pub(crate) fn last_stage(&self) -> &str {
        self.stop_after.as_deref().unwrap_or(match self.stop_at {
            Stage::XlaGpu => "emit",
            // Not a stage name: no pass list is cut short, no LLVM stage runs.
            Stage::Passes => "passes",
            Stage::Mlir => "lower-to-llvm",
            Stage::Llvm => "translate",
            Stage::Ptx => "ptx",
            Stage::Sass => "sass",
        })
    }

    /// Our passes a run makes: `passes` up to the first run of the last stage (all of them
    /// when that is an LLVM stage).
    pub fn passes_to_run(&self) -> &[String] {
        let last = self.last_stage();
        match self.passes.iter().position(|p| p == last) {
            Some(at) => &self.passes[..=at],
            None => &self.passes,
        }
    }
}

/// Refuses options that name what does not exist, before any work: a misspelt
/// `--print-ir-after` would otherwise print nothing, and an unknown `--arch` would give PTX
/// for LLVM's default target.
pub(crate) fn validate(options: &Options) -> Result<(), String> {
    let names = stage_names();
    if let Some(unknown) = options
        .print_ir_after
        .iter()
        .find(|p| !names.contains(&p.as_str()))
    {
        return Err(format!(
            "error: --print-ir-after: unknown stage '{unknown}' (the stages: {})",
            names.join(", ")
        ));
    }
    if let Some(stop) = &options.stop_after {
        if FUSION_PASSES
            .iter()
            .chain(FUSED_MODULE_PASSES)
            .any(|p| p.name == stop)
        {
            return Err(format!(
                "error: --stop-after={stop}: a fusion pass; --emit=hlo prints the module after the fusion passes"
            ));
        }
        // The stages after the fusion passes, which come first.
        let stops: Vec<&str> = names.iter().copied().skip_while(|n| *n != "emit").collect();
        if !stops.contains(&stop.as_str()) {
            return Err(format!(
                "error: --stop-after={stop}: not a stage of the pipeline ({})",
                stops.join(", ")
            ));
        }
    }
    let registry = PassRegistry::standard();
    if let Some(unknown) = options.passes.iter().find(|p| registry.get(p).is_none()) {
        return Err(format!(
            "error: --pass-pipeline: unknown pass '{unknown}' (the passes: {})",
            registry
                .iter()
                .map(|p| p.name)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if matches!(options.last_stage(), "ptx" | "sass") {
        codegen::ptx::check_arch(&options.arch)
            .map_err(|e| format!("error: --arch={}: {e}", options.arch))?;
    }
    Ok(())
}

/// What the emitters are told of `--arch` (an `sm_NN` not understood is the default,
/// sm_90: [`validate`] refuses it wherever it reaches PTX) and whose `choices` to make.
pub fn target(arch: &str, choices: emitters::Choices) -> emitters::Target {
    let arch = codegen::ptx::arch_number(arch).unwrap_or(emitters::Target::DEFAULT.arch);
    emitters::Target { arch, choices }
}

/// One kernel of a compiled module.
#[derive(Clone, Debug)]
pub struct CompiledKernel {
    /// The fusion computation it compiles.
    pub fusion: String,
    /// Its entry's name (`emitters::kernel_names`: the fusion's name as a PTX identifier).
    pub kernel: String,
    pub launch: LaunchDimensions,
    /// The emitter that wrote the kernel.
    pub emitter: EmitterKind,
    pub vector_factor: i64,
    /// Outputs written in place, as `(output, parameter)`: the output buffer must hold the
    /// parameter's elements before the launch (see `emitters::EmittedKernel::in_place`).
    pub in_place: Vec<(usize, usize)>,
    /// How the threads cover the kernel's tiles (see `emitters::ThreadLayout`).
    pub layouts: Vec<emitters::ThreadLayout>,
    /// With our choices, where XLA's (`--match-xla`) launch the kernel otherwise: XLA's
    /// launch and vector factor, for the `--emit=xla-gpu` header. Filled in only when the
    /// run stops after the emitter.
    pub xla_launch: Option<(LaunchDimensions, i64)>,
}

/// An instruction of the input that no kernel computes (`emitters::left_to_runtime`).
#[derive(Clone, Debug)]
pub struct RuntimeStep {
    pub instruction: String,
    pub opcode: String,
    /// The `custom_call_target`, for a custom call.
    pub target: Option<String>,
    pub computation: String,
}

impl RuntimeStep {
    /// The steps of `module`, in schedule order.
    pub fn of(module: &HloModule) -> Vec<RuntimeStep> {
        emitters::left_to_runtime(module)
            .into_iter()
            .map(|(c, i)| {
                let computation = module.computation(c);
                let instr = computation.instruction(i);
                RuntimeStep {
                    instruction: instr.name.clone(),
                    opcode: instr.opcode.to_string(),
                    target: match instr.attribute("custom_call_target").map(|a| &a.value) {
                        Some(hlo::AttrValue::Str(t)) => Some(t.clone()),
                        _ => None,
                    },
                    computation: computation.name.clone(),
                }
            })
            .collect()
    }

    /// The comment line that travels with the PTX.
    pub(crate) fn comment(&self) -> String {
        let target = self
            .target
            .as_ref()
            .map(|t| format!(" \"{t}\""))
            .unwrap_or_default();
        format!(
            "// hlo-emit: left to the runtime: {} = {}{target} in {}",
            self.instruction, self.opcode, self.computation
        )
    }
}

/// What the fusions of one input compiled to: one module holding every kernel.
pub struct Compiled {
    pub kernels: Vec<CompiledKernel>,
    /// What the input asks for besides the kernels.
    pub runtime: Vec<RuntimeStep>,
    /// The last stage's text: one module (MLIR, LLVM IR, PTX) for the whole input.
    pub output: String,
}

/// Compiles HLO text as `hlo-emit` does without flags, for a library user: parses it
/// (`name` is the file name diagnostics give), runs the fusion pipeline when the module is
/// an unfused program, and compiles every fusion to the stage `options` asks for, without
/// dumps. Errors are rendered `file:line:col: error: ...` text.
pub fn compile_text(name: &str, text: &str, options: &Options) -> Result<Compiled, String> {
    let (source, mut module) = hlo::load(name, text.as_bytes().to_vec())?;
    let mut runner = Runner::new(&source, options)?;
    if fusion::wants_fusion(&module) {
        runner.fuse(&mut module, &mut [])?;
    } else {
        runner.outline(&mut module, &mut [])?;
    }
    let fusions = select_fusions(&source, &module, None)?;
    runner.compile(&module, &fusions, &mut [])
}

/// Runs [`FUSION_PASSES`] on `module`, unobserved ([`Runner::fuse`]).
pub fn fuse(source: &SourceFile, module: &mut HloModule) -> Result<(), String> {
    Runner::new(source, &Options::default())?.fuse(module, &mut [])
}

/// Runs [`FUSED_MODULE_PASSES`] on `module`, unobserved ([`Runner::outline`]).
pub fn outline(source: &SourceFile, module: &mut HloModule) -> Result<(), String> {
    Runner::new(source, &Options::default())?.outline(module, &mut [])
}

/// Compiles `fusions` of `module` as `options` say, unobserved ([`Runner::compile`]).
pub fn compile(
    source: &SourceFile,
    module: &HloModule,
    fusions: &[ComputationId],
    options: &Options,
) -> Result<Compiled, String> {
    Runner::new(source, options)?.compile(module, fusions, &mut [])
}

/// `// -----// IR Dump After <what> //----- //`, MLIR's dump header.
pub fn header(what: &str) -> String {
    format!("// -----// IR Dump After {what} //----- //")
}

/// The one-line launch comment per kernel that travels with the PTX.
pub fn launch_comment(k: &CompiledKernel) -> String {
    let l = &k.launch;
    let [x, y, z] = l.grid();
    format!(
        "// hlo-emit: kernel {} of fusion {}: grid ({x}, {y}, {z}), block ({}, 1, 1), {} bytes of shared memory",
        k.kernel, k.fusion, l.threads_per_block, l.shared_memory_bytes
    )
}
