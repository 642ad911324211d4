//! The stage runner: the one place that runs the pipeline of [`crate::pipeline`], from HLO
//! text to SASS, and tells its observers what each stage made.
//!
//! Everything that looks at the pipeline is an [`Observer`] of one run, as MLIR's pass
//! instrumentation is: the IR dumps of `--dump-after-each-pass`, `--print-ir-after` and
//! `--dump-dir` ([`Dumps`]), `--check` (`crate::check`), the whole-program check. So the
//! module `--check` interprets after O3 is the very text the NVPTX backend compiled, for
//! whatever `--arch`, and a change to the pipeline is made once.
//!
//! A run has two parts, both here: [`Runner::fuse`] (the HLO passes, on an unfused program)
//! and [`Runner::compile`] (each fusion emitted and run through our passes in a module of
//! its own, then the modules linked and the LLVM stages run once on the result). Every
//! stage's time goes to [`Runner::timings`] (`--time-passes`).

use std::borrow::Cow;
use std::ops::ControlFlow;
use std::sync::Arc;

use emitters::EmittedFusion;
use hlo::{ComputationId, HloModule, SourceFile};
use ir::PrintOptions;
use passes::{Instrumentation, Pass, PassError, PassManager, PassRegistry, Timings};

use crate::pipeline::{
    Compiled, CompiledKernel, FUSED_MODULE_PASSES, FUSION_PASSES, LLVM_STAGES, Options,
    RuntimeStep, header, launch_comment, target, validate,
};
use emitters::LaunchDimensions;

/// What a stage made, as its observers see it.
#[derive(Clone, Copy)]
pub enum Output<'a> {
    /// The HLO module, after a fusion pass.
    Hlo(&'a HloModule),
    /// A fusion's module after the emitter or one of our passes (its kernel is `@main`).
    Ir(&'a ir::Module),
    /// The linked module's LLVM IR (`translate`, `llvm-opt`), PTX or SASS.
    Text(&'a str),
}

/// Which stage just ran.
pub struct StageDone<'a> {
    /// The stage's flag name: an HLO pass, `emit`, one of our passes, `translate`,
    /// `llvm-opt`, `ptx` or `sass` (what `--print-ir-after` and `--stop-after` take).
    pub name: &'a str,
    /// The name in dump headers (`Canonicalizer`), as MLIR prints pass names.
    pub display_name: &'a str,
    /// The kernel whose module it is; `None` for the stages of the whole HLO module and of
    /// the linked module.
    pub kernel: Option<&'a CompiledKernel>,
    /// Whether the stage changed its input (HLO passes say; other stages count as changed).
    pub changed: bool,
}

/// Sees the result of every stage of a run (MLIR's `PassInstrumentation`). An error stops
/// the run and is its error.
pub trait Observer {
    fn after(&mut self, stage: &StageDone, output: Output<'_>) -> Result<(), String>;
}

/// The observers of one run.
pub type Observers<'a, 'b> = &'a mut [&'b mut dyn Observer];

/// `first`, then each of `rest`: one observer made of a run's own and those it was given.
pub struct Chain<'f, 'a, 'b> {
    pub first: &'f mut dyn Observer,
    pub rest: Observers<'a, 'b>,
}

impl Observer for Chain<'_, '_, '_> {
    fn after(&mut self, stage: &StageDone, output: Output<'_>) -> Result<(), String> {
        self.first.after(stage, output)?;
        notify(self.rest, stage, &output)
    }
}

fn notify(observers: Observers, stage: &StageDone, output: &Output) -> Result<(), String> {
    for observer in observers.iter_mut() {
        observer.after(stage, *output)?;
    }
    Ok(())
}

/// How the translated LLVM IR is optimized in place of LLVM's O3: LLVM IR and `--arch` in,
/// optimized LLVM IR out. Only tests set one (a broken O3, to see `--check` blame it); the
/// PTX is then made from what it returns, so observers still see the module that becomes
/// PTX.
pub type Optimize = dyn Fn(&str, &str) -> Result<String, String> + Send + Sync;

/// Runs the pipeline that `options` describe (see the module doc).
pub struct Runner<'a> {
    source: &'a SourceFile,
    options: &'a Options,
    optimize: Option<Arc<Optimize>>,
    /// Our passes, up to the last stage asked for.
    passes: PassManager,
    /// The time of every stage run so far.
    pub timings: Timings,
}

impl<'a> Runner<'a> {
    /// A runner for `options`, which are refused here when they name what does not exist
    /// (before any work).
    pub fn new(source: &'a SourceFile, options: &'a Options) -> Result<Runner<'a>, String> {
        validate(options)?;
        let registry = PassRegistry::standard();
        let passes = options
            .passes_to_run()
            .iter()
            .map(|p| {
                registry
                    .create(p)
                    .ok_or_else(|| format!("error: the pipeline names an unknown pass '{p}'"))
            })
            .collect::<Result<_, _>>()?;
        Ok(Runner {
            source,
            options,
            optimize: None,
            passes: manager(passes),
            timings: Timings::default(),
        })
    }

    /// Runs `passes` in place of `options.passes` (up to the last stage asked for): a
    /// test's own pass objects, such as a broken pass that `--check` must blame.
    pub fn with_passes(mut self, passes: Vec<Box<dyn Pass>>) -> Runner<'a> {
        let last = self.options.last_stage();
        let end = passes
            .iter()
            .position(|p| p.name() == last)
            .map_or(passes.len(), |at| at + 1);
        self.passes = manager(passes.into_iter().take(end).collect());
        self
    }

    /// Puts `optimize` in place of LLVM's O3 (tests only: see [`Optimize`]).
    pub fn with_optimizer(mut self, optimize: Option<Arc<Optimize>>) -> Runner<'a> {
        self.optimize = optimize;
        self
    }

    /// The fusion passes ([`FUSION_PASSES`]), for an unfused program: each pass run and
    /// verified, its time recorded, the module shown to `observers`.
    pub fn fuse(&mut self, module: &mut HloModule, observers: Observers) -> Result<(), String> {
        self.run_hlo_passes(FUSION_PASSES, module, observers)
    }

    /// The passes of a module that is fused already ([`FUSED_MODULE_PASSES`]), run as
    /// [`Runner::fuse`] runs its own.
    pub fn outline(&mut self, module: &mut HloModule, observers: Observers) -> Result<(), String> {
        self.run_hlo_passes(FUSED_MODULE_PASSES, module, observers)
    }

    fn run_hlo_passes(
        &mut self,
        passes: &[fusion::HloPass],
        module: &mut HloModule,
        observers: Observers,
    ) -> Result<(), String> {
        for pass in passes {
            let run = fusion::run_pass(pass, module).map_err(|d| {
                format!(
                    "{}\nnote: in the fusion pipeline",
                    module.with_call_stack(d).render(self.source)
                )
            })?;
            self.timings.record(pass.display_name, run.elapsed);
            let stage = StageDone {
                name: pass.name,
                display_name: pass.display_name,
                kernel: None,
                changed: run.changed,
            };
            notify(observers, &stage, &Output::Hlo(module))?;
        }
        Ok(())
    }

    /// Compiles `fusions` of `module` into one module: each fusion is emitted and run
    /// through our passes in a module of its own (kernel `@main`), then the modules are
    /// linked ([`ir::link`]: each kernel named after its fusion, libdevice declared once)
    /// and the LLVM stages run once on the result, so the output is one valid file whatever
    /// the number of kernels.
    pub fn compile(
        &mut self,
        module: &HloModule,
        fusions: &[ComputationId],
        observers: Observers,
    ) -> Result<Compiled, String> {
        let names = emitters::kernel_names(module, self.options.choices);
        let mut kernels = Vec::new();
        let mut inputs = Vec::new();
        for &id in fusions {
            let name = crate::program::kernel_name(module, &names, id)?.clone();
            let (ir, kernel) = self.lower_fusion(module, id, name, observers)?;
            inputs.push(ir::link::LinkInput {
                module: ir,
                entry: "main".to_string(),
                kernel: kernel.kernel.clone(),
            });
            kernels.push(kernel);
        }
        let ir = self
            .timings
            .time("link", || ir::link::link(inputs))
            .map_err(|e| format!("error: linking the kernels of {}: {e}", self.source.name))?;
        let runtime = RuntimeStep::of(module);
        let comments: Vec<String> = kernels
            .iter()
            .map(launch_comment)
            .chain(runtime.iter().map(RuntimeStep::comment))
            .collect();
        let print = PrintOptions {
            generic: self.options.generic,
        };
        let output = match self.llvm_stages(&ir, &comments, observers)? {
            Some(output) => output,
            None if self.options.last_stage() == "emit" => {
                let summaries: String = kernels.iter().map(kernel_summary).collect();
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

    /// Fusion `id` emitted and run through our passes up to the last stage asked for (all
    /// of them when it is an LLVM stage); its kernel is to be called `kernel`.
    fn lower_fusion(
        &mut self,
        module: &HloModule,
        id: ComputationId,
        kernel: String,
        observers: Observers,
    ) -> Result<(ir::Module, CompiledKernel), String> {
        let options = self.options;
        let name = module.computation(id).name.clone();
        let EmittedFusion {
            module: mut ir,
            kernel: emitted,
            emitter,
            ..
        } = self
            .timings
            .time("emit", || {
                emitters::emit_fusion_for(module, id, target(&options.arch, options.choices))
            })
            .map_err(|d| {
                format!(
                    "{}\nnote: in the emitter, fusion '{name}'",
                    module.with_call_stack(d).render(self.source)
                )
            })?;
        let compiled = CompiledKernel {
            fusion: name.clone(),
            kernel,
            launch: emitted.launch,
            emitter,
            vector_factor: emitted.vector_factor,
            in_place: emitted.in_place,
            layouts: emitted.layouts,
            xla_launch: None,
        };
        // Emitted ops carry no source location; errors name the HLO file and the fusion.
        ir.file = self.source.name.as_str().into();
        let emit = StageDone {
            name: "emit",
            display_name: "EmitXlaGpu",
            kernel: Some(&compiled),
            changed: true,
        };
        notify(observers, &emit, &Output::Ir(&ir))?;
        if options.last_stage() == "emit" {
            let ours = options.choices == emitters::Choices::Tuned;
            let compiled = CompiledKernel {
                xla_launch: ours
                    .then(|| xla_launch(module, id, &options.arch, &compiled))
                    .flatten(),
                ..compiled
            };
            return Ok((ir, compiled));
        }
        let mut notifier = Notifier {
            observers: &mut *observers,
            kernel: &compiled,
            failed: None,
        };
        let run = self
            .passes
            .run_instrumented(&mut ir, &mut self.timings, &mut notifier);
        if let Some(error) = notifier.failed {
            return Err(error);
        }
        if let Err(e) = run {
            let print = PrintOptions {
                generic: options.generic,
            };
            let text = ir.print_with(print);
            let mut message = match e.diagnostic() {
                Some(d) => d.render(&text),
                None => format!("error: {e}"),
            };
            if options.print_ir_after_failure {
                // MLIR's `--mlir-print-ir-after-failure` header.
                let failed = e
                    .pass()
                    .and_then(|p| PassRegistry::standard().create(p))
                    .map_or_else(
                        || "failure".to_string(),
                        |pass| format!("{} Failed ({})", pass.display_name(), pass.name()),
                    );
                message.push_str(&format!("\n{}\n{text}", header(&failed)));
            }
            return Err(format!(
                "{message}\nnote: compiling fusion '{name}' of {}",
                self.source.name
            ));
        }
        Ok((ir, compiled))
    }

    /// The stages after our passes, on the linked module: its text at the last stage asked
    /// for, or `None` when that stage is one of ours.
    fn llvm_stages(
        &mut self,
        ir: &ir::Module,
        comments: &[String],
        observers: Observers,
    ) -> Result<Option<String>, String> {
        let options = self.options;
        let last = options.last_stage();
        if !LLVM_STAGES.contains(&last) {
            return Ok(None);
        }
        let mut done = |name: &'static str, display_name: &'static str, text: &str| {
            let stage = StageDone {
                name,
                display_name,
                kernel: None,
                changed: true,
            };
            notify(observers, &stage, &Output::Text(text))
        };
        let llvm_ir = self
            .timings
            .time("translate-to-llvm-ir", || {
                codegen::mlir::to_llvm_ir_with_pipeline(&ir.print_generic(), "builtin.module()")
            })
            .map_err(|e| format!("error: {e}\nnote: in translation to LLVM IR"))?;
        done("translate", "TranslateToLLVMIR", &llvm_ir)?;
        if last == "translate" {
            return Ok(Some(llvm_ir));
        }
        let arch = &options.arch;
        let optimize = self.optimize.clone();
        let compiled = self
            .timings
            .time("llvm-o3-and-ptx", || match optimize {
                None => codegen::ptx::compile(&llvm_ir, arch).map_err(|e| e.to_string()),
                Some(optimize) => {
                    let optimized_ir = optimize(&llvm_ir, arch)?;
                    let ptx = codegen::ptx::optimized_ir_to_ptx(&optimized_ir, arch)
                        .map_err(|e| e.to_string())?;
                    Ok(codegen::ptx::Compiled { optimized_ir, ptx })
                }
            })
            .map_err(|e| format!("error: {e}\nnote: in the LLVM stages"))?;
        done("llvm-opt", "LLVMOptimizeO3", &compiled.optimized_ir)?;
        if last == "llvm-opt" {
            return Ok(Some(compiled.optimized_ir));
        }
        let ptx = format!("{}\n{}", comments.join("\n"), compiled.ptx);
        done("ptx", "NVPTXCodeGen", &ptx)?;
        if last == "ptx" {
            return Ok(Some(ptx));
        }
        let sass = self
            .timings
            .time("ptxas-and-nvdisasm", || machine_code(&ptx, comments, arch))
            .map_err(|e| format!("error: {e}\nnote: in ptxas/nvdisasm"))?;
        done("sass", "NVDisasm", &sass)?;
        Ok(Some(sass))
    }
}

/// The pass manager's instrumentation in a run: shows each fusion's module after each pass
/// to the run's observers (and keeps the first observer's error, which ends the passes).
struct Notifier<'a, 'b, 'k> {
    observers: Observers<'a, 'b>,
    kernel: &'k CompiledKernel,
    failed: Option<String>,
}

impl Instrumentation for Notifier<'_, '_, '_> {
    fn after_pass(
        &mut self,
        pass: &dyn Pass,
        module: &ir::Module,
    ) -> Result<ControlFlow<()>, PassError> {
        let display_name = pass.display_name();
        let stage = StageDone {
            name: pass.name(),
            display_name: &display_name,
            kernel: Some(self.kernel),
            changed: true,
        };
        Ok(match notify(self.observers, &stage, &Output::Ir(module)) {
            Ok(()) => ControlFlow::Continue(()),
            Err(error) => {
                self.failed = Some(error);
                ControlFlow::Break(())
            }
        })
    }
}

/// With our choices, XLA's launch and vector factor for fusion `id` of `module` where they
/// differ from `ours` (the emitter run again with XLA's choices, which costs no more than
/// emitting).
fn xla_launch(
    module: &HloModule,
    id: ComputationId,
    arch: &str,
    ours: &CompiledKernel,
) -> Option<(LaunchDimensions, i64)> {
    let xla = emitters::emit_fusion_for(module, id, target(arch, emitters::Choices::Xla)).ok()?;
    let theirs = (xla.kernel.launch, xla.kernel.vector_factor);
    (theirs != (ours.launch, ours.vector_factor)).then_some(theirs)
}

/// The comment lines `--emit=xla-gpu` puts before the module: what the emitter decided
/// (and, with our choices, XLA's launch where it differs).
fn kernel_summary(k: &CompiledKernel) -> String {
    let l = &k.launch;
    let layouts: String = k
        .layouts
        .iter()
        .map(|t| {
            let shape: Vec<String> = t.shape.iter().map(i64::to_string).collect();
            format!(
                "//   threads over {} ({}): {}\n",
                t.what,
                shape.join("x"),
                t.layout
            )
        })
        .collect();
    let xla = k.xla_launch.map_or(String::new(), |(l, factor)| {
        format!(
            "//   XLA's choices (--match-xla): {} blocks x {} threads, {} bytes of shared memory, vector factor {factor}\n",
            l.blocks, l.threads_per_block, l.shared_memory_bytes
        )
    });
    format!(
        "// fusion {}: kernel {}, {} emitter, {} blocks x {} threads, {} bytes of shared memory, vector factor {}\n{xla}{layouts}",
        k.fusion,
        k.kernel,
        k.emitter,
        l.blocks,
        l.threads_per_block,
        l.shared_memory_bytes,
        k.vector_factor
    )
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

fn manager(passes: Vec<Box<dyn Pass>>) -> PassManager {
    let mut pm = PassManager::new();
    for pass in passes {
        pm.add(pass);
    }
    pm
}

/// What the dump observer prints, and after which stages (`--dump-after-each-pass`,
/// `--print-ir-after`, `--mlir-print-op-generic`).
#[derive(Clone, Debug, Default)]
pub struct DumpChoice {
    /// After every stage (HLO passes that changed the module included).
    pub after_all: bool,
    /// After the stages with these names.
    pub after: Vec<String>,
    pub print: PrintOptions,
}

impl DumpChoice {
    fn wants(&self, stage: &str) -> bool {
        self.after_all || self.after.iter().any(|s| s == stage)
    }
}

/// One stage's dump: MLIR's header and the stage's text.
pub struct Dump<'a> {
    /// The fusion whose module it is (`None`: the HLO module or the linked module).
    pub fusion: Option<&'a str>,
    /// The stage's flag name (`canonicalize`, `ptx`...).
    pub stage: &'a str,
    pub text: String,
}

/// Where [`Dumps`] sends each dump.
pub type DumpSink<'a> = dyn FnMut(&Dump) -> Result<(), String> + 'a;

/// The IR printing observer: after each stage `choice` names, the stage's output under
/// MLIR's dump header (`// -----// IR Dump After Canonicalizer (canonicalize) //----- //`).
pub struct Dumps<'s> {
    pub choice: DumpChoice,
    pub sink: &'s mut DumpSink<'s>,
}

impl Observer for Dumps<'_> {
    fn after(&mut self, stage: &StageDone, output: Output<'_>) -> Result<(), String> {
        let title = format!("{} ({})", stage.display_name, stage.name);
        let body: Cow<str> = match output {
            // The HLO passes print when they changed the module.
            Output::Hlo(module) if stage.changed && self.choice.wants(stage.name) => {
                let text = format!("{}\n{module}", header(&title));
                return (self.sink)(&Dump {
                    fusion: None,
                    stage: stage.name,
                    text,
                });
            }
            Output::Hlo(_) => return Ok(()),
            _ if !self.choice.wants(stage.name) => return Ok(()),
            Output::Ir(module) => module.print_with(self.choice.print).into(),
            Output::Text(text) => text.into(),
        };
        let text = format!("{}\n{}\n\n\n", header(&title), body.trim_end());
        (self.sink)(&Dump {
            fusion: stage.kernel.map(|k| k.fusion.as_str()),
            stage: stage.name,
            text,
        })
    }
}
