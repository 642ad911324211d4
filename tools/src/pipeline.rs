//! The compilation pipeline of `hlo-emit` (DESIGN §7): one fusion from HLO to PTX.
//!
//! Stages, in order: the emitter (`xla_gpu` IR), our passes ([`PASSES`], run by the pass
//! manager, which verifies after each), `lower-to-llvm` (real MLIR), translation to LLVM IR,
//! LLVM's O3 with libdevice linked, and the NVPTX backend. Every stage can be dumped under an
//! MLIR-style header and the pipeline can stop after any of them.

use std::io::Write;

use emitters::{EmittedFusion, LaunchDimensions};
use hlo::{ComputationId, HloModule, SourceFile};
use ir::PrintOptions;
use passes::{DumpOptions, PassError, PassManager, PassRegistry, Timings};

/// Our passes in pipeline order (the seed's walkthrough order; `simplify-arith` and
/// `canonicalize` drop the bounds checks that launch ranges decide, so that accesses sit
/// directly in the vector loop; canonicalize and cse where the previous passes leave
/// constants and duplicates behind).
pub const PASSES: &[&str] = &[
    "inline",
    "erase-dead-functions",
    "lower-xla-gpu-to-scf",
    "simplify-arith",
    "canonicalize",
    "flatten-tensors",
    "vectorize-loads-stores",
    "unroll-loops",
    "canonicalize",
    "cse",
    "lower-tensors",
    "simplify-affine",
    "expand-float-ops",
    "canonicalize",
    "cse",
    "lower-to-llvm",
];

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
}

/// How to run the pipeline.
#[derive(Clone, Debug)]
pub struct Options {
    pub stop_at: Stage,
    /// Stop after this pass (of [`PASSES`], or `emit`); overrides `stop_at`.
    pub stop_after: Option<String>,
    pub arch: String,
    pub dump_after_each_pass: bool,
    pub print_ir_after: Vec<String>,
    pub print_ir_after_failure: bool,
    pub generic: bool,
}

/// What one fusion compiled to.
pub struct Compiled {
    pub fusion: String,
    pub launch: LaunchDimensions,
    /// The last stage's text.
    pub output: String,
}

/// `// -----// IR Dump After <what> //----- //`, MLIR's dump header.
pub fn header(what: &str) -> String {
    format!("// -----// IR Dump After {what} //----- //")
}

/// The one-line launch comment that travels with the PTX.
pub fn launch_comment(fusion: &str, launch: &LaunchDimensions) -> String {
    format!(
        "// hlo-emit: kernel main of fusion {fusion}: grid ({}, 1, 1), block ({}, 1, 1), {} bytes of shared memory",
        launch.blocks, launch.threads_per_block, launch.shared_memory_bytes
    )
}

/// The launch dimensions as JSON (`--launch-json`).
pub fn launch_json(fusion: &str, launch: &LaunchDimensions) -> String {
    format!(
        "{{\"kernel\": \"main\", \"fusion\": \"{fusion}\", \"grid\": [{}, 1, 1], \"block\": [{}, 1, 1], \"shared_memory_bytes\": {}}}\n",
        launch.blocks, launch.threads_per_block, launch.shared_memory_bytes
    )
}

/// Compiles fusion `id` of `module`; dumps go to `dumps`, pass timings into `timings`.
pub fn compile(
    source: &SourceFile,
    module: &HloModule,
    id: ComputationId,
    options: &Options,
    dumps: &mut dyn Write,
    timings: &mut Timings,
) -> Result<Compiled, String> {
    let print = PrintOptions {
        generic: options.generic,
    };
    let name = module.computation(id).name.clone();
    let EmittedFusion {
        module: mut ir,
        kernel,
        hero_kind,
        ..
    } = timings
        .time("emit", || emitters::emit_fusion(module, id))
        .map_err(|d| {
            format!(
                "{}\nnote: in the emitter, fusion '{name}'",
                d.render(source)
            )
        })?;
    let launch = kernel.launch;
    let done = |output: String| Compiled {
        fusion: name.clone(),
        launch,
        output,
    };
    if options.dump_after_each_pass || options.print_ir_after.iter().any(|p| p == "emit") {
        dump(dumps, &header("EmitXlaGpu (emit)"), &ir.print_with(print));
    }
    if options.stop_at == Stage::XlaGpu || options.stop_after.as_deref() == Some("emit") {
        let summary = format!(
            "// fusion {name}: loop emitter (hero: {hero_kind}), {} blocks x {} threads, vector factor {}\n",
            launch.blocks, launch.threads_per_block, kernel.vector_factor
        );
        return Ok(done(summary + &ir.print_with(print)));
    }

    let passes = pass_list(options)?;
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
    let file = ir.file.clone();
    if let Err(e) = pm.run(&mut ir, dumps, timings) {
        let text = ir.print_with(print);
        let mut message = render_pass_error(&e, &text);
        if options.print_ir_after_failure {
            message.push_str(&format!("\n{}\n{text}", header("failure")));
        }
        return Err(format!(
            "{message}\nnote: compiling fusion '{name}' of {file}"
        ));
    }
    if passes.last().map(String::as_str) != Some("lower-to-llvm") || options.stop_at == Stage::Mlir
    {
        return Ok(done(ir.print_with(print)));
    }

    let llvm_ir = timings
        .time("translate-to-llvm-ir", || {
            codegen::mlir::to_llvm_ir_with_pipeline(&ir.print_generic(), "builtin.module()")
        })
        .map_err(|e| format!("error: {e}\nnote: in translation to LLVM IR, fusion '{name}'"))?;
    if options.dump_after_each_pass {
        dump(dumps, &header("TranslateToLLVMIR (translate)"), &llvm_ir);
    }
    if options.stop_at == Stage::Llvm {
        return Ok(done(llvm_ir));
    }
    let libdevice = codegen::toolchain::libdevice().ok();
    let compiled = timings
        .time("llvm-o3-and-ptx", || {
            codegen::ptx::compile(&llvm_ir, &options.arch, libdevice.as_deref())
        })
        .map_err(|e| format!("error: {e}\nnote: in the LLVM stages, fusion '{name}'"))?;
    let ptx = format!("{}\n{}", launch_comment(&name, &launch), compiled.ptx);
    if options.dump_after_each_pass {
        dump(
            dumps,
            &header("LLVMOptimizeO3 (llvm-opt)"),
            &compiled.optimized_ir,
        );
        dump(dumps, &header("NVPTXCodeGen (ptx)"), &ptx);
    }
    Ok(done(ptx))
}

/// The passes to run: [`PASSES`] up to `--stop-after` (or up to before `lower-to-llvm` when
/// stopping at the `xla-gpu` stage is not asked for and `mlir` is).
fn pass_list(options: &Options) -> Result<Vec<String>, String> {
    let mut passes: Vec<String> = PASSES.iter().map(|p| p.to_string()).collect();
    if let Some(stop) = &options.stop_after {
        let at = passes.iter().position(|p| p == stop).ok_or_else(|| {
            format!(
                "error: --stop-after={stop}: not a pass of the pipeline (emit, {})",
                PASSES.join(", ")
            )
        })?;
        passes.truncate(at + 1);
    }
    Ok(passes)
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
