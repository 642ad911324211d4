//! The compilation pipeline of `hlo-emit`: one fusion from HLO to PTX.
//!
//! Stages, in order: the emitter (`xla_gpu` IR), our passes ([`PASSES`], run by the pass
//! manager, which verifies after each), `lower-to-llvm` (real MLIR), translation to LLVM IR,
//! LLVM's O3 with libdevice linked, and the NVPTX backend. Every stage can be dumped under an
//! MLIR-style header and the pipeline can stop after any of them.

use std::io::Write;

use emitters::{EmittedFusion, EmitterKind, LaunchDimensions};
use hlo::{ComputationId, HloModule, SourceFile};
use ir::PrintOptions;
use passes::{DumpOptions, PassError, PassManager, PassRegistry, Timings};

/// Our passes, in pipeline order (the seed's walkthrough order), each with why it is there.
/// The whole sequence, from HLO to PTX, is:
///
/// 1. the fusion pipeline (`fusion::PIPELINE`, for unfused programs: [`fuse`]);
/// 2. the emitter chosen for each fusion (`emitters::emit_fusion`): `xla_gpu` IR;
/// 3. these passes, verified after each by the pass manager;
/// 4. `lower-to-llvm` (MLIR's conversions; the last entry below), translation to LLVM IR,
///    LLVM's O3 with libdevice linked, and the NVPTX backend ([`compile`]).
pub const PASSES: &[&str] = &[
    // The emitters call one function per subgraph; inlining them gives the later passes
    // (vectorization above all) whole loops to look at.
    "inline",
    // What inlining left uncalled would otherwise be lowered and compiled for nothing.
    "erase-dead-functions",
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

/// Runs the fusion pipeline (`fusion::PIPELINE`) on `module`: each pass's time goes to
/// `timings`, and after each pass that changed the module, its text goes to `dump` when
/// given (under MLIR's dump header).
pub fn fuse(
    source: &SourceFile,
    module: &mut HloModule,
    mut dump: Option<&mut DumpSink>,
    timings: &mut Timings,
) -> Result<(), String> {
    let mut dumped = Ok(());
    let result = fusion::run_pipeline(module, |pass, fused, run| {
        timings.record(pass.display_name, run.elapsed);
        if let Some(dump) = dump.as_mut()
            && run.changed
            && dumped.is_ok()
        {
            let title = format!("{} ({})", pass.display_name, pass.name);
            let text = format!("{}\n{fused}", header(&title));
            dumped = dump(None, text.as_bytes());
        }
    });
    dumped?;
    result.map_err(|d| {
        format!(
            "{}\nnote: in the fusion pipeline",
            module.with_call_stack(d).render(source)
        )
    })
}

/// The fusions of `module` to compile: all, or the one named `wanted`.
pub fn select_fusions(
    source: &SourceFile,
    module: &HloModule,
    wanted: Option<&str>,
) -> Result<Vec<ComputationId>, String> {
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
        let partition = emitters::PartitionedComputation::new(computation, |_| false)
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
    /// Stop after this stage (one of [`stage_names`]: `emit`, a pass, or an LLVM stage) and
    /// give its output; overrides `stop_at`. A pass that runs several times stops after its
    /// first run.
    pub stop_after: Option<String>,
    pub arch: String,
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
            dump_after_each_pass: false,
            print_ir_after: Vec::new(),
            print_ir_after_failure: false,
            generic: false,
            passes: PASSES.iter().map(|p| p.to_string()).collect(),
        }
    }
}

/// The stages after our passes, by the names their dump headers give them.
pub const LLVM_STAGES: &[&str] = &["translate", "llvm-opt", "ptx", "sass"];

/// Every stage name `--print-ir-after` takes, in pipeline order, each once (`canonicalize`
/// and `cse` run several times; naming them dumps after every run).
pub fn stage_names() -> Vec<&'static str> {
    let mut names = vec!["emit"];
    for name in PASSES.iter().chain(LLVM_STAGES) {
        if !names.contains(name) {
            names.push(name);
        }
    }
    names
}

impl Options {
    /// The stage whose output [`compile`] returns: `--stop-after`'s, else `stop_at`'s.
    fn last_stage(&self) -> &str {
        self.stop_after.as_deref().unwrap_or(match self.stop_at {
            Stage::XlaGpu => "emit",
            Stage::Mlir => "lower-to-llvm",
            Stage::Llvm => "translate",
            Stage::Ptx => "ptx",
            Stage::Sass => "sass",
        })
    }

    /// Whether the IR after the stage `name` is to be dumped.
    fn dumps_after(&self, name: &str) -> bool {
        self.dump_after_each_pass || self.print_ir_after.iter().any(|p| p == name)
    }
}

/// Refuses options that name what does not exist, before any work: a misspelt
/// `--print-ir-after` would otherwise print nothing, and an unknown `--arch` would give PTX
/// for LLVM's default target.
fn validate(options: &Options) -> Result<(), String> {
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
    if let Some(stop) = &options.stop_after
        && !names.contains(&stop.as_str())
    {
        return Err(format!(
            "error: --stop-after={stop}: not a stage of the pipeline ({})",
            names.join(", ")
        ));
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
/// sm_90: [`validate`] refuses it wherever it reaches PTX).
pub fn target(arch: &str) -> emitters::Target {
    codegen::ptx::arch_number(arch)
        .map_or(emitters::Target::DEFAULT, |arch| emitters::Target { arch })
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
    fn comment(&self) -> String {
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
    if fusion::wants_fusion(&module) {
        fuse(&source, &mut module, None, &mut Timings::default())?;
    }
    let fusions = select_fusions(&source, &module, None)?;
    compile(
        &source,
        &module,
        &fusions,
        options,
        &mut |_, _| Ok(()),
        &mut Timings::default(),
    )
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

/// Where the stage dumps go: `fusion` names the fusion whose own stages (the emitter and
/// our passes) they are, `None` the stages of the linked module (LLVM IR, PTX).
pub type DumpSink<'a> = dyn FnMut(Option<&str>, &[u8]) -> Result<(), String> + 'a;

/// Compiles the fusions `fusions` of `module` into one module: each fusion is emitted and
/// run through our passes in a module of its own (kernel `@main`, dumps per fusion), then
/// the modules are linked ([`ir::link`]: each kernel named after its fusion, libdevice
/// declared once) and the LLVM stages run once on the result, so the output is one valid
/// file whatever the number of kernels.
pub fn compile(
    source: &SourceFile,
    module: &HloModule,
    fusions: &[ComputationId],
    options: &Options,
    dumps: &mut DumpSink,
    timings: &mut Timings,
) -> Result<Compiled, String> {
    validate(options)?;
    let names = emitters::kernel_names(module);
    let last = options.last_stage();
    let several = fusions.len() > 1;
    let mut kernels = Vec::new();
    let mut inputs = Vec::new();
    for &id in fusions {
        let mut buffer = Vec::new();
        let lowered = lower_fusion(source, module, id, options, &mut buffer, timings);
        let fusion = module.computation(id).name.clone();
        dumps(several.then_some(fusion.as_str()), &buffer)?;
        let (ir, emitted) = lowered?;
        let kernel = crate::program::kernel_name(module, &names, id)?.clone();
        kernels.push(CompiledKernel {
            kernel: kernel.clone(),
            fusion,
            launch: emitted.launch,
            emitter: emitted.emitter,
            vector_factor: emitted.vector_factor,
            in_place: emitted.in_place,
            layouts: emitted.layouts,
        });
        inputs.push(ir::link::LinkInput {
            module: ir,
            entry: "main".to_string(),
            kernel,
        });
    }
    let ir = timings
        .time("link", || ir::link::link(inputs))
        .map_err(|e| format!("error: linking the kernels of {}: {e}", source.name))?;
    let print = PrintOptions {
        generic: options.generic,
    };
    let runtime = RuntimeStep::of(module);
    let comments: Vec<String> = kernels
        .iter()
        .map(launch_comment)
        .chain(runtime.iter().map(RuntimeStep::comment))
        .collect();
    let mut dumped = Vec::new();
    let result = llvm_stages(&ir, &comments, options, &mut dumped, timings);
    dumps(None, &dumped)?;
    let output = match result? {
        Some(output) => output,
        None if last == "emit" => {
            let summaries: String = kernels
                .iter()
                .map(|k| {
                    let l = &k.launch;
                    let layouts: String = k
                        .layouts
                        .iter()
                        .map(|t| {
                            let shape: Vec<String> = t.shape.iter().map(i64::to_string).collect();
                            format!("//   threads over {} ({}): {}\n", t.what, shape.join("x"), t.layout)
                        })
                        .collect();
                    format!(
                        "// fusion {}: kernel {}, {} emitter, {} blocks x {} threads, {} bytes of shared memory, vector factor {}\n{layouts}",
                        k.fusion, k.kernel, k.emitter, l.blocks, l.threads_per_block, l.shared_memory_bytes, k.vector_factor
                    )
                })
                .collect();
            summaries + &ir.print_with(print)
        }
        None => ir.print_with(print),
    };
    Ok(Compiled {
        kernels,
        runtime,
        output,
    })
}

/// What the emitter decided for one fusion.
struct Emitted {
    launch: LaunchDimensions,
    emitter: EmitterKind,
    vector_factor: i64,
    in_place: Vec<(usize, usize)>,
    layouts: Vec<emitters::ThreadLayout>,
}

/// Fusion `id` emitted and run through our passes up to the last stage asked for (all of
/// them when it is an LLVM stage).
fn lower_fusion(
    source: &SourceFile,
    module: &HloModule,
    id: ComputationId,
    options: &Options,
    dumps: &mut dyn Write,
    timings: &mut Timings,
) -> Result<(ir::Module, Emitted), String> {
    let print = PrintOptions {
        generic: options.generic,
    };
    let name = module.computation(id).name.clone();
    let EmittedFusion {
        module: mut ir,
        kernel,
        emitter,
        ..
    } = timings
        .time("emit", || {
            emitters::emit_fusion_for(module, id, target(&options.arch))
        })
        .map_err(|d| {
            format!(
                "{}\nnote: in the emitter, fusion '{name}'",
                module.with_call_stack(d).render(source)
            )
        })?;
    let emitted = Emitted {
        launch: kernel.launch,
        emitter,
        vector_factor: kernel.vector_factor,
        in_place: kernel.in_place,
        layouts: kernel.layouts,
    };
    if options.dumps_after("emit") {
        dump(dumps, &header("EmitXlaGpu (emit)"), &ir.print_with(print));
    }
    let last = options.last_stage();
    if last == "emit" {
        return Ok((ir, emitted));
    }
    let passes = pass_list(&options.passes, last);
    let registry = PassRegistry::standard();
    let mut pm = PassManager::new();
    for pass in &passes {
        let info = registry
            .get(pass)
            .ok_or_else(|| format!("error: the pipeline names an unknown pass '{pass}'"))?;
        pm.add((info.create)());
    }
    pm.set_dump_options(DumpOptions {
        after_all: options.dump_after_each_pass,
        after: options.print_ir_after.clone(),
        only_on_change: false,
        print,
    });
    // Emitted ops carry no source location; errors name the HLO file and the fusion.
    ir.file = source.name.as_str().into();
    let file = ir.file.clone();
    if let Err(e) = pm.run(&mut ir, dumps, timings) {
        let text = ir.print_with(print);
        let mut message = render_pass_error(&e, &text);
        if options.print_ir_after_failure {
            // MLIR's `--mlir-print-ir-after-failure` header.
            let failed = e.pass().and_then(|p| registry.create(p)).map_or_else(
                || "failure".to_string(),
                |pass| format!("{} Failed ({})", pass.display_name(), pass.name()),
            );
            message.push_str(&format!("\n{}\n{text}", header(&failed)));
        }
        return Err(format!(
            "{message}\nnote: compiling fusion '{name}' of {file}"
        ));
    }
    Ok((ir, emitted))
}

/// The stages after our passes, on the linked module: its text at the last stage asked
/// for, or `None` when that stage is one of ours.
fn llvm_stages(
    ir: &ir::Module,
    comments: &[String],
    options: &Options,
    dumps: &mut dyn Write,
    timings: &mut Timings,
) -> Result<Option<String>, String> {
    let last = options.last_stage();
    if !LLVM_STAGES.contains(&last) {
        return Ok(None);
    }
    let llvm_ir = timings
        .time("translate-to-llvm-ir", || {
            codegen::mlir::to_llvm_ir_with_pipeline(&ir.print_generic(), "builtin.module()")
        })
        .map_err(|e| format!("error: {e}\nnote: in translation to LLVM IR"))?;
    if options.dumps_after("translate") {
        dump(dumps, &header("TranslateToLLVMIR (translate)"), &llvm_ir);
    }
    if last == "translate" {
        return Ok(Some(llvm_ir));
    }
    let compiled = timings
        .time("llvm-o3-and-ptx", || {
            codegen::ptx::compile(&llvm_ir, &options.arch)
        })
        .map_err(|e| format!("error: {e}\nnote: in the LLVM stages"))?;
    if options.dumps_after("llvm-opt") {
        dump(
            dumps,
            &header("LLVMOptimizeO3 (llvm-opt)"),
            &compiled.optimized_ir,
        );
    }
    if last == "llvm-opt" {
        return Ok(Some(compiled.optimized_ir));
    }
    let ptx = format!("{}\n{}", comments.join("\n"), compiled.ptx);
    if options.dumps_after("ptx") {
        dump(dumps, &header("NVPTXCodeGen (ptx)"), &ptx);
    }
    if last == "ptx" {
        return Ok(Some(ptx));
    }
    let sass = timings
        .time("ptxas-and-nvdisasm", || {
            machine_code(&ptx, comments, &options.arch)
        })
        .map_err(|e| format!("error: {e}\nnote: in ptxas/nvdisasm"))?;
    if options.dumps_after("sass") {
        dump(dumps, &header("NVDisasm (sass)"), &sass);
    }
    Ok(Some(sass))
}

/// The SASS of `ptx`, after the launch comments and a line with what `ptxas -v` reports
/// and the instruction count.
fn machine_code(ptx: &str, launches: &[String], arch: &str) -> Result<String, String> {
    let assembled = codegen::ptxas::assemble(ptx, arch).map_err(|e| e.to_string())?;
    let listing = codegen::sass::disassemble(&assembled.cubin).map_err(|e| e.to_string())?;
    let mut out = launches.join("\n") + "\n";
    for f in assembled.functions() {
        out.push_str(&format!(
            "// ptxas: {}: {} registers, {} bytes spill stores, {} bytes spill loads\n",
            f.name, f.registers, f.spill_stores, f.spill_loads
        ));
    }
    out.push_str(&format!(
        "// nvdisasm: {} SASS instructions\n",
        codegen::sass::instructions(&listing).count()
    ));
    out.push_str(&listing);
    Ok(out)
}

/// The passes to run: `pipeline` up to the first run of `last` (all of them when `last` is
/// an LLVM stage).
fn pass_list(pipeline: &[String], last: &str) -> Vec<String> {
    let mut passes = pipeline.to_vec();
    if let Some(at) = passes.iter().position(|p| p == last) {
        passes.truncate(at + 1);
    }
    passes
}

fn render_pass_error(e: &PassError, module_text: &str) -> String {
    match e.diagnostic() {
        Some(d) => d.render(module_text),
        None => format!("error: {e}"),
    }
}

fn dump(out: &mut dyn Write, header: &str, body: &str) {
    let _ = writeln!(out, "{header}");
    let _ = writeln!(out, "{}", body.trim_end());
    let _ = writeln!(out);
    let _ = writeln!(out);
}
